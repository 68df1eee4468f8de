"""``validate_crd``: the API server's verdict on a CRD, in its words (issue 30).

Every expected message below is what apiextensions-apiserver v0.37.2 says for that CRD
(taken from the oracle of ``conformance/test_crdvalidation_conformance.py``, which checks
thousands more).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver import CRDProblem, field_pointer, validate_crd

CORPUS = Path(os.environ.get("COMPATFUZZ_CRD_CORPUS",
                             Path(__file__).resolve().parents[3] / "shared" / "corpus"
                             / "crds")).parent
ROOT = "spec.validation.openAPIV3Schema"
SPEC = f"{ROOT}.properties[spec]"


def crd(schema: Any = None, *, spec: Any = None, **extra: Any) -> dict[str, Any]:
    """A one-version CRD ``widgets.example.com`` whose ``spec`` field is ``spec``."""
    if schema is None:
        schema = {"type": "object", "properties": {"spec": spec or {"type": "object"}}}
    doc: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema}}]}}
    doc["spec"].update(extra)
    return doc


def errors(doc: dict[str, Any]) -> list[str]:
    return [p.message for p in validate_crd(doc) if not p.warning]


def warnings(doc: dict[str, Any]) -> list[str]:
    return [p.message for p in validate_crd(doc) if p.warning]


def rule(**entry: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "true", **entry}]}


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("no type", crd(spec={"type": "object", "properties": {"a": {"description": "x"}}}),
     f"{SPEC}.properties[a].type: Required value: must not be empty for specified object "
     "fields"),
    ("properties with additionalProperties",
     crd(spec={"type": "object", "properties": {"a": {"type": "string"}},
               "additionalProperties": {"type": "string"}}),
     f"{SPEC}.additionalProperties: Forbidden: additionalProperties and properties are "
     "mutual exclusive"),
    ("map list without keys",
     crd(spec={"type": "array", "x-kubernetes-list-type": "map", "items": {
         "type": "object", "properties": {"k": {"type": "string"}}}}),
     f"{SPEC}.x-kubernetes-list-map-keys: Required value: must not be empty if "
     "x-kubernetes-list-type is map"),
    ("map key neither required nor defaulted",
     crd(spec={"type": "array", "x-kubernetes-list-type": "map",
               "x-kubernetes-list-map-keys": ["k"], "items": {
                   "type": "object", "properties": {"k": {"type": "string"}}}}),
     f"{SPEC}.items.properties[k].default: Required value: this property is in "
     "x-kubernetes-list-map-keys, so it must have a default or be a required property"),
    ("map key not a scalar",
     crd(spec={"type": "array", "x-kubernetes-list-type": "map",
               "x-kubernetes-list-map-keys": ["k"], "items": {
                   "type": "object", "required": ["k"],
                   "properties": {"k": {"type": "object"}}}}),
     f"{SPEC}.items.properties[k].type: Invalid value: \"object\": must be a scalar type "
     "if parent array's x-kubernetes-list-type is map"),
    ("set of objects",
     crd(spec={"type": "array", "x-kubernetes-list-type": "set", "items": {
         "type": "object", "properties": {"k": {"type": "string"}}}}),
     f"{SPEC}.items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of "
     "a list with x-kubernetes-list-type=set"),
    ("uniqueItems", crd(spec={"type": "object", "uniqueItems": True}),
     f"{SPEC}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime "
     "complexity becomes quadratic"),
    ("type in a junctor", crd(spec={"type": "object", "anyOf": [{"type": "object"}]}),
     f"{SPEC}.anyOf[0].type: Forbidden: must be empty to be structural"),
    ("nullable root", crd({"type": "object", "nullable": True}),
     f"{ROOT}.nullable: Forbidden: nullable cannot be true at the root"),
    ("root not an object", crd({"type": "string"}),
     f'{ROOT}.type: Invalid value: "string": must be object at the root'),
    ("default of the wrong type", crd(spec={"type": "integer", "default": "x"}),
     f'{SPEC}.default: Invalid value: "string":  in body must be of type integer: '
     '"string"'),
    ("default with unknown fields",
     crd(spec={"type": "object", "properties": {"a": {"type": "integer"}},
               "default": {"b": 1}}),
     f'{SPEC}.default: Invalid value: {{"b":1}}: must not have unknown fields'),
    ("default failing a rule",
     crd(spec={"type": "integer", "default": 3,
               "x-kubernetes-validations": [{"rule": "self > 10"}]}),
     f"{SPEC}.default: Invalid value: 3: failed rule: self > 10"),
    ("empty rule", crd(spec=rule(rule="  ")),
     f"{SPEC}.x-kubernetes-validations[0].rule: Required value: rule is not specified"),
    ("reason", crd(spec=rule(reason="Bogus")),
     f'{SPEC}.x-kubernetes-validations[0].reason: Unsupported value: "Bogus": supported '
     'values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
     '"FieldValueRequired"'),
    ("fieldPath", crd(spec=rule(fieldPath=".b")),
     f'{SPEC}.x-kubernetes-validations[0].fieldPath: Invalid value: ".b": must be a valid '
     "path"),
    ("messageExpression", crd(spec=rule(messageExpression="  ")),
     f"{SPEC}.x-kubernetes-validations[0].messageExpression: Required value: "
     "messageExpression must be non-empty if specified"),
    ("optionalOldSelf without oldSelf", crd(spec=rule(optionalOldSelf=True)),
     f"{SPEC}.x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be "
     "set if oldSelf is not used in rule"),
    ("oldSelf where items cannot be correlated",
     crd(spec={"type": "array", "maxItems": 2, "items": {
         "type": "string", "maxLength": 2,
         "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}),
     f'{SPEC}.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
     f"oldSelf cannot be used on the uncorrelatable portion of the schema within {SPEC}"),
    ("metadata name",
     {**crd(), "metadata": {"name": "x"}},
     'metadata.name: Invalid value: "x": must be spec.names.plural+"."+spec.group'),
    ("group", crd(group="nodot"),
     'spec.group: Invalid value: "nodot": should be a domain with at least one dot'),
    ("scope", crd(scope="Global"),
     'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'),
    ("webhook without config", crd(conversion={"strategy": "Webhook"}),
     "spec.conversion.webhookClientConfig: Required value: required when strategy is set "
     "to Webhook"),
    ("preserveUnknownFields", crd(preserveUnknownFields=True),
     "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
     "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"),
]


@pytest.mark.parametrize(("doc", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_the_server_message(doc: dict[str, Any], message: str) -> None:
    assert message in errors(doc)


def test_the_first_problem_is_the_servers_first() -> None:
    problem = validate_crd(CASES[0][1])[0]
    assert problem == CRDProblem(
        f"{SPEC}.properties[a].type", "Required value",
        f"{SPEC}.properties[a].type: Required value: must not be empty for specified "
        "object fields")
    assert not problem.warning


def test_cel_compile_errors_are_the_checkers() -> None:
    found = errors(crd(spec=rule(rule="self.a == ")))
    assert len(found) == 1
    assert found[0].startswith(
        f'{SPEC}.x-kubernetes-validations[0].rule: Invalid value: {{"Rule":"self.a == ",'
        '"Message":"","MessageExpression":"","Reason":null,"FieldPath":"",'
        '"OptionalOldSelf":null}: compilation failed: ')


def test_a_per_version_schema_is_reported_under_its_version() -> None:
    doc = crd(spec={"type": "object"})
    other = copy.deepcopy(doc["spec"]["versions"][0])
    other.update(name="v2", storage=False)
    other["schema"]["openAPIV3Schema"]["properties"]["spec"] = {"description": "no type"}
    doc["spec"]["versions"].append(other)
    assert errors(doc) == [
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].type: Required value: "
        "must not be empty for specified object fields"]


@pytest.mark.parametrize("spec", [
    {"type": "string", "maxLength": -1}, {"type": "string", "minLength": -5},
    {"type": "string", "minLength": 5, "maxLength": 2}, {"type": "string", "enum": [1]},
    {"type": "integer", "minimum": 10, "maximum": 1},
])
def test_unsatisfiable_value_validations_are_accepted(spec: dict[str, Any]) -> None:
    """The server does not judge value validations (issue 30: compatfuzz refused these)."""
    doc = crd(spec={"type": "object", "properties": {"f": spec}})
    assert validate_crd(doc) == []


def test_warnings_are_not_errors() -> None:
    assert warnings(crd(spec={"type": "object", "const": "x"})) == [
        'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.const"']
    assert warnings(crd(spec={"type": "string", "format": "bogus"})) == [
        'unrecognized format "bogus"']
    assert errors(crd(spec={"type": "string", "format": "bogus"})) == []


def test_a_body_that_does_not_decode() -> None:
    (problem,) = validate_crd(crd(spec={"type": 5}))
    assert problem.kind == "Decode error"
    assert problem.message.startswith("json: cannot unmarshal number into Go struct field")


def test_field_pointer() -> None:
    doc = crd(spec={"type": "object", "properties": {"a": {"description": "x"}}})
    (problem,) = validate_crd(doc)
    assert field_pointer(problem, doc) == (
        "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/a")
    assert field_pointer("spec.conversion.webhookClientConfig", doc) == "/spec"
    assert field_pointer("metadata.name", doc) == "/metadata/name"
    multi = crd()
    multi["spec"]["versions"].append({**multi["spec"]["versions"][0], "name": "v2",
                                      "storage": False, "schema": {"openAPIV3Schema": {
                                          "type": "object", "properties": {"b": {}}}}})
    assert field_pointer("spec.versions[1].schema.openAPIV3Schema.properties[b].type",
                         multi) == "/spec/versions/1/schema/openAPIV3Schema/properties/b"


def test_not_a_mapping() -> None:
    from compatfuzz.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="Expected a CRD mapping"):
        validate_crd("apiVersion: v1")  # type: ignore[arg-type]


# --- the corpus ------------------------------------------------------------------------

def _corpus() -> list[tuple[str, dict[str, Any]]]:
    import yaml

    out = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                out.append((str(path.relative_to(CORPUS)), doc))
    return out


@pytest.mark.extended  # ~50 s, every corpus CRD; CI runs it
@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"CRD corpus not found at {CORPUS} "
                    "(set COMPATFUZZ_CRD_CORPUS)")
def test_every_corpus_crd_is_accepted() -> None:
    refused = {}
    for name, doc in _corpus():
        problems = [p.message for p in validate_crd(doc) if not p.warning]
        if problems:
            refused[name] = problems[:3]
    assert not refused


def test_an_empty_rule_beside_a_default_is_the_schema_error() -> None:
    """``compileRule`` gives an empty rule no program: the default passes, the rule check
    refuses (found by the conformance suite at 9,000 cases)."""
    doc = crd(spec={"type": "object", "default": {},
                    "x-kubernetes-validations": [{"rule": ""}]})
    assert errors(doc) == [f"{SPEC}.x-kubernetes-validations[0].rule: Required value: rule "
                           "is not specified"]


def test_a_default_of_a_type_no_value_has() -> None:
    assert errors(crd(spec={"type": "file", "default": "x"})) == [
        f'{SPEC}.default: Invalid value: "string":  in body must be of type file: "string"',
        f'{SPEC}.type: Unsupported value: "file": supported values: "array", "boolean", '
        '"integer", "number", "object", "string"']
