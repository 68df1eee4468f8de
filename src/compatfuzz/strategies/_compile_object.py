"""Compiling objects: which optional fields appear, maps and unknown fields, embedded resources.

Why a module of its own: objects decide how large and how deep an example gets. Presence
is drawn per field and weighted by the field's subtree, under a per-example budget, so that
deep fields (a Deployment's pod template) are covered without every object being large;
the API server's own rules for embedded resources and a CRD's root ``apiVersion``/``kind``
are applied here too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from compatfuzz.schema._check import never_valid
from compatfuzz.schema._formats import out_of_format_bound
from compatfuzz.strategies import _edges, _scalars
from compatfuzz.strategies import _kubernetes as k8s
from compatfuzz.strategies._compile_base import (
    _NEAR_COIN,
    _PICK,
    _VARIANT,
    CompilerBase,
    Example,
    current_example,
)
from compatfuzz.strategies._compile_cel import RETRIES, Gen, path_text
from compatfuzz.strategies._edges import Family
from compatfuzz.strategies._regex import compile_pattern

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
# A hot map (``_edges``) has up to six extra keys.
_HOT_MAP_SIZE = st.integers(min_value=0, max_value=6)
_EMPTY_COIN = st.integers(min_value=0, max_value=3)
_KEEP = st.integers(min_value=0, max_value=15)  # 0 (1 in 16, and where it shrinks): drop


class ObjectCompiling(CompilerBase):
    """``Compiler``'s object methods."""

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
                # minLength > maxLength, and the API server accepts it) is never
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
