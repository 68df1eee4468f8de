"""Read JSON and YAML files into plain Python data, with errors that point at the line.

YAML is read with a *safe* loader (the C one when PyYAML has it) whose timestamp resolver
is removed: Kubernetes parses YAML into JSON, where ``2024-01-01`` stays a string, so a
``default: 2024-01-01`` must not turn into a ``datetime.date`` here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar

import yaml

from compatfuzz.errors import SchemaLoadError

__all__ = ["parse_documents", "read_documents", "read_documents_cached"]

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(_Base):  # type: ignore[misc]
    """Safe loader that leaves timestamps as strings, like Kubernetes' YAML-to-JSON."""

    yaml_implicit_resolvers: ClassVar[dict[Any, list[Any]]] = {
        first: [r for r in resolvers if r[0] != _TIMESTAMP]
        for first, resolvers in _Base.yaml_implicit_resolvers.items()
    }


def parse_documents(text: str, *, source: str = "<string>") -> list[Any]:
    """Parse JSON or (multi-document) YAML text; empty documents are dropped."""
    stripped = text.lstrip()
    looks_json = source.endswith(".json") or stripped[:1] in ("{", "[")
    if looks_json:
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:
            if source.endswith(".json"):
                raise SchemaLoadError(
                    f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                    source=source,
                    hint=f"fix the syntax at line {exc.lineno} column {exc.colno} (a missing "
                    "comma, quote or bracket, or a trailing comma, is the usual cause)",
                ) from None
            # not a .json file: it may still be YAML that happens to start with a brace
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        what = " ".join(p for p in (exc.context, exc.problem) if p)
        line = mark.line + 1 if mark else 0
        raise SchemaLoadError(
            f"invalid YAML at {where}: {what}",
            source=source,
            hint=f"check the indentation and quoting at line {line} and the line above it "
            "(YAML indents with spaces, never tabs; quote values that contain ': ' or '#')",
        ) from None
    except yaml.YAMLError as exc:
        raise SchemaLoadError(f"invalid YAML: {exc}", source=source,
                              hint="check that the file is YAML or JSON") from None
    return [d for d in docs if d is not None]


def read_documents(path: str | os.PathLike[str]) -> list[Any]:
    """Return the documents of a JSON or YAML file (all of a ``---``-separated stream).

    Empty documents are dropped. Only safe YAML tags are accepted.

    Raises:
        SchemaLoadError: the file is missing or unreadable, or malformed; the message
            names the file, the line and column, and a fix.

    .. versionadded:: 0.1
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SchemaLoadError("file not found", source=str(p),
                              hint="check the path (relative paths are taken from "
                              f"the current directory, {Path.cwd()})") from None
    except IsADirectoryError:
        raise SchemaLoadError("is a directory, not a schema file", source=str(p),
                              hint="pass one .yaml/.json file") from None
    except UnicodeDecodeError as exc:
        raise SchemaLoadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                              source=str(p), hint="save the file as UTF-8") from None
    except OSError as exc:
        raise SchemaLoadError(f"cannot read: {exc.strerror}", source=str(p),
                              hint="check the file permissions") from None
    return parse_documents(text, source=str(p))


_CACHE: dict[str, tuple[int, int, list[Any]]] = {}


def read_documents_cached(path: Path) -> list[Any]:
    """Like :func:`read_documents`, memoised on (path, mtime, size).

    Callers must treat the result as read-only: every transform in this package is pure,
    so sharing the parsed ``_definitions.json`` (1.8 MB) between 300 kinds is safe.
    """
    key = str(path)
    try:
        st = path.stat()
    except OSError:
        return read_documents(path)  # raises the right SchemaLoadError
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
        return hit[2]
    docs = read_documents(path)
    _CACHE[key] = (st.st_mtime_ns, st.st_size, docs)
    return docs
