"""Which of a bundle's migrations ran, where, and how often: a migration no example reached
is code the run did not test (its route had no unit, or no drawn body took the branch that
calls it).

Each migration's function (``instruction.transformer`` of the ``VersionChange``'s
``alter_{request,response}_by_{schema,path}_instructions``, Cadwyn 8.2 and 9.0's
``cadwyn/structure/data.py``) is wrapped once with a counter, so a call counts whoever
makes it: Cadwyn inside the app (the route properties) or compatfuzz's own stepping
(``CadwynAPI.request_up``/``response_down``). ``where`` is set by the caller before it
sends a request or steps a body: one example runs at a time in a process.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Iterator
from typing import Any

#: the instruction tables of a ``VersionChange`` that hold migrations
_TABLES = ("alter_request_by_schema_instructions", "alter_response_by_schema_instructions",
           "alter_request_by_path_instructions", "alter_response_by_path_instructions")
_MARK = "__compatfuzz_migration__"


class Tally:
    """The calls of one bundle's migrations, by ``(migration, where)``."""

    def __init__(self) -> None:
        self.where = ""
        self.calls: Counter[tuple[str, str]] = Counter()
        self.known: dict[str, None] = {}
        #: compatfuzz re-running migrations for a failure's blame: not the run's calls
        self.paused = False
        #: the migrations of the request in flight, in order, with what each did to its
        #: header, query and cookie parameters (set to a list by the app's client)
        self.steps: list[tuple[str, list[str]]] | None = None

    @contextlib.contextmanager
    def pause(self) -> Iterator[None]:
        """Calls made inside are not counted (a failure's blame steps the migrations)."""
        before, self.paused = self.paused, True
        try:
            yield
        finally:
            self.paused = before

    def take(self) -> tuple[tuple[str, str, int], ...]:
        """The calls since the last :meth:`take`, then forget them."""
        out = tuple((m, w, n) for (m, w), n in sorted(self.calls.items()))
        self.calls.clear()
        return out


def _instructions(bundle: Any) -> Iterator[tuple[str, Any, Any]]:
    """``(version, VersionChange, instruction)`` for every migration of ``bundle``."""
    for version in bundle.versions:
        for change in version.changes:
            for table in _TABLES:
                for instructions in (getattr(change, table, None) or {}).values():
                    for instruction in instructions:
                        yield str(version.value), change, instruction


def _params(payload: Any) -> dict[str, dict[str, Any]]:
    """A copy of a ``RequestInfo``'s header, query and cookie parameters (none for a
    ``ResponseInfo``, whose headers are the response's)."""
    out: dict[str, dict[str, Any]] = {}
    for where, attr in (("header", "headers"), ("query", "query_params"),
                        ("cookie", "cookies")):
        if not hasattr(payload, "query_params"):
            break
        with contextlib.suppress(Exception):  # a payload of another shape: nothing to show
            out[where] = dict(getattr(payload, attr).items())
    return out


def _changed(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """What a migration did to the parameters: ``header x-priority '5' -> '10'``."""
    lines = []
    for where, old in before.items():
        new = after.get(where, {})
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                was = repr(old[key]) if key in old else "absent"
                now = repr(new[key]) if key in new else "absent"
                lines.append(f"{where} {key} {was} -> {now}")
    return lines


def label(version: str, change: Any, fn: Any) -> str:
    """``Change.function (version V)``, as a failure's blame names a migration."""
    return f"{change.__name__}.{getattr(fn, '__name__', '?')} (version {version})"


def instrument(bundle: Any) -> Tally:
    """Count every migration call of ``bundle`` from now on (its functions wrapped once;
    a bundle instrumented again shares the first tally)."""
    tally: Tally | None = getattr(bundle, _MARK, None)
    if tally is not None:
        return tally
    tally = Tally()
    for version, change, instruction in _instructions(bundle):
        fn = getattr(instruction, "transformer", None)
        if fn is None:
            continue
        name = label(version, change, fn)
        tally.known.setdefault(name)
        if getattr(fn, _MARK, False):
            continue

        def counted(payload: Any, _fn: Any = fn, _name: str = name) -> Any:
            if tally.paused:
                return _fn(payload)
            tally.calls[(_name, tally.where or "?")] += 1
            if tally.steps is None:
                return _fn(payload)
            before = _params(payload)
            try:
                return _fn(payload)
            finally:
                tally.steps.append((_name, _changed(before, _params(payload))))

        functools.update_wrapper(counted, fn)
        setattr(counted, _MARK, True)
        try:
            instruction.transformer = counted
        except (AttributeError, TypeError):  # a frozen instruction: left uncounted
            continue
    with contextlib.suppress(AttributeError, TypeError):
        setattr(bundle, _MARK, tally)
    return tally
