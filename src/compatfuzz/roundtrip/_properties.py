"""The round-trip properties, as plain checks and as ordinary Hypothesis ``@given`` tests.

Each property is a pure check ``check(api, unit, obj)`` that raises
:class:`~compatfuzz.errors.NotEquivalent` (with the field-path diff from
``compatfuzz.semantic``) or :class:`~compatfuzz.errors.ConverterError`.  :func:`build_test`
wraps a check in ``@given`` so that the CLI runner, the pytest plugin and users share one
implementation, and ``test.hypothesis.fuzz_one_input`` works for external fuzzers
(STYLE.md 19).  Checks are pure and copy their input before handing it to a converter:
Hypothesis re-runs them while shrinking.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from compatfuzz.errors import ExampleRejected, InvalidArgument, NotEquivalent
from compatfuzz.roundtrip._accept import (
    accepted_changes,
    accepted_errors,
    checking,
    is_accepted,
    strip_stash,
)
from compatfuzz.roundtrip._events import Property, Unit
from compatfuzz.roundtrip._model import API, Kind, json_copy
from compatfuzz.roundtrip._suite import Suite

__all__ = [
    "DEFAULT_PLAN_LIMIT",
    "Recorder",
    "Sampled",
    "build_test",
    "check",
    "diff_to_json",
    "example_from_json",
    "example_to_json",
    "is_unit",
    "iter_failures",
    "literal_diff",
    "plan",
    "plan_limit_arg",
    "render_changes",
    "strategy_for",
    "units",
]

_ORDER = list(Property)


def _property(name: Property | str) -> Property:
    try:
        return Property(name)
    except ValueError:
        import difflib

        names = [p.value for p in Property]
        close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
        mean = f" (did you mean {close[0]!r}?)" if close else ""
        raise InvalidArgument(
            f"Expected a property name but got {name!r}{mean}; the properties are: "
            f"{', '.join(names)}"
        ) from None


#: At most this many version tuples per kind and property are planned by default: all of
#: them up to it (17 versions give 272 pairs; 7 versions 210 triples), a fixed sample
#: beyond. ``path_independent`` is cubic in the versions: 200 versions are 7,880,400
#: triples, gigabytes before the first unit ran (issue 22, item 1). ``plan_limit=None``
#: (config key ``plan_limit = "none"``, ``--plan-limit none``) plans every tuple.
DEFAULT_PLAN_LIMIT = 300

_UNLIMITED = ("none", "all")


@dataclass(frozen=True)
class Sampled:
    """One (kind, property) whose version tuples were sampled: ``planned`` of ``total``."""

    api: str
    kind: str
    property: Property
    planned: int
    total: int

    def describe(self) -> str:
        """``planned 300 of 7,880,400 path_independent triples of t/Thing``."""
        what = {1: "versions", 2: "pairs", 3: "triples"}[_ARITY[Property(self.property)]]
        return (f"planned {self.planned:,} of {self.total:,} {self.property} {what} of "
                f"{self.api}/{self.kind}")

    def to_json(self) -> dict[str, Any]:
        return {"api": self.api, "kind": self.kind, "property": str(self.property),
                "planned": self.planned, "total": self.total}


_ARITY = {Property.ROUNDTRIP: 2, Property.VALID: 2, Property.NO_MUTATION: 2,
          Property.PATH_INDEPENDENT: 3, Property.DEFAULT_IDEMPOTENT: 1,
          Property.DEFAULT_COMMUTES: 2, Property.ENCODINGS: 1}


def plan_limit_arg(value: Any, what: str = "plan_limit") -> int | None:
    """``value`` as a plan limit: a positive int, or ``None`` (also ``"none"``/``"all"``)
    for no limit.

    Raises:
        InvalidArgument: anything else.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in _UNLIMITED):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(
            f"Expected a positive number of version tuples or 'none' but got {what}="
            f"{value!r}; 'none' plans every version pair and triple")
    return value


