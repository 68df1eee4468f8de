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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.schema import Schema

__all__ = ["Node", "structural"]

_NO_DEFAULT = object()


class Node:
    """One node of a structural schema (``structuralschema.Structural``).

    ``additional`` is ``None`` when ``additionalProperties`` is absent; when it is present
    (``true`` or a schema) ``has_additional`` is set and ``additional`` holds the schema
    (``None`` for a bare ``true``, whose values the server prunes to nothing).
    """

    __slots__ = (
        "additional", "default", "embedded", "has_additional", "items", "list_type",
        "map_keys", "nullable", "preserve", "properties", "type",
    )

    def __init__(self) -> None:
        self.properties: dict[str, Node] = {}
        self.items: Node | None = None
        self.additional: Node | None = None
        self.has_additional = False
        self.preserve = False
        self.embedded = False
        self.nullable = False
        self.default: Any = _NO_DEFAULT
        self.type = ""
        self.list_type = ""  # x-kubernetes-list-type
        self.map_keys: tuple[str, ...] = ()  # x-kubernetes-list-map-keys

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT


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
    from compatfuzz.apiserver._objectmeta import coerce_node
    from compatfuzz.apiserver._prune import prune_node

    if id(node) in seen:
        return
    seen.add(id(node))
    if node.has_default:
        value = _json_copy(node.default)
        value = coerce_node(value, node, drop_invalid=True)
        prune_node(value, node, None)
        node.default = value
    for child in node.properties.values():
        _prune_defaults(child, seen)
    if node.items is not None:
        _prune_defaults(node.items, seen)
    if node.additional is not None:
        _prune_defaults(node.additional, seen)


def _json_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value


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
