"""Every way in refuses a CRD the API server refuses, with its words, the file and the line.

``sample``, ``init``, ``fuzz`` (through the config and the Python API, as the pytest plugin
loads it) exit 2; ``diff`` reports an invalid NEW as its first finding (exit 1: a release
gate fails) and an invalid OLD as a note, comparing anyway.
"""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from compatfuzz.apiserver._admission import CRDRefused, admit, problems
from compatfuzz.cli import main
from compatfuzz.roundtrip import API
from compatfuzz.schema import load_crds, load_schema

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "scope": "Namespaced",
        "versions": [
            {"name": v, "served": True, "storage": v == "v2", "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "default": 3},
                    "ports": {"type": "array", "x-kubernetes-list-type": "atomic",
                              "items": {"type": "object", "properties": {
                                  "port": {"type": "integer"}}}},
                }}},
            }}} for v in ("v1", "v2")
        ],
    },
}


def _bad() -> dict[str, Any]:
    """The same CRD with a list-type map without keys, in v2 only (a line of its own)."""
    doc = copy.deepcopy(CRD)
    doc["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["ports"]["x-kubernetes-list-type"] = "map"
    return doc


def _write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def _line_of(path: str, text: str, nth: int = 0) -> int:
    return [i for i, line in enumerate(Path(path).read_text().splitlines(), 1)
            if text in line][nth]


def _ports_line(path: str) -> int:
    """A missing field is reported at its parent: v2's ``ports`` (the second one)."""
    return _line_of(path, "ports:", 1)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    return _write(tmp_path / "good.yaml", CRD), _write(tmp_path / "bad.yaml", _bad())


MESSAGE = ("spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[ports]"
           ".x-kubernetes-list-map-keys: Required value: must not be empty if "
           "x-kubernetes-list-type is map")


def test_the_good_crd_is_accepted(files: tuple[str, str]) -> None:
    good, _ = files
    admit(load_crds(good))  # no exception
    assert problems(load_crds(good)[0]) == ()


@pytest.mark.parametrize("command", [["sample", "-n", "1"], ["init"]])
def test_sample_and_init_exit_2_naming_file_line_and_the_servers_words(
        files: tuple[str, str], command: list[str], capsys: pytest.CaptureFixture[str],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, bad = files
    monkeypatch.chdir(tmp_path)
    assert main([command[0], bad, *command[1:]]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:{_ports_line(bad)}: {MESSAGE}" in err
    assert 'The CustomResourceDefinition "widgets.example.com" is invalid' in err
    assert "Traceback" not in err


def test_the_python_api_and_the_config_refuse_it(files: tuple[str, str],
                                                 tmp_path: Path) -> None:
    _, bad = files
    with pytest.raises(CRDRefused) as info:
        API.from_crd("widgets", bad)
    assert [p.message for p in info.value.problems] == [MESSAGE]
    with pytest.raises(CRDRefused):  # one version of it, loaded on its own
        API.from_schemas("widgets", {"v1": load_schema(bad, version="v1"),
                                     "v2": load_schema(bad, version="v2")})
    config = tmp_path / "compatfuzz.toml"
    config.write_text(textwrap.dedent(f"""\
        [[api]]
        name = "widgets"
        crd = "{Path(bad).name}"
        convert = "identity"
    """))
    assert main(["fuzz", "--config", str(config), "--database", "none",
                 "--max-examples", "1"]) == 2


def test_diff_with_an_invalid_new_fails_with_it_as_first_finding(
        files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = files
    assert main(["diff", good, bad, "--format", "json", "--no-witness"]) == 1
    doc = json.loads(capsys.readouterr().out)
    first = doc["findings"][0]
    assert (first["rule"], first["breaking"], first["severity"]) == (
        "crd-invalid", True, "error")
    assert first["new"] == [f"{bad}:{_ports_line(bad)}: {MESSAGE}"]
    # the comparison went on: the list-type change is found too
    assert "list-type-changed" in [f["rule"] for f in doc["findings"]]


def test_diff_with_an_invalid_old_notes_it_and_compares_anyway(
        files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = files
    assert main(["diff", bad, good, "--no-witness"]) == 1
    out, err = capsys.readouterr()
    assert "OLD: kubectl apply would refuse this CRD (compared anyway)" in err
    assert MESSAGE in err
    assert "crd-invalid" not in out and "list-type-changed" in out


def test_a_crd_in_memory_has_no_document_and_passes() -> None:
    [crd] = load_crds_from(CRD)
    assert problems(crd.__class__(crd.group, crd.kind, crd.plural, crd.scope,
                                  crd.versions)) == ()


def load_crds_from(doc: dict[str, Any]) -> list[Any]:
    from compatfuzz.schema._load import crds_from_documents

    return crds_from_documents([doc])


def test_an_empty_rule_is_refused(tmp_path: Path) -> None:
    """compatfuzz used to warn and go on; the API server refuses it."""
    doc = copy.deepcopy(CRD)
    doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [
        {"rule": " "}]
    path = _write(tmp_path / "empty.yaml", doc)
    with pytest.raises(CRDRefused, match=r"x-kubernetes-validations\[0\]\.rule: Required "
                       r"value: rule is not specified"):
        admit(load_crds(path))
