"""compatfuzz's conversion webhook on its own (no kube-apiserver): it answers a
ConversionReview over a kept-alive TLS connection, with Nagle's algorithm off on that
connection, as Go's net/http has it (``net/tcpsock.go`` ``newTCPConn``): with it on, each
answer's body waited for the API server's delayed ACK, ~40 ms a conversion."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._real._pki import mint
from compatfuzz.apiserver._real._process import free_port
from compatfuzz.apiserver._real._webhook import ConversionWebhook


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