def _count(n: int, r: int, d: int) -> int:
    """Ordered r-tuples of distinct versions out of ``n``; for ``d >= 0`` only those with at
    least one of the ``d`` defaulted versions (pairs only)."""
    total = 1
    for i in range(r):
        total *= n - i
    if d >= 0:
        rest = n - d
        total -= rest * (rest - 1)
    return total


def _tuples(vs: list[str], r: int, limit: int | None, seed: str, total: int, *,
            keep: Callable[[tuple[str, ...]], object] | None = None) -> list[tuple[str, ...]]:
    """Ordered r-tuples of distinct versions: all when they are at most ``limit``, else
    ``limit`` of them, always the same ones for the same versions (``seed`` is the kind's,
    never the run's: a sampled plan is the same in every run, so test ids and the example
    database stay stable).  A sample holds the neighbours in version order both ways
    first (``v1->v2``, ``v2->v1``, ``v1,v2,v3``, ...): upgrades and downgrades people
    actually make; the rest is drawn uniformly without building the full list."""
    import random

    def ok(t: tuple[str, ...]) -> bool:
        return keep is None or bool(keep(t))

    n = len(vs)
    if limit is None or total <= limit:
        import itertools

        return [t for t in itertools.permutations(vs, r) if ok(t)]
    chosen: dict[tuple[str, ...], None] = {}
    for i in range(n - r + 1):
        for t in (tuple(vs[i:i + r]), tuple(reversed(vs[i:i + r]))):
            if len(chosen) < limit // 2 and ok(t):
                chosen[t] = None
    rng = random.Random(seed)
    while len(chosen) < limit:  # total > limit: it ends (at least 1 in n draws is kept)
        t = tuple(vs[i] for i in rng.sample(range(n), r))
        if ok(t):
            chosen[t] = None
    index = {v: i for i, v in enumerate(vs)}
    return sorted(chosen, key=lambda t: [index[v] for v in t])


def plan(api: API | Suite, properties: Iterable[Property | str] | None = None, *,
         limit: int | str | None = "api") -> tuple[list[Unit], list[Sampled]]:
    """The units of ``api`` (see :func:`units`) and which (kind, property) were sampled.

    ``limit`` caps the version tuples per kind and property (``None`` for none); the
    default ``"api"`` takes ``api.plan_limit`` (:data:`DEFAULT_PLAN_LIMIT` unless the API
    or its config says otherwise).
    """
    wanted = [_property(p) for p in properties] if properties is not None else _ORDER
    if isinstance(api, Suite):
        return api.units(wanted), []
    cap = (getattr(api, "plan_limit", DEFAULT_PLAN_LIMIT) if limit == "api"
           else plan_limit_arg(limit, "limit"))
    show_kind = len(api.kinds) > 1
    out: list[Unit] = []
    sampled: list[Sampled] = []
    for kind in api.kinds:
        vs = list(kind.versions)
        defaulted = set(api.defaulted_versions(kind))
        seed = "\0".join(["compatfuzz plan", api.name, kind.name, *vs])
        cache: dict[int, list[tuple[str, ...]]] = {}
        for prop in _ORDER:
            if prop not in wanted:
                continue
            r = _ARITY[prop]
            if prop is Property.ENCODINGS:
                combos: list[tuple[str, ...]] = []  # JSON objects have one encoding
                total = 0
            elif prop is Property.DEFAULT_IDEMPOTENT:
                combos = [(v,) for v in vs if v in defaulted]
                total = len(combos)
                if cap is not None:  # bounded like the others (found by the property test)
                    combos = combos[:cap]
            elif prop is Property.DEFAULT_COMMUTES:
                total = _count(len(vs), 2, len(defaulted))
                combos = _tuples(vs, 2, cap, f"{seed}\0defaulted", total,
                                 keep=frozenset(defaulted).intersection)
            else:
                total = _count(len(vs), r, -1)
                if r not in cache:  # roundtrip, valid and no_mutation share their pairs
                    cache[r] = _tuples(vs, r, cap, f"{seed}\0{r}", total)
                combos = cache[r]
            if len(combos) < total:
                sampled.append(Sampled(api.name, kind.name, prop, len(combos), total))
            out.extend(Unit(api.name, kind.name, prop, c, show_kind) for c in combos)
    return out, sampled


