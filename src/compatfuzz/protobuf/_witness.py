"""Witnesses for protobuf changes: a config OLD accepts that NEW rejects or reads differently.

Why three encodings: Envoy treats YAML/JSON as first-class inputs (API_VERSIONING.md), so a
field rename breaks although the wire format survives, while a renumbering keeps JSON
working and breaks binary. A candidate message built for OLD is tried as

1. proto3 JSON with original field names (what Envoy's YAML configs use),
2. proto3 JSON with ``json_name`` spellings,
3. binary,

and it is a witness if NEW refuses it (parse error or a validate rule) or reads a different
value. "Different" is compared *by field number* (:func:`by_number`): that way an int32 ->
int64 change reads equal, a rename reads equal in binary, and an int32 -> sint32 change or a
renumbering does not; NaN equals NaN and map order does not matter.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from compatfuzz.compat import Side
from compatfuzz.protobuf._load import ProtoSchema
from compatfuzz.protobuf._validate import violations

__all__ = ["Break", "any_break", "breaks", "by_name", "by_number", "caused_by", "naming_rule",
           "search"]


@dataclass(frozen=True)
class Break:
    """How NEW fails a value OLD accepts: the encoding, the value as sent, and why."""

    encoding: str  # "json" | "json-camel" | "binary" | "any"
    value: Any
    reason: str
    message: str = ""  # full name of the message ``value`` is an instance of
    side: Side = Side.REQUEST  # request: OLD's value, NEW fails it; response: the reverse


def _float_key(v: float) -> Any:
    return ("nan",) if math.isnan(v) else struct.pack("<d", v)


def by_number(msg: Message) -> Any:
    """A comparable form of ``msg`` keyed by field numbers (unknown fields left out):
    what a binary reader sees."""
    return _canon(msg, by_name=False)


def by_name(msg: Message) -> Any:
    """A comparable form keyed by field names, enums by value name: what a JSON/YAML
    reader sees."""
    return _canon(msg, by_name=True)


def _canon(msg: Message, *, by_name: bool) -> Any:
    if msg.DESCRIPTOR.full_name == "google.protobuf.Any":
        inner = _unpack(msg)
        if inner is not None:  # packed bytes differ with map order: compare the contents
            return ("any", msg.type_url, _canon(inner, by_name=by_name))
    out: dict[Any, Any] = {}
    for fd, value in msg.ListFields():
        if fd.is_extension:
            continue
        out[fd.name if by_name else fd.number] = _value_key(fd, value, by_name)
    return tuple(sorted(out.items(), key=lambda kv: str(kv[0])))


def _unpack(msg: Message) -> Message | None:
    from google.protobuf import message_factory

    name = msg.type_url.rsplit("/", 1)[-1]
    try:
        desc = msg.DESCRIPTOR.file.pool.FindMessageTypeByName(name)
        inner: Message = message_factory.GetMessageClass(desc).FromString(
            msg.value)
    except (KeyError, DecodeError):
        return None
    return inner


def _named(msg: Message, names: set[str]) -> Any:
    """Top-level fields in ``names``, keyed by name, values compared by number."""
    return sorted((fd.name, _value_key(fd, v, False)) for fd, v in msg.ListFields()
                  if fd.name in names and not fd.is_extension)


def _scalar_key(fd: FieldDescriptor, v: Any, by_name: bool) -> Any:
    if isinstance(v, Message):
        return _canon(v, by_name=by_name)
    if fd.enum_type is not None and isinstance(v, int):
        known = fd.enum_type.values_by_number.get(v)
        if by_name:
            return ("enum", known.name if known is not None else v)
        # by number, but a number NEW no longer defines reads as "unknown", not as SLOW
        return ("enum", v, known is not None)
    if isinstance(v, float):
        return _float_key(v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, bytes):
        return ("b", v)
    if isinstance(v, bool):
        return ("bool", v)
    return v


def _value_key(fd: FieldDescriptor, value: Any, by_name: bool) -> Any:
    is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
    if is_map:
        vf = fd.message_type.fields_by_name["value"]
        return ("map", tuple(sorted((repr(k), _scalar_key(vf, value[k], by_name))
                                    for k in value)))
    if fd.is_repeated:
        return ("list", tuple(_scalar_key(fd, v, by_name) for v in value))
    return _scalar_key(fd, value, by_name)


def _cls(schema: ProtoSchema, desc: Descriptor) -> type[Message]:
    return schema.message_class(desc.full_name)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def breaks(old: ProtoSchema, new: ProtoSchema, name: str, old_msg: Message
           ) -> Break | None:
    """Whether NEW rejects or misreads ``old_msg`` (valid under OLD) in some encoding."""
    found = _breaks(old, new, name, old_msg)
    return None if found is None else Break(found.encoding, found.value, found.reason, name)


def _breaks(old: ProtoSchema, new: ProtoSchema, name: str, old_msg: Message
            ) -> Break | None:
    try:
        new_cls = new.message_class(new.message(name))
    except Exception:  # message gone: the Any witness covers it
        return None
    old_key, old_names = by_number(old_msg), by_name(old_msg)
    for encoding, preserve in (("json", True), ("json-camel", False)):
        try:
            doc = json_format.MessageToDict(old_msg, preserving_proto_field_name=preserve,
                                            descriptor_pool=old.pool)
        except Exception:  # OLD cannot write it as JSON: no JSON witness
            continue
        try:
            parsed = json_format.ParseDict(doc, new_cls(), descriptor_pool=new.pool)
        except (json_format.ParseError, ValueError, TypeError, KeyError) as exc:
            return Break(encoding, doc, "NEW rejects it: " + _short(str(exc)))
        bad = violations(parsed)
        if bad:
            return Break(encoding, doc, "NEW's validate rules reject it: " + _short(str(bad[0])))
        if by_name(parsed) != old_names:
            return Break(encoding, doc, "NEW reads a different value: " + _short(
                str(json_format.MessageToDict(parsed, preserving_proto_field_name=True,
                                              descriptor_pool=new.pool))))
    data = old_msg.SerializeToString()
    try:
        parsed = new_cls.FromString(data)
    except DecodeError as exc:
        return Break("binary", _binary_value(old, old_msg, data), f"NEW cannot decode it: {exc}")
    # by number, and by name for the fields both sides name: a number now holding another
    # field (its old name moved to a new number) reads "the same" by number only
    shared = set(old_msg.DESCRIPTOR.fields_by_name) & set(new_cls.DESCRIPTOR.fields_by_name)
    if by_number(parsed) != old_key or _named(parsed, shared) != _named(old_msg, shared):
        try:
            reading = json_format.MessageToDict(parsed, preserving_proto_field_name=True,
                                                descriptor_pool=new.pool)
        except Exception:
            reading = str(parsed)
        return Break("binary", _binary_value(old, old_msg, data),
                     "NEW decodes a different value: " + _short(str(reading)))
    bad = violations(parsed)
    if bad:
        return Break("binary", _binary_value(old, old_msg, data),
                     "NEW's validate rules reject it: " + _short(str(bad[0])))
    return None


def _binary_value(old: ProtoSchema, msg: Message, data: bytes) -> dict[str, Any]:
    try:
        as_json: Any = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                                 descriptor_pool=old.pool)
    except Exception:
        as_json = str(msg)
    return {"binary_base64": base64.b64encode(data).decode(), "old_reads": as_json}


def any_break(old: ProtoSchema, new: ProtoSchema, name: str) -> Break | None:
    """An ``Any`` naming message ``name``: OLD resolves its type URL, NEW cannot (how
    Envoy loads ``typed_config``)."""
    from google.protobuf import any_pb2

    doc = {"@type": f"type.googleapis.com/{name}"}
    try:
        json_format.ParseDict(doc, any_pb2.Any(), descriptor_pool=old.pool)
    except Exception:  # OLD cannot read it either: no witness
        return None
    try:
        json_format.ParseDict(doc, any_pb2.Any(), descriptor_pool=new.pool)
    except Exception as exc:
        return Break("any", doc, "NEW rejects it: " + _short(str(exc)), "google.protobuf.Any")
    return None


def caused_by(old: ProtoSchema, new: ProtoSchema, name: str, fields: set[str], *,
              on_field: bool = False) -> Callable[[Message], bool]:
    """Whether ``fields`` (full or short names of fields of message ``name``) are what
    makes NEW fail a message, so that a witness proves *its* finding and not another
    change of the same message (a tightened ``name`` rule would otherwise confirm a
    renumbered ``lb_policy``).

    The counterfactual: with those fields cleared, NEW no longer fails the message. When
    clearing them leaves a message OLD's own rules refuse (a required field), a witness
    counts only if one of NEW's rule violations is on one of them.

    With ``on_field`` (a validate finding) the witness must break a rule of that very
    field: one of NEW's violations is on the field itself, not on a field nested in it,
    whose own rules may have changed too.
    """
    shorts = {f.rsplit(".", 1)[-1] for f in fields}

    def new_violations(msg: Message) -> list[Any]:
        try:
            doc = json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                            descriptor_pool=old.pool)
        except Exception:
            return []
        return _new_violations(new, name, doc) or []

    if on_field:
        return lambda msg: any(_on(v, shorts) for v in new_violations(msg))

    def about(msg: Message) -> bool:
        cleared = type(msg)()
        cleared.CopyFrom(msg)
        for short in shorts:
            if short in msg.DESCRIPTOR.fields_by_name:
                cleared.ClearField(short)
        if not violations(cleared):
            return _breaks(old, new, name, cleared) is None
        return any(_on(v, shorts, nested=True) for v in new_violations(msg))

    return about


def _new_violations(new: ProtoSchema, name: str, doc: Any) -> list[Any] | None:
    """NEW's rule violations of the proto3 JSON ``doc`` of message ``name``; None when
    NEW cannot read it at all."""
    try:
        parsed = json_format.ParseDict(doc, new.message_class(new.message(name))(),
                                       descriptor_pool=new.pool)
    except Exception:
        return None
    return violations(parsed)


def _on(v: Any, shorts: set[str], *, nested: bool = False) -> bool:
    """Whether violation ``v`` is on one of the fields ``shorts`` itself (``tags`` or
    ``tags[2]``), or, with ``nested``, anywhere inside one (``tags[2].name``)."""
    head = v.path.split(".")[0]
    return head.split("[")[0] in shorts and (nested or head == v.path)


def _names(rule: str, v: Any) -> bool:
    """Whether violation ``v`` is of ``rule`` (``uint32.lt/lte``: either bound word)."""
    text = f"{v.rule} {v.message}"
    return any(word in text for word in rule.rsplit(".", 1)[-1].split("/"))


def naming_rule(new: ProtoSchema, name: str, found: Break, field: str, rule: str) -> Break:
    """``found`` with its reason naming the violation of ``rule`` on ``field`` (NEW may
    reject the witness for other reasons too; the first of them would mislead)."""
    if found.encoding not in ("json", "json-camel") or not isinstance(found.value, dict):
        return found
    short = field.rsplit(".", 1)[-1]
    mine = [v for v in _new_violations(new, name, found.value) or () if _on(v, {short})]
    if not mine:
        return found
    mine.sort(key=lambda v: not _names(rule, v))  # the finding's own rule first
    return Break(found.encoding, found.value,
                 "NEW's validate rules reject it: " + _short(str(mine[0])), found.message,
                 found.side)


def search(old: ProtoSchema, new: ProtoSchema, name: str,
           strategy: st.SearchStrategy[Message], *, budget: int, seed: int,
           about: Callable[[Message], bool] | None = None) -> Break | None:
    """Search ``strategy`` (messages valid under OLD) for a shrunk witness; with
    ``about`` (see :func:`caused_by`), only for one the finding's own fields cause."""
    found: dict[str, Break] = {}

    def predicate(msg: Message) -> bool:
        if violations(msg):
            return False
        b = breaks(old, new, name, msg)
        if b is not None and (about is None or about(msg)):
            found["b"] = b
            return True
        return False

    try:
        msg = find(strategy, predicate, settings=settings(
            max_examples=budget, database=None, deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate, Phase.shrink]), random=_random(seed))
    except (NoSuchExample, Unsatisfiable):
        return None
    final = breaks(old, new, name, msg)
    return final if final is not None else found.get("b")


def _random(seed: int) -> Any:
    import random

    return random.Random(seed)
