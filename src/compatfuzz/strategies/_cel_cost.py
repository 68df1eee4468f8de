"""The CEL cost budget: a static estimate per rule and a runtime meter.

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

:func:`rule_cost` gives the server's ``MaxCost`` for a rule, the same integer (an
approximation was wrong in both directions). It is a port of cel-go v0.29.2
``checker/cost.go`` (the version k8s.io/apiserver v0.37.2 pins: ``coster``, its
comprehension, bind, call and size tracking, ``functionCost``) run over the typed AST of
``_cel_check``, with the estimators of ``_cel_cost_library`` (Kubernetes'
``library/cost.go`` ``EstimateCallCost``, cel-go's extension estimators, apiextensions'
path-based ``sizeEstimator``) and ``PresenceTestHasCost(false)`` as the API server's base
environment sets it. ``_cel_cost_crd`` multiplies by the cardinality and applies the
per-rule and per-CRD limits. ``conformance/test_celcost_conformance.py`` holds the
estimate to the server's, compiled from apiextensions-apiserver v0.37.2.

:class:`MeteredRunner` evaluates with cel-python's interpreter and charges what cel-go's
runtime cost tracker charges (interpreter/runtimecost.go): 1 per identifier, selection and
index, the list and map creation costs, each macro's loop overhead, and per call
:func:`call_cost` (Kubernetes' ``CallCost``, cel-go's trackers and defaults). It cannot be
exact: cel-go evaluates a planned, optimised program and cel-python its parse tree (a
constant the server folds is charged here), and ``replace`` is charged for its result
before building it (see :func:`charging`). Past the limit it raises :class:`CostExceeded`,
which no CEL operator absorbs (``false || error`` would): the value is rejected, as the
API server rejects the object.
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

from compatfuzz.strategies._cel_check import Checked, check
from compatfuzz.strategies._cel_cost_library import (
    LIST_CREATE,
    MAP_CREATE,
    REGEX,
    TRAVERSAL,
    U64,
    UNKNOWN,
    Est,
    Library,
    Node,
    add,
    estimate_call,
    factor,
    mul,
    overload_estimate,
    union,
)
from compatfuzz.strategies._cel_parse import ACCU, Expr
from compatfuzz.strategies._cel_types import (
    BOOL,
    MAX_REQUEST_SIZE,
    STRING,
    DeclT,
    T,
)

__all__ = [
    "MAX_REQUEST_SIZE",
    "PER_CALL_LIMIT",
    "RUNTIME_BUDGET",
    "STATIC_CRD_LIMIT",
    "STATIC_RULE_LIMIT",
    "CostExceeded",
    "MeteredRunner",
    "actual_size",
    "call_cost",
    "charging",
    "estimate",
    "message_cost",
    "metered",
    "rule_cost",
]

#: k8s.io/apiserver/pkg/apis/cel/config.go
PER_CALL_LIMIT = 1_000_000
RUNTIME_BUDGET = 10_000_000
#: k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go
STATIC_RULE_LIMIT = 10_000_000
STATIC_CRD_LIMIT = 100_000_000

_TRAVERSAL = TRAVERSAL


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


#: What cel-go's runtime cost tracker charges per node kind (interpreter/runtimecost.go
#: ``Observe``): an identifier or a field selection 1 (``SelectAndIdentCost``), an index 1
#: (a qualifier), a list or map literal ``ListCreateBaseCost``/``MapCreateBaseCost``;
#: constants, ``&&``, ``||`` and ``?:`` nothing. Calls are charged by :func:`charging`.
_NODE_COST = {"ident": 1, "member_dot": 1, "member_index": 1, "list_lit": 10, "map_lit": 30}
#: cel-go's per-element loop overhead of each macro's expansion (parser/macro.go): the
#: condition and step calls and accumulator reads; and its fixed part (the accumulator's
#: initial value and the result).
_LOOP = {"all": (3, 1), "exists": (4, 1), "exists_one": (2, 3), "map": (12, 11),
         "filter": (1, 11)}


class _MeteredEvaluator(Evaluator):
    """cel-python's ``Evaluator``, charging what cel-go's runtime cost tracker charges
    for each node (:data:`_NODE_COST`) and each macro iteration (:data:`_LOOP`)."""

    def _visit_tree(self, tree: lark.Tree[Any]) -> Any:
        # Charged here, not in ``visit``: lark's ``visit_children`` (which cel-python's
        # operators use for their operands) calls ``_visit_tree`` directly, so a charge in
        # ``visit`` missed every identifier below an operator and a loop body ran 3 to 5
        # times longer than the server lets it before the limit stopped it.
        # cel-python's ``primary`` reads an identifier child without visiting it.
        cost = _NODE_COST.get(tree.data)
        if cost is None and tree.data == "primary" and tree.children and getattr(
                tree.children[0], "data", None) == "ident":
            cost = 1
        if cost:
            _charge(cost)
        return super()._visit_tree(tree)

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
        if name in ("map", "filter", "exists_one") and len(tree.children) >= 3:
            per, fixed = _LOOP[name]
            result = super().member_dot_arg(tree)
            members = self.visit(tree.children[0])
            count = len(members) if isinstance(members, list | dict) else 0
            kept = len(result) if name == "filter" and isinstance(result, list) else 0
            _charge(fixed + per * count + 12 * kept)
            return result
        if name not in ("all", "exists") or len(tree.children) < 3:
            return super().member_dot_arg(tree)
        members = self.visit(tree.children[0])
        if isinstance(members, CELEvalError):
            return members
        holds = self.build_ss_macro_eval(tree)
        decided = name == "exists"  # the element value that ends the loop
        error: Any = None
        per, fixed = _LOOP[str(name)]
        _charge(fixed)
        for member in members:
            _charge(per)
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


def actual_size(value: Any) -> int:
    """cel-go ``actualSize``: the size of a string (code points), bytes, list or map; 1
    for anything else."""
    if isinstance(value, str | bytes | list | tuple | dict):
        return len(value)
    return 1


def _traversal(value: Any) -> int:
    """apiserver library ``traversalCost`` (truncating, as the Go conversion does)."""
    if isinstance(value, str | bytes):
        return int(len(value) * _TRAVERSAL)
    if isinstance(value, list | tuple):
        return sum(_traversal(v) for v in value)
    if isinstance(value, dict):
        return sum(_traversal(k) + _traversal(v) for k, v in value.items())
    return 1


def _ceil(x: float) -> int:
    return math.ceil(x)


def call_cost(name: str, args: tuple[Any, ...], result: Any) -> int:
    """The runtime cost of one call: k8s.io/apiserver ``library.CostEstimator.CallCost``
    for the Kubernetes libraries, else cel-go's ``CostTracker.costCall`` defaults
    (interpreter/runtimecost.go). ``args`` has the receiver first, as in cel-go."""
    n = len(args)
    size = actual_size
    if name in ("isSorted", "sum", "max", "min", "min()@lists", "indexOf", "lastIndexOf",
                "includes"):
        return _traversal(args[0]) if n else 0
    if name in ("url", "lowerAscii", "upperAscii", "substring", "trim") and n:
        return _ceil(size(args[0]) * _TRAVERSAL)
    if name in ("replace", "split") and n:
        return _ceil(size(args[0]) * 2 * _TRAVERSAL)
    if name == "join" and n:
        return _ceil(size(result) * 2 * _TRAVERSAL)
    if name in ("find", "findAll") and n >= 2:
        return _ceil((1 + size(args[0])) * _TRAVERSAL) * _ceil(size(args[1]) * REGEX)
    if name in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver",
                "isSemver") and n:
        return _ceil(size(args[0]) * _TRAVERSAL)
    if name == "ip" and n:
        return 1 if not isinstance(args[0], str) else _ceil(size(args[0]) * _TRAVERSAL)
    if name in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "sign",
                "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan",
                "isLessThan", "compareTo", "add", "sub", "getScheme", "getHostname",
                "getHost", "getPort", "getEscapedPath", "getQuery"):
        return 1
    if name in ("containsIP", "containsCIDR") and n >= 2:
        cidr = size(args[0])
        cost = _ceil((cidr + cidr) * _TRAVERSAL)
        if name == "containsCIDR":
            cost += _ceil(cidr * _TRAVERSAL) + 1
        if isinstance(args[1], str):
            cost += _ceil(size(args[1]) * _TRAVERSAL)
        return cost
    if name in ("startsWith", "endsWith") and n >= 2:
        return _ceil(size(args[1]) * _TRAVERSAL)
    if name in ("bytes", "string") and n and isinstance(args[0], str | bytes):
        return _ceil(size(args[0]) * _TRAVERSAL)
    if name == "_in_" and n >= 2:
        return size(args[1]) if isinstance(args[1], list | tuple) else 1
    if (name in ("_==_", "_!=_") and n >= 2) or (name in ("_<_", "_<=_", "_>_", "_>=_") and (
            n >= 2 and isinstance(args[0], str | bytes))):
        return _ceil(min(size(args[0]), size(args[1])) * _TRAVERSAL)
    if name == "_+_" and n >= 2 and isinstance(args[0], str | bytes):
        return _ceil((size(args[0]) + size(args[1])) * _TRAVERSAL)
    if name == "matches" and n >= 2:
        return _ceil((1 + size(args[0])) * _TRAVERSAL) * _ceil(size(args[1]) * REGEX)
    if name in ("contains", "intersects", "equivalent") and n == 3 and not isinstance(
            args[0], str):  # sets.contains(a, b): the receiver is the ``sets`` namespace
        f = 2.0 if name == "equivalent" else 1.0  # cel-go ext/sets.go trackSetsCost
        return 1 + int(float(size(args[1]) * size(args[2])) * f)
    if name == "contains" and n >= 2 and isinstance(args[0], str):
        return _ceil(size(args[0]) * _TRAVERSAL) * _ceil(size(args[1]) * _TRAVERSAL)
    return 1


def charging(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``function``, charging its runtime cost (:func:`call_cost`) after it returns.

    One deliberate difference: ``replace`` is charged for its result's size *before* it
    is built (cel-go charges only the traversal), so a rule such as
    ``s.replace('', s)`` cannot allocate gigabytes in compatfuzz's process before the
    meter notices; on the API server the per-call limit would stop it soon after."""
    def call(*args: Any) -> Any:
        if name == "replace" and len(args) >= 3 and all(isinstance(a, str) for a in args[:3]):
            target, old, new = args[0], args[1], args[2]
            count = len(target) + 1 if not old else len(target) // len(old)
            if len(args) > 3 and isinstance(args[3], int) and int(args[3]) >= 0:
                count = min(count, int(args[3]))  # plain ints: IntType clamps to int64
            _charge(math.ceil((len(target) + count * len(new)) * _TRAVERSAL))
        result = function(*args)
        _charge(call_cost(name, args, result))
        return result

    call.__name__ = getattr(function, "__name__", name)
    call.__doc__ = getattr(function, "__doc__", None)
    return call


