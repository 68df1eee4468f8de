"""The door every CRD comes in by: refuse what the API server refuses, in its words.

Why: compatfuzz judges "as a real API server would", so a CRD that ``kubectl apply``
refuses must not be sampled, fuzzed or diffed as if it were valid (a release gated on
compatfuzz would learn from ``kubectl`` that its CRD is invalid), and one the server
accepts must not be refused. :func:`validate_crd` (``_crd_validation``, a port of
``apiextensions/validation.ValidateCustomResourceDefinition``) finds the problems; this
module turns them into one error naming the file, the line and the server's message,
and the server's warnings (unknown fields, unrecognized formats) into :class:`CRDWarning`.

``sample``, ``init``, ``fuzz`` (and the pytest plugin, through the same API loading) call
:func:`admit`; ``diff`` calls :func:`refusals` and reports an invalid NEW as its first
finding (a release gate must fail) and an invalid OLD as a note, going on where it can.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from compatfuzz.apiserver._crd_problem import CRDProblem, field_pointer
from compatfuzz.apiserver._crd_validation import validate_crd
from compatfuzz.errors import CompatfuzzWarning, SchemaLoadError
from compatfuzz.schema import CRD, Schema
from compatfuzz.schema._positions import pointer_line

__all__ = ["CRDRefused", "CRDWarning", "admit", "admit_schema", "located", "problems",
           "refusal_text", "refused"]

#: problems shown in full in one error; the rest are counted
SHOWN = 8

_CACHE: dict[int, tuple[Any, tuple[CRDProblem, ...]]] = {}
_CACHE_SIZE = 64


class CRDWarning(CompatfuzzWarning):
    """The API server accepts the CRD and warns (``kubectl apply`` prints ``Warning:``)."""


class CRDRefused(SchemaLoadError):
    """The API server refuses this CRD; ``problems`` are its errors, in its order."""

    def __init__(self, message: str, *, source: str = "<unknown>", pointer: str = "",
                 hint: str = "", problems: Sequence[CRDProblem] = (),
                 lines: Sequence[str] = ()) -> None:
        super().__init__(message, source=source, pointer=pointer, hint=hint)
        self.problems = tuple(problems)
        #: each problem as ``FILE:LINE: message``
        self.lines = tuple(lines)


def problems(crd: CRD) -> tuple[CRDProblem, ...]:
    """Every error and warning the API server reports for ``crd`` (none for a CRD built in
    memory without its document). Cached per document: a file is checked once however
    many times its CRD is loaded."""
    doc = crd.document
    if doc is None:
        return ()
    hit = _CACHE.get(id(doc))
    if hit is not None and hit[0] is doc:
        return hit[1]
    found = tuple(validate_crd(doc))
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(doc)] = (doc, found)  # the document is kept alive, so its id stays its own
    return found


def _line(crd: CRD, problem: CRDProblem) -> int | None:
    if crd.document is None or crd.source.startswith("<"):
        return None
    return pointer_line(crd.source, crd.index, crd.pointer + field_pointer(problem,
                                                                           crd.document))


def _where(crd: CRD, problem: CRDProblem) -> str:
    line = _line(crd, problem)
    return f"{crd.source}:{line}" if line else crd.source


def located(crd: CRD, errors: Sequence[CRDProblem]) -> list[str]:
    """Each error as ``FILE:LINE: message`` (the server's message)."""
    return [f"{_where(crd, p)}: {p.message}" for p in errors]


def refusal_text(crd: CRD, errors: Sequence[CRDProblem]) -> str:
    """The errors as ``kubectl apply`` words them, each with its file and line."""
    shown = "\n".join(f"  {line}" for line in located(crd, errors[:SHOWN]))
    more = f"\n  ... and {len(errors) - SHOWN} more" if len(errors) > SHOWN else ""
    return (f'the API server refuses this CRD: The CustomResourceDefinition "{crd.name}" is '
            f"invalid ({len(errors)} error{'s' if len(errors) != 1 else ''}):\n{shown}{more}")


def refused(crd: CRD) -> CRDRefused | None:
    """The error ``kubectl apply`` would give for ``crd``, or ``None``; warns its warnings."""
    found = problems(crd)
    for p in found:
        if p.warning:
            warnings.warn(f"{_where(crd, p)}: the API server warns: {p.message}", CRDWarning,
                          stacklevel=3)
    errors = [p for p in found if not p.warning]
    if not errors:
        return None
    return CRDRefused(
        refusal_text(crd, errors), problems=errors, lines=located(crd, errors),
        source=crd.source,
        hint="change the CRD where each message points; the API server (kubectl apply) "
             "refuses it with these words, so no object of it can be served")


def admit(crds: Iterable[CRD]) -> None:
    """Raise :class:`CRDRefused` for the first CRD the API server refuses."""
    for crd in crds:
        error = refused(crd)
        if error is not None:
            raise error


def admit_schema(schema: Schema) -> None:
    """:func:`admit` the CRD a schema was loaded from (``load_schema`` of a CRD file keeps
    it in ``meta["definition_of"]``); any other schema passes."""
    crd = schema.meta.get("definition_of")
    if isinstance(crd, CRD):
        admit([crd])
