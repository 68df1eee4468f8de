"""Rewrite schemas of every supported dialect into JSON Schema 2020-12.

A pure, idempotent ``schema -> schema`` function (STYLE.md 8): strategies, semantic equality
and compat checks then read one dialect. What changes:

* OpenAPI 3.0 / CRD ``nullable: true`` and Swagger ``x-nullable: true`` become ``"null"`` in
  ``type``; on a node with ``$ref`` or a junctor (``allOf``... as int-or-string has) the
  node's validation keywords move into ``anyOf: [<them>, {type: null}]``. Either way null
  is accepted as Kubernetes accepts it: go-openapi checks a null only against ``type`` and
  ``enum``, so an ``enum`` without null still rejects it (as OpenAPI 3.0.3 also says).
* draft-04 boolean ``exclusiveMinimum``/``exclusiveMaximum`` become the numeric form.
* a negative ``minLength``/``minItems``/``minProperties`` (which bounds nothing; a CRD may
  hold one, and the API server accepts it) is dropped.
* array-form ``items``/``additionalItems`` become ``prefixItems``/``items``; ``dependencies``
  becomes ``dependentRequired``/``dependentSchemas``.
* root ``definitions`` move to ``$defs``; ``#/definitions/X`` and ``#/components/schemas/X``
  refs become ``#/$defs/X``.
* OpenAPI-only annotations: ``discriminator``, ``xml``, ``externalDocs`` are dropped (they
  never affect validity), ``example`` becomes ``examples``; Swagger ``type: file`` is dropped.
* Kubernetes OpenAPI ``type: string, format: int-or-string`` and the bare-string
  ``...api.resource.Quantity`` definition become the CRD int-or-string shape
  (``anyOf: [integer, string]`` + ``x-kubernetes-int-or-string``), as the API server
  accepts both.
* draft-04/06/07 ignore keywords next to ``$ref``; they are dropped (annotations kept).
  OpenAPI 3.0 and Swagger keep them: real documents put ``nullable`` next to ``$ref``.
* ``x-kubernetes-*`` and every other keyword are kept verbatim. The input is never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from compatfuzz.errors import InvalidArgument, SchemaLoadError
from compatfuzz.schema._keywords import map_children

__all__ = ["DIALECTS", "Dialect", "normalize"]

Dialect = Literal[
    "2020-12", "2019-09", "draft-07", "draft-06", "draft-04",
    "openapi-3.1", "openapi-3.0", "swagger-2.0",
]
DIALECTS: tuple[str, ...] = get_args(Dialect)

_OPENAPI = frozenset({"openapi-3.0", "openapi-3.1", "swagger-2.0"})
_NULLABLE_KEYS = {"openapi-3.0": ("nullable", "x-nullable"), "swagger-2.0": ("x-nullable",)}
_DROP_OPENAPI = ("discriminator", "xml", "externalDocs")
# keywords that stay on the outer node when a nullable node is wrapped in anyOf
_ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
    "$comment", "$id", "$schema", "$defs", "definitions", "$anchor",
})
# drafts in which keywords next to $ref are ignored
_REF_OVERRIDES = frozenset({"draft-04", "draft-06", "draft-07"})
_REF_PREFIXES = ("#/definitions/", "#/components/schemas/")


def normalize(schema: Any, *, dialect: Dialect | str = "2020-12") -> Any:
    """Return ``schema`` rewritten into JSON Schema 2020-12 (see the module docstring).

    ``dialect`` names the source dialect: ``"openapi-3.0"`` for CRDs and OpenAPI 3.0,
    ``"swagger-2.0"`` for Swagger / Kubernetes OpenAPI v2, ``"draft-04"``..``"2020-12"``
    for JSON Schema. Rewrites that cannot be wrong in 2020-12 (boolean exclusive bounds,
    array ``items``, ``definitions``) apply whatever the dialect; ``nullable`` only where
    the dialect defines it. ``normalize(normalize(s, dialect=d)) == normalize(s, dialect=d)``.

    >>> normalize({"type": "string", "nullable": True}, dialect="openapi-3.0")
    {'type': ['string', 'null']}

    Raises:
        InvalidArgument: unknown ``dialect``.
        SchemaLoadError: root ``definitions`` and ``$defs`` define one name differently.

    .. versionadded:: 0.1
    """
    if dialect not in DIALECTS:
        raise InvalidArgument(
            f"Expected one of {', '.join(DIALECTS)} but got dialect={dialect!r} "
            f"(type={type(dialect).__name__}); CRDs use dialect='openapi-3.0'"
        )
    if not isinstance(schema, Mapping):
        return schema
    out = _node(schema, dialect)
    defs = out.pop("definitions", None)
    if isinstance(defs, Mapping):
        merged = dict(out.get("$defs") or {})
        for name, sub in defs.items():
            if name in merged and merged[name] != sub:
                raise SchemaLoadError(
                    f"definition {name!r} is in both 'definitions' and '$defs' and differs",
                    pointer="/definitions/" + name,
                    hint="rename one of them; compatfuzz moves 'definitions' into '$defs'",
                )
            merged[name] = sub
        out["$defs"] = merged
    elif defs is not None:
        out["definitions"] = defs
    if dialect in _OPENAPI and isinstance(out.get("$defs"), Mapping):
        # Kubernetes' OpenAPI publishes Quantity as a bare string, though the API server
        # (and every other schema of it) accepts numbers too.
        defs_out = dict(out["$defs"])
        for name, sub in defs_out.items():
            if (name.endswith(_QUANTITY) and isinstance(sub, Mapping)
                    and sub.get("type") == "string"):
                defs_out[name] = _int_or_string(sub)
        out["$defs"] = defs_out
    return out


_QUANTITY = "apimachinery.pkg.api.resource.Quantity"


def _int_or_string(node: Mapping[str, Any]) -> dict[str, Any]:
    """Swagger's ``type: string, format: int-or-string`` (IntOrString) in the shape CRDs
    use, which a JSON Schema validator also reads right: an integer or a string."""
    out = {k: v for k, v in node.items() if k not in ("type", "format")}
    out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    out["x-kubernetes-int-or-string"] = True
    return out


def _node(node: Any, dialect: str) -> Any:
    if not isinstance(node, Mapping):
        return node
    out = map_children(node, lambda sub, _t: _node(sub, dialect))

    ref = out.get("$ref")
    if isinstance(ref, str):
        for prefix in _REF_PREFIXES:
            if ref.startswith(prefix):
                out["$ref"] = "#/$defs/" + ref[len(prefix):]
        if dialect in _REF_OVERRIDES:
            out = {k: v for k, v in out.items()
                   if k == "$ref" or k in _ANNOTATIONS or k.startswith("x-")}

    for bound, excl in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = out.get(excl)
        if isinstance(flag, bool):
            del out[excl]
            value = out.get(bound)
            if flag and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[excl] = out.pop(bound)

    for size in ("minLength", "minItems", "minProperties"):
        value = out.get(size)
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
            del out[size]  # bounds nothing (a CRD may say minLength: -5)

    items = out.get("items")
    if isinstance(items, list):
        if items:
            out["prefixItems"] = items
        if "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
        else:
            del out["items"]
    elif "additionalItems" in out:
        del out["additionalItems"]  # ignored by every draft unless items is an array

    deps = out.pop("dependencies", None)
    if isinstance(deps, Mapping):
        required = {k: v for k, v in deps.items() if isinstance(v, list)}
        schemas = {k: v for k, v in deps.items() if not isinstance(v, list)}
        if required:
            out["dependentRequired"] = {**required, **out.get("dependentRequired", {})}
        if schemas:
            out["dependentSchemas"] = {**schemas, **out.get("dependentSchemas", {})}
    elif deps is not None:
        out["dependencies"] = deps

    if dialect in _OPENAPI:
        for key in _DROP_OPENAPI:
            out.pop(key, None)
        if "example" in out:
            example = out.pop("example")
            out.setdefault("examples", [example])
        if out.get("type") == "file":
            del out["type"]
        if out.get("format") == "int-or-string":
            out = _int_or_string(out)

    nullable = False
    for key in _NULLABLE_KEYS.get(dialect, ()):
        if key in out:
            nullable = out.pop(key) is True or nullable
    if nullable:
        out = _allow_null(out)
    return out


def _allow_null(node: dict[str, Any]) -> dict[str, Any]:
    """Accept null the way Kubernetes (go-openapi) does: null is checked against ``type``
    and ``enum`` only, every other keyword is skipped."""
    kind = node.get("type")
    combinators = any(k in node for k in ("$ref", "allOf", "anyOf", "oneOf", "not"))
    if not combinators:
        if isinstance(kind, str) and kind != "null":
            node["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            node["type"] = [*kind, "null"]
        return node  # without a type, only enum/const can reject null, as in Kubernetes
    outer = {k: v for k, v in node.items()
             if k in _ANNOTATIONS or k in ("enum", "const") or k.startswith("x-")}
    inner = {k: v for k, v in node.items() if k not in outer}
    outer["anyOf"] = [inner, {"type": "null"}]
    return outer
