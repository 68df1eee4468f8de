"""Leaf-path coverage: how much of a schema's shape a set of generated examples exercises.

The round-trip runner reports it per unit and the strategy benchmark
(``bench_strategies.py``) compares engines on *coverage after N examples*, so the metric is
defined once, precisely, and tested on its own (``tests/test_bench_leafpaths.py``). It is
pure stdlib on purpose: the benchmark peer's worker, whose virtualenv lacks compatfuzz,
loads this file by path (``benchmarks/_leafpaths.py``).

Definition
----------
A *path* is a tuple of property names from the document root, where every array level is
collapsed to the marker ``"[*]"`` (``("spec", "template", "spec", "containers", "[*]",
"image")``, shown as ``spec.template.spec.containers[*].image``).

Walking a schema node, after merging what its ``$ref``, ``allOf``, ``anyOf`` and ``oneOf``
contribute (union of the properties and items of every part):

* a node with at least one entry in ``properties`` is an **object**: each property's path is
  walked (``additionalProperties``/``patternProperties`` next to ``properties`` are not);
* otherwise a node with ``items``/``prefixItems``/``type: array`` is an **array**: its items
  are walked at ``path + ("[*]",)`` (``prefixItems`` collapse into the same ``[*]``);
* anything else is a **leaf**: scalars, enums, maps (``additionalProperties`` only, such
  as ``metadata.labels``), objects without properties (``FieldsV1``) and unions of scalars
  (``IntOrString``, ``Quantity``).

``$ref`` is followed; recursion is cut at the first *revisit* of a definition on the current
path, which then counts as a leaf (the recursive definition is expanded exactly once).
Nodes that are objects *and* arrays contribute both kinds of children. Conditional keywords
(``if``/``then``/``else``, ``dependentSchemas``, ``not``) are ignored.

A leaf path is **covered** by a set of examples when at least one example has a value at it:
walking the example along the path (every element of a list for ``"[*]"``) reaches a value
that is not ``None``. ``null`` does not count by default because Kubernetes treats an
explicit ``null`` as "unset", and a generator that writes ``null`` everywhere has exercised
nothing; pass ``count_null=True`` for the looser variant. Empty maps, lists and strings do
count: the field was set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ITEMS",
    "Coverage",
    "LeafPath",
    "coverage",
    "covered_paths",
    "format_path",
    "leaf_paths",
]

ITEMS = "[*]"
"""Path component standing for "any element of this array"."""

LeafPath = tuple[str, ...]

_COMBINATORS = ("allOf", "anyOf", "oneOf")


def _resolve(root: Mapping[str, Any], ref: str) -> Any:
    """Return the node a local ``$ref`` (``#/...`` JSON pointer) points to."""
    if not ref.startswith("#"):
        raise ValueError(
            f"non-local $ref {ref!r}: bundle the schema first (every $ref must start with '#')"
        )
    node: Any = root
    for raw in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise ValueError(f"$ref {ref!r} points to nothing") from None
    return node


@dataclass
class _Shape:
    """What one schema node (with its refs and combinators merged) contains."""

    properties: dict[str, list[tuple[Any, frozenset[str]]]] = field(default_factory=dict)
    items: list[tuple[Any, frozenset[str]]] = field(default_factory=list)
    is_array: bool = False
    recursion_cut: bool = False


def _gather(
    root: Mapping[str, Any], node: Any, stack: frozenset[str], shape: _Shape
) -> None:
    """Merge ``node`` (and everything it refers to) into ``shape``."""
    if not isinstance(node, Mapping):
        return  # boolean schemas have no structure: a leaf
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in stack:
            shape.recursion_cut = True
        else:
            _gather(root, _resolve(root, ref), stack | {ref}, shape)
    props = node.get("properties")
    if isinstance(props, Mapping):
        for name, sub in props.items():
            shape.properties.setdefault(name, []).append((sub, stack))
    types = node.get("type")
    if types == "array" or (isinstance(types, list) and "array" in types):
        shape.is_array = True
    if "items" in node:
        shape.is_array = True
        shape.items.append((node["items"], stack))
    prefix = node.get("prefixItems")
    if isinstance(prefix, list):
        shape.is_array = True
        shape.items.extend((sub, stack) for sub in prefix)
    for keyword in _COMBINATORS:
        parts = node.get(keyword)
        if isinstance(parts, list):
            for part in parts:
                _gather(root, part, stack, shape)


def _walk(
    root: Mapping[str, Any],
    nodes: list[tuple[Any, frozenset[str]]],
    path: LeafPath,
    out: set[LeafPath],
) -> None:
    shape = _Shape()
    for node, stack in nodes:
        _gather(root, node, stack, shape)
    interior = False
    if shape.properties:
        interior = True
        for name, subs in shape.properties.items():
            _walk(root, subs, (*path, name), out)
    if shape.is_array:
        interior = True
        _walk(root, shape.items or [(True, frozenset())], (*path, ITEMS), out)
    if not interior:
        out.add(path)


def leaf_paths(schema: Mapping[str, Any]) -> frozenset[LeafPath]:
    """Return every leaf path of ``schema`` (a self-contained document with local refs).

    See the module docstring for the exact definition. A schema that is itself a leaf (a
    scalar) has the single leaf path ``()``.
    """
    out: set[LeafPath] = set()
    _walk(schema, [(schema, frozenset())], (), out)
    return frozenset(out)


class _Trie:
    __slots__ = ("children", "path", "terminal")

    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.terminal = False
        self.path: LeafPath = ()


def _build_trie(paths: Iterable[LeafPath]) -> _Trie:
    top = _Trie()
    for path in paths:
        node = top
        for part in path:
            node = node.children.setdefault(part, _Trie())
        node.terminal = True
        node.path = path
    return top


def _hits(trie: _Trie, value: Any, count_null: bool) -> Iterator[LeafPath]:
    if value is None and not count_null:
        return
    if trie.terminal:
        yield trie.path
    if isinstance(value, Mapping):
        for key, child in trie.children.items():
            if key != ITEMS and key in value:
                yield from _hits(child, value[key], count_null)
    elif isinstance(value, list) and ITEMS in trie.children:
        child = trie.children[ITEMS]
        for element in value:
            yield from _hits(child, element, count_null)


def covered_paths(
    paths: Iterable[LeafPath], examples: Iterable[Any], *, count_null: bool = False
) -> frozenset[LeafPath]:
    """Return the members of ``paths`` at which some example has a value.

    ``count_null`` decides whether an explicit ``null`` counts as a value (see the module
    docstring for why it does not by default).
    """
    trie = _build_trie(paths)
    hit: set[LeafPath] = set()
    for example in examples:
        hit.update(_hits(trie, example, count_null))
    return frozenset(hit)


@dataclass(frozen=True)
class Coverage:
    """Leaf-path coverage of a set of examples: ``covered`` of ``total`` paths."""

    total: int
    covered: int
    missing: frozenset[LeafPath]

    @property
    def ratio(self) -> float:
        return self.covered / self.total if self.total else 1.0


def coverage(
    schema: Mapping[str, Any], examples: Iterable[Any], *, count_null: bool = False
) -> Coverage:
    """Return the leaf-path coverage of ``examples`` against ``schema``."""
    paths = leaf_paths(schema)
    hit = covered_paths(paths, examples, count_null=count_null)
    return Coverage(total=len(paths), covered=len(hit), missing=paths - hit)


def format_path(path: LeafPath) -> str:
    """Render a path Kubernetes-style: ``spec.containers[*].image`` (``<root>`` for ``()``)."""
    text = ""
    for part in path:
        if part == ITEMS:
            text += ITEMS
        elif part.isidentifier():
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text or "<root>"
