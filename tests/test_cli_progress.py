"""Issue 10, item 11: the live line of ``compatfuzz fuzz`` shows examples so far, their
rate and the time left, not just "running X" for minutes."""

from __future__ import annotations

import argparse
import io
import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz._commands.fuzz import _Progress, live_line
from compatfuzz.roundtrip import (
    LiveCounts,
    Property,
    RunStarted,
    Unit,
    UnitStarted,
    load_config,
    run,
)

REPO = Path(__file__).resolve().parents[1]
FROBBER = REPO / "examples" / "frobber"


def _seconds(clock: str) -> int:
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", clock)
    assert m is not None, clock
    h, mi, s = (int(g or 0) for g in m.groups())
    return h * 3600 + mi * 60 + s


@given(done=st.integers(0, 50), examples=st.integers(0, 10**7),
       elapsed=st.floats(0.01, 10**5), duration=st.none() | st.floats(1, 10**5),
       planned=st.none() | st.integers(1, 10**8))
def test_live_line_counts_rate_and_time_left(done: int, examples: int, elapsed: float,
                                            duration: float | None,
                                            planned: int | None) -> None:
    line = live_line(done=done, total=50, running=["api::roundtrip[v1->v2]"],
                     examples=examples, elapsed=elapsed, duration=duration,
                     planned_examples=planned)
    assert len(line) <= 120
    assert line.startswith(f"[{done}/50], {examples:,} examples, ")
    left = re.search(r"(~?)(\S+) left", line)
    if duration is not None:
        assert left is not None and left.group(1) == ""
        assert abs(_seconds(left.group(2)) - max(0, duration - elapsed)) <= 60
    elif planned is not None and examples / elapsed >= 0.5:
        assert left is not None and left.group(1) == "~"
        assert _seconds(left.group(2)) >= 0
    else:
        assert left is None or left.group(1) == "~"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_line_on_a_terminal_shows_examples_and_time_left() -> None:
    out = _Terminal()
    live = LiveCounts()
    progress = _Progress(out, quiet=False, live=live)
    unit = Unit("a", "A", Property.ROUNDTRIP, ("v1", "v2"))
    args = argparse.Namespace()
    progress.handle(RunStarted((unit,), None, "default", None, 1800.0, 1, "none"), {}, args)
    progress.handle(UnitStarted(unit), {}, args)

    class Counter:
        value = 1234

    live.start(unit, Counter())
    progress.started = time.monotonic() - 10
    progress._live()
    last = out.getvalue().rsplit("\r\x1b[K", 1)[-1]
    assert re.fullmatch(r"\[0/1\], 1,234 examples, 1\d\d/s, 29m[45]\ds left; running "
                        r"a::roundtrip\[v1->v2\]", last), last


@pytest.mark.parametrize("workers", [1, 2])
def test_run_counts_examples_live(workers: int) -> None:
    apis = load_config(FROBBER / "compatfuzz.toml")
    live = LiveCounts()
    events = list(run(apis, max_examples=15, database="none", workers=workers, live=live,
                      properties=["valid"]))
    results = events[-1].results  # type: ignore[union-attr]
    assert live.examples == sum(r.examples for r in results) >= 2 * 15
