"""Draw values that meet a node's CEL rules by construction, not by filtering.

Why: see ``_cel_shapes``. Given the shapes of a node's rules, generation works in two steps:

1. :func:`refine` (a pure schema -> schema transform): what every value must satisfy
   goes into the schema the node is drawn from. ``has(self.x)`` makes ``x`` required,
   ``!has(self.x)`` removes it, ``self.kind in [...]`` / ``== 'A'`` become an ``enum``,
   ``!= ''`` a ``minLength``, ``size()`` bounds become length, item and property bounds,
   numeric comparisons with constants ``minimum``/``maximum``, ``matches``/``startsWith``
   a ``pattern``, ``isURL``/``isIP``/``isCIDR`` a ``format``; the same atoms guarded by
   ``!has(self.x) || ...`` apply without making ``x`` required. ``self.all(x, P(x))``
   pushes ``P(self)`` down as a rule of the items (keys, values), where it is read again;
   unique keys become ``x-compatfuzz-unique-by`` for the list generator.
2. :class:`Repair`: the rest (exactly-one-of, implications, sibling comparisons, ...) is
   made true on each drawn value: a rule that does not hold is read in disjunctive normal
   form and one conjunction (drawn, so it varies and shrinks to the cheapest) is forced:
   fields generated or dropped, constants set, two fields swapped, lengths adjusted.

The node's rules are still checked afterwards by the filter (``Compiler.with_cel``), with
cel-python and the API server's semantics, so a repair that falls short costs a retry,
never a wrong value.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from compatfuzz.strategies._cel_shapes import (
    And,
    Const,
    Each,
    Formula,
    Has,
    In,
    Lit,
    Opaque,
    Or,
    Rel,
    Shape,
    StrTest,
    Term,
    Unique,
    Valid,
    dnf,
    recognise,
)
from compatfuzz.strategies._identity import UNIQUE_BY, item_key

__all__ = ["Construction", "Repair", "construction", "refine"]

Resolver = Callable[[str], Mapping[str, Any]]
Path = tuple[str | int, ...]

_PASSES = 4
_REDRAWS = 3
_PICK = st.integers(min_value=0, max_value=255)
_SMALL = st.integers(min_value=0, max_value=7)
_META = frozenset(".^$|?*+()[]{}\\")


class _Error(Exception):
    """A CEL evaluation error: the value a rule reads is absent or of the wrong type."""


_ABSENT = object()
#: a map key no schema declares: its path component leads to additionalProperties
_ANY_KEY = "\x00"


# ------------------------------------------------------------------------ evaluation

def _lookup(root: Any, path: Path) -> Any:
    """The value at ``path``, ``_ABSENT`` if only its last key is missing; raises
    :class:`_Error` if a parent is missing (CEL: "no such key")."""
    value = root
    for i, key in enumerate(path):
        last = i == len(path) - 1
        if isinstance(key, int):
            if not isinstance(value, list) or key >= len(value):
                raise _Error
            value = value[key]
        elif isinstance(value, dict):
            if key not in value:
                if last:
                    return _ABSENT
                raise _Error
            value = value[key]
        else:
            raise _Error
    return value


def _through(fn: str | None, value: Any) -> Any:
    if value is _ABSENT or (value is None and fn is not None):
        raise _Error
    if fn is None:
        return value
    if fn == "size":
        if isinstance(value, str | list | dict):
            return len(value)
        raise _Error
    if fn in ("double", "int"):
        from compatfuzz.strategies._cel_functions import go_parse_float, go_parse_int

        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise _Error
        try:
            if isinstance(value, str):  # as cel-go converts it: Go's strconv
                return go_parse_float(value) if fn == "double" else go_parse_int(value)
            return float(value) if fn == "double" else int(value)
        except (ValueError, OverflowError):
            raise _Error from None
    if not isinstance(value, str):
        raise _Error
    if fn in ("lower", "upper"):
        return _ascii_case(value, fn == "lower")
    if fn == "trim":
        return value.strip()
    if fn == "string":
        return value
    if fn == "quantity":
        from compatfuzz.strategies._cel_quantity import quantity

        try:
            return quantity(value)
        except Exception:  # not a quantity: CEL raises
            raise _Error from None
    if fn == "duration":
        from compatfuzz.strategies._cel_functions import parse_go_duration

        try:
            return parse_go_duration(value)
        except Exception:  # not a Go duration
            raise _Error from None
    raise _Error


def _ascii_case(text: str, lower: bool) -> str:
    return "".join((c.lower() if lower else c.upper()) if c.isascii() else c for c in text)


def _compare(a: Any, b: Any) -> int:
    from compatfuzz.strategies._cel_quantity import Quantity, compare_to

    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return int(compare_to(a, b))
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        if isinstance(a, bool) and isinstance(b, bool):
            return (a > b) - (a < b)
        raise _Error
    if (isinstance(a, numbers) and isinstance(b, numbers)) or (
            type(a) is type(b) and a is not None):
        try:
            return int((a > b) - (a < b))
        except TypeError:
            raise _Error from None
    raise _Error


def _holds(op: str, a: Any, b: Any) -> bool:
    if op in ("==", "!="):
        # CEL's heterogeneous equality: values of different types are not equal
        if a is None or b is None:
            same = a is None and b is None
        else:
            try:
                same = _compare(a, b) == 0
            except _Error:
                same = False
        return same if op == "==" else not same
    c = _compare(a, b)
    return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]


def _const(c: Const) -> Any:
    return _through(c.fn, c.value) if c.fn is not None else c.value


@dataclass
class _Ctx:
    """One value being repaired: ``box[0]`` is the node's value."""

    box: list[Any]
    opaque: Callable[[str, bool, Any], bool]
    #: a repair changed a field below a direct child: rules further down may break
    deep: bool = False

    def term(self, t: Term) -> Any:
        return _through(t.fn, _lookup(self.box[0], t.path) if t.path else self.box[0])


