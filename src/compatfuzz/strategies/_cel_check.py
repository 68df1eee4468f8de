"""Type-check ``x-kubernetes-validations`` rules as the API server does.

Why this exists: the API server refuses a CRD whose rule does not compile (an unknown
field, a function applied to the wrong types) and prices every rule by cel-go's cost
estimator, which needs the type of each sub-expression. cel-python evaluates without
types, so compatfuzz used to guess both. This module is a port of

* k8s.io/apiserver v0.37.2 ``pkg/cel/common/schemas.go`` (``SchemaDeclType``: the CEL
  declaration of a schema node, with ``MaxElements`` and ``MinSerializedSize``) and
  ``pkg/cel/types.go``, ``escaping.go``;
* github.com/google/cel-go v0.29.2 ``checker/checker.go`` and ``checker/types.go``
  (identifier and function resolution, overload selection with type parameters,
  comprehensions, homogeneous aggregate literals) with its error texts
  (``checker/errors.go``, ``checker/format.go``);
* the declarations of the environment ``environment.StoredExpressions`` builds
  (``_cel_decls``), with ``self`` and ``oldSelf`` declared as
  apiextensions-apiserver ``pkg/apiserver/schema/cel/compilation.go`` (``prepareEnvSet``,
  ``compileRule``) declares them.

:func:`compile_errors` is the entry point for callers that want the server's verdict;
:func:`check` returns the typed AST the cost estimator (``_cel_cost``) walks.

Where it is not cel-go: syntax errors say ``Syntax error: ...`` but not with ANTLR's token
lists (the verdict is the same); object types are named ``selfType`` where the server
appends a per-CRD number (``selfType123``). The declarations and the schema's CEL view
live in ``_cel_types``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from compatfuzz.strategies._cel_parse import Expr, ParseError, Uint, parse
from compatfuzz.strategies._cel_parse import copy as _copy_expr
from compatfuzz.strategies._cel_types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    ERROR,
    INT,
    NULL,
    RESERVED,
    STRING,
    UINT,
    DeclT,
    Overload,
    Resolver,
    T,
    assignable,
    assignable_list,
    decl_type,
    fmt,
    functions,
    is_dyn,
    is_dyn_or_error,
    list_of,
    map_of,
    most_general,
    normal,
    optional_of,
    substitute,
    type_idents,
    type_of,
)

__all__ = ["Checked", "check", "compile_errors", "uses_old_self"]

_TYPE_IDENTS = type_idents()
Mapping_ = dict[str, T]
_RESERVED = RESERVED
_assignable = assignable
_assignable_list = assignable_list
_most_general = most_general
_is_dyn = is_dyn
_is_dyn_or_error = is_dyn_or_error


# --------------------------------------------------------------------------- checker


@dataclass
class Checked:
    """A checked rule: its AST, the type and overloads of each node (by ``Expr.id``), the
    declaration of ``self`` and cel-go's error texts."""

    ast: Expr | None
    root: DeclT | None
    types: dict[int, T] = field(default_factory=dict)
    overloads: dict[int, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    references: set[str] = field(default_factory=set)

    def type(self, e: Expr) -> T:
        return self.types.get(e.id, DYN)


#: Functions the stored-expressions environment has and the new-expressions one (what a
#: CRD create or a changed rule compiles in: the libraries up to the server's
#: compatibility version, 1.36 for a 1.37 server) lacks: ``library.Lists(ListsVersion(1))``
#: is introduced in 1.37 (k8s.io/apiserver ``environment/base.go``).
NEW_IN_137 = frozenset({"includes"})


class _Checker:
    def __init__(self, variables: dict[str, T], out: Checked,
                 hidden: frozenset[str] = frozenset()) -> None:
        self.hidden = hidden
        self.scopes: list[dict[str, T]] = [variables]
        self.out = out
        self.m: Mapping_ = {}
        self.free = 0

    def error(self, message: str) -> None:
        self.out.errors.append(message)

    def set(self, e: Expr, t: T) -> None:
        self.out.types[e.id] = t

    def get(self, e: Expr) -> T:
        return self.out.types.get(e.id, ERROR)

    def fresh(self) -> T:
        t = T("param", f"_var{self.free}")
        self.free += 1
        return t

    def is_assignable(self, t1: T, t2: T) -> bool:
        copy = dict(self.m)
        if _assignable(copy, t1, t2):
            self.m = copy
            return True
        return False

    def is_assignable_list(self, l1: tuple[T, ...], l2: tuple[T, ...]) -> bool:
        copy = dict(self.m)
        if _assignable_list(copy, l1, l2):
            self.m = copy
            return True
        return False

    def lookup(self, name: str) -> T | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in _TYPE_IDENTS:
            return type_of(_TYPE_IDENTS[name])
        return None

    def check(self, e: Expr) -> None:
        kind = e.kind
        if kind == "lit":
            v = e.value
            t = (NULL if v is None else BOOL if isinstance(v, bool) else UINT
                 if isinstance(v, Uint) else INT if isinstance(v, int) else DOUBLE
                 if isinstance(v, float) else STRING if isinstance(v, str) else BYTES)
            self.set(e, t)
        elif kind == "ident":
            found = self.lookup(str(e.value))
            if found is None:
                self.error(f"undeclared reference to '{e.value}' (in container '')")
                self.set(e, ERROR)
            else:
                self.out.references.add(str(e.value))
                self.set(e, found)
        elif kind == "select":
            self.check_select(e)
        elif kind == "call":
            self.check_call(e)
        elif kind == "list":
            self.check_list(e)
        elif kind == "map":
            self.check_map(e)
        elif kind == "comp":
            self.check_comp(e)
        elif kind == "struct":
            self.error(f"undeclared reference to '{e.value}' (in container '')")
            self.set(e, ERROR)

    def qualified(self, e: Expr) -> str | None:
        """cel-go ``containers.ToQualifiedName``."""
        if e.kind == "ident":
            return str(e.value)
        if e.kind == "select" and not e.test_only and e.operand is not None:
            prefix = self.qualified(e.operand)
            return None if prefix is None else f"{prefix}.{e.value}"
        return None

    def check_select(self, e: Expr) -> None:
        assert e.operand is not None
        name = self.qualified(e) if not e.test_only else None
        if name is not None and "." in name:
            t = self.qualified_ident(name)
            if t is not None:
                self.set(e, t)
                e.kind, e.value, e.operand = "ident", name, None
                return
        result = self.select_field(e, e.operand, str(e.value), False)
        if e.test_only:
            result = BOOL
        self.set(e, substitute(self.m, result, False))

    def qualified_ident(self, name: str) -> T | None:
        if name in _TYPE_IDENTS:
            return type_of(_TYPE_IDENTS[name])
        return None

    def select_field(self, e: Expr, operand: Expr, name: str, optional: bool) -> T:
        self.check(operand)
        operand_t = substitute(self.m, self.get(operand), False)
        target = operand_t
        is_opt = False
        if operand_t.kind == "opaque" and operand_t.name == "optional_type":
            target, is_opt = operand_t.params[0], True
        result = ERROR
        if target.kind == "map":
            result = target.params[1]
        elif target.kind == "struct":
            decl = target.decl
            fields = decl.fields if decl is not None and decl.fields is not None else {}
            # apiserver DeclTypeProvider.FindStructFieldType: a reserved word also finds
            # its escaped field (RecognizeKeywordAsFieldName, from compatibility 1.31)
            found = fields.get(name) or (fields.get(f"__{name}__") if name in _RESERVED
                                         else None)
            if found is not None:
                result = found.cel
            else:
                self.error(f"undefined field '{name}'")
        elif target.kind == "param":
            self.is_assignable(DYN, target)
            result = DYN
        else:
            if not _is_dyn_or_error(target):
                self.error(f"type '{fmt(target)}' does not support field selection")
            result = DYN
        return optional_of(result) if (is_opt or optional) else result

    def check_call(self, e: Expr) -> None:
        name = e.function
        if name == "_?._":
            self.check_opt_select(e)
            return
        for a in e.args:
            self.check(a)
        table = functions()
        if self.hidden:
            table = {k: v for k, v in table.items() if k not in self.hidden}
        if e.operand is None:
            fn = table.get(name)
            if fn is None:
                self.error(f"undeclared reference to '{name}' (in container '')")
                self.set(e, ERROR)
                return
            self.resolve(e, name, fn, None)
            return
        prefix = self.qualified(e.operand)
        if prefix is not None and f"{prefix}.{name}" in table:
            e.function, e.operand = f"{prefix}.{name}", None
            self.resolve(e, e.function, table[e.function], None)
            return
        self.check(e.operand)
        fn = table.get(name)
        if fn is None:
            self.set(e, ERROR)
            self.error(f"undeclared reference to '{name}' (in container '')")
            return
        self.resolve(e, name, fn, e.operand)

    def is_variable(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def check_opt_select(self, e: Expr) -> None:
        operand, fld = e.args
        result = self.select_field(e, operand, str(fld.value), True)
        self.set(fld, STRING)
        self.set(e, substitute(self.m, result, False))
        self.out.overloads[e.id] = ["select_optional_field"]

    def resolve(self, e: Expr, name: str, fn: list[Overload], target: Expr | None) -> None:
        arg_types = ([self.get(target)] if target is not None else []) + [
            self.get(a) for a in e.args]
        result: T | None = None
        ids: list[str] = []
        for o in fn:
            if (target is None) == o.member:
                continue
            if name in ("_&&_", "_||_"):
                ok = True
                for t in arg_types:
                    if not self.is_assignable(t, BOOL):
                        self.error(f"expected type '{fmt(BOOL)}' but found '{fmt(t)}'")
                        ok = False
                if not ok:
                    self.set(e, ERROR)
                    return
                self.out.overloads[e.id] = [o.id]
                self.set(e, BOOL)
                return
            sig = (o.result, *o.args)
            if o.params:
                subs = {p: self.fresh() for p in o.params}
                sig = tuple(substitute(subs, t, False) for t in sig)
            if len(sig) - 1 != len(arg_types):
                continue
            if self.is_assignable_list(tuple(arg_types), sig[1:]):
                ids.append(o.id)
                res = substitute(self.m, sig[0], False)
                if result is None:
                    result = res
                elif not _is_dyn(result) and res != result:
                    result = DYN
        if result is None:
            shown = [fmt(substitute(self.m, t, True)) for t in arg_types]
            if target is not None:
                sig_text = f"{shown[0]}.({', '.join(shown[1:])})"
            else:
                sig_text = f"({', '.join(shown)})"
            self.error(f"found no matching overload for '{name}' applied to '{sig_text}'")
            self.set(e, ERROR)
            return
        self.out.overloads[e.id] = ids
        self.set(e, result)

    def join(self, prev: T | None, cur: T) -> T:
        """cel-go ``joinTypes`` with dynamic aggregate element types: a mixed literal is a
        list of dyn here; the homogeneity validator (:func:`_validate`) refuses it."""
        if prev is None:
            return cur
        if self.is_assignable(prev, cur):
            return _most_general(prev, cur)
        return DYN

    def check_list(self, e: Expr) -> None:
        elem: T | None = None
        for i, a in enumerate(e.args):
            self.check(a)
            t = self.get(a)
            if i in e.optional:
                if t.kind == "opaque" and t.name == "optional_type":
                    t = t.params[0]
                elif not _is_dyn(t):
                    self.error(f"expected type '{fmt(optional_of(t))}' but found '{fmt(t)}'")
            elem = self.join(elem, t)
        self.set(e, list_of(elem if elem is not None else self.fresh()))

    def check_map(self, e: Expr) -> None:
        kt: T | None = None
        vt: T | None = None
        for k, v, opt in e.entries:
            self.check(k)
            kt = self.join(kt, self.get(k))
            self.check(v)
            t = self.get(v)
            if opt:
                if t.kind == "opaque" and t.name == "optional_type":
                    t = t.params[0]
                elif not _is_dyn(t):
                    self.error(f"expected type '{fmt(optional_of(t))}' but found '{fmt(t)}'")
            vt = self.join(vt, t)
        if kt is None or vt is None:
            kt, vt = self.fresh(), self.fresh()
        self.set(e, map_of(kt, vt))

    def check_comp(self, e: Expr) -> None:
        assert e.iter_range is not None and e.accu_init is not None
        assert e.loop_cond is not None and e.loop_step is not None and e.result is not None
        self.check(e.iter_range)
        self.check(e.accu_init)
        rng = substitute(self.m, self.get(e.iter_range), False)
        accu = self.get(e.accu_init)
        self.scopes.append({e.accu_var: accu})
        two = bool(e.iter_var2)
        var2: T | None = None
        if rng.kind == "list":
            var = rng.params[0]
            if two:
                var, var2 = INT, var
        elif rng.kind == "map":
            var = rng.params[0]
            var2 = rng.params[1] if two else None
        elif rng.kind in ("dyn", "error", "param"):
            self.is_assignable(DYN, rng)
            var = DYN
            var2 = DYN if two else None
        else:
            self.error(f"expression of type '{fmt(rng)}' cannot be range of a comprehension "
                       "(must be list, map, or dynamic)")
            var = ERROR
            var2 = ERROR if two else None
        scope = {e.iter_var: var}
        if two and var2 is not None:
            scope[e.iter_var2] = var2
        self.scopes.append(scope)
        self.check(e.loop_cond)
        self.assert_type(e.loop_cond, BOOL)
        self.check(e.loop_step)
        self.assert_type(e.loop_step, accu)
        self.scopes.pop()
        self.check(e.result)
        self.scopes.pop()
        self.set(e, substitute(self.m, self.get(e.result), False))

    def assert_type(self, e: Expr, t: T) -> None:
        if not self.is_assignable(t, self.get(e)):
            self.error(f"expected type '{fmt(t)}' but found '{fmt(self.get(e))}'")

    def finish(self, e: Expr) -> None:
        """cel-go substitutes the final mappings into every node's type (to dyn)."""
        for k, t in list(self.out.types.items()):
            self.out.types[k] = substitute(self.m, t, True)


def _walk(e: Expr) -> list[Expr]:
    out, stack = [], [e]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children())
    return out


@lru_cache(maxsize=1024)
def _parsed(rule: str) -> Expr | str:
    try:
        return parse(rule)
    except ParseError as exc:
        return str(exc.args[0])
    except RecursionError:
        return "expression recursion limit exceeded"


def _fresh_copy(e: Expr) -> Expr:
    return _copy_expr(e)


def check(rule: str, node: Mapping[str, Any], *, resolve: Resolver | None = None,
          old_self: bool = True, optional_old_self: bool = False, root: bool = False,
          decl: DeclT | None = None, new_expressions: bool = False) -> Checked:
    """Parse and type-check ``rule`` with ``self`` a value of ``node`` (and ``oldSelf``,
    declared for every rule as the server does; ``optional_old_self``: as
    ``optional_type(self)``, for rules with ``optionalOldSelf: true``).
    ``new_expressions``: in the environment a CRD create compiles new rules in (without
    :data:`NEW_IN_137`), instead of the stored-expressions one."""
    if decl is None:
        n = normal(node, resolve)
        decl = decl_type(n, root=root or n.get("x-kubernetes-embedded-resource") is True,
                         resolve=resolve, name="selfType")
    parsed = _parsed(rule)
    if isinstance(parsed, str):
        return Checked(None, decl, errors=[parsed])
    ast = _fresh_copy(parsed)
    out = Checked(ast, decl)
    if decl is None:
        out.errors.append("failed to convert to declType for CEL validation rules")
        return out
    variables = {"self": decl.cel}
    if old_self:
        variables["oldSelf"] = optional_of(decl.cel) if optional_old_self else decl.cel
    checker = _Checker(variables, out, NEW_IN_137 if new_expressions else frozenset())
    import sys

    limit = sys.getrecursionlimit()  # the parser bounds nesting at 250 levels
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        checker.check(ast)
    except RecursionError:
        out.errors.append("max recursion depth exceeded")
        return out
    finally:
        sys.setrecursionlimit(limit)
    checker.finish(ast)
    if not out.errors:
        out.errors.extend(_validate(ast, out))
    if not out.errors:
        out.errors.extend(_program_errors(ast))
    return out


_CONVERSIONS = frozenset({"bool", "bytes", "double", "duration", "dyn", "int", "string",
                          "timestamp", "type", "uint"})
_GO_INT = re.compile(r"[+-]?[0-9]+")
_DIGITS = r"[0-9](?:_?[0-9])*"
#: strconv.ParseFloat's syntax: Go float literals (underscores between digits, hex with a
#: ``p`` exponent), ``inf``/``infinity``/``nan``
_GO_FLOAT = re.compile(
    rf"nan|[+-]?(?:inf|infinity|(?:{_DIGITS}\.?(?:{_DIGITS})?|\.{_DIGITS})(?:e[+-]?{_DIGITS})?"
    r"|0x_?[0-9a-f](?:_?[0-9a-f])*(?:\.(?:[0-9a-f](?:_?[0-9a-f])*)?)?p[+-]?[0-9](?:_?[0-9])*"
    r"|0x\.[0-9a-f](?:_?[0-9a-f])*p[+-]?[0-9](?:_?[0-9])*)", re.IGNORECASE)
_GO_BOOL = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False,
            "False": False}
