"""Tests of benchmarks/agreement_apiserver.py: which corpus files it takes, which units it
plans, and its core on one small corpus CRD through a real kube-apiserver (so the script
cannot rot; skipped without ../shared, and without Go outside CI)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.roundtrip import API, Property

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
SMALL = "addons.cluster.x-k8s.io_clusterresourcesetbindings"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_agreement_apiserver", ROOT / "benchmarks" / "agreement_apiserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_agreement_apiserver"] = module
    spec.loader.exec_module(module)
    return module


agreement = _load()


def test_the_newest_tag_of_each_series_is_taken_by_number(tmp_path: Path) -> None:
    (tmp_path / "crds" / "p").mkdir(parents=True)
    (tmp_path / "crds" / "p" / "a.yaml").write_text("")
    series = tmp_path / "crd-releases" / "p" / "things"
    series.mkdir(parents=True)
    for tag in ("v1.9.0", "v1.10.0", "v1.2.0", "main-ae7ff047db"):
        (series / f"{tag}.yaml").write_text("")
    got = [p.relative_to(tmp_path).as_posix() for p in agreement.corpus_files(tmp_path)]
    assert got == ["crds/p/a.yaml", "crd-releases/p/things/v1.10.0.yaml"]
    assert agreement.corpus_files(tmp_path / "absent") == []


def test_units_pair_every_version_and_a_single_version_with_itself() -> None:
    from tests.roundtrip import gadgets

    api = gadgets.api()
    units = agreement.units_of(api, api.kind("Gadget"), triples=2)
    pairs = {(u.property, u.versions) for u in units}
    assert len([u for u in units if u.property is Property.ROUNDTRIP]) == 6
    assert len([u for u in units if u.property is Property.PATH_INDEPENDENT]) == 2
    assert all(u.versions[-1] == "v1" for u in units
               if u.property is Property.PATH_INDEPENDENT)  # through the storage version
    assert (Property.VALID, ("v1alpha1", "v1")) in pairs

def test_a_kind_of_one_version_is_checked_against_itself(tmp_path: Path) -> None:
    crd = tmp_path / "single.yaml"
    crd.write_text(SINGLE)
    api = API.from_crd("single", crd, convert=agreement.set_api_version)
    units = agreement.units_of(api, api.kinds[0], triples=2)
    assert sorted((u.property.value, u.versions) for u in units) == [
        ("roundtrip", ("v1", "v1")), ("valid", ("v1", "v1"))]


SINGLE = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ones.example.com}
spec:
  group: example.com
  names: {kind: One, plural: ones}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}
"""


@pytest.mark.skipif(not (CORPUS / "crds").is_dir(), reason="../shared/corpus is absent")
def test_a_small_corpus_crd_agrees_with_the_real_server(real_endpoint: Endpoint) -> None:
    lines: list[str] = []
    results = agreement.run(real_endpoint, examples=3, triples=1, only=SMALL,
                            log=lines.append)
    assert [r.name for r in results] == [f"crds/cluster-api/{SMALL}.yaml"]
    (result,) = results
    assert result.skipped is None, result.skipped
    assert (result.units, result.examples) == (4, 12)
    disagreements = {sig: e["message"] for sig, e in result.found.items()
                     if e["error_type"] in ("Disagreement", "InternalError")}
    assert (result.disagreements, result.refused_on_create) == (0, 0), disagreements
    assert "| **total** | | **4** | **12** | **0** | **0** |" in agreement.table(results)
    assert lines and lines[-1].startswith(f"crds/cluster-api/{SMALL}.yaml: 4 units")
