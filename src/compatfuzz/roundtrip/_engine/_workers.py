"""Worker processes for ``run(..., workers=N)``: one process per unit, watched.

A pool of long-lived workers (``multiprocessing.Pool``) could not tell a result that is
late from one that will never come: a converter calling ``os._exit`` hung the run forever,
the parent ignored further signals, and killing it left workers burning CPU.
Here each unit runs in a fresh process that sends ``("failure", cx)`` updates, maybe a
``("notice", Notice)``, then ``("result", UnitResult)`` over a pipe, and the parent waits
on the pipes *and* the process sentinels:

* a worker that ends without a result fails its unit with its exit status, and the run
  goes on;
* a worker whose example outlives the deadline plus a grace period (C code that never
  returns to Python, so the alarm cannot fire) is killed and its unit fails; as for the
  alarm (``_deadline``), time the worker waited for a CPU does not count, so a loaded
  machine kills no worker the alarm would have spared;
* a worker dies with its parent: ``PR_SET_PDEATHSIG`` on Linux and a parent-pid check
  everywhere, so ``kill -9`` of the CLI leaves nothing behind;
* a second signal to the parent (``KeyboardInterrupt`` in its wait) kills every worker.

The CLI runs units here with ``--workers 1`` too (``run(..., isolate=True)``), so that
what a converter does to its process is that unit's failure, never the run's end:
``os._exit(0)`` is a dead worker, not a run that exits 0; a SIGTERM
it sends itself kills only its worker; a non-daemon thread it leaves behind dies with the
worker.  Each worker is its own process group, so a terminal's Ctrl-C reaches only the
parent (which stops the workers through ``stop``): a ``KeyboardInterrupt`` in a worker,
raised or sent by ``os.kill(os.getpid(), SIGINT)``, is the converter's and fails its unit.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip._check._model import API
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._check._usercode import safe_str
from compatfuzz.roundtrip._deadline import PUT_OFF, run_queue_wait
from compatfuzz.roundtrip._events import (
    Counterexample,
    Event,
    Notice,
    Status,
    Unit,
    UnitFinished,
    UnitResult,
    UnitStarted,
)

__all__ = ["replay_in_child", "run_pool"]

FailureCallback = Callable[[Counterexample], None]
#: At most this many extra seconds (at least 1, at most the deadline itself) a worker gets
#: to answer the deadline before its parent kills it.
_GRACE = 5.0

_WORKER: dict[str, Any] = {}


def _die_with_parent(parent: int) -> None:
    """End this worker when its parent goes, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="compatfuzz-parent-watch").start()


