"""Lines of a YAML/JSON file's values, for messages that point at the line to fix.

Loaded documents are plain Python data without positions; this module re-reads a file with
PyYAML's composer (which keeps line numbers; JSON is read the same way, through the loader
``_read`` uses) and walks a JSON pointer through the node graph. Best effort: any surprise
gives ``None`` (no line), never an error.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from compatfuzz.schema._read import KubernetesYAMLLoader

__all__ = ["documents", "entry", "get", "pointer_line", "pointer_node"]


@lru_cache(maxsize=32)
def _composed(path: str, mtime: float) -> tuple[Any, ...]:
    with open(path, encoding="utf-8") as fh:
        return tuple(yaml.compose_all(fh, Loader=KubernetesYAMLLoader))


def documents(path: str | os.PathLike[str]) -> tuple[Any, ...]:
    """The file's documents as PyYAML nodes (cached while the file is unchanged)."""
    resolved = Path(path).resolve()
    return _composed(str(resolved), resolved.stat().st_mtime)


def entry(node: Any, key: str) -> tuple[Any, Any]:
    """(key node, value node) of ``key`` in a mapping (or index of a sequence)."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k, v
    if isinstance(node, yaml.SequenceNode) and key.isdigit() and int(key) < len(node.value):
        item = node.value[int(key)]
        return item, item
    return None, None


def get(node: Any, key: str) -> Any:
    return entry(node, key)[1]


def _tokens(pointer: str) -> list[str]:
    text = pointer.lstrip("#").strip("/")
    return [t.replace("~1", "/").replace("~0", "~") for t in text.split("/")] if text else []


def pointer_node(root: Any, pointer: str) -> Any:
    """The node at ``pointer`` below ``root``, or ``None``."""
    node = root
    for token in _tokens(pointer):
        node = get(node, token)
        if node is None:
            return None
    return node


def pointer_line(path: str | os.PathLike[str], index: int, pointer: str) -> int | None:
    """The 1-based line of the value at ``pointer`` in the file's ``index``-th document:
    the line of its key in a mapping, or, when it does not exist, of its deepest
    ancestor that does (a missing field is reported where it belongs)."""
    try:
        node = documents(path)[index]
        mark = node
        for token in _tokens(pointer):
            key, child = entry(node, token)
            if child is None:
                break
            node, mark = child, key
        return int(mark.start_mark.line) + 1
    except Exception:  # best effort: no line rather than no message
        return None
