"""Whether a CRD schema is structural, with the API server's errors (KEP-2335).

A port of k8s.io/apiextensions-apiserver v0.37.2

* ``pkg/apiserver/schema/convert.go`` (``NewStructural``: the keywords a structural schema
  cannot even be built from, :func:`new_structural_error`),
* ``pkg/apiserver/schema/validation.go`` (``ValidateStructural``: every node has a type,
  junctors carry value validations only, ``metadata`` at the root restricts only ``name``
  and ``generateName``, ... :func:`validate_structural`) and
* ``pkg/apiserver/schema/complete.go`` (``validateStructuralCompleteness``: a junctor
  mentions only what the skeleton declares),

on the decoded schema of ``_crd_decode`` (a dict keyed as in the document). The errors come
sorted by their text, as ``ValidateStructuralWithOptions`` sorts them.

``compatfuzz.schema.lint_structural`` checks the same rules on a *normalised* schema, in
its own words, for a schema that is not in a CRD (an OpenAPI document); this module is the
server's verdict and wording on the CRD as written, naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compatfuzz.apiserver._crd_decode import items_schema
from compatfuzz.apiserver._crd_problem import (
    CRDProblem,
    child,
    forbidden,
    invalid,
    key,
    required,
)
from compatfuzz.schema._re2 import go_error

__all__ = ["new_structural_error", "validate_structural"]

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_JUNCTORS = ("allOf", "anyOf", "oneOf")


def new_structural_error(s: Mapping[str, Any] | None) -> str | None:
    """``NewStructural``'s error for the node, or ``None`` when it builds."""
    if s is None:
        return None
    err = _unsupported(s)
    if err:
        return err
    err = _value_validation_error(s)
    if err:
        return err
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    if isinstance(s.get("items"), list) and s["items"]:
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    err = new_structural_error(items_schema(s))
    if err:
        return err
    for sub in (s.get("properties") or {}).values():
        err = new_structural_error(sub)
        if err:
            return err
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        return new_structural_error(extra)
    return None


def _value_validation_error(s: Mapping[str, Any]) -> str | None:
    if isinstance(s.get("not"), dict):
        err = _nested_error(s["not"])
        if err:
            return err
    for junctor in _JUNCTORS:
        for clause in s.get(junctor) or ():
            err = _nested_error(clause)
            if err:
                return err
    return None


def _nested_error(s: Mapping[str, Any]) -> str | None:
    err = _unsupported(s) or _value_validation_error(s)
    if err:
        return err
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    if isinstance(s.get("items"), list) and s["items"]:
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    items = items_schema(s)
    if items is not None:
        err = _nested_error(items)
        if err:
            return err
    for sub in (s.get("properties") or {}).values():
        err = _nested_error(sub)
        if err:
            return err
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        return _nested_error(extra)
    return None


def _unsupported(s: Mapping[str, Any]) -> str | None:
    if s.get("id"):
        return "OpenAPIV3Schema 'id' is not supported"
    if s.get("$schema"):
        return "OpenAPIV3Schema 'schema' is not supported"
    if s.get("$ref"):
        return "OpenAPIV3Schema '$ref' is not supported"
    if s.get("patternProperties"):
        return "OpenAPIV3Schema 'patternProperties' is not supported"
    if s.get("dependencies"):
        return "OpenAPIV3Schema 'dependencies' is not supported"
    if "additionalItems" in s:
        return "OpenAPIV3Schema 'additionalItems' is not supported"
    if s.get("definitions"):
        return "OpenAPIV3Schema 'definitions' is not supported"
    return None


def validate_structural(path: str, s: Mapping[str, Any]) -> list[CRDProblem]:
    """``ValidateStructural(path, NewStructural(s))``, sorted by text as upstream."""
    errs: list[CRDProblem] = []
    _invariants(s, _ROOT, path, errs)
    _completeness_value(s, s, path, path, errs)
    errs.sort(key=lambda p: p.message)
    return errs


def _type(s: Mapping[str, Any] | None) -> str:
    return str(s.get("type", "")) if s else ""


