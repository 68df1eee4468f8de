"""Pruning of unknown fields and of non-nullable nulls, as the API server does it.

Mirrors apiextensions-apiserver ``pkg/apiserver/schema/pruning/algorithm.go``
(``PruneWithOptions``, ``prune``, ``skipPrune``) and ``defaulting/prunenulls.go``
(``PruneNonNullableNullsWithoutDefaults``). The unknown-field paths are spelt as upstream
``UnknownFieldPathOptions`` spells them (``spec.items[0].x``), so they read like the API
server's ``unknown field "spec.x"`` warnings.

These are the node-level steps, over a built :class:`Node`; ``prune`` and
``prune_nulls``, which take a schema, are in ``_structural`` (building the view prunes
each default with :func:`prune_node`, so this module cannot import the builder).
"""

from __future__ import annotations

from typing import Any

from compatfuzz.apiserver._structural_node import Node

__all__ = ["prune_node", "prune_nulls_node"]

_META = frozenset({"apiVersion", "kind", "metadata"})


class _Paths:
    __slots__ = ("found", "parent")

    def __init__(self) -> None:
        self.parent: list[str] = []
        self.found: list[str] = []

    def key(self, k: str) -> None:
        if self.parent:
            self.parent.append(".")
        self.parent.append(k)

    def index(self, i: int) -> None:
        self.parent.extend(("[", str(i), "]"))

    def record(self, k: str) -> None:
        n = len(self.parent)
        self.key(k)
        self.found.append("".join(self.parent))
        del self.parent[n:]


def _prune_keys(x: dict[str, Any], s: Node, paths: _Paths | None, *, drop_unknown: bool
                ) -> None:
    """The map loop ``prune`` and ``skipPrune`` share: declared (or additional) keys are
    pruned by their schema; unknown ones go unless the node preserves them."""
    n = len(paths.parent) if paths is not None else 0
    for k in list(x):
        if s.embedded and k in _META:
            continue
        prop = s.properties.get(k)
        if prop is not None or s.has_additional:
            if paths is not None:
                paths.key(k)
            prune_node(x[k], prop if prop is not None else s.additional, paths)
            if paths is not None:
                del paths.parent[n:]
        elif drop_unknown:
            if paths is not None and (k not in _META or n > 0):
                paths.record(k)
            del x[k]


def prune_node(x: Any, s: Node | None, paths: _Paths | None) -> None:
    """Prune ``x`` in place by ``s`` (``pruning.prune``); ``paths`` collects what went."""
    if s is not None and s.preserve:
        _skip(x, s, paths)
        return
    n = len(paths.parent) if paths is not None else 0
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                if paths is not None:
                    paths.record(k)
                del x[k]
            return
        _prune_keys(x, s, paths, drop_unknown=True)
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for i, v in enumerate(x):
            if paths is not None:
                paths.index(i)
            prune_node(v, items, paths)
            if paths is not None:
                del paths.parent[n:]


def _skip(x: Any, s: Node | None, paths: _Paths | None) -> None:
    if s is None:
        return
    n = len(paths.parent) if paths is not None else 0
    if isinstance(x, dict):
        _prune_keys(x, s, paths, drop_unknown=False)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            if paths is not None:
                paths.index(i)
            _skip(v, s.items, paths)
            if paths is not None:
                del paths.parent[n:]


def prune_nulls_node(x: Any, s: Node | None, dropped: list[str] | None = None,
                     path: str = "") -> None:
    """``PruneNonNullableNullsWithoutDefaults`` in place; ``dropped`` collects the paths."""
    if isinstance(x, dict):
        for k in list(x):
            sub = None
            if s is not None:
                sub = s.properties.get(k)
                if sub is None and s.has_additional:
                    sub = s.additional
            v = x[k]
            p = f"{path}.{k}" if path else k
            if v is None and sub is not None and not sub.nullable and not sub.has_default:
                del x[k]
                if dropped is not None:
                    dropped.append(p)
            else:
                prune_nulls_node(v, sub, dropped, p)
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for i, v in enumerate(x):
            prune_nulls_node(v, items, dropped, f"{path}[{i}]")
