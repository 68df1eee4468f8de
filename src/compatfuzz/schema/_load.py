"""``load_schema`` and ``load_crds``: turn a file or document into a :class:`Schema`.

Auto-detection looks at the document itself, never at the file name: a CRD (or a
``kind: List`` of them), an OpenAPI 3.0/3.1 document (``openapi:``), Swagger 2.0 /
Kubernetes OpenAPI v2 (``swagger: "2.0"``), else JSON Schema (dialect from ``$schema``,
2020-12 when absent; kubernetes-validate's per-kind files are this case).
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compatfuzz.errors import InvalidArgument, SchemaLoadError
from compatfuzz.schema._bundle import bundle
from compatfuzz.schema._check import check_keywords
from compatfuzz.schema._keywords import escape
from compatfuzz.schema._model import CRD, CRDVersion, Schema, resolve_pointer
from compatfuzz.schema._normalize import normalize
from compatfuzz.schema._read import check_depth, read_documents
from compatfuzz.schema._unknown import warn_unknown_keywords

__all__ = ["detect_dialect", "load_crds", "load_schema", "make_schema"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_CRD_API_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
_SCHEMA_DIALECTS = (
    ("draft-04", "draft-04"), ("draft-06", "draft-06"), ("draft-07", "draft-07"),
    ("2019-09", "2019-09"), ("2020-12", "2020-12"),
)
_PRESERVE = "{type: object, x-kubernetes-preserve-unknown-fields: true}"


def _is_crd(doc: Any) -> bool:
    return (isinstance(doc, Mapping) and doc.get("kind") == "CustomResourceDefinition"
            and doc.get("apiVersion") in _CRD_API_VERSIONS)


def _is_list(doc: Any) -> bool:
    """A Kubernetes ``List`` (``kind: List`` or ``*List`` with an ``items`` list): an
    object kubectl flattens into its items (``k8s.io/cli-runtime/pkg/resource/visitor.go``,
    ``FlattenListVisitor``), never a schema, however deeply nested."""
    return (isinstance(doc, Mapping) and isinstance(doc.get("apiVersion"), str)
            and isinstance(doc.get("kind"), str) and doc["kind"].endswith("List")
            and isinstance(doc.get("items"), list))


def _crd_documents(docs: Sequence[Any]) -> list[tuple[Mapping[str, Any], int, str]]:
    """(crd document, index of the file document, pointer inside it) for every CRD,
    nested Lists flattened (iteratively; the reader bounds their depth)."""
    found: list[tuple[Mapping[str, Any], int, str]] = []
    for i, doc in enumerate(docs):
        stack: list[tuple[Any, str]] = [(doc, "")]
        while stack:
            node, at = stack.pop()
            if _is_crd(node):
                found.append((node, i, at))
            elif _is_list(node):
                stack.extend(reversed([(item, f"{at}/items/{j}")
                                       for j, item in enumerate(node["items"])]))
    return found


def load_crds(path: str | os.PathLike[str]) -> list[CRD]:
    """Return every CustomResourceDefinition in a YAML/JSON file, in file order.

    Multi-document files and ``kind: List`` wrappers are read; other documents are
    skipped. Each version keeps its ``served``/``storage``/``deprecated`` flags and its
    ``schema.openAPIV3Schema`` normalised to 2020-12 (``nullable`` etc., see
    :func:`normalize`). ``apiextensions.k8s.io/v1beta1`` CRDs are read too, with the
    shared ``spec.validation`` schema given to every version.

    >>> crds = load_crds("config/crd/bases/cluster.x-k8s.io_clusters.yaml")  # doctest: +SKIP
    >>> [v.name for v in crds[0].versions]                                   # doctest: +SKIP
    ['v1beta1', 'v1beta2']

    Raises:
        SchemaLoadError: unreadable/malformed file, no CRD in it, or a CRD that
            Kubernetes would reject (e.g. a v1 version without a schema); the message
            names the file, the JSON path (``spec.versions[1].schema.openAPIV3Schema``)
            and the fix.

    .. versionadded:: 0.1
    """
    source = str(path)
    docs = read_documents(path)
    crds = crds_from_documents(docs, source=source)
    if not crds:
        kinds = sorted({str(d.get("kind")) for d in docs if isinstance(d, Mapping)})
        found = f" (it holds: {', '.join(kinds)})" if kinds else " (it is empty)"
        raise SchemaLoadError(
            f"no CustomResourceDefinition in this file{found}", source=source,
            hint="pass a file with 'apiVersion: apiextensions.k8s.io/v1' and "
            "'kind: CustomResourceDefinition' (e.g. controller-gen's config/crd/bases/*.yaml), "
            "or use load_schema() for OpenAPI / JSON Schema files",
        )
    return crds


def crds_from_documents(docs: Sequence[Any], *, source: str = "<memory>") -> list[CRD]:
    """Parse the CRDs among already-read documents (see :func:`load_crds`)."""
    found = _crd_documents(docs)
    return [replace(_parse_crd(doc, source=source,
                               where=source if len(docs) == 1 else f"{source} (document {i + 1})",
                               pointer=pointer), document=doc, index=i)
            for doc, i, pointer in found]


def _need(value: Any, kind: type | tuple[type, ...], what: str, at: tuple[str, str],
          hint: str) -> Any:
    """Return ``value`` if it is a ``kind``, else raise naming ``at`` = (file, pointer)."""
    where, pointer = at
    if not isinstance(value, kind):
        got = "nothing" if value is None else f"{value!r} ({type(value).__name__})"
        raise SchemaLoadError(f"expected {what} but found {got}", source=where,
                              pointer=pointer, hint=hint)
    return value


def _parse_crd(doc: Mapping[str, Any], *, source: str, where: str, pointer: str) -> CRD:
    v1 = doc["apiVersion"] == "apiextensions.k8s.io/v1"
    spec = _need(doc.get("spec"), Mapping, "a mapping", (where, pointer + "/spec"),
                 "a CRD needs a spec with group, names and versions")
    group = _need(spec.get("group"), str, "a string", (where, pointer + "/spec/group"),
                  "set spec.group, e.g. 'cluster.x-k8s.io'")
    names = _need(spec.get("names"), Mapping, "a mapping", (where, pointer + "/spec/names"),
                  "set spec.names.kind and spec.names.plural")
    kind = _need(names.get("kind"), str, "a string", (where, pointer + "/spec/names/kind"),
                 "set spec.names.kind, e.g. 'Cluster'")
    plural = names.get("plural") or kind.lower() + "s"
    scope = str(spec.get("scope", "Namespaced"))
    shared = None
    validation = spec.get("validation")
    if not v1 and isinstance(validation, Mapping):
        shared = validation.get("openAPIV3Schema")
    raw_versions = spec.get("versions")
    if not raw_versions and not v1 and isinstance(spec.get("version"), str):
        raw_versions = [{"name": spec["version"], "served": True, "storage": True}]
    raw_versions = _need(raw_versions, list, "a non-empty list",
                         (where, pointer + "/spec/versions"),
                         "list the API versions under spec.versions (name, served, storage, "
                         "schema)")
    if not raw_versions:
        _need(None, list, "a non-empty list", (where, pointer + "/spec/versions"),
              "list at least one version under spec.versions")
    crd_name = f"{plural}.{group}"
    _unique_versions(raw_versions, crd_name, where, pointer)
    versions = []
    for i, item in enumerate(raw_versions):
        vp = f"{pointer}/spec/versions/{i}"
        raw = _need(item, Mapping, "a mapping", (where, vp), "each version is a mapping")
        vname = _need(raw.get("name"), str, "a string", (where, vp + "/name"),
                      f"give spec.versions[{i}] a name such as 'v1'")
        schema_pointer = vp + "/schema/openAPIV3Schema"
        sch = raw.get("schema")
        body = sch.get("openAPIV3Schema") if isinstance(sch, Mapping) else None
        if body is None and shared is not None:
            body, schema_pointer = shared, pointer + "/spec/validation/openAPIV3Schema"
        schema = None
        if body is None and v1:
            raise SchemaLoadError(
                f"version {vname!r} of CRD {crd_name} has no schema", source=where,
                pointer=schema_pointer,
                hint=f"add 'schema: {{openAPIV3Schema: {_PRESERVE}}}' under "
                f"spec.versions[{i}] at least; apiextensions.k8s.io/v1 requires a "
                "structural schema for every version",
            )
        if body is not None:
            _need(body, Mapping, "a schema mapping", (where, schema_pointer),
                  f"openAPIV3Schema must be a mapping such as {_PRESERVE}")
            if body is not shared or i == 0:  # a shared v1beta1 schema: warn once
                check_keywords(body, source=where, pointer=schema_pointer, kubernetes=True)
                warn_unknown_keywords(body, source=where, pointer=schema_pointer,
                                      kubernetes=True)
            served = bool(raw.get("served", True))
            storage = bool(raw.get("storage", len(raw_versions) == 1))
            schema = make_schema(
                normalize(body, dialect="openapi-3.0"), source=source, pointer=schema_pointer,
                name=f"{kind} {vname} ({crd_name})", kubernetes=True,
                meta={"openapi": body,  # the raw structural schema, for the API-server model
                      "group": group, "kind": kind, "version": vname, "served": served,
                      "storage": storage, "crd": crd_name, "plural": plural, "scope": scope,
                      "deprecated": bool(raw.get("deprecated", False))},
            )
        versions.append(CRDVersion(
            name=vname, served=bool(raw.get("served", True)),
            storage=bool(raw.get("storage", len(raw_versions) == 1)), schema=schema,
            deprecated=bool(raw.get("deprecated", False)),
        ))
    stored = [v.name for v in versions if v.storage]
    if len(stored) != 1:
        # The API server refuses such a CRD; guessing one would test the wrong hub.
        raise SchemaLoadError(
            f"CRD {crd_name} must mark exactly one version as the storage version, "
            f"but {'none is' if not stored else ', '.join(stored) + ' are'}",
            source=where, pointer=pointer + "/spec/versions",
            hint="set 'storage: true' on exactly one of: "
                 + ", ".join(v.name for v in versions),
        )
    return CRD(group=group, kind=kind, plural=plural, scope=scope, versions=tuple(versions),
               source=source, pointer=pointer)


def _unique_versions(raw_versions: Sequence[Any], crd_name: str, where: str,
                     pointer: str) -> None:
    """Refuse a version name listed twice, as the API server does
    (``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``,
    ``ValidateCustomResourceDefinitionSpec``: "must contain unique version names");
    the later one used to shadow the earlier silently."""
    first: dict[str, int] = {}
    for i, item in enumerate(raw_versions):
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str):
            continue
        if name in first:
            raise SchemaLoadError(
                f"spec.versions: Invalid value: must contain unique version names: "
                f"{name!r} is spec.versions[{first[name]}] and spec.versions[{i}] of CRD "
                f"{crd_name}", source=where, pointer=f"{pointer}/spec/versions/{i}/name",
                hint="rename or remove one of them; the API server refuses this CRD")
        first[name] = i


def make_schema(root: Any, *, source: str, pointer: str, name: str, kubernetes: bool,
                meta: Mapping[str, Any]) -> Schema:
    """Wrap a normalised, bundled root into a :class:`Schema` declaring 2020-12."""
    if not isinstance(root, Mapping):
        root = {} if root is True else {"not": {}}
    root = {"$schema": DRAFT_2020_12, **{k: v for k, v in root.items() if k != "$schema"}}
    return Schema(root=root, source=source, pointer=pointer, name=name, kubernetes=kubernetes,
                  meta=dict(meta))


def detect_dialect(document: Mapping[str, Any]) -> str:
    """Dialect of a non-CRD document: ``openapi-3.x``, ``swagger-2.0`` or a JSON Schema draft."""
    openapi = document.get("openapi")
    if isinstance(openapi, str):
        if openapi.startswith("3.0"):
            return "openapi-3.0"
        if openapi.startswith("3.1"):
            return "openapi-3.1"
        raise SchemaLoadError(f"unsupported OpenAPI version {openapi!r}", pointer="/openapi",
                              hint="compatfuzz reads OpenAPI 3.0 and 3.1, and Swagger 2.0")
    if str(document.get("swagger", "")).startswith("2"):
        return "swagger-2.0"
    declared = document.get("$schema")
    if isinstance(declared, str):
        for needle, dialect in _SCHEMA_DIALECTS:
            if needle in declared:
                return dialect
    return "2020-12"


def _containers(dialect: str) -> tuple[str, ...]:
    if dialect.startswith("openapi"):
        return ("/components/schemas",)
    if dialect == "swagger-2.0":
        return ("/definitions",)
    return ("/$defs", "/definitions")


def _kind_suffix_matches(names: Sequence[str], wanted: str) -> list[str]:
    return [n for n in names if n.rsplit(".", 1)[-1] == wanted]


# A JSON Schema document with only these keys is a definitions file (kubernetes-validate's
# _definitions.json): its root accepts anything, so a definition must be picked.
_DEFS_ONLY = frozenset({"$schema", "$id", "$defs", "definitions", "title", "description",
                        "$comment"})


def _pick_definition(doc: Mapping[str, Any], dialect: str, definition: str | None,
                     source: str) -> tuple[str, str | None]:
    """(pointer, definition name) of the chosen root."""
    containers = _containers(dialect)
    if definition is not None and (definition.startswith("#/") or definition.startswith("/")):
        pointer = definition.lstrip("#")
        try:
            resolve_pointer(doc, pointer)
        except (KeyError, IndexError, ValueError):
            raise SchemaLoadError(f"definition={definition!r} points to nothing", source=source,
                                  pointer=pointer, hint="check the JSON pointer") from None
        return pointer, pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    available: dict[str, str] = {}
    for container in containers:
        try:
            table = resolve_pointer(doc, container)
        except (KeyError, IndexError, ValueError):
            continue
        if isinstance(table, Mapping):
            for name in table:
                available.setdefault(str(name), f"{container}/{escape(str(name))}")
    is_api = dialect.startswith("openapi") or dialect == "swagger-2.0"
    if definition is None:
        if not is_api and (not available or set(doc) - _DEFS_ONLY):
            return "", None
        if len(available) == 1:
            name = next(iter(available))
            return available[name], name
        listing = _listing(sorted(available))
        where = next((c for c in containers
                      if any(v.startswith(c + "/") for v in available.values())),
                     containers[0])
        raise SchemaLoadError(
            f"an {dialect} document holds many schemas"
            + ("" if is_api else " and no root schema")
            + " and definition= was not given"
            + (f"; it has {listing}" if available else "; it has none"),
            source=source, pointer=where,
            hint="pass definition='<name>' (a key of "
            f"{where.lstrip('/').replace('/', '.')}) to pick the schema to test",
        )
    if definition in available:
        return available[definition], definition
    by_kind = _kind_suffix_matches(sorted(available), definition)
    if len(by_kind) == 1:
        return available[by_kind[0]], by_kind[0]
    close = by_kind or difflib.get_close_matches(definition, list(available), n=5, cutoff=0.5)
    raise SchemaLoadError(
        f"no definition {definition!r} in {' or '.join(c.lstrip('/') for c in containers)}"
        + (f" (did you mean: {', '.join(close)}?)" if close else "")
        + (f"; it has {_listing(sorted(available))}" if not close else ""),
        source=source, pointer=containers[0],
        hint="definition names are case-sensitive; pass one of the names above",
    )


def _listing(names: Sequence[str], limit: int = 12) -> str:
    if not names:
        return "no definitions"
    shown = ", ".join(names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"{len(names)} definitions: {shown}{more}"


def _is_kubernetes(root: Mapping[str, Any]) -> bool:
    """Kubernetes semantics apply to built-in definitions and to anything that uses
    ``x-kubernetes-*`` extensions (e.g. an openAPIV3Schema saved on its own)."""
    if "x-kubernetes-group-version-kind" in root:
        return True
    defs = root.get("$defs")
    if isinstance(defs, Mapping) and any(str(k).startswith("io.k8s.") for k in defs):
        return True
    return '"x-kubernetes-' in json.dumps(root)


#: Top-level keys that make a mapping a schema or schema document, whatever else it has.
_SCHEMA_KEYS = frozenset({
    "$schema", "$id", "$ref", "$defs", "definitions", "openapi", "swagger", "components",
    "type", "properties", "items", "allOf", "anyOf", "oneOf", "not", "enum", "const",
    "additionalProperties", "patternProperties", "x-kubernetes-preserve-unknown-fields",
})


def _is_object(doc: Any) -> bool:
    """A Kubernetes object (``apiVersion`` and ``kind`` strings, no schema keyword): what
    ``kubectl apply`` takes, not a schema; generating from it as a schema gives ``{}``."""
    return (isinstance(doc, Mapping) and isinstance(doc.get("apiVersion"), str)
            and isinstance(doc.get("kind"), str)
            and (_is_list(doc) or not _SCHEMA_KEYS & doc.keys()))


def refuse_objects(docs: Sequence[Any], *, source: str) -> None:
    """Raise :class:`SchemaLoadError` if every document of a file is a Kubernetes object
    (a manifest named where a CRD or schema belongs, the commonest first-run slip)."""
    objects = [d for d in docs if _is_object(d)]
    if objects and len(objects) == len(docs):
        raise _not_a_schema(objects, source)


def _not_a_schema(objects: Sequence[Mapping[str, Any]], source: str) -> SchemaLoadError:
    kinds = list(dict.fromkeys(f"{o['kind']} ({o['apiVersion']})" for o in objects))
    shown = ", ".join(kinds[:4]) + (", ..." if len(kinds) > 4 else "")
    article = "an" if kinds[0][:1].lower() in "aeiou" else "a"
    what = (f"this is {article} {shown} object" if len(objects) == 1
            else f"these are {len(objects)} objects: {shown}")
    return SchemaLoadError(
        f"{what}, not a CRD or schema", source=source,
        hint="name the CustomResourceDefinition that defines the kind (e.g. controller-gen's "
        "config/crd/bases/*.yaml, or the project's release manifest), a JSON Schema/OpenAPI "
        "file, or a built-in kind as k8s:apps/v1:Deployment",
    )


def load_schema(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    version: str | None = None,
    definition: str | None = None,
    ref_roots: Iterable[str | os.PathLike[str]] | None = None,
) -> Schema:
    """Return one normalised, self-contained :class:`Schema` from a file or a document.

    ``source`` is a path to a JSON/YAML file or an already-parsed mapping. The kind of
    document is detected from its content:

    * **CRD** (``kind: CustomResourceDefinition``, or a ``List`` of them): ``version``
      picks the API version; when omitted, the *storage* version is used. If the file
      holds several CRDs, ``definition`` picks one by name (``clusters.cluster.x-k8s.io``),
      kind or plural.
    * **OpenAPI 3.0/3.1** and **Swagger 2.0 / Kubernetes OpenAPI v2**: ``definition``
      names a key of ``components.schemas`` / ``definitions`` (required unless there is
      just one); a unique suffix such as ``"Deployment"`` for
      ``io.k8s.api.apps.v1.Deployment`` is accepted too.
    * **JSON Schema** (any draft): the whole document, or ``definition`` in ``$defs`` /
      ``definitions``. kubernetes-validate per-kind files are JSON Schema whose refs point
      at ``/api/_definitions.json``; those are found next to the file.

    ``definition`` may also be a JSON pointer (``"#/components/schemas/Order"``).
    External ``$ref`` are bundled into ``$defs`` (see :func:`bundle`), and the result is
    normalised to 2020-12 (see :func:`normalize`). Referenced files are read only under
    the file's folder (the working directory for a mapping) and the folders in
    ``ref_roots``.

    >>> s = load_schema({"type": "integer", "minimum": 0, "exclusiveMinimum": True})
    >>> s.root["exclusiveMinimum"]
    0

    Raises:
        SchemaLoadError: unreadable or malformed file, unknown version/definition (the
            message lists the close matches), or a CRD Kubernetes would reject.
        UnresolvableRef: a ``$ref`` points nowhere (names the ref and where it occurs).
        RefOutsideRoot: a ``$ref`` names a file outside the allowed folders.
        InvalidArgument: ``source`` is neither a path nor a mapping, or ``version`` was
            given for a document that has no versions.

    .. versionadded:: 0.1
    """
    if isinstance(source, Mapping):
        check_depth(source)
        docs: list[Any] = [source]
        src, path = "<memory>", None
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        docs, src = read_documents(path), str(path)
    else:
        raise InvalidArgument(
            f"Expected a path or a mapping but got source={source!r} "
            f"(type={type(source).__name__}); parse text first with yaml.safe_load, or pass "
            "the file path"
        )
    for arg, value in (("version", version), ("definition", definition)):
        if value is not None and not isinstance(value, str):
            raise InvalidArgument(f"Expected a string but got {arg}={value!r} "
                                  f"(type={type(value).__name__})")
    crds = crds_from_documents(docs, source=src)
    if crds:
        return _from_crds(crds, version=version, definition=definition, source=src)
    refuse_objects(docs, source=src)
    if len(docs) != 1:
        raise SchemaLoadError(
            f"expected one schema document but the file holds {len(docs)}"
            + (" and none is a CustomResourceDefinition" if docs else ""),
            source=src, hint="keep one schema per file (or put CRDs in it)",
        )
    doc = docs[0]
    if not isinstance(doc, Mapping):
        raise SchemaLoadError(
            f"expected a mapping (a schema, OpenAPI or CRD document) but found "
            f"{type(doc).__name__}", source=src,
            hint="the top level of a schema file is a mapping such as {type: object}",
        )
    if version is not None:
        raise InvalidArgument(
            f"version={version!r} only applies to CustomResourceDefinition files, and "
            f"{src} is not one; drop version= (use definition= to pick a schema)"
        )
    try:
        dialect = detect_dialect(doc)
    except SchemaLoadError as exc:
        raise SchemaLoadError(exc.reason, source=src, pointer=exc.pointer,
                              hint=exc.hint) from None
    pointer, name = _pick_definition(doc, dialect, definition, src)
    _warn_unknown(doc, pointer, dialect, src)
    bundled = bundle(doc, pointer=pointer, source=None if path is None else str(path),
                     ref_roots=ref_roots)
    root = normalize(bundled, dialect=dialect)
    title = doc.get("title") if not pointer else None
    label = name or (title if isinstance(title, str) else None) or (
        path.stem if path is not None else "schema")
    return make_schema(root, source=src, pointer=pointer, name=label,
                       kubernetes=isinstance(root, Mapping) and _is_kubernetes(root),
                       meta={"dialect": dialect, "definition": name})


def _warn_unknown(doc: Mapping[str, Any], pointer: str, dialect: str, source: str) -> None:
    """Warn about misspelt keywords in the chosen schema and in the other definitions of
    its document (a root at ``""`` holds them already), with paths as in the file."""
    done = warn_unknown_keywords(resolve_pointer(doc, pointer), source=source,
                                 pointer=pointer)
    if not pointer:
        return
    for container in _containers(dialect):
        try:
            table = resolve_pointer(doc, container)
        except (KeyError, IndexError, ValueError):
            continue
        if not isinstance(table, Mapping):
            continue
        for name, sub in table.items():
            where = f"{container}/{escape(str(name))}"
            if where != pointer and done < 20:
                done += warn_unknown_keywords(sub, source=source, pointer=where)


def _from_crds(crds: list[CRD], *, version: str | None, definition: str | None,
               source: str) -> Schema:
    if definition is not None:
        picked = [c for c in crds if definition in (c.name, c.kind, c.plural)]
        if not picked:
            options = [c.name for c in crds] + [c.kind for c in crds]
            close = difflib.get_close_matches(definition, options, n=3, cutoff=0.5)
            raise SchemaLoadError(
                f"no CRD named {definition!r} in this file"
                + (f" (did you mean: {', '.join(close)}?)" if close else "")
                + f"; it has: {', '.join(c.name for c in crds)}",
                source=source, hint="pass definition= as a CRD name, kind or plural",
            )
        crd = picked[0]
    elif len(crds) > 1:
        raise SchemaLoadError(
            f"the file holds {len(crds)} CRDs: {', '.join(c.name for c in crds)}",
            source=source,
            hint="pass definition='<crd name or kind>' to pick one, or use load_crds()",
        )
    else:
        crd = crds[0]
    names = [v.name for v in crd.versions]
    if version is None:
        version = crd.storage_version or names[-1]
    if version not in names:
        close = difflib.get_close_matches(version, names, n=3, cutoff=0.5)
        raise SchemaLoadError(
            f"CRD {crd.name} has no version {version!r}"
            + (f" (did you mean {', '.join(close)}?)" if close else "")
            + f"; its versions are: {', '.join(names)} (storage: {crd.storage_version})",
            source=source, pointer=crd.pointer + "/spec/versions",
            hint=f"pass version= as one of: {', '.join(names)}",
        )
    chosen = crd.version(version)
    if chosen.schema is None:
        raise SchemaLoadError(
            f"version {version!r} of CRD {crd.name} has no schema", source=source,
            pointer=crd.pointer + "/spec/validation/openAPIV3Schema",
            hint=f"add spec.validation.openAPIV3Schema, at least {_PRESERVE}",
        )
    # the whole CRD, for the API server's CRD validation (``compatfuzz.apiserver.admit``)
    return replace(chosen.schema, meta={**chosen.schema.meta, "definition_of": crd})
