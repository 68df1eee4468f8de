"""The static half of ``compat``: walk OLD and NEW together and name every difference.

Each rule consumes the keywords it understands at a node pair; whatever differs and no
rule consumed becomes an ``unhandled`` finding, so a new keyword or an odd construct is
never silently read as "compatible". Findings carry the subschemas at their path
(:class:`SearchContext`) so the dynamic half can look for a witness there.

Paths are Kubernetes field paths (``spec.template.spec.containers[*].image``); map values
and array items are both ``[*]``. ``$ref`` is followed on both sides and a pair of
definitions is walked once (memoised by definition names), which both guards against
recursive schemas and reports a change in a shared definition (``ObjectMeta``) once,
at the first path that reaches it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from compatfuzz.compat._model import Finding, Severity, Side
from compatfuzz.schema import Schema

__all__ = [
    "ANNOTATIONS",
    "RENAMES",
    "Only",
    "Renamed",
    "Repeat",
    "SearchContext",
    "With",
    "default_gaps",
    "walk",
    "walk_with_aliases",
]

REQ = frozenset({Side.REQUEST})
RESP = frozenset({Side.RESPONSE})
BOTH = frozenset({Side.REQUEST, Side.RESPONSE})
NONE: frozenset[Side] = frozenset()

#: Keywords that do not change which values are accepted (or how the server treats them).
ANNOTATIONS = frozenset({
    "description", "title", "$comment", "examples", "example", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$anchor", "$defs", "definitions", "externalDocs",
    "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key", "x-kubernetes-unions",
    "x-kubernetes-group-version-kind", "x-kubernetes-action", "x-kubernetes-selectable-fields",
    "contentEncoding", "contentMediaType",
})

# bound keyword -> +1 when a larger value is stricter (minimum), -1 when smaller is (maximum)
_BOUNDS = {
    "minimum": 1, "exclusiveMinimum": 1, "minLength": 1, "minItems": 1, "minProperties": 1,
    "maximum": -1, "exclusiveMaximum": -1, "maxLength": -1, "maxItems": -1,
    "maxProperties": -1,
}
_ALL_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean"})
_SCALARS = frozenset({"string", "number", "integer", "boolean"})
# numeric/string formats ordered by range: (narrow, wide)
_FORMAT_WIDENINGS = {("int32", "int64"), ("float", "double"), ("int32", "double"),
                     ("float", "int64")}
_MAX_DEPTH = 96
_NEUTRAL = frozenset({"minLength", "minItems", "minProperties"})
_TRIVIAL = frozenset({"type", "format", "nullable", "x-kubernetes-int-or-string"})


@dataclass
class SearchContext:
    """What the witness search needs for one finding.

    ``old``/``new`` are the (dereferenced) subschemas at the finding's path, or at the parent
    object when ``field`` is set (required, default, added/removed fields). ``candidates``
    are values worth trying before any search (removed enum values, old bounds).
    ``decide`` means the static rule cannot tell the sides (pattern) and the witness does.
    """

    old_schema: Schema
    new_schema: Schema
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None
    path: str
    field: str | None = None
    candidates: list[Any] = dc_field(default_factory=list)
    decide: bool = False
    #: with ``decide``: whether a search cut short keeps the rule's claim. A union whose
    #: branches changed on both sides is matched by position only, a weak claim: cut
    #: short, it is left undecided (not counted as breaking) instead
    claim_if_cut: bool = True
    #: with ``decide``: findings of one node that judge the same thing (every branch
    #: change of one union compares the whole schemas there) share one search
    same_search: str = ""
    rule: str = ""
    old_default: Any = None
    new_default: Any = None
    # the path of the outermost value holding an allOf/anyOf/oneOf this finding sits
    # under (None: under none); the impact of its error is judged there
    quantor: str | None = None


@dataclass(frozen=True)
class Repeat:
    """A witness candidate: a list of ``count`` copies of one valid item (for maxItems)."""

    count: int


@dataclass(frozen=True)
class With:
    """A witness candidate: a minimal valid object plus ``field`` (rarely drawn by chance)."""

    field: str


@dataclass(frozen=True)
class Only:
    """A witness candidate: an object holding just ``field`` (a value valid for it)."""

    field: str


def _is_status(path: str) -> bool:
    return path == "status" or path.startswith(("status.", "status["))


def join(path: str, name: str) -> str:
    """Append a property name to a field path, bracketing names that are not identifiers."""
    if name.replace("_", "").replace("-", "").replace("$", "").isalnum():
        return f"{path}.{name}" if path else name
    return f"{path}[{json.dumps(name)}]"


def _canon(node: Any, drop: frozenset[str] = ANNOTATIONS) -> str:
    def strip(n: Any) -> Any:
        if isinstance(n, Mapping):
            return {k: strip(v) for k, v in n.items() if k not in drop}
        if isinstance(n, list):
            return [strip(v) for v in n]
        return n

    return json.dumps(strip(node), sort_keys=True, default=str)


def _honours_nullable(schema: Schema) -> bool:
    """Whether a raw ``nullable: true`` means "null accepted" in ``schema``.

    Loaded OpenAPI 3.0 / CRD / Kubernetes schemas are normalised (``nullable`` became
    ``"null"`` in ``type``); one left in a plain JSON Schema is an unknown keyword its
    validator ignores, so reading it as nullable would invent a change.
    """
    dialect = str(schema.meta.get("dialect", ""))
    return schema.kubernetes or dialect in ("openapi-3.0", "swagger-2.0")


def _types(node: Mapping[str, Any], nullable: bool = True) -> frozenset[str] | None:
    """Declared types, ``None`` meaning "any"; int-or-string and (where the dialect has
    it, see :func:`_honours_nullable`) ``nullable`` folded in."""
    t = node.get("type")
    if node.get("x-kubernetes-int-or-string") is True:
        out = {"integer", "string"}
        if isinstance(t, list) and "null" in t:
            out.add("null")
    elif t is None:
        return None
    else:
        out = set(t) if isinstance(t, list) else {t}
    if nullable and (node.get("nullable") is True or node.get("x-nullable") is True):
        out.add("null")
    return frozenset(out)


def _covered(t: str, types: frozenset[str]) -> bool:
    return t in types or (t == "integer" and "number" in types)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _fmt(values: list[Any]) -> str:
    return ", ".join(json.dumps(v, default=str) for v in values[:6]) + (
        f" (+{len(values) - 6} more)" if len(values) > 6 else "")


def _removed_why(name: str, old: Any, *, closed: bool, pruned: bool) -> str:
    """Why removing field ``name`` breaks clients, in one sentence."""
    if closed:
        return (f"field '{name}' removed: NEW rejects objects that still set it, and old "
                "clients send it")
    if pruned:
        return (f"field '{name}' removed: NEW's API server prunes it, so what old clients "
                "send there is lost")
    expected = old.get("type") if isinstance(old, Mapping) else None
    wanted = f" (they expect {expected})" if isinstance(expected, str) else ""
    return (f"field '{name}' removed: NEW's object is open, so it accepts any value under "
            f"'{name}' and may return one that old clients reject{wanted}")


#: the ``Schema.meta`` key (of NEW) naming renames the API itself declares, e.g. a Cadwyn
#: bundle's ``had(name=...)``: ``{definition: {old name: Renamed}}``, ``""`` for the root.
#: A declared rename of the same subschema is one ``field-renamed`` finding, however
#: plain the subschema (the guess below takes only distinctive ones), and a field
#: required under both names is not also reported as ``required-added``/``-removed``.
RENAMES = "renames"


@dataclass(frozen=True)
class Renamed:
    """A field the API says was renamed: ``to`` its name in NEW, ``why`` who says so."""

    to: str
    why: str


class _Walker:
    def __init__(self, old: Schema, new: Schema, *, version: str = "",
                 pruning: bool = False, defaults_only: bool = False) -> None:
        self.old = old
        self.new = new
        self.version = version
        self.pruning = pruning
        self.defaults_only = defaults_only
        self.o_nullable = _honours_nullable(old)
        self.n_nullable = _honours_nullable(new)
        self.seen: dict[tuple[str, str, bool], str] = {}
        # later paths reaching an already-walked definition pair: (first path, this path)
        self.aliases: list[tuple[str, str]] = []
        self.out: list[Finding] = []
        # paths of the values whose allOf/anyOf/oneOf members are being walked
        self.quantors: list[str] = []

    # -- helpers -----------------------------------------------------------------------

    def deref(self, schema: Schema, node: Any, name: str) -> tuple[dict[str, Any], str]:
        if node is True or node is None:
            return {}, name
        if node is False:
            return {"not": {}}, name
        merged = dict(node)
        hops = 0
        while "$ref" in merged and hops < 32:
            ref = merged.pop("$ref")
            name = ref.rsplit("/", 1)[-1]
            target = schema.resolve(ref)
            merged = {**target, **merged}
            hops += 1
        return merged, name

    def add(self, rule: str, path: str, old: Any, new: Any, message: str,  # noqa: PLR0917 - mirrors Finding(...)
            breaks: frozenset[Side], *, keyword: str = "", definition: str = "",
            ctx: SearchContext | None = None, suggested: Severity | None = None) -> None:
        if self.defaults_only and not rule.startswith("default-"):
            return
        self.out.append(Finding(
            rule=rule, path=path or "$", old=old, new=new, message=message, breaks=breaks,
            version=self.version, definition=definition, keyword=keyword, context=ctx,
            suggested=suggested,
        ))

    def ctx(self, o: Mapping[str, Any] | None, n: Mapping[str, Any] | None, path: str,
            **kw: Any) -> SearchContext:
        out = SearchContext(self.old, self.new, o, n, path, **kw)
        if self.quantors:
            out.quantor = self.quantors[0]
        return out

    def member(self, o_raw: Any, n_raw: Any, path: str, d: str, depth: int) -> None:
        """Walk a pair of allOf/anyOf/oneOf members of the value at ``path``."""
        self.quantors.append(path)
        try:
            self.walk(o_raw, n_raw, path, d, depth=depth + 1)
        finally:
            self.quantors.pop()

    # -- the walk ----------------------------------------------------------------------

    def walk(self, o_raw: Any, n_raw: Any, path: str, inherited: str = "",
             depth: int = 0) -> None:
        o, odef2 = self.deref(self.old, o_raw, "")
        n, ndef2 = self.deref(self.new, n_raw, "")
        if odef2 and ndef2:
            key = (odef2, ndef2, _is_status(path))
            if key in self.seen:
                if self.seen[key] != path:
                    self.aliases.append((self.seen[key], path))
                return
            self.seen[key] = path
        if depth > _MAX_DEPTH:
            return
        definition = ndef2 or odef2 or inherited
        same = _canon(o)
        if same == _canon(n) and '"$ref"' not in same:
            return  # identical and self-contained; with a $ref inside, the targets may differ
        consumed: set[str] = set(ANNOTATIONS)
        d = definition

        if not self.types(o, n, path, d=d, consumed=consumed):
            return  # disjoint types or union wrapping: deeper differences are noise
        self.unions(o, n, path, d=d, depth=depth, consumed=consumed)
        self.all_of(o, n, path, d=d, depth=depth, consumed=consumed)
        # the definition this node is (``""``: the root), where declared renames apply
        own = ndef2 or (None if path else "")
        self.objects(o, n, path, d=d, depth=depth, consumed=consumed, own=own)
        self.arrays(o, n, path, d=d, depth=depth, consumed=consumed)
        self.enums(o, n, path, d=d, consumed=consumed)
        self.defaults(o, n, path, d=d, consumed=consumed)
        self.bounds(o, n, path, d=d, consumed=consumed)
        self.pattern_format(o, n, path, d=d, consumed=consumed)
        self.kubernetes(o, n, path, d=d, consumed=consumed)

        for kw in sorted((set(o) | set(n)) - consumed):
            if _canon(o.get(kw)) != _canon(n.get(kw)):
                self.add("unhandled", path, o.get(kw), n.get(kw),
                         f"'{kw}' changed and no rule understands it", BOTH, keyword=kw,
                         definition=d, ctx=self.ctx(o, n, path))

    # -- rules -------------------------------------------------------------------------

    def types(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
              consumed: set[str]) -> bool:
        consumed.update({"type", "nullable", "x-nullable", "x-kubernetes-int-or-string"})
        # union wrapping changes the declared type too; let the union rule speak first
        ou = "oneOf" in o or "anyOf" in o
        nu = "oneOf" in n or "anyOf" in n
        if ou != nu:
            return self.wrap(o, n, path, d=d, consumed=consumed)
        ot, nt = _types(o, self.o_nullable), _types(n, self.n_nullable)
        if ot == nt:
            return True
        o_null = ot is None or "null" in ot
        n_null = nt is None or "null" in nt
        if ot is not None and nt is not None and o_null != n_null:
            self.add("nullable-changed", path, o_null, n_null,
                     "null is now accepted" if n_null else "null is no longer accepted",
                     RESP if n_null else REQ, keyword="type", definition=d,
                     ctx=self.ctx(o, n, path, candidates=[None]))
        os_ = (ot - {"null"}) if ot is not None else _ALL_TYPES
        ns = (nt - {"null"}) if nt is not None else _ALL_TYPES
        less = sorted(t for t in os_ if not _covered(t, ns))
        more = sorted(t for t in ns if not _covered(t, os_))
        if not less and not more:
            return True
        breaks = (REQ if less else NONE) | (RESP if more else NONE)
        rule = "type-changed"
        # mirror images of each other, so swapping OLD and NEW swaps the rule names
        if ns == {"array"} and os_ & _SCALARS and "array" not in os_:
            rule = "singular-to-plural"
        elif os_ == {"array"} and ns & _SCALARS and "array" not in ns:
            rule = "plural-to-singular"
        old_v = sorted(ot) if ot is not None else None
        new_v = sorted(nt) if nt is not None else None
        msg = f"type {old_v or 'any'} -> {new_v or 'any'}"
        if less:
            msg += f"; {', '.join(less)} no longer accepted"
        if more:
            msg += f"; {', '.join(more)} newly accepted"
        self.add(rule, path, old_v, new_v, msg, breaks, keyword="type", definition=d,
                 ctx=self.ctx(o, n, path))
        overlap = any(_covered(t, ns) for t in os_) or any(_covered(t, os_) for t in ns)
        if not overlap and os_ and ns:
            consumed.update(set(o) | set(n))
            return False
        return True

    def wrap(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
             consumed: set[str]) -> bool:
        wrapped = "oneOf" in n or "anyOf" in n
        inner, outer = (o, n) if wrapped else (n, o)
        kw = "oneOf" if "oneOf" in outer else "anyOf"
        branches = outer[kw]
        plain = _canon({k: v for k, v in inner.items() if k not in ("default",)})
        same = any(_canon(self.deref(self.new if wrapped else self.old, b, "")[0]) == plain
                   for b in branches)
        # oneOf is exclusive: a new branch that overlaps the old schema rejects old values
        if wrapped:
            breaks = RESP if same and kw == "anyOf" else BOTH
            msg = (f"wrapped in {kw} with {len(branches)} branches"
                   + ("; the old schema is one branch, the others are new values"
                      if same else "; no branch equals the old schema"))
            self.add("wrapped-in-union", path, None, len(branches), msg, breaks, keyword=kw,
                     definition=d, ctx=self.ctx(o, n, path))
        else:
            breaks = REQ if same and kw == "anyOf" else BOTH
            msg = (f"taken out of {kw} ({len(branches)} branches)"
                   + ("; values of the other branches are rejected" if same else ""))
            self.add("unwrapped-from-union", path, len(branches), None, msg, breaks,
                     keyword=kw, definition=d, ctx=self.ctx(o, n, path))
        consumed.update(set(o) | set(n))
        return False

    def unions(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str, depth: int,
               consumed: set[str]) -> None:
        for kw in ("oneOf", "anyOf"):
            if kw not in o and kw not in n:
                continue
            consumed.add(kw)
            ob, nb = o.get(kw), n.get(kw)
            if ob is None or nb is None:
                other = "anyOf" if kw == "oneOf" else "oneOf"
                if (ob is None and other in o) or (nb is None and other in n):
                    self.add("unhandled", path, kw if ob else other, kw if nb else other,
                             "oneOf and anyOf swapped", BOTH, keyword=kw, definition=d,
                             ctx=self.ctx(o, n, path))
                continue
            self.branches(kw, ob, nb, path, d=d, depth=depth, whole=(o, n))

    def branches(self, kw: str, ob: list[Any], nb: list[Any], path: str, *, d: str,
                 depth: int, whole: tuple[dict[str, Any], dict[str, Any]]) -> None:
        """Branches present on one side only. What a union accepts is not the sum of its
        branches (a ``oneOf`` branch added beside a widened ``not anyOf`` one, Istio's
        DestinationRule ``loadBalancer`` in 1.32, accepts what it accepted before), so the
        witness search judges the whole schemas at ``path`` and decides the sides: no value
        one accepts and the other refuses, no break."""
        oc = [_canon(self.deref(self.old, b, "")[0]) for b in ob]
        nc = [_canon(self.deref(self.new, b, "")[0]) for b in nb]
        o_left = [i for i, c in enumerate(oc) if c not in nc]
        n_left = [j for j, c in enumerate(nc) if c not in oc]
        if len(o_left) == len(n_left):
            for i, j in zip(o_left, n_left, strict=True):
                self.member(ob[i], nb[j], path, d, depth)
            return
        o, n = whole
        weak = bool(o_left) and bool(n_left)  # branches changed, not only added or removed

        def ctx() -> SearchContext:
            return self.ctx(o, n, path, decide=True, claim_if_cut=not weak,
                            same_search=f"{kw} union")

        for i in o_left:
            self.add("union-branch-removed", path, ob[i], None,
                     f"{kw} branch {i} removed; values only it accepted are rejected",
                     REQ if kw == "anyOf" else BOTH, keyword=kw, definition=d, ctx=ctx())
        for j in n_left:
            self.add("union-branch-added", path, None, nb[j],
                     f"{kw} branch {j} added; old clients reject its values",
                     RESP if kw == "anyOf" else BOTH, keyword=kw, definition=d, ctx=ctx())

    def all_of(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str, depth: int,
               consumed: set[str]) -> None:
        oa, na = o.get("allOf"), n.get("allOf")
        if oa is None and na is None:
            return
        consumed.add("allOf")
        oa, na = oa or [], na or []
        if len(oa) == len(na):
            for a, b in zip(oa, na, strict=True):
                self.member(a, b, path, d, depth)
        else:
            self.add("unhandled", path, len(oa), len(na), "allOf gained or lost members",
                     BOTH, keyword="allOf", definition=d, ctx=self.ctx(o, n, path))

    def declared(self, own: str | None) -> Mapping[str, Renamed]:
        """The renames NEW's meta declares for definition ``own`` (:data:`RENAMES`)."""
        table = self.new.meta.get(RENAMES)
        if own is None or not isinstance(table, Mapping):
            return {}
        found = table.get(own)
        return found if isinstance(found, Mapping) else {}

    def objects(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str, depth: int,
                consumed: set[str], own: str | None = None) -> None:
        consumed.update({"properties", "required", "additionalProperties",
                         "x-kubernetes-preserve-unknown-fields"})
        op: Mapping[str, Any] = o.get("properties") or {}
        np_: Mapping[str, Any] = n.get("properties") or {}
        o_closed = o.get("additionalProperties") is False
        n_closed = n.get("additionalProperties") is False
        for name in [k for k in op if k in np_]:
            self.walk(op[name], np_[name], join(path, name), d, depth=depth + 1)
        removed = [k for k in op if k not in np_]
        added = [k for k in np_ if k not in op]
        renames: dict[str, str] = {}
        why: dict[str, str] = {}  # declared renames: who declared them
        for r, hint in self.declared(own).items():
            if (r in removed and hint.to in added
                    and _canon(self.deref(self.old, op[r], "")[0])
                    == _canon(self.deref(self.new, np_[hint.to], "")[0])):
                renames[r], why[r] = hint.to, hint.why
        guess_r = [r for r in removed if r not in renames]
        guess_a = [a for a in added if a not in renames.values()]
        if guess_r and guess_a and len(guess_r) * len(guess_a) <= 400:
            # a rename is the *same distinctive* subschema under one new name; two plain
            # strings swapped (an alpha field dropped, another added) are not a rename
            rc = {r: self.deref(self.old, op[r], "")[0] for r in guess_r}
            ac = {a: self.deref(self.new, np_[a], "")[0] for a in guess_a}
            for r, rnode in rc.items():
                if set(rnode) - ANNOTATIONS <= _TRIVIAL:
                    continue
                same = [a for a, anode in ac.items() if _canon(anode) == _canon(rnode)]
                twins = [x for x, xn in rc.items() if _canon(xn) == _canon(rnode)]
                if len(same) == 1 and len(twins) == 1:
                    renames[r] = same[0]

        # x-kubernetes-preserve-unknown-fields keeps undeclared fields even with pruning
        o_keeps = o.get("x-kubernetes-preserve-unknown-fields") is True
        n_keeps = n.get("x-kubernetes-preserve-unknown-fields") is True

        def added_breaks() -> frozenset[Side]:
            if o_closed:  # closed content rejects rather than prunes
                return RESP
            if self.pruning and not o_keeps:
                # an old client prunes the new field; with minProperties the rest may be
                # too small (found by the whole-schema search on Cluster API main)
                return RESP if (o.get("minProperties") or 0) > 0 else NONE
            # OLD kept any value under this name (open object, preserved unknown fields);
            # a typed field now rejects the ones that do not fit
            return REQ

        def removed_breaks() -> frozenset[Side]:
            if n_closed or (self.pruning and not n_keeps):
                return REQ
            return RESP  # NEW keeps any value under the old name: old clients reject some

        for r, a in renames.items():
            self.add("field-renamed", join(path, r), r, a,
                     f"'{r}' renamed to '{a}' (same subschema"
                     + (f"; {why[r]})" if r in why else ")"),
                     added_breaks() | removed_breaks() | (REQ if self.pruning else NONE),
                     keyword="properties", definition=d,
                     ctx=self.ctx(o, n, path, field=r))
        for r in removed:
            if r in renames:
                continue
            self.add("field-removed", join(path, r), r, None,
                     _removed_why(r, (o.get("properties") or {}).get(r), closed=n_closed,
                                  pruned=self.pruning and not n_keeps),
                     removed_breaks(), keyword="properties", definition=d,
                     ctx=self.ctx(o, n, path, field=r, candidates=[With(r)]))
        for a in added:
            if a in renames.values():
                continue
            self.add("field-added", join(path, a), None, a, f"field '{a}' added",
                     added_breaks(), keyword="properties", definition=d,
                     ctx=self.ctx(o, n, path, field=a, candidates=[Only(a)]),
                     # open JSON Schema objects: only clients that sent an undeclared
                     # property of that name notice, so only tell; preserved unknown
                     # fields are data the API promised to keep, so that is an error
                     suggested=None if o_closed or self.pruning else Severity.INFO)

        oreq = [r for r in o.get("required") or [] if isinstance(r, str)]
        nreq = [r for r in n.get("required") or [] if isinstance(r, str)]
        moved = {r: a for r, a in renames.items() if r in why}  # required under both names
        was = [moved.get(r, r) for r in oreq]
        for r in nreq:
            if r not in was:
                self.add("required-added", join(path, r), False, True,
                         f"'{r}' became required; objects without it are rejected", REQ,
                         keyword="required", definition=d, ctx=self.ctx(o, n, path, field=r))
        for r in oreq:
            if moved.get(r, r) not in nreq:
                self.add("required-removed", join(path, r), True, False,
                         f"'{r}' is no longer required; old clients expect it", RESP,
                         keyword="required", definition=d, ctx=self.ctx(o, n, path, field=r))

        oa, na = o.get("additionalProperties"), n.get("additionalProperties")
        o_map = isinstance(oa, Mapping) or (oa is True)
        n_map = isinstance(na, Mapping) or (na is True)
        if o_map and n_map:
            self.walk(oa, na, path + "[*]", d, depth=depth + 1)
        elif _canon(oa) != _canon(na):
            tighter = (na is False) or (isinstance(na, Mapping) and oa in (None, True))
            if isinstance(na, Mapping) and oa is None and not o.get("properties"):
                self.walk({}, na, path + "[*]", d, depth=depth + 1)
            elif isinstance(oa, Mapping) and na is None and not n.get("properties"):
                self.walk(oa, {}, path + "[*]", d, depth=depth + 1)
            else:
                rule = "content-closed" if tighter else "content-opened"
                self.add(rule, path, oa, na,
                         "unknown properties " + ("rejected now" if tighter
                                                  else "accepted now"),
                         REQ if tighter else RESP, keyword="additionalProperties",
                         definition=d, ctx=self.ctx(o, n, path))
        op_ = o.get("x-kubernetes-preserve-unknown-fields") is True
        np2 = n.get("x-kubernetes-preserve-unknown-fields") is True
        if op_ != np2:
            self.add("content-opened" if np2 else "content-closed", path, op_, np2,
                     "unknown fields are now preserved" if np2
                     else "unknown fields are now pruned (data loss)",
                     RESP if np2 else REQ, keyword="x-kubernetes-preserve-unknown-fields",
                     definition=d, ctx=self.ctx(o, n, path))

    def arrays(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str, depth: int,
               consumed: set[str]) -> None:
        oi, ni = o.get("items"), n.get("items")
        if oi is None and ni is None:
            return
        consumed.add("items")
        if isinstance(oi, list) or isinstance(ni, list):
            consumed.discard("items")  # tuple form: leave it to "unhandled"
            return
        self.walk(oi if oi is not None else {}, ni if ni is not None else {},
                  path + "[*]", d, depth=depth + 1)

    def enums(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
              consumed: set[str]) -> None:
        consumed.update({"enum", "const"})

        def values(node: Mapping[str, Any]) -> list[Any] | None:
            if "const" in node:
                return [node["const"]]
            e = node.get("enum")
            return list(e) if isinstance(e, list) else None

        oe, ne = values(o), values(n)
        if oe is None and ne is None:
            return
        kw = "enum" if "enum" in o or "enum" in n else "const"
        if oe is not None and ne is not None:
            ok = {_canon(v) for v in oe}
            nk = {_canon(v) for v in ne}
            # null counts like any other value: ["a", null] -> ["a"] rejects null
            added = [v for v in ne if _canon(v) not in ok]
            removed = [v for v in oe if _canon(v) not in nk]
            if added:
                self.add("enum-value-added", path, oe, ne,
                         f"enum value(s) {_fmt(added)} added; old clients may reject them",
                         RESP, keyword=kw, definition=d,
                         ctx=self.ctx(o, n, path, candidates=added))
            if removed:
                self.add("enum-value-removed", path, oe, ne,
                         f"enum value(s) {_fmt(removed)} removed; old objects using them "
                         "are rejected", REQ, keyword=kw, definition=d,
                         ctx=self.ctx(o, n, path, candidates=removed))
        elif ne is not None:
            self.add("enum-introduced", path, None, ne,
                     f"restricted to {_fmt(ne)}; other values are rejected", REQ,
                     keyword=kw, definition=d, ctx=self.ctx(o, n, path))
        else:
            self.add("enum-dropped", path, oe, None,
                     "enum restriction removed; old clients reject new values", RESP,
                     keyword=kw, definition=d, ctx=self.ctx(o, n, path))

    def defaults(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
                 consumed: set[str]) -> None:
        consumed.add("default")
        if _canon(o.get("default")) == _canon(n.get("default")) and (
                ("default" in o) == ("default" in n)):
            return
        ctx = self.ctx(o, n, path, old_default=o.get("default"),
                       new_default=n.get("default"))
        if "default" not in o:
            self.add("default-added", path, None, n["default"],
                     f"default {json.dumps(n['default'])} added; objects that omit the "
                     "field now change meaning", BOTH, keyword="default", definition=d,
                     ctx=ctx)
        elif "default" not in n:
            self.add("default-removed", path, o["default"], None,
                     "default removed; objects that omit the field now change meaning",
                     BOTH, keyword="default", definition=d, ctx=ctx)
        else:
            self.add("default-changed", path, o["default"], n["default"],
                     f"default {json.dumps(o['default'])} -> {json.dumps(n['default'])}",
                     BOTH, keyword="default", definition=d, ctx=ctx)

    def bounds(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
               consumed: set[str]) -> None:
        for kw, sign in _BOUNDS.items():
            ov, nv = o.get(kw), n.get(kw)
            consumed.add(kw)
            if kw in _NEUTRAL:  # minLength: 0 says nothing: read it as absent
                ov = None if ov == 0 else ov
                nv = None if nv == 0 else nv
            if ov == nv:
                continue
            if (ov is not None and not _num(ov)) or (nv is not None and not _num(nv)):
                consumed.discard(kw)
                continue
            if ov is None:
                tighter = True
            elif nv is None:
                tighter = False
            else:
                tighter = (nv - ov) * sign > 0
            cands: list[Any] = []
            for v in (ov, nv):
                if v is None:
                    continue
                if kw.endswith(("imum",)):
                    cands += [v, v - 1, v + 1, v - 0.5, v + 0.5]
                elif kw.endswith("Length"):
                    cands += ["a" * int(k) for k in (v - 1, v, v + 1) if 0 <= k <= 10_000]
                elif kw.endswith("Items"):
                    cands += [Repeat(int(k)) for k in (v - 1, v + 1) if 0 <= k <= 10_000]
            self.bound(kw, ov, nv, tighter=tighter, path=path, d=d, o=o, n=n,
                       cands=cands)
        consumed.update({"multipleOf", "uniqueItems"})
        ov, nv = o.get("multipleOf"), n.get("multipleOf")
        if ov != nv:
            if ov is None:
                t: bool | None = True
            elif nv is None:
                t = False
            elif _divides(ov, nv):
                t = True
            elif _divides(nv, ov):
                t = False
            else:
                t = None
            cands = [v for v in (ov, nv) if v is not None]
            self.bound("multipleOf", ov, nv, tighter=t, path=path, d=d, o=o, n=n,
                       cands=cands)
        ou, nu = bool(o.get("uniqueItems")), bool(n.get("uniqueItems"))
        if ou != nu:
            self.bound("uniqueItems", o.get("uniqueItems"), n.get("uniqueItems"), tighter=nu,
                       path=path, d=d, o=o, n=n, cands=[])

    def bound(self, kw: str, ov: Any, nv: Any, *, tighter: bool | None, path: str,
              d: str, o: dict[str, Any], n: dict[str, Any], cands: list[Any]) -> None:
        if tighter is None:
            self.add("bound-tightened", path, ov, nv,
                     f"{kw} {ov} -> {nv}: each accepts values the other rejects", BOTH,
                     keyword=kw, definition=d, ctx=self.ctx(o, n, path, candidates=cands))
        elif tighter:
            self.add("bound-tightened", path, ov, nv,
                     f"{kw} {_show(ov)} -> {_show(nv)}: values old clients send may be "
                     "rejected", REQ, keyword=kw, definition=d,
                     ctx=self.ctx(o, n, path, candidates=cands))
        else:
            self.add("bound-relaxed", path, ov, nv,
                     f"{kw} {_show(ov)} -> {_show(nv)}: the server may return values old "
                     "clients reject", RESP, keyword=kw, definition=d,
                     ctx=self.ctx(o, n, path, candidates=cands))

    def pattern_format(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
                       consumed: set[str]) -> None:
        consumed.update({"pattern", "format"})
        op, np_ = o.get("pattern"), n.get("pattern")
        if op != np_:
            # string equality proves nothing: the witness search decides the sides
            self.add("pattern-changed", path, op, np_,
                     f"pattern {op!r} -> {np_!r}", BOTH, keyword="pattern", definition=d,
                     ctx=self.ctx(o, n, path, decide=True))
        of, nf = o.get("format"), n.get("format")
        if of != nf:
            if of is None:
                breaks = REQ
            elif nf is None or (of, nf) in _FORMAT_WIDENINGS:
                breaks = RESP
            elif (nf, of) in _FORMAT_WIDENINGS:
                breaks = REQ
            else:
                breaks = BOTH
            self.add("format-changed", path, of, nf, f"format {of!r} -> {nf!r}", breaks,
                     keyword="format", definition=d,
                     ctx=self.ctx(o, n, path, candidates=[2**31, -(2**31) - 1]))

    def kubernetes(self, o: dict[str, Any], n: dict[str, Any], path: str, *, d: str,
                   consumed: set[str]) -> None:
        consumed.update({"x-kubernetes-list-type", "x-kubernetes-list-map-keys",
                         "x-kubernetes-map-type", "x-kubernetes-validations"})
        is_array = "items" in o or "items" in n
        if is_array:
            olt, okeys = _list_semantics(o)
            nlt, nkeys = _list_semantics(n)
            if olt != nlt:
                self.add("list-type-changed", path, o.get("x-kubernetes-list-type"),
                         n.get("x-kubernetes-list-type"),
                         f"list-type {olt}{okeys or ''} -> {nlt}{nkeys or ''}: merge "
                         "semantics and uniqueness change", BOTH,
                         keyword="x-kubernetes-list-type", definition=d,
                         ctx=self.ctx(o, n, path))
            elif okeys != nkeys:
                self.add("list-map-keys-changed", path, o.get("x-kubernetes-list-map-keys"),
                         n.get("x-kubernetes-list-map-keys"),
                         f"list-map-keys {okeys} -> {nkeys}: items merge and must be unique "
                         "by other keys", BOTH, keyword="x-kubernetes-list-map-keys",
                         definition=d, ctx=self.ctx(o, n, path))
        is_obj = not is_array
        omt = o.get("x-kubernetes-map-type", "granular")
        nmt = n.get("x-kubernetes-map-type", "granular")
        if is_obj and omt != nmt:
            self.add("map-type-changed", path, o.get("x-kubernetes-map-type"),
                     n.get("x-kubernetes-map-type"),
                     f"map-type {omt} -> {nmt}: server-side apply merges differently", BOTH,
                     keyword="x-kubernetes-map-type", definition=d, ctx=self.ctx(o, n, path))
        orules = [r.get("rule") for r in o.get("x-kubernetes-validations") or []
                  if isinstance(r, Mapping)]
        nrules = [r.get("rule") for r in n.get("x-kubernetes-validations") or []
                  if isinstance(r, Mapping)]
        added = [r for r in nrules if r not in orules]
        removed = [r for r in orules if r not in nrules]
        if added or removed:
            breaks = (REQ if added else NONE) | (RESP if removed else NONE)
            msg = "; ".join(
                [f"rule added: {r}" for r in added] + [f"rule removed: {r}" for r in removed])
            self.add("validations-changed", path, removed, added, msg, breaks,
                     keyword="x-kubernetes-validations", definition=d,
                     ctx=self.ctx(o, n, path))