def _invariants(s: Mapping[str, Any] | None, lvl: str, path: str,
                errs: list[CRDProblem]) -> None:
    if s is None:
        return
    items = items_schema(s)
    if items is None:
        if _type(s) == "array":
            errs.append(required(child(path, "items"), "must be specified"))
    else:
        _invariants(items, _ITEM, child(path, "items"), errs)
    props: Mapping[str, Any] = s.get("properties") or {}
    for k, v in props.items():
        _invariants(v, _FIELD, key(child(path, "properties"), k), errs)
    if "additionalProperties" in s:
        if lvl == _ROOT:
            errs.append(forbidden(child(path, "additionalProperties"),
                                  "must not be used at the root"))
        extra = s["additionalProperties"]
        if isinstance(extra, dict):
            _invariants(extra, _FIELD, child(path, "additionalProperties"), errs)
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        errs.append(invalid(child(path, "x-kubernetes-preserve-unknown-fields"), True,
                            "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        errs.append(invalid(child(path, "x-kubernetes-embedded-resource"), True,
                            "must be false if x-kubernetes-int-or-string is true"))
    _value_validation(s, _is_int_or_string_any_of(s), _is_int_or_string_all_of(s), path,
                      errs)
    check_metadata = lvl == _ROOT or embedded
    t = _type(s)
    if embedded and t != "object":
        what = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(required(child(path, "type"), what) if not t
                    else invalid(child(path, "type"), t, what))
    elif not t and not int_or_string and not preserve:
        errs.append(required(child(path, "type"), {
            _ROOT: "must not be empty at the root",
            _ITEM: "must not be empty for specified array items",
            _FIELD: "must not be empty for specified object fields"}[lvl]))
    if embedded and "additionalProperties" in s:
        errs.append(forbidden(child(path, "additionalProperties"),
                              "must not be used if x-kubernetes-embedded-resource is set"))
    if lvl == _ROOT and t and t != "object":
        errs.append(invalid(child(path, "type"), t, "must be object at the root"))
    for name in ("kind", "apiVersion"):
        if name in props and check_metadata and _type(props[name]) != "string":
            errs.append(invalid(child(key(child(path, "properties"), name), "type"),
                                _type(props[name]), "must be string"))
    if "metadata" in props:
        _metadata(props["metadata"], check_metadata, lvl,
                  key(child(path, "properties"), "metadata"), errs)
    if embedded and not preserve and not props:
        errs.append(required(child(path, "properties"),
                             "must not be empty if x-kubernetes-embedded-resource is true "
                             "without x-kubernetes-preserve-unknown-fields"))


#: What ``metadata`` at the root may carry (beyond ``properties`` with only ``name`` and
#: ``generateName``): ``validateStructuralMetadataInvariants`` clears the type and default.
_METADATA_ALLOWED = frozenset({"type", "default"})
_APPENDED = frozenset({"enum", "allOf", "anyOf", "oneOf"})


def _metadata(s: Mapping[str, Any], check_metadata: bool, lvl: str, path: str,
              errs: list[CRDProblem]) -> None:
    if check_metadata and _type(s) != "object":
        errs.append(invalid(child(path, "type"), _type(s), "must be object"))
    if lvl != _ROOT:
        return
    props = s.get("properties")
    # empty enum and junctor lists stay nil in the Go value (built by appending)
    rest = {k for k, v in s.items() if k not in _METADATA_ALLOWED and k != "properties"
            and not (k in _APPENDED and not v)}
    if props and not set(props) <= {"name", "generateName"}:
        rest.add("properties")
    if rest:
        errs.append(forbidden(path, "must not specify anything other than name and "
                                    "generateName, but metadata is implicitly specified"))


def _is_int_or_string_any_of(s: Mapping[str, Any]) -> bool:
    return s.get("anyOf") == [{"type": "integer"}, {"type": "string"}]


def _is_int_or_string_all_of(s: Mapping[str, Any]) -> bool:
    all_of = s.get("allOf") or []
    return bool(all_of) and all_of[0].get("anyOf") == [{"type": "integer"}, {"type": "string"}]


