"""Regressions from the fifth audit of ``compatfuzz diff``: each test fails without its fix.

1. a field added under ``x-kubernetes-preserve-unknown-fields`` narrowed what is accepted;
2. a witness was credited to a finding whatever keyword rejected it;
3. an ignored parent finding hid an unrelated break below it;
4. null added to / removed from an enum was invisible;
5. ``default-missing-in-version`` reported gaps OLD already had, and default findings
   were "confirmed" by a placeholder witness;
6. ``nullable: true`` in a plain JSON Schema was read as accepting null.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.compat import Policy, Side, Status, diff
from compatfuzz.compat import _engine as engine
from compatfuzz.compat._model import Finding
from compatfuzz.compat._policy import IgnoreEntry
from compatfuzz.compat._static import walk
from compatfuzz.compat._witness import Judge, Rejection, explains
from compatfuzz.schema import CRD, CRDVersion, Schema


def preserved(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"b": {"type": "string"}, **props}}}}


def k8s(root: dict[str, Any]) -> Schema:
    return Schema(root=root, kubernetes=True)


# -- 1. preserve-unknown-fields ---------------------------------------------------------


def test_field_added_under_preserved_unknown_fields_breaks_requests() -> None:
    r = diff(k8s(preserved()), k8s(preserved(a={"type": "integer"})), whole_budget=0)
    [f] = r.findings
    assert (f.rule, f.path, set(f.breaks), f.breaking) == (
        "field-added", "spec.a", {Side.REQUEST}, True)
    # OLD kept {"a": <anything>}; NEW rejects what is not an integer
    assert f.status is Status.CONFIRMED and r.exit_code == 1
    assert set(f.witness.value) == {"a"} and not isinstance(f.witness.value["a"], int)


def test_field_removed_under_preserved_unknown_fields_is_kept_not_lost() -> None:
    # NEW keeps 'a' as an unknown field: no data loss, but the server may send any value
    found = [(f.rule, f.breaks) for f in walk(
        k8s(preserved(a={"type": "integer"})), k8s(preserved()), pruning=True)]
    assert found == [("field-removed", frozenset({Side.RESPONSE}))]


def test_whole_schema_search_sends_the_names_the_reader_declares(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # with no rule at all, the whole-schema search alone must find {"spec": {"a": ...}}
    monkeypatch.setattr(engine, "walk_with_aliases", lambda *a, **k: ([], []))
    r = diff(k8s(preserved()), k8s(preserved(a={"type": "integer"})), whole_budget=100)
    [f] = r.findings
    assert (f.rule, f.path, f.status) == ("witness-only", "spec.a", Status.CONFIRMED)


def test_content_closed_on_an_open_object_is_confirmed() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string"}}}
    new = {**old, "additionalProperties": False}
    f = next(f for f in diff(old, new, whole_budget=0).findings
             if f.rule == "content-closed")
    assert f.status is Status.CONFIRMED and set(f.witness.value) - {"a"}


@pytest.mark.parametrize(("old", "new", "rule", "kubernetes"), [
    # NEW keeps 'b' as an unknown field of any value: old clients reject non-integers
    ({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
     {"type": "object", "properties": {"a": {"type": "string"}}}, "field-removed", False),
    # unknown fields OLD preserved are pruned by NEW: data loss
    (preserved(), {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"b": {"type": "string"}}}}}, "content-closed", True),
])
def test_changes_to_open_objects_are_confirmed(old: dict[str, Any], new: dict[str, Any],
                                               rule: str, kubernetes: bool) -> None:
    r = diff(Schema(root=old, kubernetes=kubernetes), Schema(root=new, kubernetes=kubernetes),
             whole_budget=0, budget=100)
    [f] = [f for f in r.findings if f.rule == rule]
    assert f.breaking and f.status is Status.CONFIRMED, f.to_json()


# -- 2. keyword attribution -------------------------------------------------------------


def test_a_witness_counts_only_for_its_own_keyword() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x+$"}}}
    new = {"type": "object", "properties": {"a": {
        "type": "string", "pattern": "^x+$", "minLength": 1, "maxLength": 3}}}
    r = diff(old, new, budget=100, whole_budget=0)
    status = {f.keyword: f.status for f in r.findings}
    assert status == {"minLength": Status.UNCONFIRMED, "maxLength": Status.CONFIRMED}


@settings(max_examples=30)
@given(st.sampled_from(["minimum", "maximum", "minLength", "maxLength", "pattern", "enum",
                        "type", "format"]),
       st.sampled_from(["minimum", "maximum", "minLength", "maxLength", "pattern",
                        "multipleOf"]))
def test_explains_needs_the_same_keyword(rejecting: str, finding_keyword: str) -> None:
    f = Finding("bound-tightened", "spec.x", 1, 2, "", frozenset({Side.REQUEST}),
                keyword=finding_keyword)
    here = Rejection(rejecting, "spec.x", "no")
    below = Rejection(finding_keyword, "spec.x.y", "no")
    assert explains(f, here) == (rejecting == finding_keyword)
    assert not explains(f, below)


# -- 3. ignores hide nothing else -------------------------------------------------------


MASK_OLD = {"type": "object", "required": ["a"], "properties": {
    "a": {"type": "object", "properties": {"y": {"enum": ["p", "q"]}}}}}
MASK_NEW = {"type": "object", "properties": {
    "a": {"type": "object", "properties": {"y": {"enum": ["p", "q", None]}}}}}


def test_an_ignored_parent_finding_does_not_hide_a_child_break() -> None:
    policy = Policy(ignores=(IgnoreEntry("required-removed", "a", "announced"),))
    r = diff(MASK_OLD, MASK_NEW, policy=policy, whole_budget=50)
    assert r.exit_code == 1
    assert [(f.path, f.ignored) for f in r.breaking] == [("a.y", False)]


def test_whole_schema_witness_is_explained_only_by_keyword_and_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # even with the enum rule gone, required-removed at 'a' must not explain a.y's null
    def only_required(*a: Any, **k: Any) -> Any:
        found, aliases = walk_with_aliases(*a, **k)
        return [f for f in found if f.rule == "required-removed"], aliases

    walk_with_aliases = engine.walk_with_aliases
    monkeypatch.setattr(engine, "walk_with_aliases", only_required)
    r = diff(MASK_OLD, MASK_NEW, whole_budget=100, direction="response")
    assert ("witness-only", "a.y") in [(f.rule, f.path) for f in r.findings]


# -- 4. null in enums -------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "rule", "side"), [
    (["p"], ["p", None], "enum-value-added", Side.RESPONSE),
    (["p", None], ["p"], "enum-value-removed", Side.REQUEST),
])
def test_null_in_an_enum_is_a_value_like_any_other(old: list[Any], new: list[Any],
                                                   rule: str, side: Side) -> None:
    r = diff({"type": "object", "properties": {"y": {"enum": old}}},
             {"type": "object", "properties": {"y": {"enum": new}}}, whole_budget=50)
    [f] = r.findings
    assert (f.rule, set(f.breaks), f.status) == (rule, {side}, Status.CONFIRMED)
    assert f.witness.value is None and "null" in f.message


# -- 5. defaults ------------------------------------------------------------------------


def _gap_crd(*versions: tuple[str, int | None]) -> CRD:
    def schema(default: int | None) -> Schema:
        x: dict[str, Any] = {"type": "integer"}
        if default is not None:
            x["default"] = default
        return k8s({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"replicas": x}}}})

    return CRD("example.com", "Widget", "widgets", "Namespaced", tuple(
        CRDVersion(name, True, i == len(versions) - 1, schema(d))
        for i, (name, d) in enumerate(versions)))


def test_a_crd_diffed_against_itself_has_no_default_gap() -> None:
    crd = _gap_crd(("v1", None), ("v2", 3))
    assert diff(crd, crd).findings == ()


def test_only_a_gap_new_introduces_is_reported_with_versions_only_new_serves() -> None:
    old = _gap_crd(("v1", None))
    new = _gap_crd(("v1", None), ("v2", 3))  # v2 is new and defaults what v1 does not
    gaps = [f for f in diff(old, new).findings if f.rule == "default-missing-in-version"]
    assert [(f.version, f.path, f.new) for f in gaps] == [("v1", "spec.replicas", 3)]
    assert gaps[0].message == "defaulted to 3 in v2 of NEW but has no default in v1 of NEW"
    # the gap sits in a version only NEW serves: still reported
    new2 = _gap_crd(("v1", 3), ("v2", None))
    gaps2 = [f for f in diff(old, new2).findings if f.rule == "default-missing-in-version"]
    assert [f.version for f in gaps2] == ["v2"]


def test_default_findings_are_not_checked_not_fake_confirmed() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    new = {"type": "object", "properties": {"a": {"type": "string", "default": "y"}}}
    [f] = diff(old, new).findings
    assert (f.rule, f.status, f.witness, f.breaking) == (
        "default-changed", Status.NOT_CHECKED, None, True)


# -- 6. nullable ------------------------------------------------------------------------


def test_nullable_is_an_unknown_keyword_in_plain_json_schema() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}
    new = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert diff(old, new).findings == ()  # the validator never accepted null here
    assert not Judge(Schema(root=old), Schema(root=new), pruning=False).old.is_valid(
        {"a": None})
    # a raw Kubernetes schema means it
    found = [(f.rule, f.breaks) for f in walk(k8s(old), k8s(new))]
    assert found == [("nullable-changed", frozenset({Side.REQUEST}))]


# -- review files: narrow verdicts ------------------------------------------------------


def test_an_ignore_entry_can_name_the_keyword(tmp_path: Any) -> None:
    from compatfuzz.compat import load_policy

    path = tmp_path / "ignore.yaml"
    path.write_text("ignore:\n  - rule: bound-tightened\n    path: a\n    keyword: maxLength\n"
                    "    reason: announced\n")
    policy = load_policy(path)
    r = diff({"type": "object", "properties": {"a": {"type": "string"}}},
             {"type": "object", "properties": {"a": {
                 "type": "string", "minLength": 2, "maxLength": 3}}},
             policy=policy, whole_budget=0)
    assert {f.keyword: f.ignored for f in r.findings} == {"minLength": False,
                                                         "maxLength": True}


# -- a oneOf widened beside a new branch (Istio DestinationRule loadBalancer, 1.31 -> 1.32) -


def _balancer(*names: str) -> dict[str, Any]:
    """``lb``: at most one of ``names`` set, as Istio's ``loadBalancer`` oneOf says it."""
    props = {n: {"type": "object", "properties": {"k": {"type": "string"}}} for n in names}
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "lb": {"type": "object", "properties": props, "oneOf": [
            {"not": {"anyOf": [{"required": [n]} for n in names]}},
            *({"required": [n]} for n in names)]}}}}}


