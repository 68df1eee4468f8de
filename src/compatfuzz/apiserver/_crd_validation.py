"""Refuse every CRD the API server refuses, with the server's words.

An independent check found that compatfuzz accepted most of the CRDs a real API server
refuses (a schema node without ``type``, ``properties`` together with
``additionalProperties``, a map list without keys, an invalid ``fieldPath``, ...): nothing
ran the server's CRD validation on the way in. :func:`validate_crd` is a port of what
``ValidateCustomResourceDefinition`` (k8s.io/apiextensions-apiserver v0.37.2
``pkg/apis/apiextensions/validation/validation.go``) checks when a
``apiextensions.k8s.io/v1`` CRD is created, after the server's own preparation:

* decoding into the v1 types (``_crd_decode``: unknown keywords dropped with a warning, a
  value of the wrong JSON type refused), the v1 defaults (``singular``, ``listKind``,
  ``conversion: {strategy: None}``, webhook service port 443) and the conversion to the
  internal type (``pkg/apis/apiextensions/v1/conversion.go``): when every version has the
  same schema, subresources, printer columns or selectable fields, they move to
  ``spec.validation`` (...), so the server reports them there;
* ``strategy.PrepareForCreate`` (``pkg/registry/customresourcedefinition/strategy.go``):
  the status is reset and ``status.storedVersions`` is the storage version;
* then ``metadata.name`` (``<plural>.<group>``, a DNS subdomain), the group, names, scope,
  versions (valid, unique, exactly one storage version), per-version against top-level
  fields, the subresources, printer columns, selectable fields, conversion (webhook
  URL/service), ``preserveUnknownFields``, the API-approval annotation of protected groups,
  and each schema (``_crd_schema``: structural, defaults, ``x-kubernetes-*``, CEL rules);
* the warnings ``WarningsOnCreate`` adds (an unrecognized ``format``; a ``set`` list of
  non-scalars).

The problems come in the server's order, except where the server walks a Go map (the
properties of a schema), whose order is random upstream: here they come in document order.
CEL cost limits are left to ``compatfuzz.strategies._cel_cost``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

from compatfuzz.apiserver._crd_decode import DecodeError, _fail, decode_schema, semantic_equal
from compatfuzz.apiserver._crd_problem import (
    CRDProblem,
    GoJSON,
    child,
    forbidden,
    index,
    invalid,
    required,
)
from compatfuzz.apiserver._crd_schema import validate_validation
from compatfuzz.apiserver._crd_spec import (
    _approval,
    _column_errors,
    _conversion_errors,
    _deprecation_warning,
    _enum,
    _selectable_errors,
    _subresource_errors,
    validate_names,
)
from compatfuzz.apiserver._crd_structural import new_structural_error
from compatfuzz.apiserver._dns import is_dns1035_label, is_dns1123_subdomain

__all__ = ["validate_crd"]

class _Warn:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> None:
        self.texts.append(text)


def _get(obj: Any, name: str, kind: str, path: str) -> Any:
    """Field ``name`` of a decoded struct, type-checked (``None`` when unset or null)."""
    if not isinstance(obj, dict):
        return None
    value = obj.get(name)
    if value is None:
        return None
    checks: dict[str, tuple[type | tuple[type, ...], str]] = {
        "s": (str, "string"), "b": (bool, "bool"), "m": (Mapping, "struct"),
        "l": (list, "slice")}
    want, go = checks[kind]
    if (kind != "b" and isinstance(value, bool)) or not isinstance(value, want):
        raise _fail(child(path, name), value, go)
    return value


def _strings(obj: Any, name: str, path: str) -> list[str]:
    values = _get(obj, name, "l", path) or []
    out = []
    for v in values:
        if v is not None and not isinstance(v, str):
            raise _fail(child(path, name), v, "string")
        out.append(v or "")
    return out


def _int(obj: Any, name: str, path: str, bits: int = 32) -> int | None:
    if not isinstance(obj, dict) or obj.get(name) is None:
        return None
    value = obj[name]
    if isinstance(value, bool) or not isinstance(value, int) or not (
            -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)):
        raise _fail(child(path, name), value, f"int{bits}")
    return value


class _Version:
    """One decoded ``spec.versions[i]`` in the internal shape."""

    def __init__(self, raw: Any, path: str, warn: _Warn) -> None:
        if raw is not None and not isinstance(raw, dict):
            raise _fail(path, raw, "v1.CustomResourceDefinitionVersion")
        raw = raw or {}
        self.name: str = _get(raw, "name", "s", path) or ""
        self.served = bool(_get(raw, "served", "b", path))
        self.storage = bool(_get(raw, "storage", "b", path))
        self.deprecated = bool(_get(raw, "deprecated", "b", path))
        self.deprecation_warning: str | None = _get(raw, "deprecationWarning", "s", path)
        schema = _get(raw, "schema", "m", path)
        self.schema: dict[str, Any] | None = None
        #: whether the schema gives a create warning (:func:`_warnings` walks it only then)
        self.notable = False
        if schema is not None:
            self.schema = {}
            node = decode_schema(schema.get("openAPIV3Schema"),
                                 child(path, "schema", "openAPIV3Schema"), warn,
                                 notice=self._notice)
            if node is not None:
                self.schema["openAPIV3Schema"] = node
        self.subresources = _subresources(_get(raw, "subresources", "m", path),
                                          child(path, "subresources"))
        self.columns = [_column(c, index(child(path, "additionalPrinterColumns"), i))
                        for i, c in enumerate(_get(raw, "additionalPrinterColumns", "l",
                                                   path) or ())]
        self.selectable = [_selectable(c, index(child(path, "selectableFields"), i))
                           for i, c in enumerate(_get(raw, "selectableFields", "l", path)
                                                 or ())]


    def _notice(self, node: Mapping[str, Any]) -> None:
        self.notable = self.notable or _warns(node)


def _subresources(raw: Any, path: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    out: dict[str, Any] = {}
    if _get(raw, "status", "m", path) is not None:
        out["status"] = True  # a non-nil pointer to an empty struct
    scale = _get(raw, "scale", "m", path)
    if scale is not None:
        at = child(path, "scale")
        out["scale"] = {"specReplicasPath": _get(scale, "specReplicasPath", "s", at) or "",
                        "statusReplicasPath": _get(scale, "statusReplicasPath", "s", at) or "",
                        "labelSelectorPath": _get(scale, "labelSelectorPath", "s", at)}
    return out


def _column(raw: Any, path: str) -> dict[str, Any]:
    return {"name": _get(raw, "name", "s", path) or "", "type": _get(raw, "type", "s", path)
            or "", "format": _get(raw, "format", "s", path) or "",
            "description": _get(raw, "description", "s", path) or "",
            "priority": _int(raw, "priority", path) or 0,
            "jsonPath": _get(raw, "jsonPath", "s", path) or ""}


def _selectable(raw: Any, path: str) -> dict[str, Any]:
    return {"jsonPath": _get(raw, "jsonPath", "s", path) or ""}


def validate_crd(document: Mapping[str, Any]) -> list[CRDProblem]:
    """Return what the API server says when ``document`` (a CRD) is created: its errors,
    then its warnings (``warning=True``). An empty list, or warnings only, means accepted.

    ``document`` is an ``apiextensions.k8s.io/v1`` ``CustomResourceDefinition`` as read
    from YAML or JSON. Each :class:`CRDProblem` carries the server's field path, error type
    and message; :func:`field_pointer` maps the field path to a JSON pointer into
    ``document`` (for a file name and line). A body the server cannot decode (``type: 5``)
    is one problem of kind ``Decode error``.

    >>> crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    ...        "metadata": {"name": "widgets.example.com"},
    ...        "spec": {"group": "example.com", "scope": "Namespaced",
    ...                 "names": {"plural": "widgets", "kind": "Widget"},
    ...                 "versions": [{"name": "v1", "served": True, "storage": True,
    ...                               "schema": {"openAPIV3Schema": {"type": "object",
    ...                                   "properties": {"spec": {}}}}}]}}
    >>> problem, = validate_crd(crd)
    >>> problem.field
    'spec.validation.openAPIV3Schema.properties[spec].type'
    >>> problem.message.split(": ", 1)[1]
    'Required value: must not be empty for specified object fields'

    Raises:
        InvalidArgument: ``document`` is not a mapping.

    .. versionadded:: 0.1.0
    """
    if isinstance(document, Mapping) and not isinstance(document, dict):
        import json  # plain dicts and lists below: the walks test for dict, not Mapping

        document = json.loads(json.dumps(document, default=dict))
    if not isinstance(document, dict):
        from compatfuzz.errors import InvalidArgument

        raise InvalidArgument(f"Expected a CRD mapping but got document={document!r} "
                              f"(type={type(document).__name__}); load the YAML first")
    warn = _Warn()
    try:
        errs = _validate(document, warn)
    except DecodeError as exc:
        return [exc.problem]
    return errs + [CRDProblem("", "Warning", text, True) for text in warn.texts]


_ANY = object()  # a value the strict decoder does not look into
_NAMES = dict.fromkeys(("plural", "singular", "shortNames", "kind", "listKind",
                        "categories"), _ANY)
_META = dict.fromkeys((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields"), _ANY)
_VERSION = {
    **dict.fromkeys(("name", "served", "storage", "deprecated", "deprecationWarning"), _ANY),
    "schema": {"openAPIV3Schema": _ANY},  # the schema warns as it is decoded
    "subresources": {"status": {}, "scale": dict.fromkeys(
        ("specReplicasPath", "statusReplicasPath", "labelSelectorPath"), _ANY)},
    "additionalPrinterColumns": [dict.fromkeys(
        ("name", "type", "format", "description", "priority", "jsonPath"), _ANY)],
    "selectableFields": [{"jsonPath": _ANY}],
}
#: The fields of a v1 CRD (``pkg/apis/apiextensions/v1/types.go``), for the strict
#: decoder's ``unknown field`` warnings.
_CRD_FIELDS = {
    "apiVersion": _ANY, "kind": _ANY, "metadata": _META,
    "spec": {"group": _ANY, "names": _NAMES, "scope": _ANY, "versions": [_VERSION],
             "preserveUnknownFields": _ANY,
             "conversion": {"strategy": _ANY, "webhook": {
                 "conversionReviewVersions": _ANY,
                 "clientConfig": {"url": _ANY, "caBundle": _ANY, "service": dict.fromkeys(
                     ("namespace", "name", "path", "port"), _ANY)}}}},
    "status": {"conditions": _ANY, "acceptedNames": _NAMES, "storedVersions": _ANY},
}


def _unknown_fields(value: Any, fields: Any, path: str, warn: _Warn) -> None:
    """The strict decoder's ``unknown field "..."`` warnings outside the schemas."""
    if fields is _ANY:
        return
    if isinstance(fields, list):
        if isinstance(value, list):
            for i, item in enumerate(value):
                _unknown_fields(item, fields[0], f"{path}[{i}]", warn)
        return
    if not isinstance(value, dict):
        return
    for k, v in value.items():
        at = child(path, k)
        if k not in fields:
            warn(f'unknown field "{at}"')
        else:
            _unknown_fields(v, fields[k], at, warn)


