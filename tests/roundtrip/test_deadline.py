"""The per-example deadline (``roundtrip/_deadline.py``) where raising would be dropped."""

from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Any

import pytest

from compatfuzz.roundtrip._deadline import Alarm, ExampleDeadline


def _slow_gc_callback(calls: list[str]) -> Any:
    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and not calls:
            calls.append(phase)
            time.sleep(0.6)  # the 0.2 s deadline falls in here
    return callback


def _example(calls: list[str]) -> None:
    """0.2 s deadline; a garbage collection whose callback sleeps past it; then 3 s of
    CPU, the example's own code, where the deadline must land."""
    callback = _slow_gc_callback(calls)
    gc.callbacks.append(callback)
    try:
        with Alarm(0.2) as alarm:
            alarm.arm()
            gc.collect()
            end = time.thread_time() + 3
            while time.thread_time() < end:
                pass
    finally:
        gc.callbacks.remove(callback)


def test_a_deadline_falling_in_a_gc_callback_is_raised_after_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The SIGALRM timer (main thread): raised in the callback, CPython would print the
    exception as unraisable and drop it, and the example ran a second longer."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    calls: list[str] = []
    with pytest.raises(ExampleDeadline):
        _example(calls)
    assert calls == ["start"]
    assert unraisable == []


def test_the_watchdog_also_waits_for_a_gc_callback_to_return(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the main thread the deadline is injected by a watchdog thread, which would
    have landed in the callback as soon as its sleep returned."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    calls: list[str] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            _example(calls)
        except ExampleDeadline as exc:
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert calls == ["start"]
    assert [type(e) for e in raised] == [ExampleDeadline]
    assert unraisable == []


class _Stuck:
    def __del__(self) -> None:
        while True:  # a finalizer that never returns
            pass


def test_a_finalizer_that_never_returns_is_still_stopped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The deadline is put off for a second at most: then it is raised in the finalizer
    (ending it; Python drops it) and the next firing, a second later, stops the example."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with Alarm(0.2) as alarm, pytest.raises(ExampleDeadline):
        alarm.arm()
        _Stuck()  # its __del__ runs here, at once
        end = time.thread_time() + 20
        while time.thread_time() < end:
            pass
    assert [type(u.exc_value) for u in unraisable] == [ExampleDeadline]


def test_a_deadline_dropped_in_a_finalizer_is_raised_before_the_next_example(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The example returned after its deadline was dropped: ``check`` (after the test)
    and ``arm`` (before the next example) raise it, so the unit cannot pass."""
    monkeypatch.setattr(sys, "unraisablehook", lambda _: None)
    with Alarm(0.2) as alarm:
        alarm.arm()
        _Stuck()  # put off for a second, then raised in __del__: that ends it, dropped
        assert alarm.fired_at is not None
        with pytest.raises(ExampleDeadline):
            alarm.check()
        with pytest.raises(ExampleDeadline):
            alarm.arm()


def test_a_user_finalizer_is_the_example_s_code_not_generation() -> None:
    """The garbage collector can run a converter's ``__del__`` while Hypothesis generates
    the next example: stuck there, the message must blame that code, not the schema."""
    from compatfuzz.roundtrip._deadline import _where

    seen: list[tuple[str, bool]] = []

    class Probe:
        def __del__(self) -> None:
            seen.append(_where(sys._getframe()))

    Probe()
    ((where, checking),) = seen
    assert "in __del__()" in where and checking
    assert _where(sys._getframe()) == (_where(sys._getframe())[0], False)


def test_time_inside_uncounted_is_not_the_example_s() -> None:
    """compatfuzz's own work inside a check (a Cadwyn failure re-run on a freshly imported
    app, seconds in another process) used up a 10 s deadline on a loaded machine and
    failed an innocent unit; inside ``uncounted`` the clock stops, and it runs on after."""
    from compatfuzz.roundtrip._deadline import uncounted

    with Alarm(0.3) as alarm:
        alarm.arm()
        with uncounted():
            time.sleep(0.6)  # past the deadline, but not the example's time
        time.sleep(0.1)
        alarm.disarm()
    with pytest.raises(ExampleDeadline), Alarm(0.3) as alarm:
        alarm.arm()
        time.sleep(0.2)
        with uncounted():
            time.sleep(0.1)
        time.sleep(0.6)  # the rest is the example's again
