"""Map a finding's field path back to a line of the file it came from.

GitHub annotations (``::error file=...,line=N``) and SARIF results point at a line; without
one GitHub shows the finding at the top of the file, far from the field.
Findings carry Kubernetes field paths (``spec.template.spec.containers[*].image``), not
positions, so this module re-reads the revision's file with PyYAML's composer (which
keeps line numbers; JSON is read the same way), finds the schema the spec names (a CRD
version, a ``#NAME`` definition, or the document), and walks ``properties``, ``items``,
``additionalProperties``, ``allOf``/``anyOf``/``oneOf`` branches and local ``$ref``s as far
as the path goes.  A field that no longer exists maps to the object that held it.  Best
effort by design: any surprise gives ``None`` (no ``line=``), never an error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from compatfuzz.schema._positions import documents, entry, get, pointer_node

__all__ = ["finding_line"]

_SEGMENT = re.compile(r"\[[^\]]*\]|[^.\[\]]+")
_DEFINITIONS = ("components/schemas", "definitions", "$defs")


def _scalar(node: Any, key: str) -> str | None:
    value = get(node, key)
    return value.value if isinstance(value, yaml.ScalarNode) else None


def _deref(root: Any, node: Any) -> Any:
    for _ in range(16):
        ref = _scalar(node, "$ref")
        if ref is None or not ref.startswith("#"):
            return node
        target = pointer_node(root, ref)
        if target is None:
            return node
        node = target
    return node


def _child(root: Any, node: Any, segment: str) -> tuple[Any, Any]:
    """(key node, schema node) of one path segment below ``node``, or (None, None)."""
    node = _deref(root, node)
    if segment.startswith("["):
        for key in ("items", "additionalProperties"):
            k, found = entry(node, key)
            if isinstance(found, yaml.MappingNode):
                return k, found
        return None, None
    k, found = entry(get(node, "properties"), segment)
    if found is not None:
        return k, found
    for key in ("allOf", "anyOf", "oneOf"):
        branches = get(node, key)
        for branch in branches.value if isinstance(branches, yaml.SequenceNode) else []:
            k, found = entry(get(_deref(root, branch), "properties"), segment)
            if found is not None:
                return k, found
    k, extra = entry(node, "additionalProperties")
    return (k, extra) if isinstance(extra, yaml.MappingNode) else (None, None)


def _schema_root(docs: tuple[Any, ...], definition: str | None,
                 version: str | None) -> tuple[Any, Any] | None:
    """(document, schema node) the spec names."""
    crds = [d for d in docs if _scalar(d, "kind") == "CustomResourceDefinition"]
    if crds:
        if definition:
            crds = [d for d in crds if definition in (
                _scalar(get(d, "metadata"), "name"),
                _scalar(get(get(d, "spec"), "names"), "kind"),
                _scalar(get(get(d, "spec"), "names"), "plural"))] or crds
        doc = crds[0]
        versions = get(get(doc, "spec"), "versions")
        entries = versions.value if isinstance(versions, yaml.SequenceNode) else []
        chosen = next((e for e in entries if _scalar(e, "name") == version), None)
        if chosen is None:
            chosen = next((e for e in entries if _scalar(e, "storage") == "true"), None)
        if chosen is None:
            return (doc, versions) if versions is not None else None
        return doc, pointer_node(chosen, "schema/openAPIV3Schema") or chosen
    if not docs:
        return None
    doc = docs[0]
    if not definition and version:  # a whole-document diff labels findings by definition
        definition = version
    if definition:
        if definition.startswith(("#/", "/")):
            return doc, pointer_node(doc, definition)
        for where in _DEFINITIONS:
            found = get(pointer_node(doc, where), definition)
            if found is not None:
                return doc, found
        # a definition NEW no longer has: point at the table that held it
        tables = (pointer_node(doc, w) for w in _DEFINITIONS)
        table = next((t for t in tables if t is not None), None)
        return (doc, table) if table is not None else None
    return doc, doc


def finding_line(spec: str, finding: Any) -> int | None:
    """The 1-based line in ``spec``'s file where ``finding``'s field (and keyword) is
    declared, or ``None`` when it cannot be told (a built-in kind, an unreadable file)."""
    from compatfuzz.schema._spec import parse_spec

    try:
        parsed = parse_spec(spec)
        if parsed.builtin or parsed.path is None:
            return None
        path = Path(parsed.path).resolve()
        docs = documents(path)
        found = _schema_root(docs, parsed.definition,
                             getattr(finding, "version", "") or parsed.version)
        if found is None:
            return None
        doc, node = found
        mark = node
        for segment in _SEGMENT.findall(getattr(finding, "path", "") or ""):
            if segment in ("$",):
                continue
            key, child = _child(doc, node, segment)
            if child is None:
                break
            node, mark = child, key
        keyword = getattr(finding, "keyword", "")
        if keyword:
            key, _ = entry(_deref(doc, node), keyword)
            mark = key or mark
        return int(mark.start_mark.line) + 1
    except Exception:  # best effort: no line rather than no report
        return None