def _validate(doc: Mapping[str, Any], warn: _Warn) -> list[CRDProblem]:
    _unknown_fields(doc, _CRD_FIELDS, "", warn)
    meta = _get(doc, "metadata", "m", "metadata") or {}
    spec_raw = _get(doc, "spec", "m", "spec") or {}
    group: str = _get(spec_raw, "group", "s", "spec") or ""
    names_raw = _get(spec_raw, "names", "m", "spec") or {}
    names = _names(names_raw, "spec.names")
    names_kind = names["kind"]
    if not names["singular"]:
        names["singular"] = names_kind.lower()
    if not names["listKind"] and names_kind:
        names["listKind"] = names_kind + "List"
    scope: str = _get(spec_raw, "scope", "s", "spec") or ""
    raw_versions = _get(spec_raw, "versions", "l", "spec") or []
    versions = [_Version(v, index("spec.versions", i), warn)
                for i, v in enumerate(raw_versions)]
    conversion = _conversion(_get(spec_raw, "conversion", "m", "spec"))
    preserve = bool(_get(spec_raw, "preserveUnknownFields", "b", "spec"))
    hoisted = _hoist(versions)
    annotations = _get(meta, "annotations", "m", "metadata") or {}

    errs: list[CRDProblem] = []
    errs.extend(_object_meta(meta, f"{names['plural']}.{group}"))
    errs.extend(_spec(group, names, scope, versions, hoisted=hoisted, conversion=conversion,
                      preserve=preserve))
    stored = [v.name for v in versions if v.storage][:1]
    errs.extend(_stored_versions(stored, versions))
    errs.extend(_approval(group, annotations))
    if preserve:
        errs.append(invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                            "x-kubernetes-preserve-unknown-fields to true in "
                            "spec.versions[*].schema instead"))
    _warnings(versions, hoisted, warn)
    return errs


