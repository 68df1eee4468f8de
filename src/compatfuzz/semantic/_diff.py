"""The result of :func:`compatfuzz.semantic.diff`: field-path changes that read like kubectl.

Paths follow Kubernetes field paths (``k8s.io/apimachinery/pkg/util/validation/field``):
``spec.template.spec.containers[0].image``; map keys that are not plain names are bracketed
(``metadata.labels[app.kubernetes.io/name]``); items of a ``list-type: map`` list are named
by their keys instead of their position, ``spec.containers[name="app"].image``, because
their position carries no meaning and differs between the two sides; for the same reason
elements of a ``list-type: set`` are named by their value, ``finalizers[="a"]``. Keys that
would be ambiguous in brackets are JSON strings: ``metadata.annotations["a]b"]``, ``[""]``.
"""

from __future__ import annotations

import enum
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

__all__ = ["Change", "ChangeKind", "Diff", "join_key", "join_name", "join_value"]

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - Python 3.10

    class StrEnum(str, enum.Enum):
        def __str__(self) -> str:
            return str(self.value)


class ChangeKind(StrEnum):
    """What happened to a field going from the old object to the new one."""

    LOST = "lost"  # present (not null/empty) before, absent after
    ADDED = "added"  # absent before, present after
    CHANGED = "changed"  # same JSON type, different meaning
    TYPE_CHANGED = "type-changed"  # JSON type differs (1 vs "1", 1 vs 1.0 outside number)


_PLAIN = re.compile(r"[A-Za-z0-9_$-]+")
_QUOTE = re.compile(r'[\[\]"\\\x00-\x1f\x7f]')


def join_name(path: str, name: object) -> str:
    """Append a field or map key: ``.name``; ``[key]`` when it is not a plain name; and
    ``["key"]`` (a JSON string) when it is empty, has surrounding spaces or holds a
    bracket, quote, backslash or control character, so every key reads back unambiguously
    (``[""]``, ``["a]b"]``). Field-path globs accept all three spellings."""
    text = str(name)
    if _PLAIN.fullmatch(text):
        return f"{path}.{text}" if path else text
    if not text or text.strip() != text or _QUOTE.search(text):
        return f"{path}[{json.dumps(text, ensure_ascii=False)}]"
    return f"{path}[{text}]"


def join_value(path: str, value: Any) -> str:
    """Append a set element by its value: ``finalizers[="a"]`` (structured-merge-diff's
    notation); set elements have no position shared by the two sides."""
    return f"{path}[={json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)}]"


def join_key(path: str, keys: Sequence[tuple[str, Any]]) -> str:
    """Append a list-map item by its keys: ``[name="app"]``, ``[port=80,protocol="TCP"]``."""
    inner = ",".join(f"{k}={json.dumps(v, sort_keys=True, default=str)}" for k, v in keys)
    return f"{path}[{inner}]"


def _short(value: Any, limit: int = 72) -> str:
    try:
        text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Change:
    """One difference: where (``path``), what (``kind``), and the old and new values.

    ``old``/``new`` are the raw values from the two objects (``None`` when absent).
    ``detail`` says why equal-looking values differ (e.g. the canonical quantities).
    """

    path: str
    kind: ChangeKind
    old: Any
    new: Any
    detail: str = ""

    def __str__(self) -> str:
        where = self.path or "<root>"
        if self.kind is ChangeKind.ADDED:
            text = f"{where}: added {_short(self.new)}"
        elif self.kind is ChangeKind.LOST:
            text = f"{where}: lost {_short(self.old)}"
        else:
            text = f"{where}: {_short(self.old)} -> {_short(self.new)}"
            if self.kind is ChangeKind.TYPE_CHANGED:
                text += f" (type {jtype(self.old)} -> {jtype(self.new)})"
        if self.detail:
            text += f"  [{self.detail}]"
        return text


def jtype(v: Any) -> str:
    """The JSON type of ``v``: ``null``, ``boolean``, ``integer``, ..."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, Mapping):
        return "object"
    return type(v).__name__


class Diff(Sequence[Change]):
    """An immutable sequence of :class:`Change`; empty (and falsy) iff the objects are equal.

    ``str(diff)`` prints one change per line; ``diff.paths`` lists the changed paths.
    """

    __slots__ = ("_changes",)

    def __init__(self, changes: Sequence[Change] = ()) -> None:
        self._changes = tuple(changes)

    @overload
    def __getitem__(self, index: int) -> Change: ...

    @overload
    def __getitem__(self, index: slice) -> Diff: ...

    def __getitem__(self, index: int | slice) -> Change | Diff:
        if isinstance(index, slice):
            return Diff(self._changes[index])
        return self._changes[index]

    def __len__(self) -> int:
        return len(self._changes)

    def __iter__(self) -> Iterator[Change]:
        return iter(self._changes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Diff):
            return self._changes == other._changes
        if isinstance(other, (list, tuple)):
            return list(self._changes) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._changes)

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self._changes]

    def __str__(self) -> str:
        if not self._changes:
            return "no differences"
        return "\n".join(str(c) for c in self._changes)

    def __repr__(self) -> str:
        return f"Diff({list(self._changes)!r})"
