"""Write a commented compatfuzz.toml for a CRD, for one schema file per version, for
one pydantic model per version (``pydantic:module:Model``), for a Cadwyn version bundle
(``cadwyn:module:bundle``: its migrations are the converters, so no converter is written),
or for a kubebuilder project (a folder with a PROJECT file: its Go packages convert).

Then the first run is one more command: compatfuzz fuzz.  FILE is one CRD file, or one
schema file per version (VERSION=FILE, or FILE whose name is the version: v1.json
v2.json).  Without --convert a starter converter module is written next to the config
(never over an existing file): edit it to do the real conversion.  The written config is
loaded before this command returns, so a mistake shows now, with its fix.  Exit status:
0 written, 2 usage or input error.

Every file is written whole or not at all: --force over a compatfuzz.toml that is a
symbolic link replaces the link itself, never the file it points to.  One CRD of a file
that holds several: FILE#KIND.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["add_arguments", "run"]

EXIT_OK, EXIT_USAGE = 0, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", metavar="FILE", nargs="+",
                        help="a CRD file, one schema file per version (VERSION=FILE), or "
                        "one pydantic model per version ([VERSION=]pydantic:module:Model), "
                        "or a Cadwyn bundle (cadwyn:module:bundle), or a kubebuilder project "
                        "folder (its PROJECT file)")
    parser.add_argument("--config", metavar="FILE", type=Path,
                        default=Path("compatfuzz.toml"),
                        help="the config to write (default: ./compatfuzz.toml)")
    parser.add_argument("--name", help="the API's name in test ids (default: from the CRD "
                        "or the schema folder)")
    parser.add_argument("--convert", metavar="MODULE:FUNCTION",
                        help="your converter, convert(obj, desired_api_version) -> obj "
                        "(default: write a starter module to edit)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite an existing config")


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder renamed over
    it: a symbolic link at ``path`` is replaced, its target left as it was."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as open() would have made it, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _rel(path: Path, folder: Path) -> str:
    try:
        return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()
    except ValueError:  # another drive
        return str(path.resolve())


def _toml(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is a JSON string


def _line(code: str, comment: str) -> str:
    """``code  # comment`` with the comments of a block lined up."""
    return f"{code:<38}  # {comment}"


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_").lower()
    return slug or "api"


def _crd_api(path: Path, folder: Path, name: str | None,
             pick: str | None = None) -> tuple[list[str], str, bool]:
    """(config lines, API name, typed) for a CRD file; ``pick`` (``FILE#KIND``) names one
    CRD of a file that holds several, by kind, plural or full name."""
    from compatfuzz.apiserver._admission import admit
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.schema import load_crds

    crds = load_crds(path)
    admit(crds)  # a CRD the API server refuses: its error, with file and line
    if not crds:
        raise SchemaLoadError("no CustomResourceDefinition in this file", source=str(path),
                              hint="name a CRD file, or one schema file per version")
    if pick is not None:
        chosen = [c for c in crds if pick.lower() in
                  {str(c.kind).lower(), str(c.plural).lower(),
                   f"{c.plural}.{c.group}".lower()}]
        if not chosen:
            raise SchemaLoadError(
                f"no CRD named {pick!r} in this file", source=f"{path}#{pick}",
                hint="name one of its kinds: " + ", ".join(c.kind for c in crds))
        crds = chosen[:1]
    lines: list[str] = []
    first = name or _slug(crds[0].plural or crds[0].kind if len(crds) == 1
                          else path.name.split(".")[0])
    served = [v.name for c in crds for v in c.versions if v.served and v.schema]
    if len(set(served)) < 2:
        raise SchemaLoadError(
            f"the CRD serves {len(set(served))} version(s) with a schema ({', '.join(served)}); "
            "there is no version pair to round-trip", source=str(path),
            hint="add the other served versions to the CRD, or name one schema file per "
                 "version: compatfuzz init v1=v1.json v2=v2.json",
        )
    storage = crds[0].storage_version
    lines += [
        "[[api]]",
        _line(f"name = {_toml(first)}", "short name used in test ids"),
        _line(f"crd = {_toml(_rel(path, folder))}", "relative to this file"),
    ]
    if pick is not None:
        lines.append(_line(f"kind = {_toml(crds[0].kind)}", "the one CRD of the file checked"))
    if len(crds) == 1:
        lines.append(f"# served versions: {', '.join(dict.fromkeys(served))}; "
                     f"storage: {storage}")
    else:  # each CRD's own: a hub is per kind
        lines.append(f"# {len(crds)} CRDs, each checked with its own versions (kind = "
                     f"\"KIND\" checks one; compatfuzz init {path.name}#KIND writes it):")
        lines += [f"#   {c.kind}: served "
                  f"{', '.join(v.name for v in c.versions if v.served and v.schema)}; "
                  f"storage: {c.storage_version}" for c in crds]
    if len(crds) == 1:
        lines.append(_line(f"# hub = {_toml(storage or served[-1])}",
                           "the version objects convert through (default: storage)"))
    lines += [
        _line('# pipeline = "apiserver"', 'judged as the API server would (the default for '
              'CRDs); "plain" compares dicts'),
    ]
    return lines, first, True