def units(api: API | Suite, properties: Iterable[Property | str] | None = None, *,
          limit: int | str | None = "api") -> list[Unit]:
    """Return the units of ``api``: one per (kind, property, version tuple).

    Pairs are ordered (``v1->v2`` and ``v2->v1`` are separate units) and listed in the
    kinds' version order, so test ids are stable between runs.  Beyond ``limit`` tuples
    per kind and property (``api.plan_limit``, 300 by default; ``None`` for none) a fixed
    sample is planned, the same in every run (:func:`plan` says which were sampled).
    """
    return plan(api, properties, limit=limit)[0]


def is_unit(api: API | Suite, unit: Unit) -> bool:
    """Whether ``unit`` is one of ``api``'s units when nothing is sampled (a replayed
    counterexample may come from a unit this run's sample left out)."""
    if isinstance(api, Suite):
        # a counterexample file records the kind, not whether the id shows it (a Suite
        # with several kinds shows it: a Cadwyn bundle with two schemas)
        return any(replace(unit, show_kind=u.show_kind) == u
                   for u in api.units([unit.property]))
    if unit.api != api.name or unit.kind not in [k.name for k in api.kinds]:
        return False
    kind = api.kind(unit.kind)
    vs = unit.versions
    if (len(vs) != _ARITY[unit.property] or len(set(vs)) != len(vs)
            or not set(vs) <= set(kind.versions) or unit.property is Property.ENCODINGS):
        return False
    defaulted = set(api.defaulted_versions(kind))
    if unit.property in (Property.DEFAULT_IDEMPOTENT, Property.DEFAULT_COMMUTES):
        return bool(defaulted & set(vs))
    return True


def strategy_for(api: API, kind: Kind, version: str) -> Any:
    """The strategy for objects of ``kind`` at ``version`` (cached on the API).

    Objects get the right ``apiVersion`` and ``kind`` when the kind is typed, as the API
    server guarantees; everything else comes from ``compatfuzz.strategies.from_schema``.
    """
    cache: dict[tuple[str, str], Any] = api.__dict__.setdefault("_strategy_cache", {})
    key = (kind.name, version)
    if key not in cache:
        from compatfuzz.strategies import from_schema

        strategy = from_schema(kind.schema(version))
        if kind.typed:
            api_version, name = kind.api_version(version), kind.name

            def _typed(obj: Any) -> Any:
                if isinstance(obj, dict):
                    obj = {**obj, "apiVersion": api_version, "kind": name}
                return obj

            strategy = strategy.map(_typed)
        cache[key] = strategy
    return cache[key]


def example_to_json(api: API | Suite, unit: Unit, obj: Any) -> Any:
    """A copy of ``obj`` as JSON, for reports and counterexample files."""
    return api.to_json(unit, obj) if isinstance(api, Suite) else json_copy(obj)


def example_from_json(api: API | Suite, unit: Unit, data: Any) -> Any:
    """The example ``data`` (from :func:`example_to_json`) stands for.

    Raises:
        ValueError: ``data`` is not an example of ``unit``.
    """
    return api.from_json(unit, data) if isinstance(api, Suite) else data


def diff_to_json(changes: Any) -> list[dict[str, Any]]:
    """Render a ``semantic.diff`` result as JSON-safe dicts (path, kind, old, new)."""
    out = []
    for change in changes or ():
        row = {}
        for attr in ("path", "kind", "old", "new"):
            value = getattr(change, attr, None)
            if attr == "kind" and value is not None:
                value = str(getattr(value, "value", value))
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                value = repr(value)
            row[attr] = value
        out.append(row)
    return out


