"""Issue 22, item 10: the report and JUnit files are not rewritten on every unit event.

Each rewrite serialises every result so far, so rewriting on each of 3,360 units'
start and end was quadratic (minutes with ``--report --junit``).  Routine events now
rewrite at most once per ``min_interval`` (a timer catches up the last); the start, a
failure, an error and the end still rewrite at once, and a counterexample file is written
the moment it is found, so what ``tests/faults/test_kill.py`` guarantees after
``kill -9`` holds.  Writes are counted through ``atomic_write``, not timed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.roundtrip import Property, Status, Unit
from compatfuzz.roundtrip._events import (
    Counterexample,
    RunFinished,
    RunStarted,
    StopReason,
    UnitFinished,
    UnitResult,
    UnitStarted,
)
from compatfuzz.roundtrip._reports import _report

UNITS = [Unit("t", "T", Property.ROUNDTRIP, (f"v{i}", f"v{i + 1}")) for i in range(1500)]


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Count the writes of each file (the real ``atomic_write`` still writes them)."""
    writes: dict[str, list[str]] = {}
    real = _report.atomic_write

    def counted(path: Path, text: str) -> None:
        writes.setdefault(path.name, []).append(text)
        real(path, text)

    monkeypatch.setattr(_report, "atomic_write", counted)
    return writes


def _started() -> RunStarted:
    return RunStarted(tuple(UNITS), None, "default", 10, None, 1, "none")


def _failure(unit: Unit) -> Counterexample:
    return Counterexample(unit, {"n": 6}, "n too big", "NotEquivalent", shrunk=False)


def test_passing_units_do_not_rewrite_the_report_each_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = _counting(monkeypatch)
    writer = _report.ReportWriter(tmp_path / "report.json", tmp_path / "cx",
                                  junit=tmp_path / "junit.xml")
    started = time.monotonic()
    writer.handle(_started())
    for unit in UNITS:
        writer.handle(UnitStarted(unit))
        writer.handle(UnitFinished(UnitResult(unit, Status.PASSED, 10, 0.001)))
    writer.handle(RunFinished(StopReason.COMPLETED, tuple(writer.results), 1.0))
    seconds = time.monotonic() - started
    # old code: 2 writes per unit, 3,002 of each file; now about one a second
    bound = 3 + seconds / getattr(writer, "min_interval", 1.0)
    assert len(writes["report.json"]) <= bound, (len(writes["report.json"]), seconds)
    assert len(writes["junit.xml"]) <= bound
    final = json.loads(writes["report.json"][-1])  # the end is always written
    assert final["status"] == "passed" and len(final["units"]) == len(UNITS)
    assert final["not_run"] == [] and final["running"] == []


@settings(max_examples=20, deadline=None)
@given(fail_at=st.sets(st.integers(0, 49), min_size=1, max_size=5))
def test_failures_are_on_disk_at_once(tmp_path_factory: pytest.TempPathFactory,
                                      fail_at: set[int]) -> None:
    """What ``kill -9`` must not lose is written when it happens, whatever came before:
    a failure found mid-unit (its counterexample file and the report naming it) and a
    unit that ends failed or in error."""
    tmp = tmp_path_factory.mktemp("writes")
    with pytest.MonkeyPatch.context() as monkeypatch:
        writes = _counting(monkeypatch)
        writer = _report.ReportWriter(tmp / "report.json", tmp / "cx")
        writer.handle(_started())
        for i, unit in enumerate(UNITS[:50]):
            writer.handle(UnitStarted(unit))
            if i not in fail_at:
                writer.handle(UnitFinished(UnitResult(unit, Status.PASSED, 10, 0.001)))
                continue
            writer.found(_failure(unit))
            cx_file = tmp / "cx" / _report.counterexample_filename(_failure(unit))
            assert json.loads(cx_file.read_text())["shrunk"] is False
            doc = json.loads((tmp / "report.json").read_text())
            assert any(r.get("counterexample_file") == str(cx_file)
                       for r in doc["running"]), doc["running"]
            status = Status.FAILED if i % 2 else Status.ERROR
            writer.handle(UnitFinished(UnitResult(
                unit, status, 3, 0.1, None,
                _failure(unit) if status is Status.FAILED else None, "boom")))
            doc = json.loads((tmp / "report.json").read_text())
            assert doc["units"][-1]["id"] == unit.id
            assert doc["units"][-1]["status"] == str(status)
        assert len(writes["report.json"]) < 50  # and passes did not each rewrite it


def test_a_late_routine_event_is_caught_up(tmp_path: Path) -> None:
    """A unit that starts just after a rewrite is in the file within ``min_interval``
    (a timer), not only at the next event: after ``kill -9`` the report is at most that
    far behind."""
    writer = _report.ReportWriter(tmp_path / "report.json", tmp_path / "cx",
                                  min_interval=0.2)
    writer.handle(_started())
    writer.handle(UnitStarted(UNITS[0]))  # within min_interval of the start: deferred

    def running() -> Any:
        return json.loads((tmp_path / "report.json").read_text())["running"]

    end = time.monotonic() + 20
    while not running() and time.monotonic() < end:
        time.sleep(0.02)
    assert [r["id"] for r in running()] == [UNITS[0].id]
