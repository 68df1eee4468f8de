"""The cost of a whole CRD's rules as apiextensions-apiserver counts it.

Split from ``_cel_cost`` (which estimates one rule): how often a rule can run and what
the server says when the estimates are too high. A port of k8s.io/apiextensions-apiserver
v0.37.2 ``pkg/apis/apiextensions/validation/cel_validation.go`` (``extractMaxElements``,
``childContext``, ``TotalCost.ObserveExpressionCost``), ``validation.go``
(``ValidateCustomResourceDefinitionOpenAPISchema``'s walk, ``getExpressionCost``,
``getCostErrorMessage``, the per-rule and per-CRD limits) and
``pkg/apiserver/schema/cel/compilation.go`` (``maxCardinality``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compatfuzz.strategies._cel_cost import (
    STATIC_CRD_LIMIT,
    STATIC_RULE_LIMIT,
    message_cost,
    rule_cost,
)
from compatfuzz.strategies._cel_cost_library import U64
from compatfuzz.strategies._cel_types import MAX_REQUEST_SIZE, DeclT, decl_type, normal

__all__ = [
    "CostVerdict",
    "RuleCost",
    "cardinality_factor",
    "cost_error_message",
    "crd_cost_errors",
    "crd_cost_problems",
    "crd_rule_costs",
    "expression_cost",
    "unbounded_cardinality",
]


def cardinality_factor(node: Mapping[str, Any], resolve: Any) -> int | None:
    """apiextensions ``extractMaxElements``: how many children of ``node`` one value
    holds at most: ``maxItems``/``maxProperties`` for lists and maps, 1 for objects and
    scalars, ``None`` (unbounded) for a list or map without a maximum."""
    node = normal(node, resolve)
    kind = node.get("type")
    if kind == "object":
        if "additionalProperties" in node and node.get("additionalProperties") is not False:
            return _whole(node.get("maxProperties"))
        return 1
    if kind == "array":
        return _whole(node.get("maxItems"))
    return 1


def _whole(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return max(0, int(value))


def unbounded_cardinality(node: Mapping[str, Any], resolve: Any, *,
                          root: bool = False) -> int:
    """apiextensions ``maxCardinality(declType.MinSerializedSize)``: how often a value
    this small fits in one request, for a rule under a list or map without a maximum."""
    n = normal(node, resolve)
    decl = decl_type(n, root=root or n.get("x-kubernetes-embedded-resource") is True,
                     resolve=resolve)
    size = decl.min_size if decl is not None else 0
    return MAX_REQUEST_SIZE // (size + 1)


def expression_cost(cost: int, cardinality: int | None, node: Mapping[str, Any],
                    resolve: Any, *, root: bool = False, decl: DeclT | None = None) -> int:
    """apiextensions ``getExpressionCost``: the rule's cost times how often it can run
    (the enclosing lists' and maps' maxima, else what fits in one request)."""
    if cardinality is not None:
        times = cardinality
    elif decl is not None:
        times = MAX_REQUEST_SIZE // (decl.min_size + 1)
    else:
        times = unbounded_cardinality(node, resolve, root=root)
    return min(cost * times, U64)


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """apiextensions ``getCostErrorMessage``, word for word."""
    ratio = float(cost) / float(limit)
    if ratio > 100.0:
        factor_text = "more than 100x"
    elif ratio < 1.5:
        factor_text = f"{ratio:f}x"
    else:
        factor_text = f"{ratio:.1f}x"
    return (f"{name} exceeds budget by factor of {factor_text} (try simplifying the rule, "
            "or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
            "strings are declared)")


# --------------------------------------------------------------------------- per CRD


class RuleCost:
    """One compiled expression of a CRD: where it is (schema ``tokens``, then
    ``x-kubernetes-validations``, ``index``, ``key``), its text, ``MaxCost`` (``None``:
    it does not compile) and its cost times the cardinality (``getExpressionCost``)."""

    __slots__ = ("cost", "index", "key", "node", "raw", "root", "text", "tokens")

    def __init__(self, tokens: tuple[str, ...], index: int, key: str, text: str,  # noqa: PLR0917 - a record
                 raw: int | None, cost: int, node: Mapping[str, Any], root: bool) -> None:
        self.tokens = tokens
        self.index = index
        self.key = key
        self.text = text
        self.raw = raw
        self.cost = cost
        self.node = node
        self.root = root

    def server_path(self, prefix: str = "spec.validation.openAPIV3Schema") -> str:
        """The field path the API server names in its errors."""
        out = prefix
        tokens = list(self.tokens)
        while tokens:
            t = tokens.pop(0)
            if t == "properties":
                out += f".properties[{tokens.pop(0)}]"
            else:
                out += f".{t}"
        return f"{out}.x-kubernetes-validations[{self.index}].{self.key}"


#: ``dict`` first: an ABC check per node was a tenth of the walk on a big CRD
_MAP = (dict, Mapping)


def crd_rule_costs(root: Mapping[str, Any], *, resolve: Any = None,
                   max_nodes: int = 200_000) -> list[RuleCost]:
    """Every rule and ``messageExpression`` of a CRD version's schema with its estimate,
    as apiextensions' ``ValidateCustomResourceDefinitionOpenAPISchema`` walks it: rules
    under ``properties``, ``items`` and ``additionalProperties`` (never under junctors),
    the cardinality multiplied down from ``maxItems``/``maxProperties``
    (``childContext``), unbounded below a list or map without one. Rules compile in the
    environment of a CRD create (``NewExpressions``)."""
    out: list[RuleCost] = []
    # A frame's path is (parent frame, its tokens), spelled out only for a node with rules:
    # most nodes of a big CRD have none, and a tuple per node was most of this walk.
    Frame = tuple[Any, Any, int | None, frozenset[str], bool]
    stack: list[Frame] = [(root, None, 1, frozenset(), True)]
    seen = 0
    while stack and seen < max_nodes:
        raw_node, where, card, refs, is_root = stack.pop()
        seen += 1
        if not isinstance(raw_node, _MAP):
            continue
        ref = raw_node.get("$ref")
        if isinstance(ref, str):
            if ref in refs:
                continue
            refs = refs | {ref}
        node = normal(raw_node, resolve)
        rules = node.get("x-kubernetes-validations")
        if isinstance(rules, list) and rules:
            _node_costs(node, rules, _tokens(where), card, is_root, resolve, out)
        factor_ = cardinality_factor(node, None)  # already normal
        child = card * factor_ if card is not None and factor_ is not None else None
        for key in ("additionalProperties", "items"):
            value = node.get(key)
            if isinstance(value, _MAP):
                stack.append((value, (where, (key,)), child, refs, False))
        props = node.get("properties")
        if isinstance(props, _MAP):
            stack.extend((v, (where, ("properties", str(k))), child, refs, False)
                         for k, v in sorted(props.items(), reverse=True))
    return out


def _tokens(where: Any) -> tuple[str, ...]:
    parts: list[tuple[str, ...]] = []
    while where is not None:
        where, step = where
        parts.append(step)
    return tuple(t for step in reversed(parts) for t in step)


def _node_costs(node: Mapping[str, Any], rules: list[Any], tokens: tuple[str, ...],  # noqa: PLR0917
                card: int | None, is_root: bool, resolve: Any, out: list[RuleCost]) -> None:
    """The estimates of one node's rules and message expressions, appended to ``out``."""
    decl = decl_type(node, root=is_root or node.get("x-kubernetes-embedded-resource") is True,
                     resolve=resolve, name="selfType")
    for i, entry in enumerate(rules):
        rule = entry.get("rule") if isinstance(entry, Mapping) else None
        if not isinstance(rule, str) or not rule.strip():
            continue
        raw = rule_cost(rule, node, resolve=resolve, root=is_root, new_expressions=True,
                        optional_old_self=entry.get("optionalOldSelf") is True, decl=decl)
        cost = 0 if raw is None else expression_cost(raw, card, node, resolve, root=is_root,
                                                     decl=decl)
        out.append(RuleCost(tokens, i, "rule", rule, raw, cost, node, is_root))
        message = entry.get("messageExpression")
        if raw is not None and isinstance(message, str) and message.strip():
            mraw = message_cost(message, node, resolve=resolve, root=is_root,
                                new_expressions=True, decl=decl)
            if mraw is not None:
                out.append(RuleCost(tokens, i, "messageExpression", message, mraw, mraw,
                                    node, is_root))


