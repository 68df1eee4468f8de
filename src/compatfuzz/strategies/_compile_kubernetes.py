"""Compiling Kubernetes' well-known types: quantities, int-or-string, times, durations, ObjectMeta.

Why a module of its own: these types are recognised by name or by their
``x-kubernetes-int-or-string`` marker (``compatfuzz.schema.classify``), not by JSON type,
and draw values the API server accepts for them (``_kubernetes``) with their own edge
values (``_edges``), unless the schema constrains them further.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compatfuzz.schema import WellKnown
from compatfuzz.strategies import _edges
from compatfuzz.strategies import _kubernetes as k8s
from compatfuzz.strategies._compile_cel import Gen
from compatfuzz.strategies._compile_junctors import JunctorCompiling
from compatfuzz.strategies._compile_object import ObjectCompiling
from compatfuzz.strategies._compile_scalar import ScalarCompiling
from compatfuzz.strategies._edges import Family, edged
from compatfuzz.strategies._regex import compile_pattern


class KubernetesCompiling(ScalarCompiling, ObjectCompiling, JunctorCompiling):
    """``Compiler``'s methods for Kubernetes' well-known types."""

    def compile_shape(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...],
    ) -> Gen:
        raise NotImplementedError  # pragma: no cover - Compiler.compile_shape

    def compile_well_known(
        self, kind: WellKnown, node: Mapping[str, Any], path: tuple[str | int, ...],
        ref_name: str | None, stack: tuple[str, ...],
    ) -> Gen | None:
        if kind is WellKnown.QUANTITY:
            allows_numbers = node.get("x-kubernetes-int-or-string") is True or ref_name is not None
            strategy = k8s.quantities(allow_numbers=allows_numbers)
            edges = _edges.quantity_edges(allow_numbers=allows_numbers)
            pattern = node.get("pattern")
            if isinstance(pattern, str):
                compiled = compile_pattern(pattern, kubernetes=self.kubernetes)

                def matches(v: Any) -> bool:
                    return not isinstance(v, str) or compiled.search(v) is not None

                strategy = strategy.filter(matches)
                edges = edges.filter(matches)
            return edged(strategy, edges, Family.QUANTITY)
        if kind is WellKnown.INT_OR_STRING:
            if ref_name is not None and "oneOf" in node:
                # Built-in IntOrString: oneOf [string|null, integer|null]; a non-null int
                # or string matches exactly one branch.
                return edged(k8s.int_or_strings(),
                             _edges.int_or_string_edges(), Family.INT_OR_STRING)
            if any(k in node for k in _CONSTRAINTS) or _nontrivial_branches(node):
                # A constrained int-or-string: honour the schema's own keywords.
                rest = {k: v for k, v in node.items() if k != "x-kubernetes-int-or-string"}
                if "anyOf" in rest or "oneOf" in rest:
                    return self.compile_union(rest, path, None, stack)
                rest["type"] = ["integer", "string"]
                return self.compile_shape(rest, path, None, stack)
            return edged(k8s.int_or_strings(),
                         _edges.int_or_string_edges(), Family.INT_OR_STRING)
        if kind in (WellKnown.TIME, WellKnown.MICRO_TIME):
            strategy = k8s.times if kind is WellKnown.TIME else k8s.micro_times
            return self.with_edges({"format": "date-time", **node}, strategy,
                                   _edges.time_edges(self.kubernetes, metav1=True),
                                   Family.TIME)
        if kind is WellKnown.DURATION:
            return self.with_edges(node, k8s.go_durations, _edges.duration_edges(),
                                   Family.DURATION)
        if kind is WellKnown.RAW_EXTENSION:
            return self.any_object(path)
        if kind is WellKnown.OBJECT_META and node.get("properties"):
            realistic = {
                # timestamps are Time fields: a date-time format override applies
                key: (self.formatted({"format": "date-time"}, strategy)
                      if key.endswith("Timestamp") else self.strategy_gen(strategy))
                for key, strategy in k8s.OBJECT_META_FIELDS.items()
                if key in node["properties"]
            }
            return self.compile_object(node, path, stack, realistic)
        return None


_CONSTRAINTS = ("pattern", "enum", "const", "minimum", "maximum", "exclusiveMinimum",
                "exclusiveMaximum", "minLength", "maxLength", "format", "multipleOf",
                "x-kubernetes-validations", "allOf", "not")


def _nontrivial_branches(node: Mapping[str, Any]) -> bool:
    """Do anyOf/oneOf say more than controller-gen's ``[{type: integer}, {type: string}]``?"""
    for word in ("anyOf", "oneOf"):
        for branch in node.get(word) or ():
            if not isinstance(branch, Mapping) or set(branch) - {"type"}:
                return True
    return False
