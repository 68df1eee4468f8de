"""Compile a normalised schema into a generator, lazily and by construction.

Why not one nested Hypothesis strategy per keyword (the hypothesis-jsonschema way)? On
Kubernetes schemas that costs tens of seconds to build and a draw per keyword per node.
Structural schemas (KEP-2335) tell us every node's type without junctors, so we build each
value directly: one draw per scalar, a few bitmask draws per object to pick which optional
fields appear, one draw per list length. Nodes compile on first use, so building a strategy
for a 900-definition schema costs nothing until a value is drawn, and ``$ref`` cycles are
bounded by how often a definition may repeat on the current path (``max_recursion``).

Every generator has the signature ``gen(draw, ex) -> value``; ``ex`` is per-example state.

The parts of ``Compiler`` are mixins by the kind of value they draw: ``_compile_object``,
``_compile_array``, ``_compile_scalar``, ``_compile_junctors`` (allOf/anyOf/oneOf),
``_compile_kubernetes`` (well-known types), ``_compile_cel`` (CEL rules); the per-example
state and shared helpers are in ``_compile_base``. This module holds the entry point:
overrides, ``$ref``, and the dispatch by shape and type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, UnsupportedSchema
from compatfuzz.schema import classify
from compatfuzz.schema._check import never_valid
from compatfuzz.strategies import _scalars
from compatfuzz.strategies._compile_array import ArrayCompiling
from compatfuzz.strategies._compile_base import _JSON_TYPES, Example
from compatfuzz.strategies._compile_cel import Gen, path_text
from compatfuzz.strategies._compile_junctors import _ANNOTATIONS, merge_schemas
from compatfuzz.strategies._compile_kubernetes import KubernetesCompiling
from compatfuzz.strategies._edges import Family
from compatfuzz.strategies._overrides import Override
from compatfuzz.strategies._regex import compile_pattern, refusal

_OBJECT_WORDS = ("properties", "additionalProperties", "patternProperties", "required",
                 "minProperties", "maxProperties", "propertyNames", "dependentRequired")
_ARRAY_WORDS = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")
_STRING_WORDS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


class Compiler(KubernetesCompiling, ArrayCompiling):
    """Holds one schema and compiles its nodes into generators on demand."""

    # ------------------------------------------------------------- entry point
    def compile(
        self,
        node: Any,
        path: tuple[str | int, ...] = (),
        ref_name: str | None = None,
        stack: tuple[str, ...] = (),
        overridden: bool = False,
    ) -> Gen:
        """Return a generator for ``node`` at ``path``, honouring overrides.

        ``overridden``: an override already applies to ``path`` (we are compiling the
        default it patches, through a ``$ref``); do not apply one a second time.
        """
        if node is True or node == {}:
            return self.any_json(path)
        if node is False:
            raise self.fail(path, "the schema is `false`: no value is valid here")
        if not isinstance(node, Mapping):
            raise self.fail(path, f"expected a schema object, got {node!r}")

        override = None
        if not overridden:
            override = self.options.overrides.for_path(path_text(path)) if path else None
            if override is None and ref_name is not None:
                override = self.options.overrides.definitions.get(ref_name)
        if override is not None:
            return self.apply_override(override, node, path, ref_name, stack)
        return self.compile_plain(node, path, ref_name, stack, overridden)

    def apply_override(
        self, override: Override, node: Mapping[str, Any], path: tuple[str | int, ...],
        ref_name: str | None, stack: tuple[str, ...],
    ) -> Gen:
        if override.strategy is not None:
            return self.strategy_gen(override.strategy)
        default = self.compile_plain(node, path, ref_name, stack, overridden=True)
        if override.patch is not None:
            patch = override.patch

            def patched(draw: st.DrawFn, ex: Example) -> Any:
                value = default(draw, ex)
                # null (a nullable field left unset) has nothing to patch
                return value if value is None else patch(value, draw)

            return patched
        assert override.factory is not None
        default_strategy = st.composite(lambda draw: default(draw, Example(False)))()
        made = override.factory(node, default_strategy)
        if made is NotImplemented:
            return default
        if not isinstance(made, st.SearchStrategy):
            raise InvalidArgument(
                f"override factory {override.factory!r} returned {made!r} at "
                f"{path_text(path)}; it must return a SearchStrategy or NotImplemented"
            )
        return self.strategy_gen(made)

    def compile_plain(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...], overridden: bool = False,
    ) -> Gen:
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self.compile_ref(node, ref, path, stack, overridden)

        for dynamic in ("$dynamicRef", "$recursiveRef"):
            if dynamic in node:
                raise self.fail(path, f"{dynamic} is not supported (no API schema dialect "
                                      "uses it); point a $ref at a $defs entry instead")
        self.check_patterns(node, path)
        rules = node.get("x-kubernetes-validations")
        if not (rules and self.kubernetes):
            return self.compile_shape(node, path, ref_name, stack)
        from compatfuzz.strategies._cel_construct import construction

        made = construction(node, self.schema.resolve)
        gen = self.compile_shape(made.node, path, ref_name, stack)
        gen = self.with_repair(gen, node, made, path, stack)
        return self.with_cel(gen, node, path, made.exact)

    def check_patterns(self, node: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
        """A pattern Python cannot compile fails here, naming its path, not at draw time."""
        pattern = node.get("pattern")
        patterns = [pattern] if isinstance(pattern, str) else []
        patterns += [k for k in node.get("patternProperties") or {} if isinstance(k, str)]
        for source in patterns:
            try:
                compile_pattern(source, kubernetes=self.kubernetes)
            except (re.error, ValueError) as exc:
                raise self.fail(path, refusal(source, exc, kubernetes=self.kubernetes)) from None

    def compile_ref(
        self, node: Mapping[str, Any], ref: str, path: tuple[str | int, ...],
        stack: tuple[str, ...], overridden: bool = False,
    ) -> Gen:
        target = self.schema.resolve(ref)
        name = ref.rsplit("/", 1)[-1]
        hops = [ref]
        while (isinstance(target, Mapping) and isinstance(target.get("$ref"), str)
               and set(target) <= {*_ANNOTATIONS, "$ref", "$schema", "$id"}):
            # a chain of bare refs: a cycle in it never reaches a schema
            if target["$ref"] in hops:
                raise self.fail(path, "$ref cycle that never reaches a schema: "
                                      + " -> ".join([*hops, target["$ref"]]))
            hops.append(target["$ref"])
            target = self.schema.resolve(target["$ref"])
        siblings = {k: v for k, v in node.items()
                    if k not in ("$ref", "description", "title", "$comment", "examples")}
        if siblings:
            merged = merge_schemas([dict(target), siblings])
            if merged is not None:
                return self.compile(merged, path, name, (*stack, ref), overridden)
            gen = self.compile(target, path, name, (*stack, ref), overridden)
            return self.filtered(gen, self.validator_for(node).is_valid)
        return self.compile(target, path, name, (*stack, ref), overridden)

    # ----------------------------------------------------------------- shapes
    def compile_shape(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...],
    ) -> Gen:
        well_known = classify(node, ref_name) if (self.kubernetes or ref_name) else None
        if well_known is None and node.get("x-kubernetes-int-or-string") is True:
            well_known = classify(node)
        if well_known is not None:
            gen = self.compile_well_known(well_known, node, path, ref_name, stack)
            if gen is not None:
                return gen

        if "allOf" in node:
            return self.compile_all_of(node, path, ref_name, stack)
        if "anyOf" in node or "oneOf" in node:
            return self.compile_union(node, path, ref_name, stack)
        if node.get("not") in ({}, True):
            raise self.fail(path, f"not: {node['not']!r} rejects every value")
        if "not" in node or "if" in node:
            # the node's CEL rules are checked where it is compiled (compile_plain)
            rest = {k: v for k, v in node.items()
                    if k not in ("not", "if", "then", "else", "x-kubernetes-validations")}
            gen = self.compile(rest, path, None, stack)
            return self.filtered(gen, self.validator_for(node).is_valid)

        if "const" in node:
            return self.compile_enum({**node, "enum": [node["const"]]}, path, "const")
        if "enum" in node:
            return self.compile_enum(node, path)

        types = self.types_of(node)
        if not types:
            raise self.fail(path, f"no JSON type satisfies type={node.get('type')!r}")
        nullable = "null" in types
        concrete = [t for t in types if t != "null"]
        if not concrete:
            return lambda draw, ex: None
        gens = [self.compile_type(t, node, path, stack) for t in concrete]
        gen = gens[0] if len(gens) == 1 else self.choice(gens)
        if nullable:
            gen = self.with_nulls(gen)
        return gen

    def types_of(self, node: Mapping[str, Any]) -> list[str]:
        declared = node.get("type")
        if isinstance(declared, str):
            types = [declared]
        elif isinstance(declared, list):
            types = [t for t in _JSON_TYPES if t in declared]
        else:
            types = []
            if any(k in node for k in _OBJECT_WORDS) or node.get(
                "x-kubernetes-preserve-unknown-fields"
            ):
                types.append("object")
            if any(k in node for k in _ARRAY_WORDS):
                types.append("array")
            if any(k in node for k in _STRING_WORDS):
                types.append("string")
            if any(k in node for k in _NUMBER_WORDS):
                types.append("number")
            if not types:
                types = ["boolean", "integer", "number", "string", "array", "object", "null"]
        if "integer" in types and "number" in types:
            types.remove("integer")
        return types

    def with_nulls(self, gen: Gen) -> Gen:
        """Explicit nulls only in "null examples", so most examples pay no extra draw."""
        coin = st.integers(min_value=0, max_value=3)

        def maybe_null(draw: st.DrawFn, ex: Example) -> Any:
            if ex.nulls and draw(coin) == 0:
                return None
            return gen(draw, ex)

        return maybe_null

    def compile_enum(self, node: Mapping[str, Any], path: tuple[str | int, ...],
                     keyword: str = "enum") -> Gen:
        rest = {k: v for k, v in node.items() if k not in ("enum", "const")}
        values = list(node["enum"])
        if len(rest) > 0 and any(k not in ("description", "title", "default") for k in rest):
            check = self.validator_for(rest).is_valid
            values = [v for v in values if check(v)]
        if not values:
            shown = node["enum"][0] if keyword == "const" else node["enum"]
            raise self.fail(path, f"no value of {keyword} {shown!r} satisfies the schema")
        if len(values) == 1:
            value = values[0]
            return lambda draw, ex: value
        strategy = st.sampled_from(values)
        return lambda draw, ex: draw(strategy)

    def compile_type(
        self, kind: str, node: Mapping[str, Any], path: tuple[str | int, ...],
        stack: tuple[str, ...],
    ) -> Gen:
        if self.kubernetes and kind != "null":
            why = never_valid({**node, "type": kind})
            if why is not None:
                raise self.fail(path, f"{why}, so no value is valid here (the API server "
                                "accepts such a CRD; the field can only be left out, and "
                                "it is required)")
        try:
            if kind == "object":
                return self.compile_object(node, path, stack)
            if kind == "array":
                return self.compile_array(node, path, stack)
            if kind == "string":
                return self.compile_string(node, path)
            if kind == "integer":
                return self.with_edges(node, _scalars.integers_for(node,
                                                                   kubernetes=self.kubernetes),
                                       _scalars.integer_edges_for(node), Family.INT)
            if kind == "number":
                return self.with_edges(node, _scalars.numbers_for(node,
                                                                  kubernetes=self.kubernetes),
                                       _scalars.number_edges_for(node), Family.NUMBER)
            if kind == "boolean":
                return self.strategy_gen(st.booleans())
        except UnsupportedSchema as exc:
            if str(exc).startswith(self.schema.name or self.schema.source):
                raise
            raise self.fail(path, str(exc)) from None
        raise self.fail(path, f"unknown type {kind!r}")
