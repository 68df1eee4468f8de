"""Cost estimates of the Kubernetes CEL libraries and of cel-go's extension libraries.

A port of k8s.io/apiserver v0.37.2 ``pkg/cel/library/cost.go`` (``CostEstimator.
EstimateCallCost``, ``sizeEstimate``, ``listElementNode``), of the per-overload estimators
cel-go v0.29.2 registers with ``checker.OverloadCostEstimate`` for the extensions the API
server enables (``ext/sets.go`` ``estimateSetsCost``; ``ext/lists.go`` version 3:
``estimateListSlice``, ``estimateListFlatten``, ``estimateListsRange``,
``estimateListReverse``, ``estimateListDistinct``, ``estimateListSort(By)``; the strings
extension registers its estimators only from version 5, Kubernetes uses version 2) and of
apiextensions-apiserver's ``sizeEstimator`` (``pkg/apiserver/schema/cel/compilation.go``),
which sizes a value by walking its path (``self``, field names, ``@items``, ``@keys``,
``@values``) through the rule's declarations. Split from ``_cel_cost`` to keep each file
readable; the two are one port.

Sizes and costs are ``(min, max)`` pairs of unsigned 64-bit integers that saturate, as
cel-go's ``SizeEstimate``/``CostEstimate`` do (``checker/cost.go``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from compatfuzz.strategies._cel_parse import Expr
from compatfuzz.strategies._cel_types import BYTES, STRING, DeclT, T

__all__ = ["U64", "Est", "Node", "estimate_call", "overload_estimate", "size_of_path"]

U64 = 2 ** 64 - 1
TRAVERSAL = 0.1  # cel-go common.StringTraversalCostFactor
REGEX = 0.25  # cel-go common.RegexStringLengthCostFactor
LIST_CREATE, MAP_CREATE = 10, 30  # cel-go common.ListCreateBaseCost, MapCreateBaseCost
MAX_FORMAT_SIZE = 64  # apiserver cel.MaxFormatSize
MAX_NAME_FORMAT_REGEX_SIZE = 128  # apiserver cel.MaxNameFormatRegexSize

Est = tuple[int, int]  # (min, max)
UNKNOWN: Est = (0, U64)


def add(a: Est, b: Est) -> Est:
    return (min(a[0] + b[0], U64), min(a[1] + b[1], U64))


def mul(a: Est, b: Est) -> Est:
    return (min(a[0] * b[0], U64), min(a[1] * b[1], U64))


def _factor(x: int, y: float) -> int:
    xf = float(x)
    if xf > 0 and y > 0 and xf > float(U64) / y:
        return U64
    c = math.ceil(xf * y)
    return U64 if c >= 2.0 ** 64 else int(c)


def factor(a: Est, y: float) -> Est:
    """``MultiplyByCostFactor``: each bound times ``y``, rounded up."""
    return (_factor(a[0], y), _factor(a[1], y))


def union(a: Est, b: Est) -> Est:
    return (min(a[0], b[0]), max(a[1], b[1]))


@dataclass
class Node:
    """cel-go ``checker.AstNode``: a path through the declarations, a type, the
    expression (``None`` for ``listElementNode``'s item) and its computed size."""

    path: list[str] | None
    t: T
    expr: Expr | None
    size: Est | None


def size_of_path(root: DeclT | None, path: Sequence[str] | None) -> Est | None:
    """apiextensions ``sizeEstimator.EstimateSize``: ``(0, MaxElements)`` of the
    declaration at ``path`` (its first element, the variable, is skipped)."""
    if not path or root is None:
        return None
    node = root
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            if node.fields is None or name not in node.fields:
                return None
            node = node.fields[name]
    return (0, node.max_elements)


class Library:
    """apiserver ``library.CostEstimator`` with apiextensions' size estimator."""

    def __init__(self, root: DeclT | None) -> None:
        self.root = root

    def estimate_size(self, node: Node) -> Est | None:
        return size_of_path(self.root, node.path)

    def size(self, node: Node) -> Est:
        """``sizeEstimate`` (and ext ``estimateSize``): computed, else by path, else any."""
        if node.size is not None:
            return node.size
        est = self.estimate_size(node)
        return est if est is not None else UNKNOWN

    def element(self, node: Node) -> Node | None:
        """``listElementNode``."""
        if not node.t.params:
            return None
        return Node(None if node.path is None else [*node.path, "@items"], node.t.params[0],
                    None, None)


def estimate_call(lib: Library, function: str, overload: str, target: Node | None,
                  args: list[Node]) -> tuple[Est, Est | None] | None:
    """apiserver ``CostEstimator.EstimateCallCost``: (cost, result size) or ``None``."""
    one: Est = (1, 1)
    if function == "check":
        return (350000, 350000), None
    if function in ("serviceAccount", "path", "group", "resource", "subresource",
                    "namespace", "name", "allowed", "reason", "error", "errored"):
        return one, None
    if function in ("fieldSelector", "labelSelector"):
        if len(args) == 1:
            length = lib.size(args[0])
            parse = factor(length, TRAVERSAL)
            requirements = factor(factor(length, 0.5), float(LIST_CREATE + 40))
            return add(add((LIST_CREATE, LIST_CREATE), parse), requirements), None
        return None
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
        if target is None:
            return None
        el_cost: Est = (1, 1)
        el = lib.element(target)
        if el is not None:
            if el.t.kind in ("string", "bytes"):
                el_cost = add(el_cost, factor(lib.size(el), TRAVERSAL))
            return mul(lib.size(target), el_cost), None
        if function == "includes":
            return mul(lib.size(target), el_cost), None
        return factor(lib.size(target), TRAVERSAL), None
    if function in ("url", "jsonpatch.escapeKey"):
        if len(args) == 1:
            sz = lib.size(args[0])
            return factor(sz, TRAVERSAL), sz
        return None
    if function in ("lowerAscii", "upperAscii", "substring", "trim"):
        if target is not None:
            sz = lib.size(target)
            return factor(sz, TRAVERSAL), sz
        return None
    if function == "replace":
        if target is None or len(args) < 2:
            return None
        return _replace(lib, target, args)
    if function == "split":
        if target is None:
            return None
        sz = lib.size(target)
        most = sz[1]
        if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == "lit":
            v = args[1].expr.value
            if isinstance(v, int) and not isinstance(v, bool) and type(v) is int:
                most = v % 2 ** 64
        return factor(sz, 2 * TRAVERSAL), (0, most)
    if function == "join":
        if target is None:
            return None
        list_size = lib.size(target)
        joined: Est = (0, 0)
        el = lib.element(target)
        if el is not None:
            joined = mul(list_size, lib.size(el))
        if args:
            sep = lib.size(args[0])
            seps = (max(list_size[0] - 1, 0) if list_size[0] > 0 else 0,
                    list_size[1] - 1 if list_size[1] > 0 else 0)
            joined = add(joined, mul(sep, seps))
        return factor(joined, TRAVERSAL), joined
    if function in ("find", "findAll"):
        if target is None or not args:
            return None
        sz = lib.size(target)
        str_cost = factor(add(sz, (1, 1)), TRAVERSAL)
        regex_cost = factor(lib.size(args[0]), REGEX)
        return mul(str_cost, regex_cost), (0, sz[1])
    if function in ("cidr", "isIP", "isCIDR"):
        if args:
            return factor(lib.size(args[0]), TRAVERSAL), None
        return None
    if function == "ip":
        if overload == "cidr_ip":
            return one, None
        if args:
            return factor(lib.size(args[0]), TRAVERSAL), None
        return None
    if function == "ip.isCanonical":
        if args:
            return factor(lib.size(args[0]), 2 * TRAVERSAL), None
        return None
    if function in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback",
                    "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast"):
        return one, None
    if function in ("containsIP", "containsCIDR"):
        if not args:
            return None
        ip: Est = (4, 16)
        cost = factor(add(ip, ip), TRAVERSAL)
        if function == "containsCIDR":
            cost = add(add(cost, factor(ip, TRAVERSAL)), (1, 1))
        if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost = add(cost, factor(lib.size(args[0]), TRAVERSAL))
        return cost, None
    if function in ("quantity", "isQuantity", "semver", "isSemver"):
        if args:
            return factor(lib.size(args[0]), TRAVERSAL), None
        return None
    if function == "validate":
        if args:
            sz = lib.size(args[0])
            return factor(factor(sz, TRAVERSAL), MAX_NAME_FORMAT_REGEX_SIZE * REGEX), None
        return None
    if function in ("format.named", "sign", "asInteger", "isInteger", "asApproximateFloat",
                    "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major",
                    "minor", "patch", "getScheme", "getHostname", "getHost", "getPort",
                    "getEscapedPath", "getQuery"):
        return one, None
    if function == "_==_" and len(args) == 2:
        lhs, rhs = args
        if lhs.t == rhs.t:
            t = lhs.t
            if t.kind == "opaque" and t.name in ("net.IP", "net.CIDR"):
                return one, None
            if t.kind == "struct":
                if t.name in ("kubernetes.Quantity", "kubernetes.authorization.Authorizer",
                              "kubernetes.authorization.PathCheck",
                              "kubernetes.authorization.GroupCheck",
                              "kubernetes.authorization.ResourceCheck",
                              "kubernetes.authorization.Decision", "kubernetes.Semver"):
                    return one, None
                if t.name == "kubernetes.NamedFormat":
                    return factor((1, MAX_FORMAT_SIZE), TRAVERSAL), None
                if t.name == "kubernetes.URL":
                    size: Est = (1, 1)
                    rh = rhs.size
                    if rh is not None:  # upstream reads rhs for both sides
                        size = union(rh, rh)
                    return factor((1, size[1]), TRAVERSAL), None
    return None


