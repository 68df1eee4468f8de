"""Nodes for registered comparators and canonicalisers (``_registry``), over a built-in node.

Why a module of its own: a user rule is an opaque function, so these nodes carry what the
built-in ones need not: falling back to the built-in rule when the function declines
(``NotImplemented``), no key for comparators, and diff details that name the function.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from compatfuzz.semantic._containers import ANY
from compatfuzz.semantic._diff import Change, ChangeKind
from compatfuzz.semantic._node import ABSENT, Node, NoKey, leaf_change
from compatfuzz.semantic._registry import Registration


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