def test_a_oneof_widened_beside_a_new_branch_is_no_break_in_a_crd() -> None:
    """Matched by position, branch 0 reads as removed and added and the new one as added;
    judged as whole schemas, a CRD accepts every value it accepted before (a new field is
    pruned by the old server): no error, and no witness that one branch alone refuses."""
    r = diff(k8s(_balancer("simple", "hash")), k8s(_balancer("simple", "hash", "util")))
    unions = [f for f in r.findings if f.rule.startswith("union-branch")]
    assert len(unions) == 3
    assert not any(f.breaking for f in unions), [(f.rule, f.witness) for f in unions]
    assert r.exit_code == 0


def test_a_union_witness_is_a_value_the_whole_union_refuses() -> None:
    """Without pruning (a plain JSON Schema), an object with an old field and the new one
    matches two branches: the oneOf itself refuses it, and that is the witness."""
    old, new = _balancer("simple", "hash"), _balancer("simple", "hash", "util")
    r = diff(Schema(root=old), Schema(root=new))
    witnessed = [f for f in r.findings if f.rule.startswith("union-branch") and f.witness]
    assert witnessed and r.exit_code == 1
    import jsonschema

    lb_old = old["properties"]["spec"]["properties"]["lb"]
    lb_new = new["properties"]["spec"]["properties"]["lb"]
    for f in witnessed:
        value = f.witness.value
        assert jsonschema.Draft202012Validator(lb_old).is_valid(value), f
        assert not jsonschema.Draft202012Validator(lb_new).is_valid(value), f
        assert any(e.validator == "oneOf" for e in
                   jsonschema.Draft202012Validator(lb_new).iter_errors(value)), f
