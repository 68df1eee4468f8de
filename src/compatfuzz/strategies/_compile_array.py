"""Compiling arrays: lengths, unique and list-map items kept apart, near-duplicate items.

Why a module of its own: a list's items must stay distinct where the schema says so
(``uniqueItems``, ``x-kubernetes-list-type: set`` and ``map`` keys, through ``_identity``),
and a hot list (``_edges``) is long and repeats its items nearly, to find conversions that
lose or merge them; both concern arrays alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from compatfuzz.strategies import _edges
from compatfuzz.strategies._compile_base import (
    _NEAR_COIN,
    _PICK,
    _VARIANT,
    CompilerBase,
    Example,
)
from compatfuzz.strategies._compile_cel import RETRIES, Gen
from compatfuzz.strategies._edges import Family
from compatfuzz.strategies._identity import item_key


class ArrayCompiling(CompilerBase):
    """``Compiler``'s array methods."""

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
