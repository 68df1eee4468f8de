"""Declare APIs in TOML: ``[[api]]`` in ``compatfuzz.toml`` or ``[[tool.compatfuzz.api]]``.

The same keys work in both files::

    [[api]]
    name = "widgets"
    crd = "config/crd/widgets.yaml"        # or: schemas = { v1 = "schemas/v1.json", ... }
    hub = "v1"                             # optional; default: the CRD's storage version
    convert = "widgets.conversion:convert" # or to_hub = "...", from_hub = "..."
    pipeline = "apiserver"                 # optional; "apiserver" for CRDs, else "plain"
    # converters = { "v1alpha1->v1" = "mod:f" }   defaulters = { v1 = "mod:default_v1" }

Files and dotted paths resolve relative to the config file's folder, so the config works
from any working directory (and in worker processes, which reload it).  Mistakes raise
:class:`~compatfuzz.errors.SchemaLoadError` naming the file, the key and the fix.

Other API families declare their versions with their own key (``proto = "protos/"``).
The loader for such a key is an entry point of the ``compatfuzz.apis`` group, named by
the key: it gets a :class:`ConfigEntry` (the table, where it is, and the helpers that
resolve functions and report mistakes the way this module does) and returns a
:class:`~compatfuzz.roundtrip.Suite`.  Loading it by entry point keeps ``roundtrip``
free of imports of the parts above it, and an extra that is not installed (``proto =``
without ``compatfuzz[protobuf]``) is an error naming the extra, not a crash.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compatfuzz.errors import CompatfuzzError, SchemaLoadError
from compatfuzz.roundtrip._check._accept import AcceptError
from compatfuzz.roundtrip._check._model import API
from compatfuzz.roundtrip._check._suite import Suite

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["ENTRY_POINT_GROUP", "ConfigEntry", "find_config", "load_config",
           "resolve_object"]

#: Entry points naming the loader of an API family's config key (``proto``).
ENTRY_POINT_GROUP = "compatfuzz.apis"
#: converter kinds a package adds: config key -> ``f(entry, base, source, where)`` giving
#: the API's converter options, as the built-in :data:`CONVERTER_KEYS`
CONVERTER_ENTRY_POINT_GROUP = "compatfuzz.converters"

_KEYS = {"name", "crd", "schemas", "kind", "group", "hub", "convert", "to_hub", "from_hub",
         "converters", "defaulters", "webhook", "webhook_ca", "webhook_insecure",
         "webhook_timeout", "pipeline", "semantic", "accept", "stash_annotations",
         "plan_limit", "apiserver", "overrides"}
_SEMANTIC_KEYS = {"go_durations", "empty_struct_is_absent", "comparators", "canonicalisers"}
CONFIG_NAMES = ("compatfuzz.toml", "pyproject.toml")


def _table(doc: Mapping[str, Any], path: Path) -> tuple[Mapping[str, Any] | None, str]:
    if path.name == "pyproject.toml":
        table = doc.get("tool", {}).get("compatfuzz")
        return table, "/tool/compatfuzz"
    return doc, ""


def find_config(start: str | Path | None = None) -> Path | None:
    """Return the config file for ``start`` (default: the working directory), or ``None``.

    Looks in ``start`` and its parents for ``compatfuzz.toml``, then for a
    ``pyproject.toml`` with a ``[tool.compatfuzz]`` table; stops at the first
    ``pyproject.toml`` (the project root).
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "compatfuzz.toml"
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                return None
            return pyproject if _table(doc, pyproject)[0] is not None else None
    return None


def resolve_object(spec: str, base: Path, *, source: str = "<config>",
                   pointer: str = "") -> Any:
    """Import ``module:attr`` (or ``module.attr``), looking first in the folder ``base``.

    Mistakes name the module file that is missing, suggest the closest module or function
    names there are, and show the ``module:function`` form.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise SchemaLoadError(
            f"{spec!r} is not a dotted path to a function", source=source, pointer=pointer,
            hint=f"write it as 'module:function' (e.g. '{spec or 'conversion'}:convert'), "
                 "the module relative to the config file's folder",
        )
    base = base.resolve()
    try:
        _put_first_on_path(module_name, base, source=source, pointer=pointer)
        module = importlib.import_module(module_name)
    except SchemaLoadError:
        raise
    except ModuleNotFoundError as exc:
        if not sep and _module_file(spec, base) is not None:
            # 'pkg.conversion' without ':': the module itself was meant, with no function
            raise _names_a_module(spec, base, source, pointer) from None
        missing = exc.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise _missing_module(spec, module_name, attr, base, source=source,
                                      pointer=pointer) from None
        raise SchemaLoadError(
            f"importing {module_name!r} for {spec!r} failed: {exc} (your module imports "
            f"a module that is not installed)", source=source, pointer=pointer,
            hint=f"install {missing.partition('.')[0]!r} in this environment",
        ) from None
    except Exception as exc:  # SyntaxError, or anything the module raises at import
        from compatfuzz.roundtrip._check._usercode import user_traceback

        frames = user_traceback(exc).rstrip("\n")
        raise SchemaLoadError(
            f"importing {module_name!r} for {spec!r} raised {type(exc).__name__}: {exc}"
            + (f"\n{frames}" if frames else ""), source=source, pointer=pointer,
            hint=f"fix the error in {module_name.replace('.', '/')}.py",
        ) from None
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        if not sep and _module_file(spec, base) is not None:
            raise _names_a_module(spec, base, source, pointer) from None
        names = _functions(module)
        close = difflib.get_close_matches(attr, names, n=1)
        where = getattr(module, "__file__", None) or module_name
        raise SchemaLoadError(
            f"module {module_name!r} ({where}) has no function {attr!r}"
            + (f"; it defines: {', '.join(names[:10])}" if names else ""),
            source=source, pointer=pointer,
            hint=(f"did you mean '{module_name}:{close[0]}'? " if close else "")
            + "write it as 'module:function'",
        ) from None
    return obj


#: Top-level modules compatfuzz and its dependencies import (now or lazily, later in the
#: run): a user's module of one of these names is refused, never imported in its place.
#: Any module already imported from the standard library or site-packages is protected
#: too (:func:`_protected`).
_NEEDED = frozenset({
    "hypothesis", "deepdiff", "jsonschema", "referencing", "rpds", "attrs", "attr", "yaml",
    "celpy", "lark", "re2", "fqdn", "idna", "isoduration", "jsonpointer",
    "rfc3339_validator", "rfc3986_validator", "uri_template", "sortedcontainers",
    "pytest", "_pytest", "pluggy", "compatfuzz", "redis", "google", "grpc_tools",
    "cryptography", "pydantic", "pydantic_core", "cadwyn", "fastapi", "starlette",
    "kubernetes_validate", "typing_extensions", "exceptiongroup",
})
#: The config folders :func:`_put_first_on_path` appended to ``sys.path``, last used first.
_USER_PATHS: list[str] = []


@functools.cache
def _installed_roots() -> tuple[Path, ...]:
    """The standard library's and site-packages' folders."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    roots = [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    roots += [*site.getsitepackages(), site.getusersitepackages()]
    return tuple(dict.fromkeys(Path(r).resolve() for r in roots if r))