def _names(raw: Any, path: str) -> dict[str, Any]:
    return {"plural": _get(raw, "plural", "s", path) or "",
            "singular": _get(raw, "singular", "s", path) or "",
            "shortNames": _strings(raw, "shortNames", path),
            "kind": _get(raw, "kind", "s", path) or "",
            "listKind": _get(raw, "listKind", "s", path) or "",
            "categories": _strings(raw, "categories", path)}


def _conversion(raw: Any) -> dict[str, Any]:
    """The internal ``CustomResourceConversion`` (``Strategy: None`` when absent)."""
    if raw is None:
        return {"strategy": "None", "clientConfig": None, "reviewVersions": []}
    path = "spec.conversion"
    out: dict[str, Any] = {"strategy": _get(raw, "strategy", "s", path) or "",
                           "clientConfig": None, "reviewVersions": []}
    webhook = _get(raw, "webhook", "m", path)
    if webhook is not None:
        at = child(path, "webhook")
        out["reviewVersions"] = _strings(webhook, "conversionReviewVersions", at)
        cc = _get(webhook, "clientConfig", "m", at)
        if cc is not None:
            at = child(at, "clientConfig")
            service = _get(cc, "service", "m", at)
            bundle = _get(cc, "caBundle", "s", at)
            if bundle:
                try:
                    base64.b64decode(bundle, validate=True)
                except (binascii.Error, ValueError):
                    raise DecodeError(CRDProblem(
                        child(at, "caBundle"), "Decode error",
                        "illegal base64 data in caBundle")) from None
            out["clientConfig"] = {
                "url": _get(cc, "url", "s", at),
                "service": None if service is None else {
                    "namespace": _get(service, "namespace", "s", at) or "",
                    "name": _get(service, "name", "s", at) or "",
                    "path": _get(service, "path", "s", at),
                    "port": 443 if service.get("port") is None else _int(service, "port",
                                                                           at)},
                "caBundle": bundle or ""}
    return out