_OPAQUE_VALUE = object()  # a folded timestamp, duration or type: convertible, not modelled


class _FoldError(Exception):
    pass


def _convert(function: str, v: Any) -> Any:
    """cel-go's type conversion of a constant (``ConvertToType``), or :class:`_FoldError`
    with cel-go's message."""
    def conversion_error(target: str) -> _FoldError:
        return _FoldError(f"type conversion error from 'string' to '{target}'")

    if v is _OPAQUE_VALUE or function in ("dyn", "type", "duration", "timestamp"):
        return _OPAQUE_VALUE if function != "dyn" else v
    if function == "int":
        if isinstance(v, str):
            if not _GO_INT.fullmatch(v) or not -2 ** 63 <= int(v) < 2 ** 63:
                raise conversion_error("int")
            return int(v)
        if isinstance(v, float):
            if math.isnan(v) or not -9.223372036854775808e18 <= v < 9.223372036854775807e18:
                raise _FoldError("integer overflow")
            return int(v)
        if isinstance(v, int) and v >= 2 ** 63:
            raise _FoldError("integer overflow")
        return int(v) if isinstance(v, int) else v
    if function == "uint":
        if isinstance(v, str):
            if not v.isdigit() or not v.isascii() or int(v) >= 2 ** 64:
                raise conversion_error("uint")
            return Uint(int(v))
        if isinstance(v, float):
            if math.isnan(v) or v < 0 or v >= 1.8446744073709552e19:
                raise _FoldError("unsigned integer overflow")
            return Uint(int(v))
        if isinstance(v, int) and not isinstance(v, bool) and v < 0:
            raise _FoldError("unsigned integer overflow")
        return Uint(v) if isinstance(v, int) else v
    if function == "double":
        if isinstance(v, str):
            if not _GO_FLOAT.fullmatch(v):
                raise conversion_error("double")
            text = v.replace("_", "")
            try:
                f = float.fromhex(text) if "x" in text.lower() else float(text)
            except (ValueError, OverflowError) as exc:
                raise conversion_error("double") from exc
            if f in (float("inf"), float("-inf")) and "inf" not in v.lower():
                raise conversion_error("double")  # out of range: ParseFloat's ErrRange
            return f
        return float(v) if isinstance(v, int) else v
    if function == "bool":
        if isinstance(v, str):
            if v not in _GO_BOOL:
                raise conversion_error("bool")
            return _GO_BOOL[v]
        return v
    if function == "string":
        if isinstance(v, bytes):
            try:
                return v.decode()
            except UnicodeDecodeError as exc:
                raise _FoldError("invalid UTF-8 in bytes, cannot convert to string") from exc
        return _OPAQUE_VALUE if not isinstance(v, str) else v
    if function == "bytes":
        return v.encode() if isinstance(v, str) else v
    return v


