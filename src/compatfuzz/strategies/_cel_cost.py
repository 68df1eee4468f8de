"""The CEL cost budget: a static estimate per rule and a runtime meter (issue 22, item 2).

Why this exists: seven nested ``.all()`` loops over constant lists hung ``sample``, ``fuzz``
and ``diff``, and four over a 50-item list reached 20 GB; the per-example deadline never
fired because the stall was inside generation. The API server bounds CEL twice:

* when a CRD is written, each rule's worst-case cost is estimated from the schema (sizes
  from ``maxItems``/``maxLength``/``maxProperties``, else what fits in a 3 MiB request),
  multiplied by how often the rule can run (the product of the enclosing lists' and maps'
  ``maxItems``/``maxProperties``), and the CRD is refused if one rule's estimate passes
  ``StaticEstimatedCostLimit`` (10,000,000) or the sum passes ``StaticEstimatedCRDCostLimit``
  (100,000,000): k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/
  validation.go (``getExpressionCost``, ``getCostErrorMessage``) and cel_validation.go
  (``extractMaxElements``);
* when an object is validated, each evaluation stops past ``PerCallLimit`` (1,000,000) and
  all rules of one object past ``RuntimeCELCostBudget`` (10,000,000):
  k8s.io/apiserver/pkg/apis/cel/config.go. The object is then rejected.

:func:`rule_cost` is a port of cel-go's checker/cost.go (``costComprehension``,
``functionCost``) over cel-python's parse tree, with the sizes of
k8s.io/apiserver/pkg/cel/common/schemas.go (``SchemaDeclType``,
``estimateMaxArrayItemsFromMinSize``, ``estimateMaxElementsFromMaxLength``). Where it
cannot tell a size it assumes the whole request (3 MiB), never more, so it refuses less
than the server rather than more; the runtime meter covers what it misses.

:class:`MeteredRunner` evaluates with cel-python's interpreter and charges one unit per
parse-tree node visited plus a tenth of the size of every string, bytes or list a
function receives or returns (cel-go's ``StringTraversalCostFactor``). Past the limit it
raises :class:`CostExceeded`, which no CEL operator absorbs (``false || error`` would):
the value is rejected, as the API server rejects the object.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

import celpy.celtypes
import lark
from celpy import InterpretedRunner
from celpy.evaluation import CELEvalError, Evaluator

__all__ = [
    "MAX_REQUEST_SIZE",
    "PER_CALL_LIMIT",
    "RUNTIME_BUDGET",
    "STATIC_CRD_LIMIT",
    "STATIC_RULE_LIMIT",
    "CostExceeded",
    "MeteredRunner",
    "cardinality_factor",
    "metered",
    "rule_cost",
]

#: k8s.io/apiserver/pkg/apis/cel/config.go
PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000
MAX_REQUEST_SIZE = 3 * 1024 * 1024
#: k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go
STATIC_RULE_LIMIT = 10_000_000
STATIC_CRD_LIMIT = 100_000_000

_TRAVERSAL = 0.1  # cel-go common.StringTraversalCostFactor
_REGEX = 0.25  # cel-go common.RegexStringLengthCostFactor
_LIST_CREATE = 10  # cel-go common.ListCreateBaseCost
_MAP_CREATE = 30  # cel-go common.MapCreateBaseCost


class CostExceeded(Exception):
    """A CEL evaluation ran past its cost budget; the value is rejected."""


# --------------------------------------------------------------------------- runtime


class _Meter(threading.local):
    left: int | None = None  # None: not metering (a bare cel-python evaluation)
    used: int = 0


_METER = _Meter()


def _charge(units: int) -> None:
    left = _METER.left
    if left is None:
        return
    left -= units
    _METER.used += units
    _METER.left = left
    if left < 0:
        raise CostExceeded(f"cost budget exceeded (more than {_METER.used - units + 1:,} "
                           "units)")


class _MeteredEvaluator(Evaluator):
    """cel-python's ``Evaluator``, charging one unit per parse-tree node it visits."""

    def visit(self, tree: lark.Tree[Any]) -> Any:
        _charge(1)
        return super().visit(tree)

    def visit_children(self, tree: lark.Tree[Any]) -> list[Any]:
        _charge(sum(1 for c in tree.children if isinstance(c, lark.Tree)))
        return super().visit_children(tree)

    def sub_evaluator(self, ast: lark.Tree[Any]) -> Evaluator:
        return _MeteredEvaluator(ast, activation=self.activation)

    def member_dot_arg(self, tree: lark.Tree[Any]) -> Any:
        """``all`` and ``exists`` as cel-go runs them: stop at the first element that
        decides (``false`` for ``all``, ``true`` for ``exists``), keep the first error.

        cel-python 0.5 folds them with ``logical_and``/``logical_or``, which meet two
        errors by raising a ``TypeError`` quoting both: the next element's error then
        quotes that one, so the message doubles per element. A 100-item list whose items
        all lack a field the rule reads (Karpenter's ``requirements``) grew past 24 GB.
        cel-go's comprehension loops while the accumulator is not strictly false
        (cel-go ``parser/macro.go``, ``MakeAll``: ``@not_strictly_false``).
        """
        method = tree.children[1]
        name = getattr(method, "value", None)
        if name not in ("all", "exists") or len(tree.children) < 3:
            return super().member_dot_arg(tree)
        members = self.visit(tree.children[0])
        if isinstance(members, CELEvalError):
            return members
        holds = self.build_ss_macro_eval(tree)
        decided = name == "exists"  # the element value that ends the loop
        error: Any = None
        for member in members:
            value = holds(member)
            if isinstance(value, celpy.celtypes.BoolType):
                if bool(value) is decided:
                    return celpy.celtypes.BoolType(decided)
            elif error is None:
                error = value if isinstance(value, CELEvalError) else CELEvalError(
                    "no such overload", TypeError, (repr(value)[:200],))
        return error if error is not None else celpy.celtypes.BoolType(not decided)


