"""Refuse keyword values no schema may hold, before anything is generated from them.

``multipleOf: 0``, ``minLength: -5``, ``properties: [...]`` or ``type: [string, 5]`` are
not JSON Schema (draft 2020-12 validation vocabulary: ``multipleOf`` "MUST be strictly
greater than 0", the length and count keywords "MUST be a non-negative integer",
``type`` holds type names, ``properties`` an object of schemas); they used to
reach the generator and ended in ``ZeroDivisionError``, a Hypothesis
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

__all__ = ["check_keywords", "check_node", "never_valid"]

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


def check_node(node: Any, source: str, where: Any, *, kubernetes: bool = False) -> None:
    """Raise :class:`SchemaLoadError` if one schema node holds a keyword value no schema
    may hold. ``where`` is the node's JSON pointer (a string, or ``(parent, tokens)``
    pairs as :func:`~compatfuzz.schema._keywords.map_children` gives them).

    ``kubernetes`` (a CRD's ``openAPIV3Schema``): a negative whole ``minLength``,
    ``maxItems``, ... is accepted, as the API server accepts it (it decodes the
    length keywords as int64 and never judges their sign). A negative minimum bounds
    nothing; a negative maximum makes the node accept no value (:func:`never_valid`).
    """
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
        if not _is_number(value) or not _finite(value) or (value < 0 and not kubernetes) or (
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


def check_keywords(root: Any, *, source: str, pointer: str = "",
                   kubernetes: bool = False) -> None:
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
        check_node(node, source, where, kubernetes=kubernetes)
        found.clear()
        map_children(node, collect)
        stack.extend((sub, (where, tokens)) for sub, tokens in reversed(found))


_JSON_TYPES: dict[str, Any] = {
    "string": str, "array": list, "object": Mapping, "boolean": bool,
    "integer": int, "number": int | float,
}
_SIZE_PAIRS = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems"),
               "object": ("minProperties", "maxProperties")}


def _non_null_type(node: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
    """The node and its one non-null type, reading the normalised spellings of
    ``nullable`` (``type: [T, "null"]``, ``anyOf: [node, {type: null}]``)."""
    branches = node.get("anyOf")
    if (isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches
            and len(node) == 1):
        other = branches[0] if branches[1] == {"type": "null"} else branches[1]
        if isinstance(other, Mapping):
            node = other
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        kind = rest[0] if len(rest) == 1 else None
    return node, kind if isinstance(kind, str) else None


def _of_type(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[kind])


def _bound(node: Mapping[str, Any], plain: str, exclusive: str
           ) -> tuple[float | None, bool]:
    """A numeric bound and whether it is strict: draft 2020 (``exclusiveMinimum: 5``) or
    OpenAPI 3.0 (``minimum: 5, exclusiveMinimum: true``)."""
    strict = node.get(exclusive)
    if _is_number(strict):
        return strict, True
    value = node.get(plain)
    if _is_number(value):
        return value, strict is True
    return None, False


def never_valid(node: Any) -> str | None:
    """Why no value but ``null`` satisfies ``node``'s own bounds, or ``None``.

    Catches what a CRD may hold and the API server accepts but no object can
    satisfy: a negative ``maxLength``/``maxItems``/``maxProperties``, a minimum above the
    maximum (lengths, counts or numbers), an ``enum`` with no member of the node's type.
    An optional field with such a schema is never generated; a required one is refused
    with this reason. Only the node itself is read (not its children or junctors).

    >>> never_valid({"type": "string", "minLength": 5, "maxLength": 2})
    'minLength 5 > maxLength 2'
    >>> never_valid({"type": "string", "enum": [1, 2]}) is not None
    True
    """
    if not isinstance(node, Mapping):
        return "the schema is false" if node is False else None
    node, kind = _non_null_type(node)
    if kind not in _JSON_TYPES:
        return None
    sizes = _SIZE_PAIRS.get(kind)
    if sizes is not None:
        lo, hi = node.get(sizes[0]), node.get(sizes[1])
        if _is_number(hi) and hi < 0:
            return f"{sizes[1]} is {hi}: no {kind} is that short"
        if _is_number(lo) and _is_number(hi) and lo > hi:
            return f"{sizes[0]} {lo} > {sizes[1]} {hi}"
    if kind in ("integer", "number"):
        lo, lo_strict = _bound(node, "minimum", "exclusiveMinimum")
        hi, hi_strict = _bound(node, "maximum", "exclusiveMaximum")
        if lo is not None and hi is not None:
            if lo > hi or (lo == hi and (lo_strict or hi_strict)):
                return f"no {kind} between minimum {lo} and maximum {hi}"
            if kind == "integer" and math.isfinite(lo) and math.isfinite(hi) and (
                    math.floor(lo) + 1 if lo_strict else math.ceil(lo)) > (
                    math.ceil(hi) - 1 if hi_strict else math.floor(hi)):
                return f"no integer between minimum {lo} and maximum {hi}"
    enum = node.get("enum")
    if isinstance(enum, list) and enum and not any(_of_type(v, kind) for v in enum):
        return f"no member of enum {_show(enum)} is of type {kind}"
    return None
