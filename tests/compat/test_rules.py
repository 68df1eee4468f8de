"""Each static rule, on the smallest schema pair that triggers it, in both directions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from compatfuzz.compat import Direction, Side, Status, diff
from compatfuzz.compat._static import default_gaps, walk
from compatfuzz.schema import CRD, CRDVersion, Schema
from tests.compat._gen import leaf_schemas, object_schemas

REQ, RESP = frozenset({Side.REQUEST}), frozenset({Side.RESPONSE})
BOTH = REQ | RESP


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def spec(node: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {**obj(x=node), **extra}}}


def rules(old: dict[str, Any], new: dict[str, Any], **kw: Any) -> list[tuple[str, str, Any]]:
    return [(f.rule, f.path, f.breaks)
            for f in walk(Schema(root=old), Schema(root=new), **kw)]


CASES: list[tuple[str, dict[str, Any], dict[str, Any], str, str, frozenset[Side]]] = [
    ("type narrowed", spec({"type": ["string", "integer"]}), spec({"type": "string"}),
     "type-changed", "spec.x", REQ),
    ("integer widened to number", spec({"type": "integer"}), spec({"type": "number"}),
     "type-changed", "spec.x", RESP),
    ("singular to plural", spec({"type": "string"}),
     spec({"type": "array", "items": {"type": "string"}}), "singular-to-plural", "spec.x",
     BOTH),
    ("plural to singular", spec({"type": "array", "items": {"type": "string"}}),
     spec({"type": "string"}), "plural-to-singular", "spec.x", BOTH),
    ("wrapped in anyOf", spec({"type": "string"}),
     spec({"anyOf": [{"type": "string"}, {"type": "integer"}]}), "wrapped-in-union",
     "spec.x", RESP),
    ("wrapped in oneOf (exclusive: overlaps reject)", spec({"type": "string"}),
     spec({"oneOf": [{"type": "string"}, {"type": "integer"}]}), "wrapped-in-union",
     "spec.x", BOTH),
    ("unwrapped", spec({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
     spec({"type": "string"}), "unwrapped-from-union", "spec.x", REQ),
    ("branch added", spec({"anyOf": [{"type": "string"}]}),
     spec({"anyOf": [{"type": "string"}, {"type": "boolean"}, {"type": "null"}]}),
     "union-branch-added", "spec.x", RESP),
    ("required added", spec({"type": "string"}),
     spec({"type": "string"}, required=["x"]), "required-added", "spec.x", REQ),
    ("required removed", spec({"type": "string"}, required=["x"]),
     spec({"type": "string"}), "required-removed", "spec.x", RESP),
    ("default added", spec({"type": "string"}), spec({"type": "string", "default": "a"}),
     "default-added", "spec.x", BOTH),
    ("default changed", spec({"type": "string", "default": "a"}),
     spec({"type": "string", "default": "b"}), "default-changed", "spec.x", BOTH),
    ("nullable added", spec({"type": "string"}), spec({"type": ["string", "null"]}),
     "nullable-changed", "spec.x", RESP),
    ("enum value added", spec({"enum": ["a"]}), spec({"enum": ["a", "b"]}),
     "enum-value-added", "spec.x", RESP),
    ("enum value removed", spec({"enum": ["a", "b"]}), spec({"enum": ["a"]}),
     "enum-value-removed", "spec.x", REQ),
    ("enum introduced", spec({"type": "string"}), spec({"type": "string", "enum": ["a"]}),
     "enum-introduced", "spec.x", REQ),
    ("maximum tightened", spec({"type": "integer", "maximum": 9}),
     spec({"type": "integer", "maximum": 5}), "bound-tightened", "spec.x", REQ),
    ("minLength relaxed", spec({"type": "string", "minLength": 3}),
     spec({"type": "string"}), "bound-relaxed", "spec.x", RESP),
    ("multipleOf tightened", spec({"type": "integer", "multipleOf": 2}),
     spec({"type": "integer", "multipleOf": 4}), "bound-tightened", "spec.x", REQ),
    ("uniqueItems", spec({"type": "array", "items": {"type": "integer"}}),
     spec({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
     "bound-tightened", "spec.x", REQ),
    ("closed", spec({"type": "object"}),
     spec({"type": "object", "properties": {"a": {}}, "additionalProperties": False}),
     "content-closed", "spec.x", REQ),
    ("list-type", spec({"type": "array", "items": {"type": "string"}}),
     spec({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}),
     "list-type-changed", "spec.x", BOTH),
    ("map-type", spec({"type": "object", "x-kubernetes-map-type": "atomic"}),
     spec({"type": "object"}), "map-type-changed", "spec.x", BOTH),
    ("CEL rule added", spec({"type": "string"}),
     spec({"type": "string", "x-kubernetes-validations": [{"rule": "self != 'a'"}]}),
     "validations-changed", "spec.x", REQ),
    ("unknown keyword", spec({"type": "string", "contains": {"const": 1}}),
     spec({"type": "string", "contains": {"const": 2}}), "unhandled", "spec.x", BOTH),
]


@pytest.mark.parametrize(("old", "new", "rule", "path", "breaks"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_fires_with_sides(old: dict[str, Any], new: dict[str, Any], rule: str,
                               path: str, breaks: frozenset[Side]) -> None:
    found = rules(old, new)
    assert (rule, path, breaks) in found, found


def test_rename_is_one_finding_not_remove_plus_add() -> None:
    old = spec({"type": "string", "maxLength": 3})
    new = {"type": "object", "properties": {"spec": obj(y={"type": "string",
                                                            "maxLength": 3})}}
    assert [r for r, _, _ in rules(old, new)] == ["field-renamed"]


def test_neutral_bounds_are_no_change() -> None:
    assert rules(spec({"type": "string"}), spec({"type": "string", "minLength": 0})) == []
    assert rules(spec({"type": "array", "minItems": 0}), spec({"type": "array"})) == []


def test_two_plain_strings_are_not_a_rename() -> None:
    old = spec({"type": "string"})
    new = {"type": "object", "properties": {"spec": obj(y={"type": "string"})}}
    assert sorted(r for r, _, _ in rules(old, new)) == ["field-added", "field-removed"]


def test_kubernetes_pruning_makes_added_fields_harmless_and_removed_ones_lossy() -> None:
    old, new = spec({"type": "string"}), {"type": "object", "properties": {
        "spec": obj(y={"type": "integer"})}}
    found = {r: b for r, _, b in rules(old, new, pruning=True)}
    assert found == {"field-removed": REQ, "field-added": frozenset()}


def test_pruned_new_field_can_leave_an_object_below_min_properties() -> None:
    old = spec({"type": "string"}, minProperties=1)
    new = {"type": "object", "properties": {"spec": {
        "type": "object", "minProperties": 1,
        "properties": {"x": {"type": "string"}, "y": {"type": "string"}}}}}
    assert rules(old, new, pruning=True) == [("field-added", "spec.y", RESP)]
    r = diff(Schema(root=old, kubernetes=True), Schema(root=new, kubernetes=True),
             whole_budget=0)
    [f] = r.findings
    # the server sends {"y": ...}; an old client drops y and is left with {}
    assert f.breaking and f.witness is not None and f.witness.value == {"y": ""}


def test_number_to_integer_still_compares_bounds() -> None:
    # found by the differential test: integer overlaps number, so the walk goes on
    found = rules(spec({"type": "number", "maximum": -5}), spec({"type": "integer"}))
    assert found == [("type-changed", "spec.x", REQ), ("bound-relaxed", "spec.x", RESP)]


def test_nullable_via_type_list_is_detected_not_as_type_change() -> None:
    found = rules(spec({"type": ["integer", "null"]}), spec({"type": "integer"}))
    assert found == [("nullable-changed", "spec.x", REQ)]


def test_refs_followed_and_shared_definition_reported_once() -> None:
    def doc(max_len: int) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "a": {"$ref": "#/$defs/Name"}, "b": {"$ref": "#/$defs/Name"}},
            "$defs": {"Name": {"type": "string", "maxLength": max_len}}}

    found = list(walk(Schema(root=doc(10)), Schema(root=doc(5))))
    assert [(f.rule, f.path, f.definition) for f in found] == [
        ("bound-tightened", "a", "Name")]


def test_recursive_schema_terminates() -> None:
    def doc(t: str) -> dict[str, Any]:
        return {"$ref": "#/$defs/Node", "$defs": {"Node": {"type": "object", "properties": {
            "v": {"type": t}, "next": {"$ref": "#/$defs/Node"}}}}}

    found = rules(doc("string"), doc("integer"))
    assert [(r, p) for r, p, _ in found] == [("type-changed", "v")]


def test_default_missing_in_one_served_version() -> None:
    v1 = Schema(root=spec({"type": "integer", "default": 3}))
    v2 = Schema(root=spec({"type": "integer"}))
    gaps = list(default_gaps({"v1beta1": v2, "v1": v1}))
    assert [(g.rule, g.version, g.path, g.new) for g in gaps] == [
        ("default-missing-in-version", "v1beta1", "spec.x", 3)]


def _crd(versions: list[tuple[str, bool, bool]], scope: str = "Namespaced") -> CRD:
    schema = Schema(root=spec({"type": "string"}), kubernetes=True)
    return CRD("example.com", "Widget", "widgets", scope, tuple(
        CRDVersion(n, served, storage, schema) for n, served, storage in versions))


def test_crd_level_rules() -> None:
    old = _crd([("v1beta1", True, False), ("v1", True, True)])
    new = _crd([("v1beta1", False, False), ("v1", True, False), ("v2", True, True)],
               scope="Cluster")
    report = diff(old, new, dynamic=False)
    got = {(f.rule, f.version, f.breaking) for f in report.findings}
    assert got == {("version-removed", "v1beta1", True), ("version-added", "v2", False),
                   ("storage-version-changed", "", False), ("scope-changed", "", True)}
    assert report.exit_code == 1


def test_direction_auto_status_is_response_only() -> None:
    def doc(enum: list[str]) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "spec": obj(x={"enum": enum}), "status": obj(x={"enum": enum})}}

    removed = diff(doc(["a", "b"]), doc(["a"]), dynamic=False)
    breaking = {f.path: f.breaking for f in removed.findings}
    # removing a value a client may send breaks spec; the server no longer sending it is fine
    assert breaking == {"spec.x": True, "status.x": False}
    for direction, expected in [(Direction.REQUEST, {"spec.x": True, "status.x": True}),
                                (Direction.RESPONSE, {"spec.x": False, "status.x": False})]:
        r = diff(doc(["a", "b"]), doc(["a"]), dynamic=False, direction=direction)
        assert {f.path: f.breaking for f in r.findings} == expected


@given(object_schemas())
def test_identical_revisions_have_no_findings(schema: dict[str, Any]) -> None:
    assert rules(schema, schema) == []


_MIRROR = {"bound-tightened": "bound-relaxed", "enum-value-added": "enum-value-removed",
           "required-added": "required-removed", "enum-introduced": "enum-dropped",
           "field-added": "field-removed", "content-closed": "content-opened",
           "wrapped-in-union": "unwrapped-from-union",
           "union-branch-added": "union-branch-removed",
           "singular-to-plural": "plural-to-singular", "default-added": "default-removed"}
_MIRROR.update({v: k for k, v in list(_MIRROR.items())})


@given(leaf_schemas(), leaf_schemas())
def test_swapping_revisions_mirrors_rules_and_sides(a: dict[str, Any],
                                                    b: dict[str, Any]) -> None:
    """OLD->NEW and NEW->OLD describe the same change seen from the other end."""
    fwd = [(f.rule, f.path, f.breaks) for f in walk(Schema(root=spec(a)),
                                                     Schema(root=spec(b)))]
    back = [(f.rule, f.path, f.breaks) for f in walk(Schema(root=spec(b)),
                                                      Schema(root=spec(a)))]
    flip = {Side.REQUEST: Side.RESPONSE, Side.RESPONSE: Side.REQUEST}
    expected = sorted((_MIRROR.get(r, r), p, frozenset(flip[s] for s in br))
                      for r, p, br in fwd if r not in ("field-renamed", "default-changed"))
    got = sorted((r, p, br) for r, p, br in back
                 if r not in ("field-renamed", "default-changed"))
    # bound changes that are neither tighter nor looser stay BOTH under both names
    norm = [(r if not r.startswith("bound-") else "bound", p, br) for r, p, br in got]
    assert norm == [(r if not r.startswith("bound-") else "bound", p, br)
                    for r, p, br in expected]


def test_status_enum_is_ok_without_search() -> None:
    r = diff({"type": "object", "properties": {"status": obj(phase={"enum": ["A", "B"]})}},
             {"type": "object", "properties": {"status": obj(phase={"enum": ["A"]})}})
    assert r.exit_code == 0
    assert [f.status for f in r.findings] == [Status.NOT_CHECKED]
