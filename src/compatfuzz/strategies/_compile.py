"""Compile a normalised schema into a generator, lazily and by construction.

Why not one nested Hypothesis strategy per keyword (the hypothesis-jsonschema way)? On
Kubernetes schemas that costs tens of seconds to build and a draw per keyword per node.
Structural schemas (KEP-2335) tell us every node's type without junctors, so we build each
value directly: one draw per scalar, a few bitmask draws per object to pick which optional
fields appear, one draw per list length. Nodes compile on first use, so building a strategy
for a 900-definition schema costs nothing until a value is drawn, and ``$ref`` cycles are
bounded by how often a definition may repeat on the current path (``max_recursion``).

Every generator has the signature ``gen(draw, ex) -> value``; ``ex`` is per-example state.
"""

from __future__ import annotations

import json
import math
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, UnsupportedRuleWarning, UnsupportedSchema
from compatfuzz.schema import Schema, WellKnown, classify
from compatfuzz.schema._check import never_valid
from compatfuzz.schema._formats import out_of_format_bound
from compatfuzz.strategies import _edges, _scalars
from compatfuzz.strategies import _kubernetes as k8s
from compatfuzz.strategies._compile_cel import (
    RETRIES,
    CelCompiling,
    CelFilterStats,
    Gen,
    path_text,
)
from compatfuzz.strategies._edges import Family, edged
from compatfuzz.strategies._identity import item_key
from compatfuzz.strategies._overrides import Override, Overrides
from compatfuzz.strategies._regex import compile_pattern, refusal

_JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_OBJECT_WORDS = ("properties", "additionalProperties", "patternProperties", "required",
                 "minProperties", "maxProperties", "propertyNames", "dependentRequired")
_ARRAY_WORDS = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")
_STRING_WORDS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
# Objects with at most this many optional fields draw one presence coin per field; wider
# ones draw three uniform presence bitmasks and combine them to the example's density.
_NARROW_OBJECT = 6
_DENSER = {1: 2, 2: 4, 4: 6, 6: 7}
# Coin thresholds (present iff coin >= t, coin in 0..15) of a narrow object's small fields
# per density index: 1/2, 1/2, 3/4, 7/8.
_NARROW_THRESHOLD = (8, 8, 4, 2)
# Optional fields per example, by density index (a dense example may grow larger); past
# it, wide objects get 1/8 of their fields and narrow ones 1/4 (1/2 for big subtrees), so
# that nested APIs (a Deployment's pod template) stay bounded. Measured on Deployment
# (300 examples, 3 seeds): a flat 100 covered 93-94% of leaf paths at ~3 KB per object;
# these 97.5-99.4% at ~4.3 KB (the leaves lost were the late fields of the pod spec,
# volumes and initContainers, starved once earlier ones had spent the budget).
_BUDGET = (40, 80, 160, 320)
_SPENT_THRESHOLDS = (12, 8)
# Swarm details: half of a hot list's items (and a hot map's keys)
# is a near-duplicate of an earlier one; a hot map has up to six extra keys.
_NEAR_COIN = st.integers(min_value=0, max_value=1)
_PICK = st.integers(min_value=0, max_value=255)
_VARIANT = st.integers(min_value=0, max_value=_edges.VARIANTS - 1)
_HOT_MAP_SIZE = st.integers(min_value=0, max_value=6)
_EMPTY_COIN = st.integers(min_value=0, max_value=3)
_KEEP = st.integers(min_value=0, max_value=15)  # 0 (1 in 16, and where it shrinks): drop


class Example:
    """Per-example state: explicit nulls or not, and the swarm (``_edges``): which value
    families are hot and how densely optional fields appear."""

    __slots__ = ("density", "hot", "nulls", "spent")

    def __init__(self, nulls: bool, hot: int = 0, density: int = 2) -> None:
        self.nulls = nulls
        self.hot = hot
        self.density = density
        self.spent = 0  # optional fields chosen so far: past its _BUDGET, objects get sparse


_state = threading.local()


def current_example() -> Example:
    """The example being drawn on this thread (nested composite draws cannot take it)."""
    ex: Example | None = getattr(_state, "example", None)
    return ex if ex is not None else Example(False)


def set_current_example(ex: Example | None) -> None:
    _state.example = ex


