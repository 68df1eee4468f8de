"""protovalidate (``buf.validate``) rules, read from the wire like PGV's.

The tree ships a cut-down ``buf/validate/validate.proto`` with the upstream field numbers
(FieldRules: int32 = 3, string = 14, repeated = 18, required = 25; extension 1159), enough
to show the rules are decoded, generated and compared; the upstream file is large and not
on PyPI as a .proto.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings

from compatfuzz.compat import Status
from compatfuzz.protobuf import diff_protos, from_message, load_protos, violations
from tests.protobuf._trees import write_tree

VALIDATE = """syntax = "proto3";
package buf.validate;
import "google/protobuf/descriptor.proto";
extend google.protobuf.FieldOptions { optional FieldRules field = 1159; }
message FieldRules {
  optional bool required = 25;
  oneof type { Int32Rules int32 = 3; StringRules string = 14; RepeatedRules repeated = 18; }
}
message Int32Rules { optional int32 lt = 2; optional int32 lte = 3; optional int32 gt = 4;
                     optional int32 gte = 5; }
message StringRules { optional uint64 min_len = 2; optional uint64 max_len = 3; }
message RepeatedRules { optional uint64 min_items = 1; optional uint64 max_items = 2; }
"""
API = """syntax = "proto3";
package demo.pv;
import "buf/validate/validate.proto";
message Req {
  int32 port = 1 [(buf.validate.field).int32 = {gt: 0, lte: LIMIT}];
  string name = 2 [(buf.validate.field).string.min_len = 1];
  repeated string tags = 3 [(buf.validate.field).repeated.max_items = 2];
}
"""


def _load(tmp: Path, limit: int) -> object:
    write_tree(tmp, {"buf/validate/validate.proto": VALIDATE,
                     "demo/pv/api.proto": API.replace("LIMIT", str(limit))})
    return load_protos(tmp / "demo", include=[tmp])


def test_generated_messages_meet_protovalidate_rules(tmp_path: Path) -> None:
    schema = _load(tmp_path, 100)
    cls = schema.message_class("demo.pv.Req")
    assert violations(cls(port=0, name="x")) and violations(cls(port=5, name=""))

    @settings(max_examples=50, deadline=None)
    @given(from_message("demo.pv.Req", schema=schema))
    def check(msg: object) -> None:
        assert 0 < msg.port <= 100 and len(msg.name) >= 1 and len(msg.tags) <= 2
        assert violations(msg) == []

    check()


def test_stricter_protovalidate_rule_is_found_with_a_witness(tmp_path: Path) -> None:
    old, new = _load(tmp_path / "old", 100), _load(tmp_path / "new", 10)
    (f,) = diff_protos(old, new).by_rule("proto-validate-tightened")
    assert f.path == "demo.pv.Req.port" and "buf.validate.field" in f.message
    assert f.status is Status.CONFIRMED and 10 < f.witness.value["port"] <= 100
