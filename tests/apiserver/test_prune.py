"""Pruning and null-dropping, against the rules of apiextensions-apiserver's
``pkg/apiserver/schema/pruning/algorithm.go`` and ``defaulting/prunenulls.go``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.apiserver import prune, prune_nulls, structural
from compatfuzz.schema import load_crds
from compatfuzz.strategies import from_schema
from tests.roundtrip import gadgets

OBJ = {"type": "object"}
SPEC = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "x": {"type": "string"}}}},
                "map": {"type": "object", "additionalProperties": {
                    "type": "object", "properties": {"y": {"type": "integer"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                         "properties": {"typed": {"type": "object", "properties": {
                             "z": {"type": "integer"}}}}},
                "anything": {"type": "object", "additionalProperties": True},
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "properties": {"spec": OBJ}},
                "only_in_allof": {"type": "object", "allOf": [{"properties": {
                    "hidden": {"type": "string"}}}]},
            },
        },
    },
}


@pytest.mark.parametrize(("obj", "kept", "paths"), [
    ({"spec": {"a": 1, "b": 2}}, {"spec": {"a": 1}}, ["spec.b"]),
    ({"spec": {"list": [{"x": "1", "y": 2}]}}, {"spec": {"list": [{"x": "1"}]}},
     ["spec.list[0].y"]),
    ({"spec": {"map": {"k": {"y": 1, "n": 2}}}}, {"spec": {"map": {"k": {"y": 1}}}},
     ["spec.map.k.n"]),
    # preserve-unknown-fields keeps unknown keys but still prunes declared sub-schemas
    ({"spec": {"free": {"u": {"v": 1}, "typed": {"z": 1, "w": 2}}}},
     {"spec": {"free": {"u": {"v": 1}, "typed": {"z": 1}}}}, ["spec.free.typed.w"]),
    # additionalProperties: true without a schema prunes the values' contents to nothing
    ({"spec": {"anything": {"k": {"deep": 1}, "s": "x"}}},
     {"spec": {"anything": {"k": {}, "s": "x"}}}, ["spec.anything.k.deep"]),
    # embedded resources keep apiVersion/kind/metadata whatever their schema says
    ({"spec": {"embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n"},
                            "status": {}}}},
     {"spec": {"embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n"}}}},
     ["spec.embedded.status"]),
    # allOf/anyOf are value validations only: a field declared there is pruned
    ({"spec": {"only_in_allof": {"hidden": "h"}}}, {"spec": {"only_in_allof": {}}},
     ["spec.only_in_allof.hidden"]),
    # at the root apiVersion/kind/metadata stay and are not reported
    ({"apiVersion": "x/v1", "kind": "K", "metadata": {"junk": 1}, "status": 1},
     {"apiVersion": "x/v1", "kind": "K", "metadata": {"junk": 1}}, ["status"]),
])
def test_prune_cases(obj: dict[str, Any], kept: dict[str, Any], paths: list[str]) -> None:
    before = repr(obj)
    assert prune(obj, SPEC) == (kept, paths)
    assert repr(obj) == before  # the input is not changed


def test_meta_fields_below_the_root_are_pruned_like_any_other() -> None:
    schema = {"type": "object", "properties": {"spec": OBJ}}
    assert prune({"spec": {"kind": "x", "metadata": {}}}, schema) == (
        {"spec": {}}, ["spec.kind", "spec.metadata"])
    # not a resource root: removed, but upstream never reports a top-level meta field
    assert prune({"kind": "x", "other": 1}, schema, root=False) == ({}, ["other"])


def test_prune_nulls_drops_only_non_nullable_fields_without_default() -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "string"},
        "b": {"type": "string", "nullable": True},
        "c": {"type": "string", "default": "d"},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
    }}
    obj = {"a": None, "b": None, "c": None, "m": {"k": None}, "unknown": None}
    assert prune_nulls(obj, schema) == {"b": None, "c": None, "m": {}, "unknown": None}


def test_defaults_are_pruned_when_the_view_is_built() -> None:
    # defaulting/prune.go: a default carrying undeclared fields loses them up front
    node = structural({"type": "object", "properties": {"spec": {
        "type": "object", "default": {"a": 1, "zzz": 2},
        "properties": {"a": {"type": "integer"}}}}})
    assert node.properties["spec"].default == {"a": 1}


_GADGET = load_crds(gadgets.CRD)[0]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["v1alpha1", "v1beta1", "v1"]).flatmap(
    lambda v: st.tuples(st.just(v), from_schema(_GADGET.version(v).schema))))
def test_generated_objects_survive_pruning_and_pruning_is_idempotent(
        drawn: tuple[str, dict[str, Any]]) -> None:
    version, obj = drawn
    schema = _GADGET.version(version).schema
    pruned, paths = prune(obj, schema)
    assert (pruned, paths) == (obj, [])  # generated objects only use declared fields
    junk = {**obj, "spec": {**(obj.get("spec") or {}), "zz-unknown": {"a": 1}}}
    once, removed = prune(junk, schema)
    assert removed == ["spec.zz-unknown"]
    assert prune(once, schema) == (once, [])
