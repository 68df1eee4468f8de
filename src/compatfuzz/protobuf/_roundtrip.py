"""Round trips of protobuf messages: across encodings, and through version converters.

Envoy reads the same config as binary (xDS), proto3 JSON and YAML (bootstrap files), with
original field names or json names. A message must survive each of those trips; and a
user's converter between package versions (``v2 -> v3`` style) must give a message NEW
accepts and convert back to the original. Equality is protobuf-aware
(:func:`equivalent`): presence counts (an explicit ``optional`` zero is not "unset"),
implicit defaults equal unset, NaN equals NaN, map order and ``Any`` packing order do not
matter, unknown fields are ignored. Differences are reported with semantic's field-path
diff of the two JSON forms, rendered as ``roundtrip`` renders a CRD's.

These are the checks; :mod:`._api` runs them as properties of ``roundtrip``'s runner
(``compatfuzz fuzz``, the pytest plugin), and :func:`roundtrip_test` makes one plain
Hypothesis test of them.

protobuf-python's ``json_format`` prints a float32 at +-FLT_MAX as ``3.4028235e+38`` and
then refuses to parse that ("Float value too large"): a JSON or YAML trip that fails only
that way, on a message holding such a value, is that library's bug and not counted
against the API (a strict xfail in ``tests/protobuf/test_strategies.py`` pins the bug).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import given

from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent
from compatfuzz.protobuf._load import ProtoSchema
from compatfuzz.protobuf._strategies import from_message
from compatfuzz.protobuf._validate import violations
from compatfuzz.protobuf._witness import by_name, by_number

__all__ = ["ENCODINGS", "Trip", "check_converter", "check_encodings", "equivalent",
           "expect_equivalent", "expect_valid", "json_form", "roundtrip_message",
           "roundtrip_test"]

ENCODINGS = ("binary", "json", "json-names", "yaml")


@dataclass(frozen=True)
class Trip:
    """One failed trip: the encoding, the text/bytes sent, and what came back differently
    (``changes``: semantic's field-path diff, when the message came back but changed)."""

    encoding: str
    sent: Any
    problem: str
    changes: Any = None


def check_encodings(via: Iterable[str]) -> None:
    """Raise ``InvalidArgument`` for a name that is not one of :data:`ENCODINGS`."""
    for encoding in via:
        if encoding not in ENCODINGS:
            raise InvalidArgument(f"Expected encodings from {ENCODINGS} but got {encoding!r}")


def equivalent(a: Message, b: Message) -> bool:
    """Whether two messages mean the same (see the module docstring for the relation).

    Reflexive, symmetric and transitive: both sides are reduced to one canonical form.
    """
    return bool(by_number(a) == by_number(b) and by_name(a) == by_name(b))


def json_form(msg: Message, *, original_names: bool = True) -> Any:
    """``msg`` as proto3 JSON (a dict), with original field names (Envoy's YAML) or json
    names."""
    return json_format.MessageToDict(msg, preserving_proto_field_name=original_names,
                                     descriptor_pool=msg.DESCRIPTOR.file.pool)


def _explain(a: Message, b: Message) -> tuple[str, Any]:
    """Indented lines saying how ``b`` differs from ``a``, and semantic's changes."""
    from compatfuzz.roundtrip._check._verdict import render_changes
    from compatfuzz.semantic import diff

    try:
        changes = diff(json_form(a), json_form(b))
    except Exception:  # a message JSON cannot write: show both
        return f"  {a} != {b}", None
    if not changes:
        return "  (the messages differ in a way JSON does not show: binary only)", None
    return render_changes(changes), changes


def expect_equivalent(expected: Message, actual: Message, what: str) -> None:
    """Raise ``NotEquivalent("{what}:" + field-path diff)`` unless the two are equivalent."""
    if not equivalent(expected, actual):
        text, changes = _explain(expected, actual)
        raise NotEquivalent(f"{what}:\n{text}", diff=changes)


def expect_valid(msg: Message, what: str) -> None:
    """Raise ``NotEquivalent`` naming each broken validate rule (protoc-gen-validate,
    protovalidate) and each unset proto2 ``required`` field of ``msg``."""
    lines = [f"  {v}" for v in violations(msg)]
    if not msg.IsInitialized():
        lines += [f"  {name}: required field not set" for name in msg.FindInitializationErrors()]
    if lines:
        raise NotEquivalent(f"{what}:\n" + "\n".join(lines[:20]))


_FLT_MAX = 3.4028234663852886e38


def _holds_flt_max(msg: Message) -> bool:
    """Whether a float32 field anywhere in ``msg`` is +-FLT_MAX (see the module docstring)."""
    for fd, value in msg.ListFields():
        values = (value.values() if fd.message_type is not None
                  and fd.message_type.GetOptions().map_entry else
                  value if fd.is_repeated else [value])
        for v in values:
            if isinstance(v, Message):
                if _holds_flt_max(v):
                    return True
            elif (fd.cpp_type == fd.CPPTYPE_FLOAT and isinstance(v, float)
                  and math.isclose(abs(v), _FLT_MAX, rel_tol=1e-9)):
                return True
    return False


def _trip(msg: Message, encoding: str) -> tuple[Any, Message]:
    cls = type(msg)
    pool = msg.DESCRIPTOR.file.pool
    if encoding == "binary":
        data = msg.SerializeToString()
        return data, cls.FromString(data)
    if encoding in ("json", "json-names"):
        text = json_format.MessageToJson(msg, preserving_proto_field_name=encoding == "json",
                                         descriptor_pool=pool)
        return text, json_format.Parse(text, cls(), descriptor_pool=pool)
    if encoding == "yaml":
        plain = json.loads(json_format.MessageToJson(msg, preserving_proto_field_name=True,
                                                     descriptor_pool=pool))
        text = yaml.safe_dump(plain, sort_keys=False)
        return text, json_format.ParseDict(yaml.safe_load(text), cls(), descriptor_pool=pool)
    raise InvalidArgument(f"Expected one of {ENCODINGS} but got encoding={encoding!r}")


def roundtrip_message(msg: Message, *, via: Iterable[str] = ENCODINGS) -> list[Trip]:
    """Send ``msg`` through each encoding and back; the trips that changed it (empty: all
    good). JSON uses original field names (``json``, as Envoy's YAML does) or json names
    (``json-names``); YAML is the JSON form dumped by PyYAML."""
    failed: list[Trip] = []
    for encoding in via:
        try:
            sent, back = _trip(msg, encoding)
        except (json_format.Error, ValueError, TypeError, yaml.YAMLError) as exc:
            if "Float value too" in str(exc) and _holds_flt_max(msg):
                continue  # json_format's own FLT_MAX bug (module docstring)
            failed.append(Trip(encoding, None, f"{type(exc).__name__}: {exc}"))
            continue
        if not equivalent(msg, back):
            text, changes = _explain(msg, back)
            failed.append(Trip(encoding, sent, text.strip(), changes))
    return failed


def check_converter(msg: Message, new: ProtoSchema, message: str,
                    up: Callable[[Message], Message],
                    down: Callable[[Message], Message] | None = None) -> None:
    """``up(msg)`` must be a ``message`` of NEW that passes its validate rules, and
    ``down(up(msg))`` must be equivalent to ``msg``.

    Raises:
        ConverterError: a converter raised or returned something else than a message.
        NotEquivalent: the converted message breaks NEW's rules or does not come back.
    """
    try:
        converted = up(msg)
    except Exception as exc:
        raise ConverterError(f"up-converter raised {type(exc).__name__}: {exc}") from exc
    want = new.message(message).full_name
    if not isinstance(converted, Message) or converted.DESCRIPTOR.full_name != want:
        raise ConverterError(f"up-converter returned {type(converted).__name__}, "
                             f"expected a message of type {want}")
    expect_valid(converted, f"the converted {want} breaks its validate rules")
    if down is None:
        return
    try:
        back = down(converted)
    except Exception as exc:
        raise ConverterError(f"down-converter raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(back, Message) or back.DESCRIPTOR.full_name != msg.DESCRIPTOR.full_name:
        raise ConverterError(f"down-converter returned {type(back).__name__}, expected a "
                             f"message of type {msg.DESCRIPTOR.full_name}")
    expect_equivalent(msg, back, f"{msg.DESCRIPTOR.full_name} -> {want} -> back changed it")


def roundtrip_test(schema: ProtoSchema, message: str, *,
                   via: Sequence[str] = ENCODINGS,
                   new: ProtoSchema | None = None, new_message: str | None = None,
                   up: Callable[[Message], Message] | None = None,
                   down: Callable[[Message], Message] | None = None,
                   **strategy_options: Any) -> Callable[[], None]:
    """Return a Hypothesis test: generated ``message`` values round-trip through ``via``
    and, with ``up`` (and ``down``), through the converters to NEW's ``new_message``.

    Example::

        test_cluster = roundtrip_test(v2, "envoy.api.v2.Cluster", new=v3,
                                      new_message="envoy.config.cluster.v3.Cluster",
                                      up=v2_to_v3, down=v3_to_v2)

    Raises:
        InvalidArgument: ``up`` without ``new``, or an unknown encoding.
    """
    check_encodings(via)
    if up is not None and new is None:
        raise InvalidArgument("roundtrip_test(up=...) needs new=load_protos(...) for NEW")
    target = new_message or message

    @given(from_message(message, schema=schema, **strategy_options))
    def test(msg: Message) -> None:
        failed = roundtrip_message(msg, via=via)
        if failed:
            raise NotEquivalent("; ".join(f"[{t.encoding}] {t.problem}" for t in failed),
                                failed)
        if up is not None:
            assert new is not None
            check_converter(msg, new, target, up, down)

    test.__name__ = f"test_roundtrip_{message.rsplit('.', 1)[-1]}"
    return test