def _own_signals() -> None:
    """Take this worker out of the terminal's reach and make its SIGINT the converter's.

    Ctrl-C reaches the terminal's foreground process group: the parent decides and tells
    workers via ``stop``.  In a process group of its own a worker gets SIGINT only from
    itself (``os.kill(os.getpid(), SIGINT)`` in a converter), so SIGINT raises
    ``KeyboardInterrupt`` there and fails the unit; without process groups (Windows) it is
    ignored.  SIGTERM gets its default back (a forked worker inherits the CLI's handler) so
    the parent can always end a worker.
    """
    from compatfuzz.roundtrip._check._usercode import interrupts_are_faults

    own_group = False
    if hasattr(os, "setpgid"):
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
            own_group = True
    signal.signal(signal.SIGINT, signal.default_int_handler if own_group else signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    interrupts_are_faults()


def _init_worker(sources: Sequence[str], database_spec: Any, stop: Any,
                 home: Path | None = None) -> None:
    """``home`` is the project's folder (beside the first config): a Redis database's
    local fallback lives there, as the parent's does, not in the worker's cwd."""
    _own_signals()
    if "apis" not in _WORKER:  # spawn: nothing inherited, reload the configs
        from compatfuzz.roundtrip._check._config import load_config

        _WORKER["apis"] = {a.name: a for src in sources for a in load_config(src)}
    _WORKER.pop("notice", None)
    if isinstance(database_spec, str) or database_spec is None:
        from compatfuzz.roundtrip._engine._database import database_label, open_database, redact

        try:
            _WORKER["database"] = (open_database(database_spec, home=home)
                                   if database_spec is not None else None)
        except InvalidArgument as exc:
            if not (database_spec or "").startswith(("redis://", "rediss://", "unix://")):
                raise
            # the shared database went away mid-run (it answered when the run began)
            _WORKER["database"] = open_database("", home=home)
            local = database_label("", home=home)
            _WORKER["notice"] = Notice(
                f"the example database {redact(database_spec or '')} stopped answering "
                f"({exc}); the run goes on with the local database {local}, "
                "so failures found from now on are kept there, not shared",
                database=local)
    else:
        _WORKER["database"] = database_spec
    _WORKER["stop"] = stop


def _worker_main(job: dict[str, Any], conn: Any, heartbeat: Any, counter: Any = None) -> None:
    """A worker process: run one unit, send ``("failure", cx)`` updates, a possible
    ``("notice", Notice)``, then ``("result", UnitResult)``.

    ``job`` holds ``parent`` (pid), ``sources`` (configs to reload under spawn),
    ``database`` (spec or object), ``stop``, ``unit`` and ``options`` for ``run_unit``.
    """
    from compatfuzz.roundtrip._engine._unit import notice_of, run_unit

    _die_with_parent(job["parent"])
    unit: Unit = job["unit"]
    options: dict[str, Any] = job["options"]
    try:
        _init_worker(job["sources"], job["database"], job["stop"], job.get("home"))
        result = run_unit(_WORKER["apis"][unit.api], unit, database=_WORKER["database"],
                          stop=_WORKER["stop"], heartbeat=heartbeat, counter=counter,
                          on_failure=lambda cx: conn.send(("failure", cx)), **options)
    except BaseException as exc:  # never leave the parent without an answer
        result = UnitResult(unit, Status.ERROR, 0, 0.0, options.get("seed"), None,
                            f"{type(exc).__name__}: {safe_str(exc)}")
    if result.status is Status.INTERRUPTED and not job["stop"].is_set():
        # nobody asked to stop: a SIGINT the converter sent itself landed outside its
        # frame (between two examples, say); still its unit's failure, not the run's end
        result = dataclasses.replace(
            result, status=Status.FAILED,
            message="a KeyboardInterrupt nobody outside sent (a converter raised one, or "
                    "sent SIGINT to its own process) ended the unit; " + (
                        "the counterexample is the last one found (not minimal)"
                        if result.counterexample is not None else "no example had failed"))
    notice = notice_of(_WORKER.get("database")) or _WORKER.get("notice")
    with contextlib.suppress(OSError):
        if notice is not None:
            conn.send(("notice", notice))
        conn.send(("result", result))
        conn.close()
    _exit_despite_threads()


def _exit_despite_threads() -> None:
    """End this worker now if a converter left a non-daemon thread running: the
    interpreter would wait for it forever once the unit is done."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()
           if t is not threading.main_thread()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)


class _Worker:
    """One worker process running one unit, and what it has said so far."""

    def __init__(self, ctx: Any, unit: Unit, target: Callable[..., None],
                 job: dict[str, Any]) -> None:
        self.unit = unit
        self.conn, child_conn = ctx.Pipe(duplex=False)
        self.heartbeat = ctx.Value("d", 0.0, lock=False)
        self.examples = ctx.Value("q", 0, lock=False)  # read by the live progress line
        self.process = ctx.Process(target=target, args=(job, child_conn, self.heartbeat,
                                                        self.examples),
                                   daemon=True, name=f"compatfuzz {unit.id}")
        self.process.start()
        child_conn.close()
        self.started = time.monotonic()
        self.result: UnitResult | None = None
        self.failure: Counterexample | None = None
        self.notice: Notice | None = None
        self.killed_for: str | None = None
        #: the heartbeat last seen, and the worker's run-queue wait when it was seen
        self._beat: tuple[float, float | None] = (0.0, None)

    def busy_for(self, now: float) -> float:
        """Seconds the worker's current example has had: wall time since its heartbeat
        less the time its main thread waited for a CPU since the parent saw that beat."""
        beat = float(self.heartbeat.value)
        if beat != self._beat[0]:
            pid = self.process.pid
            self._beat = (beat, run_queue_wait(pid, pid) if pid is not None else None)
        used = now - beat
        before = self._beat[1]
        if before is not None and self.process.pid is not None:
            waited = run_queue_wait(self.process.pid, self.process.pid)
            if waited is not None:
                used -= max(0.0, waited - before)
        return used

    def drain(self, on_failure: FailureCallback | None) -> None:
        """Read every message waiting on the pipe (EOF once the worker is gone)."""
        try:
            while self.conn.poll():
                kind, payload = self.conn.recv()
                if kind == "failure":
                    self.failure = payload
                    if on_failure is not None:
                        with contextlib.suppress(Exception):
                            on_failure(payload)
                elif kind == "notice":
                    self.notice = payload
                elif kind == "result":
                    self.result = payload
        except (EOFError, OSError):
            pass

    def stop(self) -> None:
        """Terminate, then kill, the worker; always reaps it."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(1.0)
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)
        self.conn.close()

    def dead_result(self, stopping: bool = False) -> UnitResult:
        """The result of a worker that ended without sending one; ``stopping`` says the
        run was being stopped (a SIGTERM or SIGINT then came from outside, to all)."""
        code = self.process.exitcode
        signum = -code if code is not None and code < 0 else None
        if stopping and self.killed_for is None and signum in _STOP_SIGNALS:
            return UnitResult(self.unit, Status.INTERRUPTED, 0,
                              time.monotonic() - self.started, None, None,
                              f"interrupted: its worker got {signal.Signals(signum).name} "
                              "with the rest of the run")
        if self.killed_for is not None:
            how = self.killed_for
        elif signum in _STOP_SIGNALS:
            how = (f"was killed by {signal.Signals(signum).name} (a converter signalled "
                   "its own process, or something outside sent it to this worker alone)")
        elif signum is not None:
            how = f"was killed by {signal.Signals(signum).name} (a crash, or the OOM killer)"
        else:
            how = (f"exited with status {code} (a converter called os._exit, or crashed; "
                   "even status 0 fails the unit)")
        message = (f"the worker process running this unit {how} before the unit ended; "
                   "the run went on without it")
        cx = self.failure
        if cx is not None:
            message += "; the counterexample is the last one it reported (not minimal)"
        return UnitResult(self.unit, Status.FAILED, 0, time.monotonic() - self.started,
                          None if cx is None else cx.seed, cx, message)


