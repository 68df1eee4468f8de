"""A CEL parser producing cel-go's AST: operators as calls (``_+_``), macros expanded.

It serves costing CEL rules exactly as the API server does.

Why not cel-python's parse tree: the cost of a rule is defined over the AST cel-go's parser
builds (github.com/google/cel-go parser/parser.go, parser/macro.go, ext/comprehensions.go,
ext/lists.go ``sortByMacro``, cel/library.go ``optMap``): ``self.l.all(x, p)`` is a
comprehension with an accumulator, a loop condition ``@not_strictly_false(@result)`` and a
step ``@result && p``, and cel-go charges each of those per element. cel-python keeps the
macro as a method call, does not parse the optional syntax (``self.?x``, ``[?i]``) and
folds some literals differently, so the checker (``_cel_check``) and the estimator
(``_cel_cost``) read this AST instead.

Grammar: cel-go ``parser/gen/CEL.g4``. Like cel-go, ``-`` directly before a number is part
of the literal (``-1`` costs nothing, ``-x`` is a call), an even run of ``!`` or ``-``
cancels out, and ``||``/``&&`` chains are balanced trees (``parser/helper.go``
``balancer``). Errors carry cel-go's wording where the parser's own checks produce them
(``argument must be a simple name``, ``invalid argument to has() macro``); a syntax error
says ``Syntax error: ...`` as cel-go does, though not with ANTLR's exact token list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count
from typing import Any

__all__ = ["ACCU", "Expr", "ParseError", "Uint", "copy", "parse"]

ACCU = "@result"  # cel-go parser.HiddenAccumulatorName


class Uint(int):
    """A CEL ``uint`` literal (``1u``)."""


class ParseError(ValueError):
    """The rule does not parse; ``args[0]`` is cel-go's message (without location)."""


_IDS = count(1)


@dataclass(eq=False)
class Expr:
    """One node of cel-go's ``ast.Expr``. ``kind`` is one of ``lit``, ``ident``,
    ``select``, ``call``, ``list``, ``map``, ``struct``, ``comp``; unused fields stay
    empty."""

    kind: str
    value: Any = None  # lit: the value; ident: the name; select: the field name
    operand: Expr | None = None  # select: operand; call: target (member calls)
    function: str = ""
    args: list[Expr] = field(default_factory=list)  # call args; list elements
    entries: list[tuple[Expr, Expr, bool]] = field(default_factory=list)  # map
    optional: list[int] = field(default_factory=list)  # list: optional indices
    test_only: bool = False  # select: has()
    # comprehension
    iter_var: str = ""
    iter_var2: str = ""
    iter_range: Expr | None = None
    accu_var: str = ""
    accu_init: Expr | None = None
    loop_cond: Expr | None = None
    loop_step: Expr | None = None
    result: Expr | None = None
    id: int = field(default_factory=lambda: next(_IDS))
    #: how deep cel-go's parse-tree visitor recurses to build this node (``parser.go``
    #: ``Visit`` counts a ternary, a relation, an arithmetic operator, a selection, a
    #: method call and an index; past 250: "max recursion depth exceeded")
    vdepth: int = field(default=0, compare=False, repr=False)

    def children(self) -> list[Expr]:
        if self.kind == "comp":
            return [e for e in (self.iter_range, self.accu_init, self.loop_cond,
                                self.loop_step, self.result) if e is not None]
        kids = [self.operand] if self.operand is not None else []
        kids.extend(self.args)
        for k, v, _ in self.entries:
            kids.extend((k, v))
        return kids


def _lit(value: Any) -> Expr:
    return Expr("lit", value)


def _ident(name: str) -> Expr:
    return Expr("ident", name)


def _call(function: str, *args: Expr, target: Expr | None = None) -> Expr:
    return Expr("call", function=function, operand=target, args=list(args))


def _comp(rng: Expr, var: str, accu: str, init: Expr, cond: Expr,  # noqa: PLR0917 - cel-go's NewComprehension
          step: Expr, result: Expr, var2: str = "") -> Expr:
    return Expr("comp", iter_range=rng, iter_var=var, iter_var2=var2, accu_var=accu,
                accu_init=init, loop_cond=cond, loop_step=step, result=result)


