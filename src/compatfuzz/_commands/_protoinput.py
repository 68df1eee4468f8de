"""Telling protobuf inputs apart on the command line, shared by ``sample`` and ``diff``.

Checked without importing protobuf (an optional extra): a command that is given a JSON
Schema never needs it, and one given a ``.proto`` without the extra gets an error that
names the extra instead of a YAML parse error of the ``.proto`` text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["is_protobuf", "protobuf", "split_message"]

_SUFFIXES = (".proto", ".binpb", ".pb", ".desc", ".protoset")


def split_message(spec: str) -> tuple[str, str | None]:
    """``FILE#pkg.Message`` -> (``FILE``, ``pkg.Message``); no ``#``: (spec, None)."""
    path, sep, message = spec.rpartition("#")
    return (path, message or None) if sep else (spec, None)


def is_protobuf(spec: str) -> bool:
    """Protobuf input: ``proto:``/``module:`` prefixes, .proto or descriptor-set files
    (with or without ``#Message``), or a folder holding .proto files."""
    if spec.startswith(("proto:", "module:")):
        return True
    p = Path(split_message(spec)[0])
    if p.suffix in _SUFFIXES:
        return True
    return p.is_dir() and next(iter(p.rglob("*.proto")), None) is not None


def protobuf(spec: str) -> Any:
    """``compatfuzz.protobuf``, or an input error naming the extra to install."""
    try:
        import compatfuzz.protobuf as proto
    except ImportError as exc:
        from compatfuzz.errors import SchemaLoadError

        raise SchemaLoadError(f"protobuf support is not installed ({exc.name} is missing)",
                              source=spec, hint="pip install 'compatfuzz[protobuf]'") from None
    return proto