def _replace(lib: Library, target: Node, args: list[Node]) -> tuple[Est, Est | None]:
    sz = lib.size(target)
    to_replace = lib.size(args[0])
    replace_with = lib.size(args[1])
    count_min = count_max = retained_min = retained_max = 0
    if to_replace[0] == 0:
        count_max = sz[1] + 1 if sz[1] < U64 else sz[1]
        retained_max = sz[1]
    elif replace_with[1] <= to_replace[0]:
        count_max = 0
        retained_max = sz[1]
    else:
        count_max = _go_uint(math.ceil(float(sz[1]) / float(to_replace[0])))
    if to_replace[1] == 0:
        count_min = sz[0] + 1 if sz[0] < U64 else sz[0]
        retained_min = sz[0]
    elif to_replace[1] <= replace_with[0]:
        count_min = 0
        retained_min = sz[0]
    else:
        count_min = _go_uint(math.ceil(float(sz[0]) / float(to_replace[1])))
    size = add(mul((count_min, count_max), replace_with), (retained_min, retained_max))
    return factor(sz, 2 * TRAVERSAL), size


def _go_uint(x: float) -> int:
    """Go's ``uint64(float64)`` on amd64 for values past 2^63 (CVTTSD2SI semantics)."""
    if x >= 2.0 ** 64:
        return 2 ** 63
    if x >= 2.0 ** 63:
        return int(x) % 2 ** 64
    return int(x)


