"""CEL rules in witnesses (issue 19, item 3): an added rule is evaluated, not assumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.compat import Side, Status, diff, load_revision
from compatfuzz.schema import Schema
from compatfuzz.strategies._cel import compile_rules, holds_without, transition_holds


def crd(props: dict[str, Any], rules: list[str] | None = None) -> Schema:
    """A Kubernetes object schema whose ``spec`` has ``props`` and the CEL ``rules``."""
    spec: dict[str, Any] = {"type": "object", "properties": props}
    if rules:
        spec["x-kubernetes-validations"] = [
            {"rule": r, "message": f"message of {r}"} for r in rules]
    return Schema(root={"type": "object", "properties": {"spec": spec}}, kubernetes=True)


def finding(report: Any) -> Any:
    [f] = [f for f in report.findings if f.rule == "validations-changed"]
    return f


def rejects(rule: str, node: dict[str, Any], value: Any) -> bool:
    """The project's evaluator, as the API server binds ``self`` at the rule's node."""
    return not compile_rules({**node, "x-kubernetes-validations": [{"rule": rule}]}).check(
        value)


FLUX_RULE = "!has(self.serviceAccountName) || (has(self.provider) && self.provider == 'azure')"


def test_rule_over_a_field_new_in_new_is_compatible_by_construction() -> None:
    old = crd({"provider": {"type": "string"}})
    new = crd({"provider": {"type": "string"}, "serviceAccountName": {"type": "string"}},
              [FLUX_RULE])
    r = diff(old, new, whole_budget=0)
    f = finding(r)
    assert not f.breaking and f.severity.value == "info" and f.witness is None
    assert Side.REQUEST not in f.breaks
    assert "compatible by construction" in f.message
    assert "OLD has no serviceAccountName" in f.message
    assert r.exit_code == 0


def test_by_construction_needs_no_search() -> None:
    old = crd({"provider": {"type": "string"}})
    new = crd({"provider": {"type": "string"}, "serviceAccountName": {"type": "string"}},
              [FLUX_RULE])
    f = finding(diff(old, new, dynamic=False))
    assert not f.breaking and "compatible by construction" in f.message


def test_rule_requiring_the_new_field_is_confirmed_by_any_old_object() -> None:
    # new field, but has() is asked to be true: every stored object breaks it
    old = crd({"provider": {"type": "string"}})
    new = crd({"provider": {"type": "string"}, "serviceAccountName": {"type": "string"}},
              ["has(self.serviceAccountName)"])
    f = finding(diff(old, new, whole_budget=0))
    assert f.breaking and f.status is Status.CONFIRMED
    assert f.witness.path == "spec" and f.witness.value == {}
    assert "message of has(self.serviceAccountName)" in f.witness.reason


def test_rule_with_a_witness_is_confirmed_with_an_object_that_violates_it() -> None:
    props = {"min": {"type": "integer", "format": "int32"},
             "max": {"type": "integer", "format": "int32"}}
    rule = "!has(self.min) || self.min <= (has(self.max) ? self.max : 100)"
    old, new = crd(props), crd(props, [rule])
    f = finding(diff(old, new, whole_budget=0))
    assert f.breaking and f.status is Status.CONFIRMED
    w = f.witness
    assert w.side is Side.REQUEST and w.path == "spec"
    assert old.is_valid({"spec": w.value})
    assert rejects(rule, new.root["properties"]["spec"], w.value)
    assert f"rejected by NEW: message of {rule}" in w.reason


def test_rule_no_old_object_can_violate_is_not_confirmed() -> None:
    old = crd({"x": {"type": "integer", "minimum": 0}})
    new = crd({"x": {"type": "integer", "minimum": 0}}, ["!has(self.x) || self.x >= 0"])
    f = finding(diff(old, new, budget=60, whole_budget=0))
    assert f.status is Status.UNCONFIRMED and f.witness is None
    assert "not confirmed" in f.message


def test_same_rule_one_past_the_minimum_is_confirmed_at_the_bound() -> None:
    old = crd({"x": {"type": "integer", "minimum": 0}})
    new = crd({"x": {"type": "integer", "minimum": 0}}, ["!has(self.x) || self.x >= 1"])
    f = finding(diff(old, new, whole_budget=0))
    assert f.status is Status.CONFIRMED and f.witness.value == {"x": 0}


def test_removed_rule_is_searched_on_the_response_side() -> None:
    props = {"x": {"type": "integer"}}
    f = finding(diff(crd(props, ["!has(self.x) || self.x <= 10"]), crd(props),
                     direction="both", whole_budget=0))
    assert f.status is Status.CONFIRMED and f.witness.side is Side.RESPONSE
    assert f.witness.value["x"] > 10 and "rejected by OLD" in f.witness.reason


@pytest.mark.parametrize(("before", "after", "side"), [
    (20, 10, Side.REQUEST),    # tightened: an OLD object with 11..20 breaks NEW's rule
    (10, 20, Side.RESPONSE),   # loosened: a NEW object with 11..20 breaks OLD's rule
])
def test_rewritten_rule_is_judged_against_the_objects_the_old_rule_allows(
        before: int, after: int, side: Side) -> None:
    props = {"x": {"type": "integer"}}
    old_rule, new_rule = (f"!has(self.x) || self.x <= {n}" for n in (before, after))
    f = finding(diff(crd(props, [old_rule]), crd(props, [new_rule]), direction="both",
                     whole_budget=0))
    assert f.status is Status.CONFIRMED and f.witness.side is side
    x = f.witness.value["x"]
    assert min(before, after) < x <= max(before, after)  # each writer's own rule holds
    node = {"type": "object", "properties": props}
    writer, reader = (old_rule, new_rule) if side is Side.REQUEST else (new_rule, old_rule)
    assert not rejects(writer, node, f.witness.value)
    assert rejects(reader, node, f.witness.value)


def test_rewritten_rule_no_stricter_for_old_objects_has_no_request_witness() -> None:
    props = {"x": {"type": "integer"}}
    f = finding(diff(crd(props, ["!has(self.x) || self.x <= 10"]),
                     crd(props, ["!has(self.x) || self.x < 11"]), direction="request",
                     budget=60, whole_budget=0))
    assert f.status is Status.UNCONFIRMED and f.witness is None


def test_transition_rule_that_accepts_unchanged_updates_spares_stored_objects() -> None:
    props = {"x": {"type": "string"}}
    f = finding(diff(crd(props), crd(props, ["self == oldSelf"]), whole_budget=0))
    assert not f.breaking and Side.REQUEST not in f.breaks
    assert "transition rule (oldSelf)" in f.message and "stored objects are safe" in f.message


def test_transition_rule_that_rejects_an_unchanged_update_breaks_updates() -> None:
    props = {"x": {"type": "integer"}}
    rule = "!has(self.x) || self.x > oldSelf.x"
    f = finding(diff(crd(props), crd(props, [rule]), whole_budget=0))
    assert f.breaking and f.status is Status.CONFIRMED
    value = f.witness.value
    assert "unchanged update" in f.witness.reason
    node = {"type": "object", "properties": props}
    assert transition_holds(rule, value, value, node) is False


def test_rule_added_under_status_is_not_judged_for_requests() -> None:
    # status is written by the server only (direction auto): no request side to judge
    old = Schema(root={"type": "object", "properties": {"status": {
        "type": "object", "properties": {"x": {"type": "integer"}}}}}, kubernetes=True)
    new = Schema(root={"type": "object", "properties": {"status": {
        "type": "object", "properties": {"x": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "!has(self.x) || self.x > 0"}]}}},
        kubernetes=True)
    f = finding(diff(old, new, whole_budget=0))
    assert not f.breaking and f.status is Status.NOT_CHECKED and f.witness is None


def test_transition_rule_with_optional_old_self_runs_on_create_so_is_not_spared() -> None:
    props = {"x": {"type": "string"}}
    new = crd(props)
    new.root["properties"]["spec"]["x-kubernetes-validations"] = [
        {"rule": "self == oldSelf", "optionalOldSelf": True}]
    f = finding(diff(crd(props), new, whole_budget=0))
    assert f.breaking and f.status is Status.UNCONFIRMED and "optionalOldSelf" in f.message


def test_a_null_value_is_not_a_witness_the_api_server_skips_it() -> None:
    # validation.go validates non-null values only: null under a nullable field is fine
    node = {"type": ["integer", "null"], "minimum": 1}
    old = crd({"x": node})
    new = crd({"x": {**node, "x-kubernetes-validations": [{"rule": "self > 0"}]}})
    f = finding(diff(old, new, budget=60, whole_budget=0))
    assert f.path == "spec.x" and f.witness is None and f.status is Status.UNCONFIRMED


OTHER = ["!has(self.sa) || has(self.p)", "!has(self.sa) || self.p == 'a'",
         "has(self.sa) ? self.sa == 'b' : true", "!has(self.sa) && has(self.p)",
         "has(self.p) || !has(self.sa)", "has(self.sa)", "!has(self.sa) || self.n > 2",
         "has(self.n) ? self.n > 2 : !has(self.sa)"]


@given(st.fixed_dictionaries({}, optional={"p": st.sampled_from(["a", "b", ""]),
                                           "n": st.integers(-3, 5)}))
def test_a_proof_by_construction_holds_on_every_object_without_the_field(
        obj: dict[str, Any]) -> None:
    node = {"type": "object", "properties": {"p": {"type": "string"},
                                             "n": {"type": "integer"},
                                             "sa": {"type": "string"}}}
    for rule in OTHER:
        proven, used = holds_without(rule, lambda name: name == "sa")
        if proven:
            assert used == ("sa",)
            assert not rejects(rule, node, obj), (rule, obj)


def test_proofs_are_not_given_where_an_object_without_the_field_breaks_the_rule() -> None:
    def absent(name: str) -> bool:
        return name == "sa"

    assert holds_without("!has(self.sa) || has(self.p)", absent)[0]
    assert not holds_without("!has(self.sa) && has(self.p)", absent)[0]
    assert not holds_without("has(self.sa)", absent)[0]
    assert not holds_without("!has(self.sa) || self.n > 2", lambda name: False)[0]


# -- the corpus cases of issue 19 ------------------------------------------------------


def _pair(corpus_dir: Path, project: str, crd_name: str, a: str, b: str) -> tuple[Path, Path]:
    base = corpus_dir / "crd-releases" / project / crd_name
    return base / f"{a}.yaml", base / f"{b}.yaml"


@pytest.mark.corpus
def test_flux_gitrepository_rule_over_new_service_account_name_is_not_breaking(
        corpus_dir: Path) -> None:
    old, new = _pair(corpus_dir, "flux-source-controller",
                     "source.toolkit.fluxcd.io_gitrepositories", "v1.6.0", "v1.7.0")
    r = diff(old, new, budget=20, whole_budget=0)
    [f] = [f for f in r.findings if f.rule == "validations-changed"]
    assert (f.version, f.path) == ("v1", "spec") and FLUX_RULE in f.new
    assert not f.breaking and "compatible by construction" in f.message
    # what still breaks is the removal of v1beta1, which the changelog announces
    assert {b.rule for b in r.breaking} == {"version-removed"}


@pytest.mark.corpus
def test_keda_scaledobject_min_replica_count_rule_has_a_witness(corpus_dir: Path) -> None:
    old, new = _pair(corpus_dir, "keda", "keda.sh_scaledobjects", "v2.19.0", "v2.20.0")
    r = diff(old, new, whole_budget=0)
    [f] = [f for f in r.findings if f.rule == "validations-changed"]
    assert f.breaking and f.status is Status.CONFIRMED and f.path == "spec"
    [rule] = f.new
    w = f.witness.value
    assert w["minReplicaCount"] > w.get("maxReplicaCount", 100)
    assert next(iter(w)) == "minReplicaCount"  # what the rule reads comes first
    old_spec = load_revision(old).schemas()["v1alpha1"].root["properties"]["spec"]
    new_spec = load_revision(new).schemas()["v1alpha1"].root["properties"]["spec"]
    assert Schema(root=old_spec, kubernetes=True).is_valid(w)
    assert rejects(rule, new_spec, w)
