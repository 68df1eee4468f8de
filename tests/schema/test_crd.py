from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema import CRD, lint_structural, load_crds, load_schema
from tests.schema.test_load import assert_self_contained

DATA = Path(__file__).parent / "data"


def corpus_files(corpus_dir: Path) -> list[Path]:
    return sorted((corpus_dir / "crds").rglob("*.yaml")) + sorted(
        (corpus_dir / "crd-releases").rglob("*.yaml"))


@pytest.fixture(scope="module")
def corpus_crds(corpus_dir: Path) -> list[CRD]:
    return [crd for f in corpus_files(corpus_dir) for crd in load_crds(f)]


@pytest.mark.corpus
@pytest.mark.parametrize("meta_check", ["latest", pytest.param("all", marks=pytest.mark.slow)])
def test_every_corpus_crd_version_loads(corpus_crds: list[CRD], meta_check: str) -> None:
    # Every version loads with the right metadata. check_schema costs ~0.13 s per CRD
    # version (the 2020-12 metaschema's $dynamicRef), so by default only the distinct
    # schemas of crds/ (the latest release) are meta-validated; --run-slow checks all.
    versions = [v for crd in corpus_crds for v in crd.versions]
    assert len(corpus_crds) >= 19 and len(versions) >= 40
    checked: set[str] = set()  # releases repeat schemas: check_schema each distinct one once
    for crd in corpus_crds:
        meta_validate = meta_check == "all" or "crd-releases" not in crd.source
        assert sum(v.storage for v in crd.versions) == 1, crd.name
        for i, v in enumerate(crd.versions):
            s = v.schema
            assert s is not None and s.kubernetes
            assert s.pointer == f"/spec/versions/{i}/schema/openAPIV3Schema"
            assert s.name == f"{crd.kind} {v.name} ({crd.name})"
            raw = s.meta.get("openapi")
            assert isinstance(raw, dict) and raw.get("type") == "object"  # the raw schema
            assert {k: x for k, x in s.meta.items() if k != "openapi"} == {
                "group": crd.group, "kind": crd.kind, "version": v.name, "served": v.served,
                "storage": v.storage, "crd": crd.name, "deprecated": v.deprecated,
                "plural": crd.plural, "scope": crd.scope}
            assert s.source == crd.source
            text = json.dumps(s.root, sort_keys=True)
            if meta_validate and text not in checked:
                checked.add(text)
                assert_self_contained(s)


@pytest.mark.corpus
def test_every_corpus_crd_version_is_structural(corpus_crds: list[CRD]) -> None:
    for crd in corpus_crds:
        for v in crd.versions:
            assert v.schema is not None
            assert lint_structural(v.schema) == [], (crd.name, v.name)


@pytest.mark.corpus
def test_default_version_is_storage(corpus_dir: Path) -> None:
    f = corpus_dir / "crds/cluster-api/cluster.x-k8s.io_clusters.yaml"
    crd = load_crds(f)[0]
    s = load_schema(f)
    assert s.meta["version"] == crd.storage_version and s.meta["storage"]
    assert s.name == f"Cluster {crd.storage_version} (clusters.cluster.x-k8s.io)"
    assert crd.versions[0].deprecated  # v1beta1 is deprecated upstream
    other = load_schema(f, version=crd.versions[0].name)
    assert other.pointer == "/spec/versions/0/schema/openAPIV3Schema"


def test_multi_document_and_list_wrapped_crds() -> None:
    crds = load_crds(DATA / "widgets.crd.yaml")
    assert [c.name for c in crds] == ["widgets.example.io", "gadgets.example.io"]
    widget, gadget = crds
    assert [(v.name, v.served, v.storage, v.deprecated) for v in widget.versions] == [
        ("v1alpha1", True, False, True), ("v1", True, True, False)]
    alpha = widget.versions[0].schema
    assert alpha is not None
    size = alpha.root["properties"]["spec"]["properties"]["size"]
    assert size == {"type": ["integer", "null"]}
    v1 = widget.version("v1").schema
    assert v1 is not None
    assert v1.root["properties"]["spec"]["properties"]["since"]["default"] == "2024-01-01"
    jsonschema.Draft202012Validator.check_schema(v1.root)
    # v1beta1: spec.validation is shared by every version
    assert gadget.scope == "Cluster" and gadget.storage_version == "v1beta1"
    schemas = [v.schema for v in gadget.versions]
    assert all(s is not None and s.pointer == "/items/0/spec/validation/openAPIV3Schema"
               for s in schemas)


def test_load_schema_picks_crd_by_kind_in_a_multi_crd_file() -> None:
    with pytest.raises(SchemaLoadError, match=r"holds 2 CRDs: widgets\.example\.io, gadgets"):
        load_schema(DATA / "widgets.crd.yaml")
    s = load_schema(DATA / "widgets.crd.yaml", definition="Widget", version="v1alpha1")
    assert s.name == "Widget v1alpha1 (widgets.example.io)"
    assert load_schema(DATA / "widgets.crd.yaml", definition="gadgets.example.io").meta[
        "version"] == "v1beta1"


def test_unknown_version_lists_versions() -> None:
    with pytest.raises(SchemaLoadError) as info:
        load_schema(DATA / "widgets.crd.yaml", definition="Widget", version="v2")
    text = str(info.value)
    assert "has no version 'v2'" in text
    assert "its versions are: v1alpha1, v1 (storage: v1)" in text
    assert "$.spec.versions" in text


def test_version_without_schema_names_json_path_and_fix() -> None:
    with pytest.raises(SchemaLoadError) as info:
        load_crds(DATA / "noschema.crd.yaml")
    err = info.value
    assert err.pointer == "/spec/versions/1/schema/openAPIV3Schema"
    assert "spec.versions[1].schema.openAPIV3Schema" in str(err)
    assert "version 'v1' of CRD things.example.io has no schema" in str(err)
    assert "x-kubernetes-preserve-unknown-fields: true" in err.hint


def test_file_without_crd(tmp_path: Path) -> None:
    f = tmp_path / "ns.yaml"
    f.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
    with pytest.raises(SchemaLoadError, match=r"no CustomResourceDefinition.*holds: Namespace"):
        load_crds(f)


def test_crd_missing_kind_names_path(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                 "spec: {group: g.io, names: {plural: xs}, versions: []}\n")
    with pytest.raises(SchemaLoadError, match=r"\$\.spec\.names\.kind: expected a string"):
        load_crds(f)


@pytest.mark.parametrize("flags", [(False, False), (True, True)])
def test_a_crd_needs_exactly_one_storage_version(tmp_path: Path,
                                                 flags: tuple[bool, bool]) -> None:
    versions = [{"name": name, "served": True, "storage": flag,
                 "schema": {"openAPIV3Schema": {"type": "object"}}}
                for name, flag in zip(("v1alpha1", "v1"), flags, strict=True)]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "things.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"kind": "Thing", "plural": "things"}, "versions": versions}}
    path = tmp_path / "crd.json"
    path.write_text(json.dumps(crd))
    with pytest.raises(SchemaLoadError, match="exactly one version as the storage") as info:
        load_crds(path)
    assert info.value.pointer == "/spec/versions"
    assert "storage: true" in info.value.hint and "v1alpha1, v1" in info.value.hint