def _atom(ctx: _Ctx, atom: Any, positive: bool) -> bool | None:
    """The truth of one literal: True, False or None (a CEL error)."""
    try:
        if isinstance(atom, Has):
            present = _lookup(ctx.box[0], atom.path) is not _ABSENT
            return present == positive
        if isinstance(atom, Rel):
            right = ctx.term(atom.right) if isinstance(atom.right, Term) else _const(atom.right)
            return _holds(atom.op, ctx.term(atom.left), right) == positive
        if isinstance(atom, In):
            value = ctx.term(atom.term)
            found = any(_holds("==", value, v) for v in atom.values if _comparable(value, v))
            return found == positive
        if isinstance(atom, StrTest):
            value = ctx.term(atom.term)
            if not isinstance(value, str):
                return None
            return _str_test(atom.fn, value, atom.arg) == positive
        if isinstance(atom, Each | Unique):
            value = _lookup(ctx.box[0], atom.path) if atom.path else ctx.box[0]
            if value is _ABSENT:
                return None
            return ctx.opaque(atom.text, positive, ctx.box[0])
        if isinstance(atom, Opaque):
            return ctx.opaque(atom.text, positive, ctx.box[0])
    except _Error:
        return None
    return None  # Valid: judged by the filter


def _comparable(a: Any, b: Any) -> bool:
    try:
        _compare(a, b)
    except _Error:
        return False
    return True


def _str_test(fn: str, value: str, arg: str) -> bool:
    if fn == "startsWith":
        return value.startswith(arg)
    if fn == "endsWith":
        return value.endswith(arg)
    if fn == "contains":
        return arg in value
    from celpy import celtypes

    from compatfuzz.strategies._cel_functions import FUNCTIONS

    try:
        return bool(FUNCTIONS["matches"](celtypes.StringType(value), celtypes.StringType(arg)))
    except Exception:  # an invalid pattern: an error in CEL
        raise _Error from None


def evaluate(ctx: _Ctx, f: Formula) -> bool | None:
    """CEL's three-valued result of ``f`` (``&&``/``||`` absorb errors when decided)."""
    if isinstance(f, Lit):
        return _atom(ctx, f.atom, f.positive)
    results = []
    for p in f.parts:
        r = evaluate(ctx, p)
        if isinstance(f, And) and r is False:
            return False
        if isinstance(f, Or) and r is True:
            return True
        results.append(r)
    if None in results:
        return None
    return isinstance(f, And)


# ------------------------------------------------------------------------ forcing

Gen = Callable[[Any, Any], Any]


