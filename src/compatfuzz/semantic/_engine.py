"""Compile a schema into a tree of comparator nodes, then compare by walking it once.

Why a compiled tree: ``equal()`` runs inside Hypothesis round-trip properties, thousands of
times on Deployment-sized objects. Deciding per schema node (which comparator, which list
semantics, which ``$ref``) once and caching it per schema leaves one walk over the two
values, with almost no allocation when they are equal.

Every node defines equality three ways that must agree, and the tests check they do:

* ``key(v)``: a hashable *meaning* of ``v``; ``a`` equals ``b`` iff ``key(a) == key(b)``.
  That makes every built-in equality an equivalence relation by construction (reflexive,
  symmetric, transitive), whatever the schema (STYLE.md 22).
* ``eq(a, b)``: the fast path; same answer as comparing keys, without building them.
* ``canon(v)``: one JSON spelling of the meaning (idempotent), for users and for diffs.

Absent and ``null`` are the same everywhere (``None`` stands for both). Lists and maps
(``additionalProperties`` or untyped objects) also equal absent when empty; objects with
``properties`` (Go structs) do not: ``{}`` is a pointer to a zero struct, not a nil one.
User comparators (opaque functions of two values) have no key; parents that need one
(order-insensitive lists) fall back to pairwise matching, which is correct for any
equivalence relation.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from compatfuzz.schema import Schema, WellKnown, classify
from compatfuzz.schema._pattern import search as pattern_search
from compatfuzz.schema._quantity import (
    BINARY_SI,
    DECIMAL_SI,
    InvalidQuantity,
    Quantity,
    quantity_from_json,
)
from compatfuzz.semantic._diff import Change, ChangeKind, join_key, join_name, join_value
from compatfuzz.semantic._registry import PathGlob, Registration
from compatfuzz.semantic._values import (
    _decimal,
    canonical_date_time,
    canonical_duration,
    canonical_go_duration,
    date_time_key,
    duration_key,
    go_duration_key,
)

ABSENT: tuple[str] = ("a",)


class NoKey(Exception):
    """A subtree is compared by an opaque user comparator, so it has no key."""


def jtype(v: Any) -> str:
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "boolean"
    if t is int or (isinstance(v, int) and not isinstance(v, bool)):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, Mapping):
        return "object"
    return type(v).__name__


def _scalar_key(v: Any) -> Hashable:
    """Type-strict key of a scalar: bool is not int, 1 is not 1.0."""
    t = type(v)
    if t is str:
        return ("s", v)
    if t is bool:
        return ("b", v)
    if t is int:
        return ("i", v)
    if t is float:
        return ("F",) if math.isnan(v) else ("f", v)
    if isinstance(v, bool):
        return ("b", bool(v))
    if isinstance(v, int):
        return ("i", int(v))
    if isinstance(v, float):
        return _scalar_key(float(v))
    if isinstance(v, str):
        return ("s", str(v))
    try:
        hash(v)
    except TypeError:
        return ("o", type(v).__name__, repr(v))
    return ("o", type(v).__name__, v)


def _pair_sort(pair: tuple[Any, Any]) -> tuple[str, str]:
    return (type(pair[0]).__name__, str(pair[0]))


class Node:
    """A compiled schema position. See the module docstring for the three contracts."""

    __slots__ = ()
    name = "node"

    def eq(self, a: Any, b: Any) -> bool:
        raise NotImplementedError

    def key(self, v: Any) -> Hashable:
        raise NotImplementedError

    def canon(self, v: Any) -> Any:
        return v

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if not self.eq(a, b):
            leaf_change(self, a, b, path, out)

    def absent(self, v: Any) -> bool:
        """Whether ``v`` means the same as an absent field."""
        if v is None:
            return True
        try:
            return self.key(v) == ABSENT
        except NoKey:
            return self.absent_opaque(v)

    def absent_opaque(self, v: Any) -> bool:
        return False

    def slow_eq(self, a: Any, b: Any) -> bool:
        if a is None:
            return self.absent(b)
        if b is None:
            return self.absent(a)
        try:
            return self.key(a) == self.key(b)
        except NoKey:
            return self.absent(a) and self.absent(b)

    def detail(self, a: Any, b: Any) -> str:
        return ""


def leaf_change(node: Node, a: Any, b: Any, path: str, out: list[Change], *,
                numeric: bool = False, same_type: bool = False) -> None:
    if node.absent(a):
        kind = ChangeKind.ADDED
    elif node.absent(b):
        kind = ChangeKind.LOST
    else:
        ta, tb = jtype(a), jtype(b)
        if same_type or (numeric and ta in ("integer", "number") and
                         tb in ("integer", "number")):
            ta = tb
        kind = ChangeKind.CHANGED if ta == tb else ChangeKind.TYPE_CHANGED
    out.append(Change(path, kind, a, b, node.detail(a, b) if kind is ChangeKind.CHANGED else ""))


# ---------------------------------------------------------------------------------------
# Containers


class _Keyed(Node):
    """Shared logic of nodes whose JSON objects map names to child nodes."""

    __slots__ = ("default", "overrides")

    def __init__(self) -> None:
        self.default: Node = self
        self.overrides: dict[str, Node] = {}

    def child(self, k: str) -> Node:
        return self.overrides.get(k, self.default)

    def eq_map(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        child = self.child
        get = b.get
        for k, va in a.items():
            vb = get(k)
            if va is not vb and not child(k).eq(va, vb):
                return False
        for k, vb in b.items():
            if vb is not None and k not in a and not child(k).eq(None, vb):
                return False
        return True

    def slow_eq(self, a: Any, b: Any) -> bool:
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return self.eq_map(a, b)
        return super().slow_eq(a, b)

    def absent_opaque(self, v: Any) -> bool:
        if isinstance(v, Mapping):
            return all(self.child(k).absent(x) for k, x in v.items())
        return isinstance(v, (list, tuple)) and not v

    def pairs(self, v: Mapping[str, Any]) -> tuple[tuple[str, Hashable], ...]:
        out = []
        for k, x in v.items():
            kx = self.child(k).key(x)
            if kx != ABSENT:
                out.append((k, kx))
        out.sort(key=_pair_sort)
        return tuple(out)

    def canon_map(self, v: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for k, x in v.items():
            c = self.child(k)
            if not c.absent(x):
                out[k] = c.canon(x)
        return dict(sorted(out.items(), key=_pair_sort))

    def diff_map(self, a: Mapping[str, Any], b: Mapping[str, Any], path: str,
                 out: list[Change]) -> None:
        for k, va in a.items():
            self.child(k).diff(va, b.get(k), join_name(path, k), out)
        for k, vb in b.items():
            if k not in a:
                self.child(k).diff(None, vb, join_name(path, k), out)


class AnyNode(_Keyed):
    """No schema: exact scalars (bool is not int, 1 is not 1.0); null, [] and {} all mean absent."""

    __slots__ = ("item",)
    name = "any"

    def __init__(self) -> None:
        super().__init__()
        self.item: Node = self

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        ta = type(a)
        if ta is type(b):
            if ta is str or ta is int or ta is bool:
                return bool(a == b)
            if ta is dict:
                return self.eq_map(a, b)
            if ta is list:
                if len(a) != len(b):
                    return False
                item = self.item
                for x, y in zip(a, b, strict=False):
                    if x is not y and not item.eq(x, y):
                        return False
                return True
            if ta is float:
                return bool(a == b or (math.isnan(a) and math.isnan(b)))
        return self.slow_eq(a, b)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        if isinstance(v, Mapping):
            pairs = self.pairs(v)
            return ("d", pairs) if pairs else ABSENT
        if isinstance(v, (list, tuple)):
            if not v:
                return ABSENT
            item = self.item
            return ("l", tuple(item.key(x) for x in v))
        return _scalar_key(v)

    def canon(self, v: Any) -> Any:
        if isinstance(v, Mapping):
            return self.canon_map(v)
        if isinstance(v, (list, tuple)):
            return [self.item.canon(x) for x in v]
        return v

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            self.diff_map(a, b, path, out)
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and a and b:
            _diff_ordered(self.item, a, b, path, out)
        else:
            leaf_change(self, a, b, path, out)


ANY = AnyNode()


class StructNode(_Keyed):
    """An object with ``properties``: fields by their own schema; ``{}`` is not absent.

    ``{}`` is Go's pointer to a zero struct, absent its nil pointer (Kubernetes keeps them
    apart). With ``empty_is_absent`` (``equal(..., empty_struct_is_absent=True)``) they
    are the same, as for Go non-pointer struct fields, which are always emitted.
    """

    __slots__ = ("empty_is_absent",)
    name = "struct"

    def __init__(self, empty_is_absent: bool = False) -> None:
        super().__init__()
        self.empty_is_absent = empty_is_absent

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is dict and type(b) is dict:
            return self.eq_map(a, b)
        return self.slow_eq(a, b)

    def absent_opaque(self, v: Any) -> bool:
        if isinstance(v, Mapping):
            return self.empty_is_absent and super().absent_opaque(v)
        return ANY.absent(v)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        if isinstance(v, Mapping):
            pairs = self.pairs(v)
            return ABSENT if self.empty_is_absent and not pairs else ("d", pairs)
        return ANY.key(v)

    def canon(self, v: Any) -> Any:
        return self.canon_map(v) if isinstance(v, Mapping) else ANY.canon(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            self.diff_map(a, b, path, out)
        else:
            leaf_change(self, a, b, path, out)


class MapNode(_Keyed):
    """``additionalProperties`` (or untyped) object: values by their schema; empty is absent."""

    __slots__ = ()
    name = "map"

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is dict and type(b) is dict:
            return self.eq_map(a, b)
        return self.slow_eq(a, b)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        if isinstance(v, Mapping):
            pairs = self.pairs(v)
            return ("d", pairs) if pairs else ABSENT
        return ANY.key(v)

    def canon(self, v: Any) -> Any:
        return self.canon_map(v) if isinstance(v, Mapping) else ANY.canon(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping) and a and b:
            self.diff_map(a, b, path, out)
        else:
            leaf_change(self, a, b, path, out)


def _diff_ordered(item: Node, a: Sequence[Any], b: Sequence[Any], path: str,
                  out: list[Change]) -> None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        item.diff(x, y, f"{path}[{i}]", out)
    for i in range(len(b), len(a)):
        out.append(Change(f"{path}[{i}]", ChangeKind.LOST, a[i], None))
    for i in range(len(a), len(b)):
        out.append(Change(f"{path}[{i}]", ChangeKind.ADDED, None, b[i]))


class ListNode(Node):
    """An atomic (ordered) array; empty is absent."""

    __slots__ = ("item",)
    name = "list"

    def __init__(self) -> None:
        self.item: Node = ANY

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is list and type(b) is list:
            if len(a) != len(b):
                return False
            item = self.item
            return all(x is y or item.eq(x, y) for x, y in zip(a, b, strict=False))
        return self.slow_eq(a, b)

    def seq_eq(self, a: Sequence[Any], b: Sequence[Any]) -> bool:
        if len(a) != len(b):
            return False
        item = self.item
        return all(x is y or item.eq(x, y) for x, y in zip(a, b, strict=False))

    def slow_eq(self, a: Any, b: Any) -> bool:
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return self.seq_eq(a, b)
        return super().slow_eq(a, b)

    def absent_opaque(self, v: Any) -> bool:
        return ANY.absent(v)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        if isinstance(v, (list, tuple)):
            if not v:
                return ABSENT
            return ("l", tuple(self.item.key(x) for x in v))
        return ANY.key(v)

    def canon(self, v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return [self.item.canon(x) for x in v]
        return ANY.canon(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and a and b:
            _diff_ordered(self.item, a, b, path, out)
        else:
            leaf_change(self, a, b, path, out)


class SetNode(ListNode):
    """``x-kubernetes-list-type: set``: order is ignored (duplicates still count)."""

    __slots__ = ()
    name = "set"

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is list and type(b) is list:
            return self.seq_eq(a, b)
        return self.slow_eq(a, b)

    def seq_eq(self, a: Sequence[Any], b: Sequence[Any]) -> bool:
        if len(a) != len(b):
            return False
        item = self.item
        for x, y in zip(a, b, strict=False):
            if x is not y and not item.eq(x, y):
                break
        else:
            return True
        return self.multiset_eq(a, b)

    def multiset_eq(self, a: Sequence[Any], b: Sequence[Any]) -> bool:
        item = self.item
        try:
            return Counter(map(item.key, a)) == Counter(map(item.key, b))
        except NoKey:
            lost, added = _unmatched(item, a, b)
            return not lost and not added

    def key(self, v: Any) -> Hashable:
        if isinstance(v, (list, tuple)) and v:
            keys = sorted(_Sortable(self.item.key(x)) for x in v)
            return ("l", tuple(k.key for k in keys))
        return super().key(v)

    def canon(self, v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            items = [self.item.canon(x) for x in v]
            try:
                return [x for _k, x in sorted(
                    ((_Sortable(self.item.key(x)), x) for x in items), key=lambda p: p[0])]
            except NoKey:
                return items
        return ANY.canon(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and a and b):
            leaf_change(self, a, b, path, out)
            return
        lost, added = _unmatched(self.item, a, b)
        for i in lost:  # named by value: a[i] and b[i] are not "the same position"
            out.append(Change(join_value(path, a[i]), ChangeKind.LOST, a[i], None))
        for j in added:
            out.append(Change(join_value(path, b[j]), ChangeKind.ADDED, None, b[j]))


class _Sortable:
    """Total order over keys: by the repr of the type tags first, so mixed types sort."""

    __slots__ = ("_order", "key")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self._order = _order_key(key)

    def __lt__(self, other: _Sortable) -> bool:
        return bool(self._order < other._order)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Sortable) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _order_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return tuple(_order_key(k) for k in key)
    return (type(key).__name__, key if isinstance(key, (str, int, float, bool)) else repr(key))


def _unmatched(item: Node, a: Sequence[Any], b: Sequence[Any]) -> tuple[list[int], list[int]]:
    """Indices of a and b left after pairing equal items (greedy: fine for equivalences)."""
    free = list(range(len(b)))
    lost = []
    for i, x in enumerate(a):
        for pos, j in enumerate(free):
            if item.eq(x, b[j]):
                del free[pos]
                break
        else:
            lost.append(i)
    return lost, free


class ListMapNode(SetNode):
    """``x-kubernetes-list-type: map``: items matched by their ``list-map-keys``; order ignored."""

    __slots__ = ("map_keys",)
    name = "list-map"

    def __init__(self, map_keys: tuple[str, ...]) -> None:
        super().__init__()
        self.map_keys = map_keys

    def seq_eq(self, a: Sequence[Any], b: Sequence[Any]) -> bool:
        if len(a) != len(b):
            return False
        item = self.item
        for x, y in zip(a, b, strict=False):
            if x is not y and not item.eq(x, y):
                break
        else:
            return True
        # Reordered: pair items by their map keys (cheap), else compare as multisets.
        by_id: dict[Hashable, list[Any]] = {}
        for y in b:
            by_id.setdefault(ANY.key(list(self.item_id(y))), []).append(y)
        for x in a:
            candidates = by_id.get(ANY.key(list(self.item_id(x))))
            if not candidates:
                break
            for pos, y in enumerate(candidates):
                if x is y or item.eq(x, y):
                    del candidates[pos]
                    break
            else:
                break
        else:
            return True
        return self.multiset_eq(a, b)

    def item_id(self, x: Any) -> tuple[tuple[str, Any], ...]:
        if not isinstance(x, Mapping):
            return ()
        return tuple((k, x.get(k)) for k in self.map_keys)

    def canon(self, v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            items = [self.item.canon(x) for x in v]
            try:
                decorated = [((_Sortable(ANY.key(list(self.item_id(x)))),
                               _Sortable(self.item.key(x))), x) for x in items]
            except NoKey:
                return items
            return [x for _k, x in sorted(decorated, key=lambda p: p[0])]
        return ANY.canon(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and a and b):
            leaf_change(self, a, b, path, out)
            return
        lost, added = _unmatched(self.item, a, b)
        # Pair what is left by map keys, in order of appearance; report inside matched items.
        by_id: dict[Hashable, list[int]] = {}
        for j in added:
            by_id.setdefault(ANY.key(list(self.item_id(b[j]))), []).append(j)
        still_added = set(added)
        for i in lost:
            ident = self.item_id(a[i])
            candidates = by_id.get(ANY.key(list(ident)))
            item_path = join_key(path, ident) if ident else join_value(path, a[i])
            if candidates:
                j = candidates.pop(0)
                still_added.discard(j)
                self.item.diff(a[i], b[j], item_path, out)
            else:
                out.append(Change(item_path, ChangeKind.LOST, a[i], None))
        for j in sorted(still_added):
            ident = self.item_id(b[j])
            out.append(Change(join_key(path, ident) if ident else join_value(path, b[j]),
                              ChangeKind.ADDED, None, b[j]))


class UnionNode(Node):
    """``anyOf``/``oneOf`` or a type list: each value compared by the branch that takes it.

    Which branch takes a value depends on the value alone, never on the order the branches
    are listed in, so equality stays a function of keys (an equivalence). Candidates are
    the branches whose JSON types admit the value (a ``number`` branch admits integers;
    an untyped branch admits everything); among them the most specific wins: a registered
    rule, then a parsed scalar (quantity, date-time, duration) that parses the value, then
    ``number``, then containers, then exact comparison. Equally specific candidates (two
    object schemas, say) go to the first listed; nested unions are flattened first.
    """

    __slots__ = ("branches", "by_type", "fallback")
    name = "union"

    def __init__(self) -> None:
        self.branches: list[tuple[frozenset[str] | None, Node]] = []
        self.fallback: Node = ANY
        self.by_type: dict[str, tuple[Node, ...]] | None = None

    def _index(self) -> dict[str, tuple[Node, ...]]:
        table: dict[str, tuple[Node, ...]] = {}
        for t in ("null", "boolean", "integer", "number", "string", "array", "object"):
            cands = [(-_rank(node), pos, node) for pos, (types, node) in enumerate(self.branches)
                     if types is None or t in types or (t == "integer" and "number" in types)]
            cands.sort(key=lambda c: c[:2])
            table[t] = tuple(c[2] for c in cands)
        self.by_type = table
        return table

    def pick(self, v: Any) -> Node:
        table = self.by_type if self.by_type is not None else self._index()
        cands = table.get(jtype(v), ())
        if not cands:
            return self.fallback
        if len(cands) == 1:
            return cands[0]
        for node in cands:
            if not isinstance(node, _ParsedScalar) or node.parse(v) is not None:
                return node
        return cands[-1]

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        na, nb = self.pick(a), self.pick(b)
        if na is nb:
            return na.eq(a, b)
        try:
            return na.key(a) == nb.key(b)
        except NoKey:
            return na.absent(a) and nb.absent(b)

    def key(self, v: Any) -> Hashable:
        return self.pick(v).key(v)

    def absent(self, v: Any) -> bool:
        return self.pick(v).absent(v)

    def canon(self, v: Any) -> Any:
        return self.pick(v).canon(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        na, nb = self.pick(a), self.pick(b)
        if na is nb:
            na.diff(a, b, path, out)
        else:
            leaf_change(self, a, b, path, out)


def _rank(node: Node) -> int:
    """How specific a union branch's comparison is (higher wins, see :class:`UnionNode`)."""
    if isinstance(node, (CanonicaliserNode, ComparatorNode)):
        return 4
    if isinstance(node, _ParsedScalar):
        return 3
    if isinstance(node, NumberNode):
        return 2
    if isinstance(node, (_Keyed, ListNode)) and not isinstance(node, AnyNode):
        return 1
    return 0


