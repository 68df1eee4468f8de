"""The kube-apiserver and etcd binaries of ``--apiserver real|both``.

``compatfuzz apiserver install`` builds Kubernetes v1.37.2's kube-apiserver and etcd v3.7.0
from Go modules with the machine's Go (about 5 minutes on 2 cores, once; then cached) and
prints their folder, so that ``export KUBEBUILDER_ASSETS="$(compatfuzz apiserver install)"``
sets up a shell as envtest's ``setup-envtest use -p path 1.37.x`` does. What it does, and
how far it is, goes to stderr. ``compatfuzz apiserver path`` prints the folder compatfuzz
would use without building anything (exit 1 when there is none). Exit 2 when Go is missing
or the build fails, with what to do.
"""

from __future__ import annotations

import argparse
import sys

EXIT_MISSING = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser(
        "install", help="build kube-apiserver and etcd from Go modules (once) and print "
        "their folder",
        description="Build kube-apiserver v1.37.2 and etcd v3.7.0 from Go modules with the "
        "machine's Go (>= 1.26; $COMPATFUZZ_GO, else go on PATH) into compatfuzz's cache "
        "($COMPATFUZZ_TESTENV_CACHE, default ~/.cache/compatfuzz/testenv), unless they are "
        "built already, and print the folder for KUBEBUILDER_ASSETS: export "
        "KUBEBUILDER_ASSETS=\"$(compatfuzz apiserver install)\". The first build takes "
        "about 5 minutes on 2 cores and says how far it is on stderr. Without Go, envtest's "
        "setup-envtest downloads released binaries instead: setup-envtest use -p path "
        "1.37.x. Exit 2 when Go is missing or the build fails.")
    sub.add_parser(
        "path", help="print the folder of kube-apiserver and etcd, if there is one",
        description="Print the folder holding kube-apiserver and etcd: where envtest looks "
        "(TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD in one folder, KUBEBUILDER_ASSETS, "
        "/usr/local/kubebuilder/bin), else what compatfuzz apiserver install built. Exit 1, "
        "saying how to get them, when there is none. Builds nothing.")


def run(args: argparse.Namespace) -> int:
    from compatfuzz.apiserver._real import _build

    if args.action == "install":
        print(_build.install(_build.StreamProgress(sys.stderr,
                                                   prefix="compatfuzz apiserver: ")))
        return 0
    folder, why = _folder()
    if folder is None:
        print(f"compatfuzz apiserver path: {why}", file=sys.stderr)
        return EXIT_MISSING
    print(folder)
    return 0


def _folder() -> tuple[str | None, str]:
    """The folder with both binaries (envtest's places, then compatfuzz's cache), or None
    and why not."""
    from compatfuzz.apiserver._real import _build
    from compatfuzz.apiserver._real._assets import MissingAssets, find_assets

    try:
        found = find_assets()
    except MissingAssets as exc:
        envtest = str(exc)
    else:
        if found.kube_apiserver.parent == found.etcd.parent:
            return str(found.kube_apiserver.parent), ""
        envtest = (f"kube-apiserver ({found.kube_apiserver}) and etcd ({found.etcd}) are in "
                   f"two folders ({found.found_by}); no one folder holds both")
    folder = _build.built()
    if folder is not None:
        return str(folder), ""
    return None, (f"no folder holds kube-apiserver and etcd, and compatfuzz apiserver "
                  f"install has not built them into {_build.cache_folder()}:\n  {envtest}")
