from __future__ import annotations

from typing import Any

import pytest

from compatfuzz.schema import LintFinding, lint_structural, load_schema

STR = {"type": "string"}


def crd_root(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {
        "apiVersion": STR, "kind": STR, "metadata": {"type": "object"}, "spec": spec}}


GOOD = crd_root({
    "type": "object",
    "properties": {
        "port": {"x-kubernetes-int-or-string": True,
                 "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "size": {"type": "integer", "nullable": True, "minimum": 0},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "anything": {"x-kubernetes-preserve-unknown-fields": True},
        "labels": {"type": "object", "additionalProperties": STR,
                   "x-kubernetes-map-type": "granular"},
        "tags": {"type": "array", "items": STR, "x-kubernetes-list-type": "set"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name", "protocol"],
                  "items": {"type": "object", "required": ["name"], "properties": {
                      "name": STR, "protocol": {"type": "string", "default": "TCP"}}}},
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True},
    },
    "oneOf": [{"required": ["port"]}, {"required": ["size"],
                                        "properties": {"size": {"minimum": 1}}}],
    "x-kubernetes-validations": [{"rule": "self.size >= 0"}],
})


def test_structural_schema_has_no_findings() -> None:
    assert lint_structural(GOOD) == []
    # ... also once loaded (normalised: nullable became type [integer, null])
    loaded = load_schema({"apiVersion": "apiextensions.k8s.io/v1",
                          "kind": "CustomResourceDefinition",
                          "spec": {"group": "g.io", "names": {"kind": "K", "plural": "ks"},
                                   "versions": [{"name": "v1", "served": True, "storage": True,
                                                 "schema": {"openAPIV3Schema": GOOD}}]}})
    assert lint_structural(loaded) == []


def spec_with(field: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return crd_root({"type": "object", "properties": {"f": field}, **spec})


@pytest.mark.parametrize(
    ("schema", "path", "rule"),
    [
        (spec_with({}), "spec.f", "type-required"),
        (spec_with({"type": "array", "items": {"properties": {"x": STR}}}),
         "spec.f[*]", "type-required"),
        (spec_with({"type": "object", "additionalProperties": {}}), "spec.f.*",
         "type-required"),
        (spec_with({"$ref": "#/definitions/X"}), "spec.f", "ref"),
        (spec_with({"type": "object", "properties": {"a": STR},
                    "additionalProperties": STR}),
         "spec.f", "properties-and-additional-properties"),
        (spec_with({"type": "object", "additionalProperties": False}), "spec.f",
         "additional-properties-false"),
        (spec_with({"type": "array", "items": STR, "uniqueItems": True}), "spec.f",
         "unique-items"),
        (spec_with({"type": "object", "patternProperties": {"^a": STR}}), "spec.f",
         "pattern-properties"),
        (spec_with(STR, anyOf=[{"type": "object"}]), "spec.anyOf[0]", "junctor-type"),
        (spec_with(STR, allOf=[{"default": {}}]), "spec.allOf[0]", "junctor-default"),
        (spec_with(STR, oneOf=[{"description": "d"}]), "spec.oneOf[0]", "junctor-annotation"),
        (spec_with(STR, anyOf=[{"nullable": True}]), "spec.anyOf[0]", "junctor-nullable"),
        (spec_with(STR, allOf=[{"x-kubernetes-preserve-unknown-fields": True}]),
         "spec.allOf[0]", "junctor-extension"),
        (spec_with(STR, anyOf=[{"properties": {"g": {"minLength": 1}}}]), "spec.anyOf[0].g",
         "junctor-undeclared"),
        (spec_with(STR, **{"not": {"properties": {"f": {"type": "string"}}}}),
         "spec.not.f", "junctor-type"),
        (spec_with({"type": "array", "items": STR, "x-kubernetes-list-type": "map"}),
         "spec.f", "list-map-keys-required"),
        (spec_with({"type": "array", "items": {"type": "object", "properties": {"k": STR}},
                    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}),
         "spec.f[*].k", "list-map-key-required"),
        (spec_with({"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "required": ["k"],
                              "properties": {"k": {"type": "object"}}}}),
         "spec.f[*].k", "list-map-key-scalar"),
        (spec_with({"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["missing"],
                    "items": {"type": "object", "properties": {"k": STR}}}),
         "spec.f", "list-map-key-missing"),
        (spec_with({"type": "array", "items": STR, "x-kubernetes-list-map-keys": ["a"]}),
         "spec.f", "list-map-keys-without-map"),
        (spec_with({"type": "array", "items": {"type": "object"},
                    "x-kubernetes-list-type": "set"}), "spec.f", "list-set-items"),
        (spec_with({"type": "string", "x-kubernetes-list-type": "atomic"}), "spec.f",
         "list-type-array"),
        (spec_with({"type": "string", "x-kubernetes-map-type": "atomic"}), "spec.f",
         "map-type-object"),
        (spec_with({"type": "string", "x-kubernetes-embedded-resource": True}), "spec.f",
         "embedded-resource-object"),
        (spec_with({"type": "object", "x-kubernetes-embedded-resource": True}), "spec.f",
         "embedded-resource-fields"),
        (spec_with({"type": "object", "x-kubernetes-embedded-resource": True,
                    "properties": {"kind": {"type": "integer"}}}), "spec.f.kind",
         "apiversion-kind-string"),
        (spec_with({"type": "integer", "x-kubernetes-int-or-string": True}), "spec.f",
         "int-or-string-type"),
        (spec_with({"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
         "spec.f", "preserve-unknown-fields-true"),
        (spec_with({"type": "string", "const": "x"}), "spec.f", "unsupported-keyword"),
        (spec_with({"type": "array", "items": [STR]}), "spec.f", "items-tuple"),
        ({"type": "array", "items": STR}, "<root>", "root-object"),
        ({"type": "object", "properties": {"metadata": {
            "type": "object", "properties": {"labels": {"type": "object"}}}}},
         "metadata.labels", "metadata-restricted"),
        ({"type": "object", "properties": {"metadata": {"type": "string"}}}, "metadata",
         "metadata-object"),
    ],
)
def test_seeded_violation_is_reported(schema: dict[str, Any], path: str, rule: str) -> None:
    findings = lint_structural(schema)
    assert LintFinding(path, rule, next(
        (f.message for f in findings if f.rule == rule and f.path == path), "")) in findings, \
        findings
    assert all(isinstance(f.message, str) and f.message for f in findings)


def test_metadata_may_restrict_name() -> None:
    schema = {"type": "object", "properties": {"metadata": {
        "type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}}}}
    assert lint_structural(schema) == []


def test_finding_renders_path_message_rule() -> None:
    [finding] = lint_structural(spec_with({}))
    assert str(finding).startswith("spec.f: type must not be empty")
    assert str(finding).endswith("[type-required]")
