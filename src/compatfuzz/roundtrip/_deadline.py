"""The per-example deadline: stop an example that sleeps, loops or waits on a slow server.

An example has ``example_deadline`` seconds (generating and checking it); past that its
unit fails, naming where it was stuck, instead of hanging the run. In the main
thread a real-time interval timer (``SIGALRM``) raises into the example: it interrupts
``time.sleep``, blocking socket reads and Python's ``re`` too. Elsewhere, or when another
tool owns ``SIGALRM`` (pytest-timeout's signal method), a watchdog thread injects the
exception with ``PyThreadState_SetAsyncExc``, which reaches Python code but not a blocking
call. Code that never returns to Python is the worker parent's job (it kills the worker).

Load does not count: on a busy machine (``pytest -n auto``, N shards on 2
cores) an example can wait for a CPU longer than it runs, and a wall-clock limit then
fails an innocent example, which is the ``DeadlineExceeded``/``Flaky`` flake Hypothesis's
own ``deadline`` shows under xdist.  So the time an example has used is its wall-clock time
minus the time its thread waited, runnable, on the run queue: the kernel's ``run_delay``,
the second field of ``/proc/<pid>/task/<tid>/schedstat`` (``kernel/sched/stats.c``,
``Documentation/scheduler/sched-stats.rst``).  Sleeping, blocking on a socket and
computing all count; waiting for a CPU does not.  When the timer fires early by that
measure it is set again for the rest.  Without ``schedstat`` (not Linux) it is wall time.

Nor is it raised where Python would drop it: in a ``gc.callbacks`` function (Hypothesis
installs one) or a ``__del__``, CPython prints an exception as "unraisable" and goes on
(CPython's ``invoke_gc_callback`` in ``Modules/gcmodule.c`` writes it unraisable), so the
deadline was lost for a second and the run got a ``PytestUnraisableExceptionWarning``.
There it is put off by :data:`_RETRY` until the example's own code runs again, at most
:data:`_MAX_PUT_OFF` times (:data:`PUT_OFF`, a second): a finalizer that never returns
then gets it (which ends the finalizer; Python drops it).  A deadline that fired and was
dropped is not forgotten: the next :meth:`Alarm.arm` (the next example) and
:meth:`Alarm.check` (after the test returned) raise it, so the unit fails instead of
passing with an example that outlived its deadline.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["PUT_OFF", "Alarm", "ExampleDeadline", "run_armed", "run_queue_wait", "uncounted",
           "where"]


class ExampleDeadline(KeyboardInterrupt):
    """Raised into an example that outlived its deadline.

    A ``KeyboardInterrupt`` so that Hypothesis stops at once instead of shrinking (every
    shrink step would wait out the deadline again), and so that the model does not wrap
    it in ``ConverterError``.  ``unavailable`` is the setup error to report instead when
    the example was waiting on a conversion webhook (``_webhook``): a webhook too slow for
    the deadline is not the object's fault.
    """

    unavailable: BaseException | None = None
    #: where the example was stuck when that is not in its own thread (a converter run
    #: by the conversion webhook, while the example waited on the API server)
    where: str | None = None
    #: why it stopped when no per-example deadline did (the API server gave up on a
    #: converter call): the unit's failure message, shrinking stopped all the same
    reason: str | None = None


_RETRY = 0.05
"""Seconds to put the deadline off when it falls where an exception would be dropped."""
_MAX_PUT_OFF = 20
"""How many times an example's deadline is put off so."""
PUT_OFF = _RETRY * _MAX_PUT_OFF
"""Seconds an example's deadline can be put off at most (the worker parent waits longer)."""

_SKIP_FILES = (os.sep + "hypothesis" + os.sep, os.sep + "compatfuzz" + os.sep,
               os.sep + "threading.py", os.sep + "contextlib.py")


