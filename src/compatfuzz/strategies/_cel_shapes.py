"""Recognise the shapes of everyday CEL rules as formulas over a node's fields.

Why: a CRD's ``x-kubernetes-validations`` rules are checked on generated values, and a
value that breaks one is useless (the API server refuses it). Filtering random objects
through the rules works for one loose rule, but is hopeless once a node carries two or
three (``self.group == 'gateway.networking.k8s.io'``, ``self.kind in [...]``,
``!has(self.sectionName)``: random values pass all three about never). So each rule is
read into a formula in negation normal form over *atoms* that name a field by its path
from ``self`` and say something a generator can make true:

* ``Has(path)``: ``has(self.a.b)``;
* ``Rel(term, op, const | term)``: ``self.x == 'A'``, ``size(self.l) <= 3``,
  ``double(self.min) < double(self.max)``, ``self.p == self.p.lowerAscii()``,
  ``quantity(self.a).compareTo(quantity(self.b)) <= 0``;
* ``In(term, values)``: ``self.kind in ['Gateway', 'HTTPRoute']``;
* ``StrTest(term, fn, arg)``: ``startsWith``/``endsWith``/``contains``/``matches``;
* ``Valid(term, fn)``: ``isURL``/``isIP``/``isCIDR``;
* ``Each(path, over, rule)``: ``self.l.all(x, P(x))`` with ``P`` about ``x`` alone, pushed
  down as the rule ``P(self)`` on the list's items (``over="items"``), a map's keys or, for
  ``P(self[x])``, its values; ``!self.exists(x, P)`` is ``all(x, !P)``;
* ``Unique(path, key)``: ``self.all(x, self.exists_one(y, x.name == y.name))`` and its
  ``filter(...).size() == 1`` spelling: items unique by ``key`` (``None``: whole items);
* ``Opaque(text)``: any other boolean sub-expression; still evaluated (by cel-python), but
  no generator can make it true.

Logic is read in full: ``&&``, ``||``, ``!``, ``?:``, ``has(a) == has(b)``, counts
(``[has(a), has(b)].filter(x, x).size() == 1``, ``(has(a) ? 1 : 0) + ... == 1``,
``[...].exists_one(x, x)``). Transition rules (``oldSelf``) never reach this module.

Atoms are evaluated with CEL's three values (true, false, error: a field read where it is
absent is an error, as in apiextensions-apiserver), so ``_cel_construct`` can tell which
rules a value breaks and pick one conjunction of the formula's disjunctive normal form to
make true. References: the CEL language definition (``langdef.md``, "Logical Operators":
commutative ``&&``/``||`` absorb errors) and k8s.io/apiserver/pkg/cel/library for the
Kubernetes functions named here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compatfuzz.strategies._cel_ast import Node, parse, unparse

__all__ = ["And", "Each", "Formula", "Has", "In", "Lit", "Opaque", "Or", "Rel", "Shape",
           "StrTest", "Term", "Unique", "Valid", "deref", "dnf", "recognise"]

Resolver = Callable[[str], Mapping[str, Any]]
Path = tuple[str | int, ...]

#: functions that turn a field's value into what a rule compares
_TERM_FNS = frozenset({"size", "double", "int", "string", "lowerAscii", "upperAscii",
                       "quantity", "duration", "timestamp", "trim"})
_STR_TESTS = frozenset({"startsWith", "endsWith", "contains", "matches"})
_VALIDATORS = frozenset({"isURL", "isIP", "isCIDR"})
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
#: conjunctions a formula's DNF may have before the rule counts as unrecognised
DNF_LIMIT = 64
_COUNT_LIMIT = 8


@dataclass(frozen=True)
class Term:
    """The value at ``path`` (JSON keys and list indexes from ``self``), through ``fn``."""

    path: Path
    fn: str | None = None


@dataclass(frozen=True)
class Const:
    value: Any
    fn: str | None = None  # quantity('1Gi'), duration('1h'): compared through fn


@dataclass(frozen=True)
class Has:
    path: Path


@dataclass(frozen=True)
class Rel:
    left: Term
    op: str
    right: Term | Const


@dataclass(frozen=True)
class In:
    term: Term
    values: tuple[Any, ...]


@dataclass(frozen=True)
class StrTest:
    term: Term
    fn: str
    arg: str


@dataclass(frozen=True)
class Valid:
    term: Term
    fn: str


@dataclass(frozen=True)
class Each:
    path: Path
    over: str  # "items", "keys" or "values"
    rule: str  # the pushed-down rule, about ``self``
    text: str  # the whole macro, to evaluate it where it stands


@dataclass(frozen=True)
class Unique:
    path: Path
    key: tuple[str, ...] | None
    text: str


@dataclass(frozen=True)
class Opaque:
    text: str


Atom = Has | Rel | In | StrTest | Valid | Each | Unique | Opaque


@dataclass(frozen=True)
class Lit:
    atom: Atom
    positive: bool


@dataclass(frozen=True)
class And:
    parts: tuple[Formula, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Formula, ...]


Formula = Lit | And | Or
TRUE = And(())
FALSE = Or(())


@dataclass(frozen=True)
class Shape:
    """One rule read as a formula; ``exact`` when no part of it is opaque."""

    rule: str
    formula: Formula
    exact: bool


def deref(node: Any, resolve: Resolver | None) -> Any:
    """``node`` with its ``$ref`` chain followed (siblings of a ``$ref`` kept over the
    target), at most 16 hops."""
    seen = 0
    while (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)
           and resolve is not None and seen < 16):
        target = resolve(node["$ref"])
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node


class _Schema:
    """Schema navigation for unescaping field names (``x__dash__y`` -> ``x-y``)."""

    def __init__(self, resolve: Resolver | None) -> None:
        self.resolve = resolve

    def deref(self, node: Any) -> Any:
        return deref(node, self.resolve)

    def child(self, node: Any, name: str) -> tuple[str, Any]:
        from compatfuzz.strategies._cel import escape_property

        node = self.deref(node)
        if not isinstance(node, Mapping):
            return name, None
        props = node.get("properties")
        if isinstance(props, Mapping):
            if name in props and escape_property(name) == name:
                return name, props[name]
            for key, sub in props.items():
                if isinstance(key, str) and escape_property(key) == name:
                    return key, sub
        extra = node.get("additionalProperties")
        return name, extra if isinstance(extra, Mapping) else None

    def items(self, node: Any) -> Any:
        node = self.deref(node)
        return node.get("items") if isinstance(node, Mapping) else None


def _junction(kind: type[And] | type[Or], parts: tuple[Formula, ...]) -> Formula:
    """``parts`` joined by ``kind``, flattened; an absorbing part (``FALSE`` in an
    ``And``, ``TRUE`` in an ``Or``) decides it."""
    absorbing = FALSE if kind is And else TRUE
    flat: list[Formula] = []
    for p in parts:
        if isinstance(p, kind):
            flat.extend(p.parts)
        elif p == absorbing:
            return absorbing
        else:
            flat.append(p)
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def _and(*parts: Formula) -> Formula:
    return _junction(And, parts)


def _or(*parts: Formula) -> Formula:
    return _junction(Or, parts)


def _free(node: Node, bound: frozenset[str] = frozenset()) -> set[str]:
    kind = node[0]
    if kind == "ident":
        return set() if node[1] in bound else {node[1]}
    if kind == "lit":
        return set()
    if kind == "macro":
        return _free(node[2], bound) | _free(node[4], bound | {node[3]})
    out: set[str] = set()
    for part in node[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            out |= _free(part, bound)
        elif isinstance(part, tuple):
            for item in part:
                if isinstance(item, tuple) and item and isinstance(item[0], str):
                    out |= _free(item, bound)
                elif isinstance(item, tuple):  # map pairs
                    for sub in item:
                        out |= _free(sub, bound)
    return out


def _subst(node: Node, match: Callable[[Node], bool], by: Node) -> Node:
    """``node`` with every sub-expression for which ``match`` holds replaced by ``by``
    (not inside a macro that rebinds a name ``by`` uses)."""
    if match(node):
        return by
    kind = node[0]
    if kind in ("lit", "ident"):
        return node
    if kind == "macro" and node[3] in _free(by):
        return (kind, node[1], _subst(node[2], match, by), node[3], node[4])
    out: list[Any] = [kind]
    for part in node[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            out.append(_subst(part, match, by))
        elif isinstance(part, tuple):
            out.append(tuple(
                _subst(i, match, by) if i and isinstance(i[0], str)
                else tuple(_subst(s, match, by) for s in i) for i in part))
        else:
            out.append(part)
    return tuple(out)


class _Reader:
    """Reads one rule's AST against one schema node."""

    def __init__(self, node: Mapping[str, Any], resolve: Resolver | None) -> None:
        self.schema = _Schema(resolve)
        self.node = node

    # ------------------------------------------------------------------ terms
    def path(self, expr: Node) -> tuple[Path, Any] | None:
        """The path of a field reading (``self.a.b``, ``self.l[0]``, ``self['k']``) and
        the schema there."""
        if expr == ("ident", "self"):
            return (), self.node
        if expr[0] == "sel":
            base = self.path(expr[1])
            if base is None:
                return None
            key, sub = self.schema.child(base[1], expr[2])
            return (*base[0], key), sub
        if expr[0] == "idx" and expr[2][0] == "lit":
            base = self.path(expr[1])
            if base is None:
                return None
            index = expr[2][1]
            if isinstance(index, str):
                key, sub = self.schema.child(base[1], index)
                if key != index:  # self['x-y'] names the JSON key itself
                    key, sub = index, self._raw_child(base[1], index)
                return (*base[0], key), sub
            if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
                return (*base[0], index), self.schema.items(base[1])
        return None

    def _raw_child(self, node: Any, key: str) -> Any:
        node = self.schema.deref(node)
        if not isinstance(node, Mapping):
            return None
        props = node.get("properties")
        if isinstance(props, Mapping) and key in props:
            return props[key]
        extra = node.get("additionalProperties")
        return extra if isinstance(extra, Mapping) else None

    def term(self, expr: Node) -> Term | None:
        found = self.path(expr)
        if found is not None:
            return Term(found[0])
        if expr[0] == "call" and expr[1] in _TERM_FNS:
            name, target, args = expr[1], expr[2], expr[3]
            inner = target if target is not None and not args else (
                args[0] if target is None and len(args) == 1 else None)
            if inner is None:
                return None
            found = self.path(inner)
            if found is None:
                return None
            fn = {"lowerAscii": "lower", "upperAscii": "upper"}.get(name, name)
            return Term(found[0], fn)
        return None

    @staticmethod
    def const(expr: Node) -> Const | None:
        if expr[0] == "lit":
            return Const(expr[1])
        if expr[0] == "neg" and expr[1][0] == "lit" and isinstance(expr[1][1], int | float):
            return Const(-expr[1][1])
        if (expr[0] == "call" and expr[1] in ("quantity", "duration", "timestamp")
                and expr[2] is None and len(expr[3]) == 1 and expr[3][0][0] == "lit"
                and isinstance(expr[3][0][1], str)):
            return Const(expr[3][0][1], expr[1])
        return None

    # ----------------------------------------------------------------- formulas
    def formula(self, expr: Node, positive: bool = True) -> Formula:
        kind = expr[0]
        if kind == "lit" and isinstance(expr[1], bool):
            return TRUE if expr[1] == positive else FALSE
        if kind == "not":
            return self.formula(expr[1], not positive)
        if kind in ("and", "or"):
            a, b = self.formula(expr[1], positive), self.formula(expr[2], positive)
            return _and(a, b) if (kind == "and") == positive else _or(a, b)
        if kind == "cond":
            c_true, c_false = self.formula(expr[1], True), self.formula(expr[1], False)
            return _or(_and(c_true, self.formula(expr[2], positive)),
                       _and(c_false, self.formula(expr[3], positive)))
        if kind == "has":
            found = self.path(expr[1])
            if found is not None and found[0]:
                return Lit(Has(found[0]), positive)
        if kind == "rel":
            made = self.relation(expr, positive)
            if made is not None:
                return made
        if kind == "call":
            made = self.call(expr, positive)
            if made is not None:
                return made
        if kind == "macro":
            made = self.macro(expr, positive)
            if made is not None:
                return made
        return Lit(Opaque(unparse(expr)), positive)

    def _boolean(self, expr: Node) -> bool:
        """Is ``expr`` a boolean expression we read as a formula (not a value)?"""
        return expr[0] in ("has", "not", "and", "or") or (
            expr[0] == "rel" and expr[1] in ("<", "<=", ">", ">=", "in")) or (
            expr[0] == "call" and expr[1] in _STR_TESTS | _VALIDATORS)

    def relation(self, expr: Node, positive: bool) -> Formula | None:
        op, left, right = expr[1], expr[2], expr[3]
        if op in ("==", "!=") and (self._boolean(left) or self._boolean(right)):
            if right[0] == "lit" and isinstance(right[1], bool):
                return self.formula(left, positive == (right[1] == (op == "==")))
            if left[0] == "lit" and isinstance(left[1], bool):
                return self.formula(right, positive == (left[1] == (op == "==")))
            if self._boolean(left) and self._boolean(right):
                same = positive == (op == "==")
                a_t, a_f = self.formula(left, True), self.formula(left, False)
                b_t, b_f = self.formula(right, True), self.formula(right, False)
                if same:
                    return _or(_and(a_t, b_t), _and(a_f, b_f))
                return _or(_and(a_t, b_f), _and(a_f, b_t))
        count = self.count(expr, positive)
        if count is not None:
            return count
        if op == "in":
            term = self.term(left)
            if term is not None and right[0] == "list" and all(
                    self.const(i) is not None and self.const(i).fn is None  # type: ignore[union-attr]
                    for i in right[1]):
                return Lit(In(term, tuple(self.const(i).value for i in right[1])),  # type: ignore[union-attr]
                           positive)
            return None
        compared = self.comparison(op, left, right)
        if compared is None:
            return None
        return Lit(compared, positive)

    def comparison(self, op: str, left: Node, right: Node) -> Rel | None:
        # quantity(a).compareTo(quantity(b)) <op> 0
        if (left[0] == "call" and left[1] == "compareTo" and left[2] is not None
                and len(left[3]) == 1 and right == ("lit", 0)):
            return self.comparison(op, left[2], left[3][0])
        lt, rt = self.term(left), self.term(right)
        if lt is not None and rt is not None:
            return Rel(lt, op, rt)
        if lt is not None:
            c = self.const(right)
            return Rel(lt, op, c) if c is not None else None
        if rt is not None:
            c = self.const(left)
            return Rel(rt, _FLIP[op], c) if c is not None else None
        return None

    def count(self, expr: Node, positive: bool) -> Formula | None:
        """``[f1, f2].filter(x, x).size() op n`` and ``(f1 ? 1 : 0) + ... op n``."""
        op, left, right = expr[1], expr[2], expr[3]
        if op == "in":
            return None
        if left[0] == "lit" and right[0] != "lit":
            left, right, op = right, left, _FLIP[op]
        if right[0] != "lit" or not isinstance(right[1], int) or isinstance(right[1], bool):
            return None
        parts = self._counted(left)
        if parts is None or not parts or len(parts) > _COUNT_LIMIT:
            return None
        return self._count_formula(parts, op, right[1], positive)

    def _counted(self, expr: Node) -> list[Node] | None:
        if (expr[0] == "call" and expr[1] == "size" and not expr[3]
                and expr[2] is not None and expr[2][0] == "macro"
                and expr[2][1] == "filter" and expr[2][2][0] == "list"):
            var, body = expr[2][3], expr[2][4]
            if body not in (("ident", var), ("rel", "==", ("ident", var), ("lit", True))):
                return None
            return list(expr[2][2][1])
        if expr[0] == "call" and expr[1] == "size" and expr[2] is None and len(expr[3]) == 1:
            return self._counted(("call", "size", expr[3][0], ()))
        if expr[0] == "arith" and expr[1] == "+":
            a, b = self._counted(expr[2]), self._counted(expr[3])
            return None if a is None or b is None else a + b
        if expr[0] == "cond" and expr[2] == ("lit", 1) and expr[3] == ("lit", 0):
            return [expr[1]]
        return None

    def _count_formula(self, parts: list[Node], op: str, n: int, positive: bool) -> Formula:
        if not positive:
            op = _NEGATE[op]
        test = {"==": n.__eq__, "!=": n.__ne__, "<": n.__gt__, "<=": n.__ge__,
                ">": n.__lt__, ">=": n.__le__}[op]
        yes = [self.formula(p, True) for p in parts]
        no = [self.formula(p, False) for p in parts]
        options = []
        for bits in itertools.product((True, False), repeat=len(parts)):
            if test(sum(bits)):
                options.append(_and(*(y if b else f for y, f, b in zip(yes, no, bits,
                                                                      strict=True))))
        return _or(*options) if options else FALSE

    def call(self, expr: Node, positive: bool) -> Formula | None:
        name, target, args = expr[1], expr[2], expr[3]
        if name in _STR_TESTS and target is not None and len(args) == 1 and args[0][0] == "lit":
            term = self.term(target)
            if term is not None and isinstance(args[0][1], str):
                return Lit(StrTest(term, name, args[0][1]), positive)
        if name in _VALIDATORS and target is None and len(args) == 1:
            term = self.term(args[0])
            if term is not None:
                return Lit(Valid(term, name), positive)
        return None

    def macro(self, expr: Node, positive: bool) -> Formula | None:
        name, target, var, body = expr[1], expr[2], expr[3], expr[4]
        found = self.path(target)
        if found is None:
            return None
        path, sub = found
        if name == "exists_one" and target[0] == "list":
            return None
        is_all = (name == "all" and positive) or (name == "exists" and not positive)
        if not is_all:
            return None
        text = unparse(expr) if name == "all" else unparse(("not", expr))
        if name == "exists":
            body = ("not", body)
        unique = self._unique(target, var, body)
        if unique is not None:
            return Lit(Unique(path, unique[0] if unique else None, text), True)
        free = _free(body) - {var}
        sub = self.schema.deref(sub)
        if not isinstance(sub, Mapping):
            return None
        is_map = sub.get("type") == "object"
        if not free:
            over = "keys" if is_map else "items"
            pushed = _subst(body, lambda n: n == ("ident", var), ("ident", "self"))
            return Lit(Each(path, over, unparse(pushed), text), True)
        if is_map and free <= {"self"}:
            value_of = ("idx", target, ("ident", var))
            pushed = _subst(body, lambda n: n == value_of, ("ident", "self"))
            if not _free(pushed) - {"self"} and var not in _free(pushed) and pushed != body:
                return Lit(Each(path, "values", unparse(pushed), text), True)
        return None

    @staticmethod
    def _unique(target: Node, var: str, body: Node) -> tuple[tuple[str, ...], ...] | None:
        """``self.all(x, self.exists_one(y, x.k == y.k))`` or ``self.all(x, self.filter(y,
        y.k == x.k).size() == 1)``: ``((k,),)`` or ``()`` for whole items; else None."""
        inner = None
        if body[0] == "macro" and body[1] == "exists_one" and body[2] == target:
            inner = body
        elif (body[0] == "rel" and body[1] == "==" and body[3] == ("lit", 1)
              and body[2][0] == "call" and body[2][1] == "size" and not body[2][3]
              and body[2][2] is not None and body[2][2][0] == "macro"
              and body[2][2][1] == "filter" and body[2][2][2] == target):
            inner = body[2][2]
        if inner is None:
            return None
        other, test = inner[3], inner[4]
        if test[0] != "rel" or test[1] != "==":
            return None
        sides = {test[2], test[3]}
        if sides == {("ident", var), ("ident", other)}:
            return ()
        a, b = test[2], test[3]
        if (a[0] == "sel" and b[0] == "sel" and a[2] == b[2]
                and {a[1], b[1]} == {("ident", var), ("ident", other)}):
            return ((a[2],),)
        return None


