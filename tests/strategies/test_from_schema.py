"""Every value from_schema draws is valid, and generation is rich, bounded and steerable."""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, UnsupportedRuleWarning, UnsupportedSchema
from compatfuzz.schema import Schema, load_kubernetes
from compatfuzz.strategies import Overrides, from_schema
from tests.strategies.gen_schemas import schemas
from tests.strategies.invariants import kubernetes_violations

RELAXED = settings(suppress_health_check=list(HealthCheck), deadline=None)


@RELAXED
@given(schemas(), st.data())
def test_values_validate_for_generated_schemas(schema: dict[str, Any], data: st.DataObject) -> None:
    loaded = Schema(root=schema)
    try:
        value = data.draw(from_schema(loaded), label="value")
    except UnsupportedSchema:
        # Must only happen for schemas that really admit no value of some required part.
        return
    errors = [e.message for e in loaded.validator.iter_errors(value)]
    assert not errors, (schema, value, errors)


@pytest.fixture(scope="module")
def deployment() -> Schema:
    return load_kubernetes("apps/v1", "Deployment", release="1.37")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_deployment_values_validate_and_keep_kubernetes_invariants(
    deployment: Schema, data: st.DataObject
) -> None:
    value = data.draw(from_schema(deployment))
    assert deployment.is_valid(value)
    assert kubernetes_violations(deployment, value) == []


def _leaves(value: Any, prefix: str = "") -> set[str]:
    if isinstance(value, dict):
        out: set[str] = set()
        for key, sub in value.items():
            out |= _leaves(sub, f"{prefix}.{key}" if prefix else key)
        return out or {prefix}
    if isinstance(value, list):
        out = set()
        for sub in value:
            out |= _leaves(sub, prefix + "[*]")
        return out or {prefix}
    return {prefix}


def test_presence_is_per_field_and_reaches_deep_fields(deployment: Schema) -> None:
    seen_spec_fields: set[str] = set()
    absent_everywhere = set(deployment.resolve("#/$defs/io.k8s.api.apps.v1.DeploymentSpec")
                            ["properties"])
    leaves: set[str] = set()

    @settings(max_examples=150, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(deployment))
    def collect(value: dict[str, Any]) -> None:
        spec = value.get("spec") or {}
        seen_spec_fields.update(spec)
        leaves.update(_leaves(value))
        if spec:
            absent_everywhere.intersection_update(set(absent_everywhere) - set(spec) or
                                                  absent_everywhere)

    collect()
    spec_fields = set(deployment.resolve("#/$defs/io.k8s.api.apps.v1.DeploymentSpec")
                      ["properties"])
    # Every optional field of DeploymentSpec shows up in some example...
    assert seen_spec_fields == spec_fields
    # ...and the generator reaches deep into the pod template.
    deep = {leaf for leaf in leaves if leaf.startswith("spec.template.spec.containers[*].")}
    assert len(deep) >= 40, sorted(deep)


def test_shrinks_to_a_minimal_deployment(deployment: Schema) -> None:
    found = find(
        from_schema(deployment),
        lambda v: isinstance((v.get("spec") or {}).get("replicas"), int)
        and v["spec"]["replicas"] > 5,
        settings=settings(max_examples=2000, database=None,
                          suppress_health_check=list(HealthCheck)),
    )
    assert found["spec"]["replicas"] == 6
    # Only the required fields of the spec (selector, template) and replicas survive.
    assert set(found["spec"]) == {"selector", "template", "replicas"}
    assert set(found) <= {"apiVersion", "kind", "spec"}


def test_recursive_definitions_are_bounded() -> None:
    crd = load_kubernetes("apiextensions.k8s.io/v1", "CustomResourceDefinition")

    def depth(value: Any) -> int:
        if isinstance(value, dict):
            return 1 + max((depth(v) for v in value.values()), default=0)
        if isinstance(value, list):
            return 1 + max((depth(v) for v in value), default=0)
        return 0

    depths: list[int] = []

    @settings(max_examples=40, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(crd, max_recursion=2))
    def collect(value: dict[str, Any]) -> None:
        assert crd.is_valid(value)
        depths.append(depth(value))

    collect()
    # JSONSchemaProps nests in itself; three levels of it fit in well under 40 levels.
    assert max(depths) < 40


def test_ecma_dollar_does_not_admit_a_trailing_newline() -> None:
    schema = {"type": "string", "pattern": "^[a-z]+$"}

    @settings(max_examples=200, database=None)
    @given(from_schema(schema))
    def check(value: str) -> None:
        assert re.fullmatch("[a-z]+", value), repr(value)

    check()


@pytest.mark.parametrize(
    "fmt",
    ["date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "uuid",
     "duration", "byte", "uri-reference", "json-pointer", "regex"],
)
def test_formats_validate_under_format_assertion(fmt: str) -> None:
    schema = Schema(root={"type": "string", "format": fmt})
    assert fmt in schema.validator.format_checker.checkers, "format checker dependency missing"

    @settings(max_examples=50, database=None, deadline=None)
    @given(from_schema(schema))
    def check(value: str) -> None:
        assert schema.is_valid(value), (schema.root, value)

    check()


