"""Exceptions and warnings raised by compatfuzz.

One root so callers can catch everything we raise; misuse is also a ``TypeError`` so
that it reads as a programming error, not a data error::

    CompatfuzzError
    ├── InvalidArgument (also TypeError)   a public function was called wrongly
    ├── SchemaLoadError                    a schema file or document cannot be used
    │   ├── UnresolvableRef                a $ref points nowhere
    │   └── RefOutsideRoot                 a $ref would read a file outside the allowed folders
    ├── UnsupportedSchema                  valid schema, but no strategy can be built for it
    ├── ConverterError                     a user converter raised or returned garbage
    ├── InternalError                      compatfuzz's own fault (a bug to report)
    └── NotEquivalent                      two objects differ semantically (carries the diff)
        └── NotValid                       a converted object is invalid in its new version

    CompatfuzzWarning (UserWarning)
    ├── UnsupportedRuleWarning             a CEL rule or keyword we cannot honour by construction
    └── UnknownKeywordWarning              a schema keyword nobody defines (``maxLenght``)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CompatfuzzError",
    "CompatfuzzWarning",
    "ConverterError",
    "Disagreement",
    "ExampleRejected",
    "InternalError",
    "InvalidArgument",
    "NotEquivalent",
    "NotValid",
    "RefOutsideRoot",
    "SchemaLoadError",
    "UnknownKeywordWarning",
    "UnresolvableRef",
    "UnsupportedRuleWarning",
    "UnsupportedSchema",
]


class CompatfuzzError(Exception):
    """Root of every exception compatfuzz raises on purpose."""


class InvalidArgument(CompatfuzzError, TypeError):
    """A public function was called with an argument it cannot use."""


class SchemaLoadError(CompatfuzzError):
    """A schema source cannot be used; the message names the file, the JSON path and a fix.

    ``source`` is the file (or ``<string>``), ``pointer`` the JSON pointer inside it
    (``""`` for the whole document) and ``hint`` the suggested fix.
    """

    def __init__(self, message: str, *, source: str = "<unknown>", pointer: str = "",
                 hint: str = "") -> None:
        self.source = source
        self.pointer = pointer
        self.hint = hint
        self.reason = message
        where = source + (f" at {_pointer_to_path(pointer)}" if pointer else "")
        text = f"{where}: {message}"
        if hint:
            text += f"\n  fix: {hint}"
        super().__init__(text)


class UnresolvableRef(SchemaLoadError):
    """A ``$ref`` names a document or a location that does not exist."""


class RefOutsideRoot(SchemaLoadError):
    """A ``$ref`` names a file outside the folders a schema may read.

    A schema is data, often from someone else: without this bound ``{"$ref": "/etc/passwd"}``
    would read any file the user can. The allowed folders are the root schema's folder
    (and the config's), plus any given with ``--allow-ref-root`` / ``allow_ref_roots``.
    """


class UnsupportedSchema(CompatfuzzError):
    """The schema is valid but we cannot build a strategy that honours it."""


class ConverterError(CompatfuzzError):
    """A user converter raised, or returned something that is not a JSON object.

    ``user_traceback`` holds the frames of the user's code that raised (rendered as Python
    renders a traceback, compatfuzz's own frames left out), or ``""``.
    """

    user_traceback: str = ""


class ExampleRejected(CompatfuzzError):
    """The example is one the judge cannot take, through no fault of the code under test
    (an object larger than a real API server stores): it is discarded, as Hypothesis's
    ``reject()`` discards one, not counted as a failure."""


class InternalError(CompatfuzzError):
    """compatfuzz is at fault, not the code under test: say, its API-server model refuses
    an object its own generator drew, before any converter ran. The message names the
    field and value; please report it as a compatfuzz bug."""


class NotEquivalent(CompatfuzzError, AssertionError):
    """Two objects differ semantically; ``diff`` holds the field-path changes."""

    def __init__(self, message: str, diff: Any = None) -> None:
        self.diff = diff
        super().__init__(message)


class NotValid(NotEquivalent):
    """A converted object is not valid in the version it was converted to (the ``valid``
    property): a failure of validity, reported as such rather than as a difference.

    .. versionadded:: 0.4
    """


class CompatfuzzWarning(UserWarning):
    """Root of compatfuzz's warnings."""


class UnsupportedRuleWarning(CompatfuzzWarning):
    """A validation rule could not be honoured when generating; objects may violate it."""


class UnknownKeywordWarning(CompatfuzzWarning):
    """A schema uses a keyword no supported dialect defines, usually a typo (``maxLenght``):
    the constraint it was meant to add is not checked."""


def _pointer_to_path(pointer: str) -> str:
    """Render a JSON pointer the way the user's YAML reads: ``spec.versions[0].schema``."""
    if not pointer:
        return "$"
    out = "$"
    for raw in pointer.lstrip("/").split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if part.isdigit():
            out += f"[{part}]"
        elif part.replace("_", "").replace("-", "").isalnum() and "." not in part:
            out += f".{part}"
        else:
            out += f"[{part!r}]"
    return out


class Disagreement(NotEquivalent):
    """``--apiserver both``: compatfuzz's API-server model and the real kube-apiserver
    answered one step of a round trip differently (``step``, ``model``, ``server``).

    Its own failure kind: the converter is not to blame, the model is (or the server's
    Kubernetes version differs from the one the model follows); please report it."""

    def __init__(self, message: str, diff: Any = None, *, step: str = "",
                 model: Any = None, server: Any = None) -> None:
        self.step = step
        self.model = model
        self.server = server
        super().__init__(message, diff)
