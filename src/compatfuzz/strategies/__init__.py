"""Derive Hypothesis strategies from schemas: ``from_schema(schema) -> SearchStrategy``.

Values are built by construction from the normalised schema, honour Kubernetes extensions
and well-known types, and can be steered with overrides (the Kubernetes "custom fuzzer
funcs"): by format, by definition name, or by field path. See docs/strategies.md.
"""

from __future__ import annotations

from compatfuzz.strategies._api import from_schema
from compatfuzz.strategies._coverage import Coverage
from compatfuzz.strategies._overrides import (
    Overrides,
    clear_registry,
    register_definition,
    register_format,
    register_path,
)

__all__ = [
    "Coverage",
    "Overrides",
    "clear_registry",
    "from_schema",
    "register_definition",
    "register_format",
    "register_path",
]
