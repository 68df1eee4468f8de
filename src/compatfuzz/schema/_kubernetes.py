"""Built-in Kubernetes kinds, from the JSON schemas shipped by ``kubernetes-validate``.

kubernetes-validate ships, per release, one file per type (``deployment-apps-v1.json``)
whose refs point into one shared ``_definitions.json`` (1.8 MB, 862 definitions). The
parsed definitions file is cached per release (see ``read_documents_cached``), so loading
every kind of a release costs one parse plus a small bundle per kind.

The package directory is located with ``importlib.util.find_spec`` rather than by
importing it: kubernetes-validate's ``__init__`` pulls in its CLI dependencies.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compatfuzz.errors import InvalidArgument, SchemaLoadError
from compatfuzz.schema._bundle import bundle
from compatfuzz.schema._load import make_schema
from compatfuzz.schema._model import Schema
from compatfuzz.schema._normalize import normalize
from compatfuzz.schema._read import read_documents_cached

__all__ = ["kubernetes_kinds", "kubernetes_releases", "load_kubernetes"]

_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")
_GVK = "x-kubernetes-group-version-kind"


def _package_dir() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaLoadError(
            "the kubernetes-validate package, which holds the built-in kinds' schemas, "
            "is not installed", source="kubernetes-validate",
            hint="pip install kubernetes-validate  (or: pip install 'compatfuzz[kubernetes]')",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


def kubernetes_releases() -> list[str]:
    """Return the Kubernetes releases (``"1.25"``...) the installed kubernetes-validate has."""
    found = []
    for entry in _package_dir().iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local", entry.name)
        if m:
            found.append((int(m[1]), int(m[2])))
    return [f"{a}.{b}" for a, b in sorted(found)]


def _release_dir(release: str, strict: bool) -> Path:
    m = _RELEASE.fullmatch(release.strip()) if isinstance(release, str) else None
    if m is None:
        raise InvalidArgument(
            f"Expected a Kubernetes release like '1.37' but got release={release!r} "
            f"(type={type(release).__name__})"
        )
    base = _package_dir()
    path = base / (f"v{m[1]}.{m[2]}.0-local" + ("-strict" if strict else ""))
    if not path.is_dir():
        raise InvalidArgument(
            f"kubernetes-validate has no schemas for release={release!r}; it has "
            f"{', '.join(kubernetes_releases())} (upgrade it for newer releases: "
            "pip install -U kubernetes-validate)"
        )
    return path


def _short_group(group: str) -> str:
    return group.split(".", 1)[0]


def _file_stem(kind: str, group: str, version: str) -> str:
    return "-".join(p for p in (kind.lower(), _short_group(group), version) if p)


def _api_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


@dataclass(frozen=True)
class _Index:
    files: dict[tuple[str, str], Path]  # (apiVersion, kind) -> kind file
    kinds: list[tuple[str, str]]  # one (apiVersion, kind) per kind file
    definitions: dict[tuple[str, str], str]  # (apiVersion, kind) -> definition name


_INDEXES: dict[Path, _Index] = {}


def _index(directory: Path) -> _Index:
    hit = _INDEXES.get(directory)
    if hit is not None:
        return hit
    defs_doc = read_documents_cached(directory / "_definitions.json")[0]
    existing = {p.name for p in directory.iterdir()}
    files: dict[tuple[str, str], Path] = {}
    per_file: dict[str, tuple[str, str]] = {}
    definitions: dict[tuple[str, str], str] = {}
    for name, body in defs_doc.get("$defs", {}).items():
        gvks = body.get(_GVK) if isinstance(body, Mapping) else None
        if not isinstance(gvks, list):
            continue
        parts = name.split(".")
        by_name = f"{parts[-1].lower()}-{parts[-3]}-{parts[-2]}.json" if len(parts) > 3 else ""
        for gvk in gvks:
            group, version, kind = gvk.get("group", ""), gvk["version"], gvk["kind"]
            av = _api_version(group, version)
            conventional = _file_stem(kind, group, version) + ".json"
            definitions.setdefault((av, kind), name)
            for candidate in (conventional, by_name):
                if candidate in existing:
                    files.setdefault((av, kind), directory / candidate)
                    if candidate == conventional or candidate not in per_file:
                        per_file[candidate] = (av, kind)
                    break
    index = _Index(files=files, kinds=sorted(per_file.values()), definitions=definitions)
    _INDEXES[directory] = index
    return index


def kubernetes_kinds(release: str = "1.37") -> list[tuple[str, str]]:
    """Return every ``(apiVersion, kind)`` that has a kind file in kubernetes-validate.

    One pair per file, sorted: ``("apps/v1", "Deployment")``, ``("v1", "Pod")``. List
    kinds (``DeploymentList``) are included, they are kinds too. ``DeleteOptions`` and
    ``WatchEvent``, which every group shares, appear once as ``("v1", ...)``; the other
    group versions are still accepted by :func:`load_kubernetes`.

    .. versionadded:: 0.1
    """
    return list(_index(_release_dir(release, False)).kinds)


def load_kubernetes(
    api_version: str, kind: str, *, release: str = "1.37", strict: bool = False
) -> Schema:
    """Return the schema of a built-in Kubernetes kind, e.g. ``("apps/v1", "Deployment")``.

    ``release`` is a Kubernetes minor release (``"1.29"``); ``strict=True`` uses
    kubernetes-validate's strict schemas, which reject unknown fields. The result is
    named after its definition (``io.k8s.api.apps.v1.Deployment``) and has
    ``kubernetes=True``; ``meta`` holds apiVersion, group, version, kind, release, strict.

    >>> load_kubernetes("apps/v1", "Deployment").name   # doctest: +SKIP
    'io.k8s.api.apps.v1.Deployment'

    Raises:
        SchemaLoadError: kubernetes-validate is not installed, or the kind is unknown
            (the message lists close matches).
        InvalidArgument: malformed or unsupported ``release``.

    .. versionadded:: 0.1
    """
    for arg, value in (("api_version", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            raise InvalidArgument(
                f"Expected a non-empty string but got {arg}={value!r} "
                f"(type={type(value).__name__}); e.g. load_kubernetes('apps/v1', 'Deployment')"
            )
    directory = _release_dir(release, strict)
    index = _index(_release_dir(release, False))
    group, _, version = api_version.rpartition("/")
    path = index.files.get((api_version, kind))
    if path is not None and strict:
        path = directory / path.name
    if path is None:
        raise SchemaLoadError(
            f"Kubernetes {release} has no kind {kind!r} in apiVersion {api_version!r}"
            + _suggest(index, api_version, kind),
            source=str(directory),
            hint="apiVersion is 'group/version' ('apps/v1', 'batch/v1', "
            "'rbac.authorization.k8s.io/v1') or just 'v1' for the core group; "
            "kubernetes_kinds(release) lists them all",
        )
    doc = read_documents_cached(path)[0]
    root = normalize(bundle(doc, source=str(path), local_dir=directory), dialect="2020-12")
    name = index.definitions.get((api_version, kind), kind)
    m = _RELEASE.fullmatch(release.strip())
    assert m is not None  # checked by _release_dir
    return make_schema(
        root, source=str(path), pointer="", name=name, kubernetes=True,
        meta={"apiVersion": api_version, "group": group, "version": version, "kind": kind,
              "release": f"{m[1]}.{m[2]}", "strict": strict, "definition": name},
    )


def _suggest(index: _Index, api_version: str, kind: str) -> str:
    same_kind = [f"{av} {k}" for av, k in index.files if k.lower() == kind.lower()]
    if same_kind:
        return f" (it is served as: {', '.join(sorted(same_kind))})"
    labels = {f"{av} {k}": (av, k) for av, k in index.files}
    close = difflib.get_close_matches(f"{api_version} {kind}", list(labels), n=5, cutoff=0.6)
    if not close:
        close = sorted(f"{av} {k}" for av, k in index.files
                       if difflib.SequenceMatcher(None, k.lower(), kind.lower()).ratio() > 0.75)
    return f" (did you mean: {', '.join(close[:5])}?)" if close else ""


