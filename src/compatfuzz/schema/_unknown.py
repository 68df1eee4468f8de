"""Warn about schema keywords nobody defines: ``maxLenght`` used to pass silently.

A misspelt keyword is ignored by every validator, so the constraint it was meant to add is
neither generated nor checked, and a compatibility test passes for the wrong reason.
Two policies, because the dialects differ:

* a CRD's ``openAPIV3Schema`` is Kubernetes' ``JSONSchemaProps``, a closed set of fields
  (the API server's strict decoding rejects others): every other key is reported;
* JSON Schema and OpenAPI allow any extra keyword as an annotation (``markdownDescription``,
  ``javaType``, ``x-*``): only a key close to a real keyword (``minimun``,
  ``additionalproperties``) is reported, as the typo it almost surely is.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping
from typing import Any

from compatfuzz.errors import UnknownKeywordWarning, _pointer_to_path
from compatfuzz.schema._keywords import map_children
from compatfuzz.schema._keywords import pointer as render_pointer

__all__ = ["KUBERNETES_KEYWORDS", "SCHEMA_KEYWORDS", "warn_unknown_keywords"]

#: ``JSONSchemaProps`` (k8s.io/apiextensions-apiserver, apis/apiextensions/v1)
KUBERNETES_KEYWORDS = frozenset({
    "id", "$schema", "$ref", "description", "type", "format", "title", "default",
    "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
    "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties",
    "minProperties", "required", "items", "allOf", "oneOf", "anyOf", "not", "properties",
    "additionalProperties", "patternProperties", "dependencies", "additionalItems",
    "definitions", "externalDocs", "example", "nullable",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
    "x-kubernetes-map-type", "x-kubernetes-validations",
})
#: every keyword of JSON Schema draft-04 to 2020-12, OpenAPI 3.0/3.1 and Swagger 2.0
SCHEMA_KEYWORDS = KUBERNETES_KEYWORDS | frozenset({
    "$id", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
    "$recursiveAnchor", "$vocabulary", "$comment", "const", "maxContains", "minContains",
    "dependentRequired", "dependentSchemas", "if", "then", "else", "prefixItems",
    "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    "contentEncoding", "contentMediaType", "contentSchema", "deprecated", "readOnly",
    "writeOnly", "examples", "discriminator", "xml",
})
_MAX_WARNINGS = 20


def warn_unknown_keywords(root: Any, *, source: str, pointer: str = "",
                          kubernetes: bool = False) -> int:
    """Warn (:class:`UnknownKeywordWarning`) about unknown keywords in ``root``; return
    how many were reported (at most 20 per call)."""
    known = KUBERNETES_KEYWORDS if kubernetes else SCHEMA_KEYWORDS
    found: list[tuple[Any, tuple[str, ...]]] = []

    def collect(sub: Any, tokens: tuple[str, ...]) -> Any:
        found.append((sub, tokens))
        return sub

    reported = 0
    stack: list[tuple[Any, Any]] = [(root, pointer)]
    while stack and reported < _MAX_WARNINGS:
        node, where = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for raw in node:
            key = str(raw)
            if key in known or (not kubernetes and key.startswith("x-")):
                continue
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
            if not close and not kubernetes:
                continue  # an annotation of the user's own
            path = _pointer_to_path(render_pointer((where, (key,))))
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            what = ("Kubernetes' JSONSchemaProps has no such field" if kubernetes else
                    "no JSON Schema or OpenAPI dialect defines it")
            warnings.warn(UnknownKeywordWarning(
                f"{source} at {path}: unknown keyword {key!r}{hint}: {what}, so it is "
                "ignored and adds no constraint"), stacklevel=2)
            reported += 1
        found.clear()
        map_children(node, collect)
        stack.extend((sub, (where, tokens)) for sub, tokens in reversed(found))
    return reported