def _schemas_api(files: list[str], folder: Path, name: str | None) -> tuple[list[str], str,
                                                                          bool]:
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.schema import read_documents
    from compatfuzz.schema._load import refuse_objects
    from compatfuzz.schema._spec import parse_spec

    versions: dict[str, tuple[Path | None, str]] = {}  # version -> (file, what to write)
    for item in files:
        version, sep, text = item.partition("=")
        if not sep:
            text = item
        spec = parse_spec(text)
        path = spec.path
        if not sep:
            version = spec.kind.lower() if spec.builtin and spec.kind else (
                path.stem if path is not None else text)
        if path is not None:
            if not path.exists():  # a device or FIFO: read_documents says what it is
                raise SchemaLoadError(
                    "file not found", source=str(path),
                    hint="check the path (VERSION=FILE names a version; FILE#NAME one model "
                         "of a document, FILE@VERSION one version of a CRD)")
            refuse_objects(read_documents(path), source=str(path))
        if version in versions:
            raise SchemaLoadError(
                f"two files for version {version!r}", source=text,
                hint="name the versions: compatfuzz init v1=a/schema.json v2=b/schema.json",
            )
        versions[version] = (path, text)
    if len(versions) < 2:
        raise SchemaLoadError(
            "one schema file is one version; a round trip needs two or more",
            source=files[0],
            hint="name one schema file per version: compatfuzz init v1=schemas/v1.json "
                 "v2=schemas/v2.json (or name a CRD file)",
        )
    paths = [p for p, _ in versions.values() if p is not None]
    first_parent = (paths[0].resolve().parent if paths else folder.resolve())
    api = name or _slug(first_parent.name)

    def written(path: Path | None, text: str) -> str:
        if path is None:  # a built-in kind
            return text
        rest = text[len(str(path)):] if text.startswith(str(path)) else ""
        return _rel(path, folder) + rest  # keeps #NAME / @VERSION

    table = ", ".join(f"{_toml(v) if not re.fullmatch(r'[A-Za-z0-9_-]+', v) else v} = "
                      f"{_toml(written(p, t))}" for v, (p, t) in versions.items())
    lines = [
        "[[api]]",
        _line(f"name = {_toml(api)}", "short name used in test ids"),
        _line(f"schemas = {{ {table} }}", "version = file, relative to this file"),
        _line('# kind = "Order"', "with group =, objects carry apiVersion group/version"),
        '# group = "example.com"',
    ]
    return lines, api, False


