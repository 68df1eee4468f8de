"""Check a message against its protoc-gen-validate / protovalidate rules.

Why our own evaluator: PGV's Python package generates code at run time from the global pool
and protovalidate's wheel needs a different protobuf runtime; a revision here lives in a
private pool. Both rule languages share field names (``lt``, ``min_len``, ``min_items``,
``pattern``, ``well_known``...), so one evaluator walks either ``FieldRules`` by name.

The evaluator decides "accepted by OLD, rejected by NEW" for ``compatfuzz diff`` witnesses
and is the final check of generated messages. Rules it cannot judge (CEL expressions,
``lt_now``/``gt_now``/``within``) are returned by :func:`unsupported_rules`, never silently
treated as passing.
"""

from __future__ import annotations

import ipaddress
import math
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from compatfuzz.protobuf._options import field_rules, message_flags, oneof_required

__all__ = ["Violation", "rules_of", "unsupported_rules", "violations"]

_NUMERIC = ("float", "double", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
            "fixed32", "fixed64", "sfixed32", "sfixed64")
_WRAPPERS = {
    "google.protobuf.DoubleValue": "double", "google.protobuf.FloatValue": "float",
    "google.protobuf.Int64Value": "int64", "google.protobuf.UInt64Value": "uint64",
    "google.protobuf.Int32Value": "int32", "google.protobuf.UInt32Value": "uint32",
    "google.protobuf.BoolValue": "bool", "google.protobuf.StringValue": "string",
    "google.protobuf.BytesValue": "bytes",
}
# PGV's KnownRegex (string.well_known_regex): Envoy uses these for header names/values
HEADER_NAME = re.compile(r"^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$")
HEADER_VALUE = re.compile(r"^[^\x00-\x08\x0A-\x1F\x7F]*$")
HEADER_LOOSE = re.compile(r"^[^\x00\n\r]*$")
_HOST_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")


@dataclass(frozen=True)
class Violation:
    """One failed rule: where (``field.sub[2]``), which rule (``string.min_len``), why."""

    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '$'}: {self.rule}: {self.message}"


def rules_of(field: FieldDescriptor) -> tuple[str, Message] | None:
    """The validate rules on ``field`` (``("pgv"|"protovalidate", FieldRules)``) or None."""
    pool = field.file.pool
    return field_rules(field.GetOptions(), pool)


def _set(rules: Message) -> dict[str, Any]:
    return {fd.name: v for fd, v in rules.ListFields()}


def _which(rules: Message) -> tuple[str, Message] | None:
    """The type-specific sub-rules (``("uint32", UInt32Rules)``)."""
    for fd, v in rules.ListFields():
        if fd.message_type is not None and fd.name not in ("cel",) and \
                not fd.is_repeated:
            return fd.name, v
    return None


def unsupported_rules(rules: Message) -> list[str]:
    """Rule names the evaluator cannot judge (CEL, clock-relative timestamp rules)."""
    out = []
    top = _set(rules)
    if top.get("cel"):
        out.append("cel")
    which = _which(rules)
    if which is not None:
        name, sub = which
        s = _set(sub)
        for key in ("lt_now", "gt_now", "within", "cel", "example"):
            if s.get(key):
                out.append(f"{name}.{key}")
        if name == "repeated" and "items" in s:
            out += [f"repeated.items.{r}" for r in unsupported_rules(s["items"])]
        if name == "map":
            for k in ("keys", "values"):
                if k in s:
                    out += [f"map.{k}.{r}" for r in unsupported_rules(s[k])]
    return out


