"""The API server's checks of one CRD schema (``spec.versions[*].schema``).

A port of ``validateCustomResourceDefinitionValidation`` and
``ValidateCustomResourceDefinitionOpenAPISchema`` in k8s.io/apiextensions-apiserver v0.37.2
``pkg/apis/apiextensions/validation/validation.go``, with the options the create path uses
(defaults allowed, structural schema, pruned defaults, atomic set items and map-list keys
all required), and of ``ValidateDefaults`` in ``pkg/apiserver/schema/defaulting/
validation.go``. In the order the server runs them:

1. with the status subresource, the root may only carry some keywords, of type object;
   ``nullable`` is forbidden at the root;
2. the schema must be structural (``_crd_structural``); only then are the defaults checked:
   pruned (no unknown fields), valid against their node (OpenAPI, embedded ObjectMeta and
   the node's CEL rules, with the project's model of the server: ``_prune``,
   ``_objectmeta``, ``_validate``);
3. every node: the keywords the v3 validator forbids (``uniqueItems``, ``$ref``,
   ``additionalProperties`` with ``properties``, ...), ``x-kubernetes-*`` consistency
   (list-type, list-map-keys, map-type, set items atomic, map keys required or defaulted
   and not nullable), and every ``x-kubernetes-validations`` entry (rule, message,
   ``reason``, ``fieldPath`` valid against the node as ``cel.ValidFieldPath`` walks it);
4. where the schema is structural and a node has no schema error, its rules are compiled
   (``compatfuzz.strategies._cel_check.compile_errors``): compile errors, a
   ``messageExpression`` that does not compile, ``oldSelf`` under a list or map whose items
   the server cannot correlate, ``optionalOldSelf`` on a rule without ``oldSelf``.

CEL *cost* limits are not checked here (``compatfuzz.strategies._cel_cost`` owns them).
Value-validation keywords are otherwise not judged: the server accepts ``maxLength: -1`` or
``minLength > maxLength``, and so does this port.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from compatfuzz.apiserver._crd_decode import items_schema
from compatfuzz.apiserver._crd_defaults import validate_defaults
from compatfuzz.apiserver._crd_problem import (
    CRDProblem,
    GoJSON,
    child,
    compile_detail,
    forbidden,
    go_json,
    index,
    invalid,
    key,
    not_supported,
    required,
)
from compatfuzz.apiserver._crd_structural import new_structural_error, validate_structural

__all__ = ["validate_validation"]

_OPENAPI_TYPES = ("array", "boolean", "integer", "number", "object", "string")
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
            "FieldValueRequired")
_META_FIELDS = frozenset({"metadata", "kind", "apiVersion"})

#: The internal JSONSchemaProps fields in struct order, with their JSON names.
_GO_FIELDS = (
    ("ID", "id"), ("Schema", "$schema"), ("Ref", "$ref"), ("Description", "description"),
    ("Type", "type"), ("Nullable", "nullable"), ("Format", "format"), ("Title", "title"),
    ("Default", "default"), ("Maximum", "maximum"), ("ExclusiveMaximum", "exclusiveMaximum"),
    ("Minimum", "minimum"), ("ExclusiveMinimum", "exclusiveMinimum"),
    ("MaxLength", "maxLength"), ("MinLength", "minLength"), ("Pattern", "pattern"),
    ("MaxItems", "maxItems"), ("MinItems", "minItems"), ("UniqueItems", "uniqueItems"),
    ("MultipleOf", "multipleOf"), ("Enum", "enum"), ("MaxProperties", "maxProperties"),
    ("MinProperties", "minProperties"), ("Required", "required"), ("Items", "items"),
    ("AllOf", "allOf"), ("OneOf", "oneOf"), ("AnyOf", "anyOf"), ("Not", "not"),
    ("Properties", "properties"), ("AdditionalProperties", "additionalProperties"),
    ("PatternProperties", "patternProperties"), ("Dependencies", "dependencies"),
    ("AdditionalItems", "additionalItems"), ("Definitions", "definitions"),
    ("ExternalDocs", "externalDocs"), ("Example", "example"),
    ("XPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields"),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource"),
    ("XIntOrString", "x-kubernetes-int-or-string"),
    ("XListMapKeys", "x-kubernetes-list-map-keys"), ("XListType", "x-kubernetes-list-type"),
    ("XMapType", "x-kubernetes-map-type"), ("XValidations", "x-kubernetes-validations"),
)
_ALLOWED_AT_ROOT = ("Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum",
                    "Minimum", "ExclusiveMinimum", "MaxLength", "MinLength", "Pattern",
                    "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required", "Items",
                    "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields",
                    "XValidations")


@dataclass(frozen=True)
class _SSV:
    """``specStandardValidatorV3``: what a node's position allows."""

    allow_defaults: bool = True
    disallow_reason: str = ""
    inside_meta: bool = False
    uncorrelatable: str | None = None

    def forbid_defaults(self, reason: str) -> _SSV:
        return replace(self, allow_defaults=False, disallow_reason=reason)

    def forbid_old_self(self, path: str) -> _SSV:
        return self if self.uncorrelatable is not None else replace(self, uncorrelatable=path)


