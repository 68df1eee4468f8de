"""Real CRDs from ../shared/corpus: release-to-release and version-to-version diffs."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from compatfuzz.compat import diff, load_revision

pytestmark = pytest.mark.corpus
TAGS = ["v1.8.0", "v1.10.0", "v1.12.0", "main-ae7ff047db"]
CRDS = ["cluster.x-k8s.io_clusters", "cluster.x-k8s.io_machinedeployments",
        "cluster.x-k8s.io_machines"]


def _release(corpus_dir: Path, crd: str, tag: str) -> Path:
    return corpus_dir / "crd-releases" / "cluster-api" / crd / f"{tag}.yaml"


@pytest.mark.parametrize("crd", CRDS)
def test_every_keyword_change_in_real_releases_has_a_rule(corpus_dir: Path, crd: str) -> None:
    for a, b in itertools.pairwise(TAGS):
        report = diff(_release(corpus_dir, crd, a), _release(corpus_dir, crd, b),
                      dynamic=False)
        assert [f.to_json() for f in report.findings if f.rule == "unhandled"] == []


def test_cluster_api_tightened_v1beta1_string_lengths(corpus_dir: Path) -> None:
    crd = "cluster.x-k8s.io_machines"
    report = diff(_release(corpus_dir, crd, "v1.8.0"), _release(corpus_dir, crd, "v1.10.0"),
                  budget=30, whole_budget=0)
    [f] = [f for f in report.findings
           if (f.version, f.rule, f.path, f.keyword, f.old, f.new)
           == ("v1beta1", "bound-tightened", "spec.clusterName", "maxLength", None, 63)]
    assert f.breaking and f.witness is not None
    assert isinstance(f.witness.value, str) and len(f.witness.value) == 64
    assert report.exit_code == 1


def test_two_served_versions_inside_one_crd(corpus_dir: Path) -> None:
    path = _release(corpus_dir, "cluster.x-k8s.io_machines", "main-ae7ff047db")
    old, new = load_revision(f"{path}@v1beta1"), load_revision(f"{path}@v1beta2")
    report = diff(old, new, dynamic=False)
    breaking = {(f.rule, f.path) for f in report.breaking}
    # v1beta2 moved the drain timeout under spec.deletion: a v1beta1 client loses it
    assert ("field-removed", "spec.nodeDrainTimeout") in breaking
    # status is response-only: fields the server stops sending do not break clients
    assert not any(p.startswith("status.") for r, p in breaking if r == "field-removed")
