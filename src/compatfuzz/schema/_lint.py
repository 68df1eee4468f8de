"""Check a CRD schema against Kubernetes' *structural schema* rules (KEP-2335).

apiextensions.k8s.io/v1 rejects non-structural schemas, and pruning, defaulting and
server-side apply all rely on the structure. Linting before fuzzing turns "the apiserver
refused my CRD" into a finding with a field path, and tells the strategy compiler that the
junctor branches it sees carry value validations only. Rules, after
``k8s.io/apiextensions-apiserver/pkg/apiserver/schema/validation.go``:

* every node of the structural skeleton (``properties``, ``items``, ``additionalProperties``)
  has one non-empty ``type``, except under ``x-kubernetes-int-or-string`` or
  ``x-kubernetes-preserve-unknown-fields``; the root is an object;
* junctor branches (``allOf``/``anyOf``/``oneOf``/``not``) carry no ``type``,
  ``additionalProperties``, ``default``, ``title``/``description``, ``nullable`` or
  ``x-kubernetes-*`` and only mention properties/items the skeleton declares
  (int-or-string's ``anyOf: [{type: integer}, {type: string}]`` is the one exception);
* no ``$ref``, definitions, ``patternProperties``, ``dependencies``, tuple ``items``,
  ``uniqueItems: true``, ``additionalProperties: false``, nor ``properties`` together with
  ``additionalProperties``;
* ``metadata`` at the root is an object that restricts only ``name`` and ``generateName``;
  ``apiVersion``/``kind`` are strings; embedded resources are objects;
* ``x-kubernetes-list-type`` / ``-map-type`` / ``-list-map-keys`` are used consistently.

Normalised schemas spell ``nullable: true`` as ``type: [T, "null"]`` or as
``anyOf: [<node>, {type: null}]``; both are read back as nullable here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compatfuzz.schema._model import Schema

__all__ = ["LintFinding", "lint_structural"]

_SCALARS = frozenset({"string", "integer", "number", "boolean"})
_TYPES = _SCALARS | {"object", "array"}
_FORBIDDEN = {
    "$ref": "ref", "$defs": "definitions", "definitions": "definitions",
    "patternProperties": "pattern-properties", "dependencies": "dependencies",
    "dependentSchemas": "dependencies", "dependentRequired": "dependencies",
    "prefixItems": "items-tuple", "additionalItems": "items-tuple",
}
_UNSUPPORTED = frozenset({
    "const", "contains", "minContains", "maxContains", "propertyNames", "if", "then", "else",
    "unevaluatedItems", "unevaluatedProperties", "$anchor", "$dynamicRef", "$dynamicAnchor",
    "contentSchema", "contentEncoding", "contentMediaType",
})
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_JUNCTOR_FORBIDDEN = {
    "type": "junctor-type", "additionalProperties": "junctor-additional-properties",
    "default": "junctor-default", "title": "junctor-annotation",
    "description": "junctor-annotation", "nullable": "junctor-nullable",
}
_NULL = {"type": "null"}


@dataclass(frozen=True)
class LintFinding:
    """One structural-schema violation.

    ``path`` is a Kubernetes-style field path (``spec.ports[*].port``; ``.*`` for a map
    value, ``<root>`` for the root), ``rule`` a stable id such as ``type-required`` and
    ``message`` says what to change.
    """

    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message} [{self.rule}]"


def _join(path: str, part: str) -> str:
    if part.startswith("["):
        return path + part
    return f"{path}.{part}" if path else part


def _show(path: str) -> str:
    return path or "<root>"


def _unwrap(node: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """Undo normalize()'s nullable encodings: (node without them, nullable)."""
    out = dict(node)
    nullable = out.pop("nullable", False) is True
    any_of = out.get("anyOf")
    if (isinstance(any_of, list) and len(any_of) == 2 and any_of[1] == _NULL
            and isinstance(any_of[0], Mapping)):
        del out["anyOf"]
        inner = dict(any_of[0])
        for key, value in inner.items():
            out.setdefault(key, value)
        nullable = True
    kind = out.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [t for t in kind if t != "null"]
        out["type"] = rest[0] if len(rest) == 1 else rest
        nullable = True
    return out, nullable


