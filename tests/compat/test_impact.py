"""What each finding breaks for an object stored under OLD (issue 19, item 2).

The expected impacts follow validation ratcheting as the API server applies it
(apiextensions-apiserver ``pkg/apiserver/validation/ratcheting.go``, CEL in
``pkg/apiserver/schema/cel/validation.go``, list uniqueness in
``pkg/registry/customresource/strategy.go``); ``test_impact_real.py`` checks the same
cases against a real kube-apiserver.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.compat import Finding, Finished, Impact, Severity, Side, diff
from compatfuzz.errors import InvalidArgument
from compatfuzz.schema import Schema

ORDER = [Impact.NONE, Impact.READS, Impact.CREATE, Impact.UPDATE_FIELD, Impact.ANY_UPDATE]


def crd(root: dict[str, Any]) -> Schema:
    """A custom resource's schema, as ``load_crds`` gives it (the raw openAPIV3Schema in
    ``meta``, which is what makes the ratcheting validator apply)."""
    return Schema(root=root, kubernetes=True, meta={"openapi": root})


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


def spec(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return obj({"spec": obj(props, **extra)})


def findings(old: dict[str, Any], new: dict[str, Any], **options: Any) -> list[Finding]:
    options.setdefault("whole_budget", 0)
    options.setdefault("dynamic", False)
    return list(diff(crd(old), crd(new), **options).findings)


def one(old: dict[str, Any], new: dict[str, Any], rule: str, **options: Any) -> Finding:
    [f] = [f for f in findings(old, new, **options) if f.rule == rule]
    return f


# -- the order -----------------------------------------------------------------------------


def test_impacts_are_ordered_from_least_to_most_severe() -> None:
    assert sorted(reversed(ORDER)) == ORDER
    assert [i.value for i in ORDER] == ["none", "reads", "create", "update-field",
                                        "any-update"]
    for a in ORDER:
        for b in ORDER:
            assert (a < b) == (ORDER.index(a) < ORDER.index(b))
            assert (a >= b) == (ORDER.index(a) >= ORDER.index(b))


# -- value-level validations: ratcheted where the value is unchanged ------------------------

NAMES = st.sampled_from(["a", "b", "replicas", "x-y", "a.b"])


@settings(max_examples=40, deadline=None)
@given(path=st.lists(NAMES, min_size=1, max_size=3),
       bound=st.sampled_from([("maximum", 10, 5), ("minimum", 0, 3), ("maxLength", 9, 4),
                              ("minLength", 1, 2)]))
def test_a_tighter_scalar_bound_breaks_only_re_creating(path: list[str],
                                                        bound: tuple[str, int, int]) -> None:
    kw, before, after = bound
    kind = "integer" if kw.endswith("imum") else "string"

    def nest(value: dict[str, Any]) -> dict[str, Any]:
        for name in reversed(path):
            value = obj({name: value})
        return obj({"spec": value})

    f = one(nest({"type": kind, kw: before}), nest({"type": kind, kw: after}),
            "bound-tightened")
    where = "spec" + "".join(f'["{n}"]' if "." in n else f".{n}" for n in path)
    assert f.path == where
    assert f.impact is Impact.CREATE, f.impact_note
    assert f"while {where} is unchanged" in f.impact_note
    g = one(nest({"type": kind, kw: before}), nest({"type": kind, kw: after}),
            "bound-tightened", ratcheting=False)
    assert g.impact is Impact.ANY_UPDATE
    assert g.impact_note.startswith("no validation ratcheting: every update validates")


@pytest.mark.parametrize(("change", "rule"), [
    ({"enum": ["a", "b"]}, "enum-introduced"),
    ({"pattern": "^a+$"}, "pattern-changed"),
    ({"format": "date-time"}, "format-changed"),
])
def test_other_scalar_tightenings_break_only_re_creating(change: dict[str, Any],
                                                         rule: str) -> None:
    f = one(spec({"mode": {"type": "string"}}),
            spec({"mode": {"type": "string", **change}}), rule)
    if Side.REQUEST in f.breaks:
        assert f.impact is Impact.CREATE, f.impact_note


def test_null_no_longer_accepted_breaks_only_re_creating_even_on_an_object() -> None:
    f = one(spec({"o": {"type": "object", "nullable": True, "properties": {
        "x": {"type": "string"}}}}),
        spec({"o": {"type": "object", "properties": {"x": {"type": "string"}}}}),
        "nullable-changed")
    assert f.impact is Impact.CREATE, f.impact_note


@settings(max_examples=30, deadline=None)
@given(kw=st.sampled_from([("maxItems", 5, 2), ("minItems", 0, 2)]),
       list_type=st.sampled_from([None, "atomic", "set"]))
def test_a_bound_on_a_list_breaks_updates_that_change_the_list(
        kw: tuple[str, int, int], list_type: str | None) -> None:
    name, before, after = kw
    extra = {"x-kubernetes-list-type": list_type} if list_type else {}
    items = {"type": "string"}
    f = one(spec({"l": {"type": "array", "items": items, name: before, **extra}}),
            spec({"l": {"type": "array", "items": items, name: after, **extra}}),
            "bound-tightened")
    assert f.impact is Impact.UPDATE_FIELD
    assert f.impact_note.startswith("an update that changes spec.l fails")


@settings(max_examples=30, deadline=None)
@given(list_type=st.sampled_from([None, "atomic", "set", "map"]))
def test_a_bound_on_list_items_rises_to_the_list_unless_items_correlate(
        list_type: str | None) -> None:
    # correlateOldValueForChildAtNewIndex: items of set and atomic lists have no old value
    def schema(maximum: int) -> dict[str, Any]:
        if list_type == "map":
            items: dict[str, Any] = obj({"k": {"type": "string"},
                                         "n": {"type": "integer", "maximum": maximum}},
                                        required=["k"])
            extra: dict[str, Any] = {"x-kubernetes-list-type": "map",
                                     "x-kubernetes-list-map-keys": ["k"]}
        else:
            items = {"type": "integer", "maximum": maximum}
            extra = {"x-kubernetes-list-type": list_type} if list_type else {}
        return spec({"l": {"type": "array", "items": items, **extra}})

    f = one(schema(10), schema(5), "bound-tightened")
    if list_type in ("atomic", "set"):
        assert f.impact is Impact.UPDATE_FIELD
        assert f.impact_note.startswith("an update that changes spec.l fails"), f.impact_note
    else:
        assert f.impact is Impact.CREATE, f.impact_note


def test_a_bound_on_a_map_value_is_ratcheted_per_value() -> None:
    def schema(maximum: int) -> dict[str, Any]:
        return spec({"m": {"type": "object", "additionalProperties": {
            "type": "integer", "maximum": maximum}}})

    f = one(schema(10), schema(5), "bound-tightened")
    assert f.impact is Impact.CREATE and f.path == "spec.m[*]"


# -- errors of the holding value ------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(0, 3))
def test_a_new_required_field_breaks_updates_of_its_object_or_every_update_at_the_root(
        depth: int) -> None:
    names = ["spec", "a", "b"][:depth]

    def nest(required: bool) -> dict[str, Any]:
        node = obj({"owner": {"type": "string"}}, **({"required": ["owner"]}
                                                      if required else {}))
        for name in reversed(names):
            node = obj({name: node})
        return node

    f = one(nest(False), nest(True), "required-added")
    if depth == 0:
        assert f.impact is Impact.ANY_UPDATE and "root" in f.impact_note
    else:
        assert f.impact is Impact.UPDATE_FIELD
        assert f.impact_note.startswith(f"an update that changes {'.'.join(names)} fails")


def test_a_cel_rule_ratchets_with_the_value_it_stands_on() -> None:
    rule = [{"rule": "self != 'x'"}]
    f = one(spec({"n": {"type": "string"}}),
            spec({"n": {"type": "string", "x-kubernetes-validations": rule}}),
            "validations-changed")
    assert f.impact is Impact.CREATE, f.impact_note
    on_object = [{"rule": "!has(self.n) || self.n != 'x'"}]
    g = one(spec({"n": {"type": "string"}}),
            spec({"n": {"type": "string"}}, **{"x-kubernetes-validations": on_object}),
            "validations-changed")
    assert g.impact is Impact.UPDATE_FIELD and "changes spec fails" in g.impact_note
    root = one(obj({"spec": obj({"n": {"type": "string"}})}),
               obj({"spec": obj({"n": {"type": "string"}})},
                   **{"x-kubernetes-validations": [{"rule": "has(self.spec)"}]}),
               "validations-changed")
    assert root.impact is Impact.ANY_UPDATE


def test_a_transition_rule_that_rejects_an_unchanged_update_breaks_every_update() -> None:
    props = {"x": {"type": "integer"}}
    rule = [{"rule": "!has(self.x) || self.x > oldSelf.x"}]
    f = one(spec(props), spec(props, **{"x-kubernetes-validations": rule}),
            "validations-changed", dynamic=True, budget=30)
    assert Side.REQUEST in f.breaks
    assert f.impact is Impact.ANY_UPDATE and "oldSelf" in f.impact_note
    # one that accepts every unchanged update spares stored objects (issue 19, item 3)
    safe = one(spec(props), spec(props, **{"x-kubernetes-validations": [
        {"rule": "self == oldSelf"}]}), "validations-changed", dynamic=True, budget=30)
    assert safe.impact is Impact.NONE


def test_a_change_under_all_of_is_an_error_of_the_value_holding_it() -> None:
    def schema(maximum: int) -> dict[str, Any]:
        return spec({"o": obj({"n": {"type": "integer"}}, allOf=[
            {"properties": {"n": {"maximum": maximum}}}])})

    f = one(schema(10), schema(5), "bound-tightened")
    assert f.impact is Impact.UPDATE_FIELD
    assert f.impact_note.startswith("an update that changes spec.o fails"), f.impact_note


# -- changes that are not validation --------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "rule", "impact"), [
    (spec({"m": {"type": "string", "enum": ["a"]}}),
     spec({"m": {"type": "string", "enum": ["a", "b"]}}), "enum-value-added", Impact.READS),
    (spec({"n": {"type": "integer", "maximum": 5}}),
     spec({"n": {"type": "integer", "maximum": 10}}), "bound-relaxed", Impact.READS),
    (spec({"n": {"type": "integer", "default": 1}}),
     spec({"n": {"type": "integer", "default": 2}}), "default-changed", Impact.READS),
    (spec({"n": {"type": "integer"}}), spec({"n": {"type": "integer"},
                                             "m": {"type": "string"}}),
     "field-added", Impact.NONE),
    (spec({"n": {"type": "integer"}, "gone": {"type": "string"}}),
     spec({"n": {"type": "integer"}}), "field-removed", Impact.ANY_UPDATE),
    (spec({"l": {"type": "array", "items": {"type": "string"}}}),
     spec({"l": {"type": "array", "items": {"type": "string"},
                 "x-kubernetes-list-type": "set"}}), "list-type-changed",
     Impact.UPDATE_FIELD),
])
def test_impact_of_changes_that_are_not_value_validation(
        old: dict[str, Any], new: dict[str, Any], rule: str, impact: Impact) -> None:
    for ratcheting in (True, False):
        f = one(old, new, rule, ratcheting=ratcheting)
        assert f.impact is impact, (ratcheting, f.impact_note)


def test_ratcheting_applies_only_to_a_custom_resource_schema() -> None:
    # a plain JSON Schema (or a built-in kind) is not validated by the ratcheting validator
    old = Schema(root=spec({"n": {"type": "integer", "maximum": 10}}), kubernetes=True)
    new = Schema(root=spec({"n": {"type": "integer", "maximum": 5}}), kubernetes=True)
    [f] = diff(old, new, whole_budget=0, dynamic=False).findings
    assert f.impact is Impact.ANY_UPDATE
    assert f.impact_note.startswith("not a custom resource, so no validation ratcheting")


# -- the gate ---------------------------------------------------------------------------------


def _finding(impact: Impact | None, breaking: bool = True) -> Finding:
    return Finding("bound-tightened", "spec.n", 1, 2, "m", frozenset({Side.REQUEST}),
                   breaking=breaking, severity=Severity.ERROR, impact=impact)


@given(st.lists(st.sampled_from([*ORDER, None]), max_size=8),
       st.sampled_from([*ORDER, None]))
def test_the_gate_fails_only_at_or_above_its_level(impacts: list[Impact | None],
                                                   gate: Impact | None) -> None:
    fs = tuple(_finding(i) for i in impacts)
    fin = Finished(fs, fail_on_impact=gate)
    expected = [f for f in fs if gate is None or f.impact is None or f.impact >= gate]
    assert list(fin.breaking) == expected
    assert fin.exit_code == (1 if expected else 0)


def test_check_takes_the_gate_by_name_and_refuses_a_bad_one() -> None:
    old, new = spec({"n": {"type": "integer", "maximum": 10}}), \
        spec({"n": {"type": "integer", "maximum": 5}})
    assert diff(crd(old), crd(new), dynamic=False, whole_budget=0).exit_code == 1
    report = diff(crd(old), crd(new), dynamic=False, whole_budget=0,
                  fail_on_impact="update-field")
    assert report.exit_code == 0 and len(report.findings) == 1
    with pytest.raises(InvalidArgument, match="fail_on_impact='breaks'"):
        diff(crd(old), crd(new), dynamic=False, fail_on_impact="breaks")


def test_impact_is_in_each_findings_json() -> None:
    f = one(spec({"n": {"type": "integer", "maximum": 10}}),
            spec({"n": {"type": "integer", "maximum": 5}}), "bound-tightened")
    doc = f.to_json()
    assert doc["impact"] == "create" and "re-creating" in doc["impact_note"]


def test_a_union_on_a_scalar_ratchets_with_the_scalar_and_at_the_root_never() -> None:
    def scalar(branches: list[dict[str, Any]]) -> dict[str, Any]:
        return spec({"v": {"anyOf": branches}})

    f = one(scalar([{"type": "string"}, {"type": "integer"}]),
            scalar([{"type": "string"}]), "union-branch-removed")
    assert f.impact is Impact.CREATE, f.impact_note

    def root(maximum: int) -> dict[str, Any]:
        return obj({"spec": obj({"n": {"type": "integer"}})}, allOf=[
            {"properties": {"spec": {"properties": {"n": {"maximum": maximum}}}}}])

    g = one(root(10), root(5), "bound-tightened")
    assert g.path == "spec.n" and g.impact is Impact.ANY_UPDATE, g.impact_note


@pytest.mark.parametrize("rule, old, new", [
    ("required-added", obj({"status": obj({"a": {"type": "string"}})}),
     obj({"status": obj({"a": {"type": "string"}}, required=["a"])})),
    ("enum-value-removed", obj({"status": obj({"p": {"enum": ["A", "B"]}})}),
     obj({"status": obj({"p": {"enum": ["A"]}})})),
])
def test_a_change_that_breaks_no_side_that_matters_has_no_impact(
        rule: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    """Status is written by the server (direction auto): a request-side change there is
    info, and its impact must not claim that updates fail (audit, issue 19)."""
    f = one(old, new, rule)
    assert (f.breaking, f.severity) == (False, Severity.INFO)
    assert f.impact is Impact.NONE, (f.impact, f.impact_note)
    assert "status" in f.impact_note
    g = one(old, new, rule, direction="both")
    assert g.breaking and g.impact is not None and g.impact > Impact.NONE
