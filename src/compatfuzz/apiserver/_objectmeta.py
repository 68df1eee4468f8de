"""ObjectMeta as the API server decodes it: a round trip through ``metav1.ObjectMeta``.

Mirrors apiextensions-apiserver ``pkg/apiserver/schema/objectmeta/{coerce,algorithm}.go``
(``GetObjectMetaWithOptions``, ``SetObjectMeta``, ``CoerceWithOptions``) with
apimachinery's JSON rules for ``metav1.ObjectMeta`` (``pkg/apis/meta/v1/types.go``,
``time.go``) and ``runtime.DefaultUnstructuredConverter`` (``pkg/runtime/converter.go``):

* unknown ``metadata`` fields are dropped (a CRD schema cannot declare them);
* ``omitempty`` drops empty strings, zero numbers, empty maps and lists, nil pointers;
  ``ownerReferences`` keep ``apiVersion``/``kind``/``name``/``uid`` even when empty;
* times are parsed as RFC 3339 and written back in UTC with whole seconds
  (``2024-01-02T03:04:05.5+01:00`` is stored as ``2024-01-02T02:04:05Z``); an unset
  ``creationTimestamp`` is omitted (``omitzero``), a zero ``*Time`` is written as null;
* a value of the wrong type makes the whole metadata invalid (the request is rejected),
  unless malformed fields are dropped one by one, as when reading from storage.

These are the node-level steps, over a built :class:`Node`; ``coerce``, which takes a
schema, is in ``_structural`` (building the view coerces each default with
:func:`coerce_node`, so this module cannot import the builder).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from compatfuzz.apiserver._structural_node import Node
from compatfuzz.errors import CompatfuzzError

__all__ = ["Rejected", "coerce_node", "object_meta"]


class Rejected(CompatfuzzError):
    """The API server would reject the object (or a conversion response); ``path`` says where."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class _Malformed(Exception):
    pass


# What Go's time.Parse(time.RFC3339, s) takes, which metav1.Time.UnmarshalJSON calls
# (apimachinery pkg/apis/meta/v1/time.go): the fast path (time/format_rfc3339.go,
# parseRFC3339) or else the layout parser (time/format.go, parse): ASCII digits only, an
# upper-case "T" and "Z" (the layout's literals; "2026-01-02t03:04:05z" is refused), a
# one- or two-digit hour (stdHour is getnum(value, false): "T3:04:05Z" is accepted),
# a fraction after "." or ",", offsets up to 24:60.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})\Z"
)


# The Gregorian calendar repeats every 400 years (146097 days): Go's years 0 and 10000,
# which Python's datetime cannot hold, are computed 400 years away and shifted back.
_CYCLE = 400


