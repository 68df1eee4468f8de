"""Structural defaulting, against apiextensions-apiserver ``defaulting/algorithm.go``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from compatfuzz.apiserver import default
from compatfuzz.strategies import from_schema

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 1},
        "nullable": {"type": "integer", "nullable": True, "default": 5},
        "list": {"type": "array", "items": {"type": "object", "properties": {
            "port": {"type": "integer", "default": 80}}}},
        "strings": {"type": "array", "items": {"type": "string", "default": "x"}},
        "map": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"on": {"type": "boolean", "default": True}}}},
        "nested": {"type": "object", "default": {}, "properties": {
            "deep": {"type": "string", "default": "d"}}},
    }},
}}


@pytest.mark.parametrize(("obj", "want"), [
    # a missing object is not created (no default on spec) ...
    ({}, {}),
    # ... but an existing one is filled, recursively, and a defaulted object is defaulted
    ({"spec": {}}, {"spec": {"replicas": 1, "nullable": 5, "nested": {"deep": "d"}}}),
    # a null in a non-nullable field is defaulted; in a nullable one it stays
    ({"spec": {"replicas": None, "nullable": None}},
     {"spec": {"replicas": 1, "nullable": None, "nested": {"deep": "d"}}}),
    # list items and map values are defaulted too
    ({"spec": {"list": [{}, {"port": 1}], "map": {"a": {}}, "replicas": 3}},
     {"spec": {"list": [{"port": 80}, {"port": 1}], "map": {"a": {"on": True}}, "replicas": 3,
               "nullable": 5, "nested": {"deep": "d"}}}),
    # a null list item takes the items' default
    ({"spec": {"strings": [None, "y"], "replicas": 2}},
     {"spec": {"strings": ["x", "y"], "replicas": 2, "nullable": 5, "nested": {"deep": "d"}}}),
])
def test_default_cases(obj: dict[str, Any], want: dict[str, Any]) -> None:
    assert default(obj, SCHEMA) == want


def test_defaults_are_copied_not_shared() -> None:
    a = default({"spec": {}}, SCHEMA)
    a["spec"]["nested"]["deep"] = "changed"
    assert default({"spec": {}}, SCHEMA)["spec"]["nested"] == {"deep": "d"}


@settings(max_examples=80, deadline=None)
@given(from_schema(SCHEMA))
def test_defaulting_is_idempotent_and_only_adds(obj: Any) -> None:
    once = default(obj, SCHEMA)
    assert default(once, SCHEMA) == once
    spec, out = obj.get("spec"), once.get("spec")
    if isinstance(spec, dict):
        for k, v in spec.items():
            if v is not None:
                assert out[k] is not None
