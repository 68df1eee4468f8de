"""Build the Go converter: the user's API packages behind controller-runtime's webhook
handler, as one small program in compatfuzz's cache, never in the user's tree.

The program (``driver.go.tmpl``) is its own module, ``compatfuzz.local/driver``, whose
go.mod requires the user's module through a ``replace`` to its folder and repeats the
user's own ``replace`` lines (Go ignores those of a required module:
``cmd/go/internal/modload``, "replace directives ... apply only in the main module").
So the build list is the user's: their controller-runtime, their apimachinery, their
``go`` line (and ``toolchain``, which the machine's Go honours as it would in their tree).

The binary is cached under ``$COMPATFUZZ_GO_CACHE`` (default
``$XDG_CACHE_HOME/compatfuzz/go``, i.e. ``~/.cache/compatfuzz/go``) in a folder named by
a hash of the user's go.mod, go.sum and every ``.go`` file of their module, the packages
asked for and this template: any change rebuilds, nothing else does.  A lock file keeps
two workers from building the same folder at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from compatfuzz.errors import CompatfuzzError

__all__ = ["Driver", "GoBuildError", "GoMissing", "build", "cache_root"]

DRIVER_MODULE = "compatfuzz.local/driver"
CONTROLLER_RUNTIME = "sigs.k8s.io/controller-runtime"
#: ``NewWebhookHandler(scheme)`` from v0.15; v0.23 added the converter registry argument
#: (``pkg/webhook/conversion/conversion.go``)
_OLDEST = (0, 15)
_REGISTRY_FROM = (0, 23)
HOW_TO_GET_GO = ("install Go from https://go.dev/dl/ (or your package manager) and put "
                 "`go` on PATH, or set COMPATFUZZ_GO to its path")


class GoMissing(CompatfuzzError):
    """No ``go`` command: the Go converter cannot be built."""


class GoBuildError(CompatfuzzError):
    """The user's module, or the program around it, does not build."""


@dataclass(frozen=True)
class Driver:
    """A built converter program and what it was built from."""

    binary: Path
    module: str  # the user's module path
    root: Path  # the user's module folder
    packages: tuple[str, ...]  # import paths


def find_go() -> str:
    """The ``go`` command to use: ``$COMPATFUZZ_GO``, else ``go`` on PATH.

    Raises:
        GoMissing: neither is an executable.
    """
    named = os.environ.get("COMPATFUZZ_GO")
    if named:
        if shutil.which(named):
            return str(shutil.which(named))
        raise GoMissing(f"COMPATFUZZ_GO={named!r} is not an executable; {HOW_TO_GET_GO}")
    found = shutil.which("go")
    if found is None:
        raise GoMissing(f"the Go converter needs Go, and `go` is not on PATH; "
                        f"{HOW_TO_GET_GO}")
    return found


def cache_root() -> Path:
    """Where built converters live (``COMPATFUZZ_GO_CACHE`` overrides)."""
    named = os.environ.get("COMPATFUZZ_GO_CACHE")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "compatfuzz" / "go"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # the user's go.work would pull the driver's build list elsewhere
    env["GOWORK"] = "off"
    env.pop("GOFLAGS", None)
    return env


