"""Tests of benchmarks/compat_peers.py: the OpenAPI document oasdiff is given for a CRD,
the reading of each tool's output, and (where benchmarks/peers/build.sh has built them)
the real crdify and oasdiff on a small hand-made pair, so the script cannot rot.

The real-binary tests skip when the peers are not built (``bash benchmarks/peers/build.sh``
builds them from the Go module proxy, about 2.5 minutes once); the corpus test skips
where ../shared is absent.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import SchemaLoadError

ROOT = Path(__file__).resolve().parent.parent


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("_compat_peers",
                                                  ROOT / "benchmarks" / "compat_peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_compat_peers"] = module
    spec.loader.exec_module(module)
    return module


peers = _load()

NAME = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
SCHEMA = st.fixed_dictionaries({"type": st.just("object")}, optional={
    "properties": st.dictionaries(NAME, st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "boolean"])}), max_size=3),
    "x-kubernetes-preserve-unknown-fields": st.just(True),
})


@st.composite
def crds(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(NAME, min_size=1, max_size=4, unique=True))
    versions = [{"name": n, "served": draw(st.booleans()), "storage": i == 0,
                 **({"deprecated": True} if draw(st.booleans()) else {}),
                 **({"schema": {"openAPIV3Schema": draw(SCHEMA)}} if draw(st.booleans())
                    else {})}
                for i, n in enumerate(names)]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "frobs.example.com"},
            "spec": {"group": "example.com", "scope": draw(st.sampled_from(
                ["Namespaced", "Cluster"])),
                "names": {"plural": "frobs", "kind": "Frob"}, "versions": versions}}


@given(crds())
def test_each_served_version_is_one_create_operation_on_its_schema(crd: dict[str, Any]) -> None:
    doc = peers.openapi_document(copy.deepcopy(crd))
    served = [v for v in crd["spec"]["versions"] if v["served"]]
    namespaced = crd["spec"]["scope"] == "Namespaced"
    assert doc["openapi"].startswith("3.0.")
    assert len(doc["paths"]) == len(served)
    assert set(doc["components"]["schemas"]) == {f"Frob.{v['name']}" for v in served}
    for v in served:
        path = (f"/apis/example.com/{v['name']}/namespaces/{{namespace}}/frobs" if namespaced
                else f"/apis/example.com/{v['name']}/frobs")
        assert list(doc["paths"][path]) == ["post"]
        op = doc["paths"][path]["post"]
        assert op.get("deprecated", False) == v.get("deprecated", False)
        assert ("parameters" in op) == namespaced
        ref = f"#/components/schemas/Frob.{v['name']}"
        assert op["requestBody"]["content"]["application/json"]["schema"] == {"$ref": ref}
        assert op["responses"]["201"]["content"]["application/json"]["schema"] == {"$ref": ref}
        assert doc["components"]["schemas"][f"Frob.{v['name']}"] == (
            v.get("schema", {}).get("openAPIV3Schema", {}))
    assert len({op["post"]["operationId"] for op in doc["paths"].values()}) == len(served)


@pytest.mark.parametrize(("crd", "words"), [
    ({"kind": "ConfigMap"}, "not a CustomResourceDefinition"),
    ({"kind": "CustomResourceDefinition", "spec": {"group": "g"}}, "spec.names.plural"),
    ({"kind": "CustomResourceDefinition",
      "spec": {"group": "g", "names": {"plural": "fs", "kind": "F"}, "versions": [{}]}},
     "without a name"),
])
def test_a_file_that_is_no_crd_is_refused_by_name(crd: dict[str, Any], words: str) -> None:
    with pytest.raises(SchemaLoadError) as info:
        peers.openapi_document(crd, source="crd.yaml")
    assert "crd.yaml" in str(info.value)
    assert words in str(info.value)


CRDIFY_REPORT = {
    "crdValidation": [{"name": "scope"}, {"name": "existingFieldRemoval",
                                          "errors": ["removed field : ^.spec.a"]}],
    "sameVersionValidation": {"v1": {"^.spec.b": [
        {"name": "maximum", "errors": ["maximum decreased : 9 -> 3"]},
        {"name": "enum", "warnings": ["allowed enum values added : [\"x\"]"]},
        {"name": "type"}]}},
    "servedVersionValidation": {"v1beta1 -> v1": {"^.spec.c": [
        {"name": "type", "errors": ["type changed : string -> integer"]}]}},
}


def test_crdify_report_is_read_group_by_group() -> None:
    r = peers.parse_crdify(1, json.dumps(CRDIFY_REPORT), "")
    assert r["verdict"] == "breaking"
    assert (r["errors"], r["warnings"]) == (3, 1)
    assert r["rules"] == {"enum": 1, "existingFieldRemoval": 1, "maximum": 1, "type": 1}
    assert sorted(f["scope"] for f in r["findings"]) == [
        "crd", "same-version", "same-version", "served-version"]


@pytest.mark.parametrize("stdout", ["", "not json", "[]"])
def test_crdify_exit_1_without_a_report_is_an_error(stdout: str) -> None:
    r = peers.parse_crdify(1, stdout, "2026/11/26 loading old CustomResourceDefinition: boom\n")
    assert r["verdict"] == "error"
    assert "boom" in r["message"]


def test_oasdiff_levels_and_exit_codes() -> None:
    changes = [{"id": "request-property-max-set", "level": 3, "text": "max set"},
               {"id": "response-property-enum-value-added", "level": 2, "text": "enum"}]
    r = peers.parse_oasdiff(1, json.dumps(changes), "")
    assert (r["verdict"], r["errors"], r["warnings"]) == ("breaking", 1, 1)
    assert peers.parse_oasdiff(0, json.dumps(changes[1:]), "")["verdict"] == "compatible"
    assert peers.parse_oasdiff(0, "", "")["verdict"] == "compatible"
    assert peers.parse_oasdiff(1, "", "Error: failed to load base spec")["verdict"] == "error"


def test_compatfuzz_counts_only_what_fails_or_warns() -> None:
    report = {"findings": [
        {"rule": "bound-tightened", "severity": "error", "message": "m"},
        {"rule": "field-added", "severity": "info", "message": "m"},
        {"rule": "enum-value-added", "severity": "warning", "message": "m"},
        {"rule": "field-removed", "severity": "error", "ignored": True, "message": "m"},
    ]}
    r = peers.parse_compatfuzz(1, json.dumps(report), "")
    assert (r["verdict"], r["errors"], r["warnings"]) == ("breaking", 1, 1)
    assert peers.parse_compatfuzz(2, "", "error: x.yaml: not found")["verdict"] == "error"


def test_scrub_leaves_no_machine_path(tmp_path: Path) -> None:
    text = f"open {tmp_path}/old.openapi.json: bad; {peers.ROOT}/x.yaml"
    assert peers.scrub(text, tmp_path) == "open <scratch>/old.openapi.json: bad; ./x.yaml"


def test_the_commentary_after_the_marker_is_kept(tmp_path: Path) -> None:
    md = tmp_path / "r.md"
    md.write_text(f"old table\n{peers.COMMENTARY}\n\nWhy crdify differs.\n")
    data = {"date": "d", "cores": 2, "load_average": [1.0], "peers": {}, "pairs": [],
            "summary": {"tools": {}, "agreement": {}}}
    out = peers.markdown(data, peers.kept_commentary(md))
    assert out.endswith(f"{peers.COMMENTARY}\nWhy crdify differs.\n")
    assert "old table" not in out


# --- the real peers -----------------------------------------------------------------------

def _bin_dir() -> Path:
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "peers" / "build.sh"), "--check"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip("crdify and oasdiff are not built: bash benchmarks/peers/build.sh")
    return Path(proc.stdout.strip())


def _crd(maximum: int | None, served_beta: bool = True, deprecated: bool = True
         ) -> dict[str, Any]:
    replicas: dict[str, Any] = {"type": "integer"}
    if maximum is not None:
        replicas["maximum"] = maximum
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"replicas": replicas}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "frobs.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "frobs", "singular": "frob", "kind": "Frob",
                               "listKind": "FrobList"},
                     "versions": [
                         {"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": schema}},
                         {"name": "v1beta1", "served": served_beta, "storage": False,
                          "deprecated": deprecated, "schema": {"openAPIV3Schema": schema}}]}}


def _write(path: Path, crd: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(crd))
    return path


@pytest.mark.parametrize("tool", ["crdify", "oasdiff"])
def test_the_real_peers_fail_a_lower_maximum_and_pass_no_change(tmp_path: Path,
                                                                tool: str) -> None:
    bin_dir = _bin_dir()
    (tmp_path / "cwd").mkdir()
    old = _write(tmp_path / "old.yaml", _crd(9))
    new = _write(tmp_path / "new.yaml", _crd(3))
    row = peers.run_pair(bin_dir, old, new, [tool], tmp_path, timeout=60)[tool]
    assert row["verdict"] == "breaking", row
    rule = {"crdify": "maximum", "oasdiff": "request-property-max-decreased"}[tool]
    assert rule in row["rules"], row
    same = peers.run_pair(bin_dir, old, old, [tool], tmp_path, timeout=60)[tool]
    assert (same["verdict"], same["errors"]) == ("compatible", 0), same


@pytest.mark.parametrize(("deprecated", "verdict"), [(True, "compatible"),
                                                     (False, "breaking")])
def test_oasdiff_sees_a_version_no_longer_served_as_its_path_removed(
        tmp_path: Path, deprecated: bool, verdict: str) -> None:
    bin_dir = _bin_dir()
    (tmp_path / "cwd").mkdir()
    old = _write(tmp_path / "old.yaml", _crd(9, deprecated=deprecated))
    new = _write(tmp_path / "new.yaml", _crd(9, served_beta=False, deprecated=deprecated))
    row = peers.run_pair(bin_dir, old, new, ["oasdiff"], tmp_path, timeout=60)["oasdiff"]
    assert row["verdict"] == verdict, row
    assert ("api-path-removed-without-deprecation" in row["rules"]) == (not deprecated), row


@pytest.mark.extended  # ~25 s, every corpus CRD; CI runs it
def test_every_corpus_crd_makes_a_document_with_its_served_versions(tmp_path: Path) -> None:
    if not peers.CORPUS.is_dir():
        pytest.skip("../shared/corpus/crd-releases is absent")
    files = sorted(peers.CORPUS.glob("*/*/*.yaml"))
    assert files
    for f in files:
        out = tmp_path / "doc.json"
        peers.write_openapi(f, out)
        doc = json.loads(out.read_text())
        crd = yaml.load(f.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        served = [v["name"] for v in crd["spec"]["versions"] if v.get("served")]
        assert sorted(p.split("/")[3] for p in doc["paths"]) == sorted(served), f


def test_a_file_oasdiff_cannot_be_given_is_an_error_row_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "cwd").mkdir()
    old = tmp_path / "old.yaml"
    old.write_text("kind: ConfigMap\n")
    row = peers.run_pair(Path("no-such-folder"), old, old, ["oasdiff"], tmp_path)
    assert row["oasdiff"]["verdict"] == "error"
    assert "old.yaml" in row["oasdiff"]["message"]
    assert "CustomResourceDefinition" in row["oasdiff"]["message"]