def _installed(file: str | None) -> bool:
    """Whether ``file`` (a module's ``__file__``; ``None`` for a built-in module) lives in
    the standard library or site-packages."""
    if file is None:
        return True
    where = Path(file).resolve()
    return any(where.is_relative_to(root) for root in _installed_roots())


def _protected(name: str) -> str | None:
    """Why the top-level module ``name`` must never be evicted or shadowed by a user's
    file of that name (``None`` when it may be)."""
    if name in sys.stdlib_module_names:
        return f"the standard library's {name!r}"
    if name in _NEEDED:
        return f"{name!r}, which compatfuzz imports"
    loaded = sys.modules.get(name)
    if loaded is not None and _installed(getattr(loaded, "__file__", None)):
        return f"the installed module {name!r} (already imported)"
    return None


def _put_first_on_path(module_name: str, base: Path, *, source: str = "<config>",
                       pointer: str = "") -> None:
    """Make the config's folder ``base`` the place ``module_name`` is imported from,
    without letting anything in it replace a module of the standard library or
    site-packages.

    A module this folder defines that another config's folder loaded (two
    ``conversion.py``) is forgotten, so this folder's wins; ``base`` is appended to
    ``sys.path`` (ahead of other config folders, after the standard library and
    site-packages), never prepended: a ``json.py`` beside the config used to evict the
    standard ``json`` and be run in its place.  ``module_name``'s own top-level module
    is imported from its file, so an installed module of the same name compatfuzz does
    not need does not win over it.

    Raises:
        SchemaLoadError: ``module_name`` is a module in ``base`` whose name is one
            compatfuzz needs (:func:`_protected`).
    """
    top = module_name.split(".", maxsplit=1)[0]
    file = _module_file(top, base)
    if file is None and not (base / top).is_dir():
        return  # an installed module
    why = _protected(top)
    file = file or base / top  # a namespace package: imported through sys.path
    if why is not None:
        raise SchemaLoadError(
            f"{file} has the name of {why}; compatfuzz does not import a module of yours in "
            "its place", source=source, pointer=pointer,
            hint=f"rename {top} (e.g. to my_{top}) and write {module_name!r} with the new "
                 "name")
    try:
        local = {p.stem if p.suffix == ".py" else p.name for p in base.iterdir()
                 if p.suffix == ".py" or (p / "__init__.py").is_file()}
    except OSError:
        local = {top}
    stale = set()
    for mod in local | {top}:
        loaded = sys.modules.get(mod)
        if loaded is None or _protected(mod) is not None:
            continue
        where = getattr(loaded, "__file__", None)
        if where is not None and not Path(where).resolve().is_relative_to(base):
            stale.add(mod)
    if stale:
        for name in [m for m in sys.modules if m.split(".", maxsplit=1)[0] in stale]:
            del sys.modules[name]
        importlib.invalidate_caches()
    for entry in [str(base), *_USER_PATHS]:
        if entry in sys.path:
            sys.path.remove(entry)
    if str(base) in _USER_PATHS:
        _USER_PATHS.remove(str(base))
    _USER_PATHS.insert(0, str(base))
    sys.path.extend(_USER_PATHS)
    if top not in sys.modules and file.is_file():
        _import_from_file(top, file)


def forget_folder(base: Path) -> None:
    """Take the config folder ``base`` off ``sys.path`` again (:func:`_put_first_on_path`
    put it there)."""
    for entry in (str(base), str(base.resolve())):
        while entry in sys.path:
            sys.path.remove(entry)
        if entry in _USER_PATHS:
            _USER_PATHS.remove(entry)