def _list_semantics(node: Mapping[str, Any]) -> tuple[str, list[str]]:
    """How a list merges: (list-type, map keys), reading strategic-merge-patch markers too.

    Built-in kinds long declared merge-by-key with ``x-kubernetes-patch-strategy: merge`` +
    ``x-kubernetes-patch-merge-key`` and only later (1.30) also published the equivalent
    ``x-kubernetes-list-type: map``; reading both the same way keeps that from looking like
    a change in merge semantics.
    """
    lt = node.get("x-kubernetes-list-type")
    keys = sorted(node.get("x-kubernetes-list-map-keys") or [])
    if lt is None:
        strategy = str(node.get("x-kubernetes-patch-strategy") or "")
        key = node.get("x-kubernetes-patch-merge-key")
        if "merge" in strategy.split(","):
            return ("map", [key]) if key else ("set", [])
        return "atomic", keys
    return str(lt), keys


def _divides(a: float, b: float) -> bool:
    """True when every multiple of ``b`` is a multiple of ``a`` (``b`` is a multiple of ``a``)."""
    if a == 0:
        return False
    q = b / a
    return math.isclose(q, round(q), rel_tol=0, abs_tol=1e-9)


def _show(v: Any) -> str:
    return "none" if v is None else json.dumps(v)


