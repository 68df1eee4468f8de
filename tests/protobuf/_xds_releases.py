"""Envoy's API at several releases, from successive ``xds-protos`` wheels on PyPI.

Why wheels: gRPC builds ``xds-protos`` by compiling its pinned ``third_party/envoy-api``
(envoyproxy/data-plane-api) with protoc (grpc/grpc
``tools/distrib/python/xds_protos/build.py``), so each release that moved the pin carries
another revision of Envoy's API as ``_pb2`` modules. Two revisions define the same names, so
each is installed into its own ``pip install --target`` folder under the user's cache
(``$XDG_CACHE_HOME/compatfuzz``, default ``~/.cache/compatfuzz``) and imported in its own
subprocess, which writes a ``FileDescriptorSet`` through ``compatfuzz.protobuf.load_protos``;
the caller builds a private pool from it. Nothing is read from outside the checkout but that
cache, and a registry that cannot be reached raises :class:`Unavailable`.

The test (``tests/protobuf/test_envoy_real.py``) and the benchmark
(``benchmarks/bench_protobuf_envoy.py``) share this module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2

from compatfuzz.protobuf import ProtoSchema

# Of 17 xds-protos releases compared (one per minor release from 1.65 to 1.85, but 1.81
# and 1.83), those whose Envoy API differs from the one before (the others repeat it byte
# for byte), with where each sits in Envoy's history: the wheel's build date, and which of
# the changes benchmarks/README.md lists per Envoy release it holds. gRPC moves its pin
# between Envoy releases, so most are snapshots of a development cycle. Files Envoy
# deleted stay in the wheels as last edited (OpenCensus, grpc_credential AwsIamConfig,
# proto_message_logging are in all five): only changes inside a file that still exists show.
RELEASES: dict[str, str] = {
    "1.65.1": "built 2024-07-16 (Envoy 1.31's release day); Envoy 1.31 development",
    "1.66.0": "built 2024-08-22 (1.67-1.69 repeat it); Envoy 1.32 development",
    "1.70.0": "built 2025-01-22; Envoy 1.33 development (rate limit's RateLimitConfig gone)",
    "1.71.0": "built 2025-03-06 (1.72-1.78 repeat it); Envoy 1.34 development",
    "1.80.0": "built 2026-03-25 (1.82, 1.84, 1.85 repeat it); after Envoy 1.36 (quic_lb's "
              "unencrypted_mode)",
}

_DUMP = r"""
import importlib, sys
from pathlib import Path
target = Path(sys.argv[1])
sys.path.insert(0, str(target))
from compatfuzz.protobuf import load_protos
names = sorted(".".join(p.relative_to(target).with_suffix("").parts)
               for p in (target / "envoy").rglob("*_pb2.py"))
modules = [importlib.import_module(n) for n in names]
sys.stdout.buffer.write(load_protos(modules, label=str(target.name))
                        .to_descriptor_set().SerializeToString())
"""


class Unavailable(Exception):
    """The wheel could not be installed (no registry, no such version)."""


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/compatfuzz`` (``~/.cache/compatfuzz``): outside every checkout."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "compatfuzz"


def install(version: str, cache: Path | None = None) -> Path:
    """The folder holding ``xds-protos==version`` alone, installed there on first use.

    Raises:
        Unavailable: pip could not install it; the message carries pip's last line.
    """
    folder = (cache or cache_dir()) / f"xds-protos-{version}"
    if (folder / "envoy").is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".xds-protos-{version}-", dir=folder.parent))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--no-input", "--retries", "1", "--timeout", "20",
         "--target", str(staging), f"xds-protos=={version}"],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not (staging / "envoy").is_dir():
        shutil.rmtree(staging, ignore_errors=True)
        lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no output"]
        raise Unavailable(f"pip could not install xds-protos=={version}: {lines[-1]}")
    try:
        staging.rename(folder)
    except OSError:  # another process installed it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def descriptor_set(version: str, cache: Path | None = None) -> bytes:
    """A serialized ``FileDescriptorSet`` of every ``envoy/`` file of ``xds-protos==version``
    and its imports, built in a subprocess whose ``sys.path`` starts at that wheel's folder.

    Raises:
        Unavailable: the wheel cannot be installed.
        RuntimeError: its modules do not import (the subprocess's error is quoted).
    """
    folder = install(version, cache)
    proc = subprocess.run([sys.executable, "-I", "-c", _DUMP, str(folder)],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"loading xds-protos=={version} from {folder} failed:\n"
                           f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return proc.stdout


def envoy_schema(version: str, data: bytes | None = None, *,
                 cache: Path | None = None) -> ProtoSchema:
    """Envoy's API of ``xds-protos==version``: its ``envoy/`` files are the roots, the
    files they import (validate, udpa, xds, google/api, ...) are only imports."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(
        data if data is not None else descriptor_set(version, cache))
    return ProtoSchema.from_files(f"xds-protos=={version}", fds.file,
                                  [f.name for f in fds.file if f.name.startswith("envoy/")],
                                  source=f"xds-protos=={version}")