def _pydantic_api(items: list[str], name: str | None) -> tuple[list[str], str]:
    """(config lines, API name) for ``[VERSION=]pydantic:module:Model`` arguments; a
    version not named is the model module's last part (``shop.models.v1`` -> ``v1``)."""
    from compatfuzz.errors import SchemaLoadError

    versions: dict[str, str] = {}
    for item in items:
        version, sep, text = item.partition("=")
        if not sep:
            version, text = "", item
        target = text.removeprefix("pydantic:")
        if not text.startswith("pydantic:") or ":" not in target:
            raise SchemaLoadError(
                f"expected [VERSION=]pydantic:module:Model, got {item!r}", source=item,
                hint="name one model per version: compatfuzz init "
                     "pydantic:shop.models.v1:Order pydantic:shop.models.v2:Order")
        version = version or target.partition(":")[0].rpartition(".")[2]
        if version in versions:
            raise SchemaLoadError(
                f"two models for version {version!r}", source=item,
                hint="name the versions: compatfuzz init v1=pydantic:a:Order "
                     "v2=pydantic:b:Order")
        versions[version] = target
    if len(versions) < 2:
        raise SchemaLoadError("one model is one version; a round trip needs two or more",
                              source=items[0],
                              hint="name one model per version: compatfuzz init "
                                   "pydantic:shop.models.v1:Order pydantic:shop.models.v2:Order")
    api = name or _slug(next(iter(versions.values())).rpartition(":")[2]) + "s"
    table = ", ".join(f"{_toml(v) if not re.fullmatch(r'[A-Za-z0-9_-]+', v) else v} = "
                      f"{_toml(t)}" for v, t in versions.items())
    return [
        "[[api]]",
        _line(f"name = {_toml(api)}", "short name used in test ids"),
        _line(f"pydantic = {{ {table} }}", "version = module:Model, relative to this file"),
    ], api


def _cadwyn_api(items: list[str], name: str | None) -> tuple[list[str], str]:
    """(config lines, API name) for one ``cadwyn:module:bundle`` argument; the name is the
    module's top package (``shop.versions`` -> ``shop``)."""
    from compatfuzz.errors import SchemaLoadError

    target = items[0].removeprefix("cadwyn:")
    module, colon, attr = target.partition(":")
    example = "compatfuzz init cadwyn:shop.versions:version_bundle"
    if len(items) != 1:
        raise SchemaLoadError(
            f"a Cadwyn bundle is the whole API (every version and migration); got "
            f"{len(items)} arguments", source=" ".join(items),
            hint=f"name the one bundle: {example} (or its app: cadwyn:shop.app:app)")
    if not items[0].startswith("cadwyn:") or not colon or not module or not attr or \
            "@" in attr:
        raise SchemaLoadError(
            f"expected cadwyn:module:bundle, got {items[0]!r}", source=items[0],
            hint=f"name the VersionBundle (or the Cadwyn app), without @VERSION: {example}")
    api = name or _slug(module.partition(".")[0])
    return [
        "[[api]]",
        _line(f"name = {_toml(api)}", "short name used in test ids"),
        _line(f"cadwyn = {_toml(target)}", "the VersionBundle or the Cadwyn app, the "
              "module relative to this file"),
        _line('# schemas = ["module:Class"]', "HEAD schemas the bundle's "
              "instructions and migrations do not name"),
    ], api


_STUB_PYDANTIC = '''"""Convert {what} documents between versions (a starter written by
`compatfuzz init`: edit it).

compatfuzz calls convert(doc, source_version, target_version) for every pair of
versions with the JSON document a client of source_version sends (a dict), and checks
that the result is valid in the target version and that nothing is lost on the way back:
`compatfuzz fuzz`, or `pytest`.
"""

import copy


def convert(doc, source_version, target_version):
    out = copy.deepcopy(doc)  # never change doc itself: no_mutation checks that
    # TODO: move the fields that were renamed, split or restructured between versions,
    # e.g. if (source_version, target_version) == ("v1", "v2"): out["name"] = out.pop("title")
    return out
'''

_STUB = '''"""Convert {what} between versions (a starter written by `compatfuzz init`: edit it).

compatfuzz calls convert(obj, desired_api_version) for every pair of versions and checks
that nothing is lost on the way: `compatfuzz fuzz`, or `pytest`.
"""


import copy


def convert(obj, desired_api_version):
    out = copy.deepcopy(obj)  # never change obj itself: no_mutation checks that
    # TODO: move the fields that were renamed, split or restructured between versions.
{typed}    return out
'''