_PTR_FIELDS = frozenset({
    "$ref", "default", "maximum", "minimum", "maxLength", "minLength", "maxItems", "minItems",
    "multipleOf", "maxProperties", "minProperties", "items", "not", "additionalProperties",
    "additionalItems", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type", "x-kubernetes-map-type"})
_BOOL_FIELDS = frozenset({"nullable", "exclusiveMaximum", "exclusiveMinimum", "uniqueItems",
                          "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string"})
_SLICE_MAP_FIELDS = frozenset({
    "enum", "required", "allOf", "oneOf", "anyOf", "properties", "patternProperties",
    "dependencies", "definitions", "x-kubernetes-list-map-keys", "x-kubernetes-validations"})


def go_schema_json(s: Mapping[str, Any] | None) -> str:
    """``json.Marshal`` of an internal ``JSONSchemaProps`` (no JSON tags: Go field names,
    in struct order, zero values included, map keys sorted)."""
    if s is None:
        return "null"
    parts = []
    for go_name, name in _GO_FIELDS:
        value = s.get(name)
        if name == "items":
            text = "null" if value is None else (
                '{"Schema":null,"JSONSchemas":' + ("[" + ",".join(
                    go_schema_json(x) for x in value) + "]" if value else "null") + "}"
                if isinstance(value, list) else
                '{"Schema":' + (go_schema_json(value) if value else "null")
                + ',"JSONSchemas":null}')
        elif name in ("additionalProperties", "additionalItems"):
            text = "null" if value is None else (
                '{"Allows":' + ("true" if value is True or isinstance(value, dict)
                                else "false") + ',"Schema":'
                + (go_schema_json(value) if isinstance(value, dict) else "null") + "}")
        elif name == "not":
            text = go_schema_json(value)
        elif name in ("allOf", "oneOf", "anyOf"):
            text = "null" if value is None else (
                "[" + ",".join(go_schema_json(x) for x in value) + "]")
        elif name in ("properties", "patternProperties", "definitions"):
            text = "null" if value is None else (
                "{" + ",".join(f"{go_json(k)}:{go_schema_json(value[k])}"
                               for k in sorted(value)) + "}")
        elif name == "dependencies":
            text = "null" if value is None else "{" + ",".join(
                f'{go_json(k)}:{{"Schema":'
                + (go_schema_json(value[k]) if isinstance(value[k], dict) else "null")
                + ',"Property":' + (go_json(value[k]) if isinstance(value[k], list)
                                    else "null") + "}" for k in sorted(value)) + "}"
        elif name == "externalDocs":
            text = "null" if value is None else (
                f'{{"Description":{go_json(value.get("description", ""))},'
                f'"URL":{go_json(value.get("url", ""))}}}')
        elif name == "x-kubernetes-validations":
            text = "null" if value is None else (
                "[" + ",".join(_rule_json(r).text for r in value) + "]")
        elif name in _BOOL_FIELDS:
            text = "true" if value else "false"
        elif name in _PTR_FIELDS or name in _SLICE_MAP_FIELDS:
            text = "null" if value is None else go_json(value)
        else:
            text = go_json(value if value is not None else "")
        parts.append(f'"{go_name}":{text}')
    return "{" + ",".join(parts) + "}"


def _rule_json(rule: Mapping[str, Any]) -> GoJSON:
    """``json.Marshal`` of an internal ``ValidationRule`` (no JSON tags: Go names)."""
    parts = [f'"Rule":{go_json(rule.get("rule", ""))}',
             f'"Message":{go_json(rule.get("message", ""))}',
             f'"MessageExpression":{go_json(rule.get("messageExpression", ""))}',
             f'"Reason":{go_json(rule.get("reason"))}',
             f'"FieldPath":{go_json(rule.get("fieldPath", ""))}',
             f'"OptionalOldSelf":{go_json(rule.get("optionalOldSelf"))}']
    return GoJSON("{" + ",".join(parts) + "}")


def validate_validation(validation: Mapping[str, Any] | None, status_enabled: bool,
                        path: str) -> list[CRDProblem]:
    """``validateCustomResourceDefinitionValidation`` for a decoded ``{openAPIV3Schema}``."""
    errs: list[CRDProblem] = []
    if validation is None:
        return errs
    schema = validation.get("openAPIV3Schema")
    if schema is None:
        return errs
    root = child(path, "openAPIV3Schema")
    if status_enabled:
        for go_name, json_name in _GO_FIELDS:
            if json_name not in schema:
                continue
            value = schema[json_name]
            if go_name == "Type":
                if value != "object":
                    errs.append(invalid(f"{path}.openAPIV3Schema.type", value,
                                        'only "object" is allowed as the type at the root of '
                                        "the schema if the status subresource is enabled"))
                    break
                continue
            if go_name not in _ALLOWED_AT_ROOT:
                errs.append(invalid(root, GoJSON(go_schema_json(schema)),
                                    f"only [{' '.join(_ALLOWED_AT_ROOT)}] fields are allowed "
                                    "at the root of the schema if the status subresource is "
                                    "enabled"))
                break
    if schema.get("nullable"):
        errs.append(forbidden(f"{path}.openAPIV3Schema.nullable",
                              "nullable cannot be true at the root"))
    cel_context = False
    init_errs: list[CRDProblem] = []
    why = new_structural_error(schema)
    if why is not None:
        init_errs.append(invalid(root, "", why))
    else:
        structural = validate_structural(root, schema)
        if structural:
            errs.extend(structural)
        else:
            defaults = validate_defaults(root, schema)
            if defaults:
                errs.extend(defaults)
            else:
                cel_context = True
    schema_errs, cel_errs = _openapi(schema, root, _SSV(), True, cel_context)
    errs.extend(schema_errs)
    errs.extend(cel_errs)
    if cel_context and not cel_errs:
        errs.extend(_cost_errors(schema, root))
    if not errs:
        errs.extend(init_errs)
    return errs


def _openapi(s: Mapping[str, Any] | None, path: str, ssv: _SSV, is_root: bool,
             cel: bool) -> tuple[list[CRDProblem], list[CRDProblem]]:
    """``ValidateCustomResourceDefinitionOpenAPISchema``: (schema errors, CEL errors)."""
    errs: list[CRDProblem] = []
    cel_errs: list[CRDProblem] = []
    _openapi_into(s, path, ssv, is_root, cel, errs, cel_errs)
    return errs, cel_errs


#: the keywords ``_extensions``, ``_map_list_keys_map_set`` and ``_rules`` read: a node
#: with none of them (most of a big CRD's) skips those three calls
_EXTENSION_KEYS = frozenset({
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-map-type",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-validations"})


def _openapi_into(s: Mapping[str, Any] | None, path: str, ssv: _SSV, is_root: bool,  # noqa: PLR0917
                  cel: bool, errs: list[CRDProblem], cel_errs: list[CRDProblem]) -> None:
    """:func:`_openapi`, appending to ``errs`` and ``cel_errs`` (one pair of lists for the
    whole walk; a node's own verdict reads what it and its children added)."""
    if s is None:
        return
    start = len(errs)
    errs.extend(_standard(s, path, ssv))
    if s.get("uniqueItems"):
        errs.append(forbidden(child(path, "uniqueItems"), "uniqueItems cannot be set to true "
                              "since the runtime complexity becomes quadratic"))
    props: Mapping[str, Any] = s.get("properties") or {}
    if "additionalProperties" in s:
        extra = s["additionalProperties"]
        if props and (extra is False or isinstance(extra, dict)):
            errs.append(forbidden(child(path, "additionalProperties"),
                                  "additionalProperties and properties are mutual exclusive"))
        sub_ssv = ssv
        if ssv.inside_meta:
            sub_ssv = ssv.forbid_defaults("inside additionalProperties applying to object "
                                          "metadata")
        _openapi_into(extra if isinstance(extra, dict) else None,
                      child(path, "additionalProperties"), sub_ssv, False,
                      cel and isinstance(extra, dict), errs, cel_errs)
    map_type = s.get("x-kubernetes-map-type")
    if props:
        # cel.MapIsCorrelatable (apiserver/schema/cel/model): unset, "granular" and
        # "atomic" maps correlate; any other map type does not
        base_ssv = ssv
        if map_type not in (None, "", "granular", "atomic"):
            base_ssv = ssv.forbid_old_self(path)
        meta_here = is_root or s.get("x-kubernetes-embedded-resource")
        at = child(path, "properties")
        for name, sub in props.items():
            sub_ssv = base_ssv
            if meta_here and name in _META_FIELDS:
                sub_ssv = replace(sub_ssv, inside_meta=True)
                if is_root:
                    sub_ssv = sub_ssv.forbid_defaults(f"in top-level {name}")
            _openapi_into(sub, key(at, name), sub_ssv, False, cel, errs, cel_errs)
    if isinstance(s.get("not"), dict):
        _openapi_into(s["not"], child(path, "not"), ssv, False, False, errs, cel_errs)
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, clause in enumerate(s.get(junctor) or ()):
            _openapi_into(clause, index(child(path, junctor), i), ssv, False, False, errs,
                          cel_errs)
    for name, sub in (s.get("definitions") or {}).items():
        _openapi_into(sub, key(child(path, "definitions"), name), ssv, False, False, errs,
                      cel_errs)
    if "items" in s:
        sub_ssv = ssv
        if s.get("x-kubernetes-list-type") != "map":
            sub_ssv = sub_ssv.forbid_old_self(path)
        items = s["items"]
        _openapi_into(items_schema(s), child(path, "items"), sub_ssv, False, cel, errs,
                      cel_errs)
        if isinstance(items, list):
            for i, item in enumerate(items):
                _openapi_into(item, index(child(path, "items"), i), sub_ssv, False, cel, errs,
                              cel_errs)
    for name, dep in (s.get("dependencies") or {}).items():
        if isinstance(dep, dict):
            _openapi_into(dep, key(child(path, "dependencies"), name), ssv, False, False,
                          errs, cel_errs)
    if _EXTENSION_KEYS.isdisjoint(s):
        return
    errs.extend(_extensions(s, path))
    errs.extend(_map_list_keys_map_set(s, path))
    errs.extend(_rules(s, path))
    if s.get("x-kubernetes-validations") and len(errs) == start and cel:
        cel_errs.extend(_compile(s, path, ssv, is_root))


def _standard(s: Mapping[str, Any], path: str, ssv: _SSV) -> list[CRDProblem]:
    """``specStandardValidatorV3.validate``."""
    errs: list[CRDProblem] = []
    t = s.get("type", "")
    if t and t not in _OPENAPI_TYPES:
        errs.append(not_supported(child(path, "type"), t, _OPENAPI_TYPES))
    if s.get("default") is not None and not ssv.allow_defaults:
        detail = "must not be set"
        if ssv.disallow_reason:
            detail += " " + ssv.disallow_reason
        errs.append(forbidden(child(path, "default"), detail))
    if s.get("id"):
        errs.append(forbidden(child(path, "id"), "id is not supported"))
    if "additionalItems" in s:
        errs.append(forbidden(child(path, "additionalItems"), "additionalItems is not supported"))
    if s.get("patternProperties"):
        errs.append(forbidden(child(path, "patternProperties"),
                              "patternProperties is not supported"))
    if s.get("definitions"):
        errs.append(forbidden(child(path, "definitions"), "definitions is not supported"))
    if "dependencies" in s:
        errs.append(forbidden(child(path, "dependencies"), "dependencies is not supported"))
    if "$ref" in s:
        errs.append(forbidden(child(path, "$ref"), "$ref is not supported"))
    if t == "null":
        errs.append(forbidden(child(path, "type"),
                              "type cannot be set to null, use nullable as an alternative"))
    if isinstance(s.get("items"), list) and s["items"]:
        errs.append(forbidden(child(path, "items"),
                              "items must be a schema object and not an array"))
    if ssv.inside_meta and s.get("x-kubernetes-embedded-resource"):
        errs.append(forbidden(child(path, "x-kubernetes-embedded-resource"),
                              "must not be used inside of resource meta"))
    return errs


def _extensions(s: Mapping[str, Any], path: str) -> list[CRDProblem]:
    errs: list[CRDProblem] = []
    t = s.get("type", "")
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(invalid(child(path, "x-kubernetes-preserve-unknown-fields"), False,
                            "must be true or undefined"))
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None and t != "object":
        what = "must be object if x-kubernetes-map-type is specified"
        errs.append(required(child(path, "type"), what) if not t
                    else invalid(child(path, "type"), t, what))
    if map_type is not None and map_type not in ("atomic", "granular"):
        errs.append(not_supported(child(path, "x-kubernetes-map-type"), map_type,
                                  ("atomic", "granular")))
    list_type = s.get("x-kubernetes-list-type")
    items = items_schema(s)
    if list_type is not None and t != "array":
        what = "must be array if x-kubernetes-list-type is specified"
        errs.append(required(child(path, "type"), what) if not t
                    else invalid(child(path, "type"), t, what))
    elif list_type == "set" and items is not None:
        it = items.get("type", "")
        if it == "array":
            inner = items.get("x-kubernetes-list-type")
            if inner is not None and inner != "atomic":
                errs.append(invalid(child(path, "items", "x-kubernetes-list-type"),
                                    GoJSON(go_json(inner)),
                                    "must be atomic as item of a list with "
                                    "x-kubernetes-list-type=set"))
        elif it == "object" and items.get("x-kubernetes-map-type") != "atomic":
            inner = items.get("x-kubernetes-list-type")  # sic: upstream prints the list type
            errs.append(invalid(child(path, "items", "x-kubernetes-map-type"),
                                GoJSON(go_json(inner)),
                                "must be atomic as item of a list with "
                                "x-kubernetes-list-type=set"))
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(not_supported(child(path, "x-kubernetes-list-type"), list_type,
                                  ("atomic", "set", "map")))
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys:
        if list_type is None:
            errs.append(required(child(path, "x-kubernetes-list-type"),
                                 "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            errs.append(invalid(child(path, "x-kubernetes-list-type"), list_type,
                                "must be map if x-kubernetes-list-map-keys is non-empty"))
    if list_type == "map":
        if not keys:
            errs.append(required(child(path, "x-kubernetes-list-map-keys"),
                                 "must not be empty if x-kubernetes-list-type is map"))
        if "items" not in s:
            errs.append(required(child(path, "items"),
                                 "must have a schema if x-kubernetes-list-type is map"))
        elif items is None:
            raw = s["items"]
            shown = GoJSON(go_json({"Schema": None, "JSONSchemas": None})) if not raw else (
                GoJSON("{...}"))
            errs.append(invalid(child(path, "items"), shown,
                                "must only have a single schema if x-kubernetes-list-type "
                                "is map"))
        if items is not None and items.get("type", "") != "object":
            errs.append(invalid(child(path, "items", "type"), items.get("type", ""),
                                "must be object if parent array's x-kubernetes-list-type "
                                "is map"))
        if items is not None and items.get("type") == "object":
            seen: set[str] = set()
            item_props: Mapping[str, Any] = items.get("properties") or {}
            for k in keys:
                if k in item_props:
                    if item_props[k].get("type") in ("array", "object"):
                        errs.append(invalid(
                            child(key(child(path, "items", "properties"), k), "type"),
                            "object", "must be a scalar type if parent array's "
                            "x-kubernetes-list-type is map"))
                else:
                    errs.append(invalid(child(path, "x-kubernetes-list-map-keys"), keys,
                                        "entries must all be names of item properties"))
                if k in seen:
                    errs.append(invalid(child(path, "x-kubernetes-list-map-keys"), keys,
                                        "must not contain duplicate entries"))
                seen.add(k)
    return errs


def _map_list_keys_map_set(s: Mapping[str, Any], path: str) -> list[CRDProblem]:
    """``validateMapListKeysMapSet``."""
    items = items_schema(s)
    list_type = s.get("x-kubernetes-list-type")
    if items is None or list_type not in ("set", "map"):
        return []
    errs: list[CRDProblem] = []
    if items.get("nullable"):
        errs.append(forbidden(child(path, "items", "nullable"),
                              f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
    if list_type == "map":
        required_names = set(items.get("required") or ())
        item_props: Mapping[str, Any] = items.get("properties") or {}
        for k in s.get("x-kubernetes-list-map-keys") or ():
            prop = item_props.get(k)
            if prop is None:
                continue
            at = key(child(path, "items", "properties"), k)
            if k not in required_names and prop.get("default") is None:
                errs.append(required(child(at, "default"), "this property is in "
                                     "x-kubernetes-list-map-keys, so it must have a default "
                                     "or be a required property"))
            if prop.get("nullable"):
                errs.append(forbidden(child(at, "nullable"), "this property is in "
                                      "x-kubernetes-list-map-keys, so it cannot be nullable"))
    return errs


_NEWLINES = re.compile(r"[\n\r]+")


def _go_trim(text: str) -> str:
    """``strings.TrimSpace`` (Unicode White_Space, as Python's ``str.strip``, less a few)."""
    return text.strip(" \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                      "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _rules(s: Mapping[str, Any], path: str) -> list[CRDProblem]:
    errs: list[CRDProblem] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or ()):
        at = index(child(path, "x-kubernetes-validations"), i)
        text = rule.get("rule", "")
        message = rule.get("message", "")
        message_expression = rule.get("messageExpression", "")
        trimmed_rule, trimmed_msg = _go_trim(text), _go_trim(message)
        if not trimmed_rule:
            errs.append(required(child(at, "rule"), "rule is not specified"))
        elif message and not trimmed_msg:
            errs.append(invalid(child(at, "message"), message, "must be non-empty if specified"))
        elif _NEWLINES.search(trimmed_msg):
            errs.append(invalid(child(at, "message"), message, "must not contain line breaks"))
        elif _NEWLINES.search(trimmed_rule) and not trimmed_msg:
            errs.append(required(child(at, "message"),
                                 "message must be specified if rule contains line breaks"))
        if message_expression and not _go_trim(message_expression):
            errs.append(required(child(at, "messageExpression"),
                                 "messageExpression must be non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in _REASONS:
            errs.append(not_supported(child(at, "reason"), reason, _REASONS))
        field_path = rule.get("fieldPath", "")
        if field_path and not _go_trim(field_path):
            errs.append(invalid(child(at, "fieldPath"), field_path,
                                "must be non-empty if specified"))
        if _NEWLINES.search(field_path):
            errs.append(invalid(child(at, "fieldPath"), field_path,
                                "must not contain line breaks"))
        if field_path and not _path_valid(s, field_path):
            errs.append(invalid(child(at, "fieldPath"), field_path, "must be a valid path"))
    return errs


def _path_valid(s: Mapping[str, Any], field_path: str) -> bool:
    """``pathValid``: ``cel.ValidFieldPath`` on the node's structural schema."""
    if new_structural_error(s) is not None:
        return True
    return valid_field_path(field_path, s) is None


def _tokens(text: str) -> list[str]:
    """The tokens ``ValidFieldPath``'s scanner splits a path into."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "'":
            j = i + 1
            while j < len(text) and not (text[j] == "'" and text[j - 1] != "\\"):
                j += 1
            out.append(text[i:j + 1])
            i = j + 1
            continue
        if text[i] in ".[]":
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and text[j] not in ".[]":
            j += 1
        out.append(text[i:j])
        i = j
    return out


def _unescape_single_quote(text: str) -> str | None:
    """``unescapeSingleQuote``: the ``\\'`` ``\\\\`` ... escapes of a quoted path step."""
    out: list[str] = []
    i = 0
    escapes = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
               "v": "\v", "'": "'", '"': '"', "\\": "\\"}
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text) or text[i + 1] not in escapes:
                return None
            out.append(escapes[text[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def valid_field_path(field_path: str, s: Mapping[str, Any] | None, *,
                     allow_array_notation: bool = True) -> str | None:
    """``cel.ValidFieldPath``'s error for a rule's ``fieldPath`` at node ``s`` (``None``:
    valid). ``.name`` and ``['name']`` steps go to a property (or, in a map, to the
    values' schema)."""
    tokens = _tokens(field_path)
    node: Any = s
    i = 0

    def step(name: str) -> str | None:
        nonlocal node
        if node is None:
            return "does not refer to a valid field"
        props = node.get("properties")
        if props:
            if name not in props:
                return "does not refer to a valid field"
            node = props[name]
        elif "additionalProperties" in node:
            extra = node["additionalProperties"]
            node = extra if isinstance(extra, dict) else None
        else:
            return "does not refer to a valid field"
        return None

    while i < len(tokens):
        tok = tokens[i]
        if tok == "[":
            if not allow_array_notation:
                return "array notation is not allowed"
            if i + 1 >= len(tokens):
                return "unexpected end of JSON path"
            tok = tokens[i + 1]
            if len(tok) < 2 or tok[0] != "'" or tok[-1] != "'":
                return f"expected single quoted string but got {tok}"
            name = _unescape_single_quote(tok[1:-1])
            if name is None:
                return "invalid string literal"
            why = step(name)
            if why:
                return why
            if i + 2 >= len(tokens):
                return "unexpected end of JSON path"
            if tokens[i + 2] != "]":
                return f"expected ] but got {tokens[i + 2]}"
            i += 3
        elif tok == ".":
            if i + 1 >= len(tokens):
                return "unexpected end of JSON path"
            why = step(tokens[i + 1])
            if why:
                return why
            i += 2
        else:
            return f"expected [ or . but got: {tok}"
    return None


def _cost_errors(schema: Mapping[str, Any], root: str) -> list[CRDProblem]:
    """The estimated-cost checks of every rule (``getExpressionCost``) and of the version's
    total (apiextensions ``validation.go``), with cel-go's estimates
    (``compatfuzz.strategies._cel_cost_crd``, equal to the server's)."""
    from compatfuzz.strategies._cel_cost_crd import crd_cost_problems

    return [forbidden(path, detail) for path, detail in crd_cost_problems(schema, prefix=root)]


def _compile(s: Mapping[str, Any], path: str, ssv: _SSV, is_root: bool = False
             ) -> list[CRDProblem]:
    """The CEL part of the rule checks: compile errors and ``oldSelf`` placement. At the
    root the server declares ``apiVersion``, ``kind`` and ``metadata`` as it does for an
    embedded resource (``compile_errors``' docstring)."""
    from compatfuzz.strategies._cel_check import compile_errors, uses_old_self

    if is_root:
        s = {**s, "x-kubernetes-embedded-resource": True}

    errs: list[CRDProblem] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or ()):
        at = index(child(path, "x-kubernetes-validations"), i)
        text = rule.get("rule", "")
        optional_old_self = rule.get("optionalOldSelf")
        problems = compile_errors(text, s, old_self=bool(optional_old_self))
        old_self = False
        if problems:
            errs.append(invalid(child(at, "rule"), _rule_json(rule), compile_detail(problems)))
        else:
            old_self = bool(uses_old_self(text, s, optional_old_self=bool(optional_old_self)))
            message_expression = rule.get("messageExpression", "")
            if message_expression:
                bad = compile_errors(message_expression, s, message_expression=True)
                if bad:
                    errs.append(invalid(child(at, "messageExpression"), _rule_json(rule),
                                        compile_detail(bad, "messageExpression ")))
        if old_self:
            if ssv.uncorrelatable is not None:
                errs.append(invalid(child(at, "rule"), text, "oldSelf cannot be used on the "
                                    "uncorrelatable portion of the schema within "
                                    f"{ssv.uncorrelatable}"))
        elif optional_old_self is not None:
            errs.append(invalid(child(at, "optionalOldSelf"), bool(optional_old_self),
                                "may not be set if oldSelf is not used in rule"))
    return errs