def literal_diff(old: Any, new: Any, path: str = "") -> list[Any]:
    """The exact differences between two JSON values as ``semantic.Change`` rows.

    Unlike ``semantic.diff`` nothing is equal by meaning: ``[]`` and an absent key differ,
    as do ``1`` and ``1.0`` and two orders of a list.  A key present on one side only is
    ``lost`` or ``added`` (its other side is ``None``); other differences are ``changed``
    or ``type-changed``.
    """
    from compatfuzz.semantic import Change, ChangeKind
    from compatfuzz.semantic._diff import join_name

    if isinstance(old, dict) and isinstance(new, dict):
        out: list[Any] = []
        for key in old:
            where = join_name(path, key)
            if key not in new:
                out.append(Change(where, ChangeKind.LOST, old[key], None, "key removed"))
            else:
                out.extend(literal_diff(old[key], new[key], where))
        out.extend(Change(join_name(path, key), ChangeKind.ADDED, None, new[key], "key added")
                   for key in new if key not in old)
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i, (x, y) in enumerate(zip(old, new, strict=False)):
            out.extend(literal_diff(x, y, f"{path}[{i}]"))
        out.extend(Change(f"{path}[{i}]", ChangeKind.LOST, old[i], None, "item removed")
                   for i in range(len(new), len(old)))
        out.extend(Change(f"{path}[{i}]", ChangeKind.ADDED, None, new[i], "item added")
                   for i in range(len(old), len(new)))
        return out
    if type(old) is type(new) and old == new:
        return []
    kind = ChangeKind.CHANGED if type(old) is type(new) else ChangeKind.TYPE_CHANGED
    return [Change(path, kind, old, new)]


def render_changes(changes: Any, limit: int = 20) -> str:
    """``semantic.diff`` changes as indented lines, ``  path: kind: old -> new``.

    Each value is cut to ``MESSAGE_VALUE_LIMIT`` characters of JSON (the counterexample
    file's ``diff`` keeps it whole): a 10 MB value once made the message, and from it the
    report, 10 MB a copy (issue 22, item 8).
    """
    from compatfuzz.roundtrip._text import MESSAGE_VALUE_LIMIT, human_size

    def show(value: Any) -> str:
        text = json.dumps(value)
        if len(text) <= MESSAGE_VALUE_LIMIT:
            return text
        return (f"{text[:MESSAGE_VALUE_LIMIT]} ... {human_size(len(text) - MESSAGE_VALUE_LIMIT)}"
                " more (the whole value is in the counterexample's diff)")

    rows = diff_to_json(changes)
    lines = []
    for change, row in zip(changes or (), rows[:limit], strict=False):
        old, new = row["old"], row["new"]
        detail = getattr(change, "detail", "")
        if detail in ("key removed", "item removed"):
            text = f"{show(old)} -> (absent: {detail})"
        elif detail in ("key added", "item added"):
            text = f"(absent) -> {show(new)} ({detail})"
        else:
            text = f"{show(old)} -> {show(new)}"
        lines.append(f"  {row['path'] or '<root>'}: {row['kind']}: {text}")
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more changes")
    return "\n".join(lines)


def _related(a: str, b: str) -> bool:
    """Whether two field paths name the same field or one lies inside the other."""
    if a == b:
        return True
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return long.startswith(short) and long[len(short)] in ".["


