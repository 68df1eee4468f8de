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