def _hoist(versions: list[_Version]) -> dict[str, Any]:
    """``Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...``: per-version fields
    identical in every version move to the spec (and leave the versions)."""
    out: dict[str, Any] = {"validation": None, "subresources": None, "columns": [],
                           "selectable": [], "notable": False}
    if not versions:
        return out
    out["notable"] = versions[0].notable
    for attr, name in (("schema", "validation"), ("subresources", "subresources"),
                       ("columns", "columns"), ("selectable", "selectable")):
        first = getattr(versions[0], attr)
        if all(semantic_equal(getattr(v, attr), first) for v in versions[1:]):
            out[name] = getattr(versions[0], attr)
            for v in versions:
                setattr(v, attr, None if attr in ("schema", "subresources") else [])
    return out


def _object_meta(meta: Mapping[str, Any], wanted: str) -> list[CRDProblem]:
    """``ValidateObjectMetaDeclaratively`` on create, with the CRD's name function."""
    errs: list[CRDProblem] = []
    name = _get(meta, "name", "s", "metadata") or ""
    generate = _get(meta, "generateName", "s", "metadata") or ""

    def name_errors(value: str, prefix: bool) -> list[str]:
        checked = value[:-1] if prefix and value.endswith("-") else value
        out = is_dns1123_subdomain(checked)
        if value != wanted:
            out.append('must be spec.names.plural+"."+spec.group')
        return out

    if generate:
        for msg in name_errors(generate, True):
            errs.append(invalid("metadata.generateName", generate, msg))
    if not name:
        errs.append(required("metadata.name", "name or generateName is required"))
    else:
        for msg in name_errors(name, False):
            errs.append(invalid("metadata.name", name, msg))
    namespace = _get(meta, "namespace", "s", "metadata")
    if namespace:
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    return errs