def _program_errors(ast: Expr) -> list[str]:
    """What building the program refuses (cel-go ``interpreter/decorators.go`` with
    ``OptOptimize``, which the API server's environment sets): a type conversion of a
    constant is computed once (``maybeOptimizeConstUnary``: ``int('a')`` fails the rule),
    and the constant regular expressions of ``matches`` and the Kubernetes library's
    ``find``/``findAll`` are compiled once (``decRegexOptimizer``)."""
    from compatfuzz.schema._re2 import go_error

    missing = object()

    def fold(e: Expr) -> Any:
        """The constant value of ``e`` after folding (``missing``: not a constant)."""
        values = [fold(c) for c in e.children()]
        if e.kind == "call":
            pattern: Expr | None = None
            if e.function in ("matches", "find", "findAll") and e.operand is not None and (
                    e.args):
                pattern = e.args[0]
            elif e.function == "matches" and e.operand is None and len(e.args) == 2:
                pattern = e.args[1]
            if pattern is not None and pattern.kind == "lit" and isinstance(pattern.value, str):
                problem = go_error(pattern.value)
                if problem is not None:
                    raise _FoldError(problem)
            if e.function in _CONVERSIONS and e.operand is None and len(e.args) == 1 and (
                    values[0] is not missing):
                return _convert(e.function, values[0])
            return missing
        if e.kind == "lit":
            return e.value
        if e.kind in ("list", "map") and all(v is not missing for v in values):
            return _OPAQUE_VALUE
        return missing

    try:
        fold(ast)
    except _FoldError as exc:
        return [f"program instantiation failed: {exc}"]
    return []


