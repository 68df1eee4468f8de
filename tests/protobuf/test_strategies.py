"""from_message: every generated message parses back and passes its rules; edges occur."""

from __future__ import annotations

import math
import warnings

import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, Phase, find, given, seed, settings
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, UnsupportedRuleWarning
from compatfuzz.protobuf import by_name, by_number, from_message, to_json, violations
from tests.protobuf._trees import KITCHEN_SINK, PROTO2, api, compile_text

SINK = compile_text(KITCHEN_SINK)
Sink = SINK.message_class("demo.v1.Sink")
FLT_MAX = 3.4028234663852886e38


def _float32_max(msg: object) -> bool:
    """protobuf-python prints float32 FLT_MAX as 3.4028235e+38 and then refuses to parse it
    ("Float value too large"): a bug in json_format, see test_flt_max_json_bug."""
    return "3.4028235e+38" in json_format.MessageToJson(msg, descriptor_pool=SINK.pool)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(from_message("demo.v1.Sink", schema=SINK))
def test_generated_messages_parse_back_and_validate(msg: object) -> None:
    assert violations(msg) == []
    assert by_number(Sink.FromString(msg.SerializeToString())) == by_number(msg)
    if _float32_max(msg):
        return
    for preserve in (True, False):  # original names (Envoy YAML) and json names
        doc = json_format.MessageToDict(msg, preserving_proto_field_name=preserve,
                                        descriptor_pool=SINK.pool)
        back = json_format.ParseDict(doc, Sink(), descriptor_pool=SINK.pool)
        assert by_name(back) == by_name(msg)


@pytest.mark.xfail(strict=True, reason="protobuf-python json_format: FLT_MAX does not "
                   "round-trip (printed as 3.4028235e+38, parsed as too large)")
def test_flt_max_json_bug() -> None:
    msg = Sink(f=FLT_MAX)
    json_format.Parse(json_format.MessageToJson(msg), Sink())


@settings(max_examples=30, deadline=None)
@given(from_message("demo.v1.Sink", schema=SINK, json=True))
def test_json_form(doc: dict[str, object]) -> None:
    assert isinstance(doc, dict) and "timeout" in doc and "tags" in doc
    if "big" in doc:
        assert isinstance(doc["big"], str)  # int64 is a string in proto3 JSON


EDGES = [
    ("int64 max", lambda m: m.big == 2**63 - 1),
    ("int64 min", lambda m: m.big == -(2**63)),
    ("uint64 max", lambda m: m.ubig == 2**64 - 1),
    ("NaN", lambda m: math.isnan(m.d)),
    ("-inf", lambda m: m.d == -math.inf),
    ("non-empty bytes", lambda m: len(m.b) > 0),
    ("unknown enum number", lambda m: m.color not in (0, 1, 2)),
    ("map entry", lambda m: len(m.m) > 0),
    ("Any packs a type", lambda m: m.any.type_url.startswith("type.googleapis.com/")),
    ("Struct with a value", lambda m: len(m.st.fields) > 0),
    ("explicit optional zero", lambda m: m.HasField("opt") and m.opt == 0),
    ("oneof message member", lambda m: m.WhichOneof("kind") == "n"),
    ("nested recursion", lambda m: len(m.node.children) > 0),
    ("wrapper set", lambda m: m.HasField("w")),
    ("timestamp", lambda m: m.HasField("ts")),
    ("field mask", lambda m: len(m.fm.paths) > 0),
    ("exclusive range below", lambda m: m.outside < -10),
    ("exclusive range above", lambda m: m.outside > 10),
]


