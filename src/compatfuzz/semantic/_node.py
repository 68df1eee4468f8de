"""The contract every compiled schema position keeps (``Node``), and the helpers all nodes share.

Why a module of its own: every kind of node (containers, list matching, scalars, user rules,
unions) builds on these three contracts, and the compiler (``_engine``) only assembles them.

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

import math
from collections.abc import Hashable
from typing import Any

from compatfuzz.semantic._diff import Change, ChangeKind, jtype

ABSENT: tuple[str] = ("a",)


class NoKey(Exception):
    """A subtree is compared by an opaque user comparator, so it has no key."""


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
