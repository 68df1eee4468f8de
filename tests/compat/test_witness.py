"""The dynamic half: witnesses prove findings, decide patterns, and catch what rules miss."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.compat import Side, Status, diff
from compatfuzz.compat import _engine as engine
from compatfuzz.compat._witness import prune
from compatfuzz.schema import Schema


def spec(node: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"x": node}, **extra}}}


def one(report: Any, rule: str) -> Any:
    [f] = [f for f in report.findings if f.rule == rule]
    return f


@pytest.mark.parametrize(("old", "new", "sides"), [
    ("^[a-z]+$", "^[a-z][a-z]*$", set()),           # rewritten, same language
    ("^[a-z]+$", "^[a-c]+$", {Side.REQUEST}),        # tightened
    ("^[a-c]+$", "^[a-z]+$", {Side.RESPONSE}),       # relaxed
    ("^[a-c]+$", "^[b-z]+$", {Side.REQUEST, Side.RESPONSE}),
])
def test_pattern_change_is_decided_by_witnesses(old: str, new: str, sides: set[Side]) -> None:
    # examples, not seconds, bound the search: the verdict must not depend on the machine
    # (Hypothesis before 6.170.8 draws these strings five times slower)
    r = diff(spec({"type": "string", "pattern": old}), spec({"type": "string", "pattern": new}),
             budget=200, whole_budget=0, direction="both",
             witness_seconds=None, finding_seconds=None)
    f = one(r, "pattern-changed")
    assert set(f.breaks) == sides
    assert f.breaking == bool(sides)
    if sides:
        assert f.status is Status.CONFIRMED
        w = f.witness
        writer, reader = (old, new) if w.side is Side.REQUEST else (new, old)
        assert Schema(root={"pattern": writer}).is_valid(w.value)
        assert not Schema(root={"pattern": reader}).is_valid(w.value)
    else:
        assert f.status is Status.UNCONFIRMED and r.exit_code == 0


def test_required_added_witness_is_shrunk_to_the_minimal_object() -> None:
    r = diff(spec({"type": "integer"}, required=[]),
             spec({"type": "integer"}, required=["x"]), whole_budget=0)
    f = one(r, "required-added")
    assert f.status is Status.CONFIRMED
    assert (f.witness.path, f.witness.value) == ("spec", {})
    assert "'x' is a required property" in f.witness.reason


def test_removed_enum_value_is_the_witness() -> None:
    r = diff(spec({"enum": ["Always", "Never", "OnFailure"]}),
             spec({"enum": ["Always", "Never"]}), whole_budget=0)
    assert one(r, "enum-value-removed").witness.value == "OnFailure"


def test_kubernetes_field_removal_is_witnessed_as_data_loss() -> None:
    old = Schema(root=spec({"type": "string"}), kubernetes=True)
    new = Schema(root={"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"y": {"type": "string"}}}}}, kubernetes=True)
    r = diff(old, new, whole_budget=0)
    f = one(r, "field-removed")
    assert f.status is Status.CONFIRMED and f.breaking
    assert f.witness.value == {"x": ""} and "drops field x" in f.witness.reason
    assert not one(r, "field-added").breaking


def test_a_finding_without_witness_is_unconfirmed_not_dropped() -> None:
    # the pattern already needs one character: minLength 1 rejects nothing, and the
    # maxLength error must not be credited to it (it has its own finding)
    old = spec({"type": "string", "pattern": "^x+$"})
    new = spec({"type": "string", "pattern": "^x+$", "minLength": 1, "maxLength": 3})
    r = diff(old, new, budget=50, whole_budget=0)
    [min_len] = [f for f in r.findings if f.keyword == "minLength"]
    [max_len] = [f for f in r.findings if f.keyword == "maxLength"]
    assert min_len.status is Status.UNCONFIRMED and min_len.breaking
    assert min_len.witness is None and "no witness in 50 examples" in min_len.message
    assert max_len.status is Status.CONFIRMED and "too long" in max_len.witness.reason


def test_a_rename_between_open_objects_is_witnessed_by_the_old_name() -> None:
    # each side keeps any value under the name only the other declares: an old client
    # may send {"y": null}, which NEW rejects (and NEW may send {"x": null})
    old = spec({"type": "string", "maxLength": 3})
    new = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "y": {"type": "string", "maxLength": 3}}}}}
    f = one(diff(old, new, budget=50, whole_budget=0), "field-renamed")
    assert f.status is Status.CONFIRMED and f.breaking
    assert f.witness.value in ({"y": None}, {"x": None}), f.witness


def test_whole_schema_search_reports_what_the_rules_missed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the rules see nothing
    monkeypatch.setattr(engine, "walk_with_aliases", lambda *a, **k: ([], []))
    r = diff(spec({"type": "integer", "maximum": 9}), spec({"type": "integer", "maximum": 3}),
             whole_budget=200, direction="request")
    [f] = r.findings
    assert (f.rule, f.path, f.status, f.breaking) == (
        "witness-only", "spec.x", Status.CONFIRMED, True)
    assert f.witness.value == {"spec": {"x": 4}}  # shrunk to the smallest rejected value


def test_whole_schema_search_respects_status_being_response_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "walk_with_aliases", lambda *a, **k: ([], []))

    def doc(maximum: int) -> dict[str, Any]:
        return {"type": "object", "properties": {"status": {
            "type": "object", "properties": {"n": {"type": "integer", "maximum": maximum}}}}}

    # the server sending fewer values is fine: no request-side break on status
    assert diff(doc(9), doc(3), whole_budget=100).findings == ()


@given(st.dictionaries(st.sampled_from(["a", "b", "zz"]), st.integers(), max_size=3))
def test_prune_keeps_exactly_the_known_fields(value: dict[str, int]) -> None:
    s = Schema(root={"type": "object", "properties": {"a": {"type": "integer"},
                                                      "b": {"$ref": "#/$defs/B"}},
                     "$defs": {"B": {"type": "integer"}}})
    assert prune(s, s.root, value) == {k: v for k, v in value.items() if k in ("a", "b")}
    assert prune(s, s.root, prune(s, s.root, value)) == prune(s, s.root, value)


def test_max_items_witness_is_built_from_one_valid_item() -> None:
    item = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    r = diff({"type": "array", "items": item},
             {"type": "array", "items": item, "maxItems": 100}, whole_budget=0)
    f = one(r, "bound-tightened")
    assert f.status is Status.CONFIRMED
    assert len(f.witness.value) == 101 and all("a" in x for x in f.witness.value)


def test_a_shared_definition_explains_witnesses_at_every_path_reaching_it() -> None:
    def doc(max_len: int) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "a": {"$ref": "#/$defs/Name"}, "b": {"type": "array", "items": {
                "$ref": "#/$defs/Name"}}},
            "$defs": {"Name": {"type": "string", "maxLength": max_len}}}

    r = diff(doc(10), doc(2), whole_budget=300, direction="request")
    assert [(f.rule, f.path) for f in r.findings] == [("bound-tightened", "a")]


def test_defaulted_field_gets_value_witnesses_but_no_fake_default_witness() -> None:
    r = diff(spec({"enum": ["a", "b"], "default": "a"}),
             spec({"enum": ["a"], "default": "b"}), whole_budget=0)
    assert one(r, "enum-value-removed").witness.value == "b"
    f = one(r, "default-changed")
    # a validator accepts the omitted field under both: nothing to confirm
    assert (f.status, f.witness, f.breaking) == (Status.NOT_CHECKED, None, True)
    assert f.message == 'default "a" -> "b"'


def _crd_schema(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": spec}}


def test_a_witness_is_valid_where_it_is_written_list_map_keys_unique() -> None:
    """Cluster API's ``variables.overrides`` (list-type map keyed by name) with a tighter
    maxItems: a witness repeating one key is refused by the real server under OLD already
    (``Duplicate value``), so it proves nothing (benchmarks/compat_confirm.py)."""
    item = {"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}
    lst = {"type": "array", "items": item, "x-kubernetes-list-type": "map",
           "x-kubernetes-list-map-keys": ["name"]}
    old = Schema(root=_crd_schema({"type": "object", "properties": {"vars": lst}}),
                 kubernetes=True)
    new = Schema(root=_crd_schema({"type": "object", "properties": {
        "vars": {**lst, "maxItems": 3}}}), kubernetes=True)
    f = one(diff(old, new, whole_budget=0), "bound-tightened")
    assert f.status is Status.CONFIRMED
    names = [x["name"] for x in f.witness.value]
    assert len(names) == 4 and len(set(names)) == 4, f.witness.value


def test_a_witness_keeps_the_writers_cel_rules() -> None:
    """Karpenter's ``requirements``: an ``In`` requirement must have values (a CEL rule in
    both revisions); a witness of the relaxed maxItems that breaks it is refused by the
    real server under NEW already."""
    item = {"type": "object", "required": ["key", "operator"], "properties": {
        "key": {"type": "string"}, "operator": {"type": "string", "enum": ["In", "Exists"]},
        "values": {"type": "array", "items": {"type": "string"}}}}
    rule = [{"rule": "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"}]
    req = {"type": "array", "items": item, "x-kubernetes-validations": rule}
    old = Schema(root=_crd_schema({"type": "object", "properties": {
        "reqs": {**req, "maxItems": 2}}}), kubernetes=True)
    new = Schema(root=_crd_schema({"type": "object", "properties": {
        "reqs": {**req, "maxItems": 5}}}), kubernetes=True)
    f = one(diff(old, new, whole_budget=0), "bound-relaxed")
    assert f.status is Status.CONFIRMED and len(f.witness.value) == 3
    for x in f.witness.value:
        assert x["operator"] != "In" or x.get("values"), f.witness.value


def test_a_max_items_witness_repeats_an_item_the_lists_rule_accepts() -> None:
    """Karpenter's ``requirements`` (maxItems 30 -> 100 with a rule over the list): the
    first item drawn breaks the rule, so the witness must search for one that does not
    (the new-user audit found no witness in 2000 examples)."""
    item = {"type": "object", "required": ["key", "operator"], "properties": {
        "key": {"type": "string"}, "operator": {"type": "string", "enum": ["In", "Exists"]},
        "values": {"type": "array", "items": {"type": "string"}}}}
    rule = [{"rule": "self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)"}]
    req = {"type": "array", "items": item, "x-kubernetes-validations": rule}
    old = Schema(root=_crd_schema({"type": "object", "properties": {
        "reqs": {**req, "maxItems": 30}}}), kubernetes=True)
    new = Schema(root=_crd_schema({"type": "object", "properties": {
        "reqs": {**req, "maxItems": 100}}}), kubernetes=True)
    f = one(diff(old, new, whole_budget=0), "bound-relaxed")
    assert f.status is Status.CONFIRMED and len(f.witness.value) == 31, f
    assert all(x["operator"] != "In" or x.get("values") for x in f.witness.value)