def _import_from_file(name: str, file: Path) -> None:
    """Import the top-level module ``name`` from ``file`` (a ``.py`` or a package's
    ``__init__.py``), as ``import name`` would from the file's folder."""
    import importlib.util

    package = file.name == "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, file, submodule_search_locations=[str(file.parent)] if package else None)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has one
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _module_file(dotted: str, base: Path) -> Path | None:
    local = base.joinpath(*dotted.split("."))
    for candidate in (local.with_suffix(".py"), local / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _local_modules(base: Path, limit: int = 500) -> list[str]:
    """Dotted names of the ``.py`` files under ``base`` (three levels, no hidden or
    virtualenv folders): the candidates for a misspelt module."""
    names: list[str] = []
    skip = {"site-packages", "node_modules", "__pycache__", "build", "dist"}
    for depth in range(3):
        for file in sorted(base.glob("/".join(["*"] * depth + ["*.py"]))):
            rel = file.relative_to(base).parts
            if any(p.startswith(".") or p in skip or "venv" in p for p in rel[:-1]):
                continue
            stem = rel[-1][:-3]
            names.append(".".join([*rel[:-1]] if stem == "__init__" else [*rel[:-1], stem]))
            if len(names) >= limit:
                return names
    return [n for n in names if n]


def _missing_module(spec: str, module_name: str, attr: str, base: Path, *, source: str,
                    pointer: str) -> SchemaLoadError:
    rel = module_name.replace(".", "/")
    close = difflib.get_close_matches(module_name, _local_modules(base), n=2, cutoff=0.6)
    hint = (f"did you mean {' or '.join(repr(f'{c}:{attr}') for c in close)}? "
            if close else f"put {rel}.py in {base} or install the package; ")
    return SchemaLoadError(
        f"cannot import {module_name!r} for {spec!r}: there is no {rel}.py (or "
        f"{rel}/__init__.py) in the config's folder {base}, and no installed module of "
        "that name", source=source, pointer=pointer,
        hint=hint + "write it as 'module:function', the module relative to the config "
             "file's folder",
    )


def _names_a_module(spec: str, base: Path, source: str, pointer: str) -> SchemaLoadError:
    file = _module_file(spec, base)
    try:
        names = _functions(importlib.import_module(spec))
    except Exception:  # the module's own import error is not this message's business
        names = []
    example = next((n for n in names if n == "convert"), names[0] if names else "convert")
    return SchemaLoadError(
        f"{spec!r} names a module ({file}), not a function in it"
        + (f"; it defines: {', '.join(names[:10])}" if names else ""),
        source=source, pointer=pointer,
        hint=f"write it as 'module:function', e.g. '{spec}:{example}'",
    )


def _functions(module: Any) -> list[str]:
    """The public functions a module defines itself (not the ones it imports)."""
    name = getattr(module, "__name__", "")
    return sorted(k for k, v in vars(module).items()
                  if not k.startswith("_") and callable(v)
                  and getattr(v, "__module__", None) == name)


def load_config(path: str | Path, *, api: str | None = None,
                ref_roots: Iterable[str | Path] = ()) -> list[API | Suite]:
    """Return the APIs declared in a ``compatfuzz.toml`` or ``pyproject.toml``.

    ``api`` keeps only the API of that name.  A schema's ``$ref`` may read files under
    its own folder, the config's folder, the config's ``allow_ref_roots`` (relative to
    the config) and ``ref_roots`` (the CLI's ``--allow-ref-root``); nothing else.

    Raises:
        SchemaLoadError: unreadable TOML, a missing or unknown key, a file or function
            that cannot be found (the message names the file, the key and a fix).
    """
    path = Path(path)
    source = str(path)
    from compatfuzz.schema._read import read_text

    try:
        doc = tomllib.loads(read_text(path))  # a regular file, bounded
    except FileNotFoundError:
        raise SchemaLoadError("config file not found", source=source,
                              hint="pass --config with the path to compatfuzz.toml") from None
    except IsADirectoryError:
        raise SchemaLoadError("is a folder, not a config file", source=source,
                              hint=f"pass --config {path / 'compatfuzz.toml'}") from None
    except UnicodeDecodeError as exc:
        raise SchemaLoadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                              source=source, hint="save the config as UTF-8") from None
    except OSError as exc:
        raise SchemaLoadError(f"cannot read the config: {exc.strerror}", source=source,
                              hint="check the path and its permissions") from None
    except tomllib.TOMLDecodeError as exc:
        raise SchemaLoadError(
            f"invalid TOML: {exc}", source=source,
            hint="fix the TOML at that line: strings need double quotes (convert = "
                 '"conversion:convert"), an API is a [[api]] table, and a key appears once '
                 "per table",
        ) from None
    except RecursionError:
        raise SchemaLoadError("nested too deeply to read (thousands of [ or { levels)",
                              source=source, hint="a config holds a few flat tables: "
                              "check that this is the right file") from None
    table, prefix = _table(doc, path)
    if table is None:
        raise SchemaLoadError("no [tool.compatfuzz] table", source=source,
                              hint="add an API:\n" + _EXAMPLE.replace("[[api]]",
                                                                     "[[tool.compatfuzz.api]]")
                              + "\n  (or run 'compatfuzz init CRD_OR_SCHEMA_FILE')")
    _check_top_keys(table, source, prefix)
    entries = table.get("api")
    if isinstance(entries, Mapping):
        raise SchemaLoadError(
            "api is a single table ([api]); APIs are an array of tables", source=source,
            pointer=f"{prefix}/api",
            hint=f"write [[{'tool.compatfuzz.' if prefix else ''}api]] (double brackets)",
        )
    if not isinstance(entries, list) or not entries:
        raise SchemaLoadError(
            "no APIs declared", source=source, pointer=f"{prefix}/api",
            hint="add an API:\n" + (_EXAMPLE.replace("[[api]]", "[[tool.compatfuzz.api]]")
                                    if prefix else _EXAMPLE)
            + "\n  (or run 'compatfuzz init CRD_OR_SCHEMA_FILE')",
        )
    base = path.parent
    roots = [base, *_ref_roots(table, base, source, prefix), *map(Path, ref_roots)]
    apis: list[API | Suite] = []
    names = [e.get("name") for e in entries if isinstance(e, Mapping)]
    if api is not None and api not in names:
        raise SchemaLoadError(
            f"no API named {api!r}", source=source, pointer=f"{prefix}/api",
            hint=f"the config declares: {', '.join(map(str, names))}",
        )
    for i, entry in enumerate(entries):
        where = f"{prefix}/api/{i}"
        if not isinstance(entry, Mapping):
            raise SchemaLoadError("expected a table", source=source, pointer=where)
        if api is not None and entry.get("name") != api:
            continue
        apis.append(_load_api(ConfigEntry(entry, base, source, where, tuple(roots))))
    for a in apis:
        a.source = str(path.resolve())
    return apis