def _time(value: Any) -> str | None:
    """``metav1.Time``: JSON null is the zero time; else RFC 3339, written in UTC seconds.

    Go's ``time.Parse`` takes years 0000-9999 and zone offsets up to 24:60
    (``time/format_rfc3339.go``); ``MarshalJSON`` writes the UTC instant, so years 0 and
    10000 can come out. The zero time is the instant 0001-01-01T00:00:00Z, whatever zone
    spells it.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Malformed("a time must be a string")
    m = _RFC3339.match(value)
    if not m:
        raise _Malformed(f"cannot parse {value!r} as RFC 3339")
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    zone = m.group(8)
    if h > 23 or mi > 59 or s > 59:
        raise _Malformed(f"cannot parse {value!r} as RFC 3339: time out of range")
    offset = 0
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 24 or om > 60:
            raise _Malformed(f"cannot parse {value!r} as RFC 3339: offset out of range")
        offset = (oh * 60 + om) * (1 if zone[0] == "+" else -1)
    shift = _CYCLE if y < _CYCLE else -_CYCLE if y > 9999 - _CYCLE else 0
    try:
        when = datetime.datetime(y + shift, mo, d, h, mi, s)
    except ValueError as exc:
        raise _Malformed(f"cannot parse {value!r} as RFC 3339: {exc}") from None
    utc = when - datetime.timedelta(minutes=offset)
    year = utc.year - shift
    if (year, utc.month, utc.day, utc.hour, utc.minute, utc.second) == (1, 1, 1, 0, 0, 0):
        return None  # Go's zero time reads back as unset
    return f"{year:04d}" + utc.strftime("-%m-%dT%H:%M:%SZ")


def _string(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Malformed("must be a string")
    return value


def _int64(value: Any) -> int:
    """An int64 field as ``GetObjectMetaWithOptions`` reads it (objectmeta/coerce.go).

    The server re-marshals the decoded metadata with ``utiljson.Marshal`` and unmarshals
    that text into ``metav1.ObjectMeta``. encoding/json writes a float64 below 1e21 with
    its shortest round-tripping digits padded with zeros (``encode.go`` floatEncoder:
    ``-4.212749141137949e16`` is ``-42127491411379490``, not the float's exact value
    ``...488``), and the int64 is parsed from that text; Python's ``repr`` gives the same
    shortest digits. A fraction (or the exponent form from 1e21 on) does not fit an int64.
    """
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Malformed("must be an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise _Malformed("must be an integer")
        value = int(Decimal(repr(value)))
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise _Malformed("out of range for int64")
    return number


def _bool(value: Any) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise _Malformed("must be a boolean")
    return value


def _string_map(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Malformed("must be a map of strings")
    return {k: _string(v) for k, v in value.items()}


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Malformed("must be a list of strings")
    return [_string(v) for v in value]


def _struct_list(value: Any, read: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Malformed("must be a list")
    return [read(v) for v in value]


def _owner(value: Any) -> dict[str, Any]:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise _Malformed("must be an object")
    out: dict[str, Any] = {k: _string(value.get(k)) for k in ("apiVersion", "kind", "name",
                                                               "uid")}
    for k in ("controller", "blockOwnerDeletion"):
        flag = _bool(value.get(k))
        if flag is not None:
            out[k] = flag
    return out


def _managed(value: Any) -> dict[str, Any]:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise _Malformed("must be an object")
    out: dict[str, Any] = {}
    for k in ("manager", "operation", "apiVersion", "fieldsType", "subresource"):
        text = _string(value.get(k))
        if text:
            out[k] = text
    if value.get("time") is not None:
        out["time"] = _time(value["time"])  # a *Time: the zero time is written as null
    if value.get("fieldsV1") is not None:
        out["fieldsV1"] = value["fieldsV1"]
    return out


# field -> (reader, whether the value is written back when empty)
_FIELDS: dict[str, Callable[[Any], Any]] = {
    "name": _string, "generateName": _string, "namespace": _string, "selfLink": _string,
    "uid": _string, "resourceVersion": _string, "generation": _int64,
    "creationTimestamp": _time, "deletionTimestamp": _time,
    "deletionGracePeriodSeconds": lambda v: None if v is None else _int64(v),
    "labels": _string_map, "annotations": _string_map,
    "ownerReferences": lambda v: _struct_list(v, _owner),
    "finalizers": _strings,
    "managedFields": lambda v: _struct_list(v, _managed),
}
_POINTERS = frozenset({"deletionTimestamp", "deletionGracePeriodSeconds"})


def _empty(field: str, value: Any) -> bool:
    if field in _POINTERS:
        return value is None
    return value in ("", 0, None) or (isinstance(value, dict | list) and not value)


def object_meta(metadata: Any, *, drop_invalid: bool, root: bool) -> dict[str, Any]:
    """Return ``metadata`` as the server writes it back after decoding it into ObjectMeta.

    Raises:
        Rejected: a field has the wrong type and ``drop_invalid`` is off.
    """
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise Rejected(f"invalid metadata: expected object, got {type(metadata).__name__}",
                       "metadata")
    decoded: dict[str, Any] = {}
    for key, value in metadata.items():
        reader = _FIELDS.get(key)
        if reader is None:
            continue  # unknown fields are dropped by json.Unmarshal
        try:
            decoded[key] = reader(value)
        except _Malformed as exc:
            if not drop_invalid:
                raise Rejected(str(exc), f"metadata.{key}") from None
    out: dict[str, Any] = {}
    for key in _FIELDS:
        if key in decoded and not _empty(key, decoded[key]):
            out[key] = decoded[key]
        elif key in _POINTERS and key in decoded and metadata.get(key) is not None:
            out[key] = None  # a non-nil *Time holding the zero time is written as null
    return out


def coerce_node(x: Any, s: Node | None, *, drop_invalid: bool, path: str = "") -> Any:
    """``objectmeta.Coerce`` in place below the root; returns ``x``."""
    if s is None:
        return x
    if isinstance(x, dict):
        for k in list(x):
            v = x[k]
            if s.embedded:
                if k in ("apiVersion", "kind") and not isinstance(v, str):
                    if drop_invalid:
                        del x[k]
                        continue
                    raise Rejected("must be a string", _join(path, k))
                if k == "metadata":
                    try:
                        meta = object_meta(v, drop_invalid=drop_invalid, root=False)
                    except Rejected as exc:
                        if drop_invalid:  # objectmeta/algorithm.go: "pass through on error"
                            continue
                        raise Rejected(str(exc).split(": ", 1)[-1],
                                       _join(path, exc.path)) from None
                    x[k] = meta
                    v = meta
            prop = s.properties.get(k)
            if prop is not None:
                coerce_node(v, prop, drop_invalid=drop_invalid, path=_join(path, k))
            elif s.has_additional:
                coerce_node(v, s.additional, drop_invalid=drop_invalid, path=_join(path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            coerce_node(v, s.items, drop_invalid=drop_invalid, path=f"{path}[{i}]")
    return x


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