def _explain(changes: Any, trace: list[Any] | None) -> str:
    """The API-server steps that touched the changed fields, one line each."""
    if trace is None:
        return ""
    paths = [row["path"] or "" for row in diff_to_json(changes)]
    lines: list[str] = []
    for step in trace:
        # a restored metadata field is always worth seeing: it is where data hides
        if step.what == "restored" or any(_related(step.path, p) for p in paths):
            text = "  " + step.describe()
            if text not in lines:
                lines.append(text)
    if not lines:
        # a converter that writes a field under another name loses it to pruning there
        pruned = [f"  {step.describe()}" for step in trace if step.what == "pruned"]
        text = "\n  (no API-server step touched these fields: the converters changed them)"
        if pruned:
            text += ("\nwhat the API server pruned on the way (a field written under another "
                     "name?):\n" + "\n".join(dict.fromkeys(pruned[:10])))
        return text
    return "\nwhat the API server did to these fields:\n" + "\n".join(lines[:20])


def _expect_equal(expected: Any, actual: Any, kind: Kind, version: str, what: str, *,
                  trace: list[Any] | None = None, api: API | None = None) -> None:
    from compatfuzz.semantic import diff, equal

    schema = kind.schema(version)
    options = api.semantic_options if api is not None else {}
    if api is not None:
        expected = strip_stash(expected, api.stash_annotations)
        actual = strip_stash(actual, api.stash_annotations)
    if equal(expected, actual, schema=schema, **options):
        return
    changes, accepted = accepted_changes(diff(expected, actual, schema=schema, **options))
    if not changes:
        return
    raise NotEquivalent(f"{what}:\n{render_changes(changes)}{_accepted_note(accepted)}"
                        f"{_explain(changes, trace)}{_stash_hint(changes)}", diff=changes)


def _stash_hint(changes: Any) -> str:
    """A fix for differences only in annotations: they may be a converter's stash."""
    paths = [str(getattr(c, "path", "")) for c in changes]
    if paths and all(p == "metadata" or p.startswith(("metadata.annotations",))
                     for p in paths):
        return ("\n  (only annotations differ: if the converters keep their own data there, "
                "name its key prefix in stash_annotations and no property compares it)")
    return ""


def _accepted_note(accepted: int) -> str:
    return (f"\n  ({accepted} more difference{'s' if accepted > 1 else ''} accepted by the "
            "API's accept entries)") if accepted else ""


def _path(error: Any) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def refused_update(server: Any, seen: Any, a: str, b: str) -> None:
    """Raise ``NotEquivalent`` when the server refuses a ``b`` client's unchanged update of
    ``seen`` (what it read of an object written as ``a``): ratcheting excuses an error
    only where the value is the stored one's (``APIServer.update_errors``), so a missing
    required ``spec`` at the root, say, blocks it."""
    errors = accepted_errors(server.update_errors(seen, b))
    if errors:
        lines = "\n".join(f"  {e}" for e in errors)
        raise NotEquivalent(
            f"written as {a}, read as {b}: a {b} client cannot write it back unchanged: the "
            f"API server refuses the update (validation ratcheting does not excuse these):"
            f"\n{lines}")