def _users(filename: str) -> bool:
    """Whether ``filename`` is the user's code, not Hypothesis's, ours or the stdlib's
    plumbing that "stuck in" looks past."""
    return not any(s in filename for s in _SKIP_FILES)


def _where(frame: FrameType | None) -> tuple[str, bool]:
    """(innermost user frame as ``file:line in fn()``, whether an example was being checked:
    also when the garbage collector ran user code, a finalizer, while generating one)."""
    if frame is None:
        return "", False
    stack = traceback.extract_stack(frame)
    checking = any(f.name == "compatfuzz_property"
                   or (f.name == "__del__" and _users(f.filename))  # the user's finalizer
                   for f in stack)
    for f in reversed(stack):
        if _users(f.filename):
            return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}()", checking
    last = stack[-1] if stack else None
    where = f"{os.path.basename(last.filename)}:{last.lineno} in {last.name}()" if last else ""
    return where, checking


def where(frame: FrameType | None) -> str:
    """The innermost frame of the user's code in ``frame``'s stack, as ``file:line in
    fn()`` (the last frame when none is the user's)."""
    return _where(frame)[0]


def _unraisable_here(frame: FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` would be dropped as unraisable: it runs
    inside a ``gc.callbacks`` function or a ``__del__`` method."""
    callbacks = {code for code in (getattr(cb, "__code__", None) for cb in list(gc.callbacks))
                 if code is not None}
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def run_queue_wait(native_id: int, pid: int | str = "self") -> float | None:
    """Seconds thread ``native_id`` of process ``pid`` (this one by default) has spent
    runnable but waiting for a CPU (``run_delay`` in ``schedstat``), or ``None`` where the
    kernel does not say (or the process is gone)."""
    try:
        with open(f"/proc/{pid}/task/{native_id}/schedstat", encoding="ascii") as file:
            fields = file.read().split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class Alarm:
    """Raises :class:`ExampleDeadline` into the running example after ``seconds``.

    In the main thread, with SIGALRM free, a real-time interval timer: it interrupts
    ``time.sleep`` and blocking socket reads too, and fires again every second in case
    user code swallows the first one.  Elsewhere a watchdog thread injects the exception
    with ``PyThreadState_SetAsyncExc`` (which reaches Python code, not a blocking call).
    Either way it fires only once the example has *used* ``seconds``: time its thread
    spent waiting for a CPU is added back (:func:`run_queue_wait`).
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired_at: tuple[str, bool] | None = None
        self._previous: Any = None
        self._signal = False
        self._generation = 0
        self._thread_id = threading.get_ident()
        self._native_id = threading.get_native_id()
        self._armed_at = 0.0
        self._waited_at: float | None = None
        self._watchdog: threading.Thread | None = None
        self._due: float | None = None
        self._cond = threading.Condition()
        self._closed = False
        self._put_off = 0
        #: since when compatfuzz's own work inside the example runs (:func:`uncounted`)
        self._paused_at: float | None = None

    def __enter__(self) -> Alarm:
        _ACTIVE.append(self)
        if self.seconds is None:
            return self
        usable = (hasattr(signal, "setitimer")
                  and threading.current_thread() is threading.main_thread())
        if usable:
            current = signal.getsignal(signal.SIGALRM)
            # somebody else's timer (pytest-timeout's signal method): leave it alone
            usable = current in (signal.SIG_DFL, signal.SIG_IGN, None)
        if usable:
            self._previous = signal.signal(signal.SIGALRM, self._on_signal)
            self._signal = True
        else:
            self._watchdog = threading.Thread(target=self._watch, daemon=True,
                                              name="compatfuzz-example-deadline")
            self._watchdog.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        self.disarm()
        if self._signal:
            signal.signal(signal.SIGALRM, self._previous)
            self._signal = False
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def arm(self) -> None:
        """Start the deadline of the next example; raise the last one's if it fired and
        its exception was dropped (a finalizer got it)."""
        if self.seconds is None:
            return
        self.check()
        self._armed_at = time.monotonic()
        self._put_off = 0
        self._waited_at = run_queue_wait(self._native_id)
        if self._signal:
            signal.setitimer(signal.ITIMER_REAL, self.seconds, 1.0)
        else:
            with self._cond:
                self._due = time.monotonic() + self.seconds
                self._generation += 1
                self._cond.notify_all()

    def check(self) -> None:
        """Raise :class:`ExampleDeadline` if the deadline fired since :meth:`arm` (it was
        raised where Python dropped it, or user code swallowed it)."""
        if self.fired_at is not None:
            raise ExampleDeadline

    def disarm(self) -> None:
        if self._signal:
            signal.setitimer(signal.ITIMER_REAL, 0)
        with self._cond:
            self._due = None
            self._cond.notify_all()

    def _left(self) -> float:
        """Seconds the example may still use: 0 once it has used its deadline, wall time
        since :meth:`arm` less the time its thread waited for a CPU."""
        assert self.seconds is not None
        used = time.monotonic() - self._armed_at
        if self._paused_at is not None:
            used -= time.monotonic() - self._paused_at
        if self._waited_at is not None:
            waited = run_queue_wait(self._native_id)
            if waited is not None:
                used -= max(0.0, waited - self._waited_at)
        return max(0.0, self.seconds - used)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.fired_at is None:
            left = self._left()
            if left > 0:  # it waited for a CPU: that time was not its to use
                signal.setitimer(signal.ITIMER_REAL, left, 1.0)
                return
        if self._put_off < _MAX_PUT_OFF and _unraisable_here(frame):
            self._put_off += 1  # raised here, it would be printed and dropped
            signal.setitimer(signal.ITIMER_REAL, _RETRY, 1.0)
            return
        if self.fired_at is None:
            self.fired_at = _where(frame)
        raise ExampleDeadline

    def _watch(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (self._due is None
                                            or time.monotonic() < self._due):
                    wait = None if self._due is None else self._due - time.monotonic()
                    self._cond.wait(wait)
                if self._closed:
                    return
                if self.fired_at is None:
                    left = self._left()
                    if left > 0:  # it waited for a CPU: that time was not its to use
                        self._due = time.monotonic() + left
                        continue
                frame = sys._current_frames().get(self._thread_id)
                if self._put_off < _MAX_PUT_OFF and _unraisable_here(frame):
                    self._put_off += 1  # raised there, it would be dropped
                    self._due = time.monotonic() + _RETRY
                    continue
                self._due = time.monotonic() + 1.0  # again in a second if swallowed
            if self.fired_at is None:
                self.fired_at = _where(frame)
            del frame
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self._thread_id), ctypes.py_object(ExampleDeadline))


#: the alarms entered in this process, innermost last
_ACTIVE: list[Alarm] = []


@contextlib.contextmanager
def uncounted() -> Iterator[None]:
    """Time spent inside is not the running example's: compatfuzz's own work inside a
    check (re-running a failing example on a freshly imported app, in a process of its
    own) must not use up the user's deadline."""
    alarm = _ACTIVE[-1] if _ACTIVE else None
    if alarm is None or alarm.seconds is None or alarm._paused_at is not None:
        yield
        return
    start = alarm._paused_at = time.monotonic()
    try:
        yield
    finally:
        alarm._armed_at += time.monotonic() - start
        alarm._paused_at = None


def run_armed(alarm: Alarm, test: Callable[[], None], heartbeat: Any = None) -> None:
    """Run a unit's Hypothesis ``test`` with the example deadline armed from its first
    draw: the draw runs user code too (a pydantic validator filters what is drawn).
    ``heartbeat.value`` (a worker's, watched by its parent) is set as it starts."""
    with alarm:
        alarm.arm()
        if heartbeat is not None:
            heartbeat.value = time.monotonic()
        try:
            test()
            alarm.check()  # the last example's deadline, if it fired and was dropped
        finally:
            alarm.disarm()