_TOP_KEYS = {"api", "allow_ref_roots", "diff"}  # [diff]: compat/_settings.py
_EXAMPLE = """  [[api]]
  name = "widgets"
  crd = "config/crd/widgets.yaml"         # or: schemas = { v1 = "v1.json", v2 = "v2.json" }
  convert = "widgets.conversion:convert"  # module:function, relative to this file"""


def _check_top_keys(table: Mapping[str, Any], source: str, prefix: str) -> None:
    """``[[apis]]`` is a typo of ``[[api]]``, not "no APIs declared"."""
    for key in table:
        if key in _TOP_KEYS:
            continue
        api_keys = _KEYS | set(_families())
        close = difflib.get_close_matches(key, sorted(_TOP_KEYS | api_keys), n=1, cutoff=0.6)
        if close and close[0] in api_keys:
            fix = (f"{key!r} belongs inside an API: put it under its "
                   f"[[{'tool.compatfuzz.' if prefix else ''}api]] table")
        elif close:
            fix = f"did you mean {close[0]!r}?"
        else:
            fix = f"the top-level keys are: {', '.join(sorted(_TOP_KEYS))}"
        raise SchemaLoadError(f"unknown key {key!r}", source=source,
                              pointer=f"{prefix}/{key}", hint=fix)


def _ref_roots(table: Mapping[str, Any], base: Path, source: str, prefix: str) -> list[Path]:
    """The config's ``allow_ref_roots``: folders (relative to the config) a $ref may read."""
    raw = table.get("allow_ref_roots", [])
    if not isinstance(raw, list) or not all(isinstance(r, str) and r for r in raw):
        raise SchemaLoadError(
            f"allow_ref_roots must be a list of folder paths, got {raw!r}", source=source,
            pointer=f"{prefix}/allow_ref_roots",
            hint='write allow_ref_roots = ["../shared-schemas"] (relative to this file)',
        )
    roots = []
    for i, item in enumerate(raw):
        folder = base / item
        if not folder.is_dir():
            raise SchemaLoadError(
                f"allow_ref_roots entry {item!r} is not a folder (looked for {folder})",
                source=source, pointer=f"{prefix}/allow_ref_roots/{i}",
                hint="paths are relative to the config file's folder",
            )
        roots.append(folder)
    return roots


