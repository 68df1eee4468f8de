"""Load a protobuf API: ``.proto`` trees, binary descriptor sets, or installed ``_pb2`` modules.

Why one loader for three inputs: ``compatfuzz diff`` compares two revisions that users hold
in different forms (a checkout of ``api/``, a ``buf build -o`` image from CI, the
``xds-protos`` wheel), and every later step only needs a ``FileDescriptorSet`` plus a
private ``DescriptorPool`` built from it (two revisions of one package must never share a
pool: they define the same names).

``.proto`` files are compiled by the protoc that ``grpcio-tools`` ships (run as a
subprocess so its diagnostics can be parsed into file, line and fix). Imports that no
include folder holds are resolved from installed ``_pb2`` modules (``validate/validate.proto``
from ``xds-protos``), handed to protoc with ``--descriptor_set_in``.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message

from compatfuzz.errors import InvalidArgument, SchemaLoadError

__all__ = ["MAX_MESSAGE_DEPTH", "ProtoSchema", "check_chain_depth", "load_protos"]

_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;', re.MULTILINE)
_DIAG = re.compile(r"^(?P<file>[^:\n]+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$")
_SET_SUFFIXES = (".binpb", ".pb", ".desc", ".protoset", ".bin", ".fds")
ENVOY_HINT = "for Envoy/xDS trees `pip install xds-protos` provides validate, udpa, xds, " \
             "google/api, opencensus and opentelemetry"


#: Longest chain of message types, each a field of the one before, that is loaded. It is
#: upb's default decoding depth (``kUpb_WireFormat_DefaultDepthLimit`` = 100 in
#: ``upb/wire/internal/constants.h``): a message nested deeper cannot be read back by
#: protobuf's own Python decoder; building message classes for a 1,000-type chain ended
#: in a ``RecursionError``.
MAX_MESSAGE_DEPTH = 100
_MESSAGE_FIELD = (descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                  descriptor_pb2.FieldDescriptorProto.TYPE_GROUP)


def check_chain_depth(files: Sequence[descriptor_pb2.FileDescriptorProto], *, source: str,
                      sources: dict[str, str]) -> None:
    """Raise :class:`SchemaLoadError` if a chain of message-typed fields is longer than
    :data:`MAX_MESSAGE_DEPTH` types (recursive messages are cycles, not chains).

    Iterative: one depth-first walk of the type graph, edges back into the current path
    cut, heights memoised.
    """
    edges: dict[str, list[str]] = {}
    home: dict[str, str] = {}

    def walk(prefix: str, msgs: Iterable[descriptor_pb2.DescriptorProto], file: str) -> None:
        for m in msgs:
            full = f"{prefix}.{m.name}"
            home[full] = file
            edges[full] = [f.type_name for f in m.field if f.type in _MESSAGE_FIELD]
            walk(full, m.nested_type, file)

    for fp in files:
        walk(f".{fp.package}" if fp.package else "", fp.message_type, fp.name)
    height: dict[str, int] = {}
    below: dict[str, str | None] = {}
    for start in edges:
        if start in height:
            continue
        on_path = {start}
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            name, i = stack[-1]
            kids = edges.get(name, [])
            if i < len(kids):
                stack[-1] = (name, i + 1)
                kid = kids[i]
                if kid in edges and kid not in height and kid not in on_path:
                    on_path.add(kid)
                    stack.append((kid, 0))
                continue
            stack.pop()
            on_path.discard(name)
            best = max((k for k in kids if k in height), key=height.__getitem__, default=None)
            height[name] = 1 + (height[best] if best is not None else 0)
            below[name] = best
    if not height:
        return
    top = max(height, key=height.__getitem__)
    if height[top] <= MAX_MESSAGE_DEPTH:
        return
    chain = [top]
    while (nxt := below.get(chain[-1])) is not None:
        chain.append(nxt)
    shown = [c.lstrip(".") for c in chain]
    path = " -> ".join([*shown[:3], "...", *shown[-2:]] if len(shown) > 6 else shown)
    raise SchemaLoadError(
        f"message {shown[0]} starts a chain of {height[top]:,} message types, each a "
        f"field of the one before ({path}); at most {MAX_MESSAGE_DEPTH} are supported",
        source=sources.get(home[top], source),
        hint=f"protobuf's own decoders stop at {MAX_MESSAGE_DEPTH} levels of nesting "
        "(upb's default depth limit), so such a message cannot be read back: shorten the "
        "chain (a generated or hostile file?)",
    )


@dataclass(frozen=True)
class ProtoSchema:
    """One revision of a protobuf API: its files and a private pool built from them.

    ``files`` holds every file (imports included) in dependency order; ``roots`` names the
    files the user asked for (the API being checked, as opposed to its imports).
    ``sources`` maps a file name to the path it was read from, for error messages.
    """

    label: str
    files: tuple[descriptor_pb2.FileDescriptorProto, ...]
    roots: frozenset[str]
    pool: descriptor_pool.DescriptorPool = field(repr=False, compare=False)
    sources: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_files(cls, label: str, files: Iterable[descriptor_pb2.FileDescriptorProto],
                   roots: Iterable[str] | None = None, *, source: str = "<descriptors>",
                   sources: dict[str, str] | None = None) -> ProtoSchema:
        """Build the pool from file descriptors (any order; imports must be among them).

        Raises:
            SchemaLoadError: an import is missing or a file does not build.
        """
        ordered = _topological(list(files), source)
        pool = descriptor_pool.DescriptorPool()
        for fp in ordered:
            try:
                pool.Add(fp)
            except (TypeError, KeyError, ValueError) as exc:
                raise SchemaLoadError(f"{fp.name} does not build: {exc}", source=source,
                                      hint="regenerate the descriptor set with imports "
                                      "(`protoc --include_imports` / `buf build -o`)") from None
        names = frozenset(roots) if roots is not None else frozenset(f.name for f in ordered)
        check_chain_depth(ordered, source=source, sources=sources or {})
        return cls(label, tuple(ordered), names, pool, dict(sources or {}))

    def file(self, name: str) -> descriptor_pb2.FileDescriptorProto:
        for fp in self.files:
            if fp.name == name:
                return fp
        raise KeyError(name)

    def root_files(self) -> Iterator[descriptor_pb2.FileDescriptorProto]:
        return (fp for fp in self.files if fp.name in self.roots)

    def message(self, name: str) -> Descriptor:
        """The message descriptor called ``name`` (a full name, leading dot optional).

        Raises:
            InvalidArgument: no such message; the error lists close names.
        """
        full = name.lstrip(".")
        try:
            return self.pool.FindMessageTypeByName(full)
        except KeyError:
            import difflib

            known = [m for m in self.message_names()]
            close = difflib.get_close_matches(full, known, n=3)
            hint = f"did you mean {', '.join(close)}?" if close else \
                f"{self.label} defines {len(known)} messages; give a full name " \
                "(package.Message)"
            raise InvalidArgument(f"{self.label} has no message {full!r}; {hint}") from None

    def enum(self, name: str) -> EnumDescriptor:
        return self.pool.FindEnumTypeByName(name.lstrip("."))

    def message_class(self, name_or_descriptor: str | Descriptor) -> type[Message]:
        desc = (self.message(name_or_descriptor) if isinstance(name_or_descriptor, str)
                else name_or_descriptor)
        cls: type[Message] = message_factory.GetMessageClass(desc)
        return cls

    def message_names(self, *, roots_only: bool = False) -> list[str]:
        """Full names of every message (nested ones too), map entries excluded."""
        out: list[str] = []

        def walk(prefix: str, msgs: Iterable[descriptor_pb2.DescriptorProto]) -> None:
            for m in msgs:
                if m.options.map_entry:
                    continue
                full = f"{prefix}.{m.name}" if prefix else m.name
                out.append(full)
                walk(full, m.nested_type)

        for fp in self.files:
            if roots_only and fp.name not in self.roots:
                continue
            walk(fp.package, fp.message_type)
        return out

    def to_descriptor_set(self) -> descriptor_pb2.FileDescriptorSet:
        return descriptor_pb2.FileDescriptorSet(file=list(self.files))

    def where(self, file_name: str, path: Sequence[int]) -> str:
        """``file.proto:LINE`` of an element (by its SourceCodeInfo path), or the file."""
        try:
            fp = self.file(file_name)
        except KeyError:
            return file_name
        shown = self.sources.get(file_name, file_name)
        want = list(path)
        for loc in fp.source_code_info.location:
            if list(loc.path) == want and loc.span:
                return f"{shown}:{loc.span[0] + 1}"
        return shown


def _topological(files: list[descriptor_pb2.FileDescriptorProto], source: str
                 ) -> list[descriptor_pb2.FileDescriptorProto]:
    by_name = {f.name: f for f in files}
    extra = _resolve_installed({d for f in files for d in f.dependency} - set(by_name))
    for fp in extra:
        by_name.setdefault(fp.name, fp)
    out: list[descriptor_pb2.FileDescriptorProto] = []
    state: dict[str, int] = {}

    def visit(name: str, importer: str) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise SchemaLoadError(f"import cycle through {name}", source=source,
                                  hint="protobuf forbids cyclic imports")
        fp = by_name.get(name)
        if fp is None:
            raise SchemaLoadError(
                f"{importer} imports {name!r}, which the input does not hold",
                source=source,
                hint="build the descriptor set with its imports (`protoc --include_imports`,"
                     f" `buf build -o`), or install the package that ships it; {ENVOY_HINT}")
        state[name] = 1
        for dep in fp.dependency:
            visit(dep, name)
        state[name] = 2
        out.append(fp)

    for f in files:
        visit(f.name, f.name)
    return out


def _installed_file(name: str) -> FileDescriptor | None:
    """The descriptor of ``name`` from an importable ``_pb2`` module, or ``None``."""
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(name)
    except KeyError:
        pass
    if not name.endswith(".proto"):
        return None
    module = name[: -len(".proto")].replace("/", ".") + "_pb2"
    if not all(part.isidentifier() for part in module.split(".")):
        return None
    try:
        importlib.import_module(module)
    except Exception:  # any failure means "not installed here"
        return None
    try:
        return pool.FindFileByName(name)
    except KeyError:
        return None


def _resolve_installed(names: Iterable[str]) -> list[descriptor_pb2.FileDescriptorProto]:
    """FileDescriptorProtos for ``names`` and their imports, from installed ``_pb2`` modules."""
    out: dict[str, descriptor_pb2.FileDescriptorProto] = {}

    def add(fd: FileDescriptor) -> None:
        if fd.name in out:
            return
        fp = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(fp)
        out[fd.name] = fp
        for dep in fd.dependencies:
            add(dep)

    for name in names:
        fd = _installed_file(name)
        if fd is not None:
            add(fd)
    return list(out.values())


def _grpc_include() -> Path:
    import importlib.resources

    return Path(str(importlib.resources.files("grpc_tools") / "_proto"))


def _scan_imports(path: Path) -> list[str]:
    try:
        return _IMPORT.findall(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []


def _find(name: str, include: Sequence[Path]) -> Path | None:
    for folder in include:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def _missing_imports(targets: Sequence[str], include: Sequence[Path]) -> set[str]:
    """Imports (transitively) that no include folder holds."""
    missing: set[str] = set()
    seen: set[str] = set()
    todo = list(targets)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found = _find(name, include)
        if found is None:
            missing.add(name)
            continue
        todo.extend(_scan_imports(found))
    return missing


def _hint_for(msg: str) -> str:
    m = re.search(r'Import "([^"]+)" was not found', msg)
    if m:
        return (f"add the folder that holds {m.group(1)} with --proto-path DIR "
                f"(include=[...] in Python), or install a package shipping its _pb2 module; "
                f"{ENVOY_HINT}")
    if "is not defined" in msg:
        return "import the file that defines this type, or fix its name"
    if "Expected" in msg or "Unexpected" in msg or "syntax" in msg:
        return "fix the protobuf syntax at this line"
    if "already defined" in msg:
        return "two files define the same name: give each revision its own tree"
    return "fix the .proto file at this line"


def _compile(targets: Sequence[str], include: Sequence[Path], label: str) -> ProtoSchema:
    grpc_inc = _grpc_include()
    search = [*include, grpc_inc]
    missing = _missing_imports(targets, search)
    deps = _resolve_installed(missing)
    with tempfile.TemporaryDirectory(prefix="compatfuzz-protoc-") as tmp:
        out = Path(tmp) / "out.binpb"
        cmd = [sys.executable, "-m", "grpc_tools.protoc",
               *(f"-I{p}" for p in include), f"-I{grpc_inc}",
               "--include_imports", "--include_source_info",
               f"--descriptor_set_out={out}"]
        if deps:
            dep_file = Path(tmp) / "deps.binpb"
            dep_file.write_bytes(
                descriptor_pb2.FileDescriptorSet(file=deps).SerializeToString())
            cmd.append(f"--descriptor_set_in={dep_file}")
        cmd.extend(targets)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise SchemaLoadError("protoc did not finish within 600 s", source=label,
                                  hint="compile fewer files at once") from None
        if proc.returncode != 0:
            raise _protoc_error(proc.stderr, include, label)
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    sources: dict[str, str] = {}
    for fp in fds.file:
        real = _find(fp.name, include)
        if real is not None:
            sources[fp.name] = str(real)
    return ProtoSchema.from_files(label, fds.file, targets, source=label, sources=sources)


def _protoc_error(stderr: str, include: Sequence[Path], label: str) -> SchemaLoadError:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    # the first located diagnostic is the cause; "X: File not found." lines only echo imports
    for ln in lines:
        m = _DIAG.match(ln)
        if m:
            real = _find(m["file"], include)
            where = f"{real or m['file']}:{m['line']}:{m['col']}"
            rest = [x for x in lines if x != ln][:3]
            more = ("\n  protoc also said: " + "; ".join(rest)) if rest else ""
            return SchemaLoadError(m["msg"] + more, source=where, hint=_hint_for(m["msg"]))
    text = "; ".join(lines[:4]) or "protoc failed without a message"
    hint = "check the file names and --proto-path folders"
    if "File does not reside within any path" in text:
        hint = "pass the folder that holds the file with --proto-path DIR"
    return SchemaLoadError(text, source=label, hint=hint)


def _proto_targets(paths: Sequence[Path], include: list[Path]) -> list[str]:
    """Names of the files to compile, relative to an include folder (added if needed)."""
    targets: list[str] = []
    for given in paths:
        p = given.resolve()
        if p.is_dir():
            found = sorted(p.rglob("*.proto"))
            if not found:
                raise SchemaLoadError("the folder holds no .proto file", source=str(p),
                                      hint="point at the root of the .proto tree")
            # a folder inside an include folder is named from that root (so its imports,
            # written from the root, name the same files); otherwise it is the root
            root = next((folder for folder in include if p.is_relative_to(folder)), None)
            if root is None:
                include.insert(0, p)
                root = p
            targets.extend(str(f.relative_to(root)) for f in found)
            continue
        for folder in include:
            try:
                targets.append(str(p.relative_to(folder)))
                break
            except ValueError:
                continue
        else:
            include.insert(0, p.parent)
            targets.append(p.name)
    return targets


def _from_modules(modules: Sequence[types.ModuleType | str], label: str) -> ProtoSchema:
    names = []
    for given in modules:
        module = given
        if isinstance(given, str):
            dotted = given.removeprefix("module:")
            try:
                module = importlib.import_module(dotted)
            except ImportError as exc:
                raise SchemaLoadError(f"cannot import {dotted!r}: {exc}", source=dotted,
                                      hint="install the package that ships this _pb2 "
                                      "module, or check the dotted name") from None
        assert isinstance(module, types.ModuleType)
        fd = getattr(module, "DESCRIPTOR", None)
        if not isinstance(fd, FileDescriptor):
            raise SchemaLoadError(f"{module.__name__} is not a generated _pb2 module "
                                  "(no DESCRIPTOR)", source=module.__name__,
                                  hint="pass the module protoc generated (name ends in _pb2)")
        names.append(fd.name)
    files = _resolve_installed(names)
    return ProtoSchema.from_files(label, files, names, source=label)


def _is_module(item: object) -> bool:
    return isinstance(item, types.ModuleType) or (isinstance(item, str)
                                                  and item.startswith("module:"))


def _from_descriptor_set(path: Path, label: str) -> ProtoSchema:
    data = path.read_bytes()
    try:
        fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    except DecodeError:
        fds = None
    if fds is None or not fds.file or any(not f.name for f in fds.file):
        raise SchemaLoadError(
            "not a binary FileDescriptorSet", source=str(path),
            hint="build one with `buf build -o api.binpb` or `protoc --include_imports "
                 "--descriptor_set_out=api.binpb ...`; .proto files are read as text")
    return ProtoSchema.from_files(label, fds.file, None, source=str(path),
                                  sources={f.name: f"{path}!{f.name}" for f in fds.file})


def load_protos(source: str | Path | types.ModuleType
                | Sequence[str | Path | types.ModuleType], *,
                include: Iterable[str | Path] = (), label: str | None = None) -> ProtoSchema:
    """Load one revision of a protobuf API.

    ``source`` is a ``.proto`` file, a folder (every ``.proto`` below it, the folder being
    the import root), a list of ``.proto`` files, a binary ``FileDescriptorSet`` or buf
    image (``.binpb``/``.pb``/``.desc``/``.protoset``, or any file that is not text),
    ``module:pkg.foo_pb2`` or a ``_pb2`` module object (or a list of those, for the
    files of several modules in one pool); ``proto:PATH`` is PATH (the command line's
    way to say "protobuf" of a path it would not recognise). ``include`` adds import folders
    (protoc's ``-I``); grpcio-tools' well-known types and installed ``_pb2`` modules are
    always available.

    Example::

        api = load_protos("api/envoy/config/cluster/v3", include=["api"])

    Raises:
        SchemaLoadError: a file is missing, does not compile (the error names the file,
            line and fix) or is not a descriptor set.

    .. versionadded:: 0.2
    """
    if isinstance(source, types.ModuleType):
        return _from_modules([source], label or source.__name__)
    if isinstance(source, str) and source.startswith("module:"):
        return _from_modules([source], label or source)
    if isinstance(source, str) and source.startswith("proto:"):  # the CLI's forced form
        source = source[len("proto:"):]
    if not isinstance(source, (str, Path)) and source and all(map(_is_module, source)):
        modules = [m for m in source if not isinstance(m, Path)]
        return _from_modules(modules, label or " ".join(
            m.__name__ if isinstance(m, types.ModuleType) else str(m) for m in modules))
    inc = [Path(p).resolve() for p in include]
    for p in inc:
        if not p.is_dir():
            raise SchemaLoadError("include folder does not exist", source=str(p),
                                  hint="check the --proto-path / include value")
    if not isinstance(source, (str, Path)) and any(map(_is_module, source)):
        raise InvalidArgument("load_protos() got _pb2 modules mixed with files; load "
                              "modules or .proto files/descriptor sets, not both")
    paths = ([Path(source)] if isinstance(source, (str, Path))
             else [Path(s) for s in source if not isinstance(s, types.ModuleType)])
    if not paths:
        raise InvalidArgument("load_protos() got an empty list of files; pass at least one "
                              ".proto file or a folder")
    for p in paths:
        if not p.exists():
            raise SchemaLoadError("no such file or folder", source=str(p),
                                  hint="check the path (relative to the working directory)")
    name = label or " ".join(str(p) for p in paths)
    if len(paths) == 1 and paths[0].is_file() and _is_descriptor_set(paths[0]):
        return _from_descriptor_set(paths[0], name)
    for p in paths:
        if p.is_file() and p.suffix != ".proto":
            raise SchemaLoadError("expected a .proto file, a folder or a descriptor set",
                                  source=str(p), hint="rename the file to .proto, or build "
                                  "a descriptor set with `buf build -o`")
    targets = _proto_targets(paths, inc)
    return _compile(targets, inc, name)


def _is_descriptor_set(path: Path) -> bool:
    if path.suffix in _SET_SUFFIXES:
        return True
    if path.suffix == ".proto":
        return False
    head = path.read_bytes()[:512]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
