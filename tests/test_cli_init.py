"""``compatfuzz init``: a commented config for a CRD or schema files, so that the first
run is two commands (issue 10)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compatfuzz.cli import main
from compatfuzz.roundtrip import load_config

REPO = Path(__file__).resolve().parents[1]
FROBBER = REPO / "examples" / "frobber"


def test_init_for_a_crd_then_fuzz_is_the_whole_first_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    monkeypatch.chdir(tmp_path)
    assert main(["init", "crd.yaml"]) == 0
    text = (tmp_path / "compatfuzz.toml").read_text()
    assert 'crd = "crd.yaml"' in text and 'convert = "frobbers_conversion:convert"' in text
    assert "# served versions: v6, v7beta1; storage: v6" in text
    assert "compatfuzz fuzz" in capsys.readouterr().err
    (api,) = load_config(tmp_path / "compatfuzz.toml")
    assert api.name == "frobbers" and list(api.kinds[0].versions) == ["v6", "v7beta1"]
    # the commented [[api.accept]] example loads once uncommented (with a real version)
    block = text[text.index("# [[api.accept]]"):].replace("v1alpha1", "v6", 1)
    uncommented = [line.removeprefix("# ").split("  #")[0] for line in block.splitlines()]
    (tmp_path / "accept.toml").write_text(text + "\n".join(uncommented) + "\n")
    (accepting,) = load_config(tmp_path / "accept.toml")
    assert [(a.property, a.versions, a.path) for a in accepting.accept] == [
        ("roundtrip", "*->v6", "spec.timeout")]
    # the starter converter runs: the only failures are the real schema differences
    rc = main(["fuzz", "--database", "none", "--max-examples", "10", "--seed", "1"])
    assert rc in (0, 1)
    err = capsys.readouterr().err
    assert "error" not in err.lower().replace("errors", "")
    assert "pruned" in err  # v6's param and v7beta1's widthInInches are not in the other


def test_init_for_schema_files_writes_a_config_that_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    for v in ("v1", "v2"):
        (tmp_path / "schemas").mkdir(exist_ok=True)
        (tmp_path / "schemas" / f"{v}.json").write_text(json.dumps(schema))
    config = tmp_path / "compatfuzz.toml"
    assert main(["init", "--config", str(config), f"alpha={tmp_path / 'schemas' / 'v1.json'}",
                 str(tmp_path / "schemas" / "v2.json")]) == 0
    text = config.read_text()
    assert 'schemas = { alpha = "schemas/v1.json", v2 = "schemas/v2.json" }' in text
    assert main(["fuzz", "--config", str(config), "--database", "none",
                 "--max-examples", "10"]) == 0


@pytest.mark.parametrize(("setup", "args", "needle"), [
    ("exists", ["crd.yaml"], "pass --force"),
    ("", ["one.json"], "fix: name one schema file per version"),
    ("", ["missing.yaml"], "missing.yaml: file not found"),
])
def test_init_mistakes_exit_2_with_a_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         setup: str, args: list[str], needle: str) -> None:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(tmp_path)
    try:
        _mistake(tmp_path, capsys, setup, args, needle)
    finally:
        monkeypatch.undo()


def _mistake(tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str,
             args: list[str], needle: str) -> None:
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    (tmp_path / "one.json").write_text('{"type": "object"}')
    if setup == "exists":
        (tmp_path / "compatfuzz.toml").write_text("# mine\n")
    assert main(["init", *args]) == 2
    assert needle in capsys.readouterr().err
    if setup == "exists":
        assert (tmp_path / "compatfuzz.toml").read_text() == "# mine\n"


_ORDERS = """openapi: 3.0.3
info: {title: orders, version: "1"}
paths: {}
components:
  schemas:
    OrderV1: {type: object, properties: {id: {type: string}, qty: {type: integer}}}
    OrderV2: {type: object, properties: {id: {type: string}, quantity: {type: integer}}}
