"""Fixtures for the real API server backend: where its binaries are.

The real-server tests never skip in CI (``CI=true``): there a missing kube-apiserver or
etcd fails the session's first real test instead of hiding it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from compatfuzz.apiserver._real._assets import Assets, MissingAssets, find_assets
from compatfuzz.apiserver._real._process import ControlPlane, Endpoint
from tests._net import redis_server

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "testenv" / "build.py"


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the real API server tests must run in CI, but {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def assets() -> Assets:
    """kube-apiserver and etcd: envtest's places first (``TEST_ASSET_*``,
    ``KUBEBUILDER_ASSETS``), else built by ``testenv/build.py`` when Go is on PATH."""
    try:
        return find_assets()
    except MissingAssets as exc:
        missing = str(exc)
    if shutil.which("go") is None:
        _unavailable(f"Go is not on PATH to run testenv/build.py, and {missing}")
    done = subprocess.run([sys.executable, str(BUILD)], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        _unavailable(f"testenv/build.py failed ({done.returncode}): {done.stderr[-2000:]}")
    folder = done.stdout.strip().splitlines()[-1]
    return find_assets(environ={"KUBEBUILDER_ASSETS": folder})


@pytest.fixture(scope="session")
def real_endpoint(assets: Assets) -> Iterator[Endpoint]:
    """One control plane for the whole session, shared by every real-server test (as the
    pytest plugin shares one per session)."""
    plane = ControlPlane(assets)
    endpoint = plane.start()
    try:
        yield endpoint
    finally:
        plane.stop()


@pytest.fixture
def real_redis(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real redis-server (tests/faults/test_redis.py, the sharded runs of
    tests/roundtrip/test_shard_cli.py, examples/nightly's Indexed Job)."""
    with redis_server(tmp_path) as found:
        yield found
