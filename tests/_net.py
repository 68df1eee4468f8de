"""Loopback helpers for tests that start (or must not reach) a local server."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def redis_server(folder: Path, password: str | None = None,
                 ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real redis-server on 127.0.0.1 (nothing saved to disk), its URL and process;
    skips the test without one.  The one copy of this start-up for every Redis test."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    redis = pytest.importorskip("redis")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save",
                             "", "--appendonly", "no", "--dir", str(folder),
                             *(["--requirepass", password] if password else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, password=password)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start")
        auth = f":{password}@" if password else ""
        yield f"redis://{auth}127.0.0.1:{port}/0", proc
    finally:
        client.close()
        proc.kill()
        proc.wait(timeout=10)
