"""The CEL part of the strategy compiler: rules met by construction, then checked.

Why a module of its own: ``Compiler`` (``_compile``) draws values shape by shape; what a
node's ``x-kubernetes-validations`` add on top (the refined schema and per-value repair of
``_cel_construct``, the filter that checks every supported rule, its cost bound and its
reports) is one concern, kept here as a mixin so that ``_compile`` stays about shapes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from compatfuzz.errors import UnsupportedRuleWarning
from compatfuzz.schema import Schema
from compatfuzz.strategies._cel_shapes import deref
from compatfuzz.strategies._identity import item_key, repeated
from compatfuzz.strategies._overrides import rare_values_warning

__all__ = ["GENERATION_COST_LIMIT", "GENERATION_COST_STRIKES", "RETRIES", "CelCompiling",
           "CelFilterStats", "Gen", "path_text"]

#: ``gen(draw, ex) -> value``, ``ex`` the per-example state (``_compile_base.Example``)
Gen = Callable[[st.DrawFn, Any], Any]
RETRIES = 5
_CEL_SAMPLE = 100  # checks after which a rule that rejects > 95% of values is reported


def path_text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int) or part == "[*]":
            out += "[*]"
        elif out:
            out += "." + part
        else:
            out = part
    return out


@dataclass
class CelFilterStats:
    """How often the values drawn at one node met its CEL rules, where some of them
    are not recognised (``_cel_shapes``) and so are met by filtering alone."""

    rules: tuple[str, ...]
    checks: int = 0
    passes: int = 0


class CelCompiling:
    """``Compiler``'s CEL methods; the attributes below are the compiler's own."""

    schema: Schema
    _warned: set[tuple[str, str]]
    cel_filtered: dict[str, CelFilterStats]
    _below: dict[int, tuple[Any, Any]]

    def compile(self, node: Any, path: tuple[str | int, ...] = (),
                ref_name: str | None = None, stack: tuple[str, ...] = (),
                overridden: bool = False) -> Gen:
        raise NotImplementedError  # pragma: no cover - Compiler.compile

    def filtered(self, gen: Gen, ok: Callable[[Any], bool]) -> Gen:
        raise NotImplementedError  # pragma: no cover - Compiler.filtered

    def with_repair(self, gen: Gen, node: Mapping[str, Any], made: Any,
                    path: tuple[str | int, ...], stack: tuple[str, ...]) -> Gen:
        """``gen`` with the node's recognised CEL rules made true on each value
        (``_cel_construct.Repair``); the fields a repair adds are drawn from the
        refined schema's own generators, so overrides and rules below still apply."""
        from compatfuzz.strategies._cel import compile_rules
        from compatfuzz.strategies._cel_construct import Repair

        repairs = made.repairs
        if not repairs:
            return gen
        gens: dict[tuple[str | int, ...], Gen | None] = {}
        resolve = self.schema.resolve

        def schema_at(rel: tuple[str | int, ...]) -> Mapping[str, Any] | None:
            sub: Any = made.node
            for key in rel:
                sub = deref(sub, resolve)
                if not isinstance(sub, Mapping):
                    return None
                if isinstance(key, int):
                    sub = sub.get("items")
                else:
                    props = sub.get("properties") or {}
                    extra = sub.get("additionalProperties")
                    sub = props.get(key) if key in props else (
                        extra if isinstance(extra, Mapping) else None)
            sub = deref(sub, resolve)
            return sub if isinstance(sub, Mapping) else None

        def gen_at(rel: tuple[str | int, ...]) -> Gen | None:
            if rel not in gens:
                sub = schema_at(rel)
                child = (*path, *("[*]" if isinstance(k, int) else k for k in rel))
                gens[rel] = None if sub is None or not rel else self.compile(
                    sub, child, None, stack)
            return gens[rel]

        opaque: dict[tuple[str, bool], Any] = {}
        bare = {k: v for k, v in node.items() if k != "x-kubernetes-validations"}

        def holds(text: str, positive: bool, value: Any) -> bool:
            rules = opaque.get((text, positive))
            if rules is None:
                rule = text if positive else f"!({text})"
                rules = compile_rules({**bare, "x-kubernetes-validations": [{"rule": rule}]},
                                      resolve=resolve, cost_limit=GENERATION_COST_LIMIT,
                              give_up_after=GENERATION_COST_STRIKES)
                opaque[(text, positive)] = rules
            return bool(rules.check(value))

        variants: dict[tuple[Any, ...], Any] = {}

        def variant(rel: tuple[str | int, ...], rule: str, *, keys: bool = False) -> Any:
            if (rel, rule, keys) not in variants:
                sub = {"type": "string"} if keys else schema_at(rel)
                if sub is None:
                    variants[(rel, rule, keys)] = None
                else:
                    sub = {**sub, "x-kubernetes-validations": [
                        *sub.get("x-kubernetes-validations", []), {"rule": rule}]}
                    child = (*path, *("[*]" if isinstance(k, int) else "*" for k in rel))
                    variants[(rel, rule, keys)] = (
                        self.compile(sub, child, None, stack),
                        compile_rules(sub, resolve=resolve,
                                      cost_limit=GENERATION_COST_LIMIT,
                              give_up_after=GENERATION_COST_STRIKES).check)
            return variants[(rel, rule, keys)]

        repair = Repair(repairs, gen_at, schema_at, holds, variant, resolve)

        def repaired(draw: st.DrawFn, ex: Any) -> Any:
            for _ in range(RETRIES):
                value, deep = repair(gen(draw, ex), draw, ex)
                if not deep or self.rules_below_hold(made.node, value):
                    return value
            assume(False)
            return None  # pragma: no cover - assume() raised

        return repaired

    def rules_below_hold(self, node: Any, value: Any, depth: int = 0) -> bool:
        """Whether the CEL rules of the nodes below ``node`` hold on ``value``'s parts,
        and its lists (``node`` itself included) hold no repeated item (a repair that set
        a field deep inside a child, or replaced a list's item, may break one of them)."""
        from compatfuzz.strategies._cel import compile_rules

        seen = 0  # the $ref's target itself (not a merged copy): its compiled rules are kept
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and seen < 16:
            node = self.schema.resolve(node["$ref"])
            seen += 1
        if not isinstance(node, Mapping) or value is None or depth > 64:
            return True
        if depth and node.get("x-kubernetes-validations"):
            key = id(node)
            rules = self._below.get(key)
            if rules is None or rules[0] is not node:
                rules = (node, compile_rules(node, resolve=self.schema.resolve,
                                             cost_limit=GENERATION_COST_LIMIT,
                              give_up_after=GENERATION_COST_STRIKES))
                self._below[key] = rules
            if not rules[1].check(value):
                return False
        if isinstance(value, dict):
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            for k, v in value.items():
                sub = props.get(k) if k in props else (
                    extra if isinstance(extra, Mapping) else None)
                if sub is not None and not self.rules_below_hold(sub, v, depth + 1):
                    return False
        elif isinstance(value, list):
            same = item_key(node, self.schema.resolve)
            if same is not None and repeated(same, value):
                return False
            if isinstance(node.get("items"), Mapping):
                return all(self.rules_below_hold(node["items"], v, depth + 1) for v in value)
        return True

    def with_cel(self, gen: Gen, node: Mapping[str, Any], path: tuple[str | int, ...],
                 exact: frozenset[str] = frozenset()) -> Gen:
        from compatfuzz.strategies._cel import compile_rules

        where = path_text(path) or "<root>"
        rules = compile_rules(node, path=where, resolve=self.schema.resolve,
                              cost_limit=GENERATION_COST_LIMIT,
                              give_up_after=GENERATION_COST_STRIKES)
        filtered = tuple(r for r in rules.supported if r not in exact)
        if filtered:
            stats = self.cel_filtered.setdefault(where, CelFilterStats(filtered))
        for bad in rules.unsupported:
            key = (bad.rule, where)
            if key not in self._warned:
                self._warned.add(key)
                warnings.warn(
                    f"{self.schema.name or self.schema.source}: x-kubernetes-validations rule "
                    f"at {where} is not enforced when generating ({bad.reason}): {bad.rule}",
                    UnsupportedRuleWarning, stacklevel=2,
                )
        if not rules.supported:
            return gen
        check = self.watched(self.affordable(rules, where), where)
        if filtered:
            def counted(value: Any) -> bool:
                ok = check(value)
                stats.checks += 1
                stats.passes += ok
                return ok

            return self.filtered(gen, counted)
        return self.filtered(gen, check)

    def affordable(self, rules: Any, where: str) -> Callable[[Any], bool]:
        """``rules.check`` while the rules stay cheap to evaluate; after
        :data:`GENERATION_COST_STRIKES` values whose check ran past
        :data:`GENERATION_COST_LIMIT` (counted per rule across the process, repairs
        included), the rule stops filtering generation (one warning per node).

        Why: cel-python spends about 25 µs per cost unit where cel-go spends well under
        one, so a rule within the API server's budget (1,000,000 a call,
        ``k8s.io/apiserver/pkg/apis/cel/config.go``) could cost seconds per value, and a
        filter that rejects such values would retry until the run's time ran out (issue
        22 audit: six nested ``.all()`` over ten items). Only generation gives up: the
        ``valid`` property still judges each object with the server's budget.
        """
        from compatfuzz.strategies._cel import too_costly

        def check(value: Any) -> bool:
            ok: bool = rules.check(value)  # cached per value
            if not warned and any(too_costly(r, GENERATION_COST_STRIKES)
                                  for r in rules.supported):
                warned.append(True)
                warnings.warn(
                    f"{self.schema.name or self.schema.source}: x-kubernetes-validations "
                    f"at {where} cost more than {GENERATION_COST_LIMIT:,} to evaluate "
                    f"on {GENERATION_COST_STRIKES} generated values, so they are not "
                    "enforced when generating (the valid property still checks them "
                    "with the API server's budget); bound the lists and strings they "
                    "loop over with maxItems/maxLength",
                    UnsupportedRuleWarning, stacklevel=2,
                )
                return True
            return ok

        warned: list[bool] = []
        return check

    def watched(self, check: Callable[[Any], bool], where: str) -> Callable[[Any], bool]:
        """``check``, warning once when it rejects nearly every value: generation only
        filters for CEL rules, so a rule random values rarely meet would otherwise make its
        field silently vanish (Hypothesis learns to leave optional fields out)."""
        seen = [0, 0]  # checks, passes

        def counted(value: Any) -> bool:
            ok = check(value)
            seen[0] += 1
            seen[1] += ok
            if seen[0] == _CEL_SAMPLE and seen[1] * 20 < _CEL_SAMPLE:
                key = ("rarely satisfied", where)
                if key not in self._warned:
                    self._warned.add(key)
                    warnings.warn(rare_values_warning(
                        f"{self.schema.name or self.schema.source}: x-kubernetes-validations "
                        f"at {where}: only {seen[1]} of {seen[0]} generated values satisfy "
                        "the rules, so values there are rare or missing", where),
                        stacklevel=2)
            return ok

        return counted


#: CEL cost a generated value's rule check may spend (about half a second of cel-python)
#: before it counts as a strike; see ``_Compiler.affordable``.
GENERATION_COST_LIMIT = 20_000
#: Values past that limit after which a node's rules stop filtering generation.
GENERATION_COST_STRIKES = 3