# --------------------------------------------------------------------------- estimate


class _Local:
    __slots__ = ("entry", "path", "size")

    def __init__(self, path: list[str] | None, size: Est | None,
                 entry: _Entry | None) -> None:
        self.path = path
        self.size = size
        self.entry = entry


class _Entry:
    """cel-go ``entrySizeEstimate``."""

    __slots__ = ("container", "key", "val")

    def __init__(self, container: str, key: Est, val: Est) -> None:
        self.container = container
        self.key = key
        self.val = val

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, union(self.key, other.key), union(self.val, other.val))


_SCALAR = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})
_COMPARE = frozenset({
    "less_string", "greater_string", "less_equals_string", "greater_equals_string",
    "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes", "equals",
    "not_equals"})


def _is_scalar(t: T) -> bool:
    if t.kind in _SCALAR:
        return True
    return t.kind == "opaque" and t.name == "optional_type" and _is_scalar(t.params[0])


def _expr_size(e: Expr) -> Est | None:
    """cel-go ``computeExprSize``."""
    if e.kind == "lit":
        v = e.value
        if isinstance(v, str):
            return (len(v), len(v))
        if isinstance(v, bytes):
            return (len(v), len(v))
        return (1, 1)
    if e.kind == "list":
        return (len(e.args), len(e.args))
    if e.kind == "map":
        return (len(e.entries), len(e.entries))
    return None