def _spec(group: str, names: dict[str, Any], scope: str, versions: list[_Version], *,
          hoisted: dict[str, Any], conversion: dict[str, Any], preserve: bool
          ) -> list[CRDProblem]:
    """``validateCustomResourceDefinitionSpec`` (create options)."""
    errs: list[CRDProblem] = []
    if not group:
        errs.append(required("spec.group"))
    elif dns := is_dns1123_subdomain(group):
        errs.append(invalid("spec.group", group, ",".join(dns)))
    elif len(group.split(".")) < 2:
        errs.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    errs.extend(_enum("spec.scope", scope, ("Cluster", "Namespaced")))
    validation = hoisted["validation"]
    if validation is None or validation.get("openAPIV3Schema") is None:
        for i, v in enumerate(versions):
            if v.schema is None or v.schema.get("openAPIV3Schema") is None:
                errs.append(required(f"spec.versions[{i}].schema.openAPIV3Schema"))
    if preserve and _has_defaults(validation, versions):
        errs.append(invalid("spec.preserveUnknownFields", True,
                            "must be false in order to use defaults in the schema"))
    storage = 0
    seen: set[str] = set()
    unique = True
    any_status = hoisted["subresources"] is not None and "status" in hoisted["subresources"]
    for v in versions:
        any_status = any_status or (v.subresources is not None and "status" in v.subresources)
    for i, v in enumerate(versions):
        at = index("spec.versions", i)
        storage += v.storage
        if v.name in seen:
            unique = False
        seen.add(v.name)
        if dns := is_dns1035_label(v.name):
            errs.append(invalid(child(at, "name"), v.name, ",".join(dns)))
        subresources = hoisted["subresources"] if hoisted["subresources"] is not None or not any(
            w.subresources is not None for w in versions) else v.subresources
        errs.extend(_version(v, at, subresources is not None and "status" in subresources))
    if not unique:
        errs.append(invalid("spec.versions", _versions_json(versions),
                            "must contain unique version names"))
    if storage != 1:
        errs.append(invalid("spec.versions", _versions_json(versions),
                            "must have exactly one version marked as storage version"))
    for name in ("plural", "singular", "kind", "listKind"):
        if not names[name]:
            errs.append(required(f"spec.names.{name}"))
    errs.extend(validate_names(names, "spec.names"))
    errs.extend(validate_validation(validation, any_status, "spec.validation"))
    errs.extend(_subresource_errors(hoisted["subresources"], "spec.subresources"))
    for i, col in enumerate(hoisted["columns"] or ()):
        errs.extend(_column_errors(col, index("spec.additionalPrinterColumns", i)))
    if hoisted["selectable"]:
        if validation is None:
            errs.append(invalid("spec.selectableFields", "",
                                "may only be set when validations.schema is included"))
        else:
            schema = validation.get("openAPIV3Schema")
            why = new_structural_error(schema)
            if why is not None:
                errs.append(invalid("spec.schema.openAPIV3Schema", "", why))
            errs.extend(_selectable_errors(hoisted["selectable"], schema if why is None
                                           else None, "spec.selectableFields"))
    strategy = conversion["strategy"]
    if strategy != "None" and preserve:
        errs.append(invalid("spec.conversion.strategy", strategy,
                            "must be None if spec.preserveUnknownFields is true"))
    errs.extend(_conversion_errors(conversion))
    return errs


