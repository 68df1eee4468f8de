"""Small proto trees of our own, compiled once per test session (protoc costs ~0.2 s)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from compatfuzz.protobuf import ProtoSchema, load_protos

HEADER = 'syntax = "proto3";\npackage demo.v1;\nimport "validate/validate.proto";\n'


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@functools.lru_cache(maxsize=256)
def compile_text(text: str, name: str = "api.proto") -> ProtoSchema:
    """Compile one file's text (cached: many tests share trees); the loaded schema keeps
    the descriptors, not the folder."""
    with tempfile.TemporaryDirectory(prefix="cf-proto-") as folder:
        (Path(folder) / name).write_text(text)
        return load_protos(Path(folder) / name)


def api(body: str, *, header: str = HEADER) -> ProtoSchema:
    return compile_text(header + body)


KITCHEN_SINK = HEADER + '''
import "google/protobuf/duration.proto";
import "google/protobuf/any.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/field_mask.proto";
import "google/protobuf/empty.proto";
enum Color { COLOR_UNSPECIFIED = 0; RED = 1; GREEN = 2; }
message Node {
  string name = 1 [(validate.rules).string = {min_len: 1, max_len: 5}];
  repeated Node children = 2;
  Node next = 3;
}
message Sink {
  uint32 port = 1 [(validate.rules).uint32 = {lte: 65535, gt: 0}];
  int64 big = 2; uint64 ubig = 3; double d = 4; float f = 5; bytes b = 6; sint32 s = 7;
  fixed64 fx = 8; sfixed32 sf = 25; int32 i32 = 26; bool flag = 27;
  Color color = 9;
  map<string, int32> m = 10;
  repeated string tags = 11 [(validate.rules).repeated = {min_items: 1, max_items: 4,
                                                          unique: true,
                                                          items {string {min_len: 1}}}];
  oneof kind { option (validate.required) = true; string a = 12; int32 b2 = 13; Node n = 28; }
  optional int32 opt = 14;
  google.protobuf.Duration timeout = 15 [(validate.rules).duration = {required: true, gt {}}];
  google.protobuf.Any any = 16;
  google.protobuf.Struct st = 17;
  google.protobuf.UInt32Value w = 18 [(validate.rules).uint32 = {gte: 1, lte: 100}];
  google.protobuf.Timestamp ts = 19;
  google.protobuf.FieldMask fm = 20;
  Node node = 21;
  string header = 22 [(validate.rules).string = {well_known_regex: HTTP_HEADER_NAME}];
  string path = 23 [(validate.rules).string = {prefix: "/", max_len: 10}];
  string ip = 24 [(validate.rules).string = {ip: true}];
  map<string, Node> nodes = 29 [(validate.rules).map = {max_pairs: 2}];
  repeated double ds = 30;
  google.protobuf.Value value = 31;
  google.protobuf.Empty empty = 32;
  google.protobuf.BytesValue bv = 33;
  int32 bounded = 34 [(validate.rules).int32 = {gte: -5, lt: 5}];
  int32 outside = 35 [(validate.rules).int32 = {gt: 10, lt: -10}];
  string email = 36 [(validate.rules).string = {email: true}];
  Color defined = 37 [(validate.rules).enum = {defined_only: true}];
  string choice = 38 [(validate.rules).string = {in: ["a", "b"]}];
}
message Proto2Holder { Node node = 1; }
'''

PROTO2 = '''syntax = "proto2";
package demo.p2;
enum Closed { ONE = 1; TWO = 2; }
message P2 {
  optional int32 a = 1 [default = 7];
  required string r = 2;
  optional Closed c = 3;
  repeated int64 xs = 4;
}
'''
