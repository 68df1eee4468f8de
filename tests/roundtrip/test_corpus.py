"""Real multi-version CRDs (cluster-api): the engine runs on them end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compatfuzz.roundtrip import API, Status, UnitFinished, run

pytestmark = pytest.mark.corpus


def relabel(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """A converter that only changes apiVersion: enough for round trips, not for validity."""
    return {**obj, "apiVersion": desired}


def test_machinehealthcheck_needs_a_real_converter(corpus_dir: Path) -> None:
    crd = corpus_dir / "crds" / "cluster-api" / "cluster.x-k8s.io_machinehealthchecks.yaml"
    api = API.from_crd("mhc", crd, convert=relabel)
    assert list(api.kinds[0].versions) == ["v1beta1", "v1beta2"]
    results = {e.result.unit.id: e.result for e in run(
        api, database="none", seed=1, max_examples=8,
        properties=["roundtrip", "no_mutation", "valid"]) if isinstance(e, UnitFinished)}
    for pair in ("v1beta1->v1beta2", "v1beta2->v1beta1"):
        assert results[f"mhc::roundtrip[{pair}]"].status is Status.PASSED
        assert results[f"mhc::no_mutation[{pair}]"].status is Status.PASSED
        # The versions' schemas differ, so relabelling alone yields invalid objects.
        invalid = results[f"mhc::valid[{pair}]"]
        assert invalid.status is Status.FAILED, invalid.message
        assert "does not validate under" in invalid.message