def test_kubernetes_duration_format_includes_go_style() -> None:
    # the API server takes Go durations and strfmt's unit words (PT0S too): Go style is
    # among what is drawn, and every value is a duration to the server
    from compatfuzz.schema import check_format

    schema = Schema(root={"type": "string", "format": "duration"}, kubernetes=True)
    value = find(from_schema(schema),
                 lambda v: re.fullmatch(r"-?(\d+(ns|us|ms|s|m|h))+", v) is not None,
                 settings=settings(database=None))
    assert check_format("duration", value, kubernetes=True)


def test_list_map_keys_are_unique() -> None:
    schema = {
        "type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"],
                  "properties": {"name": {"type": "string", "enum": ["a", "b", "c"]},
                                 "v": {"type": "integer"}}},
    }

    @settings(max_examples=100, database=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: list[dict[str, Any]]) -> None:
        names = [item["name"] for item in value]
        assert len(names) == len(set(names))

    check()


def test_one_of_values_match_exactly_one_branch() -> None:
    schema = Schema(root={"oneOf": [{"type": "integer", "maximum": 10},
                                    {"type": "integer", "minimum": 5}]})

    @settings(max_examples=100, database=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: int) -> None:
        assert not 5 <= value <= 10

    check()


def test_overrides_by_path_definition_format_and_patch(deployment: Schema) -> None:
    overrides = (
        Overrides()
        .path("spec.replicas", st.just(3))
        .definition("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
                    st.just({"matchLabels": {"app": "web"}}))
        .path("spec.template.spec.containers[*]",
              patch=lambda c, draw: {**c, "image": "nginx:1.27"})
    )

    @settings(max_examples=30, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(deployment, overrides=overrides))
    def check(value: dict[str, Any]) -> None:
        spec = value.get("spec")
        if spec is None:
            return
        assert spec["selector"] == {"matchLabels": {"app": "web"}}
        if "replicas" in spec:
            assert spec["replicas"] == 3
        template = spec.get("template") or {}
        for container in (template.get("spec") or {}).get("containers") or []:
            # null containers (nullable in kubernetes-validate) are not patched
            assert container is None or container["image"] == "nginx:1.27"

    check()


def test_format_override_and_factory_returning_not_implemented() -> None:
    schema = {"type": "object", "required": ["a", "b"],
              "properties": {"a": {"type": "string", "format": "ticket"},
                             "b": {"type": "integer"}}}
    overrides = Overrides().format("ticket", st.just("T-1")).path(
        "b", lambda node, default: NotImplemented
    )
    value = find(from_schema(schema, overrides=overrides), lambda v: True)
    assert value == {"a": "T-1", "b": 0}


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: from_schema(42), "schema=42"),
        (lambda: from_schema({}, max_recursion=-1), "max_recursion"),
        (lambda: from_schema({}, overrides={"a": 1}), "overrides="),
        (lambda: Overrides().path("$.spec", st.just(1)), "'spec'"),
        (lambda: Overrides().format("x", 3), "strategy=3"),
        (lambda: Overrides().format("x"), "exactly one of"),
    ],
)
def test_bad_arguments_name_the_argument(call: Any, needle: str) -> None:
    with pytest.raises(InvalidArgument, match=re.escape(needle)):
        call()


def test_unsatisfiable_schema_fails_at_draw_time_with_the_path() -> None:
    strategy = from_schema({"type": "object", "required": ["a"],
                            "properties": {"a": {"type": "integer", "minimum": 5,
                                                 "maximum": 1}}})
    with pytest.raises(UnsupportedSchema, match=r"at a: no integer"):
        find(strategy, lambda v: True)


def test_repr_reads_like_the_call(deployment: Schema) -> None:
    assert repr(from_schema(deployment, max_recursion=3)) == (
        f"from_schema(schema={deployment!r}, options=Options(max_recursion=3))"
    )


