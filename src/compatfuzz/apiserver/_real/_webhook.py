"""compatfuzz's own conversion webhook: the user's Python converter served over HTTPS.

The real API server calls a CRD's conversion webhook with a ``ConversionReview``
(``apiextensions.k8s.io/v1``; apiextensions-apiserver
``pkg/apiserver/conversion/webhook_converter.go``), so a Python converter is put behind
one: ``POST /convert/<plural>.<group>`` on 127.0.0.1, TLS with a certificate of the
control plane's CA (the CRD's ``caBundle``), every object of the request converted from
its own ``apiVersion`` to ``desiredAPIVersion``. A converter that raises answers
``result.status: Failure`` with its message, which the server passes to the client as a
conversion error, as a Go webhook's error would be.

The server listens with ``SO_REUSEADDR`` and ``SO_REUSEPORT`` on the port the control
plane picked: a CRD names one URL, and each process that runs examples (a worker per
unit) serves it in turn.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["WEBHOOK_PATH", "ConversionWebhook", "webhook_url"]

WEBHOOK_PATH = "/convert/"
#: what the handler may read (a ConversionReview of one object is kilobytes; the server
#: itself limits a request body to 3 MiB for custom resources)
MAX_REQUEST_BYTES = 64 * 1024 * 1024

#: convert(obj, from_version, to_version) -> obj, per CRD name
Convert = Callable[[dict[str, Any], str, str], Any]


class _Server(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def server_bind(self) -> None:
        if hasattr(socket, "SO_REUSEPORT"):
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        super().server_bind()


def webhook_url(port: int, crd: str) -> str:
    """Where the CRD named ``crd`` is converted: the CRD can be installed with it before
    the process that serves it (a unit's worker) starts listening."""
    return f"https://127.0.0.1:{port}{WEBHOOK_PATH}{crd}"


class ConversionWebhook:
    """Serve ``converters`` (CRD name -> convert) on ``https://127.0.0.1:port``.

    ``errors`` keeps, per CRD name, the last exception a converter raised, so a failure
    seen through the server can show the converter's own error (with its traceback),
    not only the server's one-line message.
    """

    def __init__(self, port: int, cert: str, key: str,
                 converters: Mapping[str, Convert]) -> None:
        self.converters = dict(converters)
        self.errors: dict[str, BaseException] = {}
        self.calls = 0
        self._open: set[socket.socket] = set()
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # TCP_NODELAY: the handler writes the headers and the body in two sends, and
            # with Nagle on the body waits for the API server's delayed ACK (~40 ms a
            # conversion; a Frobber round trip took 280 ms, 15 ms with it off:
            # benchmarks/bench_apiserver.py). Go's net/http sets it on every TCP
            # connection (net/tcpsock.go newTCPConn: setNoDelay(fd, true)).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                webhook._open.add(self.connection)

            def finish(self) -> None:
                webhook._open.discard(self.connection)
                super().finish()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_REQUEST_BYTES:
                    self._send(413, {"message": "request too large"})
                    return
                body = self.rfile.read(length)
                path = self.path.split("?", 1)[0]  # the server adds ?timeout=30s
                crd = path[len(WEBHOOK_PATH):] if path.startswith(WEBHOOK_PATH) else ""
                self._send(200, webhook.review(crd, body))

            def _send(self, code: int, answer: Any) -> None:
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = _Server(("127.0.0.1", port), Handler)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        self._server.socket = ctx.wrap_socket(self._server.socket, server_side=True)
        self.port = port
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="compatfuzz-webhook", daemon=True)
        self._thread.start()

    def url(self, crd: str) -> str:
        return webhook_url(self.port, crd)

    def review(self, crd: str, body: bytes) -> dict[str, Any]:
        """The ConversionReview answer for one request body."""
        self.calls += 1
        try:
            review = json.loads(body)
            request = review["request"]
            uid = request["uid"]
            desired = request["desiredAPIVersion"]
            objects = request["objects"]
        except (ValueError, KeyError, TypeError):
            return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                    "response": {"uid": "", "result": {
                        "status": "Failure", "message": "not a ConversionReview"}}}
        out: dict[str, Any] = {"uid": uid}
        convert = self.converters.get(crd)
        try:
            if convert is None:
                raise LookupError(f"compatfuzz serves no converter for {crd!r}")
            to_version = str(desired).rsplit("/", 1)[-1]
            converted = []
            for obj in objects:
                from_version = str(obj.get("apiVersion", "")).rsplit("/", 1)[-1]
                converted.append(convert(obj, from_version, to_version))
            out["convertedObjects"] = converted
            out["result"] = {"status": "Success"}
            self.errors.pop(crd, None)
        except BaseException as exc:  # the converter's fault is the server's answer
            self.errors[crd] = exc
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            out["result"] = {"status": "Failure", "message": message[:2000]}
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": out}

    def close(self) -> None:
        """Stop listening and end the kept-alive connections too: the API server reuses
        them, and would otherwise go on talking to this (closed) webhook's converters."""
        self._server.shutdown()
        self._server.server_close()
        for sock in list(self._open):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