def run(args: argparse.Namespace) -> int:
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.roundtrip import load_config
    from compatfuzz.schema import read_documents

    config: Path = args.config
    if config.is_dir():
        config = config / "compatfuzz.toml"
    if config.exists() and not args.force:
        print(f"compatfuzz init: error: {config} exists; pass --force to overwrite it, or "
              "--config OTHER.toml", file=sys.stderr)
        return EXIT_USAGE
    folder = config.parent
    for item in args.files:
        text = item.partition("=")[2] or item
        if text.split("#")[0].endswith(".proto"):
            raise SchemaLoadError(
                "compatfuzz init writes configs for CRDs and JSON Schema/OpenAPI files, not "
                "for protobuf", source=text,
                hint="declare a protobuf API by hand: proto = ..., messages = { v2 = "
                     '"pkg.v2.Msg", ... } (docs/protobuf.md, examples/proto_cluster)')
    pydantic = any("pydantic:" in item.partition("=")[2] or item.startswith("pydantic:")
                   for item in args.files)
    if any(item.startswith("cadwyn:") for item in args.files):
        return _init_cadwyn(args, config)
    from compatfuzz._commands._kubebuilder import is_kubebuilder

    if len(args.files) == 1 and is_kubebuilder(Path(args.files[0])):
        return _init_kubebuilder(args, config)
    first = Path(args.files[0].partition("=")[2] or args.files[0])
    pick: str | None = None  # FILE#KIND: one CRD of a file that holds several
    if not first.exists() and "#" in str(first) and Path(str(first).partition("#")[0]).is_file():
        head, _, pick = str(first).partition("#")
        first = Path(head)
    is_crd = not pydantic and len(args.files) == 1 and first.is_file() and any(
        isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
        for d in read_documents(first))
    if not pydantic and len(args.files) == 1 and not first.exists():
        raise SchemaLoadError("file not found", source=str(first),
                              hint="name a CRD file, or one schema file per version")
    if pydantic:
        lines, name = _pydantic_api(args.files, args.name)
        typed = False
    else:
        lines, name, typed = (_crd_api(first, folder, args.name, pick) if is_crd
                              else _schemas_api(args.files, folder, args.name))
    stub: Path | None = None
    convert = args.convert
    if convert is None:
        module = f"{_slug(name)}_conversion"
        stub = folder / f"{module}.py"
        convert = f"{module}:convert"
    lines.append(_line(f"convert = {_toml(convert)}",
                       "module:function, the module relative to this file"))
    lines.append('# or: to_hub = "mod:to_hub" and from_hub = "mod:from_hub"; or converters = '
                 '{ "v1->v2" = "mod:f", ... }')
    if not pydantic:
        lines += [
            _line('# defaulters = { v1 = "mod:default_v1" }', "adds the default_* properties"),
            _line('# webhook = "https://127.0.0.1:9443/convert"', "or test a running webhook"),
            _line('# stash_annotations = ["example.com/conversion-data"]',
                  "the converters' own annotations: never compared"),
            "",
            "# A deliberate difference, accepted: reports list it with its why, and warn when an",
            "# entry accepts nothing any more (stale). One [[api.accept]] table per difference,",
            "# after the [[api]] table's other keys:",
            "# [[api.accept]]",
            _line('# property = "roundtrip"', "a property name or glob; default: all"),
            _line('# versions = "*->v1alpha1"', "a glob over the unit's versions; default: all"),
            _line('# path = "spec.timeout"', "a field-path glob as diffs print it"),
            _line('# why = "v1alpha1 holds whole seconds only"', "required"),
        ]
    header = [
        f"# compatfuzz.toml: written by `compatfuzz init {' '.join(args.files)}`.",
        "# Run every property for every version pair:  compatfuzz fuzz",
        "# ... or as tests:                            pytest",
        "# The keys that matter most are below; every key, with an example, is in",
        "# compatfuzz's docs/roundtrip.md, section 'Declaring an API' (and [api.semantic]",
        "# there). Command-line flags: compatfuzz fuzz --help.",
        "",
    ]
    folder.mkdir(parents=True, exist_ok=True)
    _replace(config, "\n".join(header + lines) + "\n")
    wrote = [str(config)]
    if stub is not None and stub.is_symlink():
        stub = None  # never over an existing file, a dangling link's target included
    if stub is not None and not stub.exists() and pydantic:
        _replace(stub, _STUB_PYDANTIC.format(what=name))
        wrote.append(f"{stub} (a starter converter: edit it)")
    elif stub is not None and not stub.exists():
        _replace(stub, _STUB.format(
            what="objects" if not is_crd else name,
            typed=("    out[\"apiVersion\"] = desired_api_version  # the API server needs it\n"
                   if typed else "")))
        wrote.append(f"{stub} (a starter converter: edit it)")
    try:
        apis: list[Any] = load_config(config)
    except SchemaLoadError as exc:
        print(f"compatfuzz init: wrote {', '.join(wrote)}, but it does not load yet:",
              file=sys.stderr)
        raise exc from None
    pairs = sum(len(a.models) * (len(a.models) - 1) if pydantic else
                sum(len(k.versions) * (len(k.versions) - 1) for k in a.kinds) for a in apis)
    print(f"compatfuzz init: wrote {', '.join(wrote)}", file=sys.stderr)
    where = "" if folder.resolve() == Path.cwd().resolve() else f" --config {config}"
    print(f"  {pairs} version pairs to check; next: compatfuzz fuzz{where}", file=sys.stderr)
    return EXIT_OK


