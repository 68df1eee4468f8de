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
    """Relabelling apiVersion loses data on a real server: each version's schema prunes the
    other's fields (v1beta1 spec.nodeStartupTimeout is gone in v1beta2). Compared as plain
    dicts the same converter round-trips, which is why the API-server pipeline is the
    default for CRDs."""
    crd = corpus_dir / "crds" / "cluster-api" / "cluster.x-k8s.io_machinehealthchecks.yaml"
    served = API.from_crd("mhc", crd, convert=relabel)
    plain = API.from_crd("mhc", crd, convert=relabel, pipeline="plain")
    assert served.pipeline == "apiserver" and plain.pipeline == "plain"
    assert list(served.kinds[0].versions) == ["v1beta1", "v1beta2"]

    def results(api: API) -> dict[str, Any]:
        return {e.result.unit.id: e.result for e in run(
            api, database="none", seed=1, max_examples=25,
            properties=["roundtrip", "no_mutation", "valid"]) if isinstance(e, UnitFinished)}

    on_server, as_dicts = results(served), results(plain)
    lost = on_server["mhc::roundtrip[v1beta1->v1beta2]"]
    assert lost.status is Status.FAILED
    # the minimal failure: either a field pruned by the other version's schema, or, the
    # smaller, a v1beta1 object without spec that a v1beta2 client cannot write back
    # (v1beta2 requires spec; ratcheting does not excuse a missing required field)
    assert ("pruned when the v1beta1 object was stored as v1beta2" in lost.message
            or ("a v1beta2 client cannot write it back unchanged" in lost.message
            and "'spec' is a required property" in lost.message)), lost.message
    for pair in ("v1beta1->v1beta2", "v1beta2->v1beta1"):
        assert as_dicts[f"mhc::roundtrip[{pair}]"].status is Status.PASSED
        assert on_server[f"mhc::no_mutation[{pair}]"].status is Status.PASSED
        # The versions' schemas differ, so relabelling alone yields invalid objects.
        invalid = as_dicts[f"mhc::valid[{pair}]"]
        assert invalid.status is Status.FAILED, invalid.message
        assert "does not validate under" in invalid.message
