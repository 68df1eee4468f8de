"""Structural defaulting, as the API server applies a CRD version's ``default`` values.

Mirrors apiextensions-apiserver ``pkg/apiserver/schema/defaulting/algorithm.go``
(``Default``): a property's default fills a missing key or a ``null`` in a non-nullable
field, recursively, inside list items and map values too. Defaults were already pruned
when the structural view was built (``defaulting/prune.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compatfuzz.apiserver._structural import structural
from compatfuzz.apiserver._structural_node import Node, _copy
from compatfuzz.schema import Schema

__all__ = ["default", "default_node"]


def _non_nullable_null(x: Any, s: Node | None) -> bool:
    return x is None and s is not None and not s.nullable


def default_node(x: Any, s: Node | None, path: str = "", applied: list[str] | None = None
                 ) -> Any:
    """Default ``x`` in place by ``s``; returns ``x`` (a new value only for a scalar root).

    ``applied`` collects the paths that received a default (``spec.replicas``).
    """
    if s is None:
        return x
    if isinstance(x, dict):
        for k, prop in s.properties.items():
            if not prop.has_default:
                continue
            if k not in x or _non_nullable_null(x[k], prop):
                x[k] = _copy(prop.default)
                if applied is not None:
                    applied.append(_join(path, k))
        for k in list(x):
            sub = s.properties.get(k)
            if sub is not None:
                default_node(x[k], sub, _join(path, k), applied)
            elif s.has_additional:
                extra = s.additional
                if _non_nullable_null(x[k], extra):
                    assert extra is not None
                    x[k] = _copy(extra.default) if extra.has_default else None
                    if applied is not None and extra.has_default:
                        applied.append(_join(path, k))
                default_node(x[k], extra, _join(path, k), applied)
    elif isinstance(x, list):
        for i in range(len(x)):
            if _non_nullable_null(x[i], s.items):
                assert s.items is not None
                x[i] = _copy(s.items.default) if s.items.has_default else None
                if applied is not None and s.items.has_default:
                    applied.append(f"{path}[{i}]")
            default_node(x[i], s.items, f"{path}[{i}]", applied)
    return x


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def default(obj: Any, schema: Schema | Mapping[str, Any]) -> Any:
    """Return ``obj`` with ``schema``'s defaults applied as the API server applies them.

    >>> default({"spec": {}}, {"type": "object", "properties": {"spec": {
    ...     "type": "object", "properties": {"replicas": {"type": "integer", "default": 1}}}}})
    {'spec': {'replicas': 1}}
    """
    return default_node(_copy(obj), structural(schema))