def _init_kubebuilder(args: argparse.Namespace, config: Path) -> int:
    """``compatfuzz init DIR`` for a kubebuilder project: an ``[[api]]`` per kind served in
    several versions, converted by its Go packages (``compatfuzz.golang``)."""
    from compatfuzz._commands._kubebuilder import config_lines, kubebuilder_apis
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.roundtrip import load_config

    if args.convert is not None:
        raise SchemaLoadError(
            "a kubebuilder project converts with its Go code", source=args.files[0],
            hint="drop --convert: compatfuzz builds the project's API packages and "
                 "converts through controller-runtime's webhook handler")
    root = Path(args.files[0])
    root = root.parent if root.name == "PROJECT" else root
    plans = kubebuilder_apis(root)
    header = [
        f"# compatfuzz.toml: written by `compatfuzz init {' '.join(args.files)}` for a "
        "kubebuilder project.",
        "# Run every property for every version pair:  compatfuzz fuzz",
        "# Through a real kube-apiserver (envtest's KUBEBUILDER_ASSETS):  compatfuzz fuzz "
        "--apiserver real",
        "# The Go converter is described in compatfuzz's docs/go.md.",
        "",
    ]
    config.parent.mkdir(parents=True, exist_ok=True)
    _replace(config, "\n".join(header + config_lines(root, config.parent, plans)))
    try:
        apis: list[Any] = load_config(config)
    except SchemaLoadError as exc:
        print(f"compatfuzz init: wrote {config}, but it does not load yet:", file=sys.stderr)
        raise exc from None
    pairs = sum(len(k.versions) * (len(k.versions) - 1) for a in apis for k in a.kinds)
    print(f"compatfuzz init: wrote {config} ({', '.join(p.kind for p in plans)})",
          file=sys.stderr)
    where = ("" if config.parent.resolve() == Path.cwd().resolve()
             else f" --config {config}")
    print(f"  {pairs} version pairs to check; next: compatfuzz fuzz{where}", file=sys.stderr)
    return EXIT_OK


def _cadwyn_app(suite: Any, item: str, base: Path) -> str | None:
    """The app serving the bundle ``item`` names (``module:attr``), when it is a bundle
    and one app of the project serves it (``compatfuzz.cadwyn._discover``)."""
    api = getattr(suite, "api", None)
    if api is None or api.routes:
        return None  # already the app
    from compatfuzz.cadwyn._discover import find_app

    return find_app(api.bundle, item.removeprefix("cadwyn:").partition(":")[0], base)


