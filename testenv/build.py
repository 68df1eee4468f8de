"""Build kube-apiserver and etcd from Go modules (versions pinned in testenv/go.mod) and
print the folder holding them, for ``KUBEBUILDER_ASSETS``::

    export KUBEBUILDER_ASSETS="$(python3 testenv/build.py)"

What envtest's ``setup-envtest use -p path 1.37.x`` gives, built here with the machine's
Go (>= 1.26, the go.mod minimum): ``k8s.io/kubernetes/cmd/kube-apiserver`` at v1.37.2
and etcd's own main package ``go.etcd.io/etcd/server/v3`` at the version Kubernetes
1.37.2 requires (v3.7.0). The binaries are cached under
``$XDG_CACHE_HOME/compatfuzz/testenv/<hash of go.mod, go.sum and the build flags>`` (default
``~/.cache``; ``COMPATFUZZ_TESTENV_CACHE`` overrides), so the first build (about 5
minutes on 2 cores) happens once per machine and version. Exit status 2 with a message
when Go is missing or the build fails.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KUBERNETES = "v1.37.2"
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


def cache_dir() -> Path:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((HERE / name).read_bytes())
    digest.update(repr((PACKAGES, LDFLAGS, "CGO_ENABLED=0")).encode())
    root = os.environ.get("COMPATFUZZ_TESTENV_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "compatfuzz", "testenv")
    return Path(root) / f"{KUBERNETES}-{digest.hexdigest()[:12]}"


def fail(message: str) -> None:
    print(f"testenv/build.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def build(out: Path) -> None:
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        fail("Go is not on PATH (or $GO); install Go >= 1.26 (the go.mod minimum), or get "
             "the binaries with setup-envtest: setup-envtest use -p path 1.37.x")
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name, package in PACKAGES.items():
        print(f"testenv/build.py: go build {package} (cached after the first time)",
              file=sys.stderr)
        result = subprocess.run(
            [go, "build", "-trimpath", "-ldflags", LDFLAGS, "-o", str(partial / name),
             package], cwd=HERE, env={**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"},
            stdout=sys.stderr, check=False)
        if result.returncode != 0:
            fail(f"go build {package} failed (exit {result.returncode}); see above")
    partial.rename(out)


def main() -> None:
    out = cache_dir()
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".lock", "w") as lock:  # two CI jobs on one machine build once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all((out / name).is_file() for name in PACKAGES):
            shutil.rmtree(out, ignore_errors=True)
            build(out)
    print(out)


if __name__ == "__main__":
    main()
