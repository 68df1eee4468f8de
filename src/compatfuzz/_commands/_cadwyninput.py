"""``cadwyn:module:bundle@VERSION`` on the command line (``compatfuzz diff``): one version of
a Cadwyn bundle, compared schema by schema with another.

The contract of a dated Cadwyn version must never change: a new release of the service may
add versions, but what ``2023-01-01`` accepts and returns stays what it was.  So the usual
comparison is the *same* version in two revisions of the service; the old revision is a
checkout of the previous release (a git worktree), imported from its folder with
``--old-path DIR`` (``--new-path DIR`` likewise; default: the working directory).  Both
revisions usually have the same module path (``shop.versions``), so each is imported with
its folder on ``sys.path`` (appended: never ahead of the standard library or
site-packages) and its top-level package forgotten again afterwards
(``sys.modules``), which lets the second import load the other folder's files; Cadwyn has
generated every version's models by then (``cadwyn.generate_versioned_models``), so
nothing is imported lazily later.  Two versions of one bundle compare too
(``...@2023-01-01`` against ``...@2023-06-01``): what an old client must change to move on.

Each schema of both bundles (``CadwynAPI.schemas``, by class name) is compared through the
pydantic diff path (:func:`model_events`): a request body on its validation JSON Schema in
direction ``request``, a response model on its serialization schema in direction
``response``, a schema used both ways in both, as :meth:`CadwynAPI.roles` tells from the
bundle's migrations (cadwyn/structure/versions.py, ``alter_request_by_schema_instructions``
and ``alter_response_by_schema_instructions``).  A field that ``had(name=...)`` renamed
is one ``field-renamed`` finding, and each finding names the ``VersionChange`` that made
it (``_cadwynblame``); given the Cadwyn app on both sides, its routes are compared too
(``_cadwynroutes``).  The findings speak of requests and responses (``compat/_rest.py``).
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["PREFIX", "cadwyn_events", "is_cadwyn"]

PREFIX = "cadwyn:"
_EXAMPLE = "cadwyn:shop.versions:version_bundle@2023-01-01"


def is_cadwyn(spec: str) -> bool:
    """Whether ``spec`` names a version of a Cadwyn bundle (``cadwyn:module:bundle@V``)."""
    return spec.startswith(PREFIX)


def _error(message: str, spec: str, hint: str) -> Exception:
    from compatfuzz.errors import SchemaLoadError

    return SchemaLoadError(message, source=spec, hint=hint)


def _split(spec: str) -> tuple[str, str]:
    """``cadwyn:module:attr@VERSION`` -> (``module:attr``, ``VERSION``)."""
    target, at, version = spec.removeprefix(PREFIX).rpartition("@")
    if not at:
        target, version = spec.removeprefix(PREFIX), ""
    module, colon, attr = target.partition(":")
    if not colon or not module or not attr or not version:
        raise _error(f"expected cadwyn:module:bundle@VERSION, got {spec!r}", spec,
                     f"e.g. {_EXAMPLE} (the module relative to the working directory or "
                     "--old-path/--new-path, or installed; VERSION one of the bundle's "
                     "versions, or head)")
    return target, version


def _top_modules(name: str) -> list[str]:
    top = name.split(".", maxsplit=1)[0]
    return [m for m in sys.modules if m == top or m.startswith(top + ".")]


def _load(target: str, spec: str, folder: Path | None) -> Any:
    """The :class:`CadwynAPI` of ``target`` (``module:attr``), imported from ``folder``
    (then forgotten, module docstring) or, without one, from the working directory."""
    try:
        from compatfuzz.cadwyn import CadwynAPI
    except ImportError as exc:
        raise _error(f"Cadwyn support is not installed ({exc.name} is missing)", spec,
                     "pip install 'compatfuzz[cadwyn]'") from None
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._check._config import _protected, forget_folder, resolve_object

    module = target.partition(":")[0]
    base = Path.cwd() if folder is None else folder
    if folder is not None:
        if not folder.is_dir():
            raise _error(f"{folder} is not a folder", spec,
                         "give the folder the module is imported from, e.g. a checkout "
                         "of the previous release: --old-path release-1.4")
        top = module.split(".", maxsplit=1)[0]
        if not ((folder / f"{top}.py").is_file() or (folder / top).is_dir()):
            raise _error(f"{folder} has no {top}/ or {top}.py to import {module!r} from",
                         spec, "give the folder that holds the package (the checkout's "
                               "root, or its src/ folder in a src layout)")
        why = _protected(top)
        if why is not None:  # never evicted, not even for the time of the import
            raise _error(f"{folder / top} has the name of {why}; compatfuzz does not "
                         "import a module of yours in its place", spec,
                         f"rename {top} (e.g. to my_{top}) and write the spec with the new "
                         "name")
        saved = {m: sys.modules.pop(m) for m in _top_modules(module)}
    try:
        source = resolve_object(target, base, source=spec)
        try:
            return CadwynAPI(source)
        except InvalidArgument as exc:
            raise _error(str(exc), spec, f"name the VersionBundle or the Cadwyn app: "
                                         f"{_EXAMPLE}") from None
    finally:
        if folder is not None:
            for name in _top_modules(module):
                del sys.modules[name]
            sys.modules.update(saved)
            forget_folder(base)


def _version(api: Any, version: str, spec: str) -> str:
    from compatfuzz.cadwyn import HEAD

    if version.lower() == HEAD:
        return HEAD
    if version in api.versions:
        return version
    known = [*api.versions, HEAD]
    close = difflib.get_close_matches(version, known, n=1)
    guess = f"did you mean {close[0]!r}? " if close else ""
    raise _error(f"the bundle has no version {version!r}; its versions are "
                 f"{', '.join(known)}", spec,
                 f"{guess}name one of them after the @, e.g. "
                 f"{spec.rpartition('@')[0]}@{known[0]}")


def cadwyn_events(old: str, new: str, direction: str, *, old_path: Path | None = None,
                  new_path: Path | None = None, schema: str | None = None,
                  **options: Any) -> Iterator[Any]:
    """The events of ``compat.check`` on each schema both bundle versions have (module
    docstring); ``direction`` ``auto`` takes each schema's from its role, ``request`` /
    ``response`` / ``both`` force one; ``options`` are ``check``'s keyword arguments.

    Raises:
        SchemaLoadError: a malformed spec, a module that cannot be imported, an attribute
            that is no bundle, a version or ``schema`` the bundles do not have.
    """
    from compatfuzz.compat import Note, Policy

    sides = []
    loaded: dict[tuple[str, Path | None], Any] = {}
    for spec, folder in ((old, old_path), (new, new_path)):
        target, version = _split(spec)
        key = (target, None if folder is None else folder.resolve())
        if key not in loaded:
            loaded[key] = _load(target, spec, folder)
        api = loaded[key]
        sides.append((api, _version(api, version, spec), {s.__name__: s for s in api.schemas}))
    (old_api, old_version, old_schemas), (new_api, new_version, new_schemas) = sides
    common = [name for name in new_schemas if name in old_schemas]
    if schema is not None:
        if schema not in common:
            close = difflib.get_close_matches(schema, common, n=1)
            raise _error(f"--schema {schema}: no schema of that name in both bundles; they "
                         f"share {', '.join(common) or 'none'}", new,
                         (f"did you mean --schema {close[0]}? " if close else "")
                         + "name a HEAD schema class, or leave --schema out to compare "
                         "them all")
        common = [schema]
    if not common:
        raise _error(f"the two bundles share no schema (OLD has {', '.join(old_schemas)}; NEW "
                     f"has {', '.join(new_schemas)})", new,
                     "compare versions of the same service: a schema is matched by its "
                     "HEAD class name")
    if schema is None:
        for name, where, other in ((n, "OLD", "NEW") for n in old_schemas
                                   if n not in new_schemas):
            yield Note("", f"schema {name} is only in {where}; no {other} to compare it to")
        for name in (n for n in new_schemas if n not in old_schemas):
            yield Note("", f"schema {name} is only in NEW; nothing to compare it to")
    from compatfuzz._commands._cadwynblame import Blame, Version
    from compatfuzz._commands._cadwynroutes import route_events
    from compatfuzz._commands._pydanticinput import model_events

    blame = Blame(Version(old_api, old_version, old_schemas),
                  Version(new_api, new_version, new_schemas))
    policy = options.get("policy") or Policy()
    for name in common:
        models = (old_api.model(old_schemas[name], old_version),
                  new_api.model(new_schemas[name], new_version))
        way = direction
        if way == "auto":
            roles = old_api.roles(old_schemas[name]) | new_api.roles(new_schemas[name])
            way = next(iter(roles)) if len(roles) == 1 else "auto"
        for event in model_events(old, new, models, way, name=name,
                                  renames=blame.renames(name), **options):
            yield blame.event(event, policy)
    if schema is None:
        yield from route_events(blame, policy, options.get("fail_on_impact"))