# --------------------------------------------------------------------------- validators

_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                      r"([Zz]|[+-](\d{2}):(\d{2}))")


def _bad_timestamp(text: str) -> bool:
    import datetime

    m = _RFC3339.fullmatch(text)
    if m is None:
        return True
    try:
        datetime.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]),
                          int(m[6]) if m[6] != "60" else 59)
    except ValueError:
        return True
    return m[9] is not None and (int(m[9]) > 23 or int(m[10]) > 59)


def _bad_literal(function: str, value: Any) -> bool:
    if function == "matches":
        from compatfuzz.schema._re2 import go_error

        return isinstance(value, str) and go_error(value) is not None
    if function == "duration":
        from compatfuzz.strategies._cel_functions import parse_go_duration

        if not isinstance(value, str):
            return False
        try:
            parse_go_duration(value)
        except Exception:  # any refusal of Go's time.ParseDuration syntax
            return True
        return False
    if function == "timestamp":
        return isinstance(value, str) and _bad_timestamp(value)
    return False


_CLAUSES = {
    "d": ("decimal clause can only be used on integers", ("int", "uint")),
    "f": ("fixed-point clause can only be used on doubles", ("double", "string")),
    "e": ("scientific clause can only be used on doubles", ("double", "string")),
    "b": ("only integers and bools can be formatted as binary", ("int", "uint", "bool")),
    "x": ("only integers, byte buffers, and strings can be formatted as hex",
          ("int", "uint", "string", "bytes")),
    "o": ("octal clause can only be used on integers", ("int", "uint")),
}
_STRING_OK = ("list", "map", "int", "uint", "double", "bool", "string", "timestamp", "bytes",
              "duration", "type", "null")


