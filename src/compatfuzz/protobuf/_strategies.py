"""Hypothesis strategies for protobuf messages, meeting validate rules by construction.

Why here and not in ``strategies/``: that part generates JSON from JSON Schema; a protobuf
message has wire types JSON cannot express (uint64 beyond 2**53, NaN, bytes, unknown enum
numbers) and its rules live in descriptor options. The generated message is the source of
truth; its proto3 JSON form is derived with ``json_format`` (``from_message(..., json=True)``).

Rules that cannot be built (CEL, clock-relative timestamps) are filtered with the evaluator
in ``_validate`` and reported once with :class:`~compatfuzz.errors.UnsupportedRuleWarning`,
as CEL rules are for CRDs. Recursion is bounded by ``max_depth``: below it optional message
fields stay unset (a required one still gets its smallest valid value).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, UnsupportedRuleWarning, UnsupportedSchema
from compatfuzz.protobuf._load import ProtoSchema
from compatfuzz.protobuf._options import oneof_required
from compatfuzz.protobuf._validate import rules_of, unsupported_rules, violations

__all__ = ["INT_LIMITS", "from_message"]

T = FieldDescriptor
INT_LIMITS: dict[int, tuple[int, int]] = {
    T.TYPE_INT32: (-(2**31), 2**31 - 1), T.TYPE_SINT32: (-(2**31), 2**31 - 1),
    T.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    T.TYPE_INT64: (-(2**63), 2**63 - 1), T.TYPE_SINT64: (-(2**63), 2**63 - 1),
    T.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    T.TYPE_UINT32: (0, 2**32 - 1), T.TYPE_FIXED32: (0, 2**32 - 1),
    T.TYPE_UINT64: (0, 2**64 - 1), T.TYPE_FIXED64: (0, 2**64 - 1),
}
_SECONDS_TS = (-62135596800, 253402300799)  # 0001-01-01 .. 9999-12-31 (RFC 3339 range)
_SECONDS_DUR = 315576000000  # +-10,000 years, the JSON mapping's limit
_WKT_ANY_DEFAULT = ("google.protobuf.Duration", "google.protobuf.Timestamp",
                    "google.protobuf.Empty", "google.protobuf.Struct",
                    "google.protobuf.StringValue")
_WRAPPER_TYPES = {
    "google.protobuf.DoubleValue": T.TYPE_DOUBLE, "google.protobuf.FloatValue": T.TYPE_FLOAT,
    "google.protobuf.Int64Value": T.TYPE_INT64, "google.protobuf.UInt64Value": T.TYPE_UINT64,
    "google.protobuf.Int32Value": T.TYPE_INT32, "google.protobuf.UInt32Value": T.TYPE_UINT32,
    "google.protobuf.BoolValue": T.TYPE_BOOL, "google.protobuf.StringValue": T.TYPE_STRING,
    "google.protobuf.BytesValue": T.TYPE_BYTES,
}
_RULE_KIND = {
    T.TYPE_DOUBLE: "double", T.TYPE_FLOAT: "float", T.TYPE_INT64: "int64",
    T.TYPE_UINT64: "uint64", T.TYPE_INT32: "int32", T.TYPE_UINT32: "uint32",
    T.TYPE_SINT32: "sint32", T.TYPE_SINT64: "sint64", T.TYPE_FIXED32: "fixed32",
    T.TYPE_FIXED64: "fixed64", T.TYPE_SFIXED32: "sfixed32", T.TYPE_SFIXED64: "sfixed64",
    T.TYPE_BOOL: "bool", T.TYPE_STRING: "string", T.TYPE_BYTES: "bytes", T.TYPE_ENUM: "enum",
}


def _set(msg: Message | None) -> dict[str, Any]:
    return {} if msg is None else {fd.name: v for fd, v in msg.ListFields()}


def _sub(rules: Message | None, kind: str) -> dict[str, Any]:
    if rules is None:
        return {}
    s = _set(rules)
    return _set(s[kind]) if kind in s else {}


@dataclass
class _Ctx:
    schema: ProtoSchema | None
    max_depth: int
    max_items: int
    unknown_enums: bool
    any_types: tuple[Descriptor, ...]
    minimal: bool
    force: frozenset[str]
    unsupported: set[str] = field(default_factory=set)
    cache: dict[tuple[str, int], st.SearchStrategy[Any]] = field(default_factory=dict)


# -- scalars -------------------------------------------------------------------------------


def _int_strategy(ftype: int, s: dict[str, Any]) -> st.SearchStrategy[int]:
    lo, hi = INT_LIMITS[ftype]
    if "const" in s:
        return st.just(int(s["const"]))
    if s.get("in"):
        return st.sampled_from(sorted(int(v) for v in s["in"]))
    glo = s["gt"] + 1 if "gt" in s else s.get("gte", lo)
    ghi = s["lt"] - 1 if "lt" in s else s.get("lte", hi)
    has_lo, has_hi = "gt" in s or "gte" in s, "lt" in s or "lte" in s
    if has_lo and has_hi and s.get("gt", s.get("gte", 0)) > s.get("lt", s.get("lte", 0)):
        # exclusive range: outside [upper, lower]
        parts = [st.integers(lo, ghi)] if ghi >= lo else []
        if glo <= hi:
            parts.append(st.integers(glo, hi))
        base: st.SearchStrategy[int] = st.one_of(parts)
    else:
        glo, ghi = max(lo, glo), min(hi, ghi)
        if glo > ghi:
            return st.nothing()
        # small values first: sampled_from shrinks towards its first element. Then the
        # bounds, and where the type reaches them the first integers a double (a JSON
        # number, float(x)) cannot hold and the signed/unsigned boundary: the values
        # lossy converters lose
        wide = [2**53 + 1, -(2**53 + 1), 2**31, 2**63] if hi > 2**32 else [2**31]
        edges = list(dict.fromkeys([*(v for v in (0, 1, -1) if glo <= v <= ghi), glo, ghi,
                                    *(v for v in wide if glo <= v <= ghi and lo < v < hi)]))
        base = st.sampled_from(edges) | st.integers(glo, ghi)
    if s.get("not_in"):
        banned = {int(v) for v in s["not_in"]}
        base = base.filter(lambda v: v not in banned)
    return base


def _float_strategy(width: Literal[32, 64], s: dict[str, Any]) -> st.SearchStrategy[float]:
    if "const" in s:
        return st.just(float(s["const"]))
    if s.get("in"):
        return st.sampled_from([float(v) for v in s["in"]])
    bounded = any(k in s for k in ("gt", "gte", "lt", "lte"))
    lo = s.get("gt", s.get("gte"))
    hi = s.get("lt", s.get("lte"))
    if lo is not None and hi is not None and lo > hi:
        base: st.SearchStrategy[float] = (
            st.floats(max_value=hi, exclude_max="lt" in s, width=width, allow_nan=False)
            | st.floats(min_value=lo, exclude_min="gt" in s, width=width, allow_nan=False))
    elif bounded:
        base = st.floats(min_value=lo, max_value=hi, exclude_min="gt" in s and lo is not None,
                         exclude_max="lt" in s and hi is not None, width=width,
                         allow_nan=False)
    else:
        edges = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0,
                 3.4028232635611926e38 if width == 32 else 1.7976931348623157e308]
        base = st.sampled_from(edges) | st.floats(width=width)
    if s.get("not_in"):
        banned = [float(v) for v in s["not_in"]]
        base = base.filter(lambda v: v not in banned)
    return base


_HOSTNAME = st.from_regex(
    r"\A[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z]([a-z0-9-]{0,8}[a-z0-9])?){0,3}\Z")
_IPV4 = st.ip_addresses(v=4).map(str)
_IPV6 = st.ip_addresses(v=6).map(str)


def _text_strategy(s: dict[str, Any]) -> st.SearchStrategy[str]:
    if "const" in s:
        return st.just(str(s["const"]))
    if s.get("in"):
        return st.sampled_from(list(s["in"]))
    min_len = int(s.get("len", s.get("min_len", 0)))
    max_len = int(s.get("len", s.get("max_len", max(min_len, 0) + 20)))
    if "max_bytes" in s:
        max_len = min(max_len, int(s["max_bytes"]))
    if "len_bytes" in s:
        min_len, max_len = 0, int(s["len_bytes"])
    base: st.SearchStrategy[str]
    if s.get("hostname") or s.get("address"):
        base = _HOSTNAME if s.get("hostname") else (_HOSTNAME | _IPV4 | _IPV6)
    elif s.get("email"):
        base = st.builds(lambda a, h: f"{a}@{h}", st.from_regex(r"\A[a-z0-9._+-]{1,10}\Z"),
                         _HOSTNAME)
    elif s.get("ip"):
        base = _IPV4 | _IPV6
    elif s.get("ipv4"):
        base = _IPV4
    elif s.get("ipv6"):
        base = _IPV6
    elif s.get("uuid"):
        base = st.uuids().map(str)
    elif s.get("uri") or s.get("uri_ref"):
        base = st.builds(lambda h, p: f"https://{h}/{p}", _HOSTNAME,
                         st.from_regex(r"\A[a-z0-9_/-]{0,12}\Z"))
    elif s.get("well_known_regex") == 1:
        base = st.from_regex(r"\A[0-9a-zA-Z!#$%&'*+.^_|~`-]{1,20}\Z")
    elif s.get("well_known_regex") == 2:
        base = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
    elif "pattern" in s:
        try:
            base = st.from_regex(s["pattern"])
        except Exception:  # RE2 syntax Python cannot read: filter instead
            base = st.text(max_size=max_len)
    else:
        prefix, suffix, contains = (str(s.get(k, "")) for k in ("prefix", "suffix", "contains"))
        fixed = len(prefix) + len(suffix) + len(contains)
        room_lo, room_hi = max(0, min_len - fixed), max(0, max_len - fixed)
        if room_hi < room_lo:
            return st.nothing()
        half = st.text(max_size=max(0, room_hi // 2))
        base = st.builds(lambda a, b, lo=room_lo: prefix + a + contains + b
                         + "x" * max(0, lo - len(a) - len(b)) + suffix, half, half)
        if not (prefix or suffix or contains):
            base = st.text(min_size=min_len, max_size=max_len)
    return base


def _bytes_strategy(s: dict[str, Any]) -> st.SearchStrategy[bytes]:
    if "const" in s:
        return st.just(bytes(s["const"]))
    if s.get("in"):
        return st.sampled_from(list(s["in"]))
    if s.get("ipv4"):
        return st.binary(min_size=4, max_size=4)
    if s.get("ipv6"):
        return st.binary(min_size=16, max_size=16)
    if s.get("ip"):
        return st.binary(min_size=4, max_size=4) | st.binary(min_size=16, max_size=16)
    min_len = int(s.get("len", s.get("min_len", 0)))
    max_len = int(s.get("len", s.get("max_len", min_len + 20)))
    prefix, suffix, contains = (bytes(s.get(k, b"")) for k in ("prefix", "suffix", "contains"))
    fixed = len(prefix) + len(suffix) + len(contains)
    lo, hi = max(0, min_len - fixed), max(0, max_len - fixed)
    if hi < lo:
        return st.nothing()
    return st.binary(min_size=lo, max_size=hi).map(
        lambda b: prefix + b[: len(b) // 2] + contains + b[len(b) // 2:] + suffix)


def _scalar(fd: FieldDescriptor, rules: Message | None, ctx: _Ctx,
            ftype: int | None = None) -> st.SearchStrategy[Any]:
    ftype = ftype if ftype is not None else fd.type
    kind = _RULE_KIND[ftype]
    s = _sub(rules, kind)
    if ftype in INT_LIMITS:
        return _int_strategy(ftype, s)
    if ftype in (T.TYPE_FLOAT, T.TYPE_DOUBLE):
        return _float_strategy(32 if ftype == T.TYPE_FLOAT else 64, s)
    if ftype == T.TYPE_BOOL:
        return st.just(bool(s["const"])) if "const" in s else st.booleans()
    if ftype == T.TYPE_STRING:
        return _text_strategy(s)
    if ftype == T.TYPE_BYTES:
        return _bytes_strategy(s)
    if ftype == T.TYPE_ENUM:
        return _enum(fd, s, ctx)
    raise UnsupportedSchema(f"{fd.full_name}: field type {ftype} (groups are not supported)")


def _enum(fd: FieldDescriptor, s: dict[str, Any], ctx: _Ctx) -> st.SearchStrategy[int]:
    if "const" in s:
        return st.just(int(s["const"]))
    numbers = sorted(v.number for v in fd.enum_type.values)
    if s.get("in"):
        numbers = sorted(int(v) for v in s["in"])
    if s.get("not_in"):
        numbers = [n for n in numbers if n not in set(s["not_in"])]
    base: st.SearchStrategy[int] = st.sampled_from(numbers) if numbers else st.nothing()
    is_open = not fd.enum_type.is_closed
    if ctx.unknown_enums and is_open and not s.get("defined_only") and not s.get("in"):
        known = set(numbers)
        banned = {int(v) for v in s.get("not_in", ())}
        unknown = st.integers(-(2**31), 2**31 - 1).filter(
            lambda n: n not in known and n not in banned)
        base = st.one_of(base, unknown)
    return base


# -- well-known types ----------------------------------------------------------------------


def _nanos_split(total: int) -> tuple[int, int]:
    """Seconds and nanos with the same sign (the Duration JSON mapping requires it)."""
    seconds = abs(total) // 10**9 * (1 if total >= 0 else -1)
    return seconds, total - seconds * 10**9


def _duration(cls: type[Message], s: dict[str, Any]) -> st.SearchStrategy[Message]:
    def ns(m: Message) -> int:
        return int(m.seconds) * 10**9 + int(m.nanos)

    lo, hi = -_SECONDS_DUR * 10**9, _SECONDS_DUR * 10**9
    if "const" in s:
        return st.just(cls(seconds=s["const"].seconds, nanos=s["const"].nanos))
    if "gt" in s:
        lo = ns(s["gt"]) + 1
    if "gte" in s:
        lo = ns(s["gte"])
    if "lt" in s:
        hi = ns(s["lt"]) - 1
    if "lte" in s:
        hi = ns(s["lte"])
    if lo > hi:
        return st.nothing()
    edges = [v for v in (lo, hi, 0, 10**9) if lo <= v <= hi]
    return (st.sampled_from(edges) | st.integers(lo, hi)).map(
        lambda t: cls(seconds=_nanos_split(t)[0], nanos=_nanos_split(t)[1]))


def _timestamp(cls: type[Message], s: dict[str, Any]) -> st.SearchStrategy[Message]:
    def ns(m: Message) -> int:
        return int(m.seconds) * 10**9 + int(m.nanos)

    lo, hi = _SECONDS_TS[0] * 10**9, _SECONDS_TS[1] * 10**9 + 999_999_999
    if "const" in s:
        return st.just(cls(seconds=s["const"].seconds, nanos=s["const"].nanos))
    lo = ns(s["gt"]) + 1 if "gt" in s else ns(s["gte"]) if "gte" in s else lo
    hi = ns(s["lt"]) - 1 if "lt" in s else ns(s["lte"]) if "lte" in s else hi
    if lo > hi:
        return st.nothing()

    def build(t: int) -> Message:
        seconds, nanos = divmod(t, 10**9)
        return cls(seconds=seconds, nanos=nanos)

    return (st.sampled_from([v for v in (lo, hi, 0) if lo <= v <= hi])
            | st.integers(lo, hi)).map(build)


def _json_value(depth: int) -> st.SearchStrategy[Any]:
    leaves = (st.none() | st.booleans() | st.text(max_size=8)
              | st.floats(allow_nan=False, allow_infinity=False))
    if depth <= 0:
        return leaves
    inner = _json_value(depth - 1)
    return leaves | st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                  max_size=3)


def _struct_like(cls: type[Message], full: str, ctx: _Ctx, depth: int
                 ) -> st.SearchStrategy[Message]:
    levels = max(0, min(1, ctx.max_depth - depth - 1))

    def build(v: Any) -> Message:
        m = cls()
        json_format.ParseDict(v, m)
        return m

    if full == "google.protobuf.Struct":
        return st.dictionaries(st.text(max_size=6), _json_value(levels), max_size=3).map(build)
    if full == "google.protobuf.ListValue":
        return st.lists(_json_value(levels), max_size=3).map(build)
    return _json_value(levels).map(build)


_SNAKE = st.from_regex(r"\A[a-z]{1,6}(_[a-z]{1,6}){0,2}(\.[a-z]{1,6}(_[a-z]{1,6}){0,1}){0,2}\Z")


def _any(fd: FieldDescriptor | None, cls: type[Message], s: dict[str, Any], ctx: _Ctx,
         depth: int) -> st.SearchStrategy[Message]:
    pool = cls.DESCRIPTOR.file.pool
    types: list[Descriptor] = []
    if s.get("in"):
        for url in s["in"]:
            try:
                types.append(pool.FindMessageTypeByName(url.rsplit("/", 1)[-1]))
            except KeyError:
                continue
    else:
        types = [t for t in ctx.any_types]
        if not types:
            for name in _WKT_ANY_DEFAULT:
                try:
                    types.append(pool.FindMessageTypeByName(name))
                except KeyError:
                    continue
    banned = set(s.get("not_in", ()))
    types = [t for t in types if f"type.googleapis.com/{t.full_name}" not in banned]
    if not types:
        return st.nothing()

    def pack(inner: Message) -> Message:
        m = cls()
        m.Pack(inner)
        return m

    return st.one_of([_message_value(None, t, None, ctx, depth + 1) for t in types]).map(pack)


# -- messages ------------------------------------------------------------------------------


def _rules(fd: FieldDescriptor, ctx: _Ctx) -> Message | None:
    found = rules_of(fd)
    if found is None:
        return None
    bad = unsupported_rules(found[1])
    for r in bad:
        ctx.unsupported.add(f"{fd.full_name}: {r}")
    return found[1]


def _message_value(fd: FieldDescriptor | None, desc: Descriptor, rules: Message | None,
                   ctx: _Ctx, depth: int) -> st.SearchStrategy[Any]:
    cls = _class(desc)
    full = desc.full_name
    top = _set(rules)
    if full in _WRAPPER_TYPES:
        inner = desc.fields_by_name["value"]
        return _scalar(inner, rules, ctx, _WRAPPER_TYPES[full]).map(lambda v: cls(value=v))
    if full == "google.protobuf.Duration":
        return _duration(cls, _set(top["duration"]) if "duration" in top else {})
    if full == "google.protobuf.Timestamp":
        return _timestamp(cls, _set(top["timestamp"]) if "timestamp" in top else {})
    if full in ("google.protobuf.Struct", "google.protobuf.Value",
                "google.protobuf.ListValue"):
        return _struct_like(cls, full, ctx, depth)
    if full == "google.protobuf.FieldMask":
        return st.lists(_SNAKE, max_size=3).map(lambda p: cls(paths=p))
    if full == "google.protobuf.Any":
        return _any(fd, cls, _set(top["any"]) if "any" in top else {}, ctx, depth)
    return _message(desc, ctx, depth + 1)


def _class(desc: Descriptor) -> type[Message]:
    from google.protobuf import message_factory

    cls: type[Message] = message_factory.GetMessageClass(desc)
    return cls


def _required(fd: FieldDescriptor, rules: Message | None) -> bool:
    if fd.is_required:
        return True
    top = _set(rules)
    if top.get("required"):
        return True
    for key in ("message", "duration", "timestamp", "any"):
        if _set(top.get(key)).get("required"):
            return True
    return False


def _field_value(fd: FieldDescriptor, ctx: _Ctx, depth: int) -> st.SearchStrategy[Any]:
    rules = _rules(fd, ctx)
    top = _set(rules)
    is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
    if is_map:
        s = _set(top["map"]) if "map" in top else {}
        kf, vf = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
        keys = _scalar(kf, s.get("keys"), ctx)
        values = (_message_value(vf, vf.message_type, s.get("values"), ctx, depth)
                  if vf.message_type is not None else _scalar(vf, s.get("values"), ctx))
        lo = int(s.get("min_pairs", 1 if top.get("required") else 0))
        hi = int(s.get("max_pairs", max(lo, ctx.max_items)))
        hi = min(hi, lo + _room(ctx, depth, vf))
        return st.dictionaries(keys, values, min_size=lo, max_size=hi)
    if fd.is_repeated:
        s = _set(top["repeated"]) if "repeated" in top else {}
        item_rules = s.get("items")
        element = (_message_value(fd, fd.message_type, item_rules, ctx, depth)
                   if fd.message_type is not None else _scalar(fd, item_rules, ctx))
        lo = int(s.get("min_items", 1 if top.get("required") else 0))
        hi = int(s.get("max_items", max(lo, ctx.max_items)))
        hi = min(hi, lo + _room(ctx, depth, fd))
        if s.get("unique"):
            return st.lists(element, min_size=lo, max_size=hi, unique_by=_unique_key)
        return st.lists(element, min_size=lo, max_size=hi)
    if fd.message_type is not None:
        return _message_value(fd, fd.message_type, rules, ctx, depth)
    return _scalar(fd, rules, ctx)


def _room(ctx: _Ctx, depth: int, fd: FieldDescriptor) -> int:
    """Extra items a list or map may get: fewer the deeper a message list sits, so a
    recursive ``repeated Node children`` stays small instead of growing as max_items**depth."""
    if fd.message_type is None:
        return ctx.max_items
    return max(0, ctx.max_items - depth)


def _unique_key(v: Any) -> Any:
    if isinstance(v, Message):
        return v.SerializeToString(deterministic=True)
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def _assign(msg: Message, fd: FieldDescriptor, value: Any) -> None:
    target = getattr(msg, fd.name)
    is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
    if is_map:
        vf = fd.message_type.fields_by_name["value"]
        for k, v in value.items():
            if vf.message_type is not None:
                target[k].CopyFrom(v)
            else:
                target[k] = v
    elif fd.is_repeated:
        if fd.message_type is not None:
            for v in value:
                target.add().CopyFrom(v)
        else:
            target.extend(value)
    elif fd.message_type is not None:
        target.CopyFrom(value)
    else:
        setattr(msg, fd.name, value)


def _message(desc: Descriptor, ctx: _Ctx, depth: int) -> st.SearchStrategy[Message]:
    key = (desc.full_name, depth)
    if key in ctx.cache:
        return ctx.cache[key]
    ctx.cache[key] = st.deferred(lambda: _build_message(desc, ctx, depth))
    return ctx.cache[key]


def _build_message(desc: Descriptor, ctx: _Ctx, depth: int) -> st.SearchStrategy[Message]:
    cls = _class(desc)
    deep = depth >= ctx.max_depth
    parts: list[st.SearchStrategy[list[tuple[FieldDescriptor, Any]]]] = []
    seen_oneofs: set[str] = set()
    for fd in desc.fields:
        oneof = fd.containing_oneof
        if oneof is not None and not _synthetic(oneof):
            if oneof.name in seen_oneofs:
                continue
            seen_oneofs.add(oneof.name)
            parts.append(_oneof(oneof, ctx, depth, deep))
            continue
        rules = _rules(fd, ctx)
        # a rule on an implicit scalar or a list also judges its unset (default) value, so
        # such fields are always generated (the strategy may still produce the default)
        checked_when_unset = rules is not None and (
            fd.is_repeated or (fd.message_type is None and not fd.has_presence))
        required = _required(fd, rules) or checked_when_unset
        forced = fd.full_name in ctx.force
        if (deep or ctx.minimal) and not required and not forced:
            if fd.message_type is not None or fd.is_repeated or fd.has_presence:
                continue
            if ctx.minimal and rules is None:
                continue  # implicit default: nothing to write
        value = _field_value(fd, ctx, depth)
        pair = value.map(functools.partial(_one, fd))
        if required or forced:
            parts.append(pair)
        else:
            parts.append(st.just([]) | pair)
    return st.tuples(*parts).map(lambda chunks: _make(cls, chunks))


def _one(fd: FieldDescriptor, value: Any) -> list[tuple[FieldDescriptor, Any]]:
    return [(fd, value)]


def _make(cls: type[Message], chunks: Iterable[list[tuple[FieldDescriptor, Any]]]
          ) -> Message:
    msg = cls()
    for chunk in chunks:
        for fd, value in chunk:
            _assign(msg, fd, value)
    return msg


_NESTING: dict[str, float] = {}


def _nesting(fd: FieldDescriptor) -> float:
    """How deep a smallest valid value of ``fd`` must nest (inf: it cannot end)."""
    if fd.message_type is None or (fd.is_repeated and not _required_by_rules(fd)):
        return 0
    return 1 + _type_nesting(fd.message_type)


def _type_nesting(desc: Descriptor) -> float:
    name = desc.full_name
    if name in _NESTING:
        return _NESTING[name]
    _NESTING[name] = math.inf  # in progress: a cycle through required fields never ends
    need = 0.0
    seen: set[str] = set()
    for fd in desc.fields:
        oneof = fd.containing_oneof
        if oneof is not None and not _synthetic(oneof):
            if oneof.name in seen or not oneof_required(oneof.GetOptions()):
                continue
            seen.add(oneof.name)
            need = max(need, min(_nesting(m) for m in oneof.fields))
        elif _required_by_rules(fd):
            need = max(need, _nesting(fd))
    _NESTING[name] = need
    return need


def _required_by_rules(fd: FieldDescriptor) -> bool:
    found = rules_of(fd)
    rules = found[1] if found else None
    if _required(fd, rules):
        return True
    sub = _sub(rules, "repeated") or _sub(rules, "map")
    return bool(sub.get("min_items") or sub.get("min_pairs"))


def _synthetic(oneof: Any) -> bool:
    """proto3 ``optional`` fields live in a synthetic one-member oneof named ``_name``."""
    return len(oneof.fields) == 1 and oneof.name == "_" + oneof.fields[0].name \
        and oneof.fields[0].has_presence


def _oneof(oneof: Any, ctx: _Ctx, depth: int, deep: bool
           ) -> st.SearchStrategy[list[tuple[FieldDescriptor, Any]]]:
    required = oneof_required(oneof.GetOptions())
    forced = [fd for fd in oneof.fields if fd.full_name in ctx.force]
    members = forced or list(oneof.fields)
    if deep and not required and not forced:
        return st.just([])
    if deep or ctx.minimal:
        if not (required or forced):
            return st.just([])
        # the member needing the least nesting, so a required oneof inside a recursive
        # type (Envoy's Matcher -> OnMatch -> Matcher) still bottoms out
        members = forced or [min(members, key=_nesting)]
    options = [_field_value(fd, ctx, depth).map(functools.partial(_one, fd))
               for fd in members]
    chosen = st.one_of(options)
    return chosen if (required or forced) else (st.just([]) | chosen)


def from_message(message: str | Descriptor | type[Message], *,
                 schema: ProtoSchema | None = None,
                 json: bool = False,
                 max_depth: int = 3,
                 max_items: int = 3,
                 unknown_enums: bool = True,
                 any_types: Sequence[str | Descriptor] = (),
                 minimal: bool = False,
                 force: Iterable[str] = (),
                 validate: bool = True) -> st.SearchStrategy[Any]:
    """Return a strategy for messages of type ``message`` that pass their validate rules.

    ``message`` is a descriptor, a generated class, or a full name looked up in
    ``schema`` (from :func:`load_protos`). With ``json=True`` values are the proto3 JSON
    form (``json_format.MessageToDict``: int64 as strings, NaN as ``"NaN"``). Scalars
    include their edges (int64/uint64 extremes, NaN, infinities, -0.0, empty bytes), open
    enums unknown numbers (``unknown_enums``), ``Any`` packs one of ``any_types`` (default:
    the well-known types in the pool). Nesting deeper than ``max_depth`` leaves optional
    message fields unset. ``minimal`` sets only what validate rules require, plus the
    fields named (full names) in ``force``. Rules the generator cannot build are filtered
    (``validate=True``) and reported once with ``UnsupportedRuleWarning``.

    Example::

        @given(from_message("envoy.config.cluster.v3.Cluster", schema=api))
        def test_binary_round_trip(cluster): ...

    Values shrink towards fewer fields set, smaller numbers and shorter strings.

    Raises:
        InvalidArgument: ``message`` is not a message or not in ``schema``.

    .. versionadded:: 0.2
    """
    if isinstance(message, str):
        if schema is None:
            raise InvalidArgument(f"from_message({message!r}) needs schema=load_protos(...) "
                                  "to look the name up; or pass a descriptor or class")
        desc = schema.message(message)
    elif isinstance(message, Descriptor):
        desc = message
    elif isinstance(message, type) and isinstance(getattr(message, "DESCRIPTOR", None),
                                                  Descriptor):
        desc = message.DESCRIPTOR  # type: ignore[attr-defined]
    else:
        raise InvalidArgument(f"Expected a message name, descriptor or class but got "
                              f"message={message!r} (type={type(message).__name__})")
    if max_depth < 0 or max_items < 0:
        raise InvalidArgument(f"max_depth={max_depth} and max_items={max_items} must be >= 0")
    anys = tuple(schema.message(t) if isinstance(t, str) and schema is not None
                 else desc.file.pool.FindMessageTypeByName(t) if isinstance(t, str) else t
                 for t in any_types)
    ctx = _Ctx(schema, max_depth, max_items, unknown_enums, anys, minimal, frozenset(force))
    label = f"<{desc.full_name}>"

    def build() -> st.SearchStrategy[Any]:
        strategy: st.SearchStrategy[Any] = _message(desc, ctx, 0)
        _ = strategy.wrapped_strategy  # type: ignore[attr-defined]  # build now: collects rules
        if ctx.unsupported:
            warnings.warn(UnsupportedRuleWarning(
                f"{desc.full_name}: cannot build these validate rules, generated messages "
                f"are filtered instead: {sorted(ctx.unsupported)[:5]}"), stacklevel=2)
        if validate:
            strategy = strategy.filter(lambda m: not violations(m))
        if json:
            strategy = strategy.map(to_json)
        return strategy

    return _from_message(_Plan(label, build))


def to_json(msg: Message) -> Any:
    """The proto3 JSON form of ``msg`` (field json names, int64 as strings)."""
    return json_format.MessageToDict(msg, descriptor_pool=msg.DESCRIPTOR.file.pool)


class _Plan:
    """The call's options and its lazily built strategy; its repr is the call's argument."""

    def __init__(self, text: str, build: Callable[[], st.SearchStrategy[Any]]) -> None:
        self.text = text
        self._build = build
        self.strategy: st.SearchStrategy[Any] | None = None

    def get(self) -> st.SearchStrategy[Any]:
        if self.strategy is None:
            self.strategy = self._build()
        return self.strategy

    def __repr__(self) -> str:
        return self.text


def _draw(draw: st.DrawFn, plan: _Plan) -> Any:
    return draw(plan.get())


# Named like the public function so the strategy's repr reads like the user's call.
_draw.__name__ = _draw.__qualname__ = "from_message"
_from_message = st.composite(_draw)