def _init_cadwyn(args: argparse.Namespace, config: Path) -> int:
    """``compatfuzz init cadwyn:module:bundle``: the config, loaded, and what fuzz will run
    (the units of :class:`compatfuzz.cadwyn.CadwynSuite`)."""
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.roundtrip import load_config, units

    if args.convert is not None:
        raise SchemaLoadError(
            "a Cadwyn bundle's converters are its own migrations", source=args.files[0],
            hint="drop --convert: compatfuzz runs the bundle's "
                 "convert_request_to_next_version_for / "
                 "convert_response_to_previous_version_for migrations")
    lines, _ = _cadwyn_api(args.files, args.name)
    header = [
        f"# compatfuzz.toml: written by `compatfuzz init {' '.join(args.files)}`.",
        "# Run every property of every schema and version:  compatfuzz fuzz",
        "# ... or as tests:                                 pytest",
        "# The properties, in a Cadwyn user's words, are in compatfuzz's docs/cadwyn.md.",
        "",
    ]
    config.parent.mkdir(parents=True, exist_ok=True)
    _replace(config, "\n".join(header + lines) + "\n")
    try:
        (suite,) = load_config(config)
    except SchemaLoadError as exc:
        print(f"compatfuzz init: wrote {config}, but it does not load yet:", file=sys.stderr)
        raise exc from None
    app = _cadwyn_app(suite, args.files[0], config.parent)
    if app is not None:
        # the app form is what clients meet: each route with its roles and path-based
        # migrations, and its resources written and read through the app; the bundle form
        # (each schema migrated both ways, no app) stays a commented line
        bundle = args.files[0].removeprefix("cadwyn:")
        at = next(i for i, line in enumerate(lines) if line.startswith("cadwyn = "))
        lines[at:at + 1] = [
            _line(f"cadwyn = {_toml(app)}", "the Cadwyn app serving the bundle you named: "
                  "its routes, used as clients use them"),
            _line(f"# cadwyn = {_toml(bundle)}", "instead of the line above: the bundle "
                  "alone, each schema migrated both ways, without the app")]
        _replace(config, "\n".join(header + lines) + "\n")
        try:
            (suite,) = load_config(config)
        except SchemaLoadError:  # the app does not load from here: keep the bundle form
            lines[at:at + 2] = [lines[at + 1].removeprefix("# ")]
            _replace(config, "\n".join(header + lines) + "\n")
            (suite,) = load_config(config)
        else:
            print(f"compatfuzz init: found {app}, the Cadwyn app serving this bundle, and "
                  f"wrote cadwyn = {_toml(app)}: its routes are checked as clients use "
                  f"them (the bundle alone is a commented line)", file=sys.stderr)
    planned = units(suite)
    static = [u for u in planned if str(u.property) == "migrations"]
    through = [u for u in planned if str(u.property) in ("write_then_read", "cross_version")]
    schemas = ", ".join(dict.fromkeys(u.kind for u in planned
                                      if u not in static and u not in through))
    api = getattr(suite, "api", None)
    versions = getattr(api, "versions", ())
    print(f"compatfuzz init: wrote {config}", file=sys.stderr)
    where = ("" if config.parent.resolve() == Path.cwd().resolve()
             else f" --config {config}")
    plural = "s" if len(static) > 1 else ""
    code = f"; the VersionChange code of {len(static)} version{plural}" if static else ""
    what = "routes" if getattr(api, "routes", ()) else "schemas"
    resources = ", ".join(dict.fromkeys(u.kind for u in through))
    clients = f"; resources used through the app as clients do: {resources}" \
        if through else ""
    print(f"  {len(planned)} properties to check ({what}: {schemas}{clients}; versions: "
          f"{', '.join(versions)} against head{code}); next: compatfuzz fuzz{where}",
          file=sys.stderr)
    return EXIT_OK
