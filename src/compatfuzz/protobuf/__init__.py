"""Protobuf APIs versioned by package (Envoy/xDS): loading, strategies, breaking changes.

``load_protos`` reads ``.proto`` trees (compiled with grpcio-tools' protoc), descriptor sets
or ``_pb2`` modules; ``from_message`` generates messages that meet their protoc-gen-validate
/ protovalidate rules; ``check_protos``/``diff_protos`` apply Envoy's API versioning policy
and prove each finding with a witness; ``roundtrip_message`` and ``equivalent`` check
binary <-> JSON <-> YAML round trips; ``ProtoAPI`` runs them, and the round trips through
the user's converters between package versions, in ``compatfuzz fuzz`` and the pytest
plugin (``proto = ...`` in ``compatfuzz.toml``). Needs the ``compatfuzz[protobuf]`` extra.
See ``docs/protobuf.md``.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.protobuf._api import ProtoAPI
from compatfuzz.protobuf._diff import PROTO_RULES, ProtoReport, check_protos, diff_protos
from compatfuzz.protobuf._load import ProtoSchema, load_protos
from compatfuzz.protobuf._roundtrip import (
    ENCODINGS,
    Trip,
    check_converter,
    equivalent,
    roundtrip_message,
    roundtrip_test,
)
from compatfuzz.protobuf._strategies import from_message, to_json
from compatfuzz.protobuf._validate import Violation, violations
from compatfuzz.protobuf._witness import by_name, by_number

__all__ = [
    "ENCODINGS",
    "PROTO_RULES",
    "ProtoAPI",
    "ProtoReport",
    "ProtoSchema",
    "Trip",
    "Violation",
    "by_name",
    "by_number",
    "check_converter",
    "check_protos",
    "diff_protos",
    "equivalent",
    "from_message",
    "load_protos",
    "roundtrip_message",
    "roundtrip_test",
    "to_json",
    "violations",
]

_rehome(globals())
