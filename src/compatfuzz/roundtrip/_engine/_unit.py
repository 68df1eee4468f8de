"""One unit run to its verdict: its Hypothesis test run, watched for failures, time and stop
requests, its counterexample shrunk and told (the runner and each worker process call it)."""

from __future__ import annotations

import contextlib
import time
import unittest
from collections.abc import Callable
from typing import Any

from compatfuzz.errors import ConverterError, NotEquivalent
from compatfuzz.roundtrip._check._model import API
from compatfuzz.roundtrip._check._properties import example_to_json
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._check._usercode import find_user_traceback, safe_str
from compatfuzz.roundtrip._check._verdict import diff_to_json
from compatfuzz.roundtrip._deadline import Alarm, ExampleDeadline, run_armed
from compatfuzz.roundtrip._engine._given import Recorder, _OutOfTime, build_test, iter_failures
from compatfuzz.roundtrip._events import (
    Counterexample,
    Notice,
    Status,
    Unit,
    UnitResult,
)
from compatfuzz.schema._limits import check_generation_limits
from compatfuzz.strategies._cel import check_rules

_UNBOUNDED = 1_000_000_000


#: Seconds one example (generating and checking it) may take before its unit fails.
DEFAULT_EXAMPLE_DEADLINE = 10.0


#: At most one "still failing, shrinking" update per this many seconds.
_FAILURE_UPDATE_INTERVAL = 2.0


FailureCallback = Callable[[Counterexample], None]


def _reproduce_note(exc: BaseException) -> str:
    for leaf in (exc, *iter_failures(exc)):
        for note in getattr(leaf, "__notes__", ()) or ():
            if "@reproduce_failure(" in note:
                line = note[note.index("@reproduce_failure("):].split("\n")[0]
                return str(line.split(" as a decorator")[0].rstrip(". "))
    return ""


class _Watch(Recorder):
    """The runner's recorder: also arms the example deadline, remembers the example in
    flight, publishes the first failure at once, and stops a unit whose converter cannot
    be reached (a setup error: every further example would only fail the same way)."""

    def __init__(self, *, unit: Unit, api: API | Suite, seed: int | None, coverage: Any,
                 stop: Any, alarm: Alarm, on_failure: FailureCallback | None,
                 heartbeat: Any, counter: Any = None) -> None:
        super().__init__(stop=stop, coverage=coverage)
        self.counter = counter
        self.unit = unit
        self.api = api
        self.seed = seed
        self.alarm = alarm
        self.on_failure = on_failure
        self.heartbeat = heartbeat
        self.current: Any = None
        self.setup_error: BaseException | None = None
        self._published = 0.0
        #: when the first example came to be checked (``None``: none yet)
        self.first_at: float | None = None

    def before(self, obj: Any) -> None:
        # first: it raises the last example's deadline if that fired unseen, and
        # ``current`` must still be the example that outlived it
        self.alarm.arm()
        self.current = obj
        if self.first_at is None:
            self.first_at = time.monotonic()
        if self.heartbeat is not None:
            self.heartbeat.value = time.monotonic()
        if self.counter is not None:
            self.counter.value += 1
        if self.setup_error is not None:
            raise _SetupFailed
        super().before(obj)

    def failed(self, obj: Any, exc: BaseException, output: str = "") -> None:
        super().failed(obj, exc, output)
        if self.setup_error is None and _setup_error(exc) is not None:
            self.setup_error = exc
            return
        now = time.monotonic()
        if self.on_failure is not None and now - self._published >= _FAILURE_UPDATE_INTERVAL:
            self._published = now
            with contextlib.suppress(Exception):  # a full disk must not end the search
                self.on_failure(self.counterexample(shrunk=False))

    def counterexample(self, *, shrunk: bool, reproduce: str = "") -> Counterexample:
        assert self.failure is not None
        obj, failure = self.failure
        try:
            shown = example_to_json(self.api, self.unit, obj)
        except Exception as exc:  # an example its own API cannot write out: say so
            shown = (f"{obj!r:.2000} (not representable as JSON: {type(exc).__name__}: "
                     f"{safe_str(exc)})")
        return Counterexample(
            unit=self.unit, object=shown, error=safe_str(failure),
            error_type=type(failure).__name__,
            diff=diff_to_json(getattr(failure, "diff", None)), seed=self.seed,
            reproduce=reproduce, shrunk=shrunk, config=self.api.source,
            traceback=find_user_traceback(failure), output=self.output,
            history=tuple(getattr(failure, "history", ())),
        )


class _SetupFailed(KeyboardInterrupt):
    """Stops a unit after a setup error (an unreachable webhook) without shrinking it."""