def _copy(e: Expr) -> Expr:
    """A deep copy with fresh ids (cel-go ``ExprHelper.Copy``)."""
    def cp(x: Expr | None) -> Expr | None:
        return _copy(x) if x is not None else None

    return Expr(e.kind, e.value, cp(e.operand), e.function, [_copy(a) for a in e.args],
                [(_copy(k), _copy(v), o) for k, v, o in e.entries], list(e.optional),
                e.test_only, e.iter_var, e.iter_var2, cp(e.iter_range), e.accu_var,
                cp(e.accu_init), cp(e.loop_cond), cp(e.loop_step), cp(e.result))


# --------------------------------------------------------------------------- lexer

_RESERVED = frozenset({"as", "break", "const", "continue", "else", "for", "function", "if",
                       "import", "let", "loop", "package", "namespace", "return", "var",
                       "void", "while"})
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n\f]+|//[^\n]*)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
        |"(?:\\.|[^"\\\n\r])*"|'(?:\\.|[^'\\\n\r])*'))
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+
        |\d+[uU]?)
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!+\-*/%?:.,()\[\]{}])
""", re.VERBOSE | re.DOTALL)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ParseError(f"Syntax error: token recognition error at: '{text[pos]}'")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append((kind, m.group(), pos))
        pos = m.end()
    out.append(("eof", "", pos))
    return out


_ESC = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
        "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}


def _unquote(token: str) -> str | bytes:
    prefix = re.match(r"[rRbB]*", token)
    flags = prefix.group().lower() if prefix else ""
    body = token[len(flags):]
    q = 3 if body[:3] in ('"""', "'''") else 1
    body = body[q:-q]
    is_bytes = "b" in flags
    if "r" in flags:
        return body.encode() if is_bytes else body
    out: list[bytes] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c.encode())
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _ESC:
            out.append(_ESC[nxt].encode())
            i += 2
        elif nxt in "xX":
            v = int(body[i + 2:i + 4], 16)
            out.append(bytes([v]) if is_bytes else chr(v).encode())
            i += 4
        elif nxt in "uU":
            n = 4 if nxt == "u" else 8
            if is_bytes:
                raise ParseError("Syntax error: unicode escape in bytes literal")
            out.append(chr(int(body[i + 2:i + 2 + n], 16)).encode())
            i += 2 + n
        elif nxt in "0123":
            v = int(body[i + 1:i + 4], 8)
            out.append(bytes([v]) if is_bytes else chr(v).encode())
            i += 4
        else:
            raise ParseError(f"Syntax error: invalid escape sequence \\{nxt}")
    data = b"".join(out)
    if is_bytes:
        return data
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        raise ParseError("Syntax error: invalid UTF-8 in string literal") from exc


def _number(token: str, negative: bool) -> Any:
    text = ("-" if negative else "") + token
    if token[:2].lower() == "0x":
        unsigned = token[-1] in "uU"
        digits = token[2:-1] if unsigned else token[2:]
        v = int(digits, 16)
        if unsigned:
            if negative or v >= 2 ** 64:
                raise ParseError(f"Syntax error: invalid uint literal {text}")
            return Uint(v)
        v = -v if negative else v
        if not -2 ** 63 <= v < 2 ** 63:
            raise ParseError(f"Syntax error: invalid int literal {text}")
        return v
    if token[-1] in "uU":
        v = int(token[:-1])
        if negative or v >= 2 ** 64:
            raise ParseError(f"Syntax error: invalid uint literal {text}")
        return Uint(v)
    if any(c in token for c in ".eE"):
        return float(text)
    v = int(text)
    if not -2 ** 63 <= v < 2 ** 63:
        raise ParseError(f"Syntax error: invalid int literal {text}")
    return v


# --------------------------------------------------------------------------- parser

_REL = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_",
        "in": "@in"}
_ADD = {"+": "_+_", "-": "_-_"}
_MUL = {"*": "_*_", "/": "_/_", "%": "_%_"}
MAX_DEPTH = 250  # cel-go parser maxRecursionDepth (both of its limits)


