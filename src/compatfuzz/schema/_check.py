"""Refuse keyword values no schema may hold, before anything is generated from them.

``multipleOf: 0``, ``minLength: -5``, ``properties: [...]`` or ``type: [string, 5]`` are
not JSON Schema (draft 2020-12 validation vocabulary: ``multipleOf`` "MUST be strictly
greater than 0", the length and count keywords "MUST be a non-negative integer",
``type`` holds type names, ``properties`` an object of schemas); before issue 22 they
reached the generator and ended in ``ZeroDivisionError``, a Hypothesis
``InvalidArgument`` or a ``TypeError`` traceback (exit 1, the code of a breaking
change). A ``required`` property that ``additionalProperties: false`` forbids (and no
``properties``/``patternProperties`` entry allows) makes the node unsatisfiable for
objects: it generated objects its own schema rejects.

Each check names the file, the JSON path of the keyword and the fix. The checks run on
the schema as written, node by node, from the bundler (which visits every node reachable
from the chosen root, in any file, with its path) and over a CRD's ``openAPIV3Schema``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema._keywords import (
    SCHEMA_LIST,
    SCHEMA_MAP,
    SCHEMA_SINGLE,
    map_children,
)
from compatfuzz.schema._keywords import pointer as render_pointer

__all__ = ["check_keywords", "check_node"]

_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_SIZES = ("minLength", "maxLength", "minItems", "maxItems", "minProperties",
          "maxProperties", "minContains", "maxContains")
_FLOAT64_MAX = 1.7976931348623157e308


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fail(source: str, where: Any, key: str, message: str, hint: str) -> SchemaLoadError:
    return SchemaLoadError(message, source=source,
                           pointer=render_pointer((where, (key,))), hint=hint)


def _finite(value: Any) -> bool:
    return (math.isfinite(value) if isinstance(value, float)
            else value.bit_length() <= 1024 and abs(value) <= _FLOAT64_MAX)


def check_node(node: Any, source: str, where: Any) -> None:
    """Raise :class:`SchemaLoadError` if one schema node holds a keyword value no schema
    may hold. ``where`` is the node's JSON pointer (a string, or ``(parent, tokens)``
    pairs as :func:`~compatfuzz.schema._keywords.map_children` gives them)."""
    if not isinstance(node, Mapping):
        return
    for key in _BOUNDS:
        value = node.get(key)
        if value is None or (isinstance(value, bool) and key.startswith("exclusive")):
            continue  # draft 4 / OpenAPI 3.0 spell exclusive bounds as booleans
        if not _is_number(value) or not _finite(value):
            raise _fail(source, where, key, f"{key} is {_show(value)}, not a finite number",
                        f"write a number within +-1.8e308 (float64, as Kubernetes and "
                        f"most JSON readers hold it), or leave {key} out")
    mult = node.get("multipleOf")
    if mult is not None and (not _is_number(mult) or not _finite(mult) or mult <= 0):
        raise _fail(source, where, "multipleOf",
                    f"multipleOf is {_show(mult)}; it must be a number greater than 0",
                    "use a positive step such as 1 or 0.5, or leave multipleOf out")
    for key in _SIZES:
        value = node.get(key)
        if value is None:
            continue
        if not _is_number(value) or not _finite(value) or value < 0 or (
                isinstance(value, float) and not value.is_integer()):
            raise _fail(source, where, key,
                        f"{key} is {_show(value)}; it must be a non-negative integer",
                        f"write a whole number of 0 or more, or leave {key} out")
    _check_type(node, source, where)
    _check_shapes(node, source, where)
    _check_required(node, source, where)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({type(value).__name__})"


def _check_type(node: Mapping[str, Any], source: str, where: Any) -> None:
    kind = node.get("type")
    if kind is None:
        return
    names = kind if isinstance(kind, list) else [kind]
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in _TYPES:
            at = ("type", str(i)) if isinstance(kind, list) else ("type",)
            raise SchemaLoadError(
                f"type {_show(name)} is not a JSON Schema type", source=source,
                pointer=render_pointer((where, at)),
                hint=f"use one of {', '.join(sorted(_TYPES))} (a string, or a list of them)")


def _check_shapes(node: Mapping[str, Any], source: str, where: Any) -> None:
    """Keywords that hold schemas hold schemas; ``required``/``enum`` are lists."""
    for key, value in node.items():
        if key in SCHEMA_MAP:
            if not isinstance(value, Mapping):
                raise _fail(source, where, key, f"{key} is a {type(value).__name__}; it "
                            "must be a mapping from names to schemas",
                            f"write {key}: {{name: {{type: string}}, ...}}")
            for name, sub in value.items():
                if not isinstance(sub, Mapping | bool):
                    raise SchemaLoadError(
                        f"{key}.{name} is {_show(sub)}, not a schema", source=source,
                        pointer=render_pointer((where, (key, str(name)))),
                        hint="a schema is a mapping such as {type: string} (or true/false)")
        elif key in SCHEMA_LIST:
            if not isinstance(value, list) or not all(isinstance(v, Mapping | bool)
                                                      for v in value):
                raise _fail(source, where, key, f"{key} must be a list of schemas, not "
                            f"{_show(value)}", f"write {key}: [{{type: string}}, ...]")
        elif key in SCHEMA_SINGLE or key == "items":
            ok = isinstance(value, Mapping | bool) or (
                key == "items" and isinstance(value, list)
                and all(isinstance(v, Mapping | bool) for v in value))
            if not ok:
                raise _fail(source, where, key, f"{key} is {_show(value)}, not a schema",
                            "a schema is a mapping such as {type: string} (or true/false)")
    required = node.get("required")
    if required is not None and (not isinstance(required, list)
                                 or not all(isinstance(r, str) for r in required)):
        raise _fail(source, where, "required", f"required is {_show(required)}; it must "
                    "be a list of property names",
                    "list the names on the object that holds the property: "
                    "required: [name, ...] (not required: true on the property)")
    if "enum" in node and not isinstance(node["enum"], list):
        raise _fail(source, where, "enum", f"enum is {_show(node['enum'])}, not a list",
                    "write enum: [value, ...]")


def _check_required(node: Mapping[str, Any], source: str, where: Any) -> None:
    """``required`` names a property that ``additionalProperties: false`` forbids."""
    if node.get("additionalProperties") is not False:
        return
    required = node.get("required") or []
    props = node.get("properties") or {}
    patterns = list(node.get("patternProperties") or {})
    for name in required:
        if name in props or any(_matches(p, name) for p in patterns):
            continue
        raise _fail(
            source, where, "required",
            f"required names {name!r}, which additionalProperties: false forbids (it is "
            "not in properties): no object satisfies this schema",
            f"add {name!r} to properties (e.g. {name}: {{}}), or remove it from required "
            "(a typo?)")


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except (re.error, TypeError):
        return True  # cannot tell: assume it is allowed (the pattern check says more)


def check_keywords(root: Any, *, source: str, pointer: str = "") -> None:
    """Run :func:`check_node` on every schema node under ``root`` (iteratively)."""
    found: list[tuple[Any, tuple[str, ...]]] = []

    def collect(sub: Any, tokens: tuple[str, ...]) -> Any:
        found.append((sub, tokens))
        return sub

    stack: list[tuple[Any, Any]] = [(root, pointer)]
    while stack:
        node, where = stack.pop()
        if not isinstance(node, Mapping):
            continue
        check_node(node, source, where)
        found.clear()
        map_children(node, collect)
        stack.extend((sub, (where, tokens)) for sub, tokens in reversed(found))
