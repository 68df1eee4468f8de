"""The structural-schema view of a schema, as the API server builds it for a CRD version.

Mirrors apiextensions-apiserver ``pkg/apiserver/schema/structural.go`` and ``convert.go``
(``NewStructural``): only ``properties``, ``items``, ``additionalProperties``, ``type``,
``nullable``, ``default`` and the ``x-kubernetes-*`` extensions shape what the server
prunes and defaults. Keywords under ``allOf``/``anyOf``/``oneOf``/``not`` are value
validations only: a field declared only inside them is pruned, exactly as on a server.

Defaults are pruned when the view is built, as ``defaulting/prune.go`` (``PruneDefaults``)
does when a CRD is created: a default carrying fields its schema does not declare loses
them before it is ever applied.

A CRD version is read from its raw ``openAPIV3Schema`` (kept by the loader in
``Schema.meta["openapi"]``); any other schema from its normalised 2020-12 root, with
``$ref`` followed and the loader's ``nullable`` rewrites (``type: [T, "null"]`` and
``anyOf: [<node>, {type: null}]``) read back as ``nullable``.

The :class:`~compatfuzz.apiserver._structural_node.Node` type lives in
``_structural_node`` so that ``_prune`` and ``_objectmeta``, which prune the defaults
here, need not import this module. For the same reason the schema-level entry points
(``prune``, ``prune_nulls``, ``coerce``: build the view, then walk it) live here, above
the node-level steps they call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compatfuzz.apiserver._objectmeta import coerce_node
from compatfuzz.apiserver._prune import _Paths, prune_node, prune_nulls_node
from compatfuzz.apiserver._structural_node import Node, _as_root, _copy
from compatfuzz.errors import InvalidArgument
from compatfuzz.schema import Schema

__all__ = ["coerce", "prune", "prune_nulls", "structural"]


def _is_null_branch(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and len(node) == 1


class _Builder:
    def __init__(self, resolve: Callable[[str], Mapping[str, Any]] | None) -> None:
        self.resolve = resolve
        self.seen: dict[int, Node] = {}

    def node(self, raw: Any, nullable: bool = False) -> Node:
        if not isinstance(raw, Mapping):
            return Node()
        ref = raw.get("$ref")
        if isinstance(ref, str) and self.resolve is not None:
            target = self.resolve(ref)
            key = id(target)
            if key in self.seen and not nullable and raw.keys() <= {"$ref"}:
                return self.seen[key]
            merged = {**target, **{k: v for k, v in raw.items() if k != "$ref"}}
            out = self.node(merged, nullable)
            if raw.keys() <= {"$ref"}:
                self.seen[key] = out
            return out
        any_of = raw.get("anyOf")
        if (isinstance(any_of, list) and len(any_of) == 2 and _is_null_branch(any_of[1])
                and "properties" not in raw and "items" not in raw):
            # the loader's rewrite of a nullable node that also has junctors or a $ref
            inner = {**any_of[0], **{k: v for k, v in raw.items() if k != "anyOf"}}
            return self.node(inner, nullable=True)
        out = Node()
        kind = raw.get("type")
        if isinstance(kind, list):
            out.nullable = "null" in kind
            rest = [k for k in kind if k != "null"]
            out.type = rest[0] if len(rest) == 1 else ""
        elif isinstance(kind, str):
            out.type = kind
        out.nullable = out.nullable or nullable or raw.get("nullable") is True
        out.preserve = raw.get("x-kubernetes-preserve-unknown-fields") is True
        out.embedded = raw.get("x-kubernetes-embedded-resource") is True
        list_type = raw.get("x-kubernetes-list-type")
        out.list_type = list_type if isinstance(list_type, str) else ""
        keys = raw.get("x-kubernetes-list-map-keys")
        out.map_keys = tuple(k for k in keys if isinstance(k, str)) if isinstance(
            keys, list) else ()
        props = raw.get("properties")
        if isinstance(props, Mapping):
            out.properties = {str(k): self.node(v) for k, v in props.items()}
        items = raw.get("items")
        if isinstance(items, Mapping):
            out.items = self.node(items)
        if "additionalProperties" in raw:
            extra = raw["additionalProperties"]
            if isinstance(extra, Mapping):
                out.has_additional, out.additional = True, self.node(extra)
            elif extra is True:
                out.has_additional = True
        if raw.get("default") is not None:  # Default.Object == nil means no default
            out.default = raw["default"]
        return out


def _prune_defaults(node: Node, seen: set[int]) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    if node.has_default:
        value = _copy(node.default)
        value = coerce_node(value, node, drop_invalid=True)
        prune_node(value, node, None)
        node.default = value
    for child in node.properties.values():
        _prune_defaults(child, seen)
    if node.items is not None:
        _prune_defaults(node.items, seen)
    if node.additional is not None:
        _prune_defaults(node.additional, seen)


_CACHE: dict[int, tuple[Any, Node]] = {}


def structural(schema: Schema | Mapping[str, Any]) -> Node:
    """Return the structural view of ``schema`` (cached per schema object).

    ``schema`` is a loaded :class:`~compatfuzz.schema.Schema` or a raw
    ``openAPIV3Schema`` mapping as written in a CRD.

    Raises:
        InvalidArgument: ``schema`` is neither.
    """
    key = id(schema)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    if isinstance(schema, Schema):
        raw = schema.meta.get("openapi")
        if isinstance(raw, Mapping):
            root = _Builder(None).node(raw)
        else:
            root = _Builder(schema.resolve).node(schema.root)
    elif isinstance(schema, Mapping):
        root = _Builder(None).node(schema)
    else:
        raise InvalidArgument(
            f"Expected a Schema or an openAPIV3Schema mapping but got schema={schema!r:.80} "
            f"(type={type(schema).__name__}); load one with compatfuzz.schema.load_crds()"
        )
    _prune_defaults(root, set())
    if len(_CACHE) > 512:
        _CACHE.clear()
    _CACHE[key] = (schema, root)
    return root


# ------------------------------------------------------- one step, given a schema
# The schema-level entry points of ``compatfuzz.apiserver``: each builds (or reuses) the
# view above, then walks it with the node-level step of ``_prune`` or ``_objectmeta``.


def prune(obj: Any, schema: Schema | Mapping[str, Any], *, root: bool = True
          ) -> tuple[Any, list[str]]:
    """Return ``obj`` with the fields ``schema`` does not declare removed, and their paths.

    ``root`` treats ``obj`` as a whole resource: ``apiVersion``, ``kind`` and
    ``metadata`` at its top are kept whatever the schema says (``isResourceRoot``).
    The input is not changed; the paths come sorted, as upstream returns them.

    >>> prune({"spec": {"a": 1, "b": 2}}, {"type": "object", "properties": {
    ...     "spec": {"type": "object", "properties": {"a": {"type": "integer"}}}}})
    ({'spec': {'a': 1}}, ['spec.b'])
    """
    node = structural(schema)
    out = _copy(obj)
    paths = _Paths()
    prune_node(out, _as_root(node) if root else node, paths)
    return out, sorted(paths.found)


def prune_nulls(obj: Any, schema: Schema | Mapping[str, Any]) -> Any:
    """Return ``obj`` without the ``null`` values of fields that are neither nullable
    nor defaulted (the server drops them; a defaulted one is defaulted later)."""
    out = _copy(obj)
    prune_nulls_node(out, structural(schema))
    return out


def coerce(obj: Any, schema: Schema | Mapping[str, Any], *, root: bool = True,
           drop_invalid: bool = False) -> Any:
    """Return ``obj`` with its (embedded) ObjectMeta decoded and written back as the server does.

    ``root`` also coerces the top-level ``apiVersion``/``kind``/``metadata``.

    Raises:
        Rejected: malformed metadata and ``drop_invalid`` is off.
    """
    node = structural(schema)
    out = _copy(obj)
    if root:
        node = _as_root(node)
    return coerce_node(out, node, drop_invalid=drop_invalid)
