"""The plan of a run: one unit per (kind, property, version tuple), all of them up to the
plan limit and a fixed sample beyond, the same in every run so test ids and the example
database stay stable."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip._check._limits import DEFAULT_PLAN_LIMIT, plan_limit_arg
from compatfuzz.roundtrip._check._model import API
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._events import Property, Unit

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
          Property.DEFAULT_COMMUTES: 2, Property.ENCODINGS: 1, Property.MIGRATIONS: 1,
          Property.WRITE_THEN_READ: 1, Property.CROSS_VERSION: 2}
#: properties of other API families (protobuf's encodings, a web app's migration code and
#: routes): a CRD or JSON Schema API plans none
_ELSEWHERE = (Property.ENCODINGS, Property.MIGRATIONS, Property.WRITE_THEN_READ,
              Property.CROSS_VERSION)


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
    # a converter in another process gets a copy of the object: no_mutation cannot fail
    isolated = bool(getattr(api.converter, "isolated", False))
    out: list[Unit] = []
    sampled: list[Sampled] = []
    for kind in api.kinds:
        vs = list(kind.versions)
        defaulted = set(api.defaulted_versions(kind))
        seed = "\0".join(["compatfuzz plan", api.name, kind.name, *vs])
        cache: dict[int, list[tuple[str, ...]]] = {}
        for prop in _ORDER:
            if prop not in wanted or (prop is Property.NO_MUTATION and isolated):
                continue
            r = _ARITY[prop]
            if prop in _ELSEWHERE:
                combos: list[tuple[str, ...]] = []
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
            or not set(vs) <= set(kind.versions)
            or unit.property in _ELSEWHERE):
        return False
    defaulted = set(api.defaulted_versions(kind))
    if unit.property in (Property.DEFAULT_IDEMPOTENT, Property.DEFAULT_COMMUTES):
        return bool(defaulted & set(vs))
    return True


