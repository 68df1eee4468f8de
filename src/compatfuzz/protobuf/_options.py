"""Read custom options (validate rules, work-in-progress status) straight from the wire.

Why the wire: a revision's options are extensions (``(validate.rules)``,
``(udpa.annotations.file_status)``...) that the protobuf runtime only decodes when the
extension is registered in the pool that parsed the options, and each revision has its own
private pool. The serialized options keep unknown extensions byte for byte, so reading the
extension's field number and decoding the payload with the revision's own
``validate.FieldRules`` class works whatever the input form (``.proto``, descriptor set,
``_pb2``). Field numbers are those of the upstream files:

* protoc-gen-validate ``validate/validate.proto``: ``FieldOptions``/``MessageOptions``/
  ``OneofOptions`` 1071 (``rules``/``disabled``/``required``), ``MessageOptions`` 1072
  (``ignored``).
* protovalidate ``buf/validate/validate.proto``: 1159 on field, message and oneof options.
* ``udpa/annotations/status.proto``: ``FileOptions`` 222707719 ``file_status``;
  ``xds/annotations/v3/status.proto``: 226829418 on file, message and field options. In
  both, field 1 of the annotation is ``work_in_progress`` (Envoy's API_VERSIONING.md
  exceptions).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

__all__ = [
    "PGV",
    "PROTOVALIDATE",
    "field_rules",
    "is_work_in_progress",
    "message_flags",
    "oneof_required",
    "wire_fields",
]

PGV = 1071
PGV_IGNORED = 1072
PROTOVALIDATE = 1159
UDPA_FILE_STATUS = 222707719
XDS_STATUS = 226829418

_RULE_TYPES = {
    PGV: ("validate.FieldRules",),
    PROTOVALIDATE: ("buf.validate.FieldRules", "buf.validate.FieldConstraints"),
}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise DecodeError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise DecodeError("varint too long")


def wire_fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """``(number, wire type, value)`` for each field of serialized message ``data``;
    length-delimited values are ``bytes``, the rest ints (fixed ones raw little-endian)."""
    pos = 0
    value: Any
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wtype = key >> 3, key & 7
        if wtype == 0:
            value, pos = _varint(data, pos)
        elif wtype == 1:
            value, pos = int.from_bytes(data[pos:pos + 8], "little"), pos + 8
        elif wtype == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wtype == 5:
            value, pos = int.from_bytes(data[pos:pos + 4], "little"), pos + 4
        else:
            raise DecodeError(f"unsupported wire type {wtype}")
        yield number, wtype, value


def _extension(options: Message, number: int) -> list[Any]:
    try:
        return [v for n, _, v in wire_fields(options.SerializeToString()) if n == number]
    except DecodeError:
        return []


def _rules_class(pool: descriptor_pool.DescriptorPool, number: int) -> type[Message] | None:
    for name in _RULE_TYPES[number]:
        try:
            cls: type[Message] = message_factory.GetMessageClass(
                pool.FindMessageTypeByName(name))
            return cls
        except KeyError:
            continue
    return None


def field_rules(options: Message, pool: descriptor_pool.DescriptorPool
                ) -> tuple[str, Message] | None:
    """The field's validate rules as ``("pgv" | "protovalidate", FieldRules)``, or ``None``.

    Decoded with the revision's own ``FieldRules`` class (the file that uses the option
    imports its definition, so it is in the pool).
    """
    for number, kind in ((PGV, "pgv"), (PROTOVALIDATE, "protovalidate")):
        payloads = _extension(options, number)
        if not payloads or not isinstance(payloads[-1], bytes):
            continue
        cls = _rules_class(pool, number)
        if cls is None:
            continue
        msg = cls()
        for p in payloads:  # repeated occurrences of a message extension merge
            msg.MergeFromString(p)
        return kind, msg
    return None


def message_flags(options: Message) -> dict[str, bool]:
    """PGV ``disabled`` / ``ignored`` on a message (validation skipped entirely)."""
    out = {"disabled": False, "ignored": False}
    for number, name in ((PGV, "disabled"), (PGV_IGNORED, "ignored")):
        values = _extension(options, number)
        if values and isinstance(values[-1], int):
            out[name] = bool(values[-1])
    for payload in _extension(options, PROTOVALIDATE):
        if isinstance(payload, bytes):
            for n, _, v in wire_fields(payload):
                if n == 1 and v:  # MessageRules.disabled
                    out["disabled"] = True
    return out


def oneof_required(options: Message) -> bool:
    """Whether a oneof must have one member set (PGV ``required``, protovalidate
    ``(buf.validate.oneof).required``)."""
    values = _extension(options, PGV)
    if values and isinstance(values[-1], int) and values[-1]:
        return True
    for payload in _extension(options, PROTOVALIDATE):
        if isinstance(payload, bytes):
            for n, _, v in wire_fields(payload):
                if n == 1 and v:
                    return True
    return False


def is_work_in_progress(options: Message) -> bool:
    """Whether ``options`` (file, message or field) carry a ``work_in_progress: true``
    status annotation (udpa or xds), one of Envoy's exceptions to its versioning policy."""
    for number in (UDPA_FILE_STATUS, XDS_STATUS):
        for payload in _extension(options, number):
            if not isinstance(payload, bytes):
                continue
            try:
                if any(n == 1 and v for n, _, v in wire_fields(payload)):
                    return True
            except DecodeError:
                continue
    return False