@dataclass(frozen=True)
class Options:
    """Options of one ``from_schema`` call (see its docstring)."""

    overrides: Overrides
    kubernetes: bool
    max_recursion: int
    max_list_extra: int
    extra_properties: bool
    null_rate: int


class Compiler(CelCompiling):
    """Holds one schema and compiles its nodes into generators on demand."""

    def __init__(self, schema: Schema, options: Options) -> None:
        self.schema = schema
        self.options = options
        self.kubernetes = options.kubernetes
        self._validator: Any = None
        self._warned: set[tuple[str, str]] = set()
        self._weights: dict[int, int] = {}
        #: nodes whose CEL rules are not all recognised (so still filter values), by path
        self.cel_filtered: dict[str, CelFilterStats] = {}
        self._below: dict[int, tuple[Any, Any]] = {}

    # ----------------------------------------------------------------- helpers
    def validator_for(self, node: Mapping[str, Any]) -> Any:
        """A jsonschema validator for ``node`` resolving refs against the whole document."""
        if self._validator is None:
            self._validator = self.schema.validator
        return self._validator.evolve(schema=node)

    def fail(self, path: tuple[str | int, ...], message: str) -> UnsupportedSchema:
        where = path_text(path) or "<root>"
        return UnsupportedSchema(
            f"{self.schema.name or self.schema.source}: cannot generate values at {where}: "
            f"{message}"
        )

    def lazy(self, make: Callable[[], Gen]) -> Gen:
        """Compile on first use: building a strategy stays O(1) in the schema's size."""
        compiled: list[Gen] = []

        def gen(draw: st.DrawFn, ex: Example) -> Any:
            if not compiled:
                compiled.append(make())
            return compiled[0](draw, ex)

        return gen

    def filtered(self, gen: Gen, ok: Callable[[Any], bool]) -> Gen:
        def checked(draw: st.DrawFn, ex: Example) -> Any:
            for _ in range(RETRIES):
                value = gen(draw, ex)
                if ok(value):
                    return value
            assume(False)
            return None  # pragma: no cover - assume() raised

        return checked

    @staticmethod
    def strategy_gen(strategy: st.SearchStrategy[Any]) -> Gen:
        return lambda draw, ex: draw(strategy)

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

    def too_deep(self, node: Any, stack: tuple[str, ...]) -> bool:
        """Would expanding ``node`` repeat a definition more than ``max_recursion`` times?"""
        if not isinstance(node, Mapping):
            return False
        ref = node.get("$ref")
        if isinstance(ref, str):
            return stack.count(ref) >= self.options.max_recursion
        items = node.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("$ref"), str):
            return stack.count(items["$ref"]) >= self.options.max_recursion
        additional = node.get("additionalProperties")
        if isinstance(additional, Mapping) and isinstance(additional.get("$ref"), str):
            return stack.count(additional["$ref"]) >= self.options.max_recursion
        return False

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

    def choice(self, gens: list[Gen]) -> Gen:
        index = st.integers(min_value=0, max_value=len(gens) - 1)

        def choose(draw: st.DrawFn, ex: Example) -> Any:
            return gens[draw(index)](draw, ex)

        return choose

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

    def with_edges(self, node: Mapping[str, Any], random: st.SearchStrategy[Any],
                   edges: st.SearchStrategy[Any] | None, family: int) -> Gen:
        """``random`` mixed with the edge values of its class (``_edges``), unless a format
        override owns the node's values."""
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in self.options.overrides.formats:
            return self.formatted(node, random)
        return edged(random, edges, family)

    def formatted(self, node: Mapping[str, Any], default: st.SearchStrategy[Any]) -> Gen:
        """``default``, or what a format override (``Overrides().format``,
        ``register_format``) for the node's format makes of it. Strings go through
        :meth:`compile_string`, which keeps length and pattern on an override."""
        fmt = node.get("format")
        found = self.options.overrides.formats.get(fmt) if isinstance(fmt, str) else None
        if found is None:
            return self.strategy_gen(default)
        if found.strategy is not None:
            return self.strategy_gen(found.strategy)
        if found.factory is not None:
            made = found.factory(node, default)
            return self.strategy_gen(default if made is NotImplemented else made)
        assert found.patch is not None
        patch = found.patch
        return lambda draw, ex: patch(draw(default), draw)

    def compile_string(self, node: Mapping[str, Any], path: tuple[str | int, ...]) -> Gen:
        fmt = node.get("format")
        found = self.options.overrides.formats.get(fmt) if isinstance(fmt, str) else None
        where = path_text(path) or "<root>"

        def warn(reason: str) -> None:
            # a format and a pattern that rarely hold together: say so, never drop the field
            if ("format", where) not in self._warned:
                self._warned.add(("format", where))
                warnings.warn(
                    f"{self.schema.name or self.schema.source}: string at {where}: {reason}; "
                    f"add an override, e.g. from_schema(schema, overrides=Overrides().path("
                    f"{where!r}, st.sampled_from([...valid values...])))",
                    UnsupportedRuleWarning, stacklevel=2,
                )

        default = _scalars.strings_for(node, kubernetes=self.kubernetes, format_override=None,
                                       warn=warn)
        if found is None or found.patch is not None:
            edges, family = _scalars.string_edges_for(node, kubernetes=self.kubernetes)
            return self.with_edges(node, default, edges, family)
        override = found.strategy
        if override is None:
            assert found.factory is not None
            made = found.factory(node, default)
            if made is NotImplemented:
                return self.strategy_gen(default)
            override = made
        # a replacement strategy still gets the node's length and pattern applied
        return self.strategy_gen(_scalars.strings_for(node, kubernetes=self.kubernetes,
                                                      format_override=override))

    # ---------------------------------------------------------------- objects
    def compile_object(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], stack: tuple[str, ...],
        realistic: Mapping[str, Gen] | None = None,
    ) -> Gen:
        """Objects: required fields always, optional ones by per-field presence bits.

        ``realistic`` replaces the generators of some fields (ObjectMeta's names and maps).
        """
        if self.kubernetes and path == ("metadata",) and not node.get("properties"):
            # CRD schemas leave root metadata open; the API server validates ObjectMeta.
            return self.strategy_gen(k8s.object_meta())
        properties: Mapping[str, Any] = node.get("properties") or {}
        required = [k for k in node.get("required", ()) if isinstance(k, str)]
        if self.kubernetes and node.get("x-kubernetes-embedded-resource") is True:
            # The API server requires apiVersion and kind on an embedded object and validates
            # its metadata as ObjectMeta, whatever the schema spells out.
            embedded = {
                "apiVersion": self.strategy_gen(k8s.api_versions),
                "kind": self.strategy_gen(k8s.kinds),
                "metadata": self.strategy_gen(k8s.object_meta()),
            }
            realistic = {**embedded, **(realistic or {})}
            properties = {**{k: {} for k in embedded}, **properties}
            required = [*dict.fromkeys(["apiVersion", "kind", *required])]
        required_set = set(required)
        dependent: Mapping[str, list[str]] = node.get("dependentRequired") or {}

        fixed: list[tuple[str, Gen]] = []
        optional: list[tuple[str, Gen]] = []
        optional_nodes: list[Any] = []
        order = {key: i for i, key in enumerate(properties)}
        for key, sub in properties.items():
            child = (*path, key)
            if key not in required_set and self.too_deep(sub, stack):
                continue
            if realistic and key in realistic and (
                    not self.options.overrides.for_path(path_text(child))):
                gen = realistic[key]
            else:
                gen = self.lazy(partial(self.compile, sub, child, None, stack))
            if key in required_set:
                fixed.append((key, gen))
            elif sub is not False and not (self.kubernetes and isinstance(sub, Mapping)
                                           and (out_of_format_bound(sub) or never_valid(sub))):
                # an optional field no value satisfies (a CRD may say maxLength: -1 or
                # minLength > maxLength, and the API server accepts it: issue 30) is never
                # generated
                optional.append((key, self.with_default(gen, sub)))
                optional_nodes.append(sub)

        extra_gen = self.compile_extra(node, path, stack, properties)
        for key in required:
            if key not in properties:
                if extra_gen is None:
                    fixed.append((key, self.any_json((*path, key))))
                else:
                    fixed.append((key, extra_gen[1]))

        picker = self.optional_picker(optional, optional_nodes, dependent)
        # any string is a valid key: near-duplicate keys need no check
        free_keys = extra_gen is not None and not node.get("patternProperties") and not (
            isinstance(node.get("propertyNames"), Mapping))
        # {} beside an absent field: "unset vs empty" conversions (a *struct pointer set
        # only when non-zero) lose it
        # only inside the spec: an empty top-level field ({"spec": {}}) only repeats itself
        can_be_empty = not fixed and not node.get("minProperties") and len(path) >= 2
        is_map = free_keys and not properties and node.get("additionalProperties") not in (
            None, False)
        root_kind = self.root_identity(path)
        min_props = int(node.get("minProperties", 0))
        max_props = node.get("maxProperties")
        max_props = math.inf if max_props is None else int(max_props)

        def gen_object(draw: st.DrawFn, ex: Example) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for key, gen in fixed:
                out[key] = gen(draw, ex)
            budget = max_props - len(out)
            if picker is not None and not (
                    can_be_empty and ex.hot & Family.EMPTY and draw(_EMPTY_COIN) == 0):
                for key, value in sorted(picker(draw), key=lambda kv: order[kv[0]]):
                    if budget <= 0:
                        break
                    out[key] = value
                    budget -= 1
            if extra_gen is not None:
                key_strategy, value_gen, count = extra_gen
                hot = bool(ex.hot & Family.MAP)
                n = draw(_HOT_MAP_SIZE if hot and is_map else count)
                if len(out) + n < min_props:
                    n = min_props - len(out)
                tries = 0
                added: list[str] = []
                while n > 0 and budget > 0 and tries < n + RETRIES:
                    tries += 1
                    if hot and free_keys and added and draw(_NEAR_COIN) == 0:
                        # a near-duplicate of a key already there: case, padding, NFD
                        key = _edges.key_variant(added[draw(_PICK) % len(added)],
                                                 draw(_VARIANT))
                    else:
                        key = draw(key_strategy)
                    if key in out or key in properties:
                        continue
                    added.append(key)
                    out[key] = value_gen(draw, ex)
                    n -= 1
                    budget -= 1
            if len(out) < min_props:
                for key, gen in optional:
                    if len(out) >= min_props:
                        break
                    if key not in out:
                        out[key] = gen(draw, ex)
                assume(len(out) >= min_props)
            if root_kind is not None:
                out.update(root_kind)
            return out

        patterns = node.get("patternProperties") or {}
        if len(patterns) > 1 or (patterns and node.get("additionalProperties") is not None) or (
            patterns and set(patterns) and properties
        ):
            return self.filtered(gen_object, self.validator_for(node).is_valid)
        return gen_object

    def root_identity(self, path: tuple[str | int, ...]) -> dict[str, str] | None:
        """apiVersion/kind of a CRD version's root object, which its schema leaves open.

        Also when the schema does not declare them: the API server always sets and keeps
        both (they are never pruned), and a structural root cannot forbid extra keys.
        """
        if path or not self.kubernetes:
            return None
        meta = self.schema.meta
        group, version, kind = meta.get("group"), meta.get("version"), meta.get("kind")
        if not (version and kind) or self.schema.root.get("additionalProperties") is False:
            return None
        return {"apiVersion": f"{group}/{version}" if group else str(version), "kind": str(kind)}

    def with_default(self, gen: Gen, sub: Any) -> Gen:
        """Sometimes write exactly the default: defaulting must be idempotent on it."""
        if not isinstance(sub, Mapping) or "default" not in sub:
            return gen
        default = sub["default"]
        coin = st.integers(min_value=0, max_value=4)

        def maybe_default(draw: st.DrawFn, ex: Example) -> Any:
            if draw(coin) == 4:
                return json.loads(json.dumps(default))
            return gen(draw, ex)

        return maybe_default

    def leaf_weight(self, node: Any, visiting: frozenset[str] = frozenset()) -> int:
        """How many leaves lie below ``node`` (``$ref`` cycles cut): a field's share of the API."""
        if not isinstance(node, Mapping):
            return 1
        key = id(node)
        cached = self._weights.get(key)
        if cached is not None:
            return cached
        ref = node.get("$ref")
        if isinstance(ref, str):
            weight = 1 if ref in visiting else self.leaf_weight(
                self.schema.resolve(ref), visiting | {ref}
            )
        else:
            weight = 0
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                weight += sum(self.leaf_weight(sub, visiting) for sub in properties.values())
            for word in ("items", "additionalProperties"):
                if isinstance(node.get(word), Mapping):
                    weight += self.leaf_weight(node[word], visiting)
            for word in ("allOf", "anyOf", "oneOf"):
                for branch in node.get(word) or ():
                    weight += self.leaf_weight(branch, visiting)
            weight = max(weight, 1)
        weight = min(weight, 100_000)
        self._weights[key] = weight
        return weight

    def optional_picker(
        self, optional: list[tuple[str, Gen]], nodes: list[Any],
        dependent: Mapping[str, list[str]],
    ) -> Callable[[st.DrawFn], list[tuple[str, Any]]] | None:
        """Draw the present optional fields of one object, as ``(key, value)`` pairs.

        Presence is per field, weighted by the size of the field's subtree so that the
        path into a pod template is taken more often than a boolean flag: coverage of deep
        fields grows without making every object large. Narrow objects draw one coin per
        field (a big subtree is present 90% of the time, a leaf 50%); wide ones draw a list
        of distinct fields, about five, each picked with odds growing with log2(subtree).
        Both shrink by dropping whole fields: lowering a coin or deleting a list element
        removes the field's value with it.
        """
        if not optional:
            return None
        weights = [self.leaf_weight(node) for node in nodes]
        position = {key: i for i, (key, _) in enumerate(optional)}
        pick: Callable[[st.DrawFn], list[tuple[str, Any]]]
        if len(optional) <= _NARROW_OBJECT:
            coin = st.integers(min_value=0, max_value=15)
            # present iff coin >= threshold; the coin shrinks to 0, i.e. to absent. Fields over
            # a subtree of 8+ leaves are present 15/16 of the time, others half (measured:
            # this takes Deployment leaf coverage after 300 examples from ~75% to ~88%, and
            # keeps a CRD's spec out of only 1 in 16 objects).
            # Small fields follow the example's density, but never below one half.
            pairs = [(entry, w >= 8) for entry, w in zip(optional, weights, strict=True)]

            def pick(draw: st.DrawFn) -> list[tuple[str, Any]]:
                ex = current_example()
                if ex.spent >= _BUDGET[ex.density]:
                    small, big = _SPENT_THRESHOLDS
                else:
                    small, big = _NARROW_THRESHOLD[ex.density], 1
                out = []
                for (key, gen), large in pairs:
                    # coin then value, adjacent: the shrinker drops a field by lowering its
                    # coin and deleting the value's span right after it
                    if draw(coin) >= (big if large else small):
                        ex.spent += 1
                        out.append((key, gen(draw, ex)))
                return out
        else:
            big = [w >= 8 for w in weights]
            mask = _edges.bitmask(len(optional))

            def pick(draw: st.DrawFn) -> list[tuple[str, Any]]:
                ex = current_example()
                a, b, c = draw(mask), draw(mask), draw(mask)
                combos = {1: a & b & c, 2: a & b, 4: a, 6: a | b, 7: a | b | c}
                if ex.spent >= _BUDGET[ex.density]:
                    small_bits = big_bits = combos[1]
                else:
                    level = _edges.DENSITIES[ex.density]
                    small_bits, big_bits = combos[level], combos[_DENSER[level]]
                chosen = [entry for i, entry in enumerate(optional)
                          if ((big_bits if big[i] else small_bits) >> i) & 1]
                if not chosen and c:  # a wide object is rarely empty (never once shrunk)
                    chosen = [optional[c % len(optional)]]
                ex.spent += len(chosen)
                # Each chosen field also draws a keep coin right before its value: dropping
                # a field while shrinking needs only that coin lowered and the value's span
                # after it deleted, not a mask bit far from the value.
                return [(key, gen(draw, ex)) for key, gen in chosen if draw(_KEEP)]

        if not dependent:
            return pick

        def with_dependencies(draw: st.DrawFn) -> list[tuple[str, Any]]:
            chosen = pick(draw)
            keys = {key for key, _ in chosen}
            changed = True
            while changed:
                changed = False
                for key, needs in dependent.items():
                    if key in keys:
                        for other in needs:
                            if other in position and other not in keys:
                                gen = optional[position[other]][1]
                                chosen.append((other, gen(draw, current_example())))
                                keys.add(other)
                                changed = True
            return chosen

        return with_dependencies

    def compile_extra(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], stack: tuple[str, ...],
        properties: Mapping[str, Any],
    ) -> tuple[st.SearchStrategy[str], Gen, st.SearchStrategy[int]] | None:
        """Keys beyond ``properties``: maps, patternProperties and preserved unknown fields."""
        additional = node.get("additionalProperties")
        patterns: Mapping[str, Any] = node.get("patternProperties") or {}
        preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
        is_map = additional not in (None, False) and not properties
        if patterns:
            # Keys come from the first pattern; objects with several patterns are checked
            # as a whole by the caller (a key may match more than one).
            pattern, sub = next(iter(patterns.items()))
            compiled = compile_pattern(pattern, kubernetes=self.kubernetes)
            keys: st.SearchStrategy[str] = st.from_regex(compiled).filter(
                lambda k: k not in properties
            )
            value = self.lazy(lambda: self.compile(sub, (*path, "*"), None, stack))
            return keys, value, st.integers(min_value=0, max_value=2)
        if additional is False:
            return None
        if additional is None and not preserve and not (
            self.options.extra_properties and not self.kubernetes
        ):
            return None
        if isinstance(additional, Mapping) and self.too_deep(additional, stack):
            return None
        names = node.get("propertyNames")
        if isinstance(names, Mapping) and self.kubernetes and names.get(
                "x-kubernetes-validations"):
            # map keys under a rule pushed down from ``self.all(k, ...)`` (_cel_construct)
            key_gen = self.compile(names, (*path, "<key>"), None, stack)
            keys = st.composite(lambda draw: key_gen(draw, current_example()))()
        elif isinstance(names, Mapping):
            keys = _scalars.strings_for(names, kubernetes=self.kubernetes, format_override=None)
        elif self.kubernetes:
            keys = k8s.qualified_names
        else:
            keys = st.text(min_size=1, max_size=12)
        if isinstance(additional, Mapping) and additional:
            value = self.lazy(lambda: self.compile(additional, (*path, "*"), None, stack))
        else:
            value = self.any_json((*path, "*"))
        max_extra = 3 if is_map else (2 if preserve else 1)
        return keys, value, st.integers(min_value=0, max_value=max_extra)

    # ----------------------------------------------------------------- arrays
    def compile_array(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], stack: tuple[str, ...]
    ) -> Gen:
        items = node.get("items", True)
        prefix = node.get("prefixItems") or []
        min_items = int(node.get("minItems", 0))
        max_items = node.get("maxItems")
        cap = min_items + self.options.max_list_extra
        hi = cap if max_items is None else min(int(max_items), max(cap, min_items))
        if max_items is not None and int(max_items) < min_items:
            raise self.fail(path, f"maxItems {max_items} < minItems {min_items}")
        child = (*path, "[*]")
        if items is False:
            hi = min(hi, len(prefix))
        if self.too_deep(node, stack):
            hi = min_items
        prefix_gens = [
            self.lazy(partial(self.compile, sub, (*path, i), None, stack))
            for i, sub in enumerate(prefix)
        ]
        item_gen = (
            None if items is False
            else self.lazy(lambda: self.compile(items, child, None, stack))
        )
        list_type = node.get("x-kubernetes-list-type")
        map_keys = node.get("x-kubernetes-list-map-keys") or []
        unique = item_key(node, self.schema.resolve)
        contains = node.get("contains")
        contains_gen: Gen | None = None
        contains_ok: Callable[[Any], bool] | None = None
        if isinstance(contains, Mapping):
            contains_gen = self.lazy(partial(self.compile, contains, child, None, stack))
            contains_ok = self.validator_for(contains).is_valid
        min_contains = int(node.get("minContains", 1)) if contains_gen else 0
        max_contains = node.get("maxContains")
        size = st.integers(min_value=min_items, max_value=max(hi, min_items))
        # A hot list (``_edges``) is long: up to maxItems (16 items at most past minItems)
        # or 8 past minItems, so that a list longer than an older version's maxItems
        # shows up; and some items are near-duplicates of earlier ones.
        hot_hi = hi
        if not self.too_deep(node, stack):
            # items that are objects repeat their subtree: fewer of them
            scalar_items = isinstance(items, Mapping) and self.leaf_weight(items) <= 1
            hot_hi = min_items + ((8 if max_items is None else 16) if scalar_items else 4)
            if max_items is not None:
                hot_hi = min(hot_hi, int(max_items))
            if items is False:
                hot_hi = min(hot_hi, len(prefix))
        hot_size = st.integers(min_value=min_items, max_value=max(hot_hi, hi, min_items))
        near = None
        if item_gen is not None and isinstance(items, Mapping):
            near = self.near_duplicate(items, list(map_keys) if list_type == "map" else None,
                                       unique is not None)

        def gen_array(draw: st.DrawFn, ex: Example) -> list[Any]:
            hot = bool(ex.hot & Family.LIST)
            n = draw(hot_size if hot else size)
            out: list[Any] = []
            seen: set[tuple[int, str]] = set()
            misses = 0
            while len(out) < n:
                i = len(out)
                if i < len(prefix_gens):
                    value = prefix_gens[i](draw, ex)
                elif contains_gen is not None and i < min_contains:
                    value = contains_gen(draw, ex)
                elif item_gen is not None:
                    value = item_gen(draw, ex)
                    if hot and near is not None and out and draw(_NEAR_COIN) == 0:
                        value = near(draw, out, value)
                else:
                    break
                if unique is not None:
                    parts = set(enumerate(unique(value)))
                    if parts & seen:
                        misses += 1
                        if misses > RETRIES:
                            break
                        continue
                    seen |= parts
                out.append(value)
            assume(len(out) >= min_items)
            if contains_ok is not None:
                hits = sum(1 for v in out if contains_ok(v))
                assume(hits >= min_contains)
                assume(max_contains is None or hits <= int(max_contains))
            return out

        return gen_array

    def near_duplicate(
        self, items: Mapping[str, Any], map_keys: list[str] | None, unique: bool
    ) -> Callable[[st.DrawFn, list[Any], Any], Any]:
        """Turn a fresh item into a near-duplicate of an earlier one.

        List-maps: the earlier item's key fields with one of them (or, for a single
        string key, its spelling) changed, so that items collide on part of their key;
        sets: a case, padding or NFD variant of an earlier item; atomic lists: an exact
        copy. The first variant the item schema accepts is taken; if none is, the fresh
        item.
        """
        checker: list[Callable[[Any], bool]] = []  # built on first use: most lists never are

        def valid(value: Any) -> bool:
            if not checker:
                checker.append(self.validator_for(items).is_valid)
            return checker[0](value)

        def near(draw: st.DrawFn, out: list[Any], fresh: Any) -> Any:
            base = out[draw(_PICK) % len(out)]
            candidates: list[Any] = []
            if map_keys and isinstance(base, dict) and isinstance(fresh, dict):
                keys = [k for k in map_keys if k in base]
                if len(keys) > 1:
                    keep = keys[draw(_PICK) % len(keys)]
                    candidates = [{**fresh, **{k: base[k] for k in keys if k != keep}}]
                elif keys and isinstance(base[keys[0]], str):
                    key = keys[0]
                    candidates = [{**fresh, key: variant} for variant in
                                  _edges.key_variants(base[key], draw(_VARIANT))]
            elif not unique:
                return json.loads(json.dumps(base))  # an exact repeat, valid as its original
            elif isinstance(base, str):
                candidates = _edges.key_variants(base, draw(_VARIANT))
            # the first candidate the item schema accepts; none: the fresh item
            return next((c for c in candidates if valid(c)), fresh)

        return near

    # ------------------------------------------------------------- junctors
    def compile_all_of(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...],
    ) -> Gen:
        parts = [{k: v for k, v in node.items() if k != "allOf"}]
        exact = True
        for raw in node["allOf"]:
            branch = raw
            if isinstance(raw, Mapping) and isinstance(raw.get("$ref"), str) and len(
                raw
            ) == 1 and stack.count(raw["$ref"]) < self.options.max_recursion:
                branch = self.schema.resolve(raw["$ref"])
            if branch is True:
                continue
            if not isinstance(branch, Mapping):
                raise self.fail(path, "allOf contains `false`: no value is valid here")
            parts.append(dict(branch))
        merged = merge_schemas(parts)
        if merged is None:
            merged, exact = parts[0] | parts[1], False
        gen = self.compile(merged, path, ref_name, stack)
        if exact:
            return gen
        return self.filtered(gen, self.validator_for(node).is_valid)

    def compile_union(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...],
    ) -> Gen:
        word = "oneOf" if "oneOf" in node else "anyOf"
        base = {k: v for k, v in node.items() if k != word}
        branches = list(node[word])
        gens: list[Gen] = []
        for raw in branches:
            if raw is False or self.too_deep(raw, stack):
                continue
            branch = {} if raw is True else raw
            if isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str) and len(
                branch
            ) == 1:
                target_ref = branch["$ref"]
                resolved = dict(self.schema.resolve(target_ref))
                merged = merge_schemas([base, resolved])
                name = target_ref.rsplit("/", 1)[-1]
                new_stack = (*stack, target_ref)
            else:
                merged = merge_schemas([base, dict(branch)])
                name, new_stack = None, stack
            if merged is None:
                gen = self.compile(branch, path, name, new_stack)
                gen = self.filtered(gen, self.validator_for(base).is_valid)
            else:
                gen = self.lazy(partial(self.compile, merged, path, name, new_stack))
            gens.append(gen)
        if not gens:
            raise self.fail(path, f"every {word} branch is impossible here")
        gen = gens[0] if len(gens) == 1 else self.choice(gens)
        if word == "oneOf" and len(branches) > 1:
            checks = [self.validator_for(b if b is not True else {}).is_valid for b in branches]

            def exactly_one(value: Any) -> bool:
                return sum(1 for check in checks if check(value)) == 1

            gen = self.filtered(gen, exactly_one)
        return gen

    # ---------------------------------------------------------- well-known
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

    # ------------------------------------------------------------ any JSON
    def any_json(self, path: tuple[str | int, ...], depth: int = 2) -> Gen:
        """Small arbitrary JSON values, nested at most ``depth`` levels."""
        scalars = st.one_of(
            st.none(), st.booleans(), st.integers(min_value=-(2**53), max_value=2**53),
            st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
        )
        if depth == 0:
            return self.strategy_gen(scalars)
        inner = self.any_json(path, depth - 1)
        kind = st.integers(min_value=0, max_value=5)
        length = st.integers(min_value=0, max_value=3)
        keys = st.text(min_size=1, max_size=8)

        def gen_any(draw: st.DrawFn, ex: Example) -> Any:
            k = draw(kind)
            if k < 4:
                return draw(scalars)
            n = draw(length)
            if k == 4:
                return [inner(draw, ex) for _ in range(n)]
            return {draw(keys): inner(draw, ex) for _ in range(n)}

        return gen_any

    def any_object(self, path: tuple[str | int, ...]) -> Gen:
        inner = self.any_json(path, 1)
        length = st.integers(min_value=0, max_value=3)
        keys = st.text(min_size=1, max_size=8)

        def gen_obj(draw: st.DrawFn, ex: Example) -> dict[str, Any]:
            return {draw(keys): inner(draw, ex) for _ in range(draw(length))}

        return gen_obj


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