def walk(old: Schema, new: Schema, *, version: str = "",
         pruning: bool | None = None) -> Iterator[Finding]:
    """Yield the static findings between two schemas, in walk order.

    ``pruning`` (default: either schema is a Kubernetes one) means unknown fields are
    dropped by the server rather than rejected, which makes adding a field harmless and
    removing one a silent data loss.
    """
    yield from walk_with_aliases(old, new, version=version, pruning=pruning)[0]


def walk_with_aliases(old: Schema, new: Schema, *, version: str = "",
                      pruning: bool | None = None,
                      ) -> tuple[list[Finding], list[tuple[str, str]]]:
    """Like :func:`walk`, plus the aliases of memoised definitions.

    A shared definition is reported at the first path that reaches it; ``(first, other)``
    pairs say where else it sits, so a witness at ``other...`` is matched to the finding.
    """
    if pruning is None:
        pruning = old.kubernetes or new.kubernetes
    w = _Walker(old, new, version=version, pruning=pruning)
    w.walk(old.root, new.root, "")
    return w.out, w.aliases


def _gaps(schemas: Mapping[str, Schema]) -> dict[tuple[str, str], tuple[str, Any, Finding]]:
    """``(path, lacking version) -> (defaulting version, value, finding)`` in one CRD."""
    names = list(schemas)
    out: dict[tuple[str, str], tuple[str, Any, Finding]] = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            w = _Walker(schemas[a], schemas[b], version=f"{a}/{b}", defaults_only=True)
            w.walk(schemas[a].root, schemas[b].root, "")
            for f in w.out:
                if f.rule not in ("default-added", "default-removed"):
                    continue
                has, lacks = (b, a) if f.rule == "default-added" else (a, b)
                value = f.new if f.rule == "default-added" else f.old
                if value is not None:
                    out.setdefault((f.path, lacks), (has, value, f))
    return out


def default_gaps(new: Mapping[str, Schema],
                 old: Mapping[str, Schema] | None = None) -> Iterator[Finding]:
    """Yield ``default-missing-in-version``: a field defaulted in one served version of
    NEW but not in another, unless OLD already had that gap (same field, same version).

    Kubernetes converts between versions on every read, so a field defaulted in v1 but not
    in v1beta1 round-trips differently depending on the version a client uses. A gap OLD
    already had is not a change (diffing a CRD against itself reports nothing); a version
    only NEW serves is included (its gaps are all new).
    """
    before = _gaps(old) if old else {}
    for (path, lacks), (has, value, f) in _gaps(new).items():
        if (path, lacks) in before:
            continue
        yield f.evolve(
            rule="default-missing-in-version", version=lacks, old=None, new=value,
            message=f"defaulted to {json.dumps(value)} in {has} of NEW but has no default "
            f"in {lacks} of NEW", keyword="default", context=None,
        )
