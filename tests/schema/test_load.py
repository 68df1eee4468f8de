from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compatfuzz.errors import InvalidArgument, SchemaLoadError, UnresolvableRef
from compatfuzz.schema import Schema, load_schema

DATA = Path(__file__).parent / "data"


def refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                found.append(v)
            else:
                found.extend(refs(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(refs(v))
    return found


def assert_self_contained(schema: Schema) -> None:
    jsonschema.Draft202012Validator.check_schema(schema.root)
    for ref in refs(schema.root):
        assert ref == "#" or ref.startswith("#/$defs/"), ref
        schema.resolve(ref)  # raises if it points nowhere


def test_openapi_30_with_external_file_refs_and_cycles() -> None:
    s = load_schema(DATA / "orders.openapi.yaml", definition="Order")
    assert_self_contained(s)
    assert s.name == "Order" and s.meta["dialect"] == "openapi-3.0"
    assert sorted(s.root["$defs"]) == ["Customer", "Item", "money"]  # not OrderStatus/Unused
    assert s.root["properties"]["parent"] == {"$ref": "#"}  # recursion kept, not expanded
    assert s.root["$defs"]["Item"]["properties"]["parts"]["items"] == {"$ref": "#/$defs/Item"}
    assert s.root["properties"]["note"]["type"] == ["string", "null"]
    assert "discriminator" not in s.root
    assert s.is_valid({"id": 1, "note": None, "lines": [{"sku": "a", "price": 1,
                                                         "parts": [{"sku": "b"}]}]})
    assert not s.is_valid({"id": 0})  # exclusiveMinimum: true
    assert not s.is_valid({"id": 1, "lines": [{"sku": "a", "price": 0}]})  # draft-04 money
    assert not s.is_valid({"id": 1, "customer": {"orders": [{"id": "x"}]}})


def test_pick_definition_by_pointer() -> None:
    s = load_schema(DATA / "orders.openapi.yaml", definition="#/components/schemas/OrderStatus")
    assert s.root["enum"] == ["open", "closed"] and s.name == "OrderStatus"


def test_swagger_20_x_nullable_and_kind_suffix() -> None:
    s = load_schema(DATA / "pets.swagger.json", definition="Pet")
    assert_self_contained(s)
    assert s.root["properties"]["tag"]["type"] == ["string", "null"]
    assert s.root["$defs"]["Owner"]["properties"]["pets"]["items"] == {"$ref": "#"}
    assert not s.kubernetes
    widget = load_schema(DATA / "pets.swagger.json", definition="Widget")
    assert widget.name == "io.example.v1.Widget" and widget.kubernetes


def test_json_schema_with_id_relative_and_absolute_path_refs() -> None:
    s = load_schema(DATA / "widget.schema.json")
    assert_self_contained(s)
    assert s.name == "Widget"
    # the local Size and shared/defs.json's Size collide: the second is renamed
    assert s.root["properties"]["shared"] == {"$ref": "#/$defs/Size_2"}
    assert s.root["$defs"]["part"]["properties"]["size"] == {"$ref": "#/$defs/Size_2"}
    assert "Color" not in s.root["$defs"]  # unreachable definitions are dropped
    assert s.is_valid({"size": 2, "part": {"size": "abc"}, "shared": "xy"})
    assert not s.is_valid({"part": {"size": "abcd"}})
    assert load_schema(DATA / "widget.schema.json", definition="Size").root["minimum"] == 1


def test_in_memory_mapping_draft04() -> None:
    s = load_schema({"$schema": "http://json-schema.org/draft-04/schema#",
                     "definitions": {"n": {"type": "integer", "maximum": 3,
                                           "exclusiveMaximum": True}},
                     "type": "array", "items": {"$ref": "#/definitions/n"}})
    assert s.source == "<memory>"
    assert s.root["$defs"]["n"] == {"type": "integer", "exclusiveMaximum": 3}
    assert s.is_valid([1, 2]) and not s.is_valid([3])


def test_missing_definition_lists_names() -> None:
    with pytest.raises(SchemaLoadError) as info:
        load_schema(DATA / "orders.openapi.yaml")
    text = str(info.value)
    assert "3 definitions: Customer, Order, OrderStatus" in text
    assert "definition='<name>'" in text


def test_unknown_definition_suggests_close_matches() -> None:
    with pytest.raises(SchemaLoadError, match=r"no definition 'Ordr'.*did you mean: Order"):
        load_schema(DATA / "orders.openapi.yaml", definition="Ordr")


def test_unresolvable_ref_names_ref_file_and_json_path() -> None:
    with pytest.raises(UnresolvableRef) as info:
        load_schema(DATA / "broken-ref.yaml")
    err = info.value
    assert "'#/definitions/Replicas'" in str(err)
    assert err.source == str(DATA / "broken-ref.yaml")
    assert err.pointer == "/properties/spec/properties/replicas/$ref"
    assert "$.properties.spec.properties.replicas['$ref']" in str(err)
    assert "(did you mean: Replica?)" in str(err)
    assert "fix:" in str(err)


def test_missing_external_file(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text(json.dumps({"properties": {"b": {"$ref": "b.json"}}}))
    with pytest.raises(UnresolvableRef, match=r"missing file .*b\.json"):
        load_schema(f)


def test_remote_refs_are_never_fetched(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text(json.dumps({"$ref": "https://example.com/nowhere/x.json"}))
    with pytest.raises(UnresolvableRef, match="not a local file") as info:
        load_schema(f)
    assert "never fetches" in info.value.hint


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgument, match="source=42"):
        load_schema(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="version='v1' only applies"):
        load_schema({"type": "object"}, version="v1")


def test_several_non_crd_documents_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "two.yaml"
    f.write_text("type: object\n---\ntype: string\n")
    with pytest.raises(SchemaLoadError, match="holds 2"):
        load_schema(f)


def test_openapi_31_and_kubernetes_flag_from_extensions() -> None:
    doc = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "components": {
        "schemas": {"Obj": {"type": "object", "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"$ref": "#/components/schemas/Port", "description": "kept in 3.1"}}},
            "Port": {"x-kubernetes-int-or-string": True,
                     "anyOf": [{"type": "integer"}, {"type": "string"}]}}}}
    s = load_schema(doc, definition="Obj")
    assert_self_contained(s)
    assert s.meta["dialect"] == "openapi-3.1" and s.kubernetes
    assert s.root["properties"]["b"] == {"$ref": "#/$defs/Port", "description": "kept in 3.1"}
    assert s.is_valid({"a": None, "b": 3}) and not s.is_valid({"b": 1.5})
    assert not load_schema({"type": "object"}).kubernetes


def test_a_definitions_only_json_schema_file_needs_a_definition(tmp_path: Path) -> None:
    """kubernetes-validate's _definitions.json layout: no root schema, only definitions.
    Its root would accept anything, so generating from it silently is wrong."""
    path = tmp_path / "_definitions.json"
    path.write_text(json.dumps({"definitions": {
        "a.v1.Foo": {"type": "object", "properties": {"x": {"type": "integer"}}},
        "a.v1.Bar": {"type": "string"}}}))
    with pytest.raises(SchemaLoadError, match=r"no root schema.*2 definitions") as info:
        load_schema(path)
    assert info.value.pointer == "/definitions" and "definition=" in info.value.hint
    assert load_schema(path, definition="Foo").root["type"] == "object"
    # a document with a root schema next to its definitions is still the root
    path.write_text(json.dumps({"type": "string", "definitions": {"a": {}, "b": {}}}))
    assert load_schema(path).root["type"] == "string"