def test_cel_rules_hold_or_are_reported() -> None:
    pytest.importorskip("celpy")
    schema = Schema(
        root={"type": "object", "required": ["min", "max"],
              "properties": {"min": {"type": "integer", "minimum": 0, "maximum": 100},
                             "max": {"type": "integer", "minimum": 0, "maximum": 100}},
              "x-kubernetes-validations": [{"rule": "self.min <= self.max"}]},
        kubernetes=True,
    )

    @settings(max_examples=50, database=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: dict[str, int]) -> None:
        assert value["min"] <= value["max"]

    check()
    unsupported = Schema(
        root={"type": "string",
              "x-kubernetes-validations": [{"rule": "self.noSuchFunction()"}]},
        kubernetes=True,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        find(from_schema(unsupported), lambda v: True, settings=settings(database=None))
    assert any(issubclass(w.category, UnsupportedRuleWarning) for w in caught)


def test_json_roundtrip_of_every_value(deployment: Schema) -> None:
    @settings(max_examples=30, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(deployment))
    def check(value: Any) -> None:
        assert json.loads(json.dumps(value)) == value

    check()


def test_patch_override_runs_once_per_value_and_never_on_null(deployment: Schema) -> None:
    """The path's schema is a $ref (to Container, nullable in kubernetes-validate): the
    patch must see each default container once, unpatched, and never None."""
    seen: list[Any] = []

    def tag(container: dict[str, Any], draw: Any) -> dict[str, Any]:
        seen.append(container)
        assert isinstance(container, dict) and "patched" not in container
        return {**container, "image": "nginx:1.27", "patched": True}

    overrides = Overrides().path("spec.template.spec.containers[*]", patch=tag)

    @settings(max_examples=40, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(deployment, overrides=overrides))
    def check(value: dict[str, Any]) -> None:
        containers = ((value.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in containers.get("containers") or []:
            assert container is None or container["patched"] is True

    check()
    assert seen  # the patch ran


@settings(deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data(), st.booleans())
def test_unique_items_treat_integral_floats_as_equal(data: st.DataObject, nested: bool) -> None:
    item: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 3}
    if nested:
        item = {"type": "object", "required": ["a"], "properties": {"a": item}}
    schema = Schema(root={"type": "array", "uniqueItems": True, "minItems": 3, "items": item})
    value = data.draw(from_schema(schema))
    assert schema.validator.is_valid(value), value  # [0, 0.0, ...] is not unique


@pytest.mark.parametrize(("schema", "message"), [
    ({"type": "integer", "minimum": 10, "const": 5}, "no value of const 5"),
    ({"type": "string", "const": 5}, "no value of const 5"),
    ({"not": {}}, "not: {} rejects every value"),
    ({"type": "array", "minItems": 1, "items": {"$dynamicRef": "#node"}},
     "$dynamicRef is not supported"),
    ({"type": "string", "pattern": "[a-"}, "pattern '[a-' is not a valid regular"),
    ({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
      "$ref": "#/$defs/A"}, "$ref cycle that never reaches a schema"),
])
def test_impossible_schemas_fail_with_the_reason(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(UnsupportedSchema, match=re.escape(message)):
        find(from_schema(schema), lambda v: True)


def test_cel_rules_of_a_raw_mapping_are_enforced() -> None:
    """A plain dict with x-kubernetes-* gets Kubernetes semantics, as load_schema gives it."""
    schema = {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer"}},
              "x-kubernetes-validations": [{"rule": "self.x % 2 == 0"}]}

    @settings(max_examples=30, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: dict[str, Any]) -> None:
        assert value["x"] % 2 == 0

    check()


def test_a_rule_generation_rarely_meets_is_reported() -> None:
    # a shape the construction does not read (split): only the filter enforces it
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self.name.split('-').size() == 4"}]}}}

    @settings(max_examples=100, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: dict[str, Any]) -> None:
        if "spec" in value:
            assert len(value["spec"]["name"].split("-")) == 4

    with pytest.warns(UnsupportedRuleWarning, match=r"at spec: only \d+ of 100 generated"):
        check()


def test_format_overrides_reach_numbers_and_kubernetes_times(deployment: Schema) -> None:
    number = {"type": "object", "required": ["n"],
              "properties": {"n": {"type": "integer", "format": "int32"}}}
    assert find(from_schema(number, overrides=Overrides().format("int32", st.just(5))),
                lambda v: True) == {"n": 5}
    stamp = "2026-11-23T00:00:00Z"
    overrides = Overrides().format("date-time", st.just(stamp))
    value = find(from_schema(deployment, overrides=overrides),
                 lambda v: "creationTimestamp" in (v.get("metadata") or {}))
    assert value["metadata"]["creationTimestamp"] == stamp  # a Time, by definition name


def test_path_overrides_win_over_realistic_object_meta(deployment: Schema) -> None:
    overrides = Overrides().path("metadata.name", st.just("fixed-name"))
    value = find(from_schema(deployment, overrides=overrides),
                 lambda v: "name" in (v.get("metadata") or {}))
    assert value["metadata"]["name"] == "fixed-name"


def test_crd_roots_get_their_identity_even_when_the_schema_omits_it(tmp_path: Any) -> None:
    from compatfuzz.schema import load_schema

    crd = tmp_path / "crd.yaml"
    crd.write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: things.example.com}\nspec:\n  group: example.com\n"
        "  names: {kind: Thing, plural: things}\n  scope: Namespaced\n  versions:\n"
        "  - name: v1\n    served: true\n    storage: true\n    schema:\n"
        "      openAPIV3Schema: {type: object, properties: {spec: {type: object}}}\n")
    schema = load_schema(crd)

    @settings(max_examples=20, database=None, deadline=None)
    @given(from_schema(schema))
    def check(value: dict[str, Any]) -> None:
        assert value["apiVersion"] == "example.com/v1" and value["kind"] == "Thing"
        assert schema.validator.is_valid(value)

    check()
