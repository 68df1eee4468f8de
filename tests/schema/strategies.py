"""Hypothesis strategies for compatfuzz.schema's own inputs: schemas in old dialects, JSON."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["draft04_schemas", "json_values", "openapi30_schemas"]

NAMES = st.sampled_from(["a", "b", "c", "spec", "$ref", "definitions"])
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"])
INTS = st.integers(-5, 5)

json_scalars = st.none() | st.booleans() | INTS | st.text(max_size=3)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)


def _merge(parts: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    return {**parts[0], **parts[1]}


def _leaf(*, openapi: bool, refs: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, st.SearchStrategy[Any]] = {
        "type": TYPES.filter(lambda t: t != "null" or not openapi),
        "minimum": INTS, "maximum": INTS,
        "exclusiveMinimum": st.booleans(), "exclusiveMaximum": st.booleans(),
        "minLength": st.integers(0, 3), "maxItems": st.integers(0, 3),
        "enum": st.lists(json_scalars, min_size=1, max_size=3, unique_by=repr),
        "required": st.lists(NAMES, min_size=1, max_size=2, unique=True),
        "description": st.text(max_size=3),
    }
    if refs:
        optional["$ref"] = st.sampled_from(refs)
    if openapi:
        optional |= {
            "nullable": st.booleans(), "x-nullable": st.booleans(),
            "example": json_values, "discriminator": st.just({"propertyName": "a"}),
            "xml": st.just({"name": "x"}), "externalDocs": st.just({"url": "https://x"}),
            "x-kubernetes-int-or-string": st.just(True),
            "x-kubernetes-preserve-unknown-fields": st.just(True),
            "x-kubernetes-validations": st.just([{"rule": "self.a > 0"}]),
            "x-kubernetes-list-type": st.sampled_from(["atomic", "set", "map"]),
        }
    return st.fixed_dictionaries({}, optional=optional)


def _extend(children: st.SearchStrategy[Any], *, openapi: bool,
            refs: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    structure: dict[str, st.SearchStrategy[Any]] = {
        "properties": st.dictionaries(NAMES, children, max_size=3),
        "items": children | st.lists(children, max_size=2),
        "additionalItems": children,
        "additionalProperties": children | st.booleans(),
        "allOf": st.lists(children, min_size=1, max_size=2),
        "anyOf": st.lists(children, min_size=1, max_size=2),
        "oneOf": st.lists(children, min_size=1, max_size=2),
        "not": children,
        "dependencies": st.dictionaries(
            NAMES, children | st.lists(NAMES, max_size=2, unique=True), max_size=2),
    }
    return st.tuples(_leaf(openapi=openapi, refs=refs),
                     st.fixed_dictionaries({}, optional=structure)).map(_merge)


def _schemas(*, openapi: bool, refs: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(  # type: ignore[return-value]
        _leaf(openapi=openapi, refs=refs),
        lambda c: _extend(c, openapi=openapi, refs=refs),
        max_leaves=12,
    )


def openapi30_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """OpenAPI 3.0 / CRD style schemas: nullable, boolean exclusive bounds, OpenAPI
    annotations, x-kubernetes-*, refs to ``#/definitions/A`` and ``#/components/schemas/B``
    (both resolve once normalised: root definitions A and B move to ``$defs``)."""
    leaf_defs = _leaf(openapi=True, refs=[])
    return st.tuples(
        _schemas(openapi=True, refs=["#/definitions/A", "#/components/schemas/B"]),
        st.fixed_dictionaries({"definitions": st.fixed_dictionaries(
            {"A": leaf_defs, "B": leaf_defs})}),
    ).map(_merge)


def draft04_schemas() -> st.SearchStrategy[dict[str, Any]]:
    """draft-04 schemas whose refs all resolve (to non-recursive root definitions), so
    ``jsonschema.Draft4Validator`` can be the oracle for the normalised form."""
    leaf_defs = _leaf(openapi=False, refs=[])
    return st.tuples(
        _schemas(openapi=False, refs=["#/definitions/A", "#/definitions/B"]),
        st.fixed_dictionaries({"definitions": st.fixed_dictionaries(
            {"A": leaf_defs, "B": leaf_defs})}),
    ).map(_merge)