def _value_validation(v: Mapping[str, Any], skip_any_of: bool, skip_first_all_of_any_of: bool,
                      path: str, errs: list[CRDProblem]) -> None:
    if not skip_any_of:
        for i, clause in enumerate(v.get("anyOf") or ()):
            _nested(clause, False, f"{child(path, 'anyOf')}[{i}]", errs)
    for i, clause in enumerate(v.get("allOf") or ()):
        _nested(clause, skip_first_all_of_any_of and i == 0, f"{child(path, 'allOf')}[{i}]",
                errs)
    for i, clause in enumerate(v.get("oneOf") or ()):
        _nested(clause, False, f"{child(path, 'oneOf')}[{i}]", errs)
    if isinstance(v.get("not"), dict):
        _nested(v["not"], False, child(path, "not"), errs)
    pattern = v.get("pattern")
    if pattern:
        why = go_error(pattern)
        if why:
            errs.append(invalid(child(path, "pattern"), pattern,
                                f"must be a valid regular expression, but isn't: {why}"))


_NESTED_FORBIDDEN = (
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _nested(v: Mapping[str, Any], skip_any_of: bool, path: str,
            errs: list[CRDProblem]) -> None:
    _value_validation(v, skip_any_of, False, path, errs)
    items = items_schema(v)
    if items is not None:
        _nested(items, False, child(path, "items"), errs)
    props: Mapping[str, Any] = v.get("properties") or {}
    for k, sub in props.items():
        _nested(sub, False, key(child(path, "properties"), k), errs)
    if v.get("type"):
        errs.append(forbidden(child(path, "type"), "must be empty to be structural"))
    extra = v.get("additionalProperties")
    if isinstance(extra, dict) or extra is True:
        errs.append(forbidden(child(path, "additionalProperties"),
                              "must be undefined to be structural"))
    if v.get("default") is not None:
        errs.append(forbidden(child(path, "default"), "must be undefined to be structural"))
    for name in ("title", "description"):
        if v.get(name):
            errs.append(forbidden(child(path, name), "must be empty to be structural"))
    if v.get("nullable"):
        errs.append(forbidden(child(path, "nullable"), "must be false to be structural"))
    for name, why in _NESTED_FORBIDDEN:
        value = v.get(name)
        present = (value is True if name in ("x-kubernetes-preserve-unknown-fields",
                                              "x-kubernetes-embedded-resource",
                                              "x-kubernetes-int-or-string")
                   else bool(value) if name in ("x-kubernetes-list-map-keys",
                                                "x-kubernetes-validations")
                   else value is not None)
        if present:
            errs.append(forbidden(child(path, name), why))
    if "metadata" in props:
        errs.append(forbidden(key(child(path, "properties"), "metadata"),
                              "must not be specified in a nested context"))


def _completeness_value(v: Mapping[str, Any], s: Mapping[str, Any] | None, s_path: str,
                        v_path: str, errs: list[CRDProblem]) -> None:
    if s is None:
        errs.append(required(s_path, f"because it is defined in {v_path}"))
        return
    if isinstance(v.get("not"), dict):
        _completeness_nested(v["not"], s, s_path, child(v_path, "not"), errs)
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, clause in enumerate(v.get(junctor) or ()):
            _completeness_nested(clause, s, s_path, f"{child(v_path, junctor)}[{i}]", errs)


def _completeness_nested(v: Mapping[str, Any] | None, s: Mapping[str, Any] | None,
                         s_path: str, v_path: str, errs: list[CRDProblem]) -> None:
    if v is None:
        return
    if s is None:
        errs.append(required(s_path, f"because it is defined in {v_path}"))
        return
    _completeness_value(v, s, s_path, v_path, errs)
    items = items_schema(v)
    if items is not None:
        _completeness_nested(items, items_schema(s), child(s_path, "items"),
                             child(v_path, "items"), errs)
    s_props: Mapping[str, Any] = s.get("properties") or {}
    for k, sub in (v.get("properties") or {}).items():
        at_s = key(child(s_path, "properties"), k)
        at_v = key(child(v_path, "properties"), k)
        if k not in s_props:
            errs.append(required(at_s, f"because it is defined in {at_v}"))
        else:
            _completeness_nested(sub, s_props[k], at_s, at_v, errs)