def _versions_json(versions: list[_Version]) -> GoJSON:
    """``json.Marshal`` of the internal ``spec.Versions`` (Go field names, struct order),
    the bad value the server prints for the version-list errors."""
    from compatfuzz.apiserver._crd_problem import go_json
    from compatfuzz.apiserver._crd_schema import go_schema_json

    def sub(s: Mapping[str, Any] | None) -> str:
        if s is None:
            return "null"
        scale = s.get("scale")
        return ('{"Status":' + ("{}" if s.get("status") else "null") + ',"Scale":'
                + ("null" if scale is None else
                   f'{{"SpecReplicasPath":{go_json(scale["specReplicasPath"])},'
                   f'"StatusReplicasPath":{go_json(scale["statusReplicasPath"])},'
                   f'"LabelSelectorPath":{go_json(scale["labelSelectorPath"])}}}') + "}")

    def columns(cols: list[dict[str, Any]]) -> str:
        if not cols:
            return "null"
        return "[" + ",".join(
            f'{{"Name":{go_json(c["name"])},"Type":{go_json(c["type"])},'
            f'"Format":{go_json(c["format"])},"Description":{go_json(c["description"])},'
            f'"Priority":{c["priority"]},"JSONPath":{go_json(c["jsonPath"])}}}'
            for c in cols) + "]"

    def selectable(fields: list[dict[str, Any]]) -> str:
        if not fields:
            return "null"
        return "[" + ",".join(f'{{"JSONPath":{go_json(f["jsonPath"])}}}' for f in fields) + "]"

    out = []
    for v in versions:
        schema = "null" if v.schema is None else (
            '{"OpenAPIV3Schema":' + go_schema_json(v.schema.get("openAPIV3Schema")) + "}")
        out.append(f'{{"Name":{go_json(v.name)},"Served":{go_json(v.served)},'
                   f'"Storage":{go_json(v.storage)},"Deprecated":{go_json(v.deprecated)},'
                   f'"DeprecationWarning":{go_json(v.deprecation_warning)},'
                   f'"Schema":{schema},"Subresources":{sub(v.subresources)},'
                   f'"AdditionalPrinterColumns":{columns(v.columns)},'
                   f'"SelectableFields":{selectable(v.selectable)}}}')
    return GoJSON("[" + ",".join(out) + "]")


