"""Which JSON Schema keywords hold subschemas, shared by bundling, normalising and linting.

Walking a schema must be keyword-aware: Kubernetes' own ``JSONSchemaProps`` has *properties*
named ``$ref``, ``$schema`` and ``definitions``, and ``enum``/``default``/``x-*`` values are
data, not schemas. A blind recursive walk would rewrite those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SCHEMA_LIST", "SCHEMA_MAP", "SCHEMA_SINGLE", "escape", "map_children", "pointer"]

#: keywords whose value is one subschema
SCHEMA_SINGLE = frozenset({
    "additionalProperties", "additionalItems", "not", "contains", "propertyNames", "if",
    "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
})
#: keywords whose value is a list of subschemas
SCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
#: keywords whose value maps names to subschemas
SCHEMA_MAP = frozenset({
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
})


def escape(token: str) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def map_children(
    node: Mapping[str, Any],
    fn: Callable[[Any, tuple[str, ...]], Any],
    *,
    skip: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Return a shallow copy of ``node`` with ``fn(subschema, tokens)`` applied to every
    direct subschema; data-valued keywords are copied as they are.

    ``tokens`` are the unescaped JSON pointer tokens from ``node`` to the subschema
    (``("properties", "spec")``); they are cheap tuples so that callers only pay for
    building a pointer string when they report an error.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in skip:
            continue
        if key in SCHEMA_SINGLE or (key == "items" and not isinstance(value, list)):
            out[key] = fn(value, (key,))
        elif (key in SCHEMA_LIST or key == "items") and isinstance(value, list):
            out[key] = [fn(v, (key, str(i))) for i, v in enumerate(value)]
        elif key in SCHEMA_MAP and isinstance(value, Mapping):
            out[key] = {k: fn(v, (key, k)) for k, v in value.items()}
        elif key == "dependencies" and isinstance(value, Mapping):
            out[key] = {k: v if isinstance(v, list) else fn(v, (key, k))
                        for k, v in value.items()}
        else:
            out[key] = value
    return out


def pointer(tokens: Any) -> str:
    """Render a pointer kept as nested ``(parent, tokens)`` pairs, or a plain string."""
    parts: list[str] = []
    while isinstance(tokens, tuple):
        parent, last = tokens
        parts.extend(reversed([escape(t) for t in last]))
        tokens = parent
    return str(tokens) + "".join("/" + p for p in reversed(parts))
