"""Build kube-apiserver and etcd from Go modules with the machine's Go: ``compatfuzz
apiserver install`` and ``compatfuzz apiserver path``.

This follows envtest's ``setup-envtest`` (``sigs.k8s.io/controller-runtime/tools/
setup-envtest``): ``setup-envtest use -p path 1.37.x`` puts the two binaries in a folder of
its own cache and prints that folder, for ``KUBEBUILDER_ASSETS``. ``install`` gives the
same folder layout and prints it the same way, but builds the binaries from source instead
of downloading a release archive, so a machine with Go needs nothing else:

* ``k8s.io/kubernetes/cmd/kube-apiserver`` at v1.37.2, stamped with the version its
  release build stamps (``hack/lib/version.sh``), so ``/version`` says which Kubernetes
  it is;
* etcd's own main package ``go.etcd.io/etcd/server/v3`` at the version Kubernetes 1.37.2
  requires (v3.7.0).

The versions are pinned in the module ``gomod/go.mod`` and ``gomod/go.sum`` shipped with the
package (Kubernetes' staging repositories through ``replace`` lines, as
https://github.com/kubernetes/kubernetes/issues/79384 prescribes). The build copies them
into a scratch folder, never writing beside the installed package, and needs Go >= 1.26
(the go.mod minimum): ``$COMPATFUZZ_GO``, else ``go`` on PATH, as for Go converters.

The binaries go to ``$COMPATFUZZ_TESTENV_CACHE`` (default
``$XDG_CACHE_HOME/compatfuzz/testenv``, i.e. ``~/.cache/compatfuzz/testenv``), in a folder
named by the Kubernetes version and a hash of go.mod, go.sum and the build flags: a new
pin builds anew, nothing else does. The first build takes about five minutes on 2 cores
(less when Go's build cache already holds the packages) and says what it does on the way;
two builds of one folder at once (two CI jobs, two test sessions) take a lock, and the
second waits, naming the process that holds it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import IO, Protocol

from compatfuzz.errors import CompatfuzzError

__all__ = [
    "ABOUT",
    "ENVTEST",
    "KUBERNETES",
    "BuildError",
    "GoMissing",
    "Progress",
    "StreamProgress",
    "built",
    "cache_folder",
    "install",
]

KUBERNETES = "v1.37.2"
ETCD = "v3.7.0"
PACKAGES = {
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "etcd": "go.etcd.io/etcd/server/v3",
}
# what the release build stamps (hack/lib/version.sh), so `kube-apiserver --version` and
# the server's /version say which Kubernetes this is
LDFLAGS = " ".join([
    "-s", "-w",
    f"-X k8s.io/component-base/version.gitVersion={KUBERNETES}",
    "-X k8s.io/component-base/version.gitMajor=1",
    "-X k8s.io/component-base/version.gitMinor=37",
    "-X k8s.io/component-base/version.gitTreeState=clean",
])
#: how long the first build takes, as said before it starts (measured on 2 cores)
ABOUT = "about 5 minutes on 2 cores"
#: the other way to the same binaries, named wherever Go is missing
ENVTEST = ("go install sigs.k8s.io/controller-runtime/tools/setup-envtest@latest; "
           "export KUBEBUILDER_ASSETS=$(setup-envtest use -p path 1.37.x)")
HOW_TO_GET_GO = ("install Go >= 1.26 from https://go.dev/dl/ (or your package manager) and "
                 "put `go` on PATH, or set COMPATFUZZ_GO to its path; or download the "
                 f"binaries with envtest's setup-envtest instead: {ENVTEST}")
# what `go build -v` prints for each package it compiles (errors have spaces or colons)
_PACKAGE_LINE = re.compile(r"^[\w.~+\-/]+$")
# a status line that changes is shown at most this often where it cannot be rewritten
_QUIET_STATUS = 30.0


class BuildError(CompatfuzzError):
    """kube-apiserver or etcd did not build."""


class GoMissing(BuildError):
    """No ``go`` command to build with."""


class Progress(Protocol):
    """Where a build says what it does: lines that stay, and a status line that changes."""

    def say(self, line: str) -> None:
        """Show ``line`` for good."""

    def status(self, line: str) -> None:
        """Show ``line`` in place of the previous status line."""


class StreamProgress:
    """Progress on a text stream: on a terminal the status line is rewritten in place;
    elsewhere (a log, CI) a changed status is printed at most every 30 seconds."""

    def __init__(self, stream: IO[str], *, prefix: str = "compatfuzz: ") -> None:
        self.stream = stream
        self.prefix = prefix
        self.live = bool(getattr(stream, "isatty", lambda: False)())
        self._shown = ""
        self._last = -_QUIET_STATUS

    def say(self, line: str) -> None:
        self._clear()
        print(f"{self.prefix}{line}", file=self.stream, flush=True)

    def status(self, line: str) -> None:
        if self.live:  # one screen line, or "\r" leaves the wrapped part behind
            self._clear()
            width = shutil.get_terminal_size().columns - 1
            self.stream.write(f"{self.prefix}{line}"[:width])
            self.stream.flush()
            self._shown = line
        elif time.monotonic() - self._last >= _QUIET_STATUS:
            self._last = time.monotonic()
            print(f"{self.prefix}{line}", file=self.stream, flush=True)

    def _clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self._shown = ""


def _module_files() -> dict[str, bytes]:
    folder = resources.files("compatfuzz.apiserver._real").joinpath("gomod")
    return {name: folder.joinpath(name).read_bytes() for name in ("go.mod", "go.sum")}


def cache_folder() -> Path:
    """The folder the binaries are built into: ``<cache>/<Kubernetes version>-<hash>``."""
    digest = hashlib.sha256()
    for data in _module_files().values():
        digest.update(data)
    digest.update(repr((PACKAGES, LDFLAGS, "CGO_ENABLED=0")).encode())
    root = os.environ.get("COMPATFUZZ_TESTENV_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "compatfuzz", "testenv")
    return Path(root) / f"{KUBERNETES}-{digest.hexdigest()[:12]}"


def built() -> Path | None:
    """The folder holding both built binaries, or None when they are not built (yet)."""
    out = cache_folder()
    if all(os.access(out / name, os.X_OK) and (out / name).is_file() for name in PACKAGES):
        return out
    return None


def find_go() -> str:
    """The ``go`` command: ``$COMPATFUZZ_GO``, else ``go`` on PATH.

    Raises:
        GoMissing: neither is an executable; the message says how to get Go, or the
            binaries without it.
    """
    named = os.environ.get("COMPATFUZZ_GO")
    if named:
        found = shutil.which(named)
        if found is None:
            raise GoMissing(f"COMPATFUZZ_GO={named!r} is not an executable; {HOW_TO_GET_GO}")
        return found
    found = shutil.which("go")
    if found is None:
        raise GoMissing("building kube-apiserver and etcd needs Go, and `go` is not on "
                        f"PATH; {HOW_TO_GET_GO}")
    return found


def install(progress: Progress) -> Path:
    """The folder holding kube-apiserver and etcd, built first if they are not yet.

    Says on ``progress`` what it builds, where, and how long that takes, then how far the
    build is; waits for another build of the same folder, naming its process.

    Raises:
        GoMissing: no Go (the message names setup-envtest as the other way).
        BuildError: Go could not fetch or build a module; the message has Go's last lines.
    """
    done = built()
    if done is not None:
        return done
    go = find_go()
    out = cache_folder()
    out.parent.mkdir(parents=True, exist_ok=True)
    with _lock(out.parent / ".lock", progress):
        done = built()  # another process built it while this one waited
        if done is not None:
            progress.say(f"built meanwhile by the other process: {done}")
            return done
        _build(go, out, progress)
    return out


@contextmanager
def _lock(path: Path, progress: Progress) -> Iterator[None]:
    """An exclusive ``flock`` on ``path``, which then holds this process's pid, so a
    process that waits for it can say whose build it waits for."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            progress.say(f"waiting for the build lock {path} held by pid {holder} (another "
                         "build of the same binaries; this one then uses its result)")
            start = time.monotonic()
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    progress.status(f"waiting for pid {holder}'s build, "
                                    f"{_elapsed(time.monotonic() - start)}")
                    time.sleep(1.0)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _build(go: str, out: Path, progress: Progress) -> None:
    version = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True,
                             check=False).stdout.strip() or "go"
    progress.say(f"building kube-apiserver {KUBERNETES} and etcd {ETCD} from Go modules "
                 f"with {version}, {ABOUT}, once; cached in {out} (packages already in Go's "
                 "build cache are not compiled again)")
    start = time.monotonic()
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    partial.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix=f"{out.name}.module-", dir=out.parent) as work:
        for name, data in _module_files().items():
            (Path(work) / name).write_bytes(data)
        env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0", "GOWORK": "off"}
        total = _count_packages(go, Path(work), env, progress, start)
        compiled = 0
        for name, package in PACKAGES.items():
            def seen(line: str, name: str = name, package: str = package) -> None:
                nonlocal compiled
                if not _PACKAGE_LINE.match(line):
                    return  # an error line: shown in the failure's tail
                if line == package:
                    progress.status(f"linking {name}, {_elapsed(time.monotonic() - start)}")
                    return
                compiled += 1
                progress.status(f"go build {name}: {compiled}/{total} packages compiled, "
                                f"{_elapsed(time.monotonic() - start)}")

            def tick(name: str = name) -> None:
                progress.status(f"go build {name}, {_elapsed(time.monotonic() - start)}")

            code, tail = _stream(
                [go, "build", "-v", "-trimpath", "-ldflags", LDFLAGS, "-o",
                 str(partial / name), package], Path(work), env, seen, tick)
            if code != 0:
                shutil.rmtree(partial, ignore_errors=True)
                raise BuildError(f"go build {package} failed (exit {code}):\n  "
                                 + "\n  ".join(tail))
    partial.rename(out)
    progress.say(f"built kube-apiserver and etcd in {_elapsed(time.monotonic() - start)}: "
                 f"{out}")


