"""ProtoAPI: a protobuf API's units in roundtrip's runner, its converter forms, and the
classic lossy converters it catches (int64 through a float, a dropped field, an explicit
zero losing its presence, an unknown enum value dropped)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings

from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent
from compatfuzz.protobuf import ProtoAPI, equivalent, from_message
from compatfuzz.roundtrip import (
    Property,
    Status,
    Unit,
    UnitFinished,
    UnitResult,
    check,
    run,
    units,
)
from tests.protobuf._cluster import MESSAGES, conversion, schema
from tests.protobuf._trees import compile_text

SEED = 20260412
UP, DOWN = ("v2", "v3"), ("v3", "v2")


def _api(up: Callable[..., Any] | None = None, down: Callable[..., Any] | None = None,
         **options: Any) -> ProtoAPI:
    conv = conversion()
    pairs = {UP: up or conv.v2_to_v3, DOWN: down or conv.v3_to_v2}
    return ProtoAPI("cluster", schema(), MESSAGES, converters=pairs, **options)


def _results(api: ProtoAPI, **kwargs: Any) -> dict[str, UnitResult]:
    kwargs.setdefault("seed", SEED)
    return {e.result.unit.id: e.result for e in run(api, database="none", **kwargs)
            if isinstance(e, UnitFinished)}


# -- the seeded bugs ------------------------------------------------------------------


def float_down(src: Message, dst: Message) -> None:
    """v3 -> v2 through a double (a JSON number), clamped so it never overflows."""
    conversion().v3_to_v2(src, dst)
    if src.HasField("common_http_protocol_options"):
        value = int(float(src.common_http_protocol_options.max_requests_per_connection))
        dst.max_requests_per_connection.value = max(min(value, 2**63 - 1), -(2**63))


def dropped_up(src: Message, dst: Message) -> None:
    conversion().v2_to_v3(src, dst)
    dst.ClearField("metadata")  # forgot the metadata


def zero_presence_up(src: Message, dst: Message) -> None:
    conversion().v2_to_v3(src, dst)
    if not src.per_connection_buffer_limit_bytes.value:  # an explicit 0 is not "unset"
        dst.ClearField("per_connection_buffer_limit_bytes")


def enum_by_name_up(src: Message, dst: Message) -> None:
    conversion().v2_to_v3(src, dst)
    if src.lb_policy not in src.DESCRIPTOR.fields_by_name["lb_policy"].enum_type.values_by_number:
        dst.lb_policy = 0  # a value v2 does not name falls back to the default


def _big_int(obj: Any) -> bool:
    # v2 has the field at the top, v3 in common_http_protocol_options
    value = int(obj.get("max_requests_per_connection")
                or obj["common_http_protocol_options"]["max_requests_per_connection"])
    return abs(value) > 2**53 and float(value) != value


# bug -> (converters, the fields its diff names (last path step: the paths differ between
# v2 and v3), what the minimal example is like)
BUGS: dict[str, tuple[dict[str, Any], set[str], Callable[[Any], bool]]] = {
    "int64_through_float": ({"down": float_down}, {"max_requests_per_connection"},
                            _big_int),
    "dropped_field": ({"up": dropped_up}, {"metadata"},
                      lambda obj: len(obj["metadata"]) == 1),
    "optional_zero_presence": ({"up": zero_presence_up}, {"per_connection_buffer_limit_bytes"},
                               lambda obj: obj == {"name": "0",
                                                   "per_connection_buffer_limit_bytes": 0}),
    "enum_unknown_value_dropped": ({"up": enum_by_name_up}, {"lb_policy"},
                                   lambda obj: obj["lb_policy"] not in (
                                       "ROUND_ROBIN", "LEAST_REQUEST", "RING_HASH")),
}


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_lossy_converter_is_caught_with_a_minimal_counterexample(bug: str) -> None:
    converters, paths, minimal = BUGS[bug]
    api = _api(**converters)
    results = _results(api, properties=["roundtrip"], max_examples=200)
    assert sorted(results) == ["cluster::roundtrip[v2->v3]", "cluster::roundtrip[v3->v2]"]
    failed = [r for r in results.values() if r.status is Status.FAILED]
    assert failed, [r.message for r in results.values()]
    for result in failed:
        cx = result.counterexample
        assert cx is not None and cx.shrunk
        assert {row["path"].rsplit(".", 1)[-1] for row in cx.diff} == paths, cx.error
        assert minimal(cx.object), cx.object
        assert "did not give back the original" in cx.error
        # the counterexample file's JSON is the failing message: replaying it fails again
        with pytest.raises(NotEquivalent):
            check(api, cx.unit, api.from_json(cx.unit, cx.object))


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(BUGS))
def test_lossy_converter_is_caught_whatever_the_seed(bug: str) -> None:
    api = _api(**BUGS[bug][0])
    caught = sum(any(r.status is Status.FAILED for r in _results(
        api, properties=["roundtrip"], max_examples=200, seed=seed).values())
                 for seed in range(20))
    assert caught >= 19


def test_correct_converters_pass_every_unit() -> None:
    results = _results(_api(), max_examples=40)
    assert sorted(results) == sorted(
        [f"cluster::encodings[{v}]" for v in ("v2", "v3")]
        + [f"cluster::{p}[{a}->{b}]" for p in ("roundtrip", "valid", "no_mutation")
           for a, b in (UP, DOWN)])
    assert {r.status for r in results.values()} == {Status.PASSED}, [
        r.message for r in results.values()]
    assert all(r.examples == 40 and r.coverage is None for r in results.values())


def test_converter_output_breaking_new_rules_fails_valid() -> None:
    def empty_address(src: Message, dst: Message) -> None:
        conversion().v2_to_v3(src, dst)
        dst.endpoints.add()  # address "" breaks (validate.rules).string.min_len

    results = _results(_api(up=empty_address), properties=["valid"], max_examples=20)
    failed = results["cluster::valid[v2->v3]"]
    assert failed.status is Status.FAILED and results["cluster::valid[v3->v2]"].status is \
        Status.PASSED
    assert failed.counterexample is not None
    assert "v2 -> v3 output breaks v3's validate rules" in failed.counterexample.error
    assert "endpoints[0].address: string: min_len" in failed.counterexample.error


def test_converter_mutating_its_input_fails_no_mutation() -> None:
    def consuming(src: Message, dst: Message) -> None:
        conversion().v2_to_v3(src, dst)
        src.ClearField("hosts")

    results = _results(_api(up=consuming), properties=["no_mutation"], max_examples=50)
    cx = results["cluster::no_mutation[v2->v3]"].counterexample
    assert cx is not None and [row["path"] for row in cx.diff] == ["hosts"]
    assert "converting v2 -> v3 mutated its input" in cx.error


# -- encodings --------------------------------------------------------------------------

# A custom json_name equal to another field's name (that field renamed for JSON too):
# protoc accepts it, but JSON with original names (Envoy's YAML) reads "b" as field a.
CLASH = compile_text('syntax = "proto3";\npackage clash.v1;\nmessage M {\n'
                     '  string a = 1 [json_name = "b"];\n  string b = 2 [json_name = "c"];\n}\n')


def test_encodings_property_catches_json_that_does_not_read_back() -> None:
    api = ProtoAPI("clash", CLASH, {"v1": "clash.v1.M"})
    assert [u.id for u in units(api)] == ["clash::encodings[v1]"]  # no converters
    (result,) = _results(api, max_examples=100).values()
    assert result.status is Status.FAILED and result.counterexample is not None
    cx = result.counterexample
    assert cx.object == {"b": "0"}  # minimal: only b set, the original name "b" misread
    assert "a v1 message does not survive json, yaml and back" in cx.error
    assert "[json]" in cx.error and "[yaml]" in cx.error and "[binary]" not in cx.error
    assert {row["path"] for row in cx.diff} == {"a", "b"}
    narrowed = ProtoAPI("clash", CLASH, {"v1": "clash.v1.M"}, encodings=["binary"])
    assert {r.status for r in _results(narrowed, max_examples=30).values()} == {
        Status.PASSED}


# -- units and converter forms ------------------------------------------------------------


def test_units_follow_the_converters_given() -> None:
    conv = conversion()
    upgrade_only = ProtoAPI("cluster", schema(), MESSAGES, converters={UP: conv.v2_to_v3})
    assert [u.id for u in units(upgrade_only)] == [
        "cluster::encodings[v2]", "cluster::encodings[v3]", "cluster::valid[v2->v3]",
        "cluster::no_mutation[v2->v3]"]
    assert [u.id for u in units(_api(), ["roundtrip"])] == [
        "cluster::roundtrip[v2->v3]", "cluster::roundtrip[v3->v2]"]
    assert units(_api(), ["default_idempotent"]) == []


def test_three_versions_check_path_independence() -> None:
    text = "".join(f'message M{v} {{ int64 n = 1; }}\n' for v in (1, 2, 3))
    tri = compile_text('syntax = "proto3";\npackage tri.v1;\n' + text)
    classes = {v: tri.message_class(f"tri.v1.M{v[1]}") for v in ("v1", "v2", "v3")}

    def converter(a: str, b: str) -> Callable[[Message], Message]:
        def convert(src: Message) -> Message:  # returns its own message: no dst argument
            n = src.n
            if (a, b) == ("v1", "v3") and abs(n) > 2**53:
                n = int(float(n))  # the direct path is lossy, the path through v2 is not
            return classes[b](n=n)
        return convert

    pairs = {(a, b): converter(a, b) for a in classes for b in classes if a != b}
    api = ProtoAPI("tri", tri, {v: f"tri.v1.M{v[1]}" for v in classes}, converters=pairs)
    ids = [u.id for u in units(api, ["path_independent"])]
    assert len(ids) == 6 and "tri::path_independent[v1->v2->v3]" in ids
    results = _results(api, properties=["path_independent"], max_examples=100)
    failed = {i for i, r in results.items() if r.status is Status.FAILED}
    assert "tri::path_independent[v1->v2->v3]" in failed
    assert all("v1" in i and "v3" in i for i in failed)


def test_convert_and_hub_forms() -> None:
    conv = conversion()

    def convert(src: Message, dst: Message) -> None:
        (conv.v2_to_v3 if dst.DESCRIPTOR.full_name.endswith("v3.Cluster")
         else conv.v3_to_v2)(src, dst)

    def to_hub(src: Message, hub: Message) -> None:
        conv.v2_to_v3(src, hub)

    def from_hub(hub: Message, dst: Message) -> None:
        conv.v3_to_v2(hub, dst)

    for api in (ProtoAPI("cluster", schema(), MESSAGES, convert=convert),
                ProtoAPI("cluster", schema(), MESSAGES, to_hub=to_hub, from_hub=from_hub,
                         hub="v3")):
        results = _results(api, properties=["roundtrip", "valid"], max_examples=25)
        assert len(results) == 4 and {r.status for r in results.values()} == {
            Status.PASSED}


def test_bad_converters_are_refused_or_fail_with_the_users_frames() -> None:
    with pytest.raises(InvalidArgument, match=r"convert= must take two arguments"):
        ProtoAPI("cluster", schema(), MESSAGES, convert=lambda src: src)
    with pytest.raises(InvalidArgument, match=r"to_hub/from_hub need hub="):
        ProtoAPI("cluster", schema(), MESSAGES, to_hub=conversion().v2_to_v3,
                 from_hub=conversion().v3_to_v2)
    with pytest.raises(InvalidArgument, match=r"converters key 'v2->v4' is not a pair"):
        ProtoAPI("cluster", schema(), MESSAGES, converters={("v2", "v4"): print})
    with pytest.raises(InvalidArgument, match=r"has no message 'example.cluster.v3.Clustr'"
                                              r".*did you mean example.cluster.v3.Cluster"):
        ProtoAPI("cluster", schema(), {**MESSAGES, "v3": "example.cluster.v3.Clustr"})
    v2 = schema().message_class(MESSAGES["v2"])(name="x")
    unit = Unit("cluster", "Cluster", Property.ROUNDTRIP, UP)
    wrong = _api(up=lambda src: src)  # returns the v2 message it got
    with pytest.raises(ConverterError,
                       match=r"returned a message of type example.cluster.v2.Cluster, "
                             r"expected a message of type example.cluster.v3.Cluster"):
        check(wrong, unit, v2)

    def crashing(src: Message, dst: Message) -> None:
        dst.name = src.hosts[0]

    with pytest.raises(ConverterError, match=r"converter v2->v3 raised IndexError") as info:
        check(_api(up=crashing), unit, v2)
    assert "in crashing" in info.value.user_traceback
    assert "dst.name = src.hosts[0]" in info.value.user_traceback


@settings(max_examples=30, deadline=None)
@given(from_message(MESSAGES["v3"], schema=schema()))
def test_examples_go_to_json_and_back(msg: Message) -> None:
    api = _api()
    unit = Unit("cluster", "Cluster", Property.ENCODINGS, ("v3",))
    back = api.from_json(unit, api.to_json(unit, msg))
    assert equivalent(back, msg)
    with pytest.raises(ValueError, match=r"not a example\.cluster\.v3\.Cluster"):
        api.from_json(unit, {"name": 5, "nope": 1})
