"""A CRD field no value satisfies (issue 30): accepted, and never generated when optional.

The API server accepts a CRD with ``maxLength: -1``, ``minLength: -5``, ``minLength >
maxLength``, an ``enum`` of the wrong type or ``minimum > maximum`` (it does not judge value
validations); compatfuzz refused such CRDs (8 of the issue's cases). Now it loads them,
leaves an unsatisfiable optional field out of every object, and refuses a required one
at draw time with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from compatfuzz.apiserver import validate_crd, validation_errors
from compatfuzz.errors import UnsupportedSchema
from compatfuzz.schema import Schema, load_crds
from compatfuzz.schema._check import never_valid
from compatfuzz.strategies import from_schema

UNSATISFIABLE: dict[str, dict[str, Any]] = {
    "negMax": {"type": "string", "maxLength": -1},
    "crossed": {"type": "string", "minLength": 5, "maxLength": 2},
    "wrongEnum": {"type": "string", "enum": [1, 2]},
    "crossedInt": {"type": "integer", "minimum": 10, "maximum": 1},
    "exclusive": {"type": "integer", "minimum": 1, "maximum": 1, "exclusiveMinimum": True},
    "crossedItems": {"type": "array", "items": {"type": "string"}, "minItems": 3,
                     "maxItems": 1},
    "negItems": {"type": "array", "items": {"type": "string"}, "maxItems": -1},
    "negProps": {"type": "object", "additionalProperties": {"type": "string"},
                 "maxProperties": -2},
    "nullableNeg": {"type": "string", "maxLength": -1, "nullable": True},
}
SATISFIABLE: dict[str, dict[str, Any]] = {
    "negMin": {"type": "string", "minLength": -5, "maxLength": 3},
    "negMinItems": {"type": "array", "items": {"type": "string"}, "minItems": -1},
    "ok": {"type": "integer", "minimum": 1, "maximum": 1},
}


def _crd(fields: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": fields}
    if required:
        spec["required"] = required
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object",
                                       "properties": {"spec": spec}}}}]}}


def _schema(tmp_path: Path, doc: dict[str, Any]) -> Schema:
    path = tmp_path / "crd.yaml"
    path.write_text(json.dumps(doc))  # JSON is YAML
    (crd,) = load_crds(path)
    schema = crd.versions[0].schema
    assert schema is not None
    return schema


def test_the_server_accepts_them() -> None:
    assert validate_crd(_crd({**UNSATISFIABLE, **SATISFIABLE})) == []


@pytest.mark.parametrize("name", sorted(UNSATISFIABLE))
def test_never_valid_names_the_reason(name: str) -> None:
    assert never_valid(UNSATISFIABLE[name])


@pytest.mark.parametrize("name", sorted(SATISFIABLE))
def test_never_valid_leaves_satisfiable_fields(name: str) -> None:
    assert never_valid(SATISFIABLE[name]) is None


def test_optional_unsatisfiable_fields_are_never_generated(tmp_path: Path) -> None:
    schema = _schema(tmp_path, _crd({**UNSATISFIABLE, **SATISFIABLE,
                                     "name": {"type": "string"}}, ["name"]))
    seen: set[str] = set()

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: Any) -> None:
        spec = value.get("spec") or {}
        assert not set(spec) & set(UNSATISFIABLE), spec
        assert validation_errors(value, schema) == []
        seen.update(spec)

    check()
    assert {"negMin", "negMinItems", "ok"} & seen  # the satisfiable ones do appear


def test_a_required_unsatisfiable_field_is_refused_with_the_reason(tmp_path: Path) -> None:
    schema = _schema(tmp_path, _crd({"neg": UNSATISFIABLE["negMax"]}, ["neg"]))

    @settings(max_examples=5, deadline=None, database=None)
    @given(from_schema(schema))
    def draw(value: Any) -> None:
        if "spec" in value:
            raise AssertionError(value)

    with pytest.raises(UnsupportedSchema, match=r"spec\.neg: maxLength is -1"):
        draw()