class CostVerdict:
    """What the API server's two cost limits say of a CRD version's rules (apiextensions
    ``validation.go``): each rule or ``messageExpression`` past ``StaticEstimatedCostLimit``
    with its ``Forbidden`` detail, and, when the sum passes
    ``StaticEstimatedCRDCostLimit``, its detail and the four costliest contributors."""

    __slots__ = ("expensive", "over", "total", "total_detail")

    def __init__(self, costs: list[RuleCost]) -> None:
        self.over: dict[int, str] = {}  # id(RuleCost) -> detail, in walk order
        self.total = 0
        expensive: list[RuleCost] = []
        for rc in costs:
            name = ("estimated rule cost" if rc.key == "rule"
                    else "estimated messageExpression cost")
            if rc.cost > STATIC_RULE_LIMIT:
                self.over[id(rc)] = cost_error_message(name, rc.cost, STATIC_RULE_LIMIT)
            self.total = min(self.total + rc.cost, U64)
            if rc.cost >= STATIC_CRD_LIMIT // 100:
                expensive.append(rc)
        self.total_detail: str | None = None
        self.expensive: list[RuleCost] = []
        if self.total > STATIC_CRD_LIMIT:
            expensive.sort(key=lambda rc: -rc.cost)
            self.expensive = expensive[:4]
            name = ("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 "
                    "schema")
            self.total_detail = cost_error_message(name, self.total, STATIC_CRD_LIMIT)


def crd_cost_problems(root: Mapping[str, Any], *, resolve: Any = None,
                      prefix: str = "spec.validation.openAPIV3Schema"
                      ) -> list[tuple[str, str]]:
    """The cost errors the API server gives for a CRD version's schema as (field path,
    ``Forbidden`` detail), the schema at ``prefix`` (apiextensions ``validation.go``)."""
    costs = crd_rule_costs(root, resolve=resolve)
    verdict = CostVerdict(costs)
    errors = [(rc.server_path(prefix), verdict.over[id(rc)]) for rc in costs
              if id(rc) in verdict.over]
    if verdict.total_detail is not None:
        errors.extend((rc.server_path(prefix), "contributed to estimated rule cost total "
                       "exceeding cost limit for entire OpenAPIv3 schema")
                      for rc in verdict.expensive)
        errors.append((prefix, verdict.total_detail))
    return errors


def crd_cost_errors(root: Mapping[str, Any], *, resolve: Any = None) -> list[str]:
    """:func:`crd_cost_problems` as ``"<field path>: Forbidden: <detail>"``."""
    return [f"{path}: Forbidden: {detail}"
            for path, detail in crd_cost_problems(root, resolve=resolve)]
