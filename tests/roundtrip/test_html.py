"""The HTML run report (issue 10): self-contained, the version-pair matrix with the failing
pair red, the counterexample, its diff and the replay command; checked in a real headless
browser (Debian's chromium) where one is installed, skipped cleanly where not."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.roundtrip import Property, Unit
from compatfuzz.roundtrip._reports._html import render_html

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
FROBBER = REPO / "examples" / "frobber"
FAILING = "frobber::roundtrip[v7beta1->v6]"
RED = (0xFF, 0xEB, 0xE9)  # td.failed
GREEN = (0xDA, 0xFB, 0xE1)  # td.passed


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html")
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", "none",
               "--seed", "5", "--max-examples", "60", "--html", str(out / "report.html")])
    assert rc == 1
    return out / "report.html"


def test_the_page_holds_the_matrix_failure_and_replay(page: Path) -> None:
    text = page.read_text()
    assert re.search(r'<td class="cell failed" title="frobber::roundtrip\[v7beta1-&gt;v6\]">',
                     text)
    assert text.count('class="cell passed"') == 5
    assert "spec.params[1]" in text and "&quot;params&quot;: [" in text
    cx = page.parent / "compatfuzz-counterexamples" / \
        "frobber__Frobber__roundtrip__v7beta1_v6.json"
    # the page's replay line is the one that reproduces: with its config (without it a
    # replay used whatever config the folder had, and said "passes now")
    lossy = os.path.relpath(FROBBER / "lossy.toml")
    assert f"compatfuzz fuzz --replay {cx} --config {lossy}" in text
    # so is the counterexample file's
    assert json.loads(cx.read_text())["replay"] == (
        f"compatfuzz fuzz --replay {cx} --config {FROBBER / 'lossy.toml'}")
    assert "lossy.toml::frobber::roundtrip[v7beta1-&gt;v6]&#x27; --compatfuzz-seed=5" in text
    assert '<dt>seed</dt><dd>5</dd>' in text and "<dt>profile</dt><dd>default</dd>" in text
    # self-contained: no script, nothing fetched
    assert "<script" not in text.lower()
    assert not re.search(r'(src|href)="(https?:)?//', text)


@given(st.text(max_size=40), st.text(max_size=40))
def test_user_text_never_becomes_markup(error: str, value: str) -> None:
    unit = Unit("a", "A", Property.ROUNDTRIP, ("v1", "v2"))
    row = {**unit.to_json(), "status": "failed", "examples": 1, "message": error,
           "counterexample": {"object": {"k": value}, "error": error, "diff": [
               {"path": value, "kind": "lost", "old": value, "new": None}]}}
    page = render_html({"status": "failed", "units": [row]}, [unit])
    stripped = re.sub(r"<(/?)(!DOCTYPE|html|head|meta|title|style|body|h1|h2|h3|p|span|"
                      r"table|tr|th|td|a|br|pre|code|b|div|dl|dt|dd|ul|li)\b[^<>]*>", "", page)
    assert "<" not in stripped.split("</style>")[-1]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless chromium here (Debian: apt-get install chromium)")


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--disable-dev-shm-usage", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_chromium_renders_the_failing_pair_and_the_counterexample(page: Path) -> None:
    dom = _run(["--dump-dom", page.as_uri()]).stdout
    assert 'id="run-status">failed</span>' in dom
    cell = re.search(r'<td class="cell failed" title="([^"]+)">', dom)
    assert cell is not None and cell.group(1) == "frobber::roundtrip[v7beta1-&gt;v6]"
    assert "minimal counterexample" in dom and "--replay" in dom


def _pixels(png: bytes) -> list[tuple[int, int, int]]:
    """The RGB pixels of an 8-bit RGB/RGBA PNG (what chromium writes), decoded by hand."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc
                                      else c)) & 255
        rows.append(line)
        prev = line
    return [tuple(r[i:i + 3]) for r in rows  # type: ignore[misc]
            for i in range(0, stride, channels)]


def test_chromium_screenshot_shows_red_and_green_cells(page: Path) -> None:
    shot = page.parent / "report.png"
    done = _run([f"--screenshot={shot}", "--window-size=1200,1400", "--hide-scrollbars",
                 page.as_uri()])
    assert shot.is_file(), done.stderr
    pixels = _pixels(shot.read_bytes())
    red, green = pixels.count(RED), pixels.count(GREEN)
    assert red > 2000, red  # the failing pair's cell is painted red
    assert green > 5 * 2000, green  # five passing cells


@pytest.mark.extended  # the page itself is checked in a browser by default
def test_the_pytest_plugin_writes_the_same_page(pytester: pytest.Pytester) -> None:
    for name in ("crd.yaml", "conversion.py", "lossy.py"):
        shutil.copy(FROBBER / name, pytester.path / name)
    shutil.copy(FROBBER / "lossy.toml", pytester.path / "compatfuzz.toml")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "roundtrip",
                                           "--compatfuzz-seed=5", "--compatfuzz-html=out.html")
    result.assert_outcomes(passed=1, failed=1)
    text = (pytester.path / "out.html").read_text()
    assert re.search(r'<td class="cell failed" title="frobber::roundtrip\[v7beta1-&gt;v6\]">',
                     text)
    assert text.count('class="cell passed"') == 1
    assert "spec.params[1]" in text and "minimal counterexample" in text
    assert "compatfuzz.toml::frobber::roundtrip[v7beta1-&gt;v6]&#x27; --compatfuzz-seed=5" in text
