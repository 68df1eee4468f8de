"""Worker processes for ``run(..., workers=N)``: one process per unit, watched.

A pool of long-lived workers (``multiprocessing.Pool``) could not tell a result that is
late from one that will never come: a converter calling ``os._exit`` hung the run forever,
the parent ignored further signals, and killing it left workers burning CPU (issue 11).
Here each unit runs in a fresh process that sends ``("failure", cx)`` updates, maybe a
``("notice", Notice)``, then ``("result", UnitResult)`` over a pipe, and the parent waits
on the pipes *and* the process sentinels:

* a worker that ends without a result fails its unit with its exit status, and the run
  goes on;
* a worker whose example outlives the deadline plus a grace period (C code that never
  returns to Python, so the alarm cannot fire) is killed and its unit fails;
* a worker dies with its parent: ``PR_SET_PDEATHSIG`` on Linux and a parent-pid check
  everywhere, so ``kill -9`` of the CLI leaves nothing behind;
* a second signal to the parent (``KeyboardInterrupt`` in its wait) kills every worker.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from compatfuzz.errors import InvalidArgument
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
from compatfuzz.roundtrip._model import API
from compatfuzz.roundtrip._suite import Suite

__all__ = ["run_pool"]

FailureCallback = Callable[[Counterexample], None]
#: At most this many extra seconds (at least 1, at most the deadline itself) a worker gets
#: to answer the deadline before its parent kills it.
_GRACE = 5.0

_WORKER: dict[str, Any] = {}


def _die_with_parent(parent: int) -> None:
    """End this worker when its parent goes, even by SIGKILL (issue 11)."""
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


def _init_worker(sources: Sequence[str], database_spec: Any, stop: Any) -> None:
    # Ctrl-C reaches the whole process group: the parent decides and tells workers via
    # ``stop``.  SIGTERM gets its default back (a forked worker inherits the CLI's
    # handler) so the parent can always end a worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "apis" not in _WORKER:  # spawn: nothing inherited, reload the configs
        from compatfuzz.roundtrip._config import load_config

        _WORKER["apis"] = {a.name: a for src in sources for a in load_config(src)}
    _WORKER.pop("notice", None)
    if isinstance(database_spec, str) or database_spec is None:
        from compatfuzz.roundtrip._database import database_label, open_database

        try:
            _WORKER["database"] = (open_database(database_spec)
                                   if database_spec is not None else None)
        except InvalidArgument as exc:
            if not (database_spec or "").startswith(("redis://", "rediss://", "unix://")):
                raise
            # the shared database went away mid-run (it answered when the run began)
            _WORKER["database"] = open_database("")
            _WORKER["notice"] = Notice(
                f"the example database {database_spec} stopped answering ({exc}); the run "
                f"goes on with the local database {database_label('')}, so failures found "
                "from now on are kept there, not shared", database=database_label(""))
    else:
        _WORKER["database"] = database_spec
    _WORKER["stop"] = stop


def _worker_main(job: dict[str, Any], conn: Any, heartbeat: Any, counter: Any = None) -> None:
    """A worker process: run one unit, send ``("failure", cx)`` updates, a possible
    ``("notice", Notice)``, then ``("result", UnitResult)``.

    ``job`` holds ``parent`` (pid), ``sources`` (configs to reload under spawn),
    ``database`` (spec or object), ``stop``, ``unit`` and ``options`` for ``run_unit``.
    """
    from compatfuzz.roundtrip._runner import notice_of, run_unit  # it imports this module

    _die_with_parent(job["parent"])
    unit: Unit = job["unit"]
    options: dict[str, Any] = job["options"]
    try:
        _init_worker(job["sources"], job["database"], job["stop"])
        result = run_unit(_WORKER["apis"][unit.api], unit, database=_WORKER["database"],
                          stop=_WORKER["stop"], heartbeat=heartbeat, counter=counter,
                          on_failure=lambda cx: conn.send(("failure", cx)), **options)
    except BaseException as exc:  # never leave the parent without an answer
        result = UnitResult(unit, Status.ERROR, 0, 0.0, options.get("seed"), None,
                            f"{type(exc).__name__}: {exc}")
    notice = notice_of(_WORKER.get("database")) or _WORKER.get("notice")
    with contextlib.suppress(OSError):
        if notice is not None:
            conn.send(("notice", notice))
        conn.send(("result", result))
        conn.close()


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

    def dead_result(self) -> UnitResult:
        """The result of a worker that ended without sending one."""
        code = self.process.exitcode
        if self.killed_for is not None:
            how = self.killed_for
        elif code is not None and code < 0:
            how = (f"was killed by {signal.Signals(-code).name} (a crash, or the OOM "
                   "killer)")
        else:
            how = f"exited with status {code} (a converter called os._exit, or crashed)"
        message = (f"the worker process running this unit {how} before the unit ended; "
                   "the run went on without it")
        cx = self.failure
        if cx is not None:
            message += "; the counterexample is the last one it reported (not minimal)"
        return UnitResult(self.unit, Status.FAILED, 0, time.monotonic() - self.started,
                          None if cx is None else cx.seed, cx, message)


def run_pool(api_list: list[API | Suite], selected: list[tuple[API | Suite, Unit]], *,
             workers: int, database: Any, db_obj: Any, stop: threading.Event, options: Any,
             results: list[UnitResult], on_failure: FailureCallback | None,
             deadline: float | None, live: Any = None,
             spent: Any = None) -> Iterator[Event]:
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
    spec = database if isinstance(database, str) or database is None else db_obj
    parent = os.getpid()
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
                    "parent": parent, "sources": sources, "database": spec,
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
                grace = None if deadline is None else min(_GRACE, max(1.0, deadline))
                if (w.result is None and deadline is not None and grace is not None
                        and w.heartbeat.value and now - w.heartbeat.value > deadline + grace):
                    w.killed_for = (f"was killed: an example ran for more than "
                                    f"{deadline + grace:g}s without answering the "
                                    f"{deadline:g}s per-example deadline (code that never "
                                    "returns to Python)")
                    w.stop()
                if w.result is None and w.process.is_alive():
                    continue
                if w.result is None:
                    w.process.join(1.0)
                    w.drain(on_failure)  # a result may have raced the exit
                del running[unit]
                result = w.result if w.result is not None else w.dead_result()
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
