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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compatfuzz.compat._model import Side, Witness
from compatfuzz.compat._static import Only, Repeat, SearchContext, With, join
from compatfuzz.schema import Schema

__all__ = ["Judge", "search", "sub_schema"]

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


@dataclass
class Verdict:
    """Why a value breaks: the validator message (or the dropped field) and where."""

    value: Any
    reason: str
    path: str
    keyword: str = ""


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

    def _errors(self, schema: Schema, value: Any) -> Any:
        import jsonschema.exceptions

        errors = list(schema.validator.iter_errors(value))
        if not errors:
            return None
        return jsonschema.exceptions.best_match(errors)

    def check(self, side: Side, raw: Any) -> Verdict | None:
        """Return why ``raw`` (drawn from the writer's schema) breaks ``side``, or None."""
        writer, reader = (self.old, self.new) if side is Side.REQUEST else (self.new, self.old)
        try:
            value = self.keep(raw)
            if self.pruning:
                value = prune(writer, writer.root, value)
            if not writer.is_valid(value):
                return None
            seen = prune(reader, reader.root, value) if self.pruning else value
            err = self._errors(reader, seen)
        except RecursionError:
            return None
        if err is not None:
            who = "NEW" if side is Side.REQUEST else "OLD"
            return Verdict(value, f"rejected by {who}: {_short(err.message)}",
                           _error_path(err.absolute_path), str(err.validator))
        if self.pruning and side is Side.REQUEST and seen != value:
            where = _first_dropped(value, seen)
            if where is not None:
                return Verdict(value, f"NEW drops field {where} (data loss)", where)
        return None


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _settings(budget: int) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    return settings(
        max_examples=budget, database=None, deadline=None, derandomize=False,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )


def search(judge: Judge, side: Side, *, budget: int, seed: int,
           candidates: list[Any] | None = None,
           condition: Callable[[Verdict], bool] | None = None,
           path: str = "") -> tuple[Witness | None, Verdict | None, str]:
    """Look for a witness on ``side``; return (witness, verdict, note).

    Tries ``candidates`` first (cheap, exact), then a Hypothesis search of ``budget``
    examples drawn from the writer's schema, shrunk. ``condition`` narrows what counts
    (e.g. "the defaulted field is absent"). ``note`` explains a failed search.
    """
    def extra(v: Verdict) -> bool:
        return condition is None or condition(v)

    for cand in candidates or []:
        verdict = judge.check(side, cand)
        if verdict is not None and extra(verdict):
            return Witness(side, path, verdict.value, verdict.reason), verdict, ""
    if budget <= 0:
        return None, None, "search disabled"
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    from compatfuzz.strategies import from_schema

    writer = judge.old if side is Side.REQUEST else judge.new
    try:
        strategy = from_schema(writer)
        def hit(v: Any) -> bool:
            r = judge.check(side, v)
            return r is not None and extra(r)

        found = find(
            strategy, hit,
            settings=_settings(budget), random=random.Random(seed),
        )
    except (NoSuchExample, Unsatisfiable):
        return None, None, f"no witness in {budget} examples"
    except Exception as exc:  # a strategy that cannot be built must not sink the report
        return None, None, f"search failed: {type(exc).__name__}: {_short(str(exc), 200)}"
    verdict = judge.check(side, found)
    if verdict is None:  # pragma: no cover - find() only returns satisfying values
        return None, None, "witness did not reproduce"
    return Witness(side, path, verdict.value, verdict.reason), verdict, ""


def witness_for(ctx: SearchContext, side: Side, *, pruning: bool, budget: int,
                seed: int) -> tuple[Witness | None, str]:
    """Search a witness for one static finding, using its :class:`SearchContext`."""
    old = sub_schema(ctx.old_schema, ctx.old)
    new = sub_schema(ctx.new_schema, ctx.new)
    judge = Judge(old, new, pruning)
    where = ctx.path
    if ctx.rule.startswith("default-"):
        return _default_witness(ctx, side, pruning=pruning, budget=budget, seed=seed)
    fld = ctx.field

    def relevant(v: Verdict) -> bool:
        # the break must be *this* change, not a deeper one with its own finding
        if fld is None:
            return v.path == ""
        mine = join("", fld)
        if v.path == mine or v.path.startswith((mine + ".", mine + "[")):
            return True
        if v.path != "":
            return False
        if isinstance(v.value, dict) and fld not in v.value and ctx.rule.startswith("field-"):
            return False  # a witness for another field of the same object
        if ctx.rule.startswith("required-"):
            return v.keyword == "required" and repr(fld) in v.reason
        # a field change shows at the parent as unexpected/too few properties
        return v.keyword in ("additionalProperties", "unevaluatedProperties",
                             "minProperties", "maxProperties")

    writer = old if side is Side.REQUEST else new
    cands = [_repeat(c, writer, seed) if isinstance(c, Repeat)
             else _only(c, writer, seed) if isinstance(c, (Only, With)) else c
             for c in ctx.candidates]
    w, _, note = search(judge, side, budget=budget, seed=seed, candidates=cands,
                        condition=relevant, path=where)
    return w, note


def _one_value(writer: Schema, node: Any, seed: int) -> Any:
    """One (shrunk) value valid under ``node``, or ``_MISSING``."""
    from hypothesis import find

    from compatfuzz.strategies import from_schema

    try:
        return find(from_schema(sub_schema(writer, _deref(writer, node))), lambda _: True,
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
    """Build ``count`` copies of one item valid under the writer's ``items`` (or None)."""
    items = _deref(writer, writer.root).get("items")
    if not isinstance(items, Mapping) or _deref(writer, writer.root).get("uniqueItems"):
        return None
    item = _one_value(writer, items, seed)
    return None if item is _MISSING else [item] * c.count


def _default_witness(ctx: SearchContext, side: Side, *, pruning: bool, budget: int,
                     seed: int) -> tuple[Witness | None, str]:
    """A default change is proven by an omitted field: both accept it, they fill it in
    differently. Defaults are checked at the field itself: "absent" is the whole value."""
    o, n = ctx.old_default, ctx.new_default
    if _canon(o) == _canon(n):
        return None, "defaults equal"
    reason = (f"omitted value is defaulted to {_show(o)} by OLD and to {_show(n)} by NEW")
    return Witness(side, ctx.path, "<omitted>", reason), ""


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _show(v: Any) -> str:
    return "nothing" if v is None else json.dumps(v)
