"""Searching only where the revisions differ (issue 19, item 6): what ``focus`` leaves
out, that the whole-schema search still finds what rules miss, and ``--no-witness``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.compat import Status, diff
from compatfuzz.compat import _engine as engine
from compatfuzz.compat._focus import focus
from compatfuzz.schema import Schema

BIG = {"type": "array", "items": {"type": "string", "pattern": "^[a-z]([-a-z0-9]*)$"}}


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


def props_of(s: Schema, *path: str) -> set[str]:
    node: Any = s.root
    for p in path:
        node = node["properties"][p]
    return set(node["properties"])


def focused(old: dict[str, Any], new: dict[str, Any], **kw: Any) -> Schema:
    w, r = Schema(root=old), Schema(root=new)
    return focus(w, w, r, **kw)


def test_identical_optional_fields_are_left_out_changed_and_required_stay() -> None:
    old = obj({"same": BIG, "req": BIG, "x": {"type": "integer", "maximum": 9}},
              required=["req"])
    new = obj({"same": {**BIG, "description": "reworded"}, "req": BIG,
               "x": {"type": "integer", "maximum": 3}}, required=["req"])
    assert props_of(focused(old, new)) == {"req", "x"}


def test_a_field_required_only_by_new_stays() -> None:
    old = obj({"a": BIG, "x": {"type": "integer"}})
    new = obj({"a": BIG, "x": {"type": "integer"}}, required=["a"])
    assert props_of(focused(old, new)) == {"a"}  # x: the same, optional on both sides


@pytest.mark.parametrize("keyword", [
    {"anyOf": [{"required": ["a"]}, {"required": ["x"]}]},
    {"x-kubernetes-validations": [{"rule": "has(self.a) || self.x > 1"}]},
    {"dependentRequired": {"a": ["x"]}},
])
def test_nothing_is_left_out_under_a_keyword_that_relates_siblings(
        keyword: dict[str, Any]) -> None:
    old = obj({"a": BIG, "x": {"type": "integer", "maximum": 9}}, **keyword)
    new = obj({"a": BIG, "x": {"type": "integer", "maximum": 3}}, **keyword)
    assert props_of(focused(old, new)) == {"a", "x"}


def test_under_a_union_that_tests_presence_the_named_fields_stay_and_shrink() -> None:
    """Kyverno's ``match: {not: {required: [any, all]}}``: ``any`` and ``all`` may be
    drawn (the union tests whether they are there), but what is the same inside them is
    left out; a branch that reads a field's value keeps it whole; a branch that counts
    fields keeps everything."""
    inner = obj({"big": BIG, "x": {"type": "integer", "maximum": 9}})
    inner3 = obj({"big": BIG, "x": {"type": "integer", "maximum": 3}})
    union = {"not": {"required": ["any", "all"]}}
    old = obj({"any": inner, "all": inner, "other": BIG}, **union)
    new = obj({"any": inner3, "all": inner, "other": BIG}, **union)
    g = focused(old, new)
    assert props_of(g) == {"any", "all"}
    assert props_of(g, "any") == {"x"} and props_of(g, "all") == set()
    reads = {"anyOf": [{"properties": {"all": {"required": ["big"]}}}, {"required": ["any"]}]}
    g = focused({**old, **reads}, {**new, **reads})
    assert props_of(g, "all") == {"big", "x"}  # whole: a branch reads its value
    counts = {"oneOf": [{"minProperties": 2}, {"required": ["any"]}]}
    assert props_of(focused({**old, **counts}, {**new, **counts})) == {"any", "all", "other"}


def test_unchanged_transition_rules_do_not_stop_the_walk_other_rules_do() -> None:
    """``self == oldSelf`` runs on updates only, so it judges none of the objects a search
    draws (Karpenter's immutable NodeClaim spec); a rule on the object itself, or a
    transition rule that changed, keeps everything."""
    def pair(old_rule: str, new_rule: str) -> Schema:
        return focused(
            obj({"a": BIG, "x": {"type": "integer", "maximum": 9}},
                **{"x-kubernetes-validations": [{"rule": old_rule}]}),
            obj({"a": BIG, "x": {"type": "integer", "maximum": 3}},
                **{"x-kubernetes-validations": [{"rule": new_rule}]}))
    assert props_of(pair("self == oldSelf", "self == oldSelf")) == {"x"}
    assert props_of(pair("has(self.a)", "has(self.a)")) == {"a", "x"}
    assert props_of(pair("self == oldSelf", "self.a == oldSelf.a")) == {"a", "x"}


def test_min_properties_keeps_the_smallest_identical_fields_as_fillers() -> None:
    old = obj({"big": BIG, "flag": {"type": "boolean"}, "n": {"type": "integer"},
               "x": {"type": "integer", "maximum": 9}}, minProperties=2)
    new = {**old, "properties": {**old["properties"], "x": {"type": "integer",
                                                            "maximum": 3}}}
    assert props_of(focused(old, new)) == {"flag", "n", "x"}


def test_an_array_with_the_same_bounds_is_drawn_short_a_changed_bound_is_not() -> None:
    item = obj({"x": {"type": "integer", "maximum": 9}})
    item3 = obj({"x": {"type": "integer", "maximum": 3}})
    g = focused(obj({"l": {"type": "array", "items": item}}),
                obj({"l": {"type": "array", "items": item3}}))
    assert g.root["properties"]["l"]["maxItems"] == 2
    g = focused(obj({"l": {"type": "array", "maxItems": 9, "items": item}}),
                obj({"l": {"type": "array", "maxItems": 3, "items": item3}}))
    assert g.root["properties"]["l"]["maxItems"] == 9


def test_settled_fields_are_left_out() -> None:
    old = obj({"spec": obj({"x": {"type": "integer"}})})
    new = obj({"spec": obj({"x": {"type": "integer"}, "added": BIG})})
    w, r = Schema(root=old), Schema(root=new)
    assert props_of(focus(r, r, w), "spec") == {"added"}
    assert props_of(focus(r, r, w, settled=frozenset({"spec.added"})), "spec") == set()


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True),
       st.integers(0, 9), st.integers(0, 9))
def test_a_witness_of_the_full_schema_is_still_valid_for_the_writer_once_focused(
        required: list[str], before: int, after: int) -> None:
    """Whatever ``focus`` keeps, a value drawn from it that fits the focused schema fits
    the writer's schema: leaving out optional fields never makes a writer-invalid
    object look like a witness."""
    props = {k: {"type": "integer", "maximum": 5} for k in "abcd"}
    old = obj({**props, "x": {"type": "integer", "maximum": before}}, required=required)
    new = obj({**props, "x": {"type": "integer", "maximum": after}}, required=required)
    g = focused(old, new)
    assert set(required) <= props_of(g)
    value = dict.fromkeys(props_of(g) - {"x"}, 0) | {"x": 0}
    assert Schema(root=old).is_valid(value) == Schema(root=g.root).is_valid(value)


def test_the_whole_schema_search_finds_a_break_among_identical_siblings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "walk_with_aliases", lambda *a, **k: ([], []))
    siblings = {f"f{i}": obj({"names": BIG, "n": {"type": "integer"}}) for i in range(20)}
    old = obj({"spec": obj({**siblings, "x": {"type": "integer", "maximum": 9}})})
    new = obj({"spec": obj({**siblings, "x": {"type": "integer", "maximum": 3}})})
    r = diff(old, new, whole_budget=100, direction="request")
    [f] = r.findings
    assert (f.rule, f.path, f.status) == ("witness-only", "spec.x", Status.CONFIRMED)
    assert f.witness.value == {"spec": {"x": 4}}


def test_revisions_equal_up_to_descriptions_are_not_searched(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(engine, "search", lambda *a, **k: calls.append(a) or (None, None, ""))
    old = obj({"spec": obj({"x": {"type": "integer", "description": "old words"}})})
    new = obj({"spec": obj({"x": {"type": "integer", "description": "new words"}})})
    assert diff(old, new, whole_budget=25).findings == ()
    assert calls == []
    new["properties"]["spec"]["properties"]["x"]["maximum"] = 3
    diff(old, new, whole_budget=25, budget=0)
    assert calls  # a real change is still searched


def test_no_witness_is_the_static_mode(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(obj({"x": {"type": "integer", "maximum": 9}})))
    new.write_text(json.dumps(obj({"x": {"type": "integer", "maximum": 3}}, required=["x"])))
    assert main(["diff", str(old), str(new), "--no-witness", "--format", "json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert {f["rule"] for f in findings} == {"bound-tightened", "required-added"}
    assert all(f["status"] == "not-checked" and f["witness"] is None for f in findings)
    assert main(["diff", str(old), str(new), "--no-witness"]) == 1
    out = capsys.readouterr().out
    assert "2 breaking (0 with a witness)" in out and "not-checked" in out
