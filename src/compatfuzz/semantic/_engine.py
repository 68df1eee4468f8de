"""Compile a schema into a tree of comparator nodes, then compare by walking it once.

Why a compiled tree: ``equal()`` runs inside Hypothesis round-trip properties, thousands of
times on Deployment-sized objects. Deciding per schema node (which comparator, which list
semantics, which ``$ref``) once and caching it per schema leaves one walk over the two
values, with almost no allocation when they are equal.

The nodes and the three ways each defines equality (``key``, ``eq``, ``canon``) are in
``_node``; objects and ordered lists in ``_containers``, sets and list-maps in ``_lists``,
scalars compared by meaning in ``_scalars``, registered rules in ``_registered`` and
``anyOf``/``oneOf`` in ``_union``. This module picks one per schema position.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compatfuzz.schema import Schema, WellKnown, classify
from compatfuzz.semantic._containers import ANY, AnyNode, ListNode, MapNode, StructNode, _Keyed
from compatfuzz.semantic._lists import ListMapNode, SetNode
from compatfuzz.semantic._node import Node
from compatfuzz.semantic._registered import CanonicaliserNode, ComparatorNode
from compatfuzz.semantic._registry import PathGlob, Registration
from compatfuzz.semantic._scalars import (
    DurationNode,
    GoDurationNode,
    NumberNode,
    QuantityNode,
    TimeNode,
    iso_duration_field,
)
from compatfuzz.semantic._union import UnionNode

_ANNOTATIONS = frozenset({
    "description", "title", "default", "examples", "example", "$comment", "readOnly",
    "writeOnly", "deprecated", "externalDocs",
})
_WILDCARD = object()
State = frozenset[tuple[int, int]]
_EMPTY: State = frozenset()


class Compiler:
    """Turns one schema (plus the registered rules) into a :class:`Node` tree, memoised."""

    def __init__(self, schema: Schema | None, rules: Sequence[Registration],
                 local: Sequence[Registration] = (), empty_struct_is_absent: bool = False) -> None:
        self.schema = schema
        self.empty_struct_is_absent = empty_struct_is_absent
        newest_first = sorted(rules, key=lambda r: r.order, reverse=True)
        self.path_rules = [r for r in local if r.selector == "path"] + \
            [r for r in newest_first if r.selector == "path"]
        self.tokens = [r.value.tokens if isinstance(r.value, PathGlob) else ()
                       for r in self.path_rules]
        self.node_rules = {
            sel: [r for r in newest_first if r.selector == sel]
            for sel in ("predicate", "definition", "format")
        }
        self.memo: dict[tuple[Any, ...], Node] = {}
        self.building: set[int] = set()  # unions whose branches are being compiled

    # -- path globs --------------------------------------------------------------------
    def start(self) -> State:
        return self._closure({(i, 0) for i in range(len(self.path_rules))})

    def _closure(self, state: set[tuple[int, int]]) -> State:
        todo = list(state)
        while todo:
            i, p = todo.pop()
            toks = self.tokens[i]
            if p < len(toks) and toks[p] == "**" and (i, p + 1) not in state:
                state.add((i, p + 1))
                todo.append((i, p + 1))
        return frozenset(state)

    def advance(self, state: State, seg: object, item: bool) -> State:
        if not state:
            return state
        out: set[tuple[int, int]] = set()
        for i, p in state:
            toks = self.tokens[i]
            if p >= len(toks):
                continue
            t = toks[p]
            if t == "**":
                out.add((i, p))
            elif t == "[*]":
                if item:
                    out.add((i, p + 1))
            elif not item and t in ("*", seg):
                out.add((i, p + 1))
        return self._closure(out) if out else _EMPTY

    def literals(self, state: State) -> set[str]:
        names = set()
        for i, p in state:
            toks = self.tokens[i]
            if p < len(toks) and toks[p] not in ("*", "**", "[*]"):
                names.add(toks[p])
        return names

    def matched(self, state: State) -> Registration | None:
        best = None
        for i, p in state:
            if p == len(self.tokens[i]) and (best is None or i < best):
                best = i
        return None if best is None else self.path_rules[best]

    # -- rules -------------------------------------------------------------------------
    def select(self, node: Mapping[str, Any] | None, ref_name: str | None,
               state: State) -> Registration | None:
        rule = self.matched(state)
        if rule is not None or node is None:
            return rule
        for sel in ("predicate", "definition", "format"):
            for r in self.node_rules[sel]:
                if r.matches_node(node, ref_name):
                    return r
        return None

    def wrap(self, rule: Registration) -> CanonicaliserNode | ComparatorNode:
        if rule.kind == "canonicaliser":
            return CanonicaliserNode(rule)
        return ComparatorNode(rule)

    # -- nodes -------------------------------------------------------------------------
    def root(self) -> Node:
        state = self.start()
        if self.schema is None:
            return self.any(state)
        # The root is reached through no $ref; its definition name is the Schema's name
        # (load_kubernetes puts the Deployment itself at the root).
        return self.compile(self.schema.root, self.schema.name or None, state)

    def any(self, state: State) -> Node:
        rule = self.select(None, None, state)
        if not state and rule is None:
            return ANY
        key = ("any", state)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if rule is not None:
            wrapper = self.wrap(rule)
            self.memo[key] = wrapper
            wrapper.fallback = self._any_plain(state)
            return wrapper
        return self._any_plain(state)

    def _any_plain(self, state: State) -> Node:
        key = ("any-plain", state)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        node = AnyNode()
        self.memo[key] = node
        self.memo.setdefault(("any", state), node)
        self._fill_keyed(node, state, self.any)
        node.item = self.any(self.advance(state, None, True))
        return node

    def _fill_keyed(self, node: _Keyed, state: State, make: Callable[[State], Node]) -> None:
        node.default = make(self.advance(state, _WILDCARD, False))
        node.overrides = {name: make(self.advance(state, name, False))
                          for name in self.literals(state)}

    def compile(self, obj: Any, ref_name: str | None, state: State) -> Node:
        key = (id(obj), ref_name, state)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if isinstance(obj, bool) or not isinstance(obj, Mapping):
            node = self.any(state)
            self.memo[key] = node
            return node
        if "$ref" in obj and self.schema is not None:
            ref = obj["$ref"]
            target = self.schema.resolve(ref)
            name = ref.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            siblings = {k: v for k, v in obj.items() if k != "$ref" and k not in _ANNOTATIONS}
            if not siblings:
                node = self.compile(target, name, state)
                self.memo[key] = node
                return node
            merged = {**target, **siblings}
            return self.build(merged, name, state, key)
        if "allOf" in obj and self.schema is not None:
            merged, name = self.merge_all_of(obj)
            return self.build(merged, ref_name or name, state, key)
        return self.build(obj, ref_name, state, key)

    def merge_all_of(self, obj: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        assert self.schema is not None
        merged: dict[str, Any] = {k: v for k, v in obj.items() if k != "allOf"}
        name = None
        props: dict[str, Any] = dict(merged.get("properties", {}))
        for raw in obj["allOf"]:
            if not isinstance(raw, Mapping):
                continue
            part: Mapping[str, Any] = raw
            seen = 0
            while "$ref" in part and seen < 32:
                ref = part["$ref"]
                name = name or ref.rsplit("/", 1)[-1]
                part = {**self.schema.resolve(ref),
                        **{k: v for k, v in part.items() if k != "$ref"}}
                seen += 1
            if "allOf" in part:
                part, inner = self.merge_all_of(part)
                name = name or inner
            for k, v in part.items():
                if k == "properties" and isinstance(v, Mapping):
                    for pk, pv in v.items():
                        props.setdefault(pk, pv)
                elif k not in merged:
                    merged[k] = v
        if props:
            merged["properties"] = props
        return merged, name

    def build(self, obj: Mapping[str, Any], ref_name: str | None, state: State,
              key: tuple[Any, ...] | None) -> Node:
        rule = self.select(obj, ref_name, state)
        if rule is not None:
            wrapper = self.wrap(rule)
            if key is not None:
                self.memo[key] = wrapper
            wrapper.fallback = self.builtin(obj, ref_name, state, None)
            return wrapper
        return self.builtin(obj, ref_name, state, key)

    def builtin(self, obj: Mapping[str, Any], ref_name: str | None, state: State,
                key: tuple[Any, ...] | None) -> Node:
        def done(node: Node) -> Node:
            if key is not None:
                self.memo[key] = node
            return node

        kind = classify(obj, ref_name)
        if kind is WellKnown.QUANTITY:
            return done(QuantityNode())
        if kind in (WellKnown.TIME, WellKnown.MICRO_TIME):
            return done(TimeNode())
        if kind is WellKnown.DURATION:
            return done(GoDurationNode())
        if kind in (WellKnown.INT_OR_STRING, WellKnown.RAW_EXTENSION):
            return done(self.any(state))
        fmt = obj.get("format")
        if fmt == "date-time":
            return done(TimeNode())
        if fmt == "duration":
            # The API server accepts Go and ISO 8601 spellings alike (kube-openapi strfmt
            # ParseDuration), so a Kubernetes field means what its pattern and values
            # say: ISO 8601 when they are ISO, else Go ("90m" == "1h30m0s")
            if self.schema is not None and self.schema.kubernetes \
                    and not iso_duration_field(obj):
                return done(GoDurationNode())
            return done(DurationNode())
        if fmt == "int-or-string":
            return done(self.any(state))

        raw_type = obj.get("type")
        if isinstance(raw_type, str):
            types = [raw_type]
        elif isinstance(raw_type, list):
            types = [t for t in raw_type if t != "null"]
        else:
            types = []
        structural = ("properties", "additionalProperties", "items")
        alternatives = [b for b in (obj.get("oneOf") or obj.get("anyOf") or [])
                        if isinstance(b, Mapping)]
        if alternatives and len(types) <= 1 and not any(k in obj for k in structural):
            # With a type beside the union (type: string, anyOf: [{format: date-time}, ...])
            # each branch is read together with the outer keywords.
            outer = {k: v for k, v in obj.items() if k not in ("anyOf", "oneOf")} \
                if types else None
            union = UnionNode()
            done(union)
            self.building.add(id(union))
            for branch in alternatives:
                if outer is None or "$ref" in branch:
                    sub, types_of = self.compile(branch, None, state), branch
                else:
                    types_of = {**outer, **branch}
                    sub = self.build(types_of, None, state, None)
                if isinstance(sub, UnionNode) and id(sub) not in self.building:
                    union.branches.extend(sub.branches)  # nested anyOf/oneOf: flatten
                else:
                    union.branches.append((self.branch_types(types_of), sub))
            self.building.discard(id(union))
            union.fallback = self.any(state)
            return union
        if not types:
            if "properties" in obj or "additionalProperties" in obj:
                types = ["object"]
            elif "items" in obj:
                types = ["array"]
            else:
                return done(self.any(state))
        if len(types) > 1:
            union = UnionNode()
            done(union)
            for t in types:
                union.branches.append((frozenset({t}),
                                       self.builtin({**obj, "type": t}, ref_name, state, None)))
            union.fallback = self.any(state)
            return union
        t = types[0]
        if t == "object":
            props = obj.get("properties")
            extra = obj.get("additionalProperties")
            node: _Keyed
            if isinstance(props, Mapping) and props:
                node = StructNode(self.empty_struct_is_absent)
                done(node)
                if isinstance(extra, Mapping):
                    self._fill_keyed(node, state, functools.partial(self.compile, extra, None))
                else:
                    self._fill_keyed(node, state, self.any)  # unknown fields: no schema
                node.overrides.update(
                    {name: self.compile(sub, None, self.advance(state, name, False))
                     for name, sub in props.items()})
                return node
            node = MapNode()
            done(node)
            if isinstance(extra, Mapping):
                self._fill_keyed(node, state, functools.partial(self.compile, extra, None))
            else:
                self._fill_keyed(node, state, self.any)
            return node
        if t == "array":
            list_type = obj.get("x-kubernetes-list-type")
            map_keys = obj.get("x-kubernetes-list-map-keys")
            lst: ListNode
            if list_type == "map" and isinstance(map_keys, list) and map_keys:
                lst = ListMapNode(tuple(str(k) for k in map_keys))
            elif list_type in ("set", "map"):
                lst = SetNode()
            else:
                lst = ListNode()
            done(lst)
            items = obj.get("items")
            item_state = self.advance(state, None, True)
            lst.item = self.compile(items, None, item_state) if isinstance(items, Mapping) \
                else self.any(item_state)
            return lst
        if t == "number":
            return done(NumberNode())
        return done(self.any(state) if state else ANY)

    def branch_types(self, branch: Mapping[str, Any], depth: int = 0) -> frozenset[str] | None:
        """The JSON types a union branch admits (``$ref``, ``allOf`` and nested unions
        followed), or None when it admits every type."""
        if depth > 32:
            return None
        if "$ref" in branch and self.schema is not None:
            ref = branch["$ref"]
            name = ref.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            merged = {**self.schema.resolve(ref), **{k: v for k, v in branch.items()
                                                     if k != "$ref" and k not in _ANNOTATIONS}}
            if "$ref" in merged and merged["$ref"] == ref:
                return None
            return self._own_types(merged, name, depth)
        if "allOf" in branch and self.schema is not None:
            merged, name = self.merge_all_of(branch)
            return self._own_types(merged, name, depth)
        return self._own_types(branch, None, depth)

    def _own_types(self, branch: Mapping[str, Any], ref_name: str | None,
                   depth: int) -> frozenset[str] | None:
        if "$ref" in branch or ("allOf" in branch and self.schema is not None):
            return self.branch_types(branch, depth + 1)
        kind = classify(branch, ref_name)
        if kind is WellKnown.QUANTITY:
            return frozenset({"string", "integer", "number"})
        if kind in (WellKnown.TIME, WellKnown.MICRO_TIME, WellKnown.DURATION):
            return frozenset({"string"})
        if kind is WellKnown.INT_OR_STRING:
            return frozenset({"integer", "string"})
        raw = branch.get("type")
        if isinstance(raw, str):
            return frozenset({raw})
        if isinstance(raw, list):
            return frozenset(raw)
        if "properties" in branch or "additionalProperties" in branch:
            return frozenset({"object"})
        if "items" in branch:
            return frozenset({"array"})
        if branch.get("format") in ("date-time", "duration"):
            return frozenset({"string"})
        nested = [b for b in (branch.get("oneOf") or branch.get("anyOf") or [])
                  if isinstance(b, Mapping)]
        if nested:
            out: set[str] = set()
            for b in nested:
                types = self.branch_types(b, depth + 1)
                if types is None:
                    return None
                out |= types
            return frozenset(out)
        return None