@dataclass(frozen=True)
class ConfigEntry:
    """One ``[[api]]`` table and where it is: what the loader of an API family gets.

    ``base`` is the config's folder (relative paths start there), ``source`` the config
    file, ``pointer`` the table's JSON pointer (``/api/0``), ``ref_roots`` the folders a
    schema's ``$ref`` may read.  The methods resolve values and report mistakes as
    ``SchemaLoadError`` naming the file, the key and a fix.

    .. versionadded:: 0.2
    """

    table: Mapping[str, Any]
    base: Path
    source: str
    pointer: str
    ref_roots: tuple[Path, ...] = ()

    def error(self, message: str, *, key: str | None = None,
              hint: str = "") -> SchemaLoadError:
        """A ``SchemaLoadError`` at this table, or at its ``key`` (``a/b`` for nested)."""
        pointer = self.pointer if key is None else f"{self.pointer}/{key}"
        return SchemaLoadError(message, source=self.source, pointer=pointer, hint=hint)

    def check_keys(self, keys: Collection[str]) -> None:
        """Refuse keys outside ``keys``, suggesting the closest one."""
        unknown = set(self.table) - set(keys)
        if unknown:
            guesses = [f"{k!r} -> {c[0]!r}" for k in sorted(unknown)
                       if (c := difflib.get_close_matches(k, sorted(keys), n=1, cutoff=0.6))]
            # keys of the file's top level written inside a table (allow_ref_roots = [...]
            # under [[api]]): say where they belong rather than only that they are unknown
            misplaced = sorted(unknown & _TOP_KEYS)
            where = (f"{', '.join(misplaced)} belongs at the top of the file, before the "
                     "first [[api]] table; " if misplaced else "")
            raise self.error(
                f"unknown key(s) {', '.join(sorted(unknown))}",
                hint=where + (f"did you mean {', '.join(guesses)}? " if guesses else "")
                + f"the keys are: {', '.join(sorted(keys))}",
            )

    def name(self) -> str:
        """The API's ``name``."""
        name = self.table.get("name")
        if not isinstance(name, str) or not name:
            raise self.error("missing name", hint='add name = "widgets"')
        return name

    def function(self, key: str, value: Any) -> Any:
        """The object a ``"module:function"`` value at ``key`` names."""
        if not isinstance(value, str):
            raise self.error(f"expected a dotted path string, got {value!r}", key=key,
                             hint='write it as "package.module:function"')
        return resolve_object(value, self.base, source=self.source,
                              pointer=f"{self.pointer}/{key}")

    def mapping(self, key: str) -> Mapping[str, Any]:
        """The table at ``key``."""
        return _mapping(self.table, key, self.source, self.pointer)

    def converter_options(self) -> dict[str, Any]:
        """``convert``, ``to_hub``, ``from_hub``, ``hub`` and ``converters``
        (``{ "v1->v2" = "mod:f" }``) as keyword arguments for the API's constructor."""
        options: dict[str, Any] = {}
        for key in ("convert", "to_hub", "from_hub"):
            if key in self.table:
                options[key] = self.function(key, self.table[key])
        if "hub" in self.table:
            options["hub"] = str(self.table["hub"])
        if "converters" in self.table:
            pairs = {}
            for pair, spec in self.mapping("converters").items():
                a, arrow, b = pair.partition("->")
                if not arrow:
                    raise self.error(f"converter key {pair!r} is not 'from->to'",
                                     key="converters", hint='write "v1alpha1->v1" = "mod:f"')
                pairs[(a.strip(), b.strip())] = self.function(f"converters/{pair}", spec)
            options["converters"] = pairs
        return options

    def accept_entries(self, versions: Sequence[Sequence[str]] | None = None) -> list[Any]:
        """The ``[[api.accept]]`` tables as :class:`~compatfuzz.roundtrip.Accept` entries
        (none without the key); with ``versions`` (each kind's version names) each is
        also checked to name versions the API has, as ``API`` does for a CRD.

        Raises:
            SchemaLoadError: a malformed entry, at ``accept/<i>[/<key>]`` with the fix.
        """
        from compatfuzz.roundtrip._check._accept import check_accepts, from_table

        if "accept" not in self.table:
            return []
        raw = self.table["accept"]
        array = ("[[tool.compatfuzz.api.accept]]" if self.pointer.startswith("/tool")
                 else "[[api.accept]]")
        example = (f'{array}\nproperty = "roundtrip"\nversions = "v1->v1alpha1"\n'
                   'path = "spec.timeout"\nwhy = "v1alpha1 holds whole seconds only"')
        if not isinstance(raw, list) or not all(isinstance(e, Mapping) for e in raw):
            raise self.error(f"accept must be an array of tables, got {raw!r}", key="accept",
                             hint=f"write each entry as its own table after the [[api]] it "
                                  f"belongs to:\n{example}")
        entries = []
        for i, entry in enumerate(raw):
            try:
                entries.append(from_table(entry))
            except AcceptError as exc:
                raise self.error(exc.reason, key=_accept_key(i, exc), hint=exc.hint) from None
        if versions is None:
            return entries
        try:
            return list(check_accepts(self.name(), entries, versions))
        except AcceptError as exc:
            raise self.error(exc.reason, key=_accept_key(exc.index or 0, exc),
                             hint=exc.hint) from None

    def path(self, key: str, value: Any, *, what: str = "file or folder") -> Path:
        """``value`` (at ``key``) as a path relative to the config's folder, which must
        exist."""
        if not isinstance(value, str) or not value:
            raise self.error(f"expected a path string, got {value!r}", key=key,
                             hint="paths are relative to the config file's folder")
        found = self.base / value
        if not found.exists():
            raise self.error(f"{what} {value!r} not found (looked in {self.base})", key=key,
                             hint="paths are relative to the config file's folder")
        return found

    def import_module(self, key: str, name: str) -> Any:
        """Import module ``name``, looking first in the config's folder."""
        _put_first_on_path(name, self.base.resolve(), source=self.source,
                           pointer=f"{self.pointer}/{key}")
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise self.error(
                f"cannot import {name!r}: {exc}", key=key,
                hint=f"put {name.replace('.', '/')}.py in {self.base} or install the package "
                     "that ships it") from None

    def named_by(self, exc: SchemaLoadError, key: str) -> SchemaLoadError:
        """``exc`` (about a file the config names) also naming this table's ``key``."""
        if exc.source == self.source:
            return exc
        return _named_by(exc, self.source, f"{self.pointer}/{key}")


def _close_file(written: str, base: Path) -> str:
    """``; did you mean 'crds/widget.yaml'?`` for a misspelt file name, from its folder."""
    relative = Path(written).parent
    try:
        folder = base / relative
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        return ""
    close = difflib.get_close_matches(Path(written).name, names[:5000], n=1, cutoff=0.6)
    return f"; did you mean {(relative / close[0]).as_posix()!r}?" if close else ""


@functools.lru_cache(maxsize=1)
def _families() -> dict[str, Any]:
    """The ``compatfuzz.apis`` entry points by name: config key -> loader."""
    import importlib.metadata

    try:
        found = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # a broken installation: only the built-in CRD/schema keys
        return {}
    return {ep.name: ep for ep in found}


def _converter_kinds() -> dict[str, Callable[[Mapping[str, Any], Path, str, str],
                                             dict[str, Any]]]:
    """The converter kinds by config key: :data:`CONVERTER_KEYS` and those of the
    ``compatfuzz.converters`` entry points (``go``: ``compatfuzz.golang``), loaded only
    when their key is used."""
    import importlib.metadata

    kinds = dict(CONVERTER_KEYS)
    try:
        found = importlib.metadata.entry_points(group=CONVERTER_ENTRY_POINT_GROUP)
    except Exception:  # a broken installation: the built-in kinds only
        return kinds
    for ep in found:
        kinds.setdefault(ep.name, functools.partial(_load_converter_kind, ep))
    return kinds


