"""The node type of a structural schema, and the helpers every step over it shares.

Why a module of its own: the view is built in ``_structural`` (``structural()``), which
prunes each default with ``_prune`` and ``_objectmeta`` as it builds; those two, and
``_default``, ``_validate`` and ``_pipeline``, walk the same :class:`Node`. Keeping the
type here lets each of them import it without importing the builder that imports them.

Mirrors apiextensions-apiserver ``pkg/apiserver/schema/structural.go`` (``Structural``,
``Generic``, ``Extensions``): only the parts that shape what the server prunes,
coerces, defaults and validates.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Node"]

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


def _as_root(node: Node) -> Node:
    """``node`` marked as a resource root (``embedded``), so ``apiVersion``, ``kind``
    and ``metadata`` at its top are kept and coerced; a copy unless it is one already."""
    if node.embedded:
        return node
    clone = Node()
    for slot in Node.__slots__:
        setattr(clone, slot, getattr(node, slot))
    clone.embedded = True
    return clone


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars), faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
