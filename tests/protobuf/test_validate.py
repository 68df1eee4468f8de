"""The validate-rule evaluator (PGV semantics) on small messages."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.protobuf import violations
from tests.protobuf._trees import api

SCHEMA = api("""
message Inner { string s = 1 [(validate.rules).string = {min_len: 2, max_bytes: 4}]; }
message M {
  oneof pick {
    Inner must = 1 [(validate.rules).message.required = true];
    string other = 2 [(validate.rules).string.prefix = "x"];
  }
  uint32 outside = 3 [(validate.rules).uint32 = {gt: 10, lt: 5}];
  repeated int32 xs = 4 [(validate.rules).repeated = {max_items: 2, unique: true,
                                                      items {int32 {gte: 0}}}];
  map<string, Inner> inners = 5 [(validate.rules).map.min_pairs = 0];
  optional int32 opt = 6 [(validate.rules).int32.gt = 0];
  Inner skipped = 7 [(validate.rules).message.skip = true];
}
""")
M = SCHEMA.message_class("demo.v1.M")
Inner = SCHEMA.message_class("demo.v1.Inner")


def rules(msg: object) -> list[str]:
    return [f"{v.path}:{v.rule}" for v in violations(msg)]


def test_oneof_member_rules_apply_only_when_set() -> None:
    assert rules(M(other="xa")) == []  # `must` is required only if chosen
    assert rules(M(other="a")) == ["other:string"]
    assert rules(M(must=Inner(s="ab"))) == []
    assert rules(M(must=Inner(s="a"))) == ["must.s:string"]


def test_optional_rules_apply_only_when_set() -> None:
    assert rules(M()) == []
    assert rules(M(opt=0)) == ["opt:int32"]


@given(st.integers(0, 2**32 - 1))
def test_exclusive_range_means_outside(v: int) -> None:
    assert (rules(M(outside=v)) == []) == (v < 5 or v > 10)


def test_repeated_map_nested_and_skip() -> None:
    assert rules(M(xs=[1, 1])) == ["xs:repeated.unique"]
    assert rules(M(xs=[1, 2, 3])) == ["xs:repeated.max_items"]
    assert rules(M(xs=[-1])) == ["xs[0]:int32"]
    assert rules(M(inners={"k": Inner(s="toolong")})) == ["inners['k'].s:string"]
    assert rules(M(skipped=Inner(s=""))) == []
