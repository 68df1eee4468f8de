"""Where the kube-apiserver and etcd binaries are, found as envtest finds them.

controller-runtime's ``pkg/internal/testing/process/bin_path_finder.go``
(``BinPathFinder``) looks, for each binary, at ``TEST_ASSET_<NAME>`` (``TEST_ASSET_ETCD``,
``TEST_ASSET_KUBE_APISERVER``), then in the folder ``KUBEBUILDER_ASSETS`` (what
``setup-envtest use -p path`` prints), then in the folder the test gave
(``BinaryAssetsDirectory``; ``--apiserver-assets DIR`` here), then in
``/usr/local/kubebuilder/bin``. compatfuzz keeps that order, so a project that runs
envtest already has what compatfuzz needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from compatfuzz.errors import CompatfuzzError

__all__ = ["Assets", "MissingAssets", "find_assets"]

DEFAULT_FOLDER = Path("/usr/local/kubebuilder/bin")
HOW_TO_GET = (
    "build them from Go modules with the machine's Go (about 5 minutes, once): export "
    "KUBEBUILDER_ASSETS=\"$(compatfuzz apiserver install)\"; or download them with "
    "envtest's setup-envtest (go install "
    "sigs.k8s.io/controller-runtime/tools/setup-envtest@latest; then "
    "export KUBEBUILDER_ASSETS=$(setup-envtest use -p path 1.37.x)); "
    "or pass --apiserver-assets DIR"
)


class MissingAssets(CompatfuzzError):
    """The binaries of the real API server backend are not where envtest looks."""


@dataclass(frozen=True)
class Assets:
    """The two binaries a control plane needs, and where each was found."""

    kube_apiserver: Path
    etcd: Path
    found_by: str


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_assets(folder: str | Path | None = None,
                environ: dict[str, str] | None = None) -> Assets:
    """The kube-apiserver and etcd to run, looked up in envtest's order.

    Raises:
        MissingAssets: a binary is nowhere, or a place named for it holds no executable;
            the message says where it looked and how to get the binaries.
    """
    env = os.environ if environ is None else environ
    found: dict[str, tuple[Path, str]] = {}
    looked: list[str] = []
    for name, var in (("kube-apiserver", "TEST_ASSET_KUBE_APISERVER"),
                      ("etcd", "TEST_ASSET_ETCD")):
        if env.get(var):
            path = Path(env[var])
            if not _executable(path):
                raise MissingAssets(
                    f"{var}={env[var]} is not an executable file; point it at the {name} "
                    f"binary or unset it ({HOW_TO_GET})")
            found[name] = (path, var)
            continue
        places = []
        if env.get("KUBEBUILDER_ASSETS"):
            places.append((Path(env["KUBEBUILDER_ASSETS"]), "KUBEBUILDER_ASSETS"))
        if folder is not None:
            places.append((Path(folder), "--apiserver-assets"))
        places.append((DEFAULT_FOLDER, str(DEFAULT_FOLDER)))
        for place, how in places:
            if _executable(place / name):
                found[name] = (place / name, how)
                break
        else:
            looked.append(f"{name}: {var} unset; not in "
                          + ", ".join(f"{how}={p}" if how.isupper() or how.startswith("-")
                                      else str(p) for p, how in places))
    if looked:
        raise MissingAssets(
            "the real API server backend (--apiserver real|both) needs the kube-apiserver "
            "and etcd binaries, and did not find them:\n  " + "\n  ".join(looked)
            + f"\n  fix: {HOW_TO_GET}")
    return Assets(kube_apiserver=found["kube-apiserver"][0], etcd=found["etcd"][0],
                  found_by=", ".join(sorted({how for _, how in found.values()})))