_STOP_SIGNALS = {int(getattr(signal, name)) for name in ("SIGTERM", "SIGINT", "SIGHUP")
                 if hasattr(signal, name)}


def run_pool(api_list: list[API | Suite], selected: list[tuple[API | Suite, Unit]], *,
             workers: int, database: Any, db_obj: Any, stop: threading.Event, options: Any,
             results: list[UnitResult], on_failure: FailureCallback | None,
             deadline: float | None, live: Any = None,
             spent: Any = None, home: Path | None = None) -> Iterator[Event]:
    """Run ``selected`` in worker processes; ``home`` is the project folder ``run`` found
    (a Redis database's local fallback goes there, not into a worker's cwd)."""
    methods = multiprocessing.get_all_start_methods()
    forkable = "fork" in methods and os.name == "posix"
    if not forkable and any(a.source is None for a in api_list):
        raise InvalidArgument(
            "workers > 1 needs APIs loaded from a config file on this platform (no fork); "
            "use load_config() or workers=1"
        )
    ctx = multiprocessing.get_context("fork" if forkable else "spawn")
    mp_stop = ctx.Event()
    sources = sorted({a.source for a in api_list if a.source})
    if forkable:
        _WORKER["apis"] = {a.name: a for a in api_list}
        _prewarm(selected)
    spec = database if isinstance(database, str) or database is None else db_obj
    parent = os.getpid()
    # at least the second the worker's alarm may put the deadline off (in a finalizer,
    # ``_deadline.PUT_OFF``) plus the second its next firing takes, and a second to spare
    grace = None if deadline is None else min(_GRACE, max(PUT_OFF + 2.0, deadline))
    running: dict[Unit, _Worker] = {}
    told = False
    try:
        queue = deque(selected)
        while queue or running:
            if stop.is_set():
                mp_stop.set()
            if spent is not None and spent():
                queue.clear()  # the run's duration is used up: start nothing more
            while queue and len(running) < workers and not mp_stop.is_set():
                _, unit = queue.popleft()
                yield UnitStarted(unit)
                opts = options(unit, len(queue) + len(running) + 1)
                running[unit] = _Worker(ctx, unit, _worker_main, {
                    "parent": parent, "sources": sources, "database": spec, "home": home,
                    "stop": mp_stop, "unit": unit, "options": opts})
                if live is not None:
                    live.start(unit, running[unit].examples)
            if mp_stop.is_set() and not running:
                break
            try:
                multiprocessing.connection.wait(
                    [w.conn for w in running.values()]
                    + [w.process.sentinel for w in running.values()], timeout=0.25)
            except KeyboardInterrupt:
                stop.set()
                mp_stop.set()
                raise
            now = time.monotonic()
            for unit, w in list(running.items()):
                w.drain(on_failure)
                if (w.result is None and deadline is not None and grace is not None
                        and w.heartbeat.value and w.busy_for(now) > deadline + grace):
                    w.killed_for = (f"was killed: an example ran for more than "
                                    f"{deadline + grace:g}s without answering the "
                                    f"{deadline:g}s per-example deadline (code that never "
                                    "returns to Python, or that catches the deadline's "
                                    "KeyboardInterrupt and goes on)")
                    w.stop()
                if w.result is None and w.process.is_alive():
                    continue
                if w.result is None:
                    w.process.join(1.0)
                    w.drain(on_failure)  # a result may have raced the exit
                del running[unit]
                result = (w.result if w.result is not None
                          else w.dead_result(stop.is_set() or mp_stop.is_set()))
                w.stop()
                if w.notice is not None and not told:
                    told = True
                    yield w.notice
                results.append(result)
                if live is not None:
                    live.finish(unit, result.examples)
                if result.status is Status.INTERRUPTED:
                    stop.set()
                yield UnitFinished(result)
    finally:
        for w in running.values():
            w.stop()
        _WORKER.pop("apis", None)


