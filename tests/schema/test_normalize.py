from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, SchemaLoadError
from compatfuzz.schema import normalize
from tests.schema.strategies import draft04_schemas, json_values, openapi30_schemas

D2020 = jsonschema.Draft202012Validator


@pytest.mark.parametrize(
    ("schema", "dialect", "expected"),
    [
        ({"type": "string", "nullable": True}, "openapi-3.0", {"type": ["string", "null"]}),
        ({"type": "string", "nullable": False}, "openapi-3.0", {"type": "string"}),
        ({"type": ["integer", "null"], "nullable": True}, "openapi-3.0",
         {"type": ["integer", "null"]}),
        ({"type": "string", "x-nullable": True}, "swagger-2.0", {"type": ["string", "null"]}),
        # nullable means nothing in JSON Schema: kept as an unknown keyword
        ({"type": "string", "nullable": True}, "2020-12",
         {"type": "string", "nullable": True}),
        ({"$ref": "#/components/schemas/X", "nullable": True, "description": "d"},
         "openapi-3.0",
         {"description": "d", "anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]}),
        ({"x-kubernetes-int-or-string": True, "nullable": True,
          "anyOf": [{"type": "integer"}, {"type": "string"}]}, "openapi-3.0",
         {"x-kubernetes-int-or-string": True,
          "anyOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"type": "null"}]}),
        ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, "draft-04",
         {"type": "integer", "exclusiveMinimum": 1}),
        ({"type": "integer", "maximum": 1, "exclusiveMaximum": False}, "openapi-3.0",
         {"type": "integer", "maximum": 1}),
        ({"items": [{"type": "string"}], "additionalItems": False}, "draft-07",
         {"prefixItems": [{"type": "string"}], "items": False}),
        ({"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}, "draft-07",
         {"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}}}),
        ({"definitions": {"A": {"type": "string"}}, "properties": {"a": {"$ref":
          "#/definitions/A"}}}, "draft-07",
         {"$defs": {"A": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/A"}}}),
        ({"$ref": "#/definitions/A", "type": "integer"}, "draft-07", {"$ref": "#/$defs/A"}),
        ({"type": "object", "discriminator": {"propertyName": "k"}, "xml": {"name": "o"},
          "externalDocs": {"url": "u"}, "example": {"k": 1}}, "openapi-3.0",
         {"type": "object", "examples": [{"k": 1}]}),
        ({"type": "file"}, "swagger-2.0", {}),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True,
          "x-kubernetes-validations": [{"rule": "self.a > 0"}]}, "openapi-3.0",
         {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
          "x-kubernetes-validations": [{"rule": "self.a > 0"}]}),
    ],
)
def test_normalize_examples(schema: dict[str, Any], dialect: str, expected: Any) -> None:
    assert normalize(schema, dialect=dialect) == expected


def test_property_named_like_a_keyword_is_not_rewritten() -> None:
    # Kubernetes' JSONSchemaProps has properties called $ref, nullable and definitions.
    schema = {"type": "object", "properties": {
        "$ref": {"type": "string"}, "nullable": {"type": "boolean"},
        "definitions": {"type": "object"}}}
    assert normalize(schema, dialect="openapi-3.0") == schema


def test_enum_and_default_values_are_data() -> None:
    schema = {"enum": [{"nullable": True, "$ref": "#/definitions/A"}],
              "default": {"exclusiveMinimum": True}}
    assert normalize(schema, dialect="openapi-3.0") == schema


def test_unknown_dialect_is_invalid_argument() -> None:
    with pytest.raises(InvalidArgument, match="dialect='openapi-3'"):
        normalize({}, dialect="openapi-3")


def test_definitions_and_defs_conflict_is_reported() -> None:
    with pytest.raises(SchemaLoadError, match="'A' is in both"):
        normalize({"definitions": {"A": {}}, "$defs": {"A": {"type": "string"}}})


@given(openapi30_schemas())
def test_normalize_is_idempotent_pure_and_valid_2020_12(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    once = normalize(schema, dialect="openapi-3.0")
    assert schema == before, "normalize mutated its input"
    assert normalize(once, dialect="openapi-3.0") == once
    D2020.check_schema(once)
    assert "nullable" not in str(once).replace("'nullable': {", "")


@given(openapi30_schemas(), json_values)
def test_nullable_accepts_null_and_keeps_other_verdicts(schema: dict[str, Any],
                                                        value: Any) -> None:
    # A nullable node accepts null unless its enum leaves null out (OpenAPI 3.0.3 and
    # Kubernetes agree); for non-null values nullable changes nothing.
    plain = {k: v for k, v in schema.items() if k not in ("nullable", "x-nullable")}
    nullable = normalize({**plain, "nullable": True}, dialect="openapi-3.0")
    base = normalize(plain, dialect="openapi-3.0")
    enum_without_null = "enum" in plain and None not in plain["enum"]
    assert D2020(nullable).is_valid(None) == (not enum_without_null)
    if value is not None:
        assert D2020(nullable).is_valid(value) == D2020(base).is_valid(value)


@given(draft04_schemas(), st.lists(json_values, min_size=1, max_size=5))
def test_normalized_draft04_validates_like_draft04(schema: dict[str, Any],
                                                   values: list[Any]) -> None:
    # Oracle: jsonschema's own draft-04 validator on the original. Instances avoid floats:
    # draft-04 says 1.0 is not an integer, 2020-12 says it is (documented difference).
    normalized = normalize(schema, dialect="draft-04")
    D2020.check_schema(normalized)
    old, new = jsonschema.Draft4Validator(schema), D2020(normalized)
    for value in values:
        assert old.is_valid(value) == new.is_valid(value), value


def test_kubernetes_swagger_int_or_string_and_quantity_accept_numbers() -> None:
    quantity = "io.k8s.apimachinery.pkg.api.resource.Quantity"
    doc = {"definitions": {
        quantity: {"type": "string", "description": "q"},
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
            "type": "string", "format": "int-or-string"},
        "Plain": {"type": "string"},
    }}
    out = normalize(doc, dialect="swagger-2.0")
    for name in (quantity, "io.k8s.apimachinery.pkg.util.intstr.IntOrString"):
        node = out["$defs"][name]
        assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], name
        assert node["x-kubernetes-int-or-string"] is True
    assert out["$defs"][quantity]["description"] == "q"
    assert out["$defs"]["Plain"] == {"type": "string"}  # only the known definitions
    assert normalize(out, dialect="swagger-2.0") == out  # idempotent
    # JSON Schema documents are left alone: int-or-string means nothing there
    assert normalize(doc)["$defs"][quantity] == {"type": "string", "description": "q"}