def _range_violation(value: Any, s: dict[str, Any]) -> str | None:
    """PGV/protovalidate range semantics: with both bounds, lower > upper means the value
    must lie *outside* the range ("gt: 10, lt: 5")."""
    lo_key = "gt" if "gt" in s else "gte" if "gte" in s else None
    hi_key = "lt" if "lt" in s else "lte" if "lte" in s else None

    def above(v: Any) -> bool:
        assert lo_key is not None
        return bool(v > s[lo_key]) if lo_key == "gt" else bool(v >= s[lo_key])

    def below(v: Any) -> bool:
        assert hi_key is not None
        return bool(v < s[hi_key]) if hi_key == "lt" else bool(v <= s[hi_key])

    if isinstance(value, float) and math.isnan(value) and (lo_key or hi_key):
        return "NaN is outside every range"
    if lo_key and hi_key:
        if s[lo_key] < s[hi_key] or (s[lo_key] == s[hi_key] and lo_key == "gte"
                                     and hi_key == "lte"):
            ok = above(value) and below(value)
        else:
            ok = above(value) or below(value)
        return None if ok else f"must satisfy {lo_key} {s[lo_key]} and {hi_key} {s[hi_key]}"
    if lo_key and not above(value):
        return f"must be {'>' if lo_key == 'gt' else '>='} {s[lo_key]}"
    if hi_key and not below(value):
        return f"must be {'<' if hi_key == 'lt' else '<='} {s[hi_key]}"
    return None


def _membership(value: Any, s: dict[str, Any]) -> str | None:
    if "const" in s and value != s["const"]:
        return f"must equal {s['const']!r}"
    if s.get("in") and value not in list(s["in"]):
        return f"must be one of {list(s['in'])!r}"
    if s.get("not_in") and value in list(s["not_in"]):
        return f"must not be one of {list(s['not_in'])!r}"
    return None


def _hostname(v: str) -> bool:
    if not v or len(v) > 253:
        return False
    labels = v[:-1].split(".") if v.endswith(".") else v.split(".")
    return all(_HOST_LABEL.match(lbl) for lbl in labels)


def _ip(v: str | bytes, version: int | None) -> bool:
    try:
        addr = (ipaddress.ip_address(v) if isinstance(v, str)
                else ipaddress.ip_address(bytes(v)))
    except ValueError:
        return False
    return version is None or addr.version == version


def _uri(v: str, *, ref: bool) -> bool:
    if any(c.isspace() for c in v):
        return False
    try:
        parsed = urlparse(v)
    except ValueError:
        return False
    return ref or bool(parsed.scheme)


def _string_violation(value: str, s: dict[str, Any]) -> str | None:
    n, nb = len(value), len(value.encode("utf-8"))
    checks: list[tuple[str, Callable[[], bool], str]] = [
        ("len", lambda: n == s["len"], "characters exactly"),
        ("min_len", lambda: n >= s["min_len"], "characters at least"),
        ("max_len", lambda: n <= s["max_len"], "characters at most"),
        ("len_bytes", lambda: nb == s["len_bytes"], "bytes exactly"),
        ("min_bytes", lambda: nb >= s["min_bytes"], "bytes at least"),
        ("max_bytes", lambda: nb <= s["max_bytes"], "bytes at most"),
    ]
    for key, ok, what in checks:
        if key in s and not ok():
            return f"{key}: {s[key]} {what}, got {n if 'bytes' not in what else nb}"
    if "pattern" in s and re2.search(s["pattern"], value) is None:
        return f"does not match pattern {s['pattern']!r}"
    for key, ok2 in (("prefix", value.startswith), ("suffix", value.endswith),
                     ("contains", value.__contains__)):
        if key in s and not ok2(s[key]):
            return f"{key} {s[key]!r} missing"
    if "not_contains" in s and s["not_contains"] in value:
        return f"must not contain {s['not_contains']!r}"
    wk: dict[str, Callable[[], bool]] = {
        "email": lambda: bool(_EMAIL.match(value)) and _hostname(value.rsplit("@", 1)[-1]),
        "hostname": lambda: _hostname(value),
        "ip": lambda: _ip(value, None), "ipv4": lambda: _ip(value, 4),
        "ipv6": lambda: _ip(value, 6),
        "uri": lambda: _uri(value, ref=False), "uri_ref": lambda: _uri(value, ref=True),
        "address": lambda: _ip(value, None) or _hostname(value),
        "uuid": lambda: _is_uuid(value),
    }
    for key, ok3 in wk.items():
        if s.get(key) and not ok3():
            return f"is not a valid {key}"
    if s.get("well_known_regex"):
        strict = s.get("strict", True)
        rx = {1: HEADER_NAME, 2: HEADER_VALUE}.get(s["well_known_regex"])
        if rx is not None and not strict:
            rx = HEADER_LOOSE
        if rx is not None and not rx.match(value):
            return f"is not a valid HTTP header {'name' if s['well_known_regex'] == 1 else 'value'}"
    return _membership(value, s)


