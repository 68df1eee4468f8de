"""compatfuzz: property-based compatibility test suites for versioned APIs.

The package root re-exports the handful of names most users need; each part keeps its
own API in its subpackage (``compatfuzz.schema``, ``compatfuzz.strategies``, ...).
Heavy parts are imported lazily so ``import compatfuzz`` stays cheap for the pytest plugin.
"""

from __future__ import annotations

from typing import Any

from compatfuzz.errors import (
    CompatfuzzError,
    CompatfuzzWarning,
    ConverterError,
    InvalidArgument,
    NotEquivalent,
    SchemaLoadError,
    UnresolvableRef,
    UnsupportedRuleWarning,
    UnsupportedSchema,
)

__version__ = "0.1.0"

__all__ = [
    "CompatfuzzError",
    "CompatfuzzWarning",
    "ConverterError",
    "InvalidArgument",
    "NotEquivalent",
    "SchemaLoadError",
    "UnresolvableRef",
    "UnsupportedRuleWarning",
    "UnsupportedSchema",
    "from_schema",
    "load_schema",
]

_LAZY = {
    "from_schema": ("compatfuzz.strategies", "from_schema"),
    "load_schema": ("compatfuzz.schema", "load_schema"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'compatfuzz' has no attribute {name!r}")
