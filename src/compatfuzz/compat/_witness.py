"""The dynamic half of ``compat``: find a shrunk object that proves a break.

A rule is a claim; a witness is evidence. For a request-side break we generate values
from OLD (so they are valid there by construction) and look for one NEW rejects; for the
response side we generate from NEW and look for one OLD rejects. Hypothesis' ``find``
does the search and the shrinking, so the witness is small enough to read.

Kubernetes servers *prune* unknown fields instead of rejecting them, and clients drop
fields they do not know. With ``pruning`` on, values are pruned by the schema of the
party reading them before validation, and a request whose fields NEW silently drops
counts as a (data-loss) witness too. Without that, adding an optional field to a CRD
would look like a break and removing one would look harmless, both wrong.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from compatfuzz.compat._budget import check_budget, timed_find
from compatfuzz.compat._focus import focus
from compatfuzz.compat._model import Side, Witness
from compatfuzz.compat._static import Only, Repeat, SearchContext, With, join
from compatfuzz.schema import Schema

__all__ = ["Judge", "Rejection", "explains", "open_up", "search", "sub_schema"]

_MISSING = object()


def sub_schema(schema: Schema, node: Mapping[str, Any] | None) -> Schema:
    """Wrap a subschema of ``schema`` so its local ``$ref`` still resolve."""
    root: dict[str, Any] = dict(node or {})
    defs = schema.root.get("$defs")
    if defs is not None and "$defs" not in root:
        root["$defs"] = defs
    return Schema(root=root, source=schema.source, name=schema.name,
                  kubernetes=schema.kubernetes)


def _deref(schema: Schema, node: Any) -> Mapping[str, Any]:
    if not isinstance(node, Mapping):
        return {}
    hops = 0
    while "$ref" in node and hops < 32:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {**schema.resolve(node["$ref"]), **rest}
        hops += 1
    return dict(node)


def _known(schema: Schema, node: Mapping[str, Any]) -> tuple[dict[str, Any], Any, bool]:
    """Properties (across union/allOf branches), additionalProperties, preserve flag."""
    props: dict[str, Any] = {}
    addl: Any = node.get("additionalProperties")
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    props.update(node.get("properties") or {})
    for kw in ("allOf", "anyOf", "oneOf"):
        for b in node.get(kw) or []:
            bn = _deref(schema, b)
            bp, ba, bpr = _known(schema, bn)
            for k, v in bp.items():
                props.setdefault(k, v)
            if addl is None and ba is not None:
                addl = ba
            preserve = preserve or bpr
    return props, addl, preserve


def prune(schema: Schema, node: Any, value: Any, depth: int = 0) -> Any:
    """Drop object fields ``node`` does not know, the way the Kubernetes API server does.

    Objects with neither properties nor additionalProperties are free-form and kept whole.
    """
    if depth > 64:
        return value
    n = _deref(schema, node)
    if isinstance(value, dict):
        props, addl, preserve = _known(schema, n)
        if not props and addl is None:
            return value
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in props:
                out[k] = prune(schema, props[k], v, depth + 1)
            elif isinstance(addl, Mapping):
                out[k] = prune(schema, addl, v, depth + 1)
            elif addl is True or preserve:
                out[k] = v
            elif addl is False:
                out[k] = v  # closed content rejects rather than prunes
        return out
    if isinstance(value, list):
        items = n.get("items")
        if isinstance(items, Mapping):
            return [prune(schema, items, v, depth + 1) for v in value]
    return value


def _error_path(parts: Any) -> str:
    path = ""
    for p in parts:
        path = f"{path}[*]" if isinstance(p, int) else join(path, str(p))
    return path


def _first_dropped(before: Any, after: Any, path: str = "") -> str | None:
    if isinstance(before, dict) and isinstance(after, dict):
        for k, v in before.items():
            if k not in after and v is not None:  # dropping an explicit null loses nothing
                return join(path, k)
            if k not in after:
                continue
            hit = _first_dropped(v, after[k], join(path, k))
            if hit is not None:
                return hit
    elif isinstance(before, list) and isinstance(after, list):
        for a, b in zip(before, after, strict=False):
            hit = _first_dropped(a, b, path + "[*]")
            if hit is not None:
                return hit
    return None


@dataclass(frozen=True)
class Rejection:
    """One reason the reader refused a value: the jsonschema keyword (``error.validator``,
    ``""`` for a field dropped by pruning), where (relative to the judged schema) and the
    message."""

    keyword: str
    path: str
    message: str


@dataclass
class Verdict:
    """Why a value breaks: every rejection (the best match first) and who rejected it."""

    value: Any
    rejections: tuple[Rejection, ...]
    who: str = "NEW"

    @property
    def path(self) -> str:
        return self.rejections[0].path

    @property
    def keyword(self) -> str:
        return self.rejections[0].keyword

    @property
    def reason(self) -> str:
        return self.reason_for(self.rejections[0])

    def reason_for(self, r: Rejection) -> str:
        if r.keyword == "":
            return r.message
        return f"rejected by {self.who}: {_short(r.message)}"


@dataclass
class Judge:
    """Decide whether one value breaks OLD -> NEW on one side.

    ``old``/``new`` are (sub)schemas; with ``pruning`` each reader prunes first.
    ``keep`` filters generated values (e.g. drop ``status`` on the request side).
    """

    old: Schema
    new: Schema
    pruning: bool
    keep: Callable[[Any], Any] = field(default=lambda v: v)

    def _errors(self, schema: Schema, value: Any) -> list[Any]:
        import jsonschema.exceptions

        errors = list(schema.validator.iter_errors(value))
        if not errors:
            return []
        best = jsonschema.exceptions.best_match(errors)
        # every leaf error, the best match first: a finding is credited only with an
        # error of its own keyword at its own path, wherever best_match points
        leaves: list[Any] = []
        stack = list(errors)
        while stack:
            e = stack.pop(0)
            leaves.append(e)
            stack.extend(e.context or [])
        return [best] + [e for e in leaves if e is not best]

    def check(self, side: Side, raw: Any) -> Verdict | None:
        """Return why ``raw`` (drawn from the writer's schema) breaks ``side``, or None."""
        writer, reader = (self.old, self.new) if side is Side.REQUEST else (self.new, self.old)
        try:
            value = self.keep(raw)
            if self.pruning:
                value = prune(writer, writer.root, value)
            if not writer.is_valid(value) or _server_refuses(writer, value):
                return None
            seen = prune(reader, reader.root, value) if self.pruning else value
            errs = self._errors(reader, seen)
        except RecursionError:
            return None
        who = "NEW" if side is Side.REQUEST else "OLD"
        if errs:
            return Verdict(value, tuple(
                Rejection(str(e.validator), _error_path(e.absolute_path), _message(e))
                for e in errs), who)
        if self.pruning and side is Side.REQUEST and seen != value:
            where = _first_dropped(value, seen)
            if where is not None:
                return Verdict(value, (Rejection("", where,
                                                 f"NEW drops field {where} (data loss)"),),
                               who)
        return None


def _server_refuses(schema: Schema, value: Any) -> bool:
    """Whether the API server refuses ``value`` under ``schema`` for what JSON Schema does
    not check: duplicate keys of a list-type map or set, a failed CEL rule. A witness must
    be valid where it is written; without this the real server refused witnesses under
    the writer (Cluster API's list-map ``variables.overrides`` with a repeated key,
    Karpenter's ``requirements`` rule), seen by ``benchmarks/compat_confirm.py``."""
    from compatfuzz.apiserver._validate import beyond_json_schema

    return beyond_json_schema(value, schema) is not None


def _message(error: Any) -> str:
    """The validator's message without a long repeat of the value it rejected (the
    witness line prints the value once already): ``the value (51 characters) is too
    long`` instead of 51 ``a``s twice."""
    message = str(error.message)
    shown = repr(error.instance)
    if len(shown) <= 40 or shown not in message:
        return message
    instance = error.instance
    if isinstance(instance, str):
        what = f"the value ({len(instance)} characters)"
    elif isinstance(instance, list):
        what = f"the value ({len(instance)} items)"
    elif isinstance(instance, dict):
        what = f"the object ({len(instance)} fields)"
    else:
        what = "the value"
    return message.replace(shown, what, 1)


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _settings(budget: int) -> Any:
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    return settings(
        max_examples=budget, database=None, deadline=None, derandomize=False,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
    )


def search(judge: Judge, side: Side, *, budget: int, seed: int,
           candidates: list[Any] | None = None,
           match: Callable[[Verdict, Rejection], bool] | None = None,
           every: bool = False,
           path: str = "",
           settled: frozenset[str] = frozenset()) -> tuple[Witness | None, Verdict | None, str]:
    """Look for a witness on ``side``; return (witness, verdict, note).

    Tries ``candidates`` first (cheap, exact), then a Hypothesis search of ``budget``
    examples drawn from the writer's schema (with the reader's fields as unknown fields
    where the writer keeps them, see :func:`open_up`), shrunk. ``match`` says which
    rejections count (e.g. "this keyword at this path"): one of them, or with ``every``
    all of them; the witness reason and the returned verdict's first rejection are the
    matching one. ``note`` explains a failed search. Only fields that differ are drawn,
    less the ``settled`` ones (:func:`~._focus.focus`). Inside a budgeted search
    (``compat/_budget.py``) it raises ``OutOfBudget`` when the budget is spent before a
    witness is found.
    """
    def pick(v: Verdict | None) -> Verdict | None:
        if v is None or match is None:
            return v
        hits = [r for r in v.rejections if match(v, r)]
        if not hits or (every and len(hits) < len(v.rejections)):
            return None
        rest = tuple(r for r in v.rejections if r is not hits[0])
        return Verdict(v.value, (hits[0], *rest), v.who)

    check_budget()  # a run already spent tries nothing, not even the candidates
    # smallest first: the witness is the least that proves the finding (maxLength 100 ->
    # 50 is shown by 51 characters, not 99)
    for cand in sorted(candidates or [], key=_size):
        verdict = pick(judge.check(side, cand))
        if verdict is not None:
            return Witness(side, path, verdict.value, verdict.reason), verdict, ""
    if budget <= 0:
        return None, None, "search disabled"
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    from compatfuzz.strategies import from_schema

    writer, reader = (judge.old, judge.new) if side is Side.REQUEST else (judge.new, judge.old)
    too_large = _too_large(writer)
    if too_large is not None:
        return None, None, f"search skipped: {too_large}"
    try:
        # draw only what differs: identical optional fields cannot break (``_focus``)
        strategy = from_schema(focus(open_up(writer, reader, pruning=judge.pruning),
                                     writer, reader, settled=settled),
                               kubernetes=writer.kubernetes,
                               extra_properties=not judge.pruning)

        def hit(v: Any) -> bool:
            return pick(judge.check(side, v)) is not None

        found = timed_find(
            strategy, hit,
            settings=_settings(budget), random=random.Random(seed),
        )
    except (NoSuchExample, Unsatisfiable):
        return None, None, f"no witness in {budget} examples"
    except Exception as exc:  # a strategy that cannot be built must not sink the report
        return None, None, f"search failed: {type(exc).__name__}: {_short(str(exc), 200)}"
    verdict = pick(judge.check(side, found))
    if verdict is None:  # pragma: no cover - find() only returns satisfying values
        return None, None, "witness did not reproduce"
    return Witness(side, path, verdict.value, verdict.reason), verdict, ""


def _size(value: Any) -> tuple[int, float]:
    """Sort key: the JSON length, then the magnitude of a number (51 before 99)."""
    try:
        length = len(json.dumps(value, default=str))
    except (TypeError, ValueError):
        length = len(repr(value))
    magnitude = abs(value) if isinstance(value, int | float) and not isinstance(
        value, bool) else 0.0
    return length, float(magnitude)


def _keeps_unknown(node: Mapping[str, Any], pruning: bool) -> bool:
    """Whether an object node keeps fields it does not declare (so a writer may send any
    value under a name only the other revision declares)."""
    if node.get("x-kubernetes-preserve-unknown-fields") is True:
        return True
    if pruning or node.get("additionalProperties") not in (None, True):
        return False
    if node.get("patternProperties") or "unevaluatedProperties" in node:
        return False
    return node.get("type") in ("object", None) and (
        "properties" in node or node.get("type") == "object")


def open_up(writer: Schema, reader: Schema, *, pruning: bool) -> Schema:
    """The writer's schema for *generation*, with every property the reader declares at
    an object the writer keeps open (no ``additionalProperties``, or
    ``x-kubernetes-preserve-unknown-fields``) added as an optional free property.

    Values drawn from it are still checked against the real writer schema; the point is
    to send the names the reader knows, which random unknown keys almost never hit
    (a field added under preserve-unknown-fields, a field removed from an open object).
    """
    defs: dict[str, Any] = dict(writer.root.get("$defs") or {})
    done: set[str] = set()

    def visit(w: Any, r: Any, depth: int) -> Any:
        if not isinstance(w, Mapping) or not isinstance(r, Mapping) or depth > 48:
            return w
        ref = w.get("$ref")
        if isinstance(ref, str):
            name = ref[len("#/$defs/"):] if ref.startswith("#/$defs/") else None
            if name is not None and name in defs and name not in done and "/" not in name:
                done.add(name)
                defs[name] = visit(defs[name], _deref(reader, r), depth + 1)
            return w
        r = _deref(reader, r)
        out = dict(w)
        props = dict(w.get("properties") or {})
        rprops: Mapping[str, Any] = r.get("properties") or {}
        for k, v in props.items():
            if k in rprops:
                props[k] = visit(v, rprops[k], depth + 1)
        if _keeps_unknown(w, pruning):
            for k in rprops:
                props.setdefault(k, {})
        if props:
            out["properties"] = props
        if isinstance(w.get("items"), Mapping):
            out["items"] = visit(w["items"], r.get("items"), depth + 1)
        if isinstance(w.get("additionalProperties"), Mapping):
            out["additionalProperties"] = visit(w["additionalProperties"],
                                                r.get("additionalProperties"), depth + 1)
        return out

    root = visit(writer.root, reader.root, 0)
    if defs:
        root = {**root, "$defs": defs}
    return Schema(root=root, source=writer.source, name=writer.name,
                  kubernetes=writer.kubernetes)


def _segs(path: str) -> list[str]:
    return re.findall(r'\[[^\]]*\]|[^.\[]+', "" if path == "$" else path)


def _under(base: list[str], path: list[str], *, exact: bool = False) -> bool:
    """``path`` is ``base`` or below it (``[*]`` matches any index or key)."""
    if len(path) < len(base) or (exact and len(path) != len(base)):
        return False
    return all(a == b or "[*]" in (a, b) for a, b in zip(base, path, strict=False))


_TYPE_KEYWORDS = frozenset({"type", "anyOf", "oneOf"})
_DEEP_RULES = frozenset({"wrapped-in-union", "unwrapped-from-union", "unhandled"})
_PARENT_KEYWORDS = frozenset({"additionalProperties", "unevaluatedProperties",
                              "minProperties", "maxProperties"})


def explains(f: Any, rejection: Rejection, *, at: str = "") -> bool:
    """Whether finding ``f`` (its rule, keyword and path) accounts for ``rejection``,
    whose path is relative to ``at``: the rejecting keyword must be the one the rule is
    about, at the finding's path (a field's own subtree for field rules).

    Without this, any error at or below a finding's path "confirmed" it: a ``maxLength``
    error confirmed an added ``minLength`` that rejects nothing, and an ignored finding
    on a parent hid an unrelated break in a child.
    """
    rule = f.rule
    if rule.startswith("default-") or rule == "witness-only":
        return False
    mine = _segs(f.path)
    where = _segs(at) + _segs(rejection.path)
    k = rejection.keyword
    if rule in ("field-added", "field-removed", "field-renamed"):
        fields = [mine]
        if rule == "field-renamed" and isinstance(f.new, str):
            fields.append([*mine[:-1], *_segs(join("", f.new))])
        if any(_under(x, where) for x in fields):
            return True
        if not _under(mine[:-1], where, exact=True):
            return False
        # a renamed required field: objects under the old name lack the new one
        names = (f.old, f.new) if rule == "field-renamed" else ()
        return k in _PARENT_KEYWORDS or (k == "required" and any(
            isinstance(x, str) and repr(x) in rejection.message for x in names))
    if rule in ("required-added", "required-removed"):
        name = mine[-1].strip('[]"') if mine else ""
        return (k == "required" and _under(mine[:-1], where, exact=True)
                and repr(name) in rejection.message)
    if rule in ("content-closed", "content-opened"):
        if k == "":  # a field pruned (data loss) below this object
            return _under(mine, where)
        if _under(mine, where, exact=True):
            return k in _PARENT_KEYWORDS | {"propertyNames"}
        # unknown fields validated by an additionalProperties schema
        schema_valued = isinstance(f.old, Mapping) or isinstance(f.new, Mapping)
        return schema_valued and len(where) == len(mine) + 1 and _under(mine, where)
    if rule in ("union-branch-added", "union-branch-removed"):
        # the union itself refuses it (no branch, or two, match): a type error on one of
        # the node's own properties is that property's finding, not the union's
        return _under(mine, where, exact=True) and k in ("oneOf", "anyOf")
    if rule in _DEEP_RULES:
        return _under(mine, where)
    if not _under(mine, where, exact=True):
        return False
    if rule in ("enum-value-added", "enum-value-removed", "enum-introduced", "enum-dropped"):
        return k in ("enum", "const")
    if rule in ("type-changed", "singular-to-plural", "plural-to-singular"):
        return k in _TYPE_KEYWORDS
    if rule == "nullable-changed":
        return k in _TYPE_KEYWORDS | {"enum", "const"}
    return bool(k) and k == f.keyword


def witness_for(f: Any, side: Side, *, pruning: bool, budget: int,
                seed: int) -> tuple[Witness | None, str]:
    """Search a witness for one static finding, using its :class:`SearchContext`."""
    ctx: SearchContext = f.context
    old = sub_schema(ctx.old_schema, ctx.old)
    new = sub_schema(ctx.new_schema, ctx.new)
    judge = Judge(old, new, pruning)
    where = ctx.path
    fld = ctx.field
    renamed_to = f.new if f.rule == "field-renamed" else None

    def relevant(v: Verdict, r: Rejection) -> bool:
        # the break must be *this* change (its keyword at its path), not a deeper one
        # or another keyword with its own finding
        if not explains(f, r, at=where):
            return False
        # at the parent (additionalProperties...), the value must hold this field: else
        # it is a witness for another field of the same object
        return not (fld is not None and r.path == "" and isinstance(v.value, dict)
                    and f.rule.startswith("field-") and fld not in v.value
                    and (renamed_to is None or renamed_to not in v.value))

    writer = old if side is Side.REQUEST else new
    cands = [_repeat(c, writer, seed) if isinstance(c, Repeat)
             else _only(c, writer, seed) if isinstance(c, (Only, With)) else c
             for c in ctx.candidates]
    w, _, note = search(judge, side, budget=budget, seed=seed, candidates=cands,
                        match=relevant, path=where)
    return w, note


@lru_cache(maxsize=64)
def _too_large(schema: Schema) -> str | None:
    """Why values of ``schema`` cannot be generated (a minimum size past what Hypothesis
    can draw: ``minItems: 1e6`` searched for 90 s), or ``None``."""
    from compatfuzz.errors import UnsupportedSchema
    from compatfuzz.schema._limits import check_generation_limits

    try:
        check_generation_limits(schema)
    except UnsupportedSchema as exc:
        return str(exc).split("\n")[0]
    return None


def _one_value(writer: Schema, node: Any, seed: int,
               good: Callable[[Any], bool] = lambda _: True) -> Any:
    """One (shrunk) value valid under ``node`` for which ``good`` holds, or ``_MISSING``."""
    from compatfuzz.strategies import from_schema

    if _too_large(writer) is not None:
        return _MISSING
    try:
        return timed_find(from_schema(sub_schema(writer, _deref(writer, node))), good,
                    settings=_settings(20), random=random.Random(seed))
    except Exception:  # no value can be generated: no candidate
        return _MISSING


def _only(c: Only | With, writer: Schema, seed: int) -> Any:
    """``{field: value}`` (what an old client sees pruned to ``{}``) for :class:`Only`;
    the smallest valid object plus ``field`` for :class:`With`."""
    prop = (_deref(writer, writer.root).get("properties") or {}).get(c.field)
    if prop is None:
        return None
    value = _one_value(writer, prop, seed)
    if value is _MISSING:
        return None
    base: Any = {}
    if isinstance(c, With):
        base = _one_value(writer, writer.root, seed)
        if not isinstance(base, dict):
            return None
    return {**base, c.field: value}


def _repeat(c: Repeat, writer: Schema, seed: int) -> Any:
    """Build ``count`` items valid under the writer's list (or None): copies of one item,
    made distinct where the list is a ``map`` (its keys) or a ``set`` (the server refuses
    duplicates there). The judge checks the result as the server would (CEL rules on the
    list included: Karpenter's ``requirements`` needs values for each ``In``), so a list
    this cannot make valid gets no witness rather than a wrong one."""
    node = _deref(writer, writer.root)
    items = node.get("items")
    if not isinstance(items, Mapping) or node.get("uniqueItems"):
        return None
    kind = node.get("x-kubernetes-list-type")
    def good(item: Any) -> bool:
        # a rule over the whole list judges each item (Karpenter: every ``In`` has
        # values): look for an item whose repetition the writer's rules accept
        return not (node.get("x-kubernetes-validations")
                    and _server_refuses(writer, [item, item]))

    item = _one_value(writer, items, seed, good)
    if item is _MISSING:
        return None
    if kind == "set":
        return [_nth(item, i) for i in range(c.count)]
    if kind == "map" and isinstance(item, dict):
        keys = [k for k in node.get("x-kubernetes-list-map-keys") or () if k in item]
        if not keys:
            return None
        return [{**item, keys[0]: _nth(item[keys[0]], i)} for i in range(c.count)]
    return [item] * c.count


def _nth(value: Any, i: int) -> Any:
    """The ``i``-th distinct value of ``value``'s type (for list-map keys and sets)."""
    if isinstance(value, bool):
        return value if i == 0 else None  # two at most: the judge refuses the rest
    if isinstance(value, int | float):
        return value + i
    if isinstance(value, str):
        return value + (str(i) if i else "")
    return value