# ---------------------------------------------------------------------------------------
# Scalars compared by meaning


class NumberNode(Node):
    """``type: number``: 1 == 1.0 (compared exactly, no float rounding); bool is not a number."""

    __slots__ = ()
    name = "number"

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            return bool(a == b or (ta is float and tb is float and math.isnan(a) and math.isnan(b)))
        return self.slow_eq(a, b)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        if isinstance(v, float) and not isinstance(v, bool):
            if math.isnan(v):
                return ("F",)
            return ("n", int(v) if v.is_integer() else float(v))
        if isinstance(v, int) and not isinstance(v, bool):
            return ("n", int(v))
        return ANY.key(v)

    def canon(self, v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if not self.eq(a, b):
            leaf_change(self, a, b, path, out, numeric=True)


class _ParsedScalar(Node):
    """A string type compared by a parsed key, exact when it does not parse."""

    __slots__ = ()
    tag = "?"

    def parse(self, v: Any) -> Hashable | None:
        raise NotImplementedError

    def spell(self, v: Any) -> Any:
        raise NotImplementedError

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is str and a == b:
            return True
        return self.key(a) == self.key(b)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        parsed = self.parse(v)
        return ANY.key(v) if parsed is None else (self.tag, parsed)

    def canon(self, v: Any) -> Any:
        if v is None:
            return None
        out = self.spell(v)
        return v if out is NotImplemented else out

    def detail(self, a: Any, b: Any) -> str:
        ca, cb = self.canon(a), self.canon(b)
        if (ca, cb) != (a, b):
            return f"{self.name}: {ca} != {cb}"
        return ""


@functools.lru_cache(maxsize=8192)
def _quantity_key_str(text: str) -> Hashable | None:
    try:
        q = quantity_from_json(text)
    except InvalidQuantity:
        return None
    return (q.coefficient, q.exponent)


def quantity_key(v: Any) -> Hashable | None:
    if isinstance(v, str):
        return _quantity_key_str(v)
    try:
        q = quantity_from_json(v)
    except InvalidQuantity:
        return None
    return (q.coefficient, q.exponent)


def canonical_quantity(value: Any) -> Any:
    """apimachinery's canonical quantity string: ``"1024Mi"`` -> ``"1Gi"``, 0.5 -> ``"500m"``.

    Returns ``NotImplemented`` when ``value`` is not a quantity.
    """
    try:
        return quantity_from_json(value).canonical()
    except InvalidQuantity:
        return NotImplemented


@functools.lru_cache(maxsize=8192)
def _unique_quantity_str(text: str) -> str | None:
    try:
        return unique_quantity(quantity_from_json(text))
    except InvalidQuantity:
        return None


def unique_quantity(q: Quantity) -> str:
    """The one spelling ``canonicalise`` gives a quantity's value, whatever its format.

    apimachinery's canonical form keeps the format (``"1Gi"`` but ``"1073741824"`` for the
    same value), so it is not unique per value. This is the shorter of the value's canonical
    DecimalSI and BinarySI spellings, DecimalSI on a tie or when BinarySI cannot hold the
    value (beyond +-(2**63-1), where apimachinery caps BinarySI): ``"1Gi"``, ``"1k"`` (also for
    ``"1e3"``), ``"500m"``, ``"1536Mi"``, ``"1T"``, ``"1Ki"`` (for ``"1024"``).
    """
    dec = Quantity(q.coefficient, q.exponent, DECIMAL_SI).canonical()
    c, e = q.coefficient, q.exponent
    if e < 0 or len(str(abs(c))) + e > 19 or abs(c) * 10**e > 2**63 - 1:
        return dec  # not an integer, or beyond the int64 cap BinarySI parses to
    binary = Quantity(c, e, BINARY_SI).canonical()
    return binary if len(binary) < len(dec) else dec


class QuantityNode(_ParsedScalar):
    """``resource.Quantity``: equal numeric value, whatever the suffix or format."""

    __slots__ = ()
    name = "quantity"
    tag = "q"

    def detail(self, a: Any, b: Any) -> str:
        try:
            qa, qb = quantity_from_json(a), quantity_from_json(b)
        except InvalidQuantity:
            return ""
        return f"quantity values {_decimal(Fraction(*qa.as_fraction()))} != " \
            f"{_decimal(Fraction(*qb.as_fraction()))}"

    def parse(self, v: Any) -> Hashable | None:
        return quantity_key(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        # "1" and 2 are both quantity spellings: a value change, not a type change.
        if not self.eq(a, b):
            both = a is not None and b is not None and \
                quantity_key(a) is not None and quantity_key(b) is not None
            leaf_change(self, a, b, path, out, same_type=both)

    def spell(self, v: Any) -> Any:
        if isinstance(v, str):
            out = _unique_quantity_str(v)
            return NotImplemented if out is None else out
        try:
            return unique_quantity(quantity_from_json(v))
        except InvalidQuantity:
            return NotImplemented


class TimeNode(_ParsedScalar):
    """``date-time`` / ``metav1.Time``: the same instant, any offset, exact fractions."""

    __slots__ = ()
    name = "date-time"
    tag = "t"

    def parse(self, v: Any) -> Hashable | None:
        return date_time_key(v)

    def spell(self, v: Any) -> Any:
        return canonical_date_time(v)


class DurationNode(_ParsedScalar):
    """An ISO 8601 duration: equal after exact unit conversions (P1W == P7D, PT1H == PT3600S).

    ``format: duration`` outside Kubernetes, and in a Kubernetes schema where
    :func:`iso_duration_field` says the field is ISO 8601. Strings that are not ISO 8601
    durations are compared exactly.
    """

    __slots__ = ()
    name = "duration"
    tag = "P"

    def parse(self, v: Any) -> Hashable | None:
        return duration_key(v)

    def spell(self, v: Any) -> Any:
        return canonical_duration(v)


class GoDurationNode(_ParsedScalar):
    """A Go ``time.Duration`` string (``metav1.Duration``): equal nanoseconds (90m == 1h30m).

    Also ``format: duration`` in a Kubernetes schema unless the field is ISO 8601
    (:func:`iso_duration_field`). Strings ``time.ParseDuration`` rejects (``"PT1H"``,
    ``"1 hour"``) are compared exactly.
    """

    __slots__ = ()
    name = "go-duration"
    tag = "g"

    def parse(self, v: Any) -> Hashable | None:
        return go_duration_key(v)

    def spell(self, v: Any) -> Any:
        return canonical_go_duration(v)


# Spellings that tell the two duration languages apart: a pattern's verdict on them says
# which one the field speaks. Go's (time.ParseDuration) and ISO 8601's never overlap: Go
# starts with a sign, digit or ".", ISO with an optional sign and "P".
_ISO_PROBES = ("PT0S", "PT1S", "PT1M", "PT1H", "PT90M", "PT1H30M", "PT3600S", "P1D", "P1W",
               "P1DT1H", "P1M", "P1Y")
_GO_PROBES = ("0", "0s", "1s", "1m", "1h", "90m", "1h30m", "1h30m0s", "1.5h", "500ms")


def _probe_pattern(pattern: str, probes: Sequence[str]) -> bool:
    """Whether ``pattern`` (an RE2 search, as the API server runs it) accepts a probe;
    a pattern compatfuzz cannot run tells nothing."""
    try:
        return any(pattern_search(pattern, probe) for probe in probes)
    except Exception:  # re.error, PatternUnsupported: no evidence either way
        return False


def iso_duration_field(obj: Mapping[str, Any]) -> bool:
    """Whether a Kubernetes ``format: duration`` field holds ISO 8601 durations.

    The API server gives the format no single meaning: kube-openapi's
    ``pkg/validation/strfmt/duration.go`` ``ParseDuration`` tries Go's
    ``time.ParseDuration`` and then an unanchored number-and-unit matcher, so ``"90m"``,
    ``"PT1H"`` and ``"PT3600S"`` are all valid, but what it computes for ISO strings is not
    their ISO meaning (``"P1M"`` is one *minute* there, ``"P1DT2H"`` two hours). The server
    only validates and stores the string; what it means is up to the field's consumer, and
    the field's own ``pattern`` and values say which: ISO 8601 when some evidence is ISO
    and none is Go. Evidence is the ``pattern`` accepting an ISO or a Go probe (above), and
    the ``enum``, ``const``, ``default``, ``example`` and ``examples`` strings that parse
    as either. A field without evidence, or with both kinds, stays Go (``metav1.Duration``,
    the Kubernetes convention).
    """
    iso = go = False
    pattern = obj.get("pattern")
    if isinstance(pattern, str):
        iso = _probe_pattern(pattern, _ISO_PROBES)
        go = _probe_pattern(pattern, _GO_PROBES)
    values: list[Any] = []
    for key in ("enum", "examples"):
        listed = obj.get(key)
        if isinstance(listed, list):
            values.extend(listed)
    values.extend(obj[key] for key in ("const", "default", "example") if key in obj)
    for value in values:
        iso = iso or duration_key(value) is not None
        go = go or go_duration_key(value) is not None
    return iso and not go


# ---------------------------------------------------------------------------------------
# User rules


class CanonicaliserNode(Node):
    """A registered canonicaliser: equal iff the canonical outputs are exactly equal."""

    __slots__ = ("fallback", "function", "registration")
    name = "canonicaliser"

    def __init__(self, registration: Registration) -> None:
        self.registration = registration
        self.function: Callable[[Any], Any] = registration.function
        self.fallback: Node = ANY

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        return self._key(v, self.function(v))

    def _key(self, v: Any, out: Any) -> Hashable:
        return self.fallback.key(v) if out is NotImplemented else ANY.key(out)

    def absent(self, v: Any) -> bool:
        if v is None:
            return True
        out = self.function(v)
        return self.fallback.absent(v) if out is NotImplemented else ANY.key(out) == ABSENT

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if a is None:
            return self.absent(b)
        if b is None:
            return self.absent(a)
        ca, cb = self.function(a), self.function(b)
        if ca is NotImplemented and cb is NotImplemented:
            return self.fallback.eq(a, b)
        try:
            return self._key(a, ca) == self._key(b, cb)
        except NoKey:  # one side canonical, the other opaque to keys: cannot be equal
            return False

    def canon(self, v: Any) -> Any:
        if v is None:
            return None
        out = self.function(v)
        return self.fallback.canon(v) if out is NotImplemented else out

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        declined = all(v is None or self.function(v) is NotImplemented for v in (a, b))
        if declined:  # the built-in rule decides, so let it explain, too
            self.fallback.diff(a, b, path, out)
        else:
            leaf_change(self, a, b, path, out)

    def detail(self, a: Any, b: Any) -> str:
        name = getattr(self.function, "__name__", "canonicaliser")
        return f"{name}: {_json(self.canon(a))} != {_json(self.canon(b))}"


class ComparatorNode(Node):
    """A registered comparator: opaque, so no key and no canonical form."""

    __slots__ = ("fallback", "function", "registration")
    name = "comparator"

    def __init__(self, registration: Registration) -> None:
        self.registration = registration
        self.function: Callable[[Any, Any], Any] = registration.function
        self.fallback: Node = ANY

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        out = self.function(a, b)
        if out is NotImplemented:
            return self.fallback.eq(a, b)
        return bool(out)

    def key(self, v: Any) -> Hashable:
        raise NoKey(self.registration)

    def absent(self, v: Any) -> bool:
        return v is None or self.eq(v, None)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if self.eq(a, b):
            return
        before = len(out)
        leaf_change(self, a, b, path, out)
        if isinstance(a, (Mapping, list)) and isinstance(b, (Mapping, list)) and \
                out[before].kind is ChangeKind.CHANGED:
            out[before] = Change(path, ChangeKind.CHANGED, a, b, _explain(a, b))

    def detail(self, a: Any, b: Any) -> str:
        return f"{getattr(self.function, '__name__', 'comparator')} says they differ"


def _json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _explain(a: Any, b: Any) -> str:
    """Explain why two opaque containers differ, with deepdiff (imported only here)."""
    from deepdiff import DeepDiff

    report = DeepDiff(a, b, verbose_level=2).to_dict()
    parts = []
    for kind, entries in report.items():
        items = entries.items() if isinstance(entries, Mapping) else ((e, None) for e in entries)
        for where, _what in items:
            parts.append(f"{kind} at {where}")
    return "deepdiff: " + "; ".join(parts[:5]) + (" ..." if len(parts) > 5 else "")


# ---------------------------------------------------------------------------------------
# Compiling a schema


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
            # say: ISO 8601 when they are ISO, else Go ("90m" == "1h30m0s"; issue 17)
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