def _served(api: API, kind: Kind, server: Any, unit: Unit, obj: Any) -> None:
    """The properties judged through the API-server model (``compatfuzz.apiserver``).

    The object as generated is decoded first (``accept``, no converter runs): the model
    refusing it means compatfuzz's generator and model disagree, an ``InternalError``,
    never the converter's fault (issue 17: ``deletionTimestamp: 2026-01-02t03:04:05z``
    was reported as the identity converter's)."""
    from compatfuzz.apiserver import Rejected
    from compatfuzz.errors import ConverterError, InternalError

    prop, vs = unit.property, unit.versions
    trace: list[Any] = []
    try:
        written = server.accept(obj, vs[0], trace)
    except Rejected as exc:
        raise InternalError(
            f"{api.name}: compatfuzz generated a {kind.name} {vs[0]} object that its own "
            f"API-server model refuses before any converter ran: {exc}. This is a "
            "compatfuzz bug (its generator and its model disagree), not your converter's: "
            "please report it with this example (unless a register_format/register_path "
            "override of yours drew that value)") from exc
    try:
        if prop is Property.ROUNDTRIP:
            a, b = vs
            seen = server.read(server.store(written, a, trace), b, trace)
            refused_update(server, seen, a, b)
            back = server.read(server.write(seen, b, trace), a, trace)
            hops = [a, server.storage, b, server.storage, a]
            route = " -> ".join(v for i, v in enumerate(hops) if i == 0 or v != hops[i - 1])
            _expect_equal(written, server.as_written(back, written, a), kind, a,
                          f"what a {a} client wrote is not what it reads back after a {b} "
                          f"client read and updated it (stored as {server.storage}: {route})",
                          trace=trace, api=api)
        elif prop is Property.VALID:
            a, b = vs
            seen = server.read(server.store(written, a, trace), b, trace)
            errors = accepted_errors(server.validate(seen, b))
            if errors:
                lines = "\n".join(f"  {e}" for e in errors)
                raise NotEquivalent(
                    f"written as {a}, read as {b}: {b}'s validation rejects the object (the "
                    f"API server refuses it on create in {b}, and refuses an update in {b} "
                    f"that changes these fields):\n{lines}")
        else:  # PATH_INDEPENDENT
            a, b, c = vs
            stored = server.store(written, a, trace)
            via = server.read(server.write(server.read(stored, b, trace), b, trace), c, trace)
            direct = server.read(stored, c, trace)
            s = server.storage
            _expect_equal(server.write(direct, c), server.write(via, c), kind, s,
                          f"read as {c} after a {b} client updated it differs from read as {c} "
                          f"directly, as stored in {s} (the storage version)", trace=trace, api=api)
    except Rejected as exc:
        raise ConverterError(f"{api.name}: {exc}") from exc


def check(api: API | Suite, unit: Unit, obj: Any, *,
          accepted: set[int] | None = None) -> None:
    """Check one property of ``unit`` on ``obj`` (an object of the unit's first version).

    A difference that one of the API's accept entries covers is not a failure; the
    indexes (into ``api.accept``) of the entries that accepted one are added to
    ``accepted``. Annotations under the API's ``stash_annotations`` prefixes are left out
    of every comparison; with the API-server pipeline ``path_independent`` and
    ``default_commutes`` also leave out the annotations the client did not write, as
    ``roundtrip`` does (``APIServer.as_written``).

    With the API-server pipeline (the default for CRDs) ``roundtrip``, ``valid`` and
    ``path_independent`` move objects through ``compatfuzz.apiserver.APIServer``:

    * ``roundtrip[A->B]``: what a client in A wrote (after A's pruning and defaulting) is
      what it reads back after the object was stored, read by a client in B and updated
      by it;
    * ``valid[A->B]``: written as A and read as B, the object passes B's full validation;
    * ``path_independent[A,B,C]``: read as C with or without a B client's update in
      between, the two compare equal as the storage (hub) version holds them.

    Raises:
        NotEquivalent: the property does not hold; ``.diff`` holds the field-path changes.
        ConverterError: a converter or defaulter raised or returned garbage, or the API
            server would reject a conversion response.
        InternalError: the API-server model refuses ``obj`` as generated, before any
            converter ran: a compatfuzz bug.
    """
    if isinstance(api, Suite):
        api.check(unit, obj)
        return
    written = None
    if api.pipeline == "apiserver" and unit.property in (Property.PATH_INDEPENDENT,
                                                         Property.DEFAULT_COMMUTES):
        # as roundtrip's as_written: an annotation the client did not write is the
        # converter's (a stash), whatever path wrote it
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        notes = meta.get("annotations") if isinstance(meta, dict) else None
        written = list(notes) if isinstance(notes, dict) else []
    with checking(api.accept, unit, accepted if accepted is not None else set(),
                  written=written):
        if api.apiserver != "model" and unit.property in (
                Property.ROUNDTRIP, Property.VALID, Property.PATH_INDEPENDENT):
            from compatfuzz.roundtrip._real import backend_for

            backend_for(api).check(unit, obj, both=api.apiserver == "both")
            return
        _check(api, unit, obj)