def _is_uuid(value: str) -> bool:
    if len(value) != 36:
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _bytes_violation(value: bytes, s: dict[str, Any]) -> str | None:
    n = len(value)
    for key, ok in (("len", n == s.get("len")), ("min_len", n >= s.get("min_len", 0)),
                    ("max_len", n <= s.get("max_len", n))):
        if key in s and not ok:
            return f"{key} {s[key]} bytes, got {n}"
    for key, ok2 in (("prefix", value.startswith), ("suffix", value.endswith),
                     ("contains", value.__contains__)):
        if key in s and not ok2(s[key]):
            return f"{key} {s[key]!r} missing"
    for key, version in (("ip", None), ("ipv4", 4), ("ipv6", 6)):
        if s.get(key) and not (len(value) in (4, 16) and _ip(value, version)):
            return f"is not a valid {key} address"
    if "pattern" in s:
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return "is not UTF-8, cannot match the pattern"
        if re2.search(s["pattern"], text) is None:
            return f"does not match pattern {s['pattern']!r}"
    return _membership(value, s)


def _duration_value(msg: Message) -> int:
    return int(msg.seconds) * 10**9 + int(msg.nanos)


def _time_rules(value: Message, s: dict[str, Any]) -> str | None:
    conv = {k: _duration_value(v) for k, v in s.items()
            if k in ("const", "lt", "lte", "gt", "gte")}
    v = _duration_value(value)
    if "const" in conv and v != conv["const"]:
        return "must equal the const duration/timestamp"
    if s.get("in") and v not in [_duration_value(x) for x in s["in"]]:
        return "must be one of the listed values"
    if s.get("not_in") and v in [_duration_value(x) for x in s["not_in"]]:
        return "must not be one of the listed values"
    return _range_violation(v, conv)


def _scalar_violation(kind: str, value: Any, s: dict[str, Any], field: FieldDescriptor | None
                      ) -> str | None:
    if kind in _NUMERIC:
        return _range_violation(value, s) or _membership(value, s)
    if kind == "bool":
        return _membership(value, s)
    if kind == "string":
        return _string_violation(value, s)
    if kind == "bytes":
        return _bytes_violation(value, s)
    if kind == "enum":
        if s.get("defined_only") and field is not None and field.enum_type is not None \
                and value not in field.enum_type.values_by_number:
            return f"{value} is not a defined value of {field.enum_type.full_name}"
        return _membership(value, s)
    return None


def _empty(value: Any) -> bool:
    if isinstance(value, Message):
        return bool(value.ByteSize() == 0)
    return not value


def _check_value(field: FieldDescriptor, value: Any, rules: Message, path: str,
                 *, has: bool) -> Iterator[Violation]:
    """Rules of one (non-repeated) value. ``has``: the field is present."""
    top = _set(rules)
    which = _which(rules)
    if which is None:
        if top.get("required") and not has:  # protovalidate required
            yield Violation(path, "required", "value is required")
        return
    kind, sub = which
    s = _set(sub)
    if kind == "message":  # PGV MessageRules
        if s.get("required") and not has:
            yield Violation(path, "message.required", "value is required")
        return
    if top.get("required") and not has:
        yield Violation(path, "required", "value is required")
        return
    if s.get("ignore_empty") and _empty(value):
        return
    if top.get("ignore") in (1, 3) and not has:  # protovalidate IGNORE_IF_UNPOPULATED/ZERO
        return
    if field.message_type is not None:
        full = field.message_type.full_name
        if kind == "any":
            if s.get("required") and not has:
                yield Violation(path, "any.required", "value is required")
            elif has and full == "google.protobuf.Any":
                url = value.type_url
                if s.get("in") and url not in list(s["in"]):
                    yield Violation(path, "any.in", f"type {url!r} not allowed")
                if s.get("not_in") and url in list(s["not_in"]):
                    yield Violation(path, "any.not_in", f"type {url!r} not allowed")
            return
        if kind in ("duration", "timestamp"):
            if s.get("required") and not has:
                yield Violation(path, f"{kind}.required", "value is required")
            elif has:
                msg = _time_rules(value, s)
                if msg:
                    yield Violation(path, kind, msg)
            return
        if full in _WRAPPERS:
            if has:
                msg = _scalar_violation(kind, value.value, s, None)
                if msg:
                    yield Violation(path, kind, msg)
            return
        return
    if not has:
        return
    msg = _scalar_violation(kind, value, s, field)
    if msg:
        yield Violation(path, kind, msg)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def violations(msg: Message, *, path: str = "", depth: int = 0) -> list[Violation]:
    """Every validate-rule violation in ``msg`` and its nested messages (empty: valid)."""
    return list(_violations(msg, path, depth))


