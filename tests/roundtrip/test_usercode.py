"""Issue 10, item 1: a converter that raises is shown with *its* file and line, only the
user's frames, and what it printed on the failing example, in the CLI, the counterexample
file, ``--replay`` and pytest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.cli import main

pytest_plugins = ["pytester"]

SCHEMA = {"type": "object", "properties": {
    "items": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}}}
CONVERTER = """\
import sys


def first(obj):
    print("first of", obj["items"])
    print("careful", file=sys.stderr)
    return obj["items"][0]


def convert(obj, desired):
    obj = dict(obj)
    if "items" in obj:
        obj["head"] = first(obj)
        del obj["head"]
    return obj
"""


def _project(tmp: Path, module: str) -> Path:
    (tmp / f"{module}.py").write_text(CONVERTER)
    for v in ("v1", "v2"):
        (tmp / f"{v}.json").write_text(json.dumps(SCHEMA))
    config = tmp / "compatfuzz.toml"
    config.write_text(f'[[api]]\nname = "orders"\nschemas = {{ v1 = "v1.json", v2 = '
                      f'"v2.json" }}\nconvert = "{module}:convert"\n')
    return config


def test_cli_file_and_replay_show_the_users_frames_and_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, "orders_conv_cli")
    rc = main(["fuzz", "--config", str(config), "--database", "none", "--seed", "3",
               "--property", "roundtrip", "--report", str(tmp_path / "r.json")])
    assert rc == 1
    err = capsys.readouterr().err
    conv = str(tmp_path / "orders_conv_cli.py")
    assert "convert() raised IndexError: list index out of range" in err
    assert f'File "{conv}", line 7, in first' in err
    assert f'File "{conv}", line 13, in convert' in err
    assert "return obj[\"items\"][0]" in err
    # only the user's frames: nothing from compatfuzz's (or Hypothesis's) own files
    assert "compatfuzz/roundtrip" not in err and "hypothesis/core.py" not in err
    # the failing example's output, not every example's: the minimal one is items == []
    assert "| first of []\n" in err and "| [stderr] careful" in err
    assert "first of [0" not in err

    cx_file = next((tmp_path / "compatfuzz-counterexamples").glob("*.json"))
    cx = json.loads(cx_file.read_text())
    assert cx["object"] == {"items": []}
    assert f'File "{conv}", line 7, in first' in cx["traceback"]
    assert cx["traceback"].endswith("IndexError: list index out of range\n")
    assert cx["output"] == "first of []\n[stderr] careful\n"

    assert main(["fuzz", "--replay", str(cx_file), "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert f'File "{conv}", line 7, in first' in err and "| first of []" in err


def test_pytest_shows_the_users_frames_and_the_converter_output(
        pytester: pytest.Pytester) -> None:
    _project(pytester.path, "orders_conv_pt")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tb=long",
                                           "compatfuzz.toml::orders::roundtrip[v1->v2]")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert 'orders_conv_pt.py", line 7, in first' in out
    assert "compatfuzz/roundtrip/_check/_model.py" not in out
    result.stdout.fnmatch_lines(["*Captured compatfuzz converter output call*",
                                 "first of []", "[[]stderr[]] careful"])
    full = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--full-trace",
                                         "compatfuzz.toml::orders::roundtrip[v1->v2]")
    assert "_model.py" in full.stdout.str()  # --full-trace: every frame


def test_user_traceback_drops_only_library_frames() -> None:
    from compatfuzz.roundtrip._check._usercode import user_traceback

    def users_code() -> None:
        {}["missing"]

    try:
        users_code()
    except KeyError as exc:
        text = user_traceback(exc)
    assert "in users_code" in text and text.endswith("KeyError: 'missing'\n")
    assert "test_usercode.py" in text


@given(st.lists(st.tuples(st.booleans(), st.text(alphabet="ab\n", max_size=5)),
                max_size=6))
def test_capture_keeps_every_write_in_order(writes: list[tuple[bool, str]]) -> None:
    from compatfuzz.roundtrip._check._usercode import Capture

    with Capture() as capture:
        for to_err, text in writes:
            (sys.stderr if to_err else sys.stdout).write(text)
    assert capture.text.replace("[stderr] ", "") == "".join(t for _, t in writes)

