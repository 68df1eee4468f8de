"""compatfuzz's conversion webhook on its own (no kube-apiserver): it answers a
ConversionReview over a kept-alive TLS connection, with Nagle's algorithm off on that
connection, as Go's net/http has it (``net/tcpsock.go`` ``newTCPConn``): with it on, each
answer's body waited for the API server's delayed ACK, ~40 ms a conversion."""

from __future__ import annotations

import contextlib
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
    MAX_ABANDONED,
    MAX_HANDLERS,
    ConversionWebhook,
    WebhookPortTaken,
    _server_timeout,
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


def _post(pki: Any, port: int, query: str, desired: str = "example.com/v2",
          timeout: float = 10) -> dict[str, Any]:
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=timeout)
    try:
        conn.request("POST", f"/convert/gadgets.example.com{query}",
                     body=_review([{"apiVersion": "example.com/v1"}], desired))
        answer: dict[str, Any] = json.loads(conn.getresponse().read())
        return answer
    finally:
        conn.close()


def test_converters_that_outlive_the_server_s_timeout_give_their_place_back(
        tmp_path: Path) -> None:
    """A converter that never returns held its handler's place forever: after
    MAX_HANDLERS of them the API server's next conversions met a 'TLS handshake timeout'
    and failed innocent examples. Past the timeout the server sends (``?timeout=``), the
    place is given back and the call is named; past MAX_ABANDONED, conversions are
    refused with a message instead of starting more threads."""
    pki = mint(tmp_path / "pki")
    release = threading.Event()

    def convert(obj: dict[str, Any], a: str, b: str) -> dict[str, Any]:
        if b == "hang":
            release.wait(60)
        return {**obj, "apiVersion": f"example.com/{b}"}

    webhook = ConversionWebhook(free_port(), str(pki.webhook.cert), str(pki.webhook.key),
                                {"gadgets.example.com": convert})
    try:
        callers = [threading.Thread(target=lambda: _hang_up(pki, webhook.port))
                   for _ in range(MAX_HANDLERS)]
        for t in callers:
            t.start()
        for t in callers:
            t.join()
        deadline = time.monotonic() + 10
        while len(webhook.abandoned) < MAX_HANDLERS and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(webhook.abandoned) == MAX_HANDLERS
        hung = webhook.hung("gadgets.example.com")
        assert hung is not None and hung.due - hung.started == pytest.approx(0.5)
        frame = hung.frame()
        assert frame is not None and frame.f_code.co_name in ("wait", "convert")
        del frame
        # still running, but begun before this moment: not a later example's hang
        assert webhook.hung("gadgets.example.com", since=time.monotonic()) is None
        assert webhook.hung("gadgets.example.com", since=hung.started) is not None
        # every handler is stuck, yet the webhook still converts
        answer = _post(pki, webhook.port, "?timeout=30s")
        assert answer["response"]["convertedObjects"] == [{"apiVersion": "example.com/v2"}]
        # past MAX_ABANDONED stuck calls it refuses, saying why, and starts no thread
        for _ in range(MAX_ABANDONED - MAX_HANDLERS):  # one at a time: each finds a place
            _hang_up(pki, webhook.port)
        while len(webhook.abandoned) < MAX_ABANDONED and time.monotonic() < deadline + 10:
            time.sleep(0.1)
        assert len(webhook.abandoned) == MAX_ABANDONED
        answer = _post(pki, webhook.port, "?timeout=30s")
        assert answer["response"]["uid"] == "u-1"
        assert answer["response"]["result"]["status"] == "Failure"
        assert "converter calls never returned" in answer["response"]["result"]["message"]
        # once they return, nothing is counted against the webhook
        release.set()
        while webhook.abandoned and time.monotonic() < deadline + 20:
            time.sleep(0.1)
        assert not webhook.abandoned and not webhook.inflight()
        answer = _post(pki, webhook.port, "")
        assert answer["response"]["result"] == {"status": "Success"}
    finally:
        release.set()
        webhook.close()


def _hang_up(pki: Any, port: int) -> None:
    """A caller that, like the API server, gives up after its own timeout (0.5 s)."""
    with contextlib.suppress(OSError):
        _post(pki, port, "?timeout=500ms", desired="example.com/hang", timeout=0.5)


@pytest.mark.parametrize(("query", "seconds"), [
    ("timeout=30s", 30.0), ("timeout=500ms", 0.5), ("a=b&timeout=2m", 120.0),
    ("", 30.0), ("timeout=banana", 30.0), ("xtimeout=5s", 30.0)])
def test_the_server_s_timeout_is_read_from_its_query(query: str, seconds: float) -> None:
    assert _server_timeout(query) == seconds


def test_a_connection_whose_handshake_ends_after_close_is_not_answered(
        tmp_path: Path) -> None:
    """A connection accepted just before :meth:`close` finished its TLS handshake after
    ``close`` had shut the open ones: it stayed kept alive, and the API server reused it
    for the next backend's conversions, which this closed webhook answered "compatfuzz
    serves no converter for 'blobs.example.com'" (a CI run, four tests red)."""
    pki = mint(tmp_path / "pki")
    webhook = ConversionWebhook(free_port(), str(pki.webhook.cert), str(pki.webhook.key),
                                {"gadgets.example.com": lambda obj, a, b: obj})
    raw = socket.create_connection(("127.0.0.1", webhook.port), timeout=10)
    try:
        deadline = time.monotonic() + 10  # its handler thread waits in the handshake
        while not any("process_request_thread" in t.name for t in threading.enumerate()):
            assert time.monotonic() < deadline, "the webhook never accepted"
            time.sleep(0.01)
        webhook.close()
        ctx = ssl.create_default_context(cafile=str(pki.ca))
        with pytest.raises((OSError, http.client.HTTPException)), \
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"POST /convert/gadgets.example.com HTTP/1.1\r\nHost: x\r\n"
                        b"Content-Length: 2\r\n\r\n{}")
            http.client.HTTPResponse(tls).begin()
    finally:
        raw.close()