def _setup_error(exc: BaseException) -> BaseException | None:
    """The setup error (``setup_error = True``, e.g. ``WebhookUnavailable``) behind
    ``exc``, found through the ``ConverterError`` chain."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if getattr(node, "setup_error", False):
            return node
        node = node.__cause__ or node.__context__
    return None


def _setup_message(api: API | Suite, unit: Unit, exc: BaseException) -> str:
    """The error line of a setup failure; an unsupported pattern says where it is."""
    cause = _setup_error(exc) or exc
    message = f"{type(cause).__name__}: {cause}"
    pattern = getattr(cause, "pattern", None)
    if isinstance(pattern, str) and isinstance(api, API):
        from compatfuzz.errors import _pointer_to_path
        from compatfuzz.schema._pattern import locate_pattern

        kind = api.kind(unit.kind)
        for version in unit.versions:
            schema = kind.schema(version)
            for where in locate_pattern(schema.root, pattern):
                message += (f"\n  at: {schema.source} "
                            f"{_pointer_to_path(schema.pointer + where)} ({version})")
    return message


def run_unit(
    api: API | Suite,
    unit: Unit,
    *,
    profile: str = "default",
    max_examples: int | None = None,
    seed: int | None = None,
    database: Any = None,
    stop: Any = None,
    budget: float | None = None,
    example_deadline: float | None = DEFAULT_EXAMPLE_DEADLINE,
    on_failure: FailureCallback | None = None,
    heartbeat: Any = None,
    counter: Any = None,
    replay_only: bool = False,
    seed_keeps_database: bool = False,
) -> UnitResult:
    """Run one unit to completion (or to ``budget`` seconds, or until ``stop`` is set).

    ``database`` is a Hypothesis ``ExampleDatabase`` or ``None`` for none.
    ``example_deadline`` (seconds, ``None`` for none) fails the unit when one example
    takes longer; ``on_failure`` receives the first failing example (unshrunk) as soon as
    it is found, then at most every 2 s while shrinking.  Never raises for what user
    code does: every exception, ``SystemExit`` included, becomes the result.

    ``replay_only`` runs the failures saved in ``database`` for this unit and nothing
    else (Hypothesis's ``explicit`` and ``reuse`` phases): how a shard replays other
    shards' failures first.  ``seed`` normally bypasses the database, as Hypothesis's
    ``@seed`` does (it sets ``database=None``, ``hypothesis/core.py::seed``);
    ``seed_keeps_database`` keeps it, for a sharded run, whose seed is always set and
    whose shards share their failures through the database.
    """
    from hypothesis import Phase, Verbosity, settings
    from hypothesis import seed as hseed

    from compatfuzz.roundtrip._engine._database import forget_failing_unit, namespaced
    from compatfuzz.roundtrip._engine._profiles import get_profile
    from compatfuzz.strategies import Coverage
    from compatfuzz.strategies._warm import warm_up

    start = time.monotonic()
    coverage = None
    try:
        if isinstance(api, Suite):
            api.preflight(unit)
        else:
            kind = api.kind(unit.kind)
            coverage = Coverage(kind.schema(unit.versions[0]))
            check_generation_limits(kind.schema(unit.versions[0]))
            for version in dict.fromkeys(unit.versions):  # the server refuses the CRD whole
                check_rules(kind.schema(version))
    except Exception as exc:
        return UnitResult(unit, Status.ERROR, 0, time.monotonic() - start, seed, None,
                          f"{type(exc).__name__}: {safe_str(exc)}")
    if isinstance(api, Suite):
        api.take_exercised()  # what earlier units ran is theirs
    warm_up()  # Hypothesis's one-time set-up is not the first example's time
    alarm = Alarm(example_deadline)
    recorder = _Watch(unit=unit, api=api, seed=seed, coverage=coverage, stop=stop,
                      alarm=alarm, on_failure=on_failure, heartbeat=heartbeat,
                      counter=counter)
    base = get_profile(profile)

    # namespaced here, not only in build_test, to ask it afterwards what it really saved
    unit_db = namespaced(database, unit.id) if database is not None else None
    overrides: dict[str, Any] = {"database": unit_db, "verbosity": Verbosity.quiet,
                                 "print_blob": True}
    if max_examples is not None:
        overrides["max_examples"] = max_examples
    elif budget is not None:
        overrides["max_examples"] = _UNBOUNDED
    if seed is not None:
        overrides["derandomize"] = False
    if replay_only:  # the saved failures only: no generation, no shrinking
        overrides["phases"] = (Phase.explicit, Phase.reuse)
    if seed is not None and seed_keeps_database:
        # under the settings, whose database then stands (a sharded run: see build_test)
        test = build_test(api, unit, settings=settings(base, **overrides), recorder=recorder,
                          seed=seed)
    else:
        test = build_test(api, unit, settings=settings(base, **overrides), recorder=recorder)
        if seed is not None:  # @seed over the settings: the database is bypassed
            test = hseed(seed)(test)
    if budget is not None:
        recorder.deadline = start + budget
    status, message = Status.PASSED, ""
    caught: BaseException | None = None
    shrunk = True
    try:
        run_armed(alarm, test, heartbeat)
    except ExampleDeadline as exc:
        where, checking = alarm.fired_at or ("", True)
        where = exc.where or where
        stuck = f" (stuck in {where})" if where else ""
        knob = "--example-deadline, or example_deadline= in Python; 'none' disables it"
        if exc.unavailable is not None:  # waiting on a webhook: a setup error
            status, message = Status.ERROR, _setup_message(api, unit, exc.unavailable)
            recorder.failure = None
        elif checking or exc.reason is not None:
            status = Status.FAILED
            message = exc.reason or (
                f"an example took longer than the {example_deadline:g}s per-example "
                f"deadline{stuck}; a converter that sleeps, loops or waits on a slow "
                f"server fails the property (raise the deadline with {knob})")
            if recorder.failure is None:
                recorder.failure = (recorder.current, TimeoutError(message))
            else:  # a shrink step hung: keep the failure found, not minimal
                message = f"shrinking stopped: {message}; counterexample not minimal"
        else:
            status = Status.ERROR
            message = (f"generating one example took longer than the {example_deadline:g}s "
                       f"per-example deadline{stuck}: code of yours run while drawing (a "
                       f"pydantic validator) sleeps, loops or waits, or the schema asks for "
                       f"very large values (minLength, minItems, minProperties) or deep "
                       f"nesting ({knob})")
        shrunk = False
    except _SetupFailed:
        assert recorder.setup_error is not None
        status, message = Status.ERROR, _setup_message(api, unit, recorder.setup_error)
        recorder.failure = None
    except _OutOfTime:
        status = Status.PASSED
        message = f"time budget of {budget:.3g}s used"
    except KeyboardInterrupt:
        status, message = Status.INTERRUPTED, "interrupted"
    except unittest.SkipTest:
        if not replay_only:
            raise
        # Hypothesis skips a test that ran no example ("told to run no test cases",
        # hypothesis/core.py): the failure listed for this unit was fixed (and deleted)
        status = Status.SKIPPED
        message = ("nothing to replay: the failure saved for this unit is no longer in "
                   "the example database (fixed, or deleted); dropped from the list of "
                   "failing units other shards replay")
        forget_failing_unit(unit_db, unit.id)
    except BaseException as exc:  # SystemExit too: nothing a unit does ends the run
        caught = exc
        leaves = list(iter_failures(exc))
        first = recorder.failure[1] if recorder.failure else leaves[0]
        if _setup_error(first) is not None:
            status, message = Status.ERROR, _setup_message(api, unit, first)
            recorder.failure = None
        else:
            if recorder.failure is not None and isinstance(first, (NotEquivalent,
                                                                   ConverterError,
                                                                   AssertionError)):
                status = Status.FAILED
            else:
                status = Status.ERROR
            message = f"{type(first).__name__}: {safe_str(first)}"
    seconds = time.monotonic() - start
    counterexample = None
    if recorder.failure is not None and status is not Status.PASSED:
        if recorder.failure[0] is None:
            recorder.failure = None  # nothing was being checked yet
        else:
            counterexample = recorder.counterexample(
                shrunk=caught is not None and shrunk,
                reproduce=_reproduce_note(caught) if caught is not None else "")
        if status is Status.INTERRUPTED:
            status = Status.FAILED
            message = "interrupted while shrinking; counterexample not minimal"
    coverage_json = (recorder.coverage.to_json()
                     if recorder.coverage is not None and recorder.coverage.examples else None)
    # what the run replayed, read before kept() reads the database back (its fetch would
    # otherwise count as a replay)
    note = getattr(unit_db, "note", None)
    replayed = note.describe() if note is not None else ""
    saved = None
    if counterexample is not None and unit_db is not None:
        try:
            saved = unit_db.kept()
        except Exception:  # a database that cannot even be read kept nothing we can use
            saved = False
    exercised = api.take_exercised() if isinstance(api, Suite) else ()
    drawn = recorder.calls
    if counterexample is not None and recorder.first_failure is not None:
        drawn = recorder.first_failure  # the rest shrank (and replayed) the failure
    setup = recorder.first_at - start if recorder.first_at is not None else 0.0
    return UnitResult(unit, status, drawn, seconds, seed, counterexample, message,
                      coverage_json, tuple(sorted(recorder.accepted.items())), saved,
                      replayed, exercised, recorder.calls - drawn, setup)


def notice_of(db: Any) -> Notice | None:
    """A ``Notice`` if ``db`` (a ``FallbackDatabase``) gave up on its shared database."""
    message = getattr(db, "notice", None)
    if not message:
        return None
    return Notice(message, database=getattr(db, "local_label", None))


