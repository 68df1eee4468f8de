"""CEL types and the CEL declarations of schema nodes, as the API server builds them.

Split from ``_cel_check`` to keep each file readable: this half is the data the
type checker works on, a port of

* github.com/google/cel-go v0.29.2 ``common/types`` (the ``Type`` kinds, parameters and
  names), ``checker/types.go`` (assignability with type parameters, ``substitute``,
  ``mostGeneral``) and ``checker/format.go`` (``FormatCELType``, as errors print types);
* k8s.io/apiserver v0.37.2 ``pkg/cel/common/schemas.go`` (``SchemaDeclType``,
  ``estimateMaxStringLengthPerRequest`` and friends), ``pkg/cel/types.go``
  (``DeclType``, ``MinSerializedSize``), ``pkg/cel/escaping.go`` (``Escape``) and
  ``pkg/cel/limits.go``, with apiextensions-apiserver's ``model.WithTypeAndObjectMeta``;
* the environment's function declarations (``_cel_decls``), parsed into overloads.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from compatfuzz.strategies._cel_decls import DECLARATIONS

__all__ = [
    "BOOL", "BYTES", "DOUBLE", "DURATION", "DYN", "ERROR", "INT", "MAX_REQUEST_SIZE", "NULL",
    "STRING", "TIMESTAMP", "UINT", "DeclT", "Overload", "Resolver", "T", "assignable",
    "assignable_list", "decl_type", "escape", "fmt", "functions", "is_dyn",
    "is_dyn_or_error", "list_of", "map_of", "most_general", "normal", "optional_of",
    "substitute", "type_idents", "type_of",
]

Resolver = Callable[[str], Mapping[str, Any]]

MAX_REQUEST_SIZE = 3 * 1024 * 1024  # k8s.io/apiserver/pkg/apis/cel/config.go
#: k8s.io/apiserver/pkg/cel/limits.go
MIN_DURATION_SIZE, JSON_DATE_SIZE, MIN_DATETIME_SIZE = 3, 12, 21
MIN_STRING_SIZE, MIN_BOOL_SIZE, MIN_NUMBER_SIZE = 2, 4, 1
MAX_DURATION_SIZE = MAX_DATETIME_SIZE = 32


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class T:
    """A cel-go ``types.Type``: ``kind`` (``int``, ``list``, ``struct``, ``opaque``,
    ``param``, ...), ``name`` (type name or parameter name) and ``params``."""

    kind: str
    name: str = ""
    params: tuple[T, ...] = ()
    decl: DeclT | None = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return fmt(self)


def _prim(kind: str) -> T:
    return T(kind, kind)


INT, UINT, DOUBLE, BOOL, STRING, BYTES = (_prim(k) for k in (
    "int", "uint", "double", "bool", "string", "bytes"))
NULL = T("null", "null_type")
DURATION = T("duration", "google.protobuf.Duration")
TIMESTAMP = T("timestamp", "google.protobuf.Timestamp")
DYN = T("dyn", "dyn")
ERROR = T("error", "*error*")


def list_of(t: T) -> T:
    return T("list", "list", (t,))


def map_of(k: T, v: T) -> T:
    return T("map", "map", (k, v))


def type_of(t: T | None = None) -> T:
    return T("type", "type", (t,) if t is not None else ())


def optional_of(t: T) -> T:
    return T("opaque", "optional_type", (t,))


def fmt(t: T | None) -> str:
    """cel-go ``checker.FormatCELType``."""
    if t is None:
        return ""
    special = {"any": "any", "duration": "duration", "error": "!error!", "null": "null",
               "timestamp": "timestamp"}
    if t.kind in special:
        return special[t.kind]
    if t.kind == "param":
        return t.name
    if not t.params:
        return t.name
    return f"{t.name}({', '.join(fmt(p) for p in t.params)})"


_OPAQUE = {"optional_type", "net.IP", "net.CIDR", "function"}
_NAMED = {"int": INT, "uint": UINT, "double": DOUBLE, "bool": BOOL, "string": STRING,
          "bytes": BYTES, "dyn": DYN, "google.protobuf.Duration": DURATION,
          "google.protobuf.Timestamp": TIMESTAMP, "null_type": NULL}


def _parse_type(text: str) -> T:
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        return T("param", text[1:-1])
    if "(" in text:
        name, inner = text.split("(", 1)
        inner = inner[:-1]
        parts, depth, start = [], 0, 0
        for i, c in enumerate(inner):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "," and depth == 0:
                parts.append(inner[start:i])
                start = i + 1
        parts.append(inner[start:])
        params = tuple(_parse_type(p) for p in parts)
        if name == "list":
            return list_of(params[0])
        if name == "map":
            return map_of(params[0], params[1])
        if name == "type":
            return type_of(params[0])
        return T("opaque", name, params)
    if text in _NAMED:
        return _NAMED[text]
    if text == "type":
        return type_of()
    return T("opaque" if text in _OPAQUE else "struct", text)


@dataclass(frozen=True)
class Overload:
    id: str
    member: bool
    args: tuple[T, ...]
    result: T
    params: tuple[str, ...]


def _type_params(t: T, out: list[str]) -> None:
    if t.kind == "param" and t.name not in out:
        out.append(t.name)
    for p in t.params:
        _type_params(p, out)


@lru_cache(maxsize=1)
def functions() -> dict[str, list[Overload]]:
    """Every function of the environment, with its overloads in declaration order."""
    table: dict[str, list[Overload]] = {}
    for line in DECLARATIONS.splitlines():
        head, result = line.split(" -> ")
        name, oid, member, *rest = head.split(" ")
        args = tuple(_parse_type(a) for a in " ".join(rest).split(";") if a)
        res = _parse_type(result)
        params: list[str] = []
        for a in (*args, res):
            _type_params(a, params)
        table.setdefault(name, []).append(Overload(oid, member == "1", args, res,
                                                   tuple(params)))
    return table


#: Type identifiers of the standard environment (cel-go ``checker/stdlib``, optional
#: types): ``type(x) == int``.
_TYPE_IDENTS = {
    "bool": BOOL, "bytes": BYTES, "double": DOUBLE, "int": INT, "uint": UINT,
    "string": STRING, "null_type": NULL, "list": list_of(DYN), "map": map_of(DYN, DYN),
    "type": type_of(), "google.protobuf.Duration": DURATION,
    "google.protobuf.Timestamp": TIMESTAMP, "optional_type": optional_of(DYN),
}


# --------------------------------------------------------------------------- schema


@dataclass(eq=False)
class DeclT:
    """apiserver ``cel.DeclType``: the CEL view of one schema node."""

    name: str
    cel: T
    fields: dict[str, DeclT] | None = None
    key: DeclT | None = None
    elem: DeclT | None = None
    max_elements: int = 0
    min_size: int = 0


_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue",
                       "else", "for", "function", "if", "import", "let", "loop", "package",
                       "namespace", "return", "var", "void", "while"})
_EXPAND = re.compile(r"(__|[-./]|[^a-zA-Z0-9\-./_])")
_VALID = re.compile(r"[a-zA-Z0-9_]*")


def escape(ident: str) -> str | None:
    """apiserver ``cel.Escape``: the CEL name of a property, ``None`` when it has none."""
    if not ident or "0" <= ident[0] <= "9":
        return None
    if ident in _RESERVED:
        return f"__{ident}__"
    can_skip, previous = True, False
    for c in ident:
        if c in "/-.":
            can_skip = False
            break
        if not _VALID.fullmatch(c):
            return None
        if c == "_" and previous:
            can_skip = False
            break
        previous = c == "_"
    if can_skip:
        return ident
    names = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
    bad = False

    def sub(m: re.Match[str]) -> str:
        nonlocal bad
        if m.group() not in names:
            bad = True
            return ""
        return names[m.group()]

    out = _EXPAND.sub(sub, ident)
    return None if bad else out


def normal(node: Mapping[str, Any], resolve: Resolver | None) -> Mapping[str, Any]:
    """``node`` as the API server's structural schema sees it: ``$ref`` resolved through
    ``resolve``, compatfuzz's nullable spellings (``type: [T, "null"]``, ``anyOf: [node,
    {type: null}]``) folded back into the node."""
    for _ in range(32):
        ref = node.get("$ref")
        if not isinstance(ref, str) or resolve is None:
            break
        try:
            target = resolve(ref)
        except Exception:  # an unresolvable $ref is reported by the schema loader
            break
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    any_of = node.get("anyOf")
    if (isinstance(any_of, list) and len(any_of) == 2 and any_of[1] == {"type": "null"}
            and isinstance(any_of[0], Mapping)):
        inner = normal(any_of[0], resolve)
        node = {**inner, **{k: v for k, v in node.items() if k != "anyOf"}}
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [t for t in kind if t != "null"]
        node = {**node, "type": rest[0] if len(rest) == 1 else ""}
    return node


def _int(node: Mapping[str, Any], key: str) -> int | None:
    v = node.get(key)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return max(0, int(v))


def _string_type(kind: str) -> bool:
    return kind == "string"


#: apimachinery ``DNS1123SubdomainMaxLength``: apiextensions caps ``metadata.name``.
NAME_MAX_LENGTH = 253


def _with_type_and_object_meta(node: Mapping[str, Any], resolve: Resolver | None
                               ) -> Mapping[str, Any]:
    """apiextensions ``model.WithTypeAndObjectMeta`` (pkg/apiserver/schema/cel/model/
    schemas.go): ``kind``, ``apiVersion`` and a ``metadata`` of only ``name`` (at most
    253 characters, or the schema's shorter ``maxLength``) and ``generateName`` (252),
    unless the schema already declares all four as strings."""
    props = node.get("properties")
    props = props if isinstance(props, Mapping) else {}

    def typ(sub: Any) -> Any:
        return normal(sub, resolve).get("type") if isinstance(sub, Mapping) else None

    meta = normal(props["metadata"], resolve) if isinstance(props.get("metadata"),
                                                           Mapping) else {}
    mprops = meta.get("properties") if isinstance(meta.get("properties"), Mapping) else None
    if (node.get("properties") is not None and typ(props.get("kind")) == "string"
            and typ(props.get("apiVersion")) == "string" and meta.get("type") == "object"
            and mprops is not None and typ(mprops.get("name")) == "string"
            and typ(mprops.get("generateName")) == "string"):
        return node
    string = {"type": "string"}

    def capped(existing: Any, most: int) -> dict[str, Any]:
        given = _int(normal(existing, resolve), "maxLength") if isinstance(
            existing, Mapping) else None
        return {"type": "string", "maxLength": given if given is not None and given < most
                else most}

    return {**node, "properties": {
        **props, "kind": string, "apiVersion": string,
        "metadata": {"type": "object", "properties": {
            "name": capped((mprops or {}).get("name"), NAME_MAX_LENGTH),
            # the generated suffix is at least 1 byte
            "generateName": capped((mprops or {}).get("generateName"), NAME_MAX_LENGTH - 1),
        }}}}


def decl_type(node: Mapping[str, Any], *, root: bool = False,
              resolve: Resolver | None = None, name: str = "object",
              _depth: int = 0) -> DeclT | None:
    """apiserver ``common.SchemaDeclType``: the declaration of ``node`` (``None``: not
    exposed to CEL). ``root``: the root of a resource (or an embedded resource), which
    always has ``apiVersion``, ``kind`` and ``metadata.name``/``generateName``."""
    if _depth > 64:
        return None
    node = normal(node, resolve)
    request = MAX_REQUEST_SIZE - 2
    if node.get("x-kubernetes-int-or-string") is True:
        max_len = _int(node, "maxLength")
        return DeclT("dyn", DYN, max_elements=max_len * 4 if max_len is not None
                     else request, min_size=1)
    if root:
        node = _with_type_and_object_meta(node, resolve)
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        if not isinstance(items, Mapping):
            return None
        items_n = normal(items, resolve)
        elem = decl_type(items_n, root=items_n.get("x-kubernetes-embedded-resource") is True,
                         resolve=resolve, name=f"{name}.@idx", _depth=_depth + 1)
        if elem is None:
            return None
        max_items = _int(node, "maxItems")
        if max_items is None:
            max_items = request // (elem.min_size + 1)
        return DeclT("list", list_of(elem.cel), elem=elem, max_elements=max_items,
                     min_size=2)
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            extra_n = normal(extra, resolve)
            elem = decl_type(extra_n,
                             root=extra_n.get("x-kubernetes-embedded-resource") is True,
                             resolve=resolve, name=f"{name}.@elem", _depth=_depth + 1)
            if elem is None:
                return None
            max_props = _int(node, "maxProperties")
            if max_props is None:
                max_props = request // (elem.min_size + 6)
            key = DeclT("string", STRING, min_size=MIN_STRING_SIZE)
            return DeclT("map", map_of(STRING, elem.cel), key=key, elem=elem,
                         max_elements=max_props, min_size=2)
        props = node.get("properties")
        required = node.get("required")
        required = set(required) if isinstance(required, list) else set()
        fields: dict[str, DeclT] = {}
        min_size = 2
        for prop, sub in (props.items() if isinstance(props, Mapping) else ()):
            if not isinstance(sub, Mapping):
                continue
            sub_n = normal(sub, resolve)
            escaped = escape(prop)
            ftype = decl_type(sub_n, root=sub_n.get("x-kubernetes-embedded-resource") is True,
                              resolve=resolve, name=f"{name}.{escaped}", _depth=_depth + 1)
            if ftype is None:
                continue
            if escaped is not None:
                fields[escaped] = ftype
            if prop in required and "default" not in sub_n:
                min_size += len(prop.encode()) + ftype.min_size + 4
        decl = DeclT(name, T("struct", name), fields=fields, min_size=min_size)
        object.__setattr__(decl.cel, "decl", decl)
        return decl
    if kind == "string":
        fmt_ = node.get("format")
        max_len = _int(node, "maxLength")
        if fmt_ == "byte":
            return DeclT("bytes", BYTES, min_size=MIN_STRING_SIZE,
                         max_elements=max_len if max_len is not None else request)
        if fmt_ == "duration":
            return DeclT("duration", DURATION, min_size=MIN_DURATION_SIZE,
                         max_elements=MAX_DURATION_SIZE)
        if fmt_ == "date":
            return DeclT("timestamp", TIMESTAMP, min_size=JSON_DATE_SIZE,
                         max_elements=JSON_DATE_SIZE)
        if fmt_ == "date-time":
            return DeclT("timestamp", TIMESTAMP, min_size=MIN_DATETIME_SIZE,
                         max_elements=MAX_DATETIME_SIZE)
        if max_len is not None:
            longest = max_len * 4
        elif isinstance(node.get("enum"), list) and node["enum"]:
            longest = max((len(e.encode()) for e in node["enum"] if isinstance(e, str)),
                          default=0)
        else:
            longest = request
        return DeclT("string", STRING, min_size=MIN_STRING_SIZE, max_elements=longest)
    if kind == "boolean":
        return DeclT("bool", BOOL, min_size=MIN_BOOL_SIZE)
    if kind == "number":
        return DeclT("double", DOUBLE, min_size=MIN_NUMBER_SIZE)
    if kind == "integer":
        return DeclT("int", INT, min_size=MIN_NUMBER_SIZE)
    return None


def _find_struct(t: T) -> DeclT | None:
    return t.decl


# --------------------------------------------------------------------------- unification

Mapping_ = dict[str, T]


def _find(m: Mapping_, t: T) -> T | None:
    return m.get(t.name) if t.kind == "param" else None


def _is_dyn(t: T) -> bool:
    return t.kind in ("dyn", "any")


def _is_dyn_or_error(t: T) -> bool:
    return t.kind in ("dyn", "any", "error")


def _exact(a: T, b: T) -> bool:
    return a == b


def _less_specific(t1: T, t2: T) -> bool:
    if _is_dyn(t1) or t1.kind == "param":
        return True
    if _is_dyn(t2) or t2.kind == "param":
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == "opaque":
        return (t1.name == t2.name and len(t1.params) == len(t2.params)
                and all(_less_specific(a, b) for a, b in zip(t1.params, t2.params, strict=True)))
    if t1.kind in ("list", "map"):
        return all(_less_specific(a, b) for a, b in zip(t1.params, t2.params, strict=True))
    if t1.kind == "type":
        return True
    return _exact(t1, t2)


def _most_general(t1: T, t2: T) -> T:
    return t1 if _less_specific(t1, t2) else t2


def _not_referenced_in(m: Mapping_, t: T, within: T) -> bool:
    if t == within:
        return False
    if within.kind == "param":
        sub = _find(m, within)
        return True if sub is None else _not_referenced_in(m, t, sub)
    if within.kind in ("opaque", "list", "map", "type"):
        return all(_not_referenced_in(m, t, p) for p in within.params)
    return True


def substitute(m: Mapping_, t: T, to_dyn: bool) -> T:
    sub = _find(m, t)
    if sub is not None:
        return substitute(m, sub, to_dyn)
    if to_dyn and t.kind == "param":
        return DYN
    if t.kind in ("opaque", "list", "map", "type") and t.params:
        return T(t.kind, t.name, tuple(substitute(m, p, to_dyn) for p in t.params), t.decl)
    return t


def _valid_substitution(m: Mapping_, t1: T, t2: T) -> tuple[bool, bool]:
    if t1.kind == t2.kind and t1 == t2:
        return True, True
    sub = _find(m, t2)
    if sub is not None:
        if t1.kind == sub.kind and t1 == sub:
            return True, True
        if _assignable(m, t1, sub):
            new = _most_general(t1, sub)
            if _not_referenced_in(m, t2, new):
                m[t2.name] = new
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m[t2.name] = t1
        return True, False
    return False, False


def _legacy_nullable(t: T) -> bool:
    return t.kind in ("opaque", "struct", "any", "duration", "timestamp")


def _assignable(m: Mapping_, t1: T, t2: T) -> bool:
    """cel-go ``internalIsAssignable``: a value of ``t2`` fits where ``t1`` is wanted."""
    if t2.kind == "param":
        valid, has_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if t1.kind == "param":
        return _valid_substitution(m, t2, t1)[0]
    if _is_dyn_or_error(t1) or _is_dyn_or_error(t2):
        return True
    if t1.kind == "null":
        return _legacy_nullable(t2) or t2.kind == "null"
    if t2.kind == "null":
        return _legacy_nullable(t1) or t1.kind == "null"
    if t1.kind in ("bool", "bytes", "double", "int", "string", "uint", "any", "duration",
                   "timestamp", "struct"):
        return t1.kind == t2.kind and t1.name == t2.name
    if t1.kind == "type":
        return t2.kind == "type"
    if t1.kind in ("opaque", "list", "map"):
        return (t1.kind == t2.kind and t1.name == t2.name
                and _assignable_list(m, t1.params, t2.params))
    return False


def _assignable_list(m: Mapping_, l1: tuple[T, ...], l2: tuple[T, ...]) -> bool:
    if len(l1) != len(l2):
        return False
    return all(_assignable(m, a, b) for a, b in zip(l1, l2, strict=True))




def assignable(m: Mapping_, t1: T, t2: T) -> bool:
    """cel-go ``internalIsAssignable`` (``m``, the type-parameter bindings, is updated)."""
    return _assignable(m, t1, t2)


def assignable_list(m: Mapping_, l1: tuple[T, ...], l2: tuple[T, ...]) -> bool:
    return _assignable_list(m, l1, l2)


def most_general(t1: T, t2: T) -> T:
    return _most_general(t1, t2)


def is_dyn(t: T) -> bool:
    return _is_dyn(t)


def is_dyn_or_error(t: T) -> bool:
    return _is_dyn_or_error(t)


def type_idents() -> dict[str, T]:
    """The type identifiers of the environment (``int`` in ``type(x) == int``)."""
    return dict(_TYPE_IDENTS)


#: The words CEL reserves (apiserver ``celReservedSymbols``).
RESERVED = _RESERVED
