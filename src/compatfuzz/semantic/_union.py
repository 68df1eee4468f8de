"""``anyOf``/``oneOf`` and type lists: each value compared by the one branch that takes it.

Why a module of its own: picking a branch ranks every other kind of node (registered rules,
parsed scalars, numbers, containers) by how specific it is, so it sits above them all.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from compatfuzz.semantic._containers import ANY, AnyNode, ListNode, _Keyed
from compatfuzz.semantic._diff import Change, jtype
from compatfuzz.semantic._node import Node, NoKey, leaf_change
from compatfuzz.semantic._registered import CanonicaliserNode, ComparatorNode
from compatfuzz.semantic._scalars import NumberNode, _ParsedScalar


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
