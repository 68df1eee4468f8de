"""Loopback helpers for tests that start (or must not reach) a local server."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
