"""Issue 11, items 6, 7 and 10: hostile or absurd schema files are input errors.

Every one is refused with exit 2, the file, the JSON path and a fix, quickly and in little
memory: alias bombs (a billion laughs in ``enum`` or ``default``), 1,000- and 10,000-level
nesting, minimum sizes no generator can meet, Python YAML tags. Commands that could hang
or eat memory on the old code run in a child process with a timeout and an address-space
limit (``resource.setrlimit``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compatfuzz.cli import main

resource = pytest.importorskip("resource")  # POSIX

LAUGHS = "\n".join(
    ['  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
)  # 9**9: ~390 million strings once expanded


def _limited() -> None:
    """In the child: at most 1 GiB of address space (the bombs took 3-4 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _cli(*argv: str, cwd: Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limited, check=False)


@pytest.mark.parametrize("keyword", ["enum", "default"])
def test_yaml_alias_bombs_are_refused(tmp_path: Path, keyword: str) -> None:
    (tmp_path / "bomb.yaml").write_text(
        f"x-laughs:\n{LAUGHS}\ntype: object\nproperties:\n  s:\n    {keyword}: *l8\n")
    started = time.monotonic()
    done = _cli("sample", "bomb.yaml", "-n", "1", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert time.monotonic() - started < 20
    assert "bomb.yaml" in done.stderr and "alias bomb" in done.stderr
    assert "at $.x-laughs.l6 (line 8)" in done.stderr  # the smallest value past the bound
    assert "fix:" in done.stderr and "Traceback" not in done.stderr
    done = _cli("diff", "bomb.yaml", "bomb.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "alias bomb" in done.stderr


def test_a_diff_ignore_file_is_bounded_too(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"type": "string"}')
    (tmp_path / "ignore.yaml").write_text(f"x:\n{LAUGHS}\nignore: *l8\n")
    done = _cli("diff", "s.json", "s.json", "--ignore", "ignore.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "alias bomb" in done.stderr, done.stderr


def test_a_self_referencing_alias_is_refused(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rec.yaml").write_text("type: object\nproperties:\n  a:\n"
                                       "    default: &a [1, *a]\n")
    assert main(["sample", str(tmp_path / "rec.yaml"), "-n", "1"]) == 2
    err = capsys.readouterr().err
    assert "refers to a value that contains it, at $.properties.a.default" in err


@pytest.mark.parametrize("levels", [1_000, 10_000])
@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_absurd_nesting_is_an_input_error(tmp_path: Path, levels: int, suffix: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"deep.{suffix}"
    if suffix == "json":
        path.write_text('{"type": "object", "properties": {"a": ' * levels + "{}"
                        + "}}" * levels)
    else:
        path.write_text("type: object\ndefault:\n  a: " + "[" * levels + "]" * levels + "\n")
    for argv in (["sample", str(path), "-n", "1"], ["diff", str(path), str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{path}: nested more than 200 levels deep at $" in err
        assert "(line " in err and "fix:" in err and "Traceback" not in err
    if suffix == "yaml":
        assert "$.default.a[0][0]" in err


def test_deep_config_toml_is_an_input_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "compatfuzz.toml"
    config.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["fuzz", "--config", str(config)]) == 2
    assert "nested too deeply" in capsys.readouterr().err


def _sized(tmp_path: Path, **bounds: float) -> Path:
    path = tmp_path / "sized.json"
    path.write_text(json.dumps({"type": "object", "required": ["s"], "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "s": {"type": "array" if "minItems" in bounds else "string", **bounds}}}))
    return path


def test_min_length_1e9_is_an_input_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = _sized(tmp_path, minLength=1e9, maxLength=1e9)
    assert main(["sample", str(path), "-n", "1"]) == 2  # was Hypothesis InvalidArgument
    err = capsys.readouterr().err
    assert "sized.json at $.properties.s.minLength: minLength is 1000000000" in err
    assert "fix: lower minLength" in err and "Traceback" not in err


def test_min_items_1e6_fails_fast_with_the_path(tmp_path: Path) -> None:
    _sized(tmp_path, minItems=1e6)
    (tmp_path / "other.json").write_text(json.dumps({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "s": {"type": "array", "maxItems": 3}}}))
    (tmp_path / "conv.py").write_text(
        "def convert(obj, desired):\n    return {**obj, 'apiVersion': desired}\n")
    (tmp_path / "compatfuzz.toml").write_text(
        '[[api]]\nname = "t"\nkind = "T"\ngroup = "g.example.com"\nconvert = "conv:convert"\n'
        'schemas = { v1 = "sized.json", v2 = "other.json" }\n')
    started = time.monotonic()
    done = _cli("sample", "sized.json", "-n", "1", cwd=tmp_path)
    assert done.returncode == 2 and "$.properties.s.minItems" in done.stderr, done.stderr
    done = _cli("fuzz", "--database", "none", "--property", "roundtrip", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "sized.json at $.properties.s.minItems: minItems is 1000000" in done.stderr
    done = _cli("diff", "sized.json", "other.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the static findings still stand
    assert "witness search skipped: sized.json at $.properties.s.minItems" in done.stderr
    assert time.monotonic() - started < 25  # three commands; minItems alone took 51 s


def test_a_python_tag_gets_a_tag_hint_not_an_indentation_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tag.yaml"
    path.write_text("type: !!python/object/apply:os.system ['echo hi']\n")
    assert main(["sample", str(path), "-n", "1"]) == 2
    err = capsys.readouterr().err
    assert "python/object/apply:os.system" in err and "remove the tag" in err
    assert "indentation" not in err
