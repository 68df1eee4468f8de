"""Public homes for re-exported names (STYLE.md 2), shared by every part's ``__init__``."""

from __future__ import annotations

import contextlib
from collections.abc import MutableMapping
from typing import Any

__all__ = ["rehome"]


def rehome(namespace: MutableMapping[str, Any]) -> None:
    """Make each name of ``namespace["__all__"]`` that is defined in one of the package's
    own modules report the package as its ``__module__``: reprs, docs and pickling then
    name ``compatfuzz.roundtrip.API``, not the private module it lives in. Names the
    package re-exports from elsewhere keep theirs."""
    package = namespace["__name__"]
    for name in namespace["__all__"]:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith(package + "."):
            with contextlib.suppress(AttributeError, TypeError):  # builtins refuse it
                obj.__module__ = package
