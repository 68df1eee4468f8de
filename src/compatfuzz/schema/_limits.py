"""Bounds on what a schema may ask a generator for, checked before generating.

``minItems: 1000000`` or ``minLength: 1e9`` are valid JSON Schema, but no generator can
meet them: Hypothesis refuses sizes above its buffer (a bare ``InvalidArgument``
traceback) or grinds for a minute before giving up. Checking the minimums up
front turns both into one error naming the file, the JSON path and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compatfuzz.errors import UnsupportedSchema, _pointer_to_path
from compatfuzz.schema._keywords import map_children
from compatfuzz.schema._keywords import pointer as render_pointer

__all__ = ["MAX_GENERATED_SIZE", "check_generation_limits"]

#: The largest minimum size (characters, items, properties) generation accepts; it is
#: Hypothesis's buffer size, beyond which it cannot draw a value at all.
MAX_GENERATED_SIZE = 8 * 1024
_MINIMUMS = ("minLength", "minItems", "minProperties", "minContains")


def check_generation_limits(schema: Any) -> None:
    """Raise :class:`UnsupportedSchema` if a minimum size in ``schema`` (a ``Schema``)
    is larger than :data:`MAX_GENERATED_SIZE`, naming where.

    Iterative, so a deeply nested schema cannot overflow the stack here.
    """
    found: list[tuple[Any, tuple[str, ...]]] = []

    def collect(sub: Any, tokens: tuple[str, ...]) -> Any:
        found.append((sub, tokens))
        return sub

    stack: list[tuple[Any, Any]] = [(schema.root, "")]
    while stack:
        node, where = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for key in _MINIMUMS:
            value = node.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and (
                    value > MAX_GENERATED_SIZE):
                path = _pointer_to_path(schema.pointer + render_pointer((where, (key,))))
                shown = int(value) if float(value).is_integer() else value
                raise UnsupportedSchema(
                    f"{schema.source} at {path}: {key} is {shown}, more than compatfuzz can "
                    f"generate (at most {MAX_GENERATED_SIZE})\n  fix: lower {key} (a real "
                    "API rarely needs more than a few hundred), or leave this schema out "
                    "of generated tests"
                )
        found.clear()
        map_children(node, collect)
        stack.extend((sub, (where, tokens)) for sub, tokens in reversed(found))
