"""Issue 11, item 1: a ``$ref`` reads only files under the allowed folders.

The root schema's folder (and the config's) is allowed; anything else is refused with exit
2, the ``$ref`` and the fix (``--allow-ref-root`` / ``allow_ref_roots``), and no message
ever shows a referenced file's content.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compatfuzz.cli import main
from compatfuzz.errors import RefOutsideRoot, UnresolvableRef
from compatfuzz.schema import load_schema

SECRET = "TOP-SECRET-7f3a"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """``root/a/b/`` holds the schema; ``root/outside.yaml`` and ``root/secret.txt`` do not."""
    home = tmp_path / "a" / "b"
    home.mkdir(parents=True)
    (tmp_path / "outside.yaml").write_text(f"type: string\ndescription: {SECRET}\n")
    (tmp_path / "secret.txt").write_text(f"the password is {SECRET}\n")
    (home / "inside.json").write_text('{"type": "integer"}')
    return {"root": tmp_path, "home": home}


def _schema(home: Path, ref: str, **extra: str) -> Path:
    path = home / "schema.json"
    path.write_text(json.dumps({**extra, "type": "object", "required": ["x"],
                                "properties": {"x": {"$ref": ref}}}))
    return path


def _ref_forms(root: Path) -> dict[str, tuple[str, dict[str, str]]]:
    outside = root / "outside.yaml"
    return {
        "absolute path": (str(outside), {}),
        "file URI": (outside.as_uri(), {}),
        "dot-dot": ("../../outside.yaml", {}),
        "encoded dot-dot in a URL": ("http://x/%2e%2e/%2e%2e/outside.yaml",
                                     {"$id": "http://x/a/b/schema.json"}),
    }


@pytest.mark.parametrize("form", ["absolute path", "file URI", "dot-dot",
                                  "encoded dot-dot in a URL"])
@pytest.mark.parametrize("command", ["sample", "diff"])
def test_refs_outside_the_schema_folder_are_refused(
        layout: dict[str, Path], form: str, command: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    ref, extra = _ref_forms(layout["root"])[form]
    schema = _schema(layout["home"], ref, **extra)
    argv = ["sample", str(schema), "-n", "1"] if command == "sample" else [
        "diff", str(schema), str(schema), "--no-dynamic"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert SECRET not in out + err
    assert "Traceback" not in err
    assert ref in err and "$.properties.x['$ref']" in err
    assert "fix:" in err


def test_the_fix_in_the_message_works(layout: dict[str, Path],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    schema = _schema(layout["home"], "../../outside.yaml")
    assert main(["sample", str(schema), "-n", "1"]) == 2
    assert f"--allow-ref-root {layout['root']}" in capsys.readouterr().err
    assert main(["sample", str(schema), "-n", "1", "--seed", "1",
                 "--allow-ref-root", str(layout["root"])]) == 0
    assert isinstance(json.loads(capsys.readouterr().out)["x"], str)


def test_refs_inside_the_folder_still_work(layout: dict[str, Path]) -> None:
    schema = load_schema(_schema(layout["home"], "inside.json"))
    assert schema.root["$defs"]["inside"] == {"type": "integer"}


def test_a_symlink_cannot_lead_out(layout: dict[str, Path]) -> None:
    link = layout["home"] / "link.yaml"
    link.symlink_to(layout["root"] / "outside.yaml")
    with pytest.raises(RefOutsideRoot, match="outside the folders"):
        load_schema(_schema(layout["home"], "link.yaml"))


def test_no_existence_probe_outside_the_roots(layout: dict[str, Path]) -> None:
    """A missing and an existing file outside read the same: no oracle for probing."""
    messages = []
    for name in ("outside.yaml", "does-not-exist.yaml"):
        with pytest.raises(RefOutsideRoot) as info:
            load_schema(_schema(layout["home"], f"../../{name}"))
        messages.append(info.value.reason.replace(name, "X"))
    assert messages[0] == messages[1]


def test_a_ref_to_a_non_schema_never_shows_the_content(
        layout: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    schema = _schema(layout["home"], "../../secret.txt")
    with pytest.raises(UnresolvableRef, match="points to a str, not a schema") as info:
        load_schema(schema, ref_roots=[layout["root"]])
    assert SECRET not in str(info.value)
    (layout["home"] / "notes.txt").write_text(f"just a line {SECRET}\n")
    schema = _schema(layout["home"], "notes.txt")
    for argv in (["sample", str(schema), "-n", "1"],
                 ["diff", str(schema), str(schema)]):  # diff: was a TypeError traceback
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert "not a schema" in err and SECRET not in out + err and "Traceback" not in err


def test_fuzz_config_allows_its_own_folder_and_allow_ref_roots(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "common.json").write_text('{"type": "integer", "minimum": 0}')
    project = tmp_path / "project"
    (project / "schemas").mkdir(parents=True)
    (project / "types.json").write_text('{"type": "string", "maxLength": 3}')
    for v in ("v1", "v2"):
        (project / "schemas" / f"{v}.json").write_text(json.dumps({
            "type": "object", "properties": {
                "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                "n": {"$ref": "../../shared/common.json"}, "s": {"$ref": "../types.json"}}}))
    (project / "conv.py").write_text(
        "def convert(obj, desired):\n    return {**obj, 'apiVersion': desired}\n")
    config = project / "compatfuzz.toml"
    body = ('[[api]]\nname = "t"\nkind = "T"\ngroup = "g.example.com"\nconvert = "conv:convert"\n'
            'schemas = { v1 = "schemas/v1.json", v2 = "schemas/v2.json" }\n')
    config.write_text(body)
    argv = ["fuzz", "--config", str(config), "--database", "none", "--max-examples", "5",
            "-q"]
    assert main(argv) == 2  # ../../shared is outside both the schema's and the config's
    err = capsys.readouterr().err
    assert "../../shared/common.json" in err and "allow_ref_roots" in err
    assert main([*argv, "--allow-ref-root", str(shared)]) == 0
    config.write_text('allow_ref_roots = ["../shared"]\n' + body)
    assert main(argv) == 0
    config.write_text('allow_ref_roots = "../shared"\n' + body)
    assert main(argv) == 2
    assert "allow_ref_roots must be a list" in capsys.readouterr().err
