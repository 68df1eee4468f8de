"""A stand-in for ``compatfuzz.strategies._cel_check`` until the CEL type checker is merged.

``compatfuzz.apiserver._crd_schema`` calls ``compile_errors`` and ``uses_old_self`` of that
module (issue 30, the other half of the work). This shim has the same signatures and only
the parser's verdict: a rule that cel-python cannot parse gives one error, anything else
compiles; ``oldSelf`` is found by its token outside string literals. :func:`install` puts it
in ``sys.modules`` when the real module is absent, so that the CRD-validation tests (and the
conformance suite) run on this branch; with the real module present it does nothing.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

NAME = "compatfuzz.strategies._cel_check"
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_OLD_SELF = re.compile(r"(?<![\w.])oldSelf\b")


@functools.lru_cache(maxsize=4096)
def _parse_error(rule: str) -> str | None:
    import celpy

    try:
        celpy.Environment().compile(rule)
    except Exception as exc:  # any parse failure is a compile error
        return f"Syntax error: {str(exc).splitlines()[0]}"
    return None


def compile_errors(rule: str, node: Mapping[str, Any], *,
                   resolve: Callable[[str], Mapping[str, Any]] | None = None,
                   old_self: bool = False, message_expression: bool = False) -> list[str]:
    why = _parse_error(rule)
    return [why] if why else []


def uses_old_self(rule: str, node: Mapping[str, Any] | None = None, *,
                  resolve: Callable[[str], Mapping[str, Any]] | None = None) -> bool:
    return bool(_OLD_SELF.search(_STRINGS.sub('""', rule)))


def install() -> bool:
    """Register the shim unless the real module exists; whether the shim is in use."""
    if NAME in sys.modules:
        return getattr(sys.modules[NAME], "__shim__", False)
    if importlib.util.find_spec(NAME) is not None:
        return False
    module = types.ModuleType(NAME)
    module.compile_errors = compile_errors  # type: ignore[attr-defined]
    module.uses_old_self = uses_old_self  # type: ignore[attr-defined]
    module.__shim__ = True  # type: ignore[attr-defined]
    sys.modules[NAME] = module
    return True