def recognise(rule: str, node: Mapping[str, Any], resolve: Resolver | None = None
              ) -> Shape | None:
    """``rule`` (on the schema ``node``) read as a :class:`Shape`, or ``None`` when it
    does not parse or its normal form would be too large to use."""
    ast = parse(rule)
    if ast is None:
        return None
    formula = _Reader(node, resolve).formula(ast)
    if len(dnf(formula)) > DNF_LIMIT:
        return None
    return Shape(rule, formula, not _has_opaque(formula))


def _has_opaque(f: Formula) -> bool:
    if isinstance(f, Lit):
        return isinstance(f.atom, Opaque)
    return any(_has_opaque(p) for p in f.parts)


def dnf(f: Formula, limit: int = DNF_LIMIT) -> list[tuple[Lit, ...]]:
    """The conjunctions whose disjunction is ``f`` (at most ``limit + 1`` of them: past
    ``limit`` the caller gives up)."""
    if isinstance(f, Lit):
        return [(f,)]
    if isinstance(f, Or):
        out: list[tuple[Lit, ...]] = []
        for p in f.parts:
            out.extend(dnf(p, limit))
            if len(out) > limit:
                return out
        return out
    acc: list[tuple[Lit, ...]] = [()]
    for p in f.parts:
        nxt = [a + b for a in acc for b in dnf(p, limit)]
        acc = [c for c in nxt if not _contradicts(c)]
        if len(acc) > limit:
            return acc
    return acc


def _contradicts(conj: tuple[Lit, ...]) -> bool:
    seen: dict[Any, bool] = {}
    for lit in conj:
        if seen.get(lit.atom, lit.positive) != lit.positive:
            return True
        seen[lit.atom] = lit.positive
    return False


def is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(
        value)