def test_edges_are_reachable() -> None:
    """Generate-only runs of 400 messages (no shrinking: fast) meet every edge.

    Not one derandomized run: which values a run draws also depends on the constants
    Hypothesis harvests from the project's modules imported so far (under pytest-xdist,
    whatever the worker's earlier tests imported), so a fixed run met every edge in one
    CI run and missed ``int64 min`` in another. Up to five seeded runs of 400, stopping
    once every edge is met: an edge drawn at 1 in 400 is then missed with probability
    about 0.7%, one at 1 in 100 practically never.
    """
    seen: set[str] = set()
    edges = {label for label, _ in EDGES}
    for attempt in range(5):
        @seed(attempt)
        @settings(max_examples=400, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(from_message("demo.v1.Sink", schema=SINK))
        def draw(msg: object) -> None:
            seen.update(label for label, condition in EDGES if condition(msg))

        draw()
        if seen == edges:
            break
    assert seen == edges, sorted(edges - seen)


def test_closed_enums_and_proto2_presence() -> None:
    schema = compile_text(PROTO2, "p2.proto")
    strategy = from_message("demo.p2.P2", schema=schema)
    cls = schema.message_class("demo.p2.P2")

    @settings(max_examples=40, deadline=None)
    @given(strategy)
    def check(msg: object) -> None:
        assert msg.HasField("r")  # required in proto2
        assert msg.c in (0, 1, 2) if not msg.HasField("c") else msg.c in (1, 2)
        assert by_number(cls.FromString(msg.SerializeToString())) == by_number(msg)

    check()
    find(strategy, lambda m: not m.HasField("a"))  # optional stays unset sometimes


def test_recursion_is_bounded() -> None:
    def depth(node: object) -> int:
        kids = [depth(c) for c in node.children] + (
            [depth(node.next)] if node.HasField("next") else [])
        return 1 + max(kids, default=0)

    @settings(max_examples=40, deadline=None)
    @given(from_message("demo.v1.Node", schema=SINK, max_depth=2))
    def check(node: object) -> None:
        assert depth(node) <= 3
        assert violations(node) == []

    check()


def test_repr_reads_like_the_call_and_bad_arguments() -> None:
    assert repr(from_message("demo.v1.Sink", schema=SINK)) == "from_message(<demo.v1.Sink>)"
    with pytest.raises(InvalidArgument, match="needs schema"):
        from_message("demo.v1.Sink")
    with pytest.raises(InvalidArgument, match="Expected a message"):
        from_message(42)  # type: ignore[arg-type]
    # a class works too

    @settings(max_examples=3, database=None, phases=[Phase.generate])
    @given(from_message(Sink))
    def check(msg: object) -> None:
        assert violations(msg) == []

    check()


def test_unsupported_rules_are_filtered_and_reported() -> None:
    schema = api('import "google/protobuf/timestamp.proto";\n'
                 "message T { google.protobuf.Timestamp at = 1 "
                 "[(validate.rules).timestamp = {lt_now: true}]; int32 x = 2 "
                 "[(validate.rules).int32 = {gt: 0}]; }\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = find(from_message("demo.v1.T", schema=schema), lambda m: True)
    assert any(issubclass(w.category, UnsupportedRuleWarning) and "lt_now" in str(w.message)
               for w in caught)
    assert value.x > 0


@settings(max_examples=12, deadline=None)  # each example compiles a tree (~0.2 s)
@given(lo=st.integers(-1000, 1000), width=st.integers(0, 50), data=st.data())
def test_numeric_bounds_by_construction(lo: int, width: int, data: st.DataObject) -> None:
    """Any gte/lte pair: every value drawn lies inside, and the evaluator agrees."""
    schema = api(f"message B {{ int64 v = 1 [(validate.rules).int64 = "
                 f"{{gte: {lo}, lte: {lo + width}}}]; }}\n")
    msg = data.draw(from_message("demo.v1.B", schema=schema))
    assert lo <= msg.v <= lo + width
    cls = schema.message_class("demo.v1.B")
    assert violations(cls(v=lo - 1)) and violations(cls(v=lo + width + 1))


def test_to_json_uses_json_names() -> None:
    msg = Sink(port=80, tags=["a"], opt=0)
    assert to_json(msg)["port"] == 80 and to_json(msg)["opt"] == 0


@pytest.mark.parametrize(("field", "value"), [("big", 2**53 + 1), ("big", -(2**53 + 1)),
                                              ("ubig", 2**63), ("big", 2**31)])
def test_wide_integers_reach_the_values_lossy_converters_lose(field: str, value: int) -> None:
    # 2^53 + 1: the first integer a double (JSON number, float(x)) cannot hold; 2^63 a
    # uint64 no int64 holds; 2^31 an int64 no int32 holds. Drawn as edges, not by luck.
    wide = api("message Wide { int64 big = 1; uint64 ubig = 2; }")
    found = find(from_message("demo.v1.Wide", schema=wide),
                 lambda m: getattr(m, field) == value,
                 settings=settings(max_examples=300, database=None, phases=[Phase.generate]))
    assert getattr(found, field) == value