@dataclass
class _Forcer:
    """Makes one literal true on ``ctx.box[0]``, drawing what it needs."""

    ctx: _Ctx
    draw: Any
    ex: Any
    gen_at: Callable[[Path], Gen | None]
    schema_at: Callable[[Path], Mapping[str, Any] | None]
    variant: Callable[..., tuple[Gen, Callable[[Any], bool]] | None]
    resolve: Resolver | None = None

    def fresh(self, path: Path) -> Any:
        gen = self.gen_at(path)
        if gen is None:
            raise _Error
        return gen(self.draw, self.ex)

    def parent(self, path: Path) -> Any:
        """The container of ``path``'s last key, creating missing parents."""
        value = self.ctx.box[0]
        for i, key in enumerate(path[:-1]):
            nxt_path = path[: i + 1]
            if isinstance(key, int):
                if not isinstance(value, list):
                    raise _Error
                while len(value) <= key:
                    value.append(self.fresh((*path[:i], len(value))))
                value = value[key]
            else:
                if not isinstance(value, dict):
                    raise _Error
                if key not in value or not isinstance(value[key], dict | list):
                    made = self.fresh(nxt_path)
                    if isinstance(path[i + 1], str) and not isinstance(made, dict):
                        raise _Error
                    value[key] = made
                value = value[key]
        return value

    def put(self, path: Path, new: Any) -> None:
        if not path:
            self.ctx.box[0] = new
            return
        if len(path) > 1:
            self.ctx.deep = True
        parent = self.parent(path)
        key = path[-1]
        if isinstance(key, int):
            if not isinstance(parent, list):
                raise _Error
            while len(parent) <= key:
                parent.append(self.fresh((*path[:-1], len(parent))))
            parent[key] = new
        elif isinstance(parent, dict):
            parent[key] = new
        else:
            raise _Error

    def raw(self, path: Path) -> Any:
        return _lookup(self.ctx.box[0], path) if path else self.ctx.box[0]

    def force(self, lit: Lit) -> None:
        atom, positive = lit.atom, lit.positive
        if isinstance(atom, Has | Each | Unique):
            path = atom.path
            if path and positive and self.raw_or_absent(path) is _ABSENT:
                self.put(path, self.fresh(path))
            elif path and not positive and isinstance(atom, Has):
                parent = self.parent(path)
                if isinstance(parent, dict):
                    parent.pop(path[-1], None)
                    self.ctx.deep = self.ctx.deep or len(path) > 1
                return
            if isinstance(atom, Each) and positive:
                self.each(atom)
            elif isinstance(atom, Unique) and positive:
                self.unique(atom)
            return
        if isinstance(atom, In):
            if atom.term.fn is not None:
                raise _Error
            if positive:
                self.put(atom.term.path, atom.values[self.draw(_PICK) % len(atom.values)])
            else:
                self.regenerate(lit)
            return
        if isinstance(atom, Rel):
            self.relation(atom.left, atom.op if positive else _NOT[atom.op], atom.right)
            return
        if isinstance(atom, StrTest):
            if not positive or atom.term.fn is not None:
                self.regenerate(lit)
                return
            current = self.raw_or_absent(atom.term.path)
            text = current if isinstance(current, str) else ""
            if atom.fn == "startsWith":
                self.put(atom.term.path, atom.arg + text)
            elif atom.fn in ("endsWith", "contains"):
                self.put(atom.term.path, text + atom.arg)
            else:
                self.put(atom.term.path, self.draw(_regex_strategy(atom.arg)))
            return
        if isinstance(atom, Valid) and positive and atom.term.fn is None:
            self.put(atom.term.path, self.draw(_format_strategy(atom.fn)))
            return
        raise _Error

    def each(self, atom: Each) -> None:
        """Replace the items (values) that break the pushed-down rule by ones drawn
        under it; drop the keys that break it."""
        value = self.raw(atom.path)
        if atom.over == "keys" and isinstance(value, dict):
            found = self.variant((*atom.path, _ANY_KEY), atom.rule, keys=True)
            if found is not None:
                for key in [k for k in value if not found[1](k)]:
                    del value[key]
            return
        if atom.over == "items" and isinstance(value, list):
            found = self.variant((*atom.path, 0), atom.rule)
            slots: list[Any] = list(range(len(value)))
        elif atom.over == "values" and isinstance(value, dict):
            found = self.variant((*atom.path, _ANY_KEY), atom.rule)
            slots = list(value)
        else:
            raise _Error
        if found is None:
            raise _Error
        gen, check = found
        # a list whose items must stay apart (list-map keys, a set): a replacement that
        # repeats another item is drawn again, and failing that the old item stays (the
        # rule then rejects the value rather than the list holding a repeat)
        key = item_key(self.schema_at(atom.path), self.resolve) if atom.over == "items" \
            else None
        ids = [set(enumerate(key(v))) if key is not None else set() for v in value]
        for slot in slots:
            if check(value[slot]):
                continue
            others = set().union(*(ids[i] for i in range(len(value)) if i != slot))
            for _ in range(_REDRAWS):
                new = gen(self.draw, self.ex)
                mine = set(enumerate(key(new))) if key is not None else set()
                if not others & mine:
                    value[slot], ids[slot] = new, mine
                    self.ctx.deep = True
                    break

    def unique(self, atom: Unique) -> None:
        value = self.raw(atom.path)
        if not isinstance(value, list):
            raise _Error
        seen: list[Any] = []
        kept = []
        for item in value:
            key = [item.get(k) for k in atom.key] if atom.key and isinstance(
                item, dict) else item
            if key not in seen:
                seen.append(key)
                kept.append(item)
        value[:] = kept

    def raw_or_absent(self, path: Path) -> Any:
        try:
            return self.raw(path)
        except _Error:
            return _ABSENT

    def regenerate(self, lit: Lit) -> None:
        path = _lit_path(lit)
        if path is None:
            raise _Error
        current = self.raw_or_absent(path)
        atom = lit.atom
        if (isinstance(atom, StrTest) and atom.fn == "startsWith" and not lit.positive
                and isinstance(current, str) and atom.arg):
            # "-1Gi" -> "1Gi": keep the value, drop the forbidden prefix
            while current.startswith(atom.arg):
                current = current[len(atom.arg):]
            if current:
                self.put(path, current)
                if _atom(self.ctx, atom, lit.positive):
                    return
        enum = (self.schema_at(path) or {}).get("enum")
        if isinstance(enum, list) and enum:
            # an enum field: one of its values that makes the literal true
            start = self.draw(_PICK)
            for i in range(len(enum)):
                self.put(path, enum[(start + i) % len(enum)])
                if _atom(self.ctx, atom, lit.positive):
                    return
            raise _Error
        for _ in range(3 if path else 0):
            self.put(path, self.fresh(path))
            if _atom(self.ctx, lit.atom, lit.positive):
                return
        raise _Error

    def relation(self, left: Term, op: str, right: Term | Const) -> None:
        if isinstance(right, Term):
            if right.path == left.path and op == "==" and {left.fn, right.fn} <= {
                    None, "lower", "upper"}:
                value = self.raw(left.path)
                fn = right.fn or left.fn
                if isinstance(value, str) and fn is not None:
                    self.put(left.path, _ascii_case(value, fn == "lower"))
                    return
                raise _Error
            for t in (left, right):
                if self.raw_or_absent(t.path) is _ABSENT:
                    self.put(t.path, self.fresh(t.path))
            lv, rv = self.ctx.term(left), self.ctx.term(right)
            if _holds(op, lv, rv):
                return
            if left.fn == right.fn and left.fn != "size":
                a, b = self.raw(left.path), self.raw(right.path)
                self.put(left.path, b)
                self.put(right.path, a)
                if _holds(op, self.ctx.term(left), self.ctx.term(right)):
                    return
                if op == "==":
                    return
                # equal values under a strict comparison: move the left one past the right
                self.set_number(left, op, self.ctx.term(right))
                return
            if left.fn == "size" and right.fn is None:
                self.set_size(left.path, op, rv)
                return
            raise _Error
        self.set_number(left, op, _const(right)) if op not in ("==", "!=") else (
            self.set_equal(left, op, right))

    def set_equal(self, term: Term, op: str, const: Const) -> None:
        if op == "!=":
            current = self.raw_or_absent(term.path)
            if current is not _ABSENT:
                try:
                    if not _holds("==", self.ctx.term(term), _const(const)):
                        return
                except _Error:
                    pass
            self.regenerate(Lit(Rel(term, "==", const), False))
            return
        if term.fn == "size":
            self.set_size(term.path, "==", const.value)
        elif term.fn is None and const.fn is None:
            if const.value is None and (self.schema_at(term.path) or {}).get(
                    "nullable") is not True:
                raise _Error  # null where the schema does not allow it
            self.put(term.path, const.value)
        elif term.fn in ("double", "int"):
            self.set_number(term, "==", _const(const))
        else:
            raise _Error

    def set_size(self, path: Path, op: str, n: Any) -> None:
        if not isinstance(n, int) or isinstance(n, bool):
            raise _Error
        current = self.raw_or_absent(path)
        if current is _ABSENT:
            current = self.fresh(path)
        size = len(current) if isinstance(current, str | list | dict) else 0
        target = {"==": n, ">=": max(size, n), ">": max(size, n + 1), "<=": min(size, n),
                  "<": min(size, n - 1), "!=": size if size != n else n + 1}[op]
        if target < 0:
            raise _Error
        if isinstance(current, str):
            if len(current) > target:
                cut = current[:target].rstrip("-._/") or current[:target]
                current = cut
            current = current + (current[-1:] or "a") * (target - len(current))
        elif isinstance(current, list):
            del current[target:]
            self.put(path, current)
            # new items may repeat old ones: the repaired value's lists are checked again
            self.ctx.deep = self.ctx.deep or len(current) < target
            while len(current) < target:
                current.append(self.fresh((*path, len(current))))
        elif isinstance(current, dict):
            if len(current) < target:
                raise _Error
            for key in list(current)[target:]:
                del current[key]
        else:
            raise _Error
        self.put(path, current)

    def set_number(self, term: Term, op: str, bound: Any) -> None:
        if term.fn == "size":
            self.set_size(term.path, op, bound)
            return
        if term.fn not in (None, "double", "int") or isinstance(bound, bool) or not isinstance(
                bound, int | float):
            raise _Error
        node = self.schema_at(term.path) or {}
        kind = node.get("type")
        step = self.draw(_SMALL)
        integral = kind == "integer" or term.fn == "int" or (
            kind == "string" and isinstance(bound, int))
        unit = 1 if integral else 0.5
        target: float = {"==": bound, "<=": bound - step * unit, "<": bound - (step + 1) * unit,
                         ">=": bound + step * unit, ">": bound + (step + 1) * unit,
                         "!=": bound + unit}[op]
        if integral:
            target = math.floor(target) if op in ("<", "<=") else math.ceil(target)
            if op in ("<", "<=") and integral and isinstance(bound, float):
                target = min(target, math.ceil(bound) - (1 if op == "<" else 0))
        value: Any = int(target) if integral else float(target)
        if kind == "string":
            value = str(value)
        self.put(term.path, value)


