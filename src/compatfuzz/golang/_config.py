"""``go = { module = ".", packages = [...] }`` in a ``compatfuzz.toml`` ``[[api]]``.

Loaded through the ``compatfuzz.converters`` entry point (``pyproject.toml``), so the
config reader names no converter kind it does not own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compatfuzz.errors import CompatfuzzError, SchemaLoadError

__all__ = ["converter_options"]

_EXAMPLE = 'go = { module = ".", packages = ["./api/v1alpha1", "./api/v1"] }'


def converter_options(entry: Mapping[str, Any], base: Path, source: str,
                      where: str) -> dict[str, Any]:
    """The API's ``converter=``: the Go packages, built (or found in the cache) now, so a
    compile error is exit 2 before any unit runs."""
    from compatfuzz.golang._build import build
    from compatfuzz.golang._converter import GoConverter

    pointer = f"{where}/go"
    clash = [k for k in ("convert", "to_hub", "from_hub", "converters", "webhook")
             if k in entry]
    if clash:
        raise SchemaLoadError(f"go and {', '.join(clash)} both convert", source=source,
                              pointer=where, hint="keep one: the Go packages, or the others")
    table = entry["go"]
    if not isinstance(table, Mapping):
        raise SchemaLoadError(f"expected a table, got {table!r}", source=source,
                              pointer=pointer, hint=f"write it as {_EXAMPLE}")
    unknown = sorted(set(table) - {"module", "packages"})
    if unknown:
        raise SchemaLoadError(f"unknown key {unknown[0]!r}", source=source,
                              pointer=f"{pointer}/{unknown[0]}",
                              hint=f"the keys are module and packages: {_EXAMPLE}")
    module = table.get("module", ".")
    packages = table.get("packages")
    if not isinstance(module, str) or not module:
        raise SchemaLoadError(f"module must be a folder, got {module!r}", source=source,
                              pointer=f"{pointer}/module",
                              hint="the folder holding go.mod, relative to this file")
    if (not isinstance(packages, list) or not packages
            or not all(isinstance(p, str) and p for p in packages)):
        raise SchemaLoadError(
            f"packages must be a list of Go packages, got {packages!r}", source=source,
            pointer=f"{pointer}/packages",
            hint="every API version's package, e.g. packages = [\"./api/v1alpha1\", "
                 "\"./api/v1\"] (relative to module, or import paths)")
    name = str(entry.get("name", "api"))
    try:
        return {"converter": GoConverter(build(base / module, packages, source=source),
                                         owner=name)}
    except CompatfuzzError as exc:
        hint = ("module is relative to the config file's folder"
                if "go.mod" in str(exc) else "")
        raise SchemaLoadError(str(exc), source=source, pointer=pointer, hint=hint) from None
