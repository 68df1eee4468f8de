"""Go converter tests build Go programs (the tiny module here, the example operator): with
the machine's Go, into a cache of the session's own, so a user's cache is never touched.
The first build downloads and compiles controller-runtime (a few minutes on 2 cores)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TINY = HERE / "data" / "tinymod"
EXAMPLE = HERE.parent.parent / "examples" / "go-operator"


def need_go() -> None:
    if shutil.which("go") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the Go converter tests must run in CI, but Go is not on PATH")
        pytest.skip("Go is not on PATH")


@pytest.fixture(scope="session")
def go_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """compatfuzz's Go cache for the session: shared by xdist workers through the lock
    in ``_build`` (the folder is under the session's base temp, common to workers)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "go-cache"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture(autouse=True)
def _use_go_cache(go_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COMPATFUZZ_GO_CACHE", str(go_cache))
    yield