def _schema_has(node: Any, pred: Callable[[Mapping[str, Any]], bool]) -> bool:
    """``SchemaHas``: ``pred`` holds somewhere in the schema (visited depth first, in
    ``SchemaHas``'s order, with a stack: the biggest CRDs have thousands of nodes)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if not isinstance(n, dict):
            continue
        if pred(n):
            return True
        children: list[Any] = []
        items = n.get("items")
        if isinstance(items, dict):
            children.append(items)
        elif isinstance(items, list):
            children.extend(items)
        for key in ("allOf", "anyOf", "oneOf"):
            children.extend(n.get(key) or ())
        children.append(n.get("not"))
        for key in ("properties", "patternProperties", "definitions"):
            children.extend((n.get(key) or {}).values())
        children.append(n.get("additionalProperties"))
        children.append(n.get("additionalItems"))
        children.extend((n.get("dependencies") or {}).values())
        stack.extend(reversed(children))
    return False


def _has_defaults(validation: Mapping[str, Any] | None, versions: list[_Version]) -> bool:
    schemas = [validation] + [v.schema for v in versions]
    return any(s is not None and _schema_has(s.get("openAPIV3Schema"),
                                             lambda n: n.get("default") is not None)
               for s in schemas)


def _version(v: _Version, path: str, status_enabled: bool) -> list[CRDProblem]:
    """``validateCustomResourceDefinitionVersion``."""
    errs: list[CRDProblem] = []
    for msg in _deprecation_warning(v.deprecated, v.deprecation_warning):
        errs.append(invalid(child(path, "deprecationWarning"), v.deprecation_warning, msg))
    errs.extend(validate_validation(v.schema, status_enabled, child(path, "schema")))
    errs.extend(_subresource_errors(v.subresources, child(path, "subresources")))
    for i, col in enumerate(v.columns or ()):
        errs.extend(_column_errors(col, index(child(path, "additionalPrinterColumns"), i)))
    if v.selectable:
        schema = v.schema.get("openAPIV3Schema") if v.schema else None
        if schema is None:
            errs.append(invalid(child(path, "selectableFields"), "", "may only be set when "
                                "`version.schema.openAPIV3Schema` is not included"))
        else:
            why = new_structural_error(schema)
            if why is not None:
                errs.append(invalid(child(path, "schema.openAPIV3Schema"), "", why))
            errs.extend(_selectable_errors(v.selectable, schema if why is None else None,
                                           child(path, "selectableFields")))
    return errs


def _stored_versions(stored: list[str], versions: list[_Version]) -> list[CRDProblem]:
    """``ValidateCustomResourceDefinitionStoredVersions`` after ``PrepareForCreate``."""
    if not stored:
        return [invalid("status.storedVersions", [],
                        "must have at least one stored version")]
    return []


#: The string formats CRD schemas support at 1.37, with go-openapi's normalisation (no
#: ``-``): k8s.io/apiextensions-apiserver ``pkg/apiserver/validation/formats.go``
#: (``supportedVersionedFormats``).
_STRING_FORMATS = frozenset(f.replace("-", "") for f in (
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid",
    "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor",
    "rgbcolor", "byte", "password", "date", "duration", "datetime", "k8s-short-name",
    "k8s-long-name"))


def _unrecognized_format(node: Mapping[str, Any]) -> str | None:
    """``GetUnrecognizedFormats`` for one node."""
    fmt = str(node.get("format") or "")
    if not fmt:
        return None
    kind = node.get("type", "")
    if kind in ("", "string"):
        return None if fmt.replace("-", "") in _STRING_FORMATS else fmt
    if kind == "integer":
        return None if fmt in ("int32", "int64") else fmt
    if kind == "number":
        return None if fmt in ("float", "double") else fmt
    return fmt


def _set_warning(node: Mapping[str, Any]) -> str | None:
    """The warning for a ``set`` list of objects or arrays."""
    items = node.get("items")
    if node.get("x-kubernetes-list-type") == "set" and isinstance(items, dict) and (
            items.get("type") in ("object", "array")):
        return (f'x-kubernetes-list-type: set for items of type "{items["type"]}" is '
                "not supported by server-side apply or CEL validation rules")
    return None


def _warns(node: Mapping[str, Any]) -> bool:
    """Whether one node gives a create warning."""
    return _unrecognized_format(node) is not None or _set_warning(node) is not None


def _warnings(versions: list[_Version], hoisted: Mapping[str, Any], warn: _Warn) -> None:
    """``WarningsOnCreate`` (``pkg/registry/customresourcedefinition/strategy.go``): each
    unrecognized ``format`` (every time it occurs), then the ``set`` lists of objects or
    arrays (once per item type, sorted)."""
    schemas = [(hoisted["validation"], hoisted["notable"])] + [
        (v.schema, v.notable) for v in versions]
    formats: list[str] = []
    sets: set[str] = set()

    def visit(node: Mapping[str, Any]) -> bool:
        fmt = _unrecognized_format(node)
        if fmt is not None:
            formats.append(fmt)
        text = _set_warning(node)
        if text is not None:
            sets.add(text)
        return False

    for s, notable in schemas:
        root = s.get("openAPIV3Schema") if s else None
        if root is not None and notable:  # the decoder saw a node that warns
            _schema_has(root, visit)
    for f in formats:
        warn(f'unrecognized format "{f}"')
    for text in sorted(sets):
        warn(text)