def _literal_uint(node: Node, default: int) -> int:
    """ext ``nodeAsUintValue``."""
    e = node.expr
    if e is None or e.kind != "lit" or type(e.value) is not int:
        return default
    return max(0, int(e.value))


def _list_call(cost_factor: float, size: Est) -> tuple[Est, Est | None]:
    """ext ``estimateAllocatingListCall``."""
    cost = add(add(factor(size, cost_factor), (1, 1)), (LIST_CREATE, LIST_CREATE))
    return cost, size


def overload_estimate(lib: Library, overload: str, target: Node | None, args: list[Node]
                      ) -> tuple[Est, Est | None] | None:
    """The estimators cel-go's extensions register per overload (they come first)."""
    if overload in ("list_sets_contains_list", "list_sets_intersects_list",
                    "list_sets_equivalent_list"):
        if len(args) != 2:
            return None
        f = 2.0 if overload == "list_sets_equivalent_list" else 1.0
        return add(factor(mul(lib.size(args[0]), lib.size(args[1])), f), (1, 1)), None
    if overload == "list_slice":
        if target is None or len(args) != 2:
            return None
        sz = lib.size(target)
        start = _literal_uint(args[0], 0)
        end = _literal_uint(args[1], sz[1])
        n = (end - start) % 2 ** 64
        return _list_call(1, (n, n))
    if overload in ("list_flatten", "list_flatten_int"):
        if target is None or len(args) > 1:
            return None
        depth = _literal_uint(args[0], U64) if args else 1
        return _list_call(float(depth), lib.size(target))
    if overload == "lists_range":
        if target is not None or len(args) != 1:
            return None
        n = _literal_uint(args[0], U64)
        return _list_call(1, (n, n))
    if overload == "list_reverse":
        if target is None or args:
            return None
        return _list_call(1, lib.size(target))
    if overload == "list_distinct":
        if target is None or args:
            return None
        sz = lib.size(target)
        return _list_call(2.0, mul(sz, sz))
    if overload.startswith("list_") and overload.endswith("_sort"):
        if target is None or args:
            return None
        return _sort(lib, target, overload[5:-5])
    if overload.startswith("list_") and overload.endswith("_sortByAssociatedKeys"):
        if target is None or len(args) != 1:
            return None
        return _sort(lib, args[0], overload[5:-len("_sortByAssociatedKeys")])
    return None


def _sort(lib: Library, node: Node, elem: str) -> tuple[Est, Est | None]:
    sz = lib.size(node)
    f = 2.0 + (TRAVERSAL if elem in (STRING.name, BYTES.name) else 0.0)
    return _list_call(f, mul(sz, sz))