def _d(node: Expr, counted: bool, *kids: Expr) -> Expr:
    node.vdepth = (1 if counted else 0) + max((k.vdepth for k in kids), default=0)
    if node.vdepth > MAX_DEPTH:
        raise ParseError("max recursion depth exceeded")
    return node


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self, k: int = 0) -> tuple[str, str, int]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, text: str) -> bool:
        kind, value, _ = self.peek()
        return kind in ("op", "id") and value == text

    def take(self, text: str) -> None:
        if not self.at(text):
            kind, value, _ = self.peek()
            shown = "<EOF>" if kind == "eof" else value
            raise ParseError(f"Syntax error: mismatched input '{shown}' expecting '{text}'")
        self.i += 1

    def fail(self) -> ParseError:
        kind, value, _ = self.peek()
        shown = "<EOF>" if kind == "eof" else value
        return ParseError(f"Syntax error: extraneous input '{shown}'" if kind != "eof"
                          else "Syntax error: mismatched input '<EOF>'")

    def expr(self) -> Expr:
        self.depth += 1
        if self.depth > MAX_DEPTH:  # cel-go's recursionListener, counting rule entries
            raise ParseError(f"expression recursion limit exceeded: {MAX_DEPTH}")
        try:
            cond = self.logical("||")
            if self.at("?"):
                self.i += 1
                a = self.logical("||")
                self.take(":")
                b = self.expr()
                return _d(_call("_?_:_", cond, a, b), True, cond, a, b)
            return cond
        finally:
            self.depth -= 1

    def logical(self, op: str) -> Expr:
        terms = [self.logical("&&") if op == "||" else self.relation()]
        while self.at(op):
            self.i += 1
            terms.append(self.logical("&&") if op == "||" else self.relation())
        return _balance("_||_" if op == "||" else "_&&_", terms)

    def relation(self) -> Expr:
        left = self.calc(0)
        while True:
            _, v, _ = self.peek()
            if v in _REL and (self.peek()[0] == "op" or v == "in"):
                self.i += 1
                right = self.calc(0)
                left = _d(_call(_REL[v], left, right), True, left, right)
            else:
                return left

    def calc(self, level: int) -> Expr:
        if level == 0:
            left = self.calc(1)
            while self.peek()[0] == "op" and self.peek()[1] in _ADD:
                op = self.peek()[1]
                self.i += 1
                right = self.calc(1)
                left = _d(_call(_ADD[op], left, right), True, left, right)
            return left
        left = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in _MUL:
            op = self.peek()[1]
            self.i += 1
            right = self.unary()
            left = _d(_call(_MUL[op], left, right), True, left, right)
        return left

    def unary(self) -> Expr:
        kind, v, _ = self.peek()
        if kind == "op" and v == "!":
            n = 0
            while self.at("!"):
                n += 1
                self.i += 1
            inner = self.member()
            return inner if n % 2 == 0 else _d(_call("!_", inner), False, inner)
        if kind == "op" and v == "-":
            if self.peek(1)[0] == "num":
                return self.member()
            n = 0
            while self.at("-"):
                n += 1
                self.i += 1
            inner = self.member()
            return inner if n % 2 == 0 else _d(_call("-_", inner), False, inner)
        return self.member()

    def args(self, close: str) -> list[Expr]:
        out: list[Expr] = []
        if self.at(close):
            self.i += 1
            return out
        while True:
            out.append(self.expr())
            if self.at(","):
                self.i += 1
                if self.at(close):
                    self.i += 1
                    return out
                continue
            self.take(close)
            return out

    def member(self) -> Expr:
        e = self.primary()
        while True:
            if self.at("."):
                self.i += 1
                optional = False
                if self.at("?"):
                    self.i += 1
                    optional = True
                kind, name, _ = self.peek()
                if kind != "id" or name in ("in", "true", "false", "null"):
                    raise self.fail()  # lexer tokens of cel-go's grammar, not identifiers
                self.i += 1
                if optional:
                    e = _d(_call("_?._", e, _lit(name)), True, e)
                elif self.at("("):
                    self.i += 1
                    args = self.args(")")
                    e = _d(_macro_or_call(name, e, args), True, e, *args)
                else:
                    e = _d(Expr("select", name, e), True, e)
            elif self.at("["):
                self.i += 1
                optional = False
                if self.at("?"):
                    self.i += 1
                    optional = True
                index = self.expr()
                self.take("]")
                e = _d(_call("_[?_]" if optional else "_[_]", e, index), True, e, index)
            else:
                return e

    def struct(self, name: str) -> Expr:
        """``Name{field: value, ...}``: kept as a ``struct`` node; no message type is
        declared for CRD rules, so the checker refuses it as cel-go does."""
        self.take("{")
        entries: list[tuple[Expr, Expr, bool]] = []
        while not self.at("}"):
            opt = False
            if self.at("?"):
                self.i += 1
                opt = True
            kind, fname, _ = self.peek()
            if kind != "id":
                raise self.fail()
            self.i += 1
            self.take(":")
            entries.append((_lit(fname), self.expr(), opt))
            if not self.at(","):
                break
            self.i += 1
        self.take("}")
        return Expr("struct", name, entries=entries)

    def primary(self) -> Expr:
        kind, v, _ = self.peek()
        if kind == "op" and v == "-" and self.peek(1)[0] == "num":
            self.i += 2
            return _lit(_number(self.toks[self.i - 1][1], True))
        if kind == "num":
            self.i += 1
            return _lit(_number(v, False))
        if kind == "str":
            self.i += 1
            return _lit(_unquote(v))
        if kind == "id":
            self.i += 1
            if v in ("true", "false"):
                return _lit(v == "true")
            if v == "null":
                return _lit(None)
            if v == "in" or v in _RESERVED:
                raise ParseError(f"Syntax error: reserved identifier: {v}")
            if self.at("("):
                self.i += 1
                args = self.args(")")
                return _d(_macro_or_call(v, None, args), False, *args)
            if self.at("{"):
                return self.struct(v)
            return _ident(v)
        if kind == "op" and v == ".":
            self.i += 1
            kind, name, _ = self.peek()
            if kind != "id":
                raise self.fail()
            self.i += 1
            if self.at("("):
                self.i += 1
                args = self.args(")")
                return _d(_macro_or_call(name, None, args), False, *args)
            return _ident(name)
        if kind == "op" and v == "(":
            self.i += 1
            e = self.expr()
            self.take(")")
            return e
        if kind == "op" and v == "[":
            self.i += 1
            elems: list[Expr] = []
            optional: list[int] = []
            while not self.at("]"):
                if self.at("?"):
                    self.i += 1
                    optional.append(len(elems))
                elems.append(self.expr())
                if not self.at(","):
                    break
                self.i += 1
            self.take("]")
            return _d(Expr("list", args=elems, optional=optional), False, *elems)
        if kind == "op" and v == "{":
            self.i += 1
            entries: list[tuple[Expr, Expr, bool]] = []
            while not self.at("}"):
                opt = False
                if self.at("?"):
                    self.i += 1
                    opt = True
                key = self.expr()
                self.take(":")
                entries.append((key, self.expr(), opt))
                if not self.at(","):
                    break
                self.i += 1
            self.take("}")
            return _d(Expr("map", entries=entries), False,
                      *(x for k, v, _ in entries for x in (k, v)))
        raise self.fail()


