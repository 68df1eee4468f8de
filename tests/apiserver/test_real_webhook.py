"""compatfuzz's conversion webhook on its own (no kube-apiserver): it answers a
ConversionReview over a kept-alive TLS connection, with Nagle's algorithm off on that
connection, as Go's net/http has it (``net/tcpsock.go`` ``newTCPConn``): with it on, each
answer's body waited for the API server's delayed ACK, ~40 ms a conversion."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._pki import mint
from compatfuzz.apiserver._real._process import free_port
from compatfuzz.apiserver._real._webhook import (
    MAX_HANDLERS,
    ConversionWebhook,
    WebhookPortTaken,
    listen,
)


def _review(objects: list[dict[str, Any]], desired: str) -> bytes:
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                       "request": {"uid": "u-1", "desiredAPIVersion": desired,
                                   "objects": objects}}).encode()


def test_the_webhook_answers_on_a_kept_alive_connection_without_nagle(
        tmp_path: Path) -> None:
    pki = mint(tmp_path / "pki")
    seen: list[tuple[str, str]] = []

    def convert(obj: dict[str, Any], a: str, b: str) -> dict[str, Any]:
        seen.append((a, b))
        return {**obj, "apiVersion": f"example.com/{b}"}

    webhook = ConversionWebhook(free_port(), str(pki.webhook.cert), str(pki.webhook.key),
                                {"gadgets.example.com": convert})
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    conn = http.client.HTTPSConnection("127.0.0.1", webhook.port, context=ctx, timeout=10)
    try:
        for n in (1, 2):  # the second request reuses the connection (HTTP/1.1)
            conn.request("POST", "/convert/gadgets.example.com?timeout=30s",
                         body=_review([{"apiVersion": "example.com/v1", "n": n}],
                                      "example.com/v2"),
                         headers={"Content-Type": "application/json"})
            answer = json.loads(conn.getresponse().read())
            assert answer["response"]["result"] == {"status": "Success"}
            assert answer["response"]["convertedObjects"] == [
                {"apiVersion": "example.com/v2", "n": n}]
        assert seen == [("v1", "v2"), ("v1", "v2")]
        assert len(webhook._open) == 1  # one kept-alive connection served both
        for sock in webhook._open:
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        conn.close()
        webhook.close()


def test_no_other_process_can_listen_beside_the_webhook(tmp_path: Path) -> None:
    """A second listener of the same user with SO_REUSEPORT took 8 of 20 connections."""
    pki = mint(tmp_path / "pki")
    listener = listen(free_port())
    port = listener.getsockname()[1]
    webhook = ConversionWebhook(port, str(pki.webhook.cert), str(pki.webhook.key), {},
                                listener=listener)
    try:
        other = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        with other, pytest.raises(OSError):
            other.bind(("127.0.0.1", port))
        with pytest.raises(WebhookPortTaken, match=f"cannot listen on 127.0.0.1:{port}"):
            listen(port)
    finally:
        webhook.close()
    # a unit's webhook closed: the run's socket still holds the port for the next unit
    with pytest.raises(WebhookPortTaken):
        listen(port)
    listener.close()


def test_silent_clients_tie_up_at_most_the_handler_bound(tmp_path: Path) -> None:
    """Connections that never finish the handshake neither block the webhook nor start a
    thread each: the handshake runs in the connection's thread, at most MAX_HANDLERS."""
    pki = mint(tmp_path / "pki")

    def convert(obj: dict[str, Any], a: str, b: str) -> dict[str, Any]:
        return {**obj, "apiVersion": f"example.com/{b}"}

    webhook = ConversionWebhook(free_port(), str(pki.webhook.cert), str(pki.webhook.key),
                                {"gadgets.example.com": convert})
    before = threading.active_count()
    silent = [socket.create_connection(("127.0.0.1", webhook.port)) for _ in range(3)]
    try:
        time.sleep(0.5)
        # the silent ones hold 3 of the MAX_HANDLERS threads; a real client is still served
        ctx = ssl.create_default_context(cafile=str(pki.ca))
        conn = http.client.HTTPSConnection("127.0.0.1", webhook.port, context=ctx,
                                           timeout=10)
        conn.request("POST", "/convert/gadgets.example.com",
                     body=_review([{"apiVersion": "example.com/v1"}], "example.com/v2"))
        answer = json.loads(conn.getresponse().read())
        assert answer["response"]["convertedObjects"] == [{"apiVersion": "example.com/v2"}]
        conn.close()
        more = [socket.create_connection(("127.0.0.1", webhook.port)) for _ in range(30)]
        silent += more
        time.sleep(0.5)
        assert threading.active_count() - before <= MAX_HANDLERS, threading.enumerate()
    finally:
        for s in silent:
            s.close()
        webhook.close()
