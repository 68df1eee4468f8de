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
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from compatfuzz.errors import CompatfuzzError, SchemaLoadError
from compatfuzz.roundtrip._model import API

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["find_config", "load_config", "resolve_object"]

_KEYS = {"name", "crd", "schemas", "kind", "group", "hub", "convert", "to_hub", "from_hub",
         "converters", "defaulters", "webhook", "webhook_ca", "webhook_insecure",
         "webhook_timeout", "pipeline"}
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
    """Import ``module:attr`` (or ``module.attr``), looking first in the folder ``base``."""
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise SchemaLoadError(
            f"{spec!r} is not a dotted path to a function", source=source, pointer=pointer,
            hint="write it as 'package.module:function'",
        )
    base = base.resolve()
    local = base.joinpath(*module_name.split("."))
    is_local = local.with_suffix(".py").is_file() or (local / "__init__.py").is_file()
    if is_local:
        if str(base) not in sys.path:
            sys.path.insert(0, str(base))
        # Another config's module of the same name (e.g. two 'conversion.py') must not win.
        loaded = sys.modules.get(module_name)
        file = getattr(loaded, "__file__", None)
        if loaded is not None and (file is None or not Path(file).resolve().is_relative_to(
                base)):
            for name in [m for m in sys.modules
                         if m == module_name.split(".")[0]
                         or m.startswith(module_name.split(".")[0] + ".")]:
                del sys.modules[name]
            importlib.invalidate_caches()
        if str(base) in sys.path:
            sys.path.remove(str(base))
        sys.path.insert(0, str(base))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SchemaLoadError(
            f"cannot import {module_name!r} for {spec!r}: {exc}", source=source,
            pointer=pointer,
            hint=f"put {module_name.replace('.', '/')}.py next to the config file or install it",
        ) from None
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise SchemaLoadError(
            f"module {module_name!r} has no attribute {attr!r}", source=source,
            pointer=pointer, hint="check the function name after the ':'",
        ) from None
    return obj


def load_config(path: str | Path, *, api: str | None = None,
                ref_roots: Iterable[str | Path] = ()) -> list[API]:
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
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
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
        raise SchemaLoadError(f"invalid TOML: {exc}", source=source) from None
    except RecursionError:
        raise SchemaLoadError("nested too deeply to read (thousands of [ or { levels)",
                              source=source, hint="a config holds a few flat tables: "
                              "check that this is the right file") from None
    table, prefix = _table(doc, path)
    if table is None:
        raise SchemaLoadError("no [tool.compatfuzz] table", source=source,
                              hint="add [[tool.compatfuzz.api]] entries, see docs/roundtrip.md")
    entries = table.get("api")
    if not isinstance(entries, list) or not entries:
        raise SchemaLoadError(
            "no APIs declared", source=source, pointer=f"{prefix}/api",
            hint=f"add a [[{'tool.compatfuzz.' if prefix else ''}api]] table with name, crd "
            "(or schemas) and convert (or to_hub/from_hub)",
        )
    base = path.parent
    roots = [base, *_ref_roots(table, base, source, prefix), *map(Path, ref_roots)]
    apis = []
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
        apis.append(_load_api(entry, base, source, where, roots))
    for a in apis:
        a.source = str(path.resolve())
    return apis


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


def _load_api(entry: Mapping[str, Any], base: Path, source: str, where: str,
              roots: list[Path]) -> API:
    unknown = set(entry) - _KEYS
    if unknown:
        raise SchemaLoadError(
            f"unknown key(s) {', '.join(sorted(unknown))}", source=source, pointer=where,
            hint=f"the keys are: {', '.join(sorted(_KEYS))}",
        )
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise SchemaLoadError("missing name", source=source, pointer=where,
                              hint='add name = "widgets"')

    def fn(key: str, value: Any) -> Any:
        if not isinstance(value, str):
            raise SchemaLoadError(
                f"expected a dotted path string, got {value!r}", source=source,
                pointer=f"{where}/{key}", hint='write it as "package.module:function"',
            )
        return resolve_object(value, base, source=source, pointer=f"{where}/{key}")

    options: dict[str, Any] = {}
    if "webhook" in entry:
        options["convert"] = _webhook(entry, base, source, where)
    for key in ("convert", "to_hub", "from_hub"):
        if key in entry:
            options[key] = fn(key, entry[key])
    if "hub" in entry:
        options["hub"] = str(entry["hub"])
    if "pipeline" in entry:
        from compatfuzz.roundtrip._model import PIPELINES

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
    if "converters" in entry:
        pairs = {}
        for pair, spec in _mapping(entry, "converters", source, where).items():
            a, arrow, b = pair.partition("->")
            if not arrow:
                raise SchemaLoadError(
                    f"converter key {pair!r} is not 'from->to'", source=source,
                    pointer=f"{where}/converters", hint='write "v1alpha1->v1" = "mod:f"',
                )
            pairs[(a.strip(), b.strip())] = fn(f"converters/{pair}", spec)
        options["converters"] = pairs
    if "defaulters" in entry:
        options["defaulters"] = {
            version: fn(f"defaulters/{version}", spec)
            for version, spec in _mapping(entry, "defaulters", source, where).items()
        }
    if ("crd" in entry) == ("schemas" in entry):
        raise SchemaLoadError(
            "exactly one of crd and schemas is needed", source=source, pointer=where,
            hint='crd = "path/to/crd.yaml" or schemas = { v1 = "v1.json", v2 = "v2.json" }',
        )
    try:
        if "crd" in entry:
            crd_path = base / str(entry["crd"])
            if not crd_path.is_file():
                raise SchemaLoadError(
                    f"CRD file {str(entry['crd'])!r} not found (looked in {base})",
                    source=source, pointer=f"{where}/crd",
                    hint="paths are relative to the config file's folder",
                )
            return API.from_crd(name, crd_path, kind=entry.get("kind"), **options)
        schemas = {}
        for version, spec in _mapping(entry, "schemas", source, where).items():
            schema_path = base / str(spec)
            if not schema_path.is_file():
                raise SchemaLoadError(
                    f"schema file {str(spec)!r} not found (looked in {base})", source=source,
                    pointer=f"{where}/schemas/{version}",
                    hint="paths are relative to the config file's folder",
                )
            schemas[version] = schema_path
        return API.from_schemas(name, schemas, kind=entry.get("kind"),
                                group=str(entry.get("group", "")), ref_roots=roots,
                                **options)
    except SchemaLoadError:
        raise
    except CompatfuzzError as exc:
        raise SchemaLoadError(str(exc), source=source, pointer=where) from exc


def _webhook(entry: Mapping[str, Any], base: Path, source: str, where: str) -> Any:
    """``webhook = URL`` (plus ``webhook_ca``, ``webhook_insecure``, ``webhook_timeout``):
    the CRD's real conversion webhook as the ``convert`` function."""
    from compatfuzz.roundtrip._webhook import webhook_converter

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
    try:
        return webhook_converter(
            str(entry["webhook"]), ca_file=None if ca is None else base / str(ca),
            insecure=insecure,
            timeout=entry.get("webhook_timeout", 10.0),
        )
    except CompatfuzzError as exc:
        raise SchemaLoadError(str(exc), source=source, pointer=f"{where}/webhook",
                              hint="paths (webhook_ca) are relative to the config file's "
                                   "folder") from None


def _mapping(entry: Mapping[str, Any], key: str, source: str, where: str) -> Mapping[str, Any]:
    value = entry[key]
    if not isinstance(value, Mapping):
        raise SchemaLoadError(f"expected a table, got {value!r}", source=source,
                              pointer=f"{where}/{key}")
    return value