class _Coster:
    """cel-go v0.29.2 ``checker/cost.go`` ``coster``, with ``PresenceTestHasCost(false)``
    (k8s.io/apiserver ``environment/base.go``)."""

    def __init__(self, checked: Checked) -> None:
        self.checked = checked
        self.lib = Library(checked.root)
        self.paths: dict[int, list[str]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Est] = {}
        self.entries: dict[int, _Entry] = {}

    # -- helpers
    def type(self, e: Expr) -> T:
        return self.checked.type(e)

    def peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, path: list[str] | None, size: Est | None,
             entry: _Entry | None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def get_path(self, e: Expr) -> list[str] | None:
        if e.kind == "ident":
            v = self.peek(str(e.value))
            if v is not None:
                return list(v.path) if v.path is not None else None
        p = self.paths.get(e.id)
        return list(p) if p is not None else None

    def node(self, e: Expr) -> Node:
        path = self.get_path(e)
        if path and path[0] in (ACCU, "__result__"):
            path = None
        return Node(path, self.type(e), e, self.compute_size(e))

    def compute_size(self, e: Expr) -> Est | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        size = _expr_size(e)
        if size is not None:
            return size
        est = self.lib.estimate_size(Node(self.get_path(e), self.type(e), e, None))
        if est is not None:
            self.sizes[e.id] = est
            return est
        if _is_scalar(self.type(e)):
            return (1, 1)
        if e.kind == "ident":
            v = self.peek(str(e.value))
            if v is not None and v.size is not None:
                return v.size
        return None

    def size_or_unknown(self, e: Expr | Node) -> Est:
        if isinstance(e, Node):
            return e.size if e.size is not None else UNKNOWN
        size = self.compute_size(e)
        return size if size is not None else UNKNOWN

    def set_size(self, e: Expr, size: Est | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def compute_entry(self, e: Expr) -> _Entry | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == "ident":
            v = self.peek(str(e.value))
            if v is not None and v.entry is not None:
                return v.entry
        return None

    def set_entry(self, e: Expr, entry: _Entry | None) -> None:
        if entry is not None:
            self.entries[e.id] = entry

    # -- walk
    def cost(self, e: Expr | None) -> Est:
        if e is None:
            return (0, 0)
        kind = e.kind
        if kind == "lit":
            return (0, 0)
        if kind == "ident":
            v = self.peek(str(e.value))
            if v is None:
                self.paths[e.id] = [str(e.value)]
            elif v.path is not None:
                self.paths[e.id] = list(v.path)
            return (1, 1)
        if kind == "select":
            assert e.operand is not None
            if e.test_only:
                return self.cost(e.operand)  # presence tests are free (PresenceTestHasCost)
            operand = self.cost(e.operand)
            if self.type(e.operand).kind in ("map", "struct", "param"):
                operand = add(operand, (1, 1))
            self.paths[e.id] = [*(self.get_path(e.operand) or []), str(e.value)]
            return operand
        if kind == "call":
            return self.call(e)
        total: Est = (0, 0)
        if kind == "list":
            item: Est = (U64, 0) if e.args else (0, 0)
            for a in e.args:
                total = add(total, self.cost(a))
                item = union(item, self.size_or_unknown(a))
            self.set_entry(e, _Entry("list", (1, 1), item))
            return add(total, (LIST_CREATE, LIST_CREATE))
        if kind == "map":
            ks: Est = (U64, 0) if e.entries else (0, 0)
            vs: Est = (U64, 0) if e.entries else (0, 0)
            for key, value, _ in e.entries:
                total = add(total, self.cost(key))
                total = add(total, self.cost(value))
                ks = union(ks, self.size_or_unknown(key))
                vs = union(vs, self.size_or_unknown(value))
            self.set_entry(e, _Entry("map", ks, vs))
            return add(total, (MAP_CREATE, MAP_CREATE))
        if kind == "comp":
            return self.bind(e) if self.is_bind(e) else self.comprehension(e)
        return (0, 0)

    def is_bind(self, e: Expr) -> bool:
        r, c = e.iter_range, e.loop_cond
        return (r is not None and r.kind == "list" and not r.args and c is not None
                and c.kind == "lit" and c.value is False and e.accu_var != "__result__")

    def bind(self, e: Expr) -> Est:
        assert e.accu_init is not None and e.result is not None
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push_local(e.accu_var, e.accu_init)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.set_size(e, self.compute_size(e.result))
        self.set_entry(e, self.compute_entry(e.result))
        return total

    def push_local(self, name: str, e: Expr) -> None:
        self.push(name, self.get_path(e), self.compute_size(e), self.compute_entry(e))

    def push_iter(self, name: str, rng: Expr, which: str) -> None:
        entry = self.compute_entry(rng)
        container = entry.container if entry is not None else self.type(rng).kind
        path = self.get_path(rng) or []
        if which == "single":
            size = entry.key if entry is not None else None
            sub = "@keys"
            if container == "list":
                size = entry.val if entry is not None else None
                sub = "@items"
        elif which == "key":
            size = entry.key if entry is not None else None
            sub = "@indices" if container == "list" else "@keys"
        else:
            size = entry.val if entry is not None else None
            sub = "@items" if container == "list" else "@values"
        self.push(name, [*path, sub], size, None)

    def comprehension(self, e: Expr) -> Est:
        assert e.iter_range is not None and e.accu_init is not None
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push_local(e.accu_var, e.accu_init)
        if e.iter_var2:
            self.push_iter(e.iter_var, e.iter_range, "key")
            self.push_iter(e.iter_var2, e.iter_range, "value")
        else:
            self.push_iter(e.iter_var, e.iter_range, "single")
        loop = self.cost(e.loop_cond)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = add(total, mul(count, add(step, loop)))
        init = e.accu_init
        if init.kind == "lit":
            self.set_size(e, self.compute_size(init))
        elif init.kind in ("list", "map"):
            self.set_size(e, count)
            assert e.loop_step is not None
            self.set_entry(e, self.compute_entry(e.loop_step))
        return total

    def call(self, e: Expr) -> Est:
        if e.function == "dyn" and e.operand is None and e.args:
            arg = e.args[0]
            c = self.cost(arg)
            self.set_size(e, self.compute_size(arg))
            self.set_entry(e, self.compute_entry(arg))
            return add((1, 1), c)
        arg_costs = []
        arg_nodes = []
        for a in e.args:
            arg_costs.append(self.cost(a))
            arg_nodes.append(self.node(a))
        ids = self.checked.overloads.get(e.id, [])
        if not ids:
            return (0, 0)
        total: Est = (0, 0)
        target: Node | None = None
        if e.operand is not None:
            total = add(total, self.cost(e.operand))
            target = self.node(e.operand)
        fn: Est = (U64, 0)
        result: Est | None = None
        for oid in ids:
            c, size = self.function_cost(e, oid, target, arg_nodes, arg_costs)
            fn = union(fn, c)
            if size is not None:
                result = size if result is None else union(result, size)
            if oid in ("index_list", "index_map") and e.args:
                entry = self.compute_entry(e.args[0])
                result = entry.val if entry is not None else None
                self.paths[e.id] = [*(self.get_path(e.args[0]) or []),
                                    "@items" if oid == "index_list" else "@values"]
            if result is None:
                result = self.compute_size(e)
        self.set_size(e, result)
        return add(total, fn)

    def function_cost(self, e: Expr, oid: str, target: Node | None, args: list[Node],
                      costs: list[Est]) -> tuple[Est, Est | None]:
        arg_sum: Est = (0, 0)
        for c in costs:
            arg_sum = add(arg_sum, c)
        est = overload_estimate(self.lib, oid, target, args)
        if est is None:
            est = estimate_call(self.lib, e.function, oid, target, args)
        if est is not None:
            return add(est[0], arg_sum), est[1]
        n = len(args)
        if oid == "string_format" and target is not None:
            return add(factor(self.size_or_unknown(target), TRAVERSAL), arg_sum), None
        if oid in ("string_to_bytes", "bytes_to_string", "strings_quote") and n == 1:
            sz = self.size_or_unknown(args[0])
            wrap = 2 ** 64  # plain uint64 arithmetic in cel-go here: it wraps around
            out = {"string_to_bytes": (sz[0], sz[1] * 4 % wrap),
                   "bytes_to_string": (sz[0] // 4, sz[1]),
                   "strings_quote": ((sz[0] + 2) % wrap, (sz[1] * 2 + 2) % wrap)}[oid]
            return add(factor(sz, TRAVERSAL), arg_sum), out
        if oid in ("starts_with_string", "ends_with_string") and n == 1:
            return add(factor(self.size_or_unknown(args[0]), TRAVERSAL), arg_sum), None
        if oid == "in_list" and n == 2:
            return add(factor(self.size_or_unknown(args[1]), 1), arg_sum), None
        if oid in ("matches", "matches_string"):
            pair = ((target, args[0]) if oid == "matches_string" and target is not None
                    and n == 1 else (args[0], args[1]) if oid == "matches" and target is None
                    and n == 2 else None)
            if pair is not None:
                s, r = pair
                str_cost = factor(add(self.size_or_unknown(s), (1, 1)), TRAVERSAL)
                regex_cost = factor(self.size_or_unknown(r), REGEX)
                return add(mul(str_cost, regex_cost), arg_sum), None
        if oid == "contains_string" and target is not None and n == 1:
            a = factor(self.size_or_unknown(target), TRAVERSAL)
            b = factor(self.size_or_unknown(args[0]), TRAVERSAL)
            return add(mul(a, b), arg_sum), None
        if oid in ("logical_or", "logical_and"):
            lhs, rhs = costs[0], costs[1]
            return (lhs[0], add(lhs, rhs)[1]), None
        if oid == "conditional":
            size = union(self.size_or_unknown(args[1]), self.size_or_unknown(args[2]))
            a1, a2 = args[1].expr, args[2].expr
            assert a1 is not None and a2 is not None
            first = self.compute_entry(a1)
            entry = first.union(self.compute_entry(a2)) if first is not None else None
            self.set_entry(e, entry)
            return add(costs[0], union(costs[1], costs[2])), size
        if oid in ("add_string", "add_bytes", "add_list") and n == 2:
            size = add(self.size_or_unknown(args[0]), self.size_or_unknown(args[1]))
            a0, a1 = args[0].expr, args[1].expr
            assert a0 is not None and a1 is not None
            first = self.compute_entry(a0)
            entry = first.union(self.compute_entry(a1)) if first is not None else None
            if entry is not None:
                self.set_entry(e, entry)
            if oid == "add_list":
                return add((1, 1), arg_sum), size
            return add(factor(size, TRAVERSAL), arg_sum), size
        if oid in _COMPARE:
            lhs_s = self.size_or_unknown(args[0])
            rhs_s = self.size_or_unknown(args[1])
            smallest = min(lhs_s[1], rhs_s[1])
            low = 1 if smallest > 0 else 0
            return add(factor((low, smallest), TRAVERSAL), arg_sum), None
        return add((1, 1), arg_sum), None


def estimate(checked: Checked) -> int:
    """The worst-case cost of one evaluation of a checked rule: cel-go's
    ``EstimateCost(...).Max`` with the API server's estimators."""
    assert checked.ast is not None
    import sys

    limit = sys.getrecursionlimit()  # the parser bounds nesting at 250 levels
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return _Coster(checked).cost(checked.ast)[1]
    finally:
        sys.setrecursionlimit(limit)


def rule_cost(rule: str, node: Mapping[str, Any], *, resolve: Any = None,
              root: bool = False, new_expressions: bool = False,
              optional_old_self: bool = False, decl: DeclT | None = None) -> int | None:
    """The server's ``MaxCost`` of ``rule`` at the schema ``node`` (one evaluation, in
    cel-go cost units), or ``None`` when the rule does not compile (the server then
    reports the compile error instead, and counts no cost). ``root``: ``node`` is a CRD
    version's ``openAPIV3Schema`` (it gains ``apiVersion``, ``kind`` and ``metadata``).
    ``optional_old_self``: the rule sets ``optionalOldSelf: true``."""
    checked = check(rule, node, resolve=resolve, root=root, new_expressions=new_expressions,
                    optional_old_self=optional_old_self, decl=decl)
    if checked.errors or checked.ast is None or checked.type(checked.ast) != BOOL:
        return None
    return estimate(checked)


def message_cost(expression: str, node: Mapping[str, Any], *, resolve: Any = None,
                 root: bool = False, new_expressions: bool = False,
                 decl: DeclT | None = None) -> int | None:
    """``MessageExpressionMaxCost``: as :func:`rule_cost` for a ``messageExpression``
    (which must be a string)."""
    checked = check(expression, node, resolve=resolve, root=root,
                    new_expressions=new_expressions, decl=decl)
    if checked.errors or checked.ast is None or checked.type(checked.ast) != STRING:
        return None
    return estimate(checked)
