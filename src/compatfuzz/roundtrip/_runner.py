"""The round-trip engine: run every unit's property and yield events.

``run()`` is a generator of :mod:`~compatfuzz.roundtrip._events` events and never prints
(STYLE.md 20).  Units run one after another in this process, or in ``workers`` processes
(``multiprocessing``, one unit per task) that share one example database, so a failure one
worker finds is replayed first by every later run.

Stopping: set the ``stop`` event (the CLI does so on SIGINT/SIGTERM) or interrupt the
process.  Each running unit then ends at its next example and reports what it has,
including a not-yet-shrunk counterexample (Hypothesis has already saved it to the
database), and the run ends with ``StopReason.INTERRUPTED``.  Time budgets
(``duration``) work the same way, per unit, but never cut a shrink short.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent
from compatfuzz.roundtrip._events import (
    Counterexample,
    Event,
    Property,
    RunFinished,
    RunStarted,
    Status,
    StopReason,
    Unit,
    UnitFinished,
    UnitResult,
    UnitStarted,
)
from compatfuzz.roundtrip._model import API, json_copy
from compatfuzz.roundtrip._properties import (
    Recorder,
    _OutOfTime,
    build_test,
    diff_to_json,
    iter_failures,
    units,
)

__all__ = ["run", "run_unit", "unit_seed"]

_UNBOUNDED = 1_000_000_000


def unit_seed(run_seed: int, unit: Unit) -> int:
    """The seed a unit runs with: derived from the run's seed and the unit id, so
    ``--seed S`` replays every unit, and units do not all explore the same choices."""
    digest = hashlib.sha256(f"{run_seed}:{unit.id}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _reproduce_note(exc: BaseException) -> str:
    for leaf in (exc, *iter_failures(exc)):
        for note in getattr(leaf, "__notes__", ()) or ():
            if "@reproduce_failure(" in note:
                line = note[note.index("@reproduce_failure("):].split("\n")[0]
                return str(line.split(" as a decorator")[0].rstrip(". "))
    return ""


def run_unit(
    api: API,
    unit: Unit,
    *,
    profile: str = "default",
    max_examples: int | None = None,
    seed: int | None = None,
    database: Any = None,
    stop: Any = None,
    budget: float | None = None,
) -> UnitResult:
    """Run one unit to completion (or to ``budget`` seconds, or until ``stop`` is set).

    ``database`` is a Hypothesis ``ExampleDatabase`` or ``None`` for none.
    """
    from hypothesis import Verbosity, settings
    from hypothesis import seed as hseed

    from compatfuzz.roundtrip._profiles import get_profile
    from compatfuzz.strategies import Coverage

    kind = api.kind(unit.kind)
    recorder = Recorder(stop=stop, coverage=Coverage(kind.schema(unit.versions[0])))
    base = get_profile(profile)
    overrides: dict[str, Any] = {"database": database, "verbosity": Verbosity.quiet,
                                 "print_blob": True}
    if max_examples is not None:
        overrides["max_examples"] = max_examples
    elif budget is not None:
        overrides["max_examples"] = _UNBOUNDED
    if seed is not None:
        overrides["derandomize"] = False
    test = build_test(api, unit, settings=settings(base, **overrides), recorder=recorder)
    if seed is not None:
        test = hseed(seed)(test)
    start = time.monotonic()
    if budget is not None:
        recorder.deadline = start + budget
    status, message = Status.PASSED, ""
    caught: BaseException | None = None
    try:
        test()
    except _OutOfTime:
        status = Status.PASSED
        message = f"time budget of {budget:.0f}s used"
    except KeyboardInterrupt:
        status, message = Status.INTERRUPTED, "interrupted"
    except Exception as exc:
        caught = exc
        leaves = list(iter_failures(exc))
        first = recorder.failure[1] if recorder.failure else leaves[0]
        if recorder.failure is not None and isinstance(first, (NotEquivalent,
                                                               ConverterError,
                                                               AssertionError)):
            status = Status.FAILED
        else:
            status = Status.ERROR
        message = f"{type(first).__name__}: {first}"
    seconds = time.monotonic() - start
    counterexample = None
    if recorder.failure is not None and status is not Status.PASSED:
        obj, failure = recorder.failure
        counterexample = Counterexample(
            unit=unit,
            object=json_copy(obj),
            error=str(failure),
            error_type=type(failure).__name__,
            diff=diff_to_json(getattr(failure, "diff", None)),
            seed=seed,
            reproduce=_reproduce_note(caught) if caught is not None else "",
            shrunk=caught is not None,
            config=api.source,
        )
        if status is Status.INTERRUPTED:
            status = Status.FAILED
            message = "interrupted while shrinking; counterexample not minimal"
    coverage = recorder.coverage.to_json() if recorder.coverage.examples else None
    return UnitResult(unit, status, recorder.calls, seconds, seed, counterexample, message,
                      coverage)


# -- worker processes ---------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(sources: Sequence[str], database_spec: Any, stop: Any) -> None:
    # Ctrl-C reaches the whole process group: the parent decides and tells workers via
    # ``stop``.  SIGTERM gets its default back (a forked worker inherits the CLI's
    # handler) so Pool.terminate() still works.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "apis" not in _WORKER:  # spawn: nothing inherited, reload the configs
        from compatfuzz.roundtrip._config import load_config

        _WORKER["apis"] = {a.name: a for src in sources for a in load_config(src)}
    if isinstance(database_spec, str) or database_spec is None:
        from compatfuzz.roundtrip._database import open_database

        _WORKER["database"] = (open_database(database_spec) if database_spec is not None
                               else None)
    else:
        _WORKER["database"] = database_spec
    _WORKER["stop"] = stop


def _worker_run(unit: Unit, options: dict[str, Any]) -> UnitResult:
    api = _WORKER["apis"][unit.api]
    try:
        return run_unit(api, unit, database=_WORKER["database"], stop=_WORKER["stop"],
                        **options)
    except Exception as exc:  # never lose the pool to one unit
        return UnitResult(unit, Status.ERROR, 0, 0.0, options.get("seed"), None,
                          f"{type(exc).__name__}: {exc}")


def _select(apis: Sequence[API], properties: Iterable[Property | str] | None,
            only: Iterable[str] | None) -> list[tuple[API, Unit]]:
    selected = [(api, unit) for api in apis for unit in units(api, properties)]
    if only is not None:
        wanted = set(only)
        selected = [(a, u) for a, u in selected if u.id in wanted]
    return selected


def run(
    apis: API | Sequence[API],
    *,
    profile: str = "default",
    max_examples: int | None = None,
    duration: float | None = None,
    seed: int | None = None,
    workers: int = 1,
    database: Any = "",
    properties: Iterable[Property | str] | None = None,
    only: Iterable[str] | None = None,
    stop: threading.Event | None = None,
) -> Iterator[Event]:
    """Run every property for every version pair of ``apis``; yield events as they happen.

    ``max_examples`` overrides the profile's; ``duration`` (seconds) instead shares a time
    budget between the units.  ``seed`` makes the run an exact replay; like Hypothesis's
    ``@seed`` it then bypasses the example database, so leave it unset for nightly runs
    (where failures are shared through the database instead).  ``database`` is a path,
    a ``redis://`` URL, ``":memory:"``, ``"none"``, or an ``ExampleDatabase``; the
    default ``""`` means ``.hypothesis/examples``.
    ``properties`` and ``only`` (unit ids) narrow the run.  ``stop`` ends it early.

    Example::

        for event in run(api, max_examples=200):
            if isinstance(event, UnitFinished):
                print(event.result.unit.id, event.result.status)

    Raises:
        InvalidArgument: bad ``workers``, ``max_examples`` or ``duration``.

    .. versionadded:: 0.1
    """
    from compatfuzz.roundtrip._database import database_label, open_database
    from compatfuzz.roundtrip._profiles import profile_name

    profile_name(profile)
    api_list = [apis] if isinstance(apis, API) else list(apis)
    if not isinstance(workers, int) or workers < 1:
        raise InvalidArgument(f"Expected workers >= 1 but got workers={workers!r}")
    if max_examples is not None and (not isinstance(max_examples, int) or max_examples < 1):
        raise InvalidArgument(
            f"Expected max_examples >= 1 but got max_examples={max_examples!r}"
        )
    if duration is not None and duration <= 0:
        raise InvalidArgument(f"Expected a positive duration but got duration={duration!r}")
    if max_examples is not None and duration is not None:
        raise InvalidArgument("pass max_examples or duration, not both")
    run_seed = seed
    selected = _select(api_list, properties, only)
    if isinstance(database, str):
        db_obj, db_label = open_database(database), database_label(database)
    elif database is None:
        db_obj, db_label = None, "none"
    else:
        db_obj, db_label = database, repr(database)
    started = time.monotonic()
    yield RunStarted(tuple(u for _, u in selected), run_seed, profile, max_examples,
                     duration, workers, db_label)
    stop = stop if stop is not None else threading.Event()
    results: list[UnitResult] = []

    def options(unit: Unit, remaining_units: int) -> dict[str, Any]:
        budget = None
        if duration is not None:
            left = duration - (time.monotonic() - started)
            budget = max(0.5, left * workers / max(1, remaining_units))
        return {"profile": profile, "max_examples": max_examples,
                "seed": None if run_seed is None else unit_seed(run_seed, unit),
                "budget": budget}

    if workers == 1:
        queue = deque(selected)
        while queue and not stop.is_set():
            api, unit = queue.popleft()
            yield UnitStarted(unit)
            try:
                result = run_unit(api, unit, database=db_obj, stop=stop,
                                  **options(unit, len(queue) + 1))
            except KeyboardInterrupt:  # pragma: no cover - outside the test body
                stop.set()
                result = UnitResult(unit, Status.INTERRUPTED, 0, 0.0, None, None,
                                    "interrupted")
            results.append(result)
            yield UnitFinished(result)
            if result.status is Status.INTERRUPTED:
                stop.set()
    else:
        yield from _run_pool(api_list, selected, workers=workers, database=database,
                             db_obj=db_obj, stop=stop, options=options, results=results)
    reason = StopReason.INTERRUPTED if stop.is_set() else StopReason.COMPLETED
    if reason is StopReason.COMPLETED and duration is not None:
        reason = StopReason.DURATION
    yield RunFinished(reason, tuple(results), time.monotonic() - started)


def _run_pool(api_list: list[API], selected: list[tuple[API, Unit]], *, workers: int,
              database: Any, db_obj: Any, stop: threading.Event, options: Any,
              results: list[UnitResult]) -> Iterator[Event]:
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
    pool = ctx.Pool(workers, initializer=_init_worker, initargs=(sources, spec, mp_stop))
    try:
        queue = deque(selected)
        inflight: dict[Unit, Any] = {}
        while queue or inflight:
            if stop.is_set():
                mp_stop.set()
            while queue and len(inflight) < workers and not mp_stop.is_set():
                _, unit = queue.popleft()
                yield UnitStarted(unit)
                inflight[unit] = pool.apply_async(
                    _worker_run, (unit, options(unit, len(queue) + len(inflight) + 1))
                )
            if mp_stop.is_set() and not inflight:
                break
            try:
                done = [u for u, r in inflight.items() if r.ready()]
                if not done:
                    time.sleep(0.02)
                    continue
            except KeyboardInterrupt:
                stop.set()
                mp_stop.set()
                continue
            for unit in done:
                try:
                    result = inflight.pop(unit).get()
                except Exception as exc:
                    result = UnitResult(unit, Status.ERROR, 0, 0.0, None, None,
                                        f"{type(exc).__name__}: {exc}")
                results.append(result)
                if result.status is Status.INTERRUPTED:
                    stop.set()
                yield UnitFinished(result)
    finally:
        pool.terminate()
        pool.join()
        _WORKER.pop("apis", None)