def _load_converter_kind(ep: Any, entry: Mapping[str, Any], base: Path, source: str,
                         where: str) -> dict[str, Any]:
    try:
        make = ep.load()
    except ImportError as exc:
        raise SchemaLoadError(f"the {ep.name} converter cannot be loaded ({exc})",
                              source=source, pointer=f"{where}/{ep.name}",
                              hint=_install_hint(ep, exc.name or ep.value)) from None
    options: dict[str, Any] = make(entry, base, source, where)
    return options


def _install_hint(ep: Any, missing: str) -> str:
    """``pip install 'compatfuzz[protobuf]'`` when the entry point names its extra."""
    extras = list(getattr(ep, "extras", None) or ())
    dist = getattr(getattr(ep, "dist", None), "name", None)
    if extras and dist:
        return f"pip install '{dist}[{','.join(extras)}]'"
    return f"install the package that provides {missing.partition('.')[0]!r}"


def _load_family(key: str, ctx: ConfigEntry) -> API | Suite:
    """An API of another family, by the loader registered for ``key``."""
    families = _families()
    clash = [k for k in ("crd", "schemas", *families) if k in ctx.table and k != key]
    if clash:
        raise ctx.error(
            f"{key} and {', '.join(clash)} both give the API's versions",
            hint=f"keep one: an API is a CRD (crd), schema files (schemas) or {key} "
                 "definitions; declare another [[api]] for the other")
    ep = families[key]
    try:
        loader = ep.load()
    except ImportError as exc:
        missing = exc.name or str(exc)
        raise ctx.error(
            f"{key} = ... needs {missing!r}, which is not installed (its loader "
            f"{ep.value.split()[0]} cannot be imported: {exc})", key=key,
            hint=_install_hint(ep, missing)) from None
    try:
        api = loader(ctx)
    except SchemaLoadError as exc:
        raise ctx.named_by(exc, key) from exc
    except CompatfuzzError as exc:
        raise ctx.error(str(exc)) from exc
    if not isinstance(api, (API, Suite)):
        raise ctx.error(f"the loader for {key} ({ep.value}) returned {type(api).__name__}, "
                        "not a compatfuzz.roundtrip.Suite", key=key,
                        hint=f"fix the {ENTRY_POINT_GROUP} entry point {key!r}")
    return api


def _load_api(ctx: ConfigEntry) -> API | Suite:
    entry, base, source, where = ctx.table, ctx.base, ctx.source, ctx.pointer
    roots = list(ctx.ref_roots)
    kinds = _converter_kinds()
    others = set(entry) - _KEYS - set(kinds)
    family = sorted(k for k in others if k in _families()) if others else []
    if family:
        return _load_family(family[0], ctx)
    for key in sorted(others):
        # "protos =" for "proto =": say that alone, not also "messages" (a key of the
        # family the typo hides) with the CRD keys listed as the valid ones
        close = difflib.get_close_matches(key, sorted(_families()), n=1, cutoff=0.6)
        if close:
            raise ctx.error(f"unknown key {key!r}", key=key,
                            hint=f"did you mean {close[0]!r}? ({close[0]} = ... declares "
                                 "an API of that family; its other keys are checked then)")
    ctx.check_keys(_KEYS | set(kinds) | (set(_families()) if others else set()))
    name = ctx.name()
    fn = ctx.function

    options: dict[str, Any] = {}
    given = [key for key in kinds if key in entry]
    if len(given) > 1:
        raise ctx.error(f"{' and '.join(given)} both convert",
                        hint="keep one converter kind per API")
    for key in given:
        options.update(kinds[key](entry, base, source, where))
    options.update(ctx.converter_options())
    if "pipeline" in entry:
        from compatfuzz.roundtrip._check._model import PIPELINES

        if entry["pipeline"] not in PIPELINES:
            raise SchemaLoadError(
                f"pipeline must be one of {', '.join(map(repr, PIPELINES))}, got "
                f"{entry['pipeline']!r}", source=source, pointer=f"{where}/pipeline",
                hint='pipeline = "apiserver" judges round trips as a Kubernetes API server '
                     'would (pruning, defaulting, conversion-response rules); "plain" compares '
                     "the converters' dicts",
            )
        options["pipeline"] = entry["pipeline"]
        if entry["pipeline"] == "apiserver" and "schemas" in entry and "hub" not in entry:
            raise SchemaLoadError(
                "pipeline='apiserver' needs a storage version for plain schemas",
                source=source, pointer=where,
                hint='add hub = "<version>": the version objects are stored in',
            )
    if "apiserver" in entry:
        if entry["apiserver"] not in ("model", "real", "both"):
            raise SchemaLoadError(
                f"apiserver must be \"model\", \"real\" or \"both\", got "
                f"{entry['apiserver']!r}", source=source, pointer=f"{where}/apiserver",
                hint='apiserver = "real" sends round trips through a kube-apiserver and etcd '
                     'started for the run; "both" through the model too, comparing every '
                     'step (docs/apiserver.md)')
        options["apiserver"] = entry["apiserver"]
    if "semantic" in entry:
        options.update(_semantic(ctx.mapping("semantic"), base, source,
                                 f"{where}/semantic", fn))
    options.update(_accept_options(ctx))
    if "overrides" in entry:
        from compatfuzz.roundtrip._check._config_overrides import overrides_option

        options["overrides"] = overrides_option(ctx)
    if "defaulters" in entry:
        options["defaulters"] = {
            version: fn(f"defaulters/{version}", spec)
            for version, spec in ctx.mapping("defaulters").items()
        }
    if ("crd" in entry) == ("schemas" in entry):
        raise SchemaLoadError(
            "exactly one of crd and schemas is needed", source=source, pointer=where,
            hint='crd = "path/to/crd.yaml" or schemas = { v1 = "v1.json", v2 = "v2.json" }',
        )
    key = f"{where}/crd"
    try:
        if "crd" in entry:
            crd_path = base / str(entry["crd"])
            if not crd_path.is_file():
                raise SchemaLoadError(
                    f"CRD file {str(entry['crd'])!r} not found (looked in {base})"
                    + _close_file(str(entry['crd']), base), source=source, pointer=f"{where}/crd",
                    hint="paths are relative to the config file's folder",
                )
            return API.from_crd(name, crd_path, kind=entry.get("kind"), **options)
        from compatfuzz.schema import load_kubernetes, load_schema
        from compatfuzz.schema._spec import parse_spec

        # each value names a schema as every command does: FILE, FILE#NAME, FILE@VERSION,
        # or k8s:[RELEASE:]API_VERSION:KIND (files relative to the config's folder)
        specs = {}
        for version, spec in _mapping(entry, "schemas", source, where).items():
            key = f"{where}/schemas/{version}"
            text = str(spec)
            builtin = text.startswith(("k8s:", "kubernetes:"))
            parsed = parse_spec(text if builtin else str(base / text))
            if not builtin and (parsed.path is None or not parsed.path.is_file()):
                raise SchemaLoadError(
                    f"schema file {text!r} not found (looked in {base})"
                    + _close_file(text, base), source=source,
                    pointer=f"{where}/schemas/{version}",
                    hint="paths are relative to the config file's folder; one model of a "
                         "document is FILE#NAME, one version of a CRD FILE@VERSION",
                )
            specs[version] = parsed

        loaded = {}
        for version, parsed in specs.items():
            key = f"{where}/schemas/{version}"
            if parsed.builtin:
                assert parsed.api_version is not None and parsed.kind is not None
                loaded[version] = load_kubernetes(parsed.api_version, parsed.kind,
                                                  release=parsed.release or "1.37")
            else:
                assert parsed.path is not None
                loaded[version] = load_schema(parsed.path, version=parsed.version,
                                              definition=parsed.definition,
                                              ref_roots=roots)
        key = where
        return API.from_schemas(name, loaded, kind=entry.get("kind"),
                                group=str(entry.get("group", "")), ref_roots=roots,
                                **options)
    except SchemaLoadError as exc:
        if exc.source == source:
            raise
        raise _named_by(exc, source, key) from exc
    except AcceptError as exc:  # checked against the API's versions
        raise SchemaLoadError(exc.reason, source=source,
                              pointer=f"{where}/{_accept_key(exc.index or 0, exc)}",
                              hint=exc.hint) from None
    except CompatfuzzError as exc:
        raise SchemaLoadError(str(exc), source=source, pointer=where) from exc


