"""Bundle a schema and everything it references into one self-contained document.

Each distinct ``$ref`` target (in this file, a sibling file, or a URL that maps onto a local
file) becomes one entry of the root's ``$defs`` and every ``$ref`` is rewritten to
``#/$defs/<name>``. Only targets reachable from the chosen root are copied, so a Deployment
carries ~60 of the 862 Kubernetes definitions. Cycles (``JSONSchemaProps`` refers to itself)
stay cycles: each target is copied once and referred to by name, never expanded.

URIs are resolved with the ``referencing`` library (the one ``jsonschema`` uses), so ``$id``
base URIs behave as a validator would see them. Remote URIs are never fetched: they are
mapped onto files next to the root document (``https://kubernetes.io/api/_definitions.json``
-> ``<dir>/_definitions.json``), which is how kubernetes-validate's files are laid out.

Files are read only under the *ref roots*: the root schema's folder, ``local_dir`` and any
folder the caller names (``ref_roots=``; the CLI's ``--allow-ref-root``, the config's
``allow_ref_roots``). A schema is data, often someone else's: once,
``{"$ref": "/etc/passwd"}``, ``file:///etc/hostname``, ``../../x`` or a URL with
``%2e%2e`` segments read any file the user could. Anything else is refused with
:class:`~compatfuzz.errors.RefOutsideRoot`, and no message ever quotes a referenced file's
content (a ``$ref`` to a file that is not a schema names only its type).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

import referencing
import referencing.exceptions
import referencing.jsonschema

from compatfuzz.errors import RefOutsideRoot, SchemaLoadError, UnresolvableRef
from compatfuzz.schema._check import check_node
from compatfuzz.schema._keywords import map_children
from compatfuzz.schema._keywords import pointer as render_pointer
from compatfuzz.schema._model import resolve_pointer
from compatfuzz.schema._read import read_documents_cached

__all__ = ["bundle", "path_to_uri", "uri_to_source"]

_DEFAULT_SPEC = referencing.jsonschema.DRAFT202012
_CONTAINERS = ("/$defs/", "/definitions/", "/components/schemas/")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DROP = frozenset({"$id", "$schema", "$defs", "definitions", "$anchor", "$dynamicAnchor"})


def path_to_uri(path: Path) -> str:
    return path.resolve().as_uri()


def uri_to_source(uri: str) -> str:
    """The file a URI stands for, for error messages (the URI itself when not a file)."""
    if uri.startswith("file:"):
        return url2pathname(urlsplit(uri).path)
    return uri


def bundle(
    document: Any,
    *,
    pointer: str = "",
    base_uri: str | None = None,
    source: str | None = None,
    local_dir: str | Path | None = None,
    ref_roots: Iterable[str | os.PathLike[str]] | None = None,
) -> Any:
    """Return the schema at ``pointer`` in ``document`` with every ``$ref`` made local.

    ``base_uri`` is the URI relative refs are resolved against (default: the document's
    ``$id``, else the current directory); ``local_dir`` is where referenced files are
    looked for when their URI is not a ``file:`` URI (default: the directory of
    ``source``). The result's ``$defs`` holds the reachable definitions, named after the
    target's definition name (``#/$defs/NAME``, ``#/definitions/NAME``,
    ``#/components/schemas/NAME``) or file, deduplicated with ``_2``, ``_3`` suffixes.
    ``$id``, ``$schema`` and unreferenced definitions are dropped. Pure: the input is
    not modified.

    Referenced files are read only under the folder of ``source`` (the current directory
    for an in-memory document), ``local_dir`` and the folders in ``ref_roots``; symlinks
    are followed before the check, so a link cannot lead out either.

    Raises:
        UnresolvableRef: a ``$ref`` points to a missing file or location, or to a file
            that holds no schema; the message names the ref, the file and the JSON path
            where it occurs.
        RefOutsideRoot: a ``$ref`` names a file outside the allowed folders.

    .. versionadded:: 0.1
    """
    src = source or "<memory>"
    if base_uri is None:
        if source and Path(source).exists():
            base_uri = path_to_uri(Path(source))
        else:
            base_uri = Path.cwd().as_uri() + "/__memory__.json"
    home = Path(source).resolve().parent if source else Path.cwd().resolve()
    roots = [home]
    if local_dir is None:
        local_dir = home
    else:
        roots.append(Path(local_dir).resolve())
    roots.extend(Path(r).resolve() for r in ref_roots or ())
    doc_id = document.get("$id") if isinstance(document, Mapping) else None
    doc_base = urljoin(base_uri, doc_id) if isinstance(doc_id, str) else base_uri
    try:
        root = resolve_pointer(document, pointer)
    except (KeyError, IndexError, ValueError):
        raise SchemaLoadError("there is nothing at this location", source=src,
                              pointer=pointer, hint="check the definition name") from None
    b = _Bundler(local_dir=Path(local_dir), roots=tuple(dict.fromkeys(roots)))
    b.add_document(base_uri, document, src)
    if doc_base != base_uri:
        b.add_document(doc_base, document, src)
    root_base = _subresource_base(document, pointer, doc_base)
    b.root_keys = {_key(base_uri, pointer), _key(doc_base, pointer)}
    out = b.rewrite(root, root_base, src, pointer)
    while b.queue:
        name, contents, tbase, tsource, tpointer = b.queue.pop(0)
        b.defs[name] = b.rewrite(contents, tbase, tsource, tpointer)
    if not isinstance(out, Mapping):
        if not b.defs:
            return out
        out = {"allOf": [out]}
    out = dict(out)
    if b.defs:
        out["$defs"] = b.defs
    return out


@lru_cache(maxsize=16384)
def _split_ref(base: str, ref: str) -> tuple[str, str, str]:
    """(absolute URI, URI without fragment, unquoted fragment) of ``ref`` seen from ``base``."""
    absolute = urljoin(base, ref)
    parts = urlsplit(absolute)
    return absolute, parts._replace(fragment="").geturl(), unquote(parts.fragment)


def _key(uri: str, fragment: str) -> str:
    return urlsplit(uri)._replace(fragment="").geturl() + "#" + fragment.rstrip("/")


def _subresource_base(document: Any, pointer: str, base: str) -> str:
    """Base URI at ``pointer``: apply every ``$id`` met on the way down."""
    node = document
    for raw in pointer.lstrip("/").split("/") if pointer else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            break
        if isinstance(node, Mapping) and isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
    return base


@dataclass
class _Bundler:
    local_dir: Path
    roots: tuple[Path, ...] = ()
    registry: referencing.Registry[Any] = field(default_factory=referencing.Registry)
    sources: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)
    defs: dict[str, Any] = field(default_factory=dict)
    queue: list[tuple[str, Any, str, str, str]] = field(default_factory=list)
    root_keys: set[str] = field(default_factory=set)

    def add_document(self, uri: str, contents: Any, source: str) -> None:
        uri = urlsplit(uri)._replace(fragment="").geturl()
        resource = referencing.Resource.from_contents(contents, default_specification=_DEFAULT_SPEC)
        self.registry = self.registry.with_resource(uri, resource)
        self.sources[uri] = source

    def rewrite(self, node: Any, base: str, source: str, where: Any) -> Any:
        """Copy ``node`` with refs made local; ``where`` is its pointer (lazy, see
        ``_keywords.pointer``)."""
        if not isinstance(node, Mapping):
            return node
        check_node(node, source, where)  # keyword values, with the path in its file
        sub_id = node.get("$id")
        if isinstance(sub_id, str):
            base = urljoin(base, sub_id)
        out = map_children(node, lambda sub, t: self.rewrite(sub, base, source, (where, t)),
                           skip=_DROP)
        ref = out.get("$ref")
        if isinstance(ref, str):
            out["$ref"] = self.target(ref, base, source, where)
        return out

    def target(self, ref: str, base: str, source: str, where: Any) -> str:
        absolute, uri, fragment = _split_ref(base, ref)
        key = uri + "#" + fragment.rstrip("/")
        if key in self.root_keys:
            return "#"
        if key in self.names:
            return "#/$defs/" + self.names[key]
        pointer = render_pointer(where) if uri not in self.sources else ""
        if uri not in self.sources:
            self.retrieve(uri, ref, source, pointer)
        try:
            resolved = self.registry.resolver().lookup(absolute)
        except referencing.exceptions.Unresolvable:
            raise UnresolvableRef(
                f"$ref {ref!r} points to nothing: {uri_to_source(uri)} has no "
                f"{fragment or '/'!r}{self.close_matches(uri, fragment)}",
                source=source, pointer=render_pointer(where) + "/$ref",
                hint="fix the name in the $ref or add the definition (names are "
                "case-sensitive)",
            ) from None
        if not isinstance(resolved.contents, Mapping | bool):
            # Never echo the value: the file may be anything the user can read.
            raise UnresolvableRef(
                f"$ref {ref!r} points to a {type(resolved.contents).__name__}, not a schema "
                f"(in {uri_to_source(uri)})",
                source=source, pointer=render_pointer(where) + "/$ref",
                hint="point the $ref at a JSON/YAML schema (a mapping such as "
                "{type: string}) or at a definition inside one",
            )
        name = self.pick_name(uri, fragment)
        self.names[key] = name
        target_base = uri
        if isinstance(resolved.contents, Mapping) and isinstance(resolved.contents.get("$id"),
                                                                  str):
            target_base = urljoin(uri, resolved.contents["$id"])
        tpointer = fragment if fragment.startswith("/") else ""
        self.defs[name] = None  # reserve the position: file order of first use
        self.queue.append((name, resolved.contents, target_base, self.sources[uri], tpointer))
        return "#/$defs/" + name

    def close_matches(self, uri: str, fragment: str) -> str:
        """`` (did you mean: ...?)`` listing siblings of a pointer's last token."""
        if not fragment.startswith("/"):
            return ""
        parent, _, last = fragment.rpartition("/")
        try:
            container = resolve_pointer(self.registry[uri].contents, parent)
        except (KeyError, IndexError, ValueError, TypeError):
            return ""
        if not isinstance(container, Mapping):
            return ""
        wanted = last.replace("~1", "/").replace("~0", "~")
        close = difflib.get_close_matches(wanted, [str(k) for k in container], n=3, cutoff=0.6)
        return f" (did you mean: {', '.join(close)}?)" if close else ""

    def retrieve(self, uri: str, ref: str, source: str, pointer: str) -> None:
        path = self.locate(uri, ref, source, pointer)
        if path is None:
            raise UnresolvableRef(
                f"$ref {ref!r} refers to {uri}, which is not a local file",
                source=source, pointer=pointer + "/$ref",
                hint=f"download it next to the schema (into {self.local_dir}) or use a "
                "relative file reference; compatfuzz never fetches URLs",
            )
        self.check_root(path, ref, source, pointer)  # first: no probing outside the roots
        if not path.is_file():
            raise UnresolvableRef(
                f"$ref {ref!r} refers to the missing file {path}",
                source=source, pointer=pointer + "/$ref",
                hint="check the file name in the $ref (it is resolved relative to the "
                "referring file or its $id)",
            )
        docs = read_documents_cached(path)
        if len(docs) != 1:
            raise UnresolvableRef(
                f"$ref {ref!r} refers to {path}, which holds {len(docs)} documents",
                source=source, pointer=pointer + "/$ref",
                hint="a referenced file must hold exactly one JSON/YAML document",
            )
        self.add_document(uri, docs[0], str(path))

    def check_root(self, path: Path, ref: str, source: str, pointer: str) -> None:
        """Refuse ``path`` unless it lies under a ref root (after following symlinks)."""
        real = path.resolve()
        if any(real.is_relative_to(root) for root in self.roots):
            return
        folders = ", ".join(str(r) for r in self.roots)
        raise RefOutsideRoot(
            f"$ref {ref!r} would read {real}, which is outside the folders a schema may "
            f"read ({folders})",
            source=source, pointer=pointer + "/$ref",
            hint=f"move the file under {self.roots[0]}, or allow its folder explicitly: "
            f"--allow-ref-root {real.parent} (compatfuzz.toml: allow_ref_roots = "
            f"[\"{real.parent}\"]; Python: ref_roots=[...])",
        )

    def locate(self, uri: str, ref: str = "", source: str = "<memory>",
               pointer: str = "") -> Path | None:
        parts = urlsplit(uri)
        if parts.scheme == "file":
            if parts.netloc not in ("", "localhost"):
                return None  # a file on another host: not local
            return Path(url2pathname(parts.path))
        if not parts.path or parts.path.endswith("/"):
            return None
        segments = [unquote(s) for s in parts.path.split("/") if s]
        if any(s in (".", "..") or "/" in s or "\\" in s or "\0" in s for s in segments):
            # urljoin removes literal dot segments; these came in %-encoded (%2e%2e)
            raise RefOutsideRoot(
                f"$ref {ref!r} maps to a local path with an encoded '..', '/' or '\\' "
                "segment, which could lead outside the schema's folder",
                source=source, pointer=pointer + "/$ref",
                hint="spell the path without %2e%2e or %2f, as a relative file reference",
            )
        for i in range(len(segments)):
            candidate = self.local_dir.joinpath(*segments[i:])
            if candidate.is_file():
                return candidate
        return None

    def pick_name(self, uri: str, fragment: str) -> str:
        raw = ""
        for container in _CONTAINERS:
            if fragment.startswith(container) and "/" not in fragment[len(container):]:
                raw = fragment[len(container):].replace("~1", "/").replace("~0", "~")
                break
        if not raw and fragment.startswith("/"):
            raw = fragment.rstrip("/").rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        elif not raw and fragment:
            raw = fragment  # an $anchor
        if not raw:
            stem = urlsplit(uri).path.rstrip("/").rsplit("/", 1)[-1]
            raw = stem.rsplit(".", 1)[0] if "." in stem else stem
        name = _UNSAFE.sub("_", raw).strip("_") or "schema"
        candidate, n = name, 1
        while candidate in self.taken:
            n += 1
            candidate = f"{name}_{n}"
        self.taken.add(candidate)
        return candidate
