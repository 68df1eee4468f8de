"""Issue 22, items 8 and 9: text from a converter is bounded and cannot break what reads it.

* item 8: a multi-megabyte exception message or diff value is cut, with a note naming the
  counterexample file, on the terminal and in report.json, JUnit and HTML; the
  counterexample file keeps a diff whole, and a message as captured (cut at 1 MB where
  the converter raised it, see ``tests/faults/test_huge_message.py``);
* item 9: control characters (ANSI escapes, NUL, BEL) in a converter's exception leave the
  JUnit file well-formed XML and reach the terminal escaped, as do those in a schema's
  field names in ``compatfuzz diff``'s text output.

Each run is a subprocess with a timeout (``tests/faults/_project.py``); the texts are a few
MB, enough to tell "bounded" from "copied" many times over without costing the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.roundtrip._text import (
    CAPTURE_TEXT_LIMIT,
    REPORT_TEXT_LIMIT,
    TERMINAL_TEXT_LIMIT,
    clip,
    printable,
    xml_safe,
)
from tests.faults._project import Run, fuzz, project

BIG = 5_000_000
KB = 1000


def _outputs(config: Path, *args: str) -> tuple[Run, Path, Path]:
    junit, html = config.parent / "junit.xml", config.parent / "report.html"
    done = fuzz(config, "--property", "roundtrip", "--max-examples", "5", "--junit",
                str(junit), "--html", str(html), *args, timeout=120)
    return done, junit, html


@pytest.mark.extended  # cutting is checked by default on a huge diff value
def test_a_huge_exception_message_is_cut_everywhere_but_the_counterexample_file(
        tmp_path: Path) -> None:
    config = project(tmp_path, f"""
        def convert(obj, desired):
            raise ValueError("start " + "A" * {BIG} + " end")
    """)
    done, junit, html = _outputs(config)
    assert done.returncode == 1, done.stderr[:2000]
    report = config.parent / "report.json"
    # 5 MB of message: once 10 MB of stderr; a few KB now, with where the rest is
    assert len(done.stderr) < 4 * TERMINAL_TEXT_LIMIT * 2, len(done.stderr)
    assert " more; the full text is in " in done.stderr
    for path in (report, junit, html):
        assert path.stat().st_size < 10 * REPORT_TEXT_LIMIT, (path, path.stat().st_size)
    assert done.report["status"] == "failed"  # not left "running" by a MemoryError
    unit = done.report["units"][0]
    cx_file = unit["counterexample_file"]
    assert "error" in unit["counterexample"]["truncated"]
    assert f"KB more; the full text is in {cx_file}" in unit["counterexample"]["error"]
    failure = ET.parse(junit).getroot().find(".//failure")
    assert failure is not None and f"the full text is in {cx_file}" in (failure.text or "")
    assert cx_file in html.read_text()
    kept = json.loads(Path(cx_file).read_text())
    # the file keeps what the worker captured: the first CAPTURE_TEXT_LIMIT characters,
    # and how much was dropped there
    assert "start " + "A" * (CAPTURE_TEXT_LIMIT - len("start ")) in kept["error"]
    assert "4.0 MB more, cut where it was captured" in kept["error"]
    assert len(kept["error"]) < CAPTURE_TEXT_LIMIT + 1000


def test_a_huge_diff_value_is_cut_in_reports_and_kept_in_the_counterexample_file(
        tmp_path: Path) -> None:
    config = project(tmp_path, f"""
        def convert(obj, desired):
            return {{**obj, "apiVersion": desired,
                     "spec": {{"n": "x" * {BIG}}}}}
    """)
    done, junit, html = _outputs(config)
    assert done.returncode == 1, done.stderr[:2000]
    assert len(done.stderr) < 8 * TERMINAL_TEXT_LIMIT, len(done.stderr)
    report = config.parent / "report.json"
    for path in (report, junit, html):
        assert path.stat().st_size < 10 * REPORT_TEXT_LIMIT, (path, path.stat().st_size)
    unit = done.report["units"][0]
    assert "diff" in unit["counterexample"]["truncated"]
    full = json.loads(Path(unit["counterexample_file"]).read_text())
    assert '"' + "x" * BIG + '"' in json.dumps(full["diff"])


ANSI = "\x1b[31mred\x1b[0m \x1b]0;title\x07 nul:\x00 del:\x7f csi:\x9b"


def test_control_characters_in_an_exception_keep_junit_well_formed(tmp_path: Path) -> None:
    config = project(tmp_path, f"""
        def convert(obj, desired):
            raise ValueError({ANSI!r})
    """)
    done, junit, page = _outputs(config)
    assert done.returncode == 1, done.stderr
    # the HTML page shows them as text too, never raw bytes (issue 22 audit)
    text = page.read_text()
    assert "\\x1b[31mred" in text and not set(text) & {"\x1b", "\x07", "\x00", "\x9b"}
    root = ET.parse(junit).getroot()  # raised ParseError: CI read no result at all
    failure = root.find(".//failure")
    assert failure is not None
    assert "\\x1b[31mred\\x1b[0m" in (failure.text or "")
    assert "\\x1b[31mred" in failure.get("message", "")
    # the terminal gets every control character escaped, none raw
    assert "\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 nul:\\x00 del:\\x7f" in done.stderr
    assert not set(done.stderr) & {"\x1b", "\x07", "\x00", "\x7f", "\x9b"}


def test_control_characters_in_field_names_reach_diffs_terminal_escaped(
        tmp_path: Path) -> None:
    evil = "x\x1b]0;owned\x07\x1b[2J"
    old = {"type": "object", "properties": {evil: {"type": "string"}, "n": {"type": "integer"}}}
    new = {"type": "object", "properties": {evil: {"type": "integer"}}, "required": [evil]}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    done = subprocess.run([sys.executable, "-m", "compatfuzz.cli", "diff",
                           str(tmp_path / "old.json"), str(tmp_path / "new.json")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "x\\x1b]0;owned\\x07\\x1b[2J" in done.stdout, done.stdout
    assert not set(done.stdout) & {"\x1b", "\x07"}


@given(st.text(), st.integers(0, 50))
def test_clip_keeps_the_start_and_says_how_much_is_cut(text: str, limit: int) -> None:
    cut = clip(text, limit, "cx.json")
    if len(text) <= limit:
        assert cut == text
    else:
        assert cut.startswith(text[:limit])
        assert cut.endswith("more; the full text is in cx.json")
        assert len(cut) <= limit + 80


@given(st.text())
def test_xml_safe_text_is_always_well_formed_and_printable_has_no_controls(
        text: str) -> None:
    element = ET.Element("failure", message=xml_safe(text))
    element.text = xml_safe(text)
    ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert not any((ord(c) < 32 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f
                   for c in printable(text))


@pytest.mark.parametrize("text", ["plain", "tab\tand\nnewline", "caf\u00e9 \u2603"])
def test_safe_text_is_left_alone(text: str) -> None:
    assert printable(text) == xml_safe(text) == text