def _balance(function: str, terms: list[Expr]) -> Expr:
    if len(terms) == 1:
        return terms[0]
    mid = len(terms) // 2
    left, right = _balance(function, terms[:mid]), _balance(function, terms[mid:])
    return _d(_call(function, left, right), False, left, right)


def _simple(e: Expr, message: str) -> str:
    if e.kind != "ident":
        raise ParseError(message)
    return str(e.value)


def _iter_var(e: Expr, message: str = "argument must be a simple name") -> str:
    name = _simple(e, message)
    if name in (ACCU, "__result__"):
        raise ParseError("iteration variable overwrites accumulator variable")
    return name


def _iter_vars(a: Expr, b: Expr) -> tuple[str, str]:
    v1, v2 = _iter_var(a), _iter_var(b)
    if v1 == v2:
        raise ParseError(f"duplicate variable name: {v1}")
    return v1, v2


def _accu() -> Expr:
    return _ident(ACCU)


def _macro_or_call(name: str, target: Expr | None, args: list[Expr]) -> Expr:
    n = len(args)
    if target is None:
        if name == "has" and n == 1:
            arg = args[0]
            if arg.kind != "select":
                raise ParseError("invalid argument to has() macro")
            return Expr("select", arg.value, arg.operand, test_only=True)
        return _call(name, *args)
    if name in ("all", "exists", "exists_one") and n == 2:
        v = _iter_var(args[0])
        if name == "all":
            return _comp(target, v, ACCU, _lit(True), _call("@not_strictly_false", _accu()),
                         _call("_&&_", _accu(), args[1]), _accu())
        if name == "exists":
            return _comp(target, v, ACCU, _lit(False),
                         _call("@not_strictly_false", _call("!_", _accu())),
                         _call("_||_", _accu(), args[1]), _accu())
        return _comp(target, v, ACCU, _lit(0), _lit(True),
                     _call("_?_:_", args[1], _call("_+_", _accu(), _lit(1)), _accu()),
                     _call("_==_", _accu(), _lit(1)))
    if name in ("all", "exists", "exists_one", "existsOne") and n == 3:
        v1, v2 = _iter_vars(args[0], args[1])
        if name == "all":
            return _comp(target, v1, ACCU, _lit(True), _call("@not_strictly_false", _accu()),
                         _call("_&&_", _accu(), args[2]), _accu(), v2)
        if name == "exists":
            return _comp(target, v1, ACCU, _lit(False),
                         _call("@not_strictly_false", _call("!_", _accu())),
                         _call("_||_", _accu(), args[2]), _accu(), v2)
        return _comp(target, v1, ACCU, _lit(0), _lit(True),
                     _call("_?_:_", args[2], _call("_+_", _accu(), _lit(1)), _accu()),
                     _call("_==_", _accu(), _lit(1)), v2)
    if name == "map" and n in (2, 3):
        v = _iter_var(args[0], "argument is not an identifier")
        fn = args[-1]
        step = _call("_+_", _accu(), Expr("list", args=[fn]))
        if n == 3:
            step = _call("_?_:_", args[1], step, _accu())
        return _comp(target, v, ACCU, Expr("list"), _lit(True), step, _accu())
    if name == "filter" and n == 2:
        v = _iter_var(args[0], "argument is not an identifier")
        step = _call("_+_", _accu(), Expr("list", args=[_copy(args[0])]))
        step = _call("_?_:_", args[1], step, _accu())
        return _comp(target, v, ACCU, Expr("list"), _lit(True), step, _accu())
    if name in ("transformList", "transformMap", "transformMapEntry") and n in (3, 4):
        v1, v2 = _iter_vars(args[0], args[1])
        fn = args[-1]
        if name == "transformList":
            step = _call("_+_", _accu(), Expr("list", args=[fn]))
            init = Expr("list")
        elif name == "transformMap":
            step = _call("cel.@mapInsert", _accu(), _ident(v1), fn)
            init = Expr("map")
        else:
            step = _call("cel.@mapInsert", _accu(), fn)
            init = Expr("map")
        if n == 4:
            step = _call("_?_:_", args[2], step, _accu())
        return _comp(target, v1, ACCU, init, _lit(True), step, _accu(), v2)
    if name in ("optMap", "optFlatMap") and n == 2:
        v = _simple(args[0], f"{name}() variable name must be a simple identifier")
        bind = _comp(Expr("list"), "#unused", v, _call("value", target=_copy(target)),
                     _lit(False), _ident(v), args[1])
        inner = _call("optional.of", bind) if name == "optMap" else bind
        return _call("_?_:_", _call("hasValue", target=target), inner,
                     _call("optional.none"))
    if name == "sortBy" and n == 2:
        if target.kind not in ("list", "select", "ident", "comp", "call"):
            raise ParseError("sortBy can only be applied to a list, identifier, "
                             "comprehension, call or select expression")
        var = "@__sortBy_input__"
        mapped = _macro_or_call("map", _ident(var), args)
        call = _call("@sortByAssociatedKeys", mapped, target=_ident(var))
        return _comp(Expr("list"), "#unused", var, target, _lit(False), _ident(var), call)
    return _call(name, *args, target=target)


def copy(e: Expr) -> Expr:
    """A deep copy of ``e`` with fresh ids (the checker rewrites the tree it checks)."""
    return _copy(e)


def parse(text: str) -> Expr:
    """cel-go's AST of ``text`` (macros expanded). Raises :class:`ParseError`.

    Nesting is bounded at 250 as in cel-go, so the Python stack needs about ten frames a
    level: the recursion limit is raised while parsing and put back after."""
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        p = _Parser(text)
        e = p.expr()
        if p.peek()[0] != "eof":
            raise p.fail()
        return e
    finally:
        sys.setrecursionlimit(limit)