def _accept_options(ctx: ConfigEntry) -> dict[str, Any]:
    """``[[api.accept]]`` tables and ``stash_annotations``, checked where they are written
    (the versions an entry names are checked once the API's versions are known)."""
    options: dict[str, Any] = {}
    table = ctx.table
    if "stash_annotations" in table:
        value = table["stash_annotations"]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ctx.error(
                f"stash_annotations must be a list of annotation-key prefixes, got "
                f"{value!r}", key="stash_annotations",
                hint='write stash_annotations = ["cluster.x-k8s.io/conversion-data"]')
        options["stash_annotations"] = value
    if "plan_limit" in table:
        from compatfuzz.roundtrip._check._limits import plan_limit_arg

        try:
            options["plan_limit"] = plan_limit_arg(table["plan_limit"])
        except CompatfuzzError:
            raise ctx.error(
                f"plan_limit must be a positive number of version tuples or \"none\", got "
                f"{table['plan_limit']!r}", key="plan_limit",
                hint='write plan_limit = 1000, or plan_limit = "none" to plan every version '
                     "pair and triple") from None
    if "accept" in table:
        options["accept"] = ctx.accept_entries()
    return options


def _accept_key(index: int, exc: AcceptError) -> str:
    """``accept/1/versions``, or ``accept/1`` for a mistake of the whole entry."""
    return f"accept/{index}" + ("" if exc.key is None else f"/{exc.key}")


def _named_by(exc: SchemaLoadError, config: str, pointer: str) -> SchemaLoadError:
    """``exc`` (about a schema file) also naming the config key that pointed at the file."""
    from compatfuzz.errors import _pointer_to_path

    named = type(exc)(f"{exc.reason}\n  named by: {config} at {_pointer_to_path(pointer)}",
                      source=exc.source, pointer=exc.pointer, hint=exc.hint)
    return named


# (config file, JSON pointer of the rule) -> the rule registered for it, so that loading a
# config again replaces its rules instead of stacking copies
_RULES: dict[tuple[str, str], Any] = {}


