"""Kubernetes invariants jsonschema does not check: list-map keys and set items are unique."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compatfuzz.schema import Schema


def kubernetes_violations(schema: Schema, value: Any) -> list[str]:
    """Return human-readable violations of list-type set/map uniqueness in ``value``."""
    out: list[str] = []
    _walk(schema, schema.root, value, "", out, depth=0)
    return out


def _walk(
    schema: Schema, node: Any, value: Any, path: str, out: list[str], *, depth: int
) -> None:
    if not isinstance(node, Mapping) or depth > 60:
        return
    if isinstance(node.get("$ref"), str):
        _walk(schema, schema.resolve(node["$ref"]), value, path, out, depth=depth + 1)
        return
    for word in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(word) or ():
            if isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str):
                _walk(schema, branch, value, path, out, depth=depth + 1)
    if isinstance(value, dict):
        for key, sub in value.items():
            props = node.get("properties") or {}
            if key in props:
                _walk(schema, props[key], sub, f"{path}.{key}", out, depth=depth + 1)
            elif isinstance(node.get("additionalProperties"), Mapping):
                extra = node["additionalProperties"]
                _walk(schema, extra, sub, f"{path}.{key}", out, depth=depth + 1)
    elif isinstance(value, list):
        kind = node.get("x-kubernetes-list-type")
        if kind == "map":
            keys = node.get("x-kubernetes-list-map-keys") or []
            seen = [json.dumps([i.get(k) for k in keys]) for i in value if isinstance(i, dict)]
            if len(seen) != len(set(seen)):
                out.append(f"{path}: duplicate list-map keys {keys}")
        elif kind == "set":
            seen = [json.dumps(i, sort_keys=True) for i in value]
            if len(seen) != len(set(seen)):
                out.append(f"{path}: duplicate set items")
        items = node.get("items")
        for i, sub in enumerate(value):
            _walk(schema, items, sub, f"{path}[{i}]", out, depth=depth + 1)
