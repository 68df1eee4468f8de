"""The witness search's budget: a diff ends in bounded time and says what it left unproved.

Why: on CRDs with many CEL ``x-kubernetes-validations`` rules, values drawn at random
rarely satisfy the rules, so Hypothesis filtered nearly every example away and a single
finding's search ran for minutes (a queue CRD's diff took 14 minutes, silently). A
witness is evidence for a static finding, not the finding itself: when its search runs
out of time or examples the finding is still reported, with its static verdict, as
*unwitnessed* (:attr:`~compatfuzz.compat.Status.UNWITNESSED`), and the rest of the run goes
on.

The budget is CPU time (``time.process_time``), so a busy CI machine reaches the same
verdicts as an idle laptop; the run's share (``witness_seconds``) bounds every search of a
``check`` together, each finding (and each side of the whole-schema search) may spend
``finding_seconds`` of it, and ``witness_examples`` bounds the examples drawn in the run.

Hypothesis's ``find`` has no time limit, and a search that draws no valid value never
calls its predicate, so the clock is read in a guard drawn *before* each example
(:func:`timed_find`). When the time is up the guard raises :class:`OutOfBudget`, a
``KeyboardInterrupt`` because that is the one exception Hypothesis's engine passes
through a draw without calling the strategy flaky (``ConjectureRunner.test_function``);
it never leaves this package. A value that already satisfied the predicate is kept (then
it is a witness, only less shrunk).

Hypothesis's one-time set-up (its Unicode tables, the constants it harvests from local
sources) cut the first pattern search of a run short in a fresh checkout (a CI job) and
nowhere else: the engine pays it first (``strategies._warm.warm_up``), so the budget is
the search's alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from compatfuzz.errors import InvalidArgument

__all__ = ["OUT_OF_BUDGET", "Clock", "OutOfBudget", "WitnessBudget", "check_budget",
           "current", "note_for", "timed_find"]

T = TypeVar("T")

#: how a note or message about a search cut short begins
OUT_OF_BUDGET = "witness search ran out of budget"


class OutOfBudget(KeyboardInterrupt):
    """The running search spent its budget (see the module docstring for the base class)."""


@dataclass(frozen=True)
class WitnessBudget:
    """How much witness searching one ``check`` may do; ``None`` is no limit.

    ``seconds``: CPU seconds for every search of the run together. ``finding_seconds``:
    CPU seconds for one finding's search (all its sides) or one side of the whole-schema
    search. ``examples``: examples drawn in the whole run (valid or not).
    """

    seconds: float | None = 8.0
    finding_seconds: float | None = 3.0
    examples: int | None = None

    def __post_init__(self) -> None:
        for name, value, fix in (
                ("witness_seconds", self.seconds, "e.g. 30 for 30 CPU seconds per run"),
                ("finding_seconds", self.finding_seconds, "e.g. 5 for 5 CPU seconds each"),
                ("witness_examples", self.examples, "e.g. 20000")):
            kind = "int" if name == "witness_examples" else "number"
            ok = value is None or (
                isinstance(value, int | float) and not isinstance(value, bool)
                and 0 <= value < float("inf"))
            if name == "witness_examples" and ok and value is not None:
                ok = isinstance(value, int)
            if not ok:
                raise InvalidArgument(
                    f"Expected a non-negative {kind} or None but got {name}={value!r} "
                    f"(type={type(value).__name__}); {fix}, or None for no limit")

    def describe(self) -> str:
        """The limits in words: ``8 s per run, 2 s per finding``."""
        parts = []
        if self.seconds is not None:
            parts.append(f"{self.seconds:g} s per run")
        if self.finding_seconds is not None:
            parts.append(f"{self.finding_seconds:g} s per finding")
        if self.examples is not None:
            parts.append(f"{self.examples} examples per run")
        return ", ".join(parts) or "no limit"


_CLOCK: ContextVar[Clock | None] = ContextVar("compatfuzz_witness_clock", default=None)


class Clock:
    """Spends one run's :class:`WitnessBudget`: CPU seconds and examples so far, and the
    deadline of the search running now. Read by the CLI's progress line (``seconds``,
    ``examples``) from another thread: plain numbers, written by the search only."""

    def __init__(self, budget: WitnessBudget, now: Callable[[], float] = time.process_time
                 ) -> None:
        self.budget = budget
        self.now = now
        self.spent = 0.0  # CPU seconds of finished searches
        self.examples = 0  # examples drawn in the run
        self.cut = 0  # searches cut short
        self._started: float | None = None
        self._deadline: float | None = None
        self._why = ""

    @property
    def seconds(self) -> float:
        """CPU seconds searched so far, the running search included."""
        started = self._started  # read once: the search may end meanwhile
        running = self.now() - started if started is not None else 0.0
        return self.spent + running

    @contextmanager
    def search(self) -> Iterator[None]:
        """Run one finding's search (or one whole-schema side) against this clock: its
        draws are guarded (:func:`timed_find`) until the share or the run is spent."""
        b = self.budget
        start = self.now()
        limits: list[tuple[float, str]] = []
        if b.seconds is not None:
            limits.append((start + b.seconds - self.spent, f"{b.seconds:g} s per run"))
        if b.finding_seconds is not None:
            limits.append((start + b.finding_seconds, f"{b.finding_seconds:g} s per finding"))
        deadline, why = min(limits, default=(None, ""))
        self._started, self._deadline, self._why = start, deadline, why
        token = _CLOCK.set(self)
        try:
            yield
        finally:
            _CLOCK.reset(token)
            self.spent += self.now() - start
            self._started = self._deadline = None

    def check(self) -> None:
        """Raise :class:`OutOfBudget` when the running search has spent its share."""
        limit = self.budget.examples
        if limit is not None and self.examples >= limit:
            raise OutOfBudget(f"{limit} examples per run")
        if self._deadline is not None and self.now() >= self._deadline:
            raise OutOfBudget(self._why)

    def draw(self) -> None:
        """Count one example about to be drawn, after checking there is budget for it."""
        self.check()
        self.examples += 1

    def note(self, exc: OutOfBudget) -> str:
        """The note a search cut short by ``exc`` leaves: what ran out, and the option."""
        self.cut += 1
        what = str(exc) or self.budget.describe()
        option = ("--witness-examples" if "examples" in what else
                  "--witness-budget" if "per run" in what else "--finding-budget")
        return f"{OUT_OF_BUDGET} ({what}; {option} raises it)"


def current() -> Clock | None:
    """The clock of the search running in this context, if any."""
    return _CLOCK.get()


def note_for(exc: OutOfBudget) -> str:
    """The note of a search cut short by ``exc`` (:meth:`Clock.note` of the running one)."""
    clock = _CLOCK.get()
    return clock.note(exc) if clock is not None else f"{OUT_OF_BUDGET} ({exc})"


def check_budget() -> None:
    """:meth:`Clock.check` of the running search; nothing outside a budgeted search."""
    clock = _CLOCK.get()
    if clock is not None:
        clock.check()


def timed_find(strategy: Any, condition: Callable[[Any], bool], *, settings: Any,
               random: Any, partial: bool = True) -> Any:
    """``hypothesis.find(strategy, condition, ...)`` under the running :class:`Clock`.

    Outside a budgeted search this is ``find``. Inside one, the clock is read before each
    example is drawn and before each is judged; when it has run out, the last value that
    satisfied ``condition`` is returned (a witness, shrunk as far as the time allowed), or
    :class:`OutOfBudget` raised if there is none (or ``partial`` is false: a value that
    is cached must not depend on the time it was given).
    """
    from hypothesis import find
    from hypothesis import strategies as st

    clock = _CLOCK.get()
    if clock is None:
        return find(strategy, condition, settings=settings, random=random)
    clock.check()
    last: list[Any] = []

    def guard(_: Any) -> None:
        clock.draw()

    def judged(value: Any) -> bool:
        clock.check()
        ok = condition(value)
        if ok:
            last[:] = [value]
        return ok

    guarded = st.tuples(st.none().map(guard), strategy).map(_second)
    try:
        return find(guarded, judged, settings=settings, random=random)
    except OutOfBudget:
        if last and partial:
            return last[0]
        raise


def _second(pair: tuple[Any, T]) -> T:
    return pair[1]
