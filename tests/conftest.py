"""Fixtures for the real API server backend: where its binaries are.

``tests/_realserver.py`` marks the tests that use them ``real_apiserver`` (``-m "not
real_apiserver"`` skips them) and, before the first runs, says where the binaries come from,
building them when they are nowhere. The real-server tests never skip in CI (``CI=true``):
there a missing kube-apiserver or etcd fails the session's first real test instead of
hiding it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from compatfuzz.apiserver._real._assets import Assets, MissingAssets, find_assets
from compatfuzz.apiserver._real._build import built
from compatfuzz.apiserver._real._process import ControlPlane, Endpoint
from tests._net import redis_server
from tests._realserver import (  # noqa: F401  (hooks: pytest finds them by name)
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_configure,
)


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the real API server tests must run in CI, but {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def assets() -> Assets:
    """kube-apiserver and etcd: envtest's places first (``TEST_ASSET_*``,
    ``KUBEBUILDER_ASSETS``), else the folder ``compatfuzz apiserver install`` builds into
    (the session built it at its start when Go is on PATH)."""
    try:
        return find_assets()
    except MissingAssets as exc:
        missing = str(exc)
    folder = built()
    if folder is None:
        _unavailable("kube-apiserver and etcd are not available (the session's first lines "
                     f"say why): {missing}")
    return find_assets(environ={"KUBEBUILDER_ASSETS": str(folder)})


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
