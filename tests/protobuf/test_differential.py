"""Differential test: the static rules against a direct witness search.

Random mutations of a small tree (renames, renumbering, type and label changes, oneof
wrapping, enum edits, tighter or looser validate bounds) are applied to its descriptor;
messages drawn for OLD are fed to NEW in JSON and binary. A witness with no breaking static
finding is a failure ("a rule that says compatible while a witness exists"), and every
witness the engine reports is re-checked against the protobuf runtime.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import descriptor_pb2
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st

from compatfuzz.compat import Severity
from compatfuzz.protobuf import ProtoSchema, diff_protos, from_message
from compatfuzz.protobuf._witness import breaks
from tests.protobuf._trees import api
from tests.protobuf.test_rules import BASE, _check_witness

OLD = api(BASE)
FDP = descriptor_pb2.FieldDescriptorProto
SCALARS = [FDP.TYPE_INT32, FDP.TYPE_INT64, FDP.TYPE_UINT32, FDP.TYPE_SINT32, FDP.TYPE_STRING,
           FDP.TYPE_BYTES, FDP.TYPE_BOOL, FDP.TYPE_DOUBLE, FDP.TYPE_FIXED32]
NESTED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                        HealthCheck.filter_too_much])


def _root() -> descriptor_pb2.FileDescriptorProto:
    fp = descriptor_pb2.FileDescriptorProto()
    fp.CopyFrom(OLD.file("api.proto"))
    return fp


def _pgv(rules_bytes: bytes) -> descriptor_pb2.FieldOptions:
    """FieldOptions carrying ``(validate.rules)`` (extension 1071) as raw bytes."""
    key = (1071 << 3) | 2
    out = bytearray()
    for number in (key, len(rules_bytes)):
        rest = number
        while True:
            b = rest & 0x7F
            rest >>= 7
            out.append(b | (0x80 if rest else 0))
            if not rest:
                break
    opts = descriptor_pb2.FieldOptions()
    opts.MergeFromString(bytes(out) + rules_bytes)
    return opts


@st.composite
def mutations(draw: st.DrawFn) -> tuple[descriptor_pb2.FileDescriptorProto, list[str]]:
    import validate.validate_pb2 as pgv

    fp = _root()
    msg = fp.message_type[0]  # Cluster
    enum = fp.enum_type[0]  # Mode
    done: list[str] = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["rename", "renumber", "type", "label", "delete", "add",
                                     "oneof", "enum-rename", "enum-renumber", "enum-delete",
                                     "enum-add", "bound"]))
        plain = [f for f in msg.field if not f.HasField("oneof_index")
                 and f.type != FDP.TYPE_ENUM]
        field = draw(st.sampled_from(plain)) if plain else msg.field[0]
        if kind == "rename":
            field.name = draw(st.sampled_from(["renamed", "other", "zz"]))
            field.json_name = ""
        elif kind == "renumber":
            field.number = draw(st.integers(11, 20))
        elif kind == "type":
            field.type = draw(st.sampled_from(SCALARS))
            field.ClearField("type_name")
            field.ClearField("options")
        elif kind == "label":
            field.label = (FDP.LABEL_OPTIONAL if field.label == FDP.LABEL_REPEATED
                           else FDP.LABEL_REPEATED)
            field.ClearField("options")
            field.proto3_optional = False
        elif kind == "delete":
            msg.field.remove(field)
        elif kind == "add":
            msg.field.add(name=f"extra{len(msg.field)}", number=30 + len(msg.field),
                          type=FDP.TYPE_STRING, label=FDP.LABEL_OPTIONAL,
                          json_name=f"extra{len(msg.field)}")
        elif kind == "oneof":
            if field.proto3_optional:
                reject()
            msg.oneof_decl.add(name=f"wrap{len(msg.oneof_decl)}")
            index = len(msg.oneof_decl) - 1
            members = draw(st.lists(st.sampled_from(plain), min_size=1, max_size=2,
                                    unique_by=lambda f: f.number)) if plain else [field]
            for f in members:
                if f.proto3_optional or f.label == FDP.LABEL_REPEATED:
                    reject()
                f.oneof_index = index
        elif kind.startswith("enum-"):
            value = draw(st.sampled_from(list(enum.value)[1:]))
            if kind == "enum-rename":
                value.name = "RENAMED"
            elif kind == "enum-renumber":
                value.number = draw(st.integers(3, 9))
            elif kind == "enum-delete":
                enum.value.remove(value)
            else:
                enum.value.add(name=f"NEW{len(enum.value)}", number=10 + len(enum.value))
        else:  # a new uint32 bound on port: tighter or looser than lte 65535
            port = next((f for f in msg.field if f.name == "port"), None)
            if port is None:  # an earlier mutation deleted or renamed it
                reject()
            bound = draw(st.sampled_from([1, 1024, 65534, 65535, 70000]))
            rules = pgv.FieldRules(uint32=pgv.UInt32Rules(lte=bound))
            port.options.CopyFrom(_pgv(rules.SerializeToString()))
        done.append(kind)
    # oneof members must be contiguous in the descriptor; move them to the end in order
    if msg.oneof_decl:
        fields = sorted(msg.field, key=lambda f: (f.HasField("oneof_index"), f.oneof_index))
        copies = [descriptor_pb2.FieldDescriptorProto() for _ in fields]
        for c, f in zip(copies, fields, strict=True):
            c.CopyFrom(f)
        del msg.field[:]
        msg.field.extend(copies)
    return fp, done


def _schema(fp: descriptor_pb2.FileDescriptorProto) -> ProtoSchema:
    files = [f for f in OLD.files if f.name != "api.proto"] + [fp]
    try:
        return ProtoSchema.from_files("NEW", files, ["api.proto"])
    except Exception:  # an invalid mutation (a duplicate number or name)
        reject()
        raise


@settings(NESTED, max_examples=40)
@given(mutations(), st.data())
def test_no_witness_without_a_breaking_finding(mutation: Any, data: st.DataObject) -> None:
    fp, kinds = mutation
    new = _schema(fp)
    report = diff_protos(OLD, new, dynamic=False)
    breaking = [f for f in report.findings if f.breaking and f.severity is Severity.ERROR]
    for name in ("demo.v1.Cluster",):
        for _ in range(4):
            msg = data.draw(from_message(name, schema=OLD, max_depth=1), label="OLD message")
            found = breaks(OLD, new, name, msg)
            if found is not None:
                event(f"witness ({found.encoding})")
                assert breaking, (kinds, found)
                return
    event("no witness")


@pytest.mark.slow
@settings(NESTED, max_examples=400)
@given(mutations(), st.data())
def test_no_witness_without_a_breaking_finding_thorough(mutation: Any,
                                                        data: st.DataObject) -> None:
    test_no_witness_without_a_breaking_finding.hypothesis.inner_test(mutation, data)


@settings(NESTED, max_examples=15)
@given(mutations())
def test_reported_witnesses_hold(mutation: Any) -> None:
    fp, _ = mutation
    new = _schema(fp)
    for f in diff_protos(OLD, new, budget=40).findings:
        if f.witness is not None:
            _check_witness(OLD, new, f)