"""
_RENAME = '''def convert(obj, version):
    out = dict(obj)
    old, new = ("qty", "quantity") if version == "v2" else ("quantity", "qty")
    if old in out:
        out[new] = out.pop(old)
    return out
'''


def test_models_of_one_document_and_built_in_kinds_name_versions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`init v1=orders.yaml#OrderV1 ...` and `schemas = { v1 = "FILE#NAME" }` take schema
    names as every command does (issue 17 audit: both said "file not found")."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "orders.yaml").write_text(_ORDERS)
    (tmp_path / "rename.py").write_text(_RENAME)
    assert main(["init", "v1=orders.yaml#OrderV1", "v2=orders.yaml#OrderV2",
                 "--convert", "rename:convert"]) == 0, capsys.readouterr().err
    config = tmp_path / "compatfuzz.toml"
    assert 'v1 = "orders.yaml#OrderV1", v2 = "orders.yaml#OrderV2"' in config.read_text()
    (api,) = load_config(config)
    assert set(api.kinds[0].versions["v2"].root["properties"]) == {"id", "quantity"}
    assert main(["fuzz", "--config", str(config), "--max-examples", "20", "-q"]) == 0
    # a built-in kind is a version too, in the config as on the command line
    config.write_text(config.read_text().replace(
        'v1 = "orders.yaml#OrderV1"', 'v1 = "k8s:1.36:v1:ConfigMap"'))
    (api,) = load_config(config)
    assert "data" in api.kinds[0].versions["v1"].root["properties"]


def test_init_says_protobuf_is_declared_by_hand(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.proto").write_text('syntax = "proto3";\npackage a.v2;\nmessage M {}\n')
    assert main(["init", f"v2={tmp_path / 'a.proto'}", f"v3={tmp_path / 'a.proto'}",
                 "--config", str(tmp_path / "c.toml")]) == 2
    err = capsys.readouterr().err
    assert "not for protobuf" in err and "proto = ..." in err and "YAML" not in err, err


def test_the_starter_converter_copies_deeply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """It began ``out = dict(obj)`` beside "never change obj itself": a shallow copy, so
    the first edit to a nested field (``out["spec"]["x"] = ...``) changed the caller's
    object, and no_mutation failed on the starter's own first line."""
    import importlib.util

    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    monkeypatch.chdir(tmp_path)
    assert main(["init", "crd.yaml"]) == 0, capsys.readouterr().err
    spec = importlib.util.spec_from_file_location("starter", tmp_path /
                                                  "frobbers_conversion.py")
    assert spec is not None and spec.loader is not None
    starter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(starter)
    obj = {"apiVersion": "example.com/v6", "spec": {"params": [{"name": "a"}]}}
    out = starter.convert(obj, "example.com/v7beta1")
    out["spec"]["params"][0]["name"] = "edited"
    assert obj["spec"]["params"][0]["name"] == "a"


def _two_crds(tmp_path: Path) -> Path:
    """The frobber CRD beside a copy of it named Gadget, in one file (as Helm charts and
    Istio ship theirs)."""
    one = (FROBBER / "crd.yaml").read_text()
    two = (one.replace("Frobber", "Gadget").replace("frobbers", "gadgets")
           .replace("frobber", "gadget"))
    (tmp_path / "crds.yaml").write_text(one.rstrip() + "\n---\n" + two)
    return tmp_path / "crds.yaml"


def test_init_takes_one_crd_of_a_file_by_its_kind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _two_crds(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["init", "crds.yaml#Gadget"]) == 0
    text = (tmp_path / "compatfuzz.toml").read_text()
    assert 'kind = "Gadget"' in text and 'name = "gadgets"' in text
    (api,) = load_config(tmp_path / "compatfuzz.toml")
    assert [k.name for k in api.kinds] == ["Gadget"]
    capsys.readouterr()
    assert main(["init", "crds.yaml#Sprocket", "--config", "other.toml"]) == 2
    err = capsys.readouterr().err
    assert "no CRD named 'Sprocket'" in err and "Frobber, Gadget" in err


def test_init_on_a_file_of_several_crds_lists_each_one_s_versions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _two_crds(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["init", "crds.yaml"]) == 0
    text = (tmp_path / "compatfuzz.toml").read_text()
    assert 'name = "crds"' in text
    assert "#   Frobber: served v6, v7beta1; storage: v6" in text
    assert "#   Gadget: served v6, v7beta1; storage: v6" in text
    assert "# hub" not in text  # one hub would be a guess for all of them
