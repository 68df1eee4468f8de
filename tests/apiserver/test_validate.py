"""Validation as the API server validates a custom resource: OpenAPI with kube-openapi
formats, list-type set/map uniqueness (``listtype/validation.go``) and CEL rules."""

from __future__ import annotations

from compatfuzz.apiserver import validation_errors
from compatfuzz.schema import load_crds
from tests.roundtrip import gadgets

V1 = load_crds(gadgets.CRD)[0].version("v1").schema
BASE = {"apiVersion": "example.com/v1", "kind": "Gadget"}


def test_list_type_sets_and_maps_must_not_repeat() -> None:
    bad = {**BASE, "spec": {"tags": ["a", "a"],
                            "ports": [{"name": "x"}, {"name": "x", "number": 2}]}}
    assert validation_errors(bad, V1) == [
        'spec.tags[1]: Duplicate value: "a"',
        'spec.ports[1]: Duplicate value: {"name": "x", "number": 2}',
    ]
    good = {**BASE, "spec": {"tags": ["a", "b"], "ports": [{"name": "x"}, {"name": "y"}]}}
    assert validation_errors(good, V1) == []


def test_an_integer_and_a_float_are_different_set_items() -> None:
    schema = load_crds(gadgets.CRD)[0].version("v1").schema
    # unstructured JSON decodes 1 as int64 and 1.0 as float64: not duplicates upstream
    node = {"type": "object", "properties": {"s": {
        "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}}}}
    from compatfuzz.schema import Schema

    loose = Schema(node, kubernetes=True, meta={"openapi": node})
    assert validation_errors({"s": [1, 1.0]}, loose) == []
    assert validation_errors({"s": [1.5, 1.5]}, loose) == ["s[1]: Duplicate value: 1.5"]
    assert schema is not loose


def test_a_bound_outside_its_numeric_format_refuses_every_value() -> None:
    """kgateway's ``format: int32`` with ``maximum: 4294967295``: the real API server
    answers every value with "Maximum boundary value must be of type integer with format
    int32" (kube-openapi's numberValidator checks the bound itself), so the model refuses
    them all and generation leaves such an optional field out."""
    from hypothesis import given, settings

    from compatfuzz.schema import load_schema
    from compatfuzz.strategies import from_schema

    schema = load_schema({"type": "object", "x-kubernetes-preserve-unknown-fields": False,
                          "properties": {
                              "value": {"type": "integer", "format": "int32", "minimum": 0,
                                        "maximum": 4294967295},
                              "fine": {"type": "integer", "format": "int32",
                                       "maximum": 2147483647}}})
    assert validation_errors({"value": 1}, schema) == [
        "value: Maximum boundary value must be of type integer with format int32"]
    assert validation_errors({"fine": 2147483647}, schema) == []

    @settings(max_examples=30, database=None, deadline=None)
    @given(from_schema(schema))
    def drawn(obj: dict[str, int]) -> None:
        assert "value" not in obj

    drawn()
