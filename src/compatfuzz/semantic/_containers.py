"""Objects and ordered lists: the nodes that walk two values' fields and items in step.

Why a module of its own: the comparison walk over JSON objects (structs, maps, untyped
values) and atomic lists is the hot path of ``equal()`` and the base every other container
(``_lists``) and union (``_union``) builds on; list matching without order lives apart.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from compatfuzz.semantic._diff import Change, ChangeKind, join_name
from compatfuzz.semantic._node import ABSENT, Node, _pair_sort, _scalar_key, leaf_change


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
