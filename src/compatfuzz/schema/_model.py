"""The loaded-schema model shared by every part of compatfuzz.

Every loader (CRD, OpenAPI, JSON Schema, Kubernetes definitions) produces the same thing:
a *self-contained* JSON Schema 2020-12 document whose ``$ref`` values are all local
(``#/$defs/<name>``), plus Kubernetes ``x-kubernetes-*`` extensions kept verbatim.
Normalising once at load time means strategies, semantic equality and compat checks
each handle one dialect instead of six (STYLE.md 8: pure schema->schema transforms).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from compatfuzz.errors import InvalidArgument, UnresolvableRef

__all__ = ["CRD", "CRDVersion", "Schema", "resolve_pointer"]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """Return the value at a JSON pointer (``/a/b/0``) in ``document``; ``KeyError`` if absent."""
    node = document
    if pointer in ("", "/"):
        return node
    for raw in pointer.lstrip("/").split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, Mapping):
            node = node[part]
        else:
            raise KeyError(pointer)
    return node


@lru_cache(maxsize=2)
def _validator_class(kubernetes: bool) -> Any:
    """Draft 2020-12 with RE2 patterns; for Kubernetes also the API server's ``integer``
    and its per-type format stripping (``_formats.kubernetes_keywords``)."""
    import jsonschema.validators

    from compatfuzz.schema._formats import kubernetes_keywords, kubernetes_type_checker
    from compatfuzz.schema._pattern import pattern_keywords

    base = jsonschema.Draft202012Validator
    if not kubernetes:
        return jsonschema.validators.extend(base, pattern_keywords())  # type: ignore[no-untyped-call]
    return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        base, {**pattern_keywords(kubernetes=True), **kubernetes_keywords()},
        type_checker=kubernetes_type_checker(base.TYPE_CHECKER))


@dataclass(frozen=True, eq=False, repr=False)
class Schema:
    """A self-contained, normalised JSON Schema (2020-12 + ``x-kubernetes-*``).

    ``root`` is the document; all ``$ref`` in it are local (``#/...``). ``source`` and
    ``pointer`` say where it came from, for error messages. ``name`` is a human label
    (``"Widget v1"``, ``"io.k8s.api.apps.v1.Deployment"``). ``kubernetes`` turns on
    Kubernetes semantics: well-known types by definition name, ObjectMeta realism,
    list-type/map-type rules, CEL validations.
    """

    root: Mapping[str, Any]
    source: str = "<memory>"
    pointer: str = ""
    name: str = ""
    kubernetes: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    def resolve(self, ref: str) -> Mapping[str, Any]:
        """Return the subschema a local ``$ref`` (``#/$defs/X``) points to."""
        if not ref.startswith("#"):
            raise UnresolvableRef(
                f"non-local $ref {ref!r} in a loaded schema",
                source=self.source, pointer=self.pointer,
                hint="load the document with compatfuzz.schema.load_schema(), which bundles "
                "external references",
            )
        try:
            target = resolve_pointer(self.root, ref[1:])
        except (KeyError, IndexError, ValueError):
            raise UnresolvableRef(
                f"$ref {ref!r} points to nothing", source=self.source, pointer=self.pointer,
                hint="check the spelling of the definition name",
            ) from None
        if isinstance(target, bool):
            return {} if target else {"not": {}}
        return target  # type: ignore[no-any-return]

    @cached_property
    def validator(self) -> Any:
        """A ``jsonschema`` 2020-12 validator asserting formats (Kubernetes formats if so),
        checking ``pattern`` with RE2 so that no pattern can backtrack catastrophically
        (see ``_pattern``)."""
        from compatfuzz.schema._formats import format_checker

        return _validator_class(self.kubernetes)(
            dict(self.root), format_checker=format_checker(self.kubernetes)
        )

    def is_valid(self, instance: Any) -> bool:
        return bool(self.validator.is_valid(instance))

    def __repr__(self) -> str:
        return f"<Schema {self.name or self.source}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


@dataclass(frozen=True)
class CRDVersion:
    """One entry of a CRD's ``spec.versions``."""

    name: str
    served: bool
    storage: bool
    schema: Schema | None
    deprecated: bool = False


@dataclass(frozen=True)
class CRD:
    """A CustomResourceDefinition: its identity and its versions, in file order."""

    group: str
    kind: str
    plural: str
    scope: str
    versions: tuple[CRDVersion, ...]
    source: str = "<memory>"
    pointer: str = ""
    #: the CRD as written (for the API server's CRD validation, ``compatfuzz.apiserver``)
    #: and the index of its document in the file
    document: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    index: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def storage_version(self) -> str | None:
        for v in self.versions:
            if v.storage:
                return v.name
        return None

    def version(self, name: str) -> CRDVersion:
        for v in self.versions:
            if v.name == name:
                return v
        names = ", ".join(v.name for v in self.versions)
        raise InvalidArgument(
            f"CRD {self.name} has no version {name!r}; it has: {names}"
        )

    def __iter__(self) -> Iterator[CRDVersion]:
        return iter(self.versions)