def _violations(msg: Message, path: str, depth: int) -> Iterator[Violation]:
    desc: Descriptor = msg.DESCRIPTOR
    if depth > 100:
        return
    flags = message_flags(desc.GetOptions())
    if flags["disabled"] or flags["ignored"]:
        return
    for oneof in desc.oneofs:
        if oneof_required(oneof.GetOptions()) and msg.WhichOneof(oneof.name) is None:
            yield Violation(_join(path, oneof.name), "oneof.required",
                            "one member of the oneof must be set")
    for field in desc.fields:
        fpath = _join(path, field.name)
        oneof = field.containing_oneof
        if oneof is not None and msg.WhichOneof(oneof.name) != field.name:
            continue  # PGV: a oneof member's rules (and proto3 optional's) apply when set
        value = getattr(msg, field.name)
        found = rules_of(field)
        rules = found[1] if found else None
        is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
        repeated = field.is_repeated
        if rules is not None:
            top = _set(rules)
            which = _which(rules)
            if repeated and which is not None and which[0] in ("repeated", "map"):
                kind, sub = which
                s = _set(sub)
                n = len(value)
                if s.get("ignore_empty") and n == 0:
                    pass
                else:
                    lo, hi = ("min_items", "max_items") if kind == "repeated" else \
                        ("min_pairs", "max_pairs")
                    if lo in s and n < s[lo]:
                        yield Violation(fpath, f"{kind}.{lo}", f"needs at least {s[lo]}, got {n}")
                    if hi in s and n > s[hi]:
                        yield Violation(fpath, f"{kind}.{hi}", f"allows at most {s[hi]}, got {n}")
                    if kind == "repeated":
                        items = list(value)
                        if s.get("unique") and not _unique(items):
                            yield Violation(fpath, "repeated.unique", "items must be unique")
                        if "items" in s:
                            for i, item in enumerate(items):
                                yield from _check_value(field, item, s["items"], f"{fpath}[{i}]",
                                                        has=True)
                    else:
                        kf, vf = field.message_type.fields_by_name["key"], \
                            field.message_type.fields_by_name["value"]
                        for k in value:
                            v = value[k]
                            if "keys" in s:
                                yield from _check_value(kf, k, s["keys"], f"{fpath}[{k!r}]",
                                                        has=True)
                            if "values" in s:
                                yield from _check_value(vf, v, s["values"], f"{fpath}[{k!r}]",
                                                        has=True)
            elif repeated and top.get("required") and len(value) == 0:
                yield Violation(fpath, "required", "needs at least one item")
            elif not repeated:
                # implicit-presence scalars are always checked (PGV), the rest when set
                has = msg.HasField(field.name) if field.has_presence else True
                yield from _check_value(field, value, rules, fpath, has=has)
        # recurse into nested messages (PGV validates them unless `skip`)
        if field.message_type is None:
            continue
        skip = False
        if rules is not None:
            w = _which(rules)
            skip = w is not None and w[0] == "message" and bool(_set(w[1]).get("skip"))
        if skip:
            continue
        if is_map:
            vf = field.message_type.fields_by_name["value"]
            if vf.message_type is not None:
                for k in value:
                    yield from _violations(value[k], f"{fpath}[{k!r}]", depth + 1)
        elif repeated:
            for i, item in enumerate(value):
                yield from _violations(item, f"{fpath}[{i}]", depth + 1)
        elif msg.HasField(field.name):
            yield from _violations(value, fpath, depth + 1)


def _unique(items: list[Any]) -> bool:
    seen: list[Any] = []
    for it in items:
        key = it.SerializeToString(deterministic=True) if isinstance(it, Message) else it
        if key in seen:
            return False
        seen.append(key)
    return True
