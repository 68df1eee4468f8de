"""Lists compared without order: ``list-type: set`` as multisets, ``list-type: map`` by keys.

Why a module of its own: matching the items of two lists whatever their positions (pairing
by ``x-kubernetes-list-map-keys``, a multiset of keys, pairwise matching when a user
comparator leaves items without keys) and naming unmatched items by value or by key in
diffs is one concern, apart from the in-step walk of ordered lists (``_containers``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from compatfuzz.semantic._containers import ANY, ListNode
from compatfuzz.semantic._diff import Change, ChangeKind, join_key, join_value
from compatfuzz.semantic._node import Node, NoKey, leaf_change


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