class MeteredRunner(InterpretedRunner):
    """``InterpretedRunner`` whose evaluation is metered (see :func:`metered`)."""

    def evaluate(self, context: Any) -> Any:
        return _MeteredEvaluator(ast=self.ast, activation=self.new_activation()).evaluate(
            context)


def metered(runner: Any, context: Any, limit: int) -> tuple[Any, int]:
    """Evaluate ``runner`` (a :class:`MeteredRunner`) with at most ``limit`` units;
    return ``(value, units used)``. Raises :class:`CostExceeded` past the limit."""
    outer = (_METER.left, _METER.used)
    _METER.left, _METER.used = limit, 0
    try:
        value = runner.evaluate(context)
        return value, _METER.used
    finally:
        _METER.left, _METER.used = outer


def _sized(value: Any) -> int:
    if isinstance(value, str | bytes | list | tuple | dict):
        return math.ceil(len(value) * _TRAVERSAL)
    return 0


def charging(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``function``, charging a tenth of the sizes it reads and builds; ``replace`` is
    charged for its result's size *before* it is built, so it cannot allocate past the
    budget (cel-go interpreter/runtimecost.go charges the same traversal)."""
    def call(*args: Any) -> Any:
        _charge(1 + sum(_sized(a) for a in args))
        if name == "replace" and len(args) >= 3 and all(isinstance(a, str) for a in args[:3]):
            target, old, new = args[0], args[1], args[2]
            count = len(target) + 1 if not old else len(target) // len(old)
            if len(args) > 3 and isinstance(args[3], int) and int(args[3]) >= 0:
                count = min(count, int(args[3]))  # plain ints: IntType clamps to int64
            _charge(math.ceil((len(target) + count * len(new)) * _TRAVERSAL))
            return function(*args)
        result = function(*args)
        _charge(_sized(result))
        return result

    call.__name__ = getattr(function, "__name__", name)
    call.__doc__ = getattr(function, "__doc__", None)
    return call


# --------------------------------------------------------------------------- schema sizes

#: apiserver/pkg/cel/types.go: the smallest JSON of each type (``MinSerializedSize``).
_MIN_SIZE = {"integer": 1, "number": 1, "boolean": 4, "string": 2}
#: apiserver/pkg/cel: MaxDurationSizeJSON, JSONDateSize, MaxDatetimeSizeJSON
_FORMAT_LENGTH = {"duration": 32, "date": 12, "date-time": 32}


class _Decl:
    """What CEL knows about a schema node: its kind and its largest size."""

    __slots__ = ("kind", "max", "node", "resolve")

    def __init__(self, node: Mapping[str, Any], resolve: Any) -> None:
        self.node = node
        self.resolve = resolve
        self.kind = _kind(node)
        self.max = _max_elements(node, resolve)

    def field(self, name: str) -> _Decl | None:
        props = self.node.get("properties")
        if isinstance(props, Mapping):
            for key, sub in props.items():
                if isinstance(sub, Mapping) and (key == name or _escaped(key) == name):
                    return _decl(sub, self.resolve)
        extra = self.node.get("additionalProperties")
        if isinstance(extra, Mapping):
            return _decl(extra, self.resolve)
        return None

    def element(self) -> _Decl | None:
        sub = self.node.get("items") if self.kind == "list" else (
            self.node.get("additionalProperties") if self.kind == "map" else None)
        return _decl(sub, self.resolve) if isinstance(sub, Mapping) else None


def _escaped(name: str) -> str:
    from compatfuzz.strategies._cel import escape_property

    return escape_property(name)


def _deref(node: Mapping[str, Any], resolve: Any) -> Mapping[str, Any]:
    for _ in range(32):
        ref = node.get("$ref")
        if not isinstance(ref, str) or resolve is None:
            break
        try:
            target = resolve(ref)
        except Exception:  # an unresolvable $ref is reported elsewhere
            break
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _decl(node: Mapping[str, Any], resolve: Any) -> _Decl:
    return _Decl(_deref(node, resolve), resolve)


def _kind(node: Mapping[str, Any]) -> str:
    if node.get("x-kubernetes-int-or-string") is True:
        return "string"
    kind = node.get("type")
    if kind == "array":
        return "list"
    if kind == "object":
        return "map" if isinstance(node.get("additionalProperties"), Mapping) else "object"
    if kind == "string":
        return "bytes" if node.get("format") == "byte" else "string"
    return "scalar"


def _number(node: Mapping[str, Any], key: str) -> int | None:
    value = node.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return max(0, int(value))
    return None


def min_size(node: Mapping[str, Any], resolve: Any, depth: int = 0) -> int:
    """``MinSerializedSize``: the fewest JSON bytes a value of ``node`` can take."""
    node = _deref(node, resolve)
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string") is True:
        return 1
    if isinstance(kind, str) and kind in _MIN_SIZE:
        return _MIN_SIZE[kind]
    if kind != "object" or depth > 32:
        return 2
    size = 2
    props = node.get("properties")
    required = node.get("required")
    if isinstance(props, Mapping) and isinstance(required, list):
        for name in required:
            sub = props.get(name) if isinstance(name, str) else None
            if isinstance(sub, Mapping) and "default" not in sub:
                size += len(name) + min_size(sub, resolve, depth + 1) + 4
    return size


def _max_elements(node: Mapping[str, Any], resolve: Any) -> int:
    kind = _kind(node)
    request = MAX_REQUEST_SIZE - 2
    if kind == "list":
        items = node.get("items")
        given = _number(node, "maxItems")
        if given is not None:
            return given
        return request // (min_size(items, resolve) + 1 if isinstance(items, Mapping) else 3)
    if kind == "map":
        given = _number(node, "maxProperties")
        if given is not None:
            return given
        extra = node.get("additionalProperties")
        return request // (min_size(extra, resolve) + 6 if isinstance(extra, Mapping) else 8)
    if kind in ("string", "bytes"):
        given = _number(node, "maxLength")
        if given is not None:
            return given * (1 if kind == "bytes" else 4)
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in _FORMAT_LENGTH:
            return _FORMAT_LENGTH[fmt]
        enum = node.get("enum")
        if isinstance(enum, list) and enum and node.get("x-kubernetes-int-or-string") is not True:
            return max((len(e) for e in enum if isinstance(e, str)), default=0)
        return request
    return 1


def cardinality_factor(node: Mapping[str, Any], resolve: Any) -> int | None:
    """How many children of ``node`` one value holds at most (``extractMaxElements``):
    ``maxItems``/``maxProperties`` for lists and maps, 1 for objects and scalars, ``None``
    (unbounded) for a list or map without a maximum."""
    node = _deref(node, resolve)
    kind = node.get("type")
    if kind == "array":
        return _number(node, "maxItems")
    if kind == "object" and "additionalProperties" in node and not isinstance(
            node.get("additionalProperties"), bool):
        return _number(node, "maxProperties")
    return 1


def unbounded_cardinality(node: Mapping[str, Any], resolve: Any) -> int:
    """apiserver/pkg/cel/types.go ``MaxCardinality``: how often a value this small fits in
    one request, for a rule under a list or map without a maximum."""
    return MAX_REQUEST_SIZE // (min_size(node, resolve) + 1)


# --------------------------------------------------------------------------- estimate


class _Info:
    """Static facts about a sub-expression: its worst cost, its largest size (``None``:
    not a container) and, when it comes from the schema, its declaration."""

    __slots__ = ("cost", "decl", "elem", "size")

    def __init__(self, cost: int, size: int | None = None, decl: _Decl | None = None,
                 elem: _Info | None = None) -> None:
        self.cost = cost
        self.size = size
        self.decl = decl
        self.elem = elem


def _traverse(size: int | None) -> int:
    return math.ceil((size if size is not None else MAX_REQUEST_SIZE) * _TRAVERSAL)


def _size(info: _Info) -> int:
    if info.size is not None:
        return info.size
    if info.decl is not None and info.decl.kind not in {"scalar", "object"}:
        return info.decl.max
    return 1 if info.decl is not None else MAX_REQUEST_SIZE


_STRING_RESULT = {"lowerAscii", "upperAscii", "trim", "substring", "charAt", "join"}
#: Functions whose cost grows with the string or list they read (cel-go checker/cost.go
#: ``functionCost``; apiserver/pkg/cel/library/cost.go). Conversions such as ``int(s)``
#: are O(1) there, as is every function not named here.
_TRAVERSING = {"lowerAscii", "upperAscii", "trim", "substring",
               "charAt", "indexOf", "lastIndexOf", "split", "join", "isSorted", "sum",
               "max", "quantity", "isQuantity", "url", "isURL", "ip", "isIP", "cidr",
               "isCIDR", "bytes"}


class _Estimator:
    def __init__(self, decl: _Decl) -> None:
        self.scope: dict[str, list[_Info]] = {"self": [_Info(1, None, decl)]}

    def cost(self, tree: Any) -> _Info:
        if not isinstance(tree, lark.Tree):
            return _Info(0)
        data, kids = tree.data, tree.children
        if data in ("primary", "paren_expr", "expr", "conditionalor", "conditionaland",
                    "relation", "addition", "multiplication", "unary",
                    "member") and len(kids) == 1:
            return self.cost(kids[0])
        if data == "literal":
            text = str(kids[0]) if kids else ""
            quoted = text.lstrip("bBrR")
            size = max(0, len(quoted) - 2) if quoted[:1] in ("'", '"') else None
            return _Info(0, size)
        if data == "ident":
            name = str(kids[0])
            stack = self.scope.get(name)
            if stack:
                bound = stack[-1]
                return _Info(1, bound.size, bound.decl, bound.elem)
            return _Info(1)
        if data == "expr":  # c ? a : b
            c, a, b = (self.cost(k) for k in kids)
            return _Info(c.cost + max(a.cost, b.cost), _union(a.size, b.size))
        if data in ("conditionalor", "conditionaland"):
            a, b = self.cost(kids[0]), self.cost(kids[1])
            return _Info(a.cost + b.cost)
        if data == "relation":
            op = kids[0]
            a, b = self.cost(op.children[0]), self.cost(kids[1])
            base = a.cost + b.cost
            if op.data == "relation_in":  # O(n) for a list, O(1) for a map (cost.go)
                is_list = b.elem is not None or (b.decl is not None and b.decl.kind == "list")
                return _Info(base + (_size(b) if is_list else 1))
            if _is_sized(a) and _is_sized(b):
                return _Info(base + max(1, _traverse(min(_size(a), _size(b)))))
            return _Info(base + 1)
        if data in ("addition", "multiplication"):
            a, b = self.cost(kids[0].children[0]), self.cost(kids[1])
            if _is_sized(a) and _is_sized(b) and kids[0].data == "addition_add":
                size = _size(a) + _size(b)
                is_list = a.elem is not None or (a.decl is not None and a.decl.kind == "list")
                extra = 1 if is_list else _traverse(size)
                return _Info(a.cost + b.cost + extra, size, None, a.elem or b.elem)
            return _Info(a.cost + b.cost + 1)
        if data == "unary":
            return _Info(self.cost(kids[1]).cost + 1)
        if data == "member_dot":
            a = self.cost(kids[0])
            field = a.decl.field(str(kids[1])) if a.decl is not None else None
            return _Info(a.cost + 1, None, field)
        if data == "member_index":
            a, b = self.cost(kids[0]), self.cost(kids[1])
            decl = a.decl.element() if a.decl is not None else None
            elem = a.elem
            return _Info(a.cost + b.cost + 1, elem.size if elem else None,
                         decl or (elem.decl if elem else None))
        if data == "list_lit":
            items = [self.cost(k) for k in (kids[0].children if kids and isinstance(
                kids[0], lark.Tree) else [])]
            elem = _Info(0, max((i.size or 0 for i in items), default=0) or None,
                         items[0].decl if items else None)
            return _Info(_LIST_CREATE + sum(i.cost for i in items), len(items), None, elem)
        if data == "map_lit":
            items = [self.cost(k) for k in (kids[0].children if kids and isinstance(
                kids[0], lark.Tree) else [])]
            return _Info(_MAP_CREATE + sum(i.cost for i in items), len(items) // 2)
        if data == "member_dot_arg":
            return self.method(kids)
        if data in ("ident_arg", "dot_ident_arg"):
            name = str(kids[0])
            args = [self.cost(k) for k in (kids[1].children if len(kids) > 1 and isinstance(
                kids[1], lark.Tree) else [])]
            if name == "has":
                return _Info(sum(a.cost for a in args))
            return self.call(name, None, args)
        return _Info(sum(self.cost(k).cost for k in kids if isinstance(k, lark.Tree)) + 1)

    def method(self, kids: list[Any]) -> _Info:
        from compatfuzz.strategies._cel_functions import LIST_MIN

        target = self.cost(kids[0])
        name = str(kids[1])
        exprs = kids[2].children if len(kids) > 2 and isinstance(kids[2], lark.Tree) else []
        if name in ("all", "exists", "exists_one", "map", "filter") and len(exprs) == 2:
            return self.comprehension(name, target, exprs)
        args = [self.cost(k) for k in exprs]
        return self.call("min" if name == LIST_MIN else name, target, args)

    def comprehension(self, name: str, target: _Info, exprs: list[Any]) -> _Info:
        """cel-go ``costComprehension`` over the macro's expansion (parser/macro.go)."""
        variable = _variable(exprs[0])
        count = _size(target)
        if target.elem is not None:
            bound = target.elem
        elif target.decl is not None and target.decl.kind in ("map", "object"):
            # a key: Kubernetes declares map keys as a plain StringType, whose size it
            # estimates as 0 (apiserver/pkg/cel/types.go, NewMapType(StringType, ...))
            bound = _Info(1, 0)
        else:
            decl = target.decl.element() if target.decl is not None else None
            bound = _Info(1, None, decl)
        self.scope.setdefault(variable, []).append(bound)
        try:
            body = self.cost(exprs[1]).cost
        finally:
            self.scope[variable].pop()
        # per iteration: loop condition + step; fixed: accumulator init + result
        per, fixed = {"all": (3, 1), "exists": (4, 1), "exists_one": (2, 2),
                      "map": (12, 11), "filter": (13, 11)}[name]
        elem = bound if name == "filter" else None
        size = count if name in ("map", "filter") else None
        return _Info(target.cost + fixed + count * (per + body), size, None, elem)

    def call(self, name: str, target: _Info | None, args: list[_Info]) -> _Info:
        """cel-go ``functionCost`` and Kubernetes' library costs (apiserver/pkg/cel/library/
        cost.go), for the functions whose cost grows with their input."""
        base = sum(a.cost for a in args) + (target.cost if target is not None else 0)
        subject = target if target is not None else (args[0] if args else None)
        rest = args if target is not None else args[1:]
        if name == "size" or subject is None:
            return _Info(base + 1)
        n = _size(subject)
        if name in ("startsWith", "endsWith") and rest:  # the prefix is traversed
            return _Info(base + _traverse(_size(rest[0])))
        if name == "contains" and rest:
            return _Info(base + _traverse(n) * _traverse(_size(rest[0])))
        if name in ("matches", "find", "findAll") and rest:
            regex = math.ceil(_size(rest[0]) * _REGEX)
            return _Info(base + math.ceil((n + 1) * _TRAVERSAL) * regex, n,
                         None, _Info(0, n) if name == "findAll" else None)
        if name == "replace" and len(rest) >= 2:
            old, new = max(1, _size(rest[0])), _size(rest[1])
            size = n + (n // old + 1) * new
            return _Info(base + _traverse(n) * 2, size)
        if name in ("min", "max", "sum", "isSorted", "indexOf", "lastIndexOf") and (
                subject.elem is not None or (subject.decl is not None
                                             and subject.decl.kind == "list")):
            return _Info(base + n)
        if name == "split":
            return _Info(base + _traverse(n), n, None, _Info(0, n))
        if name in _TRAVERSING:
            return _Info(base + _traverse(n), n if name in _STRING_RESULT else None)
        return _Info(base + 1)


def _is_sized(info: _Info) -> bool:
    if info.size is not None or info.elem is not None:
        return True
    return info.decl is not None and info.decl.kind in ("list", "map", "string", "bytes")


def _union(a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return a if b is None else b
    return max(a, b)


def _variable(tree: Any) -> str:
    for node in tree.iter_subtrees() if isinstance(tree, lark.Tree) else ():
        if node.data == "ident":
            return str(node.children[0])
    return ""


def rule_cost(ast: lark.Tree[Any], node: Mapping[str, Any], *,
              resolve: Any = None) -> int:
    """The worst-case cost of one evaluation of a rule (its parse tree from cel-python)
    with ``self`` a value of the schema ``node``, in cel-go cost units."""
    return _Estimator(_decl(node, resolve)).cost(ast).cost