_NUMERIC_MIN = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties",
                "minContains")
_NUMERIC_MAX = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties",
                "maxContains")
_ANNOTATIONS = ("description", "title", "$comment", "examples", "deprecated", "readOnly",
                "writeOnly")


def merge_schemas(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Merge schemas that must all hold into one, or ``None`` when we cannot do it exactly.

    Exact for the keywords structural schemas use; anything else makes the caller fall back
    to generate-then-check, which is correct but slower.
    """
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in _ANNOTATIONS:
                continue
            if key not in out:
                out[key] = value
                continue
            current = out[key]
            if current == value:
                continue
            if key == "type":
                a = {current} if isinstance(current, str) else set(current)
                b = {value} if isinstance(value, str) else set(value)
                both = a & b
                if ("number" in a and "integer" in b) or ("number" in b and "integer" in a):
                    both.add("integer")
                out[key] = [t for t in _JSON_TYPES if t in both]
            elif key == "required":
                out[key] = list(dict.fromkeys([*current, *value]))
            elif key == "properties":
                merged_props = dict(current)
                for name, sub in value.items():
                    if name in merged_props and merged_props[name] != sub:
                        inner = merge_schemas([merged_props[name], sub]) if isinstance(
                            merged_props[name], Mapping
                        ) and isinstance(sub, Mapping) else None
                        if inner is None:
                            return None
                        merged_props[name] = inner
                    else:
                        merged_props[name] = sub
                out[key] = merged_props
            elif key in _NUMERIC_MIN:
                out[key] = max(current, value)
            elif key in _NUMERIC_MAX:
                out[key] = min(current, value)
            elif key == "enum":
                out[key] = [v for v in current if v in value]
            elif key in ("items", "additionalProperties") and isinstance(
                current, Mapping
            ) and isinstance(value, Mapping):
                inner = merge_schemas([current, value])
                if inner is None:
                    return None
                out[key] = inner
            elif key == "uniqueItems":
                out[key] = bool(current or value)
            else:
                return None
    if "minimum" in out and "exclusiveMinimum" in out:
        pass
    return out