def _run(go: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([go, *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, check=False)


def module_info(go: str, root: Path) -> dict[str, Any]:
    """``go mod edit -json`` of the user's go.mod (read only).

    Raises:
        GoBuildError: no go.mod in ``root``, or Go cannot read it.
    """
    if not (root / "go.mod").is_file():
        raise GoBuildError(
            f"{root} has no go.mod; point module = at the folder of your Go module (the "
            "one holding go.mod, usually the repository root of a kubebuilder project)")
    done = _run(go, ["mod", "edit", "-json"], root)
    if done.returncode != 0:
        raise GoBuildError(f"{root / 'go.mod'}: {done.stderr.strip()}")
    info: dict[str, Any] = json.loads(done.stdout)
    return info


def import_paths(module: str, packages: Iterable[str]) -> tuple[str, ...]:
    """Import paths of ``packages``: ``./api/v1`` is relative to the module."""
    out = []
    for pkg in packages:
        if pkg in (".", "./"):
            out.append(module)
        elif pkg.startswith("./"):
            out.append(f"{module}/{pkg[2:].rstrip('/')}")
        else:
            out.append(pkg.rstrip("/"))
    return tuple(out)


def _sources(root: Path) -> Iterator[Path]:
    """The module's Go files and its go.mod/go.sum; nested modules and hidden folders
    (``.git``) are not part of it."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")) and d != "testdata"
                         and not (here / d / "go.mod").exists())
        for name in sorted(files):
            if name.endswith(".go") or (here == root and name in ("go.mod", "go.sum")):
                yield here / name


def _template() -> str:
    return resources.files("compatfuzz.golang").joinpath("driver.go.tmpl").read_text()


def fingerprint(root: Path, packages: tuple[str, ...], go_version: str) -> str:
    """A hash of everything the build reads: sources, packages, template, Go."""
    digest = hashlib.sha256()
    digest.update(repr((packages, go_version, str(root))).encode())
    digest.update(_template().encode())
    for path in _sources(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _version(text: str) -> tuple[int, int]:
    match = re.match(r"v(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _program(imports: tuple[str, ...], registry: bool) -> str:
    names = [f"p{i}" for i in range(len(imports))]
    return Template(_template()).substitute(
        imports="\n".join(f'\t{n} "{p}"' for n, p in zip(names, imports, strict=True)),
        adds="\n".join(
            f"\tif err := {n}.AddToScheme(s); err != nil {{\n"
            f'\t\treturn nil, fmt.Errorf("{p}: %w", err)\n\t}}'
            for n, p in zip(names, imports, strict=True)),
        new_handler=("conversion.NewWebhookHandler(s, conversion.NewRegistry())" if registry
                     else "conversion.NewWebhookHandler(s)"),
        panic_handler=_PANIC_HANDLER,
    )


# utilruntime.PanicHandlers is []func(interface{}) before apimachinery v0.30 and
# []func(context.Context, interface{}) since: append ours whichever it is
_PANIC_HANDLER = """func init() {
	v := reflect.ValueOf(&utilruntime.PanicHandlers).Elem()
	fn := reflect.MakeFunc(v.Type().Elem(), func(args []reflect.Value) []reflect.Value {
		ctx := context.Background()
		if len(args) == 2 {
			if c, ok := args[0].Interface().(context.Context); ok && c != nil {
				ctx = c
			}
		}
		record(ctx, args[len(args)-1].Interface())
		return nil
	})
	v.Set(reflect.Append(v, fn))
}"""


def _go_mod(info: dict[str, Any], root: Path) -> str:
    module = str((info.get("Module") or {}).get("Path"))
    lines = [f"module {DRIVER_MODULE}", ""]
    go = info.get("Go")
    if go:
        lines.append(f"go {go}")
    toolchain = (info.get("Toolchain") or {}).get("Name")
    if toolchain:
        lines.append(f"toolchain {toolchain}")
    lines += ["", f"require {module} v0.0.0", "", f"replace {module} => {root}"]
    for rep in info.get("Replace") or []:
        old, new = rep["Old"], rep["New"]
        left = old["Path"] + (f" {old['Version']}" if old.get("Version") else "")
        if new.get("Version"):
            right = f"{new['Path']} {new['Version']}"
        else:  # a folder, relative to the user's module
            right = str((root / new["Path"]).resolve())
        lines.append(f"replace {left} => {right}")
    return "\n".join(lines) + "\n"


def _compile_error(text: str, root: Path, work: Path, imports: tuple[str, ...]) -> str:
    """The compiler's lines, with the user's files relative to their module (Go prints
    them relative to the build folder when it can: ``../../x/api/v1/conv.go``)."""
    shown = []
    text = re.sub(r"\bp(\d+)\.AddToScheme",
                  lambda m: f"{imports[int(m.group(1))]}.AddToScheme (the package has none; "
                            "kubebuilder declares it in groupversion_info.go)", text)
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        line = raw.strip()
        file, colon, rest = line.partition(":")
        if colon and file.endswith(".go"):
            where = (work / file).resolve()
            if where.is_relative_to(root):
                file = str(where.relative_to(root))
            elif where.is_relative_to(work):
                file = f"(compatfuzz driver) {where.relative_to(work)}"
            line = f"{file}:{rest}"
        shown.append(line.strip())
    return "\n  ".join(shown[:20]) or text.strip()


def _say(message: str) -> None:
    print(f"compatfuzz: {message}", file=sys.stderr, flush=True)


def build(module_dir: str | Path, packages: Iterable[str], *,
          source: str = "the config") -> Driver:
    """Build (or find in the cache) the converter for ``packages`` of the Go module in
    ``module_dir``.  Slow the first time (Go downloads the module's dependencies and
    compiles them: about a minute); it says so on stderr.

    Raises:
        GoMissing: no Go.
        GoBuildError: no go.mod, a package that does not exist or has no
            ``AddToScheme``, or a compile error (with the user's file:line).
    """
    go = find_go()
    root = Path(module_dir).resolve()
    info = module_info(go, root)
    module = str((info.get("Module") or {}).get("Path"))
    packages = list(packages)
    for pkg in packages:
        if pkg.startswith("./") and not (root / pkg).is_dir():
            raise GoBuildError(
                f"{source}: packages: {pkg} is not a folder of the module in {root}; list "
                "each API version's package folder, e.g. ./api/v1")
    imports = import_paths(module, packages)
    if not imports:
        raise GoBuildError(f"{source}: no packages to convert with; list the API "
                           "packages, e.g. packages = [\"./api/v1alpha1\", \"./api/v1\"]")
    version = _run(go, ["env", "GOVERSION"], root).stdout.strip()
    work = cache_root() / f"{root.name}-{fingerprint(root, imports, version)}"
    binary = work / "driver"
    driver = Driver(binary, module, root, imports)
    if binary.is_file():
        return driver
    work.mkdir(parents=True, exist_ok=True)
    with open(work / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.is_file():  # another worker built it while we waited
            return driver
        _say(f"building the Go converter for {module} ({', '.join(imports)}) in "
             f"{work}: its sources changed since the last build (seconds), or this is "
             "the machine's first (Go downloads and compiles controller-runtime: a "
             "minute or two)")
        (work / "root.txt").write_text(str(root))
        _build_in(go, work, info, root, imports)
    _prune(work, root)
    return driver


def _prune(current: Path, root: Path) -> None:
    """Remove the builds of ``root`` other than ``current``: each is tens of MB, and an
    author editing conversion code makes one per change."""
    for other in current.parent.glob(f"{root.name}-*"):
        if other == current or not (other / "root.txt").is_file():
            continue
        try:
            if (other / "root.txt").read_text() != str(root):
                continue
            with open(other / ".lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # not being built
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            continue


def _build_in(go: str, work: Path, info: dict[str, Any], root: Path,
              imports: tuple[str, ...]) -> None:
    (work / "go.mod").write_text(_go_mod(info, root))
    if (root / "go.sum").is_file():
        shutil.copyfile(root / "go.sum", work / "go.sum")
    (work / "main.go").write_text(_program(imports, registry=True))
    tidy = _run(go, ["mod", "tidy"], work)
    if tidy.returncode != 0:
        raise GoBuildError(_tidy_error(tidy.stderr, root, imports))
    listed = _run(go, ["list", "-m", CONTROLLER_RUNTIME], work)
    found = listed.stdout.split()[1] if listed.returncode == 0 and len(
        listed.stdout.split()) > 1 else ""
    if _version(found) < _OLDEST:
        raise GoBuildError(
            f"{root / 'go.mod'}: controller-runtime {found or '(none)'} is older than "
            "v0.15, the first with conversion.NewWebhookHandler(scheme); upgrade "
            "sigs.k8s.io/controller-runtime")
    (work / "main.go").write_text(_program(imports, registry=_version(found) >= _REGISTRY_FROM))
    done = _run(go, ["build", "-o", "driver.tmp", "."], work)
    if done.returncode != 0:
        raise GoBuildError(
            f"the Go packages {', '.join(imports)} do not build (files relative to "
            f"{root}):\n  "
            + _compile_error(done.stderr, root, work, imports)
            + ("\n(compatfuzz's program is a module of its own: it cannot import "
               "packages under internal/; list public API packages)"
               if "use of internal package" in done.stderr else ""))
    os.replace(work / "driver.tmp", work / "driver")


def _tidy_error(text: str, root: Path, imports: tuple[str, ...]) -> str:
    missing = [p for p in imports if f'"{p}"' in text or f"package {p} " in text
               or f"{p}: " in text]
    hint = (f"; is {missing[0]} a package of the module in {root}? list packages as "
            "./path/from/the/module or full import paths") if missing else ""
    lines = "\n  ".join(line.strip() for line in text.strip().splitlines()[-8:])
    return f"Go could not resolve the converter's dependencies:\n  {lines}{hint}"
