"""One way to name a schema on the command line, for every command.

``sample`` used to take ``k8s:apps/v1/Deployment --release 1.25`` and ``diff``
``kubernetes:1.25:apps/v1:Deployment``; each answered the other's form with "file not
found", and only ``diff`` took ``FILE#NAME``.  Both now parse with :func:`parse_spec`::

    FILE                                a schema, OpenAPI/Swagger document or CRD file
    FILE#NAME                           one definition of a document, or one CRD of a file
    FILE@VERSION                        one served version of a CRD
    FILE#NAME@VERSION                   both
    k8s:[RELEASE:]API_VERSION:KIND      a built-in kind (kubernetes: works too; a '/'
                                        before KIND as well: k8s:apps/v1/Deployment)

A file that exists under the whole text wins (a path may hold ``#``, ``@`` or ``:``).
:func:`spec_hint` rewrites the Python-argument hints of :func:`load_schema` errors
(``pass version= ...``) into this syntax for command-line users.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from compatfuzz.errors import SchemaLoadError

__all__ = ["SPEC_HELP", "SchemaSpec", "parse_spec", "spec_hint"]

SPEC_HELP = ("FILE, FILE#NAME (a definition or one CRD of the file), FILE@VERSION (a CRD "
             "version), or k8s:[RELEASE:]API_VERSION:KIND (a built-in kind, e.g. "
             "k8s:1.25:apps/v1:Deployment)")

_BUILTIN = re.compile(
    r"^(?:k8s|kubernetes):(?:(?P<release>\d+\.\d+):)?(?P<api>(?:[\w.-]+/)?v\w+)[:/](?P<kind>\w+)$"
)


@dataclass(frozen=True)
class SchemaSpec:
    """A parsed command-line schema name: a file part, or a built-in kind."""

    text: str
    path: Path | None = None
    definition: str | None = None
    version: str | None = None
    release: str | None = None
    api_version: str | None = None
    kind: str | None = None

    @property
    def builtin(self) -> bool:
        return self.kind is not None


def parse_spec(text: str) -> SchemaSpec:
    """Split a command-line schema name into its parts (see the module docstring).

    Raises:
        SchemaLoadError: it starts with ``k8s:``/``kubernetes:`` but is not a built-in
            kind's name (the message shows the form).
    """
    if not Path(text).exists() and text.startswith(("k8s:", "kubernetes:")):
        match = _BUILTIN.match(text)
        if match is None:
            raise SchemaLoadError(
                "not a built-in kind's name", source=text,
                hint="write k8s:[RELEASE:]API_VERSION:KIND, e.g. k8s:apps/v1:Deployment or "
                     "k8s:1.25:v1:ConfigMap (kubernetes: works as well as k8s:)",
            )
        return SchemaSpec(text, release=match["release"], api_version=match["api"],
                          kind=match["kind"])
    path, definition, version = Path(text), None, None
    if not path.exists() and "@" in text:
        head, _, version = text.rpartition("@")
        path = Path(head)
    if not path.exists() and "#" in str(path):
        head, _, definition = str(path).partition("#")
        path = Path(head)
        if definition.startswith("/"):
            definition = "#" + definition
    return SchemaSpec(text, path=path, definition=definition or None, version=version or None)


_REWRITES = (
    (re.compile(r"pass version= as one of: (?P<rest>.*)"),
     "append @VERSION to the file name ({file}@VERSION), one of: {rest}"),
    (re.compile(r"pass definition='<name>' \(a key of (?P<rest>[^)]*)\)(?P<tail>.*)"),
     "append #NAME to the file name ({file}#NAME), NAME a key of {rest}{tail}"),
    (re.compile(r"pass definition='<crd name or kind>' to pick one.*"),
     "append #NAME to the file name ({file}#NAME), NAME a CRD's name or kind"),
    (re.compile(r"pass definition= as a CRD name, kind or plural"),
     "after '#' write a CRD's name, kind or plural ({file}#NAME)"),
)


def spec_hint(exc: SchemaLoadError, file: str) -> SchemaLoadError:
    """``exc`` with a hint in command-line spec syntax instead of Python arguments."""
    hint = exc.hint
    for pattern, replacement in _REWRITES:
        match = pattern.search(hint)
        if match:
            hint = hint[:match.start()] + replacement.format(file=file, **match.groupdict())
            break
    if hint == exc.hint and "version=" not in exc.reason and "definition=" not in exc.reason:
        return exc
    reason = (exc.reason.replace("definition= was not given", "no #NAME was given")
              .replace("drop version=", "drop @VERSION"))
    return type(exc)(reason, source=exc.source, pointer=exc.pointer, hint=hint)