def _type_name(t: T) -> str:
    return t.name if t.kind not in ("list", "map", "type") else t.kind


def _format_error(template: str, items: list[Expr], out: Checked) -> str | None:
    """cel-go ``ext/formatting.go`` ``stringFormatValidator`` (strings extension below
    version 4): a literal format string with a literal list of arguments is checked."""
    def one_of(e: Expr, kinds: tuple[str, ...]) -> bool:
        t = out.type(e)
        return t == DYN or t.kind in kinds

    def string_ok(e: Expr) -> Expr | None:
        if not one_of(e, _STRING_OK):
            return e
        for sub in (e.args if e.kind == "list" else [x for k, v, _ in e.entries
                                                     for x in (k, v)]):
            bad = string_ok(sub)
            if bad is not None:
                return bad
        return None

    i = arg = requested = 0
    while i < len(template):
        if template[i] != "%":
            i += 1
            continue
        if template[i + 1:i + 2] == "%":
            i += 2
            continue
        requested += 1
        if i + 1 >= len(template):
            return "unexpected end of string"
        if arg >= len(items):
            return f"index {arg} out of range"
        j = i + 1
        if template[j] == ".":
            j += 1
            while j < len(template) and template[j].isdigit() and template[j].isascii():
                j += 1
            if j >= len(template):
                return ("could not parse formatting clause: error while parsing precision: "
                        "could not find end of precision specifier")
            if j == i + 2:
                return ("could not parse formatting clause: error while parsing precision: "
                        "error while converting precision to integer: strconv.Atoi: parsing "
                        '"": invalid syntax')
        clause = template[j]
        item = items[arg]
        if clause == "s":
            bad = string_ok(item)
            if bad is not None:
                return ("error during formatting: string clause can only be used on strings, "
                        "bools, bytes, ints, doubles, maps, lists, types, durations, and "
                        f"timestamps, was given {_type_name(out.type(bad))}")
        elif clause.lower() == "x" or clause in _CLAUSES:
            message, kinds = _CLAUSES[clause.lower()]
            if not one_of(item, kinds):
                return (f"error during formatting: {message}, was given "
                        f"{_type_name(out.type(item))}")
        else:
            return f'could not parse formatting clause: unrecognized formatting clause "{clause}"'
        i = j + 1
        arg += 1
    if len(items) > requested:
        return (f"too many arguments supplied to string.format (expected {requested}, got "
                f"{len(items)})")
    return None