def _prewarm(selected: Sequence[tuple[API | Suite, Unit]]) -> None:
    """Do once, in the parent, the set-up each forked worker would otherwise repeat: every
    worker is a fork of this process and inherits it. Hypothesis's one-time set-up
    (``strategies._warm``), importing jsonschema and the semantic comparators and loading
    their plugins cost a cold worker about 1 s; paid in each of the 930 units of a CRD
    with 15 versions, that was most of a 20-minute run. No user code runs here:
    converters, pydantic validators and webhooks run only in the workers."""
    from compatfuzz.semantic._api import compiled
    from compatfuzz.strategies._warm import warm_up

    warm_up()
    seen: set[int] = set()
    for api, unit in selected:
        if not isinstance(api, API):
            continue
        with contextlib.suppress(Exception):  # a unit that cannot load says so itself
            kind = api.kind(unit.kind)
            for version in unit.versions:
                schema = kind.schema(version)
                if id(schema) not in seen:
                    seen.add(id(schema))
                    schema.validator  # noqa: B018 (a cached property: building it is the point)
                    compiled(schema)  # semantic equality: its plugins and comparator tree


def _replay_main(api: Any, unit: Unit, example: Any, conn: Any) -> None:
    from compatfuzz.errors import CompatfuzzError
    from compatfuzz.roundtrip._check._properties import check
    from compatfuzz.roundtrip._check._usercode import Capture, find_user_traceback

    _own_signals()
    capture = Capture()
    answer: tuple[str, str, str, str]
    try:
        with capture:
            check(api, unit, example)
        answer = ("passed", "", "", capture.text)
    except (AssertionError, CompatfuzzError) as exc:
        answer = ("failed", f"{type(exc).__name__}: {safe_str(exc)}",
                  find_user_traceback(exc), capture.text)
    except BaseException as exc:  # whatever escaped: still the check's answer
        answer = ("failed", f"{type(exc).__name__}: {safe_str(exc)}", "", capture.text)
    with contextlib.suppress(OSError):
        conn.send(answer)
        conn.close()
    _exit_despite_threads()


def replay_in_child(api: Any, unit: Unit, example: Any) -> tuple[str, str, str, str]:
    """Check ``example`` for ``unit`` in a forked child, as ``fuzz`` runs units, so that
    ``--replay`` cannot be ended or held by its converter either.

    Returns ``(outcome, message, user traceback, captured output)``; ``outcome`` is
    ``passed`` or ``failed`` (a child that died without answering is a failure).
    Without ``fork`` (Windows) the check runs in this process.
    """
    if "fork" not in multiprocessing.get_all_start_methods() or os.name != "posix":
        from compatfuzz.errors import CompatfuzzError
        from compatfuzz.roundtrip._check._properties import check
        from compatfuzz.roundtrip._check._usercode import Capture, find_user_traceback

        capture = Capture()
        try:
            with capture:
                check(api, unit, example)
        except (AssertionError, CompatfuzzError) as exc:
            return ("failed", f"{type(exc).__name__}: {safe_str(exc)}",
                    find_user_traceback(exc), capture.text)
        return ("passed", "", "", capture.text)
    ctx = multiprocessing.get_context("fork")
    conn, child_conn = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_replay_main, args=(api, unit, example, child_conn),
                          daemon=True, name=f"compatfuzz replay {unit.id}")
    process.start()
    child_conn.close()
    try:
        answer: tuple[str, str, str, str] | None = None
        while answer is None and (process.is_alive() or conn.poll()):
            if conn.poll(0.25):
                try:
                    answer = conn.recv()
                except (EOFError, OSError):
                    break
        if answer is None:
            process.join(5.0)
            code = process.exitcode
            how = (f"was killed by {signal.Signals(-code).name}" if code is not None
                   and code < 0 else f"exited with status {code}")
            answer = ("failed", f"the process checking the counterexample {how} before "
                      "the check ended (a converter called os._exit, signalled its own "
                      "process, or crashed)", "", "")
        return answer
    finally:
        if process.is_alive():
            process.terminate()
            process.join(1.0)
        if process.is_alive():
            process.kill()
        process.join(5.0)
        conn.close()