def lint_structural(schema: Schema | Mapping[str, Any]) -> list[LintFinding]:
    """Return every way ``schema`` breaks the Kubernetes structural-schema rules.

    ``schema`` is a loaded :class:`Schema` (e.g. a CRD version's) or a raw
    ``openAPIV3Schema`` mapping, linted as written (so that, e.g., ``nullable`` inside a
    junctor is still visible; normalising would have folded it away). An empty list means the
    schema is structural. Findings come in document order.

    >>> lint_structural({"type": "object", "properties": {"a": {}}})
    [LintFinding(path='a', rule='type-required', message=...)]   # doctest: +SKIP

    .. versionadded:: 0.1
    """
    given = schema.root if isinstance(schema, Schema) else schema
    root = {k: v for k, v in given.items() if k != "$schema"}
    linter = _Linter([])
    linter.structural(root, "", level="root")
    return linter.findings


@dataclass
class _Linter:
    findings: list[LintFinding]

    def add(self, path: str, rule: str, message: str) -> None:
        self.findings.append(LintFinding(_show(path), rule, message))

    def keywords(self, node: Mapping[str, Any], path: str) -> None:
        for key, rule in _FORBIDDEN.items():
            if key in node:
                self.add(path, rule, f"{key!r} is not allowed in a structural schema; "
                         "inline the schema it stands for")
        for key in node:
            if key in _UNSUPPORTED:
                self.add(path, "unsupported-keyword",
                         f"{key!r} is not part of Kubernetes' OpenAPI v3 schema; remove it "
                         "or express it as an x-kubernetes-validations CEL rule")
        if isinstance(node.get("items"), list):
            self.add(path, "items-tuple", "items must be one schema, not a list")
        if node.get("uniqueItems") is True:
            self.add(path, "unique-items", "uniqueItems: true is forbidden; use "
                     "x-kubernetes-list-type: set (or map) instead")

    def structural(self, raw: Any, path: str, *, level: str) -> None:
        """Check a node of the structural skeleton. ``level`` is root, embedded or field."""
        if not isinstance(raw, Mapping):
            self.add(path, "schema-boolean", "a boolean schema is not structural; "
                     "write {type: ..., x-kubernetes-preserve-unknown-fields: true}")
            return
        node, nullable = _unwrap(raw)
        self.keywords(node, path)
        kind = node.get("type")
        int_or_string = node.get("x-kubernetes-int-or-string") is True
        preserve = node.get("x-kubernetes-preserve-unknown-fields")
        if preserve is not None and preserve is not True:
            self.add(path, "preserve-unknown-fields-true",
                     "x-kubernetes-preserve-unknown-fields must be true or absent")
        if isinstance(kind, list):
            self.add(path, "type-single", f"type must be one type, not {kind!r}; use "
                     "nullable: true for null and x-kubernetes-int-or-string for int|string")
            kind = None
        elif kind is not None and kind not in _TYPES:
            self.add(path, "type-invalid", f"type {kind!r} is not one of "
                     f"{', '.join(sorted(_TYPES))}")
        if int_or_string and kind is not None:
            self.add(path, "int-or-string-type", "x-kubernetes-int-or-string must not be "
                     "combined with type; drop the type")
        elif kind is None and not int_or_string and preserve is not True:
            self.add(path, "type-required", "type must not be empty; set it (e.g. "
                     "type: object), or mark the node x-kubernetes-int-or-string or "
                     "x-kubernetes-preserve-unknown-fields")
        if level == "root" and kind not in (None, "object"):
            self.add(path, "root-object", f"the root must be type: object, not {kind!r}")
        if level == "root" and nullable:
            self.add(path, "root-nullable", "the root must not be nullable")
        self.extensions(node, path, kind)

        props = node.get("properties")
        additional = node.get("additionalProperties")
        if additional is False:
            self.add(path, "additional-properties-false", "additionalProperties: false is "
                     "forbidden; unknown fields are pruned anyway (omit it)")
        if isinstance(props, Mapping) and additional is not None:
            self.add(path, "properties-and-additional-properties",
                     "properties and additionalProperties are mutually exclusive")
        if kind is not None and kind != "object" and (props or additional is not None):
            self.add(path, "properties-need-object",
                     f"properties/additionalProperties need type: object, not {kind!r}")
        if kind is not None and kind != "array" and "items" in node:
            self.add(path, "items-need-array", f"items needs type: array, not {kind!r}")
        if kind == "array" and "items" not in node and preserve is not True:
            self.add(path, "items-required", "type: array needs items")
        if level in ("root", "embedded"):
            self.resource_fields(node, path, root=level == "root")
        if isinstance(props, Mapping):
            for name, sub in props.items():
                if level == "root" and name == "metadata":
                    continue  # checked by resource_fields
                self.structural(sub, _join(path, str(name)), level=self.child_level(sub))
        if isinstance(additional, Mapping):
            self.structural(additional, _join(path, "*"), level=self.child_level(additional))
        items = node.get("items")
        if isinstance(items, Mapping):
            self.structural(items, _join(path, "[*]"), level=self.child_level(items))
        self.junctors(node, path, int_or_string)

    @staticmethod
    def child_level(sub: Any) -> str:
        if isinstance(sub, Mapping) and sub.get("x-kubernetes-embedded-resource") is True:
            return "embedded"
        return "field"

    def resource_fields(self, node: Mapping[str, Any], path: str, *, root: bool) -> None:
        props = node.get("properties")
        if not isinstance(props, Mapping):
            return
        for field in ("apiVersion", "kind"):
            sub = props.get(field)
            if isinstance(sub, Mapping) and _unwrap(sub)[0].get("type") != "string":
                self.add(_join(path, field), "apiversion-kind-string",
                         f"{field} must be type: string")
        meta = props.get("metadata")
        if meta is None:
            return
        mpath = _join(path, "metadata")
        if not isinstance(meta, Mapping) or _unwrap(meta)[0].get("type") != "object":
            self.add(mpath, "metadata-object", "metadata must be type: object")
            return
        if not root:
            return
        allowed = {"type", "properties", "description"}
        extra = sorted(k for k in _unwrap(meta)[0] if k not in allowed)
        if extra:
            self.add(mpath, "metadata-restricted", "at the root, metadata may only restrict "
                     f"name and generateName, but sets {', '.join(extra)}")
        mprops = meta.get("properties")
        if isinstance(mprops, Mapping):
            for name, sub in mprops.items():
                if name not in ("name", "generateName"):
                    self.add(_join(mpath, str(name)), "metadata-restricted",
                             "at the root, metadata may only restrict name and generateName")
                    continue
                if not isinstance(sub, Mapping) or _unwrap(sub)[0].get("type") != "string":
                    self.add(_join(mpath, str(name)), "metadata-restricted",
                             f"metadata.{name} must be type: string")

    def extensions(self, node: Mapping[str, Any], path: str, kind: Any) -> None:
        if node.get("x-kubernetes-embedded-resource") is True:
            if kind != "object":
                self.add(path, "embedded-resource-object",
                         "x-kubernetes-embedded-resource needs type: object")
            if "properties" not in node and node.get(
                    "x-kubernetes-preserve-unknown-fields") is not True:
                self.add(path, "embedded-resource-fields",
                         "x-kubernetes-embedded-resource needs properties or "
                         "x-kubernetes-preserve-unknown-fields: true")
        map_type = node.get("x-kubernetes-map-type")
        if map_type is not None:
            if map_type not in ("granular", "atomic"):
                self.add(path, "map-type-value", f"x-kubernetes-map-type {map_type!r} "
                         "must be granular or atomic")
            if kind != "object":
                self.add(path, "map-type-object", "x-kubernetes-map-type needs type: object")
        list_type = node.get("x-kubernetes-list-type")
        keys = node.get("x-kubernetes-list-map-keys")
        if list_type is not None:
            if list_type not in ("atomic", "set", "map"):
                self.add(path, "list-type-value", f"x-kubernetes-list-type {list_type!r} "
                         "must be atomic, set or map")
            if kind != "array":
                self.add(path, "list-type-array", "x-kubernetes-list-type needs type: array")
        if keys is not None and list_type != "map":
            self.add(path, "list-map-keys-without-map",
                     "x-kubernetes-list-map-keys needs x-kubernetes-list-type: map")
        items = node.get("items")
        item, _ = _unwrap(items) if isinstance(items, Mapping) else ({}, False)
        if list_type == "set" and item:
            item_type = item.get("type")
            atomic = item.get("x-kubernetes-map-type") == "atomic" or item.get(
                "x-kubernetes-list-type") == "atomic"
            if item_type not in _SCALARS and not atomic:
                self.add(path, "list-set-items", "x-kubernetes-list-type: set needs scalar "
                         "items (or atomic maps/lists)")
        if list_type == "map":
            if not isinstance(keys, list) or not keys:
                self.add(path, "list-map-keys-required", "x-kubernetes-list-type: map needs "
                         "a non-empty x-kubernetes-list-map-keys")
                keys = []
            if item.get("type") != "object":
                self.add(path, "list-map-items-object",
                         "x-kubernetes-list-type: map needs items of type: object")
            props = item.get("properties")
            props = props if isinstance(props, Mapping) else {}
            required = item.get("required")
            required = required if isinstance(required, list) else []
            for key in keys:
                prop = props.get(key)
                if not isinstance(prop, Mapping):
                    self.add(path, "list-map-key-missing", f"list-map-key {key!r} is not a "
                             "property of the items")
                    continue
                prop_node, _ = _unwrap(prop)
                if prop_node.get("type") not in _SCALARS:
                    self.add(_join(path, f"[*].{key}"), "list-map-key-scalar",
                             f"list-map-key {key!r} must be a scalar (string, integer, "
                             "number or boolean)")
                if key not in required and "default" not in prop_node:
                    self.add(_join(path, f"[*].{key}"), "list-map-key-required",
                             f"list-map-key {key!r} must be required or have a default")

    def junctors(self, node: Mapping[str, Any], path: str, int_or_string: bool) -> None:
        for junctor in _JUNCTORS:
            branches = node.get(junctor)
            if not isinstance(branches, list):
                continue
            for i, branch in enumerate(branches):
                bpath = _join(path, f"{junctor}[{i}]")
                if int_or_string and _is_int_or_string_pattern(junctor, branch):
                    continue
                self.value_validation(branch, bpath, node, int_or_string)
        if "not" in node:
            self.value_validation(node["not"], _join(path, "not"), node, int_or_string)

    def value_validation(self, raw: Any, path: str, skeleton: Mapping[str, Any],
                         int_or_string: bool) -> None:
        """A junctor branch: only value validations on fields the skeleton declares."""
        if not isinstance(raw, Mapping):
            self.add(path, "schema-boolean", "a boolean schema is not structural")
            return
        self.keywords(raw, path)
        for key, rule in _JUNCTOR_FORBIDDEN.items():
            if key in raw:
                self.add(path, rule, f"{key!r} must not be set inside allOf/anyOf/oneOf/not; "
                         "move it to the node that holds the junctor")
        for key in raw:
            if isinstance(key, str) and key.startswith("x-kubernetes-"):
                self.add(path, "junctor-extension", f"{key!r} must not be set inside "
                         "allOf/anyOf/oneOf/not; move it to the node that holds the junctor")
        sk, _ = _unwrap(skeleton)
        props = raw.get("properties")
        if isinstance(props, Mapping):
            declared = sk.get("properties")
            declared = declared if isinstance(declared, Mapping) else {}
            for name, sub in props.items():
                if name not in declared and not isinstance(sk.get("additionalProperties"),
                                                           Mapping):
                    self.add(_join(path, str(name)), "junctor-undeclared",
                             f"property {name!r} inside a junctor must also be declared in "
                             "the node's properties")
                    continue
                target = declared.get(name, sk.get("additionalProperties"))
                self.value_validation(sub, _join(path, str(name)), target or {}, False)
        items = raw.get("items")
        if isinstance(items, Mapping):
            if not isinstance(sk.get("items"), Mapping):
                self.add(_join(path, "[*]"), "junctor-undeclared",
                         "items inside a junctor must also be declared on the node")
            else:
                self.value_validation(items, _join(path, "[*]"), sk["items"], False)
        for junctor in _JUNCTORS:
            branches = raw.get(junctor)
            if isinstance(branches, list):
                for i, branch in enumerate(branches):
                    if int_or_string and _is_int_or_string_pattern(junctor, branch):
                        continue
                    self.value_validation(branch, _join(path, f"{junctor}[{i}]"), skeleton,
                                          int_or_string)
        if "not" in raw:
            self.value_validation(raw["not"], _join(path, "not"), skeleton, int_or_string)


def _is_int_or_string_pattern(junctor: str, branch: Any) -> bool:
    """int-or-string may use anyOf: [{type: integer}, {type: string}] (also inside allOf)."""
    if not isinstance(branch, Mapping):
        return False
    if junctor == "anyOf":
        return branch in ({"type": "integer"}, {"type": "string"})
    if junctor == "allOf":
        any_of = branch.get("anyOf")
        return (set(branch) == {"anyOf"} and isinstance(any_of, list)
                and all(b in ({"type": "integer"}, {"type": "string"}) for b in any_of))
    return False