def _validate(ast: Expr, out: Checked) -> list[str]:
    """The AST validators the API server's environment adds (cel-go ``cel/validator.go``):
    duration, timestamp and regex literals must be valid (``ValidateDurationLiterals``,
    ``ValidateTimestampLiterals``, ``ValidateRegexLiterals``) and list and map literals
    homogeneous (``ValidateHomogeneousAggregateLiterals``, not inside ``format``)."""
    errors: list[str] = []
    stack: list[tuple[Expr, bool]] = [(ast, False)]
    while stack:
        e, exempt = stack.pop()
        if e.kind == "call":
            if e.function in ("matches", "duration", "timestamp") and e.args and (
                    e.args[0].kind == "lit" and _bad_literal(e.function, e.args[0].value)):
                errors.append(f"invalid {e.function} argument")
            if (e.function == "format" and e.operand is not None and e.operand.kind == "lit"
                    and isinstance(e.operand.value, str) and len(e.args) == 1
                    and e.args[0].kind == "list"
                    and "string_format" in out.overloads.get(e.id, ["string_format"])):
                problem = _format_error(e.operand.value, e.args[0].args, out)
                if problem is not None:
                    errors.append(problem)
            exempt = exempt or e.function in ("format", "cel.@block")
        elif e.kind == "list" and not exempt:
            first: T | None = None
            for i, item in enumerate(e.args):
                t = out.type(item)
                if i in e.optional and t.params:
                    t = t.params[0]
                if first is None:
                    first = t
                elif t != first:
                    errors.append(f"expected type '{fmt(first)}' but found '{fmt(t)}'")
                    break
        elif e.kind == "map" and not exempt:
            kt: T | None = None
            vt: T | None = None
            for key, value, opt in e.entries:
                k, v = out.type(key), out.type(value)
                if opt and v.params:
                    v = v.params[0]
                if kt is None or vt is None:
                    kt, vt = k, v
                    continue
                if k != kt:
                    errors.append(f"expected type '{fmt(kt)}' but found '{fmt(k)}'")
                if v != vt:
                    errors.append(f"expected type '{fmt(vt)}' but found '{fmt(v)}'")
        stack.extend((c, exempt) for c in reversed(e.children()))
    return errors