_NOT = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _lit_path(lit: Lit) -> Path | None:
    atom = lit.atom
    if isinstance(atom, Rel | In | StrTest | Valid):
        return (atom.left if isinstance(atom, Rel) else atom.term).path
    if isinstance(atom, Has | Each | Unique):
        return atom.path
    return None


def _regex_strategy(pattern: str) -> st.SearchStrategy[str]:
    """Strings ``matches(pattern)`` accepts: CEL's ``matches`` is Go's RE2."""
    from compatfuzz.strategies._regex import compile_pattern

    try:
        return st.from_regex(compile_pattern(pattern, kubernetes=True))
    except re.error:
        raise _Error from None


def _unmapped(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return not (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None)


def _format_strategy(fn: str) -> st.SearchStrategy[str]:
    """Plain, canonical values for ``isURL``/``isIP``/``isCIDR`` (k8s.io/apiserver
    ``pkg/cel/library/url.go``, ``ip.go``, ``cidr.go``: Go's ``url.Parse`` of an absolute
    URL, ``netip.ParseAddr`` and ``netip.ParsePrefix``, which refuse zero-padded octets);
    the schema's own ``format`` strategies draw tricky spellings on purpose."""
    from compatfuzz.strategies import _kubernetes as k8s

    if fn == "isURL":
        return st.builds(lambda scheme, host, path: f"{scheme}://{host}.example/{path}",
                         st.sampled_from(["http", "https"]), k8s.dns_label,
                         st.from_regex(r"\A[a-z0-9]{0,8}\Z"))
    if fn == "isIP":
        # ip.go refuses IPv4-mapped IPv6 addresses (::ffff:1.2.3.4), which Hypothesis
        # draws: an IPv4 address or an IPv6 address outside ::ffff:0:0/96
        return st.ip_addresses().filter(_unmapped).map(str)
    return st.builds(lambda ip, bits: f"{ip}/{bits}", st.ip_addresses(v=4).map(str),
                     st.integers(min_value=0, max_value=32))


# ------------------------------------------------------------------------ repair

def _order(lit: Lit) -> int:
    atom = lit.atom
    if isinstance(atom, Has | Each | Unique):
        return 0 if lit.positive else 3
    if isinstance(atom, Rel) and atom.left.fn == "size":
        return 1
    return 2


@dataclass
class Repair:
    """Makes the node's recognised rules hold on each drawn value (see module doc)."""

    shapes: tuple[Shape, ...]
    gen_at: Callable[[Path], Gen | None]
    schema_at: Callable[[Path], Mapping[str, Any] | None]
    opaque: Callable[[str, bool, Any], bool]
    #: (generator, check) for the item (value, key) at a path under one more rule
    variant: Callable[..., tuple[Gen, Callable[[Any], bool]] | None]
    resolve: Resolver | None = None
    _choices: dict[str, list[tuple[Lit, ...]]] = field(default_factory=dict)

    def __call__(self, value: Any, draw: Any, ex: Any) -> tuple[Any, bool]:
        """The repaired value, and whether a repair reached below a direct child (so
        that the rules of the nodes down there must be checked again)."""
        ctx = _Ctx([value], self.opaque)
        for _ in range(_PASSES):
            broken = False
            for shape in self.shapes:
                if evaluate(ctx, shape.formula) is True:
                    continue
                broken = True
                self.fix(ctx, shape, draw, ex)
            if not broken:
                break
        return ctx.box[0], ctx.deep

    def fix(self, ctx: _Ctx, shape: Shape, draw: Any, ex: Any) -> None:
        conjunctions = self._choices.get(shape.rule)
        if conjunctions is None:
            conjunctions = [c for c in dnf(shape.formula) if _forcible(c)]
            self._choices[shape.rule] = conjunctions
        if not conjunctions:
            return
        scored = sorted(
            ((sum(1 for lit in c if _atom(ctx, lit.atom, lit.positive) is not True), i)
             for i, c in enumerate(conjunctions)))
        usable = [(cost, i) for cost, i in scored if all(
            _atom(ctx, lit.atom, lit.positive) is True or not isinstance(lit.atom, Opaque)
            for lit in conjunctions[i])]
        if not usable:
            return
        # a quarter of the time (and where it shrinks) the cheapest conjunction, else any
        pick = draw(_PICK)
        _, index = usable[0] if pick < 64 else usable[pick % len(usable)]
        forcer = _Forcer(ctx, draw, ex, self.gen_at, self.schema_at, self.variant,
                         self.resolve)
        for lit in sorted(conjunctions[index], key=_order):
            if _atom(ctx, lit.atom, lit.positive) is True:
                continue
            try:
                forcer.force(lit)
            except (_Error, KeyError, TypeError, ValueError, IndexError):
                return


def _forcible(conj: tuple[Lit, ...]) -> bool:
    """Could every literal be made true (opaque ones only if already true)?"""
    return not any(isinstance(lit.atom, Valid) and not lit.positive for lit in conj)


# ------------------------------------------------------------------------ refine

@dataclass(frozen=True)
class Construction:
    """A node's refined schema and the repair for what the schema cannot say."""

    node: dict[str, Any]
    shapes: tuple[Shape, ...]  # recognised rules (exact or not)
    exact: frozenset[str]      # rules recognised in full

    @property
    def repairs(self) -> tuple[Shape, ...]:
        return tuple(s for s in self.shapes if _needs_repair(s.formula))


def _needs_repair(f: Formula) -> bool:
    """Whether a rule needs more than the refined schema: a conjunction of ``Each`` and
    ``Unique`` that :func:`refine` pushed down needs nothing more."""
    return not all(isinstance(p, Lit) and p.positive and isinstance(p.atom, Each | Unique)
                   and len(p.atom.path) <= 1 for p in _conjuncts(f))


def construction(node: Mapping[str, Any], resolve: Resolver | None = None) -> Construction:
    """Read ``node``'s supported rules and refine ``node`` with what they require."""
    from compatfuzz.strategies._cel import _verdict

    shapes: list[Shape] = []
    for entry in node.get("x-kubernetes-validations") or ():
        rule = entry.get("rule") if isinstance(entry, Mapping) else None
        if not isinstance(rule, str):
            continue
        verdict = _verdict(rule)
        if verdict.program is None or verdict.transition:
            continue
        shape = recognise(rule, node, resolve)
        if shape is not None:
            shapes.append(shape)
    refined = refine(node, shapes, resolve)
    return Construction(refined, tuple(shapes),
                        frozenset(s.rule for s in shapes if s.exact))


def _conjuncts(f: Formula) -> tuple[Formula, ...]:
    return f.parts if isinstance(f, And) else (f,)


def refine(node: Mapping[str, Any], shapes: tuple[Shape, ...] | list[Shape],
           resolve: Resolver | None = None) -> dict[str, Any]:
    """``node`` with what every value must satisfy under ``shapes`` moved into its
    keywords (a copy; ``node`` is not changed)."""
    out: dict[str, Any] = dict(node)  # copied on write below: nodes are shared
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = dict(out["properties"])
    for shape in shapes:
        for conjunct in _conjuncts(shape.formula):
            guarded = _guarded(conjunct)
            if guarded is not None:
                _apply(out, guarded, required=False, resolve=resolve)
            elif isinstance(conjunct, Lit):
                _apply(out, conjunct, required=True, resolve=resolve)
    return out


def _guarded(f: Formula) -> Lit | None:
    """``L`` for ``!has(self.p) || L`` where ``L`` reads ``p`` itself."""
    if not isinstance(f, Or) or len(f.parts) != 2:
        return None
    a, b = f.parts
    for guard, lit in ((a, b), (b, a)):
        if (isinstance(guard, Lit) and isinstance(guard.atom, Has) and not guard.positive
                and isinstance(lit, Lit) and _lit_path(lit) == guard.atom.path):
            return lit
    return None


def _child(out: dict[str, Any], key: str, resolve: Resolver | None) -> dict[str, Any] | None:
    """``out.properties[key]`` as an own, editable copy (a ``$ref`` inlined)."""
    props = out.get("properties")
    if not isinstance(props, dict) or not isinstance(props.get(key), Mapping):
        return None
    sub = dict(props[key])
    if isinstance(sub.get("$ref"), str):
        if resolve is None:
            return None
        target = resolve(sub["$ref"])
        sub = {**target, **{k: v for k, v in sub.items() if k != "$ref"}}
    props[key] = sub
    return sub


def _apply(out: dict[str, Any], lit: Lit, *, required: bool,
           resolve: Resolver | None) -> None:
    atom = lit.atom
    path = _lit_path(lit)
    if path is None or len(path) > 1 or (path and not isinstance(path[0], str)):
        return
    key = path[0] if path else None
    if isinstance(atom, Has):
        if key is None:
            return
        if lit.positive and required:
            if key in (out.get("properties") or {}):
                out["required"] = [*dict.fromkeys([*out.get("required", []), key])]
        elif not lit.positive and key not in out.get("required", ()):
            props = out.get("properties")
            if isinstance(props, dict) and key in props:
                props.pop(key)
        return
    target = out if key is None else _child(out, str(key), resolve)
    if target is None:
        return
    if required and key is not None and isinstance(atom, Rel | In | StrTest | Valid | Each
                                                   | Unique) and lit.positive:
        out["required"] = [*dict.fromkeys([*out.get("required", []), key])]
    if isinstance(atom, Each) and lit.positive:
        _push(target, atom)
    elif isinstance(atom, Unique) and lit.positive:
        target[UNIQUE_BY] = list(atom.key) if atom.key is not None else []
    elif isinstance(atom, In) and atom.term.fn is None:
        _narrow_enum(target, atom.values, keep=lit.positive)
    elif isinstance(atom, Rel) and isinstance(atom.right, Const) and atom.right.fn is None:
        op = atom.op if lit.positive else _NOT[atom.op]
        _bound(target, atom.left.fn, op, atom.right.value)
    elif (isinstance(atom, StrTest) and lit.positive and atom.term.fn is None
          and "pattern" not in target and "enum" not in target):
        text = "".join("\\" + c if c in _META else c for c in atom.arg)
        pattern = {"matches": atom.arg, "startsWith": "^" + text,
                   "endsWith": text + "$", "contains": text}[atom.fn]
        if _compiles(pattern):
            target["pattern"] = pattern


def _compiles(pattern: str) -> bool:
    """Whether ``pattern`` is valid RE2 (a ``matches()`` argument becomes a Kubernetes
    ``pattern``, which is RE2 too)."""
    from compatfuzz.strategies._regex import compile_pattern

    try:
        compile_pattern(pattern, kubernetes=True)
    except (re.error, ValueError):
        return False
    return True


def _push(target: dict[str, Any], atom: Each) -> None:
    word = {"items": "items", "values": "additionalProperties", "keys": "propertyNames"}[
        atom.over]
    sub = target.get(word)
    if atom.over == "keys":
        sub = dict(sub) if isinstance(sub, Mapping) else {"type": "string"}
    elif not isinstance(sub, Mapping) or "$ref" in sub:
        return
    else:
        sub = dict(sub)
    sub["x-kubernetes-validations"] = [*sub.get("x-kubernetes-validations", []),
                                       {"rule": atom.rule}]
    target[word] = sub


def _narrow_enum(target: dict[str, Any], values: tuple[Any, ...], *, keep: bool) -> None:
    if keep:
        if "enum" in target:
            kept = [v for v in target["enum"] if v in values]
            if kept:
                target["enum"] = kept
        elif target.get("type") in ("string", "integer", "number", "boolean") or not (
                target.get("type")):
            target["enum"] = list(values)
        return
    if "enum" in target:
        kept = [v for v in target["enum"] if v not in values]
        if kept:
            target["enum"] = kept
    elif values == ("",) and target.get("type") == "string":
        target["minLength"] = max(1, int(target.get("minLength", 0)))
    elif "not" not in target:
        target["not"] = {"enum": list(values)}


_LENGTH = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
           "object": ("minProperties", "maxProperties")}