def _count_packages(go: str, work: Path, env: dict[str, str], progress: Progress,
                    start: float) -> int:
    """How many packages the two binaries need (``go list -deps``); Go downloads the
    modules it lacks on the way, which is said as it happens."""
    downloads = 0
    out: list[str] = []

    def line(text: str) -> None:
        nonlocal downloads
        if text.startswith("go: downloading "):
            downloads += 1
            progress.status(f"downloading Go modules: {downloads} ({text[16:]}), "
                            f"{_elapsed(time.monotonic() - start)}")

    code, tail = _stream([go, "list", "-deps", *PACKAGES.values()], work, env, line,
                         lambda: None, stdout=out)
    if code != 0:
        raise BuildError(f"go list -deps {' '.join(PACKAGES.values())} failed (exit {code}; "
                         "fetching the modules needs the network, or GOPROXY):\n  "
                         + "\n  ".join(tail))
    return len(out)


def _stream(argv: list[str], cwd: Path, env: dict[str, str], line: Callable[[str], None],
            tick: Callable[[], None], *,
            stdout: list[str] | None = None) -> tuple[int, list[str]]:
    """Run ``argv``, calling ``line`` for each line it writes on stderr and ``tick`` every
    second it writes none; its exit status and its last 20 stderr lines."""
    tail: list[str] = []
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        err = proc.stderr.fileno()
        chunks: dict[int, bytes] = {proc.stdout.fileno(): b"", err: b""}
        open_fds = set(chunks)
        while open_fds:
            ready, _, _ = select.select(list(open_fds), [], [], 1.0)
            if not ready:
                tick()
            for fd in ready:
                data = os.read(fd, 65536)
                if not data:
                    open_fds.discard(fd)
                    data = b"\n" if chunks[fd] else b""
                *lines, chunks[fd] = (chunks[fd] + data).split(b"\n")
                for raw in lines:
                    text = raw.decode(errors="replace").rstrip()
                    if not text:
                        continue
                    if fd == err:
                        tail = [*tail[-19:], text]
                        line(text)
                    elif stdout is not None:
                        stdout.append(text)
        return proc.wait(), tail


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"