def uses_old_self(rule: str, node: Mapping[str, Any] | None = None, *,
                  resolve: Resolver | None = None, optional_old_self: bool = False) -> bool:
    """Whether ``rule`` is a transition rule, as the API server decides it: it compiles
    and its checked AST references an identifier named ``oldSelf`` (apiextensions
    ``compileRule`` reads ``UsesOldSelf`` off the reference map, where a comprehension
    variable named ``oldSelf`` counts too)."""
    checked = check(rule, node if node is not None else {"type": "object"}, resolve=resolve,
                    optional_old_self=optional_old_self)
    if checked.errors or checked.ast is None or checked.type(checked.ast) != BOOL:
        return False
    return "oldSelf" in checked.references


def compile_errors(rule: str, node: Mapping[str, Any], *,
                   resolve: Callable[[str], Mapping[str, Any]] | None = None,
                   old_self: bool = False, message_expression: bool = False) -> list[str]:
    """cel-go's error texts for ``rule`` at the schema ``node`` (empty: it compiles).

    ``node`` is a CRD ``openAPIV3Schema`` node as written (``nullable: true``) or a
    normalised compatfuzz node (``type: [T, "null"]``, ``anyOf: [node, {type: null}]``,
    ``$ref`` resolved by ``resolve``). At the root of a CRD version's schema the server
    also declares ``apiVersion``, ``kind`` and ``metadata.name``/``generateName``, as it
    does for an embedded resource: pass the root with ``"x-kubernetes-embedded-resource":
    True`` added to get that (or call :func:`check` with ``root=True``). ``old_self``: the
    rule has ``optionalOldSelf:
    true`` (``oldSelf`` is then ``optional_type(self)``; without it ``oldSelf`` is
    ``self``'s type, as the server declares it for every rule). ``message_expression``:
    check a ``messageExpression``, which must be of type string.

    The texts are the issues cel-go reports, without their location, e.g.
    ``undeclared reference to 'x' (in container '')``, ``undefined field 'foo'``,
    ``found no matching overload for '_+_' applied to '(string, int)'``; a rule that
    checks but is not a bool gives the server's ``cel expression must evaluate to a
    bool`` (``messageExpression must evaluate to a string``).

    >>> compile_errors("self.a + 1 > 0", {"type": "object", "properties": {
    ...     "a": {"type": "string"}}})
    ["found no matching overload for '_+_' applied to '(string, int)'"]
    """
    n = normal(node, resolve)
    checked = check(rule, n, resolve=resolve, optional_old_self=old_self)
    if checked.errors:
        return list(dict.fromkeys(checked.errors))
    assert checked.ast is not None
    t = checked.type(checked.ast)
    if message_expression:
        return [] if t == STRING else ["messageExpression must evaluate to a string"]
    return [] if t == BOOL else ["cel expression must evaluate to a bool"]