def _bound(target: dict[str, Any], fn: str | None, op: str, value: Any) -> None:
    if op in ("==", "!="):
        if fn is None:
            _narrow_enum(target, (value,), keep=op == "==")
        elif fn == "size" and isinstance(value, int) and op == "==":
            low, high = _LENGTH.get(str(target.get("type")), (None, None))
            if low and high:
                target[low] = max(value, int(target.get(low, 0)))
                target[high] = value if high not in target else min(value, int(target[high]))
        elif fn == "size" and value == 0 and op == "!=":
            low, _ = _LENGTH.get(str(target.get("type")), (None, None))
            if low:
                target[low] = max(1, int(target.get(low, 0)))
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if fn == "size":
        low, high = _LENGTH.get(str(target.get("type")), (None, None))
        if not low or not high or not isinstance(value, int):
            return
        if op in (">", ">="):
            target[low] = max(value + (op == ">"), int(target.get(low, 0)))
        else:
            limit = value - (op == "<")
            target[high] = limit if high not in target else min(limit, int(target[high]))
        return
    if fn is not None or target.get("type") not in ("integer", "number"):
        return
    if target.get("type") == "integer":
        if op in (">", ">="):
            least = math.floor(value) + 1 if op == ">" else math.ceil(value)
            target["minimum"] = max(least, target.get("minimum", least))
        else:
            most = math.ceil(value) - 1 if op == "<" else math.floor(value)
            target["maximum"] = min(most, target.get("maximum", most))
        return
    word = {">": "exclusiveMinimum", ">=": "minimum", "<": "exclusiveMaximum",
            "<=": "maximum"}[op]
    if word not in target and not ({"minimum", "exclusiveMinimum"} & target.keys() and
                                   word.endswith("inimum")) and not (
            {"maximum", "exclusiveMaximum"} & target.keys() and word.endswith("aximum")):
        target[word] = value
