"""A unit as an ordinary Hypothesis ``@given`` test (:func:`build_test`), shared by the CLI
runner, the pytest plugin and users; ``test.hypothesis.fuzz_one_input`` works for
external fuzzers (STYLE.md 19). :class:`Recorder` watches a run: examples, the failure,
the stop request and the time budget."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from compatfuzz.errors import ExampleRejected
from compatfuzz.roundtrip._check._model import API
from compatfuzz.roundtrip._check._properties import check, strategy_for
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._events import Unit


class Recorder:
    """Watches a property test run: counts examples, keeps the latest failure.

    Hypothesis replays the minimal failing example last, so after a failed run
    ``failure`` holds the shrunk counterexample; after an interruption it holds the
    best one found so far.  ``stop`` (a ``threading.Event``-like object) and
    ``deadline`` (a ``time.monotonic()`` value) end the run early by raising
    ``KeyboardInterrupt``, which Hypothesis lets through without treating it as a bug.
    """

    def __init__(self, stop: Any = None, deadline: float | None = None,
                 coverage: Any = None) -> None:
        self.calls = 0
        #: ``calls`` when the first failure was seen: the examples drawn; the calls after
        #: it are Hypothesis shrinking (and replaying) that failure
        self.first_failure: int | None = None
        self.failure: tuple[Any, BaseException] | None = None
        self.output = ""  # stdout/stderr of the converters on the failing example
        self.stop = stop
        self.deadline = deadline
        self.coverage = coverage  # a compatfuzz.strategies Coverage, or None
        #: accept entry index -> examples in which it accepted a difference
        self.accepted: dict[int, int] = {}
        self._lock = threading.Lock()

    def before(self, obj: Any) -> None:
        with self._lock:
            self.calls += 1
        if self.coverage is not None:
            from hypothesis import event

            for name in sorted(self.coverage.observe(obj)):
                event(f"edge {name}")
        if self.stop is not None and self.stop.is_set():
            raise KeyboardInterrupt("compatfuzz: stop requested")
        # Out of time ends the search, never a shrink in progress (it would lose minimality).
        # At least one example: a unit reported as run has checked something.
        if (self.deadline is not None and self.failure is None and self.calls > 1
                and time.monotonic() > self.deadline):
            raise _OutOfTime

    def failed(self, obj: Any, exc: BaseException, output: str = "") -> None:
        """``obj`` failed with ``exc``; ``output`` is what the converters printed on it."""
        if self.first_failure is None:
            self.first_failure = self.calls
        self.failure = (obj, exc)
        self.output = output


class _OutOfTime(KeyboardInterrupt):
    """Ends a time-boxed run; a KeyboardInterrupt so Hypothesis does not count it a bug."""


def build_test(
    api: API | Suite,
    unit: Unit,
    *,
    settings: Any = None,
    recorder: Recorder | None = None,
    seed: int | None = None,
) -> Callable[[], None]:
    """Return ``unit``'s property as an ordinary Hypothesis test (call it to run it).

    ``settings`` is a ``hypothesis.settings`` object (the ``default`` profile if omitted).
    Its example database is namespaced by the unit id, so every unit keeps its own failing
    examples even though all units share one test function's source.  ``seed`` fixes
    the examples generated, and, unlike ``@seed`` applied over the result (which sets
    ``database=None``, ``hypothesis/core.py::seed``), keeps reading and writing the
    database: ``@seed`` goes under ``@settings``, whose database then stands.

    Example::

        test = build_test(api, units(api)[0])
        test()                               # raises NotEquivalent on a counterexample
        test.hypothesis.fuzz_one_input(b"...")

    .. versionadded:: 0.1
    """
    from hypothesis import given, reject
    from hypothesis import settings as hsettings

    from compatfuzz.roundtrip._check._usercode import Capture
    from compatfuzz.roundtrip._engine._database import namespaced
    from compatfuzz.roundtrip._engine._profiles import get_profile

    base = settings if settings is not None else get_profile("default")
    db = base.database
    test_settings = hsettings(base, database=namespaced(db, unit.id) if db else None)
    if isinstance(api, Suite):
        strategy = api.strategy(unit)
    else:
        strategy = strategy_for(api, api.kind(unit.kind), unit.versions[0])

    def compatfuzz_property(obj: Any) -> None:
        if recorder is None:
            check(api, unit, obj)
            return
        recorder.before(obj)
        # each example's output is kept with its failure, not printed
        capture = Capture()
        used: set[int] = set()
        try:
            with capture:
                check(api, unit, obj, accepted=used)
        except ExampleRejected:
            reject()  # not the code's fault, nor a pass: Hypothesis draws another
        except Exception as exc:
            recorder.failed(obj, exc, capture.text)
            raise
        finally:
            for index in used:
                recorder.accepted[index] = recorder.accepted.get(index, 0) + 1

    compatfuzz_property.__qualname__ = compatfuzz_property.__name__ = re.sub(
        r"\W+", "_", unit.id.replace("->", "_to_")
    ).strip("_")
    given_test = given(obj=strategy)(compatfuzz_property)
    if seed is not None:
        from hypothesis import seed as hseed

        given_test = hseed(seed)(given_test)
    test: Callable[[], None] = test_settings(given_test)
    return test


def iter_failures(exc: BaseException) -> Iterator[BaseException]:
    """Yield the leaf exceptions of a (possibly grouped) failure."""
    subs = getattr(exc, "exceptions", None)
    if isinstance(subs, tuple):  # an ExceptionGroup, also on 3.10's backport
        for sub in subs:
            yield from iter_failures(sub)
    else:
        yield exc