def _semantic(table: Mapping[str, Any], base: Path, source: str, where: str,
              fn: Any) -> dict[str, Any]:
    """``[api.semantic]``: the semantic settings otherwise set in Python.

    ``go_durations`` and ``empty_struct_is_absent = true`` become the API's options;
    ``empty_struct_is_absent = [globs]``, ``comparators`` and ``canonicalisers``
    (``{ glob = "module:function" }``) are registered with ``compatfuzz.semantic`` by path,
    so they apply wherever that path appears.
    """
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.semantic import PathGlob, register_canonicaliser, register_comparator

    unknown = sorted(set(table) - _SEMANTIC_KEYS)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(_SEMANTIC_KEYS), n=1)
        raise SchemaLoadError(
            f"unknown key(s) {', '.join(unknown)} in semantic", source=source, pointer=where,
            hint=(f"did you mean {close[0]!r}? " if close else "")
            + f"the keys are: {', '.join(sorted(_SEMANTIC_KEYS))}",
        )

    def globs(key: str, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SchemaLoadError(
                f"{key} must be a list of field-path globs, got {value!r}", source=source,
                pointer=f"{where}/{key}", hint=f'write {key} = ["spec.timeout", "spec.**.ttl"]',
            )
        for i, glob in enumerate(value):
            try:
                PathGlob.parse(glob)
            except InvalidArgument as exc:
                raise SchemaLoadError(str(exc), source=source, pointer=f"{where}/{key}/{i}",
                                      hint="field-path globs: spec.x, spec.items[*].y, "
                                           "**.name") from None
        return list(value)

    def register(key: str, glob: str, rule: Any) -> None:
        pointer = f"{where}/{key}/{_escape(glob)}"
        old = _RULES.pop((source, pointer), None)
        if old is not None:
            old.unregister()
        try:
            _RULES[(source, pointer)] = rule(glob)
        except InvalidArgument as exc:
            raise SchemaLoadError(str(exc), source=source, pointer=pointer,
                                  hint="the key is a field-path glob, the value "
                                       "'module:function'") from None

    options: dict[str, Any] = {}
    if "go_durations" in table:
        options["go_durations"] = globs("go_durations", table["go_durations"])
    empty = table.get("empty_struct_is_absent", False)
    if isinstance(empty, bool):
        options["empty_struct_is_absent"] = empty
    else:
        for glob in globs("empty_struct_is_absent", empty):
            register("empty_struct_is_absent", glob,
                     lambda g: register_canonicaliser(_empty_is_absent, path=g))
    for key, registrar in (("comparators", register_comparator),
                           ("canonicalisers", register_canonicaliser)):
        if key in table:
            for glob, spec in _mapping(table, key, source, where).items():
                function = fn(f"semantic/{key}/{_escape(glob)}", spec)
                register(key, glob,
                         lambda g, f=function, r=registrar: r(f, path=g))
    return options


def _escape(key: str) -> str:
    """A key as one JSON-pointer step (``/`` and ``~`` escaped)."""
    return key.replace("~", "~0").replace("/", "~1")


def _empty_is_absent(value: Any) -> Any:
    """``{}`` means absent (``None``); anything else is left to the built-in comparison."""
    return None if value == {} else NotImplemented


def _webhook(entry: Mapping[str, Any], base: Path, source: str, where: str
             ) -> dict[str, Any]:
    """``webhook = URL`` (plus ``webhook_ca``, ``webhook_insecure``, ``webhook_timeout``):
    the CRD's real conversion webhook as the ``convert`` function."""
    from compatfuzz.roundtrip._check._webhook import ca_context, webhook_converter

    clash = [k for k in ("convert", "to_hub", "from_hub") if k in entry]
    if clash:
        raise SchemaLoadError(
            f"webhook and {', '.join(clash)} both convert", source=source, pointer=where,
            hint="keep one: the webhook, or the Python converters",
        )
    ca = entry.get("webhook_ca")
    insecure = entry.get("webhook_insecure", False)
    if not isinstance(insecure, bool):
        # "yes" or "false" as a string used to mean false, silently
        raise SchemaLoadError(
            f"webhook_insecure must be true or false, got {insecure!r} "
            f"({type(insecure).__name__})", source=source,
            pointer=f"{where}/webhook_insecure",
            hint="write webhook_insecure = true (a TOML boolean, without quotes)",
        )
    ca_file = None if ca is None else base / str(ca)
    if ca_file is not None and not insecure and str(entry["webhook"]).startswith("https://"):
        try:
            ca_context(ca_file)  # exit 2 naming webhook_ca and the file, before any unit
        except CompatfuzzError as exc:
            raise SchemaLoadError(
                str(exc).replace("ca_file ", "webhook_ca ", 1), source=source,
                pointer=f"{where}/webhook_ca",
                hint="webhook_ca is relative to the config file's folder and names the "
                     "PEM CA bundle that signed the webhook's certificate (the CRD's "
                     "caBundle, base64-decoded)") from None
    try:
        return {"convert": webhook_converter(
            str(entry["webhook"]), ca_file=ca_file,
            insecure=insecure,
            timeout=entry.get("webhook_timeout", 10.0),
        )}
    except CompatfuzzError as exc:
        raise SchemaLoadError(str(exc), source=source, pointer=f"{where}/webhook",
                              hint="paths (webhook_ca) are relative to the config file's "
                                   "folder") from None


def _mapping(entry: Mapping[str, Any], key: str, source: str, where: str) -> Mapping[str, Any]:
    value = entry[key]
    if not isinstance(value, Mapping):
        raise SchemaLoadError(f"expected a table, got {value!r}", source=source,
                              pointer=f"{where}/{key}",
                              hint=f'write it as a TOML table: {key} = {{ name = "value", ... }}')
    return value


#: A built-in converter kind's config key, and what makes the API's converter options of it (``API``
#: keywords: ``convert=`` for a webhook, ``converter=`` for any ``_converter.Converter``).
#: The keys that configure a kind (``webhook_ca``, ...) are listed in ``_KEYS``.
CONVERTER_KEYS: dict[str, Callable[[Mapping[str, Any], Path, str, str], dict[str, Any]]] = {
    "webhook": _webhook,
}