def _check(api: API, unit: Unit, obj: Any) -> None:
    kind = api.kind(unit.kind)
    prop, vs = unit.property, unit.versions
    server = api.server(kind)
    if server is not None and prop in (Property.ROUNDTRIP, Property.VALID,
                                       Property.PATH_INDEPENDENT):
        _served(api, kind, server, unit, obj)
        return
    if prop is Property.ROUNDTRIP:
        a, b = vs
        there = api.convert(kind, json_copy(obj), a, b)
        back = api.convert(kind, there, b, a)
        _expect_equal(obj, back, kind, a, f"{a} -> {b} -> {a} did not give back the original",
                      api=api)
    elif prop is Property.VALID:
        a, b = vs
        out = api.convert(kind, json_copy(obj), a, b)
        errors = sorted(kind.schema(b).validator.iter_errors(out), key=lambda e: list(
            map(str, e.absolute_path)))
        errors = [e for e in errors if not is_accepted(_path(e))]
        if errors:
            lines = "\n".join(f"  {_path(e)}: {e.message}" for e in errors[:20])
            raise NotEquivalent(f"{a} -> {b} output does not validate under {b}:\n{lines}")
    elif prop is Property.NO_MUTATION:
        a, b = vs
        probe = json_copy(obj)
        api.convert(kind, probe, a, b)
        if probe != obj:
            # the exact change, not the semantic one: popping an empty list is a mutation
            # semantic equality cannot see (issue 10)
            changes, _ = accepted_changes(literal_diff(
                strip_stash(obj, api.stash_annotations, tidy=False),
                strip_stash(probe, api.stash_annotations, tidy=False)))
            if not changes:
                return
            raise NotEquivalent(
                f"converting {a} -> {b} mutated its input:\n{render_changes(changes)}",
                diff=changes)
    elif prop is Property.PATH_INDEPENDENT:
        a, b, c = vs
        via = api.convert(kind, api.convert(kind, json_copy(obj), a, b), b, c)
        direct = api.convert(kind, json_copy(obj), a, c)
        hub = api.hub_for(kind)
        if hub in kind.versions and hub != c:
            # compare as the hub sees them: equivalent spellings of the same hub object
            # (a stash annotation's JSON, say) are not a difference
            assert hub is not None
            _expect_equal(api.convert(kind, json_copy(direct), c, hub),
                          api.convert(kind, json_copy(via), c, hub), kind, hub,
                          f"{a} -> {b} -> {c} differs from {a} -> {c}, as the hub {hub} "
                          "sees them", api=api)
        else:
            _expect_equal(direct, via, kind, c, f"{a} -> {b} -> {c} differs from {a} -> {c}",
                          api=api)
    elif prop is Property.DEFAULT_IDEMPOTENT:
        (a,) = vs
        once = api.default(kind, a, json_copy(obj))
        twice = api.default(kind, a, json_copy(once))
        _expect_equal(once, twice, kind, a, f"defaulting {a} twice differs from once", api=api)
    elif prop is Property.DEFAULT_COMMUTES:
        a, b = vs
        first = api.convert(kind, api.default(kind, a, json_copy(obj)), a, b)
        second = api.default(kind, b, api.convert(kind, json_copy(obj), a, b))
        _expect_equal(second, first, kind, b,
                      f"default({a}) then convert to {b} differs from convert then default({b})",
                      api=api)
    else:  # pragma: no cover - Property is closed
        raise AssertionError(prop)


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

    from compatfuzz.roundtrip._database import namespaced
    from compatfuzz.roundtrip._profiles import get_profile
    from compatfuzz.roundtrip._usercode import Capture

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
        # each example's output is kept with its failure, not printed (issue 10)
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
