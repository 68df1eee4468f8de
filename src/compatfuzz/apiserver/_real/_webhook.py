"""compatfuzz's own conversion webhook: the user's Python converter served over HTTPS.

The real API server calls a CRD's conversion webhook with a ``ConversionReview``
(``apiextensions.k8s.io/v1``; apiextensions-apiserver
``pkg/apiserver/conversion/webhook_converter.go``), so a Python converter is put behind
one: ``POST /convert/<plural>.<group>`` on 127.0.0.1, TLS with a certificate of the
control plane's CA (the CRD's ``caBundle``), every object of the request converted from
its own ``apiVersion`` to ``desiredAPIVersion``. A converter that raises answers
``result.status: Failure`` with its message, which the server passes to the client as a
conversion error, as a Go webhook's error would be.

The port is bound once for the run (:func:`listen`, in the process that started the control
plane) and every process that runs examples (a worker per unit) serves it in turn on a
copy of that socket: without ``SO_REUSEPORT``, so no other process can listen on it beside
us and take a share of the API server's connections, nor take the port between two units.
With several workers at once the run's router (``_router``) serves that port instead,
and each worker serves its webhook on a Unix socket of its own (``unix=``), plain HTTP,
with the same limits: the router hands it the conversions of the objects it created.
The TLS handshake runs in the connection's own thread, with a deadline, and at most
:data:`MAX_HANDLERS` connections are served at once (the others wait in the backlog): a
client that connects and says nothing, or a converter that hangs, ties up one thread,
not the server nor an unbounded number of threads. A converter call that outlives the API
server's own timeout for it (``?timeout=30s``, which the server adds to every call) gives
its place back, since the server has already given up on it: a converter that hangs
forever costs the run a thread, not the webhook (after :data:`MAX_ABANDONED` of them it
refuses to convert, saying where they are stuck), and :meth:`ConversionWebhook.hung` tells
the run where it hangs.

The API server presents no client certificate to a conversion webhook: apiextensions-
apiserver builds its webhook clients with ``NewDefaultAuthenticationInfoResolver("")``
(``pkg/apiserver/conversion/webhook_converter.go``), no kubeconfig and so no credentials,
and kube-apiserver's wrapper (``k8s.io/apiserver/pkg/util/webhook/authentication.go``)
adds credentials only for ``kubernetes.default.svc``. So the webhook cannot ask for one;
what it converts is only what the caller sends, and what it answers is checked by the
server that called it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any

__all__ = ["MAX_ABANDONED", "MAX_HANDLERS", "SERVER_TIMEOUT", "WEBHOOK_PATH", "Call",
           "ConversionWebhook", "WebhookPortTaken", "failure", "listen", "listen_unix",
           "serve", "server_timeout", "webhook_url"]

WEBHOOK_PATH = "/convert/"
#: what the handler may read (a ConversionReview of one object is kilobytes; the server
#: itself limits a request body to 3 MiB for custom resources)
MAX_REQUEST_BYTES = 64 * 1024 * 1024

#: convert(obj, from_version, to_version) -> obj, per CRD name
Convert = Callable[[dict[str, Any], str, str], Any]


#: connections served at once; more wait in the listen backlog until one ends (a worker
#: checks one example at a time through the server, which converts one request at a time)
MAX_HANDLERS = 8
#: seconds a connection may stay silent (in the handshake, between requests) before it is
#: dropped: the API server waits at most 30 s for a conversion (``timeoutSeconds``)
IDLE_TIMEOUT = 60.0
#: seconds the API server waits for a conversion when its request does not say: what
#: apiextensions-apiserver's webhook converter sets (``webhook_converter.go``) and sends
#: as ``?timeout=30s``
SERVER_TIMEOUT = 30.0
#: converter calls left running past the server's timeout (their threads cannot be
#: stopped) after which the webhook refuses further conversions instead of starting more
MAX_ABANDONED = 16
_DURATION = re.compile(r"(?:^|&)timeout=(\d+(?:\.\d+)?)(ms|s|m)(?:&|$)")


def server_timeout(query: str) -> float:
    """The API server's timeout for one call, from its ``?timeout=`` (a Go duration)."""
    found = _DURATION.search(query)
    if found is None:
        return SERVER_TIMEOUT
    return float(found.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[found.group(2)]


@dataclass
class Call:
    """One converter call in flight: the CRD, when it began, when the server gives up."""

    crd: str
    started: float
    due: float
    thread: int  # threading.get_ident() of the handler running the converter

    def frame(self) -> FrameType | None:
        """Where the converter is now (``None`` once it returned)."""
        return sys._current_frames().get(self.thread)


class WebhookPortTaken(OSError):
    """Another process listens on the webhook's port."""


def listen(port: int) -> socket.socket:
    """The webhook's listening socket on ``127.0.0.1:port``, bound once for the run.

    ``SO_REUSEADDR`` only (a port in TIME_WAIT can be bound again), never ``SO_REUSEPORT``:
    with it, any process of the same user could listen on the same port and be handed a
    share of the API server's connections.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise WebhookPortTaken(
            exc.errno, f"compatfuzz's conversion webhook cannot listen on 127.0.0.1:{port}: "
            f"{exc.strerror} (another process listens there; stop it, or run again to "
            "have other ports picked)") from None
    sock.listen(128)
    return sock


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, listener: socket.socket, answer: Answer,
                 handlers: int = MAX_HANDLERS) -> None:
        super().__init__(listener.getsockname(), _Handler, bind_and_activate=False)
        self.socket.close()  # the unbound one the constructor made
        self.socket = listener
        #: what a request's path (with its query) and body are answered: (status, JSON)
        self.answer = answer
        #: the connections open now (their handshake done)
        self.open: set[socket.socket] = set()
        self.slots = threading.BoundedSemaphore(handlers)
        self.closing = False
        self._freed: set[int] = set()  # handler threads whose slot was given back early
        self._lock = threading.Lock()

    def free(self, thread: int, *, ending: bool = False) -> None:
        """Give back the slot of handler ``thread``: once, early (a converter call the
        server has given up on) or when the thread ends."""
        with self._lock:
            if thread in self._freed:
                if ending:
                    self._freed.discard(thread)
                return
            if not ending:
                self._freed.add(thread)
        self.slots.release()

    def process_request(self, request: Any, client_address: Any) -> None:
        while not self.slots.acquire(timeout=0.2):  # all busy: wait, as the backlog does
            if self.closing:
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.free(threading.get_ident(), ending=True)

    def get_request(self) -> tuple[Any, Any]:
        # TCP_NODELAY: the handler writes the headers and the body in two sends, and
        # with Nagle on the body waits for the API server's delayed ACK (~40 ms a
        # conversion; a Frobber round trip took 280 ms, 15 ms with it off:
        # benchmarks/bench_apiserver.py). Go's net/http sets it on every TCP
        # connection (net/tcpsock.go newTCPConn: setNoDelay(fd, true)). A worker's Unix
        # socket has no Nagle to turn off.
        request, address = super().get_request()
        if request.family != socket.AF_UNIX:
            with contextlib.suppress(OSError):
                request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return request, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up or fails its handshake is no concern of the run

    def admit(self, sock: socket.socket) -> bool:
        """Count ``sock`` (its handshake done) among the open connections, unless the
        server is stopping: a connection accepted just before :meth:`stop` whose handshake
        ended after it would stay kept alive, and the API server would go on sending it
        reviews meant for the next webhook on this port."""
        with self._lock:
            if not self.closing:
                self.open.add(sock)
                return True
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        return False

    def stop(self) -> None:
        """Stop accepting, and end the kept-alive connections too: a client reusing one
        would otherwise go on talking to what is closed."""
        with self._lock:
            self.closing = True
            still = list(self.open)
        self.shutdown()
        self.server_close()
        for sock in still:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


#: (path with its query, body) -> (HTTP status, JSON body)
Answer = Callable[[str, bytes], tuple[int, bytes]]


class _Handler(BaseHTTPRequestHandler):
    """One connection: ``POST``s answered by its server's :attr:`_Server.answer`."""

    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = False  # TCP_NODELAY is set by _Server.get_request
    timeout = IDLE_TIMEOUT  # the handshake and each read (StreamRequestHandler)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()  # TCP_NODELAY: from _Server.get_request, not here (not on Unix)
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()  # here, not in the thread that accepts
        if not self.server.admit(self.connection):
            self.close_connection = True  # its first read finds the socket shut

    def finish(self) -> None:
        self.server.open.discard(self.connection)
        super().finish()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self._send(413, json.dumps({"message": "request too large"}).encode())
            return
        body = self.rfile.read(length)
        code, answer = self.server.answer(self.path, body)
        with contextlib.suppress(OSError):  # the server may have given up on it
            self._send(code, answer)

    def _send(self, code: int, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(listener: socket.socket, answer: Answer, *, tls: tuple[str, str] | None,
          handlers: int = MAX_HANDLERS, name: str = "compatfuzz-webhook") -> _Server:
    """Answer ``POST``s on ``listener`` (which it then owns) with ``answer``, over TLS with
    ``tls`` (certificate, key) when given, in a thread of its own."""
    try:
        if tls is not None:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(*tls)
            listener = ctx.wrap_socket(listener, server_side=True,
                                       do_handshake_on_connect=False)
        server = _Server(listener, answer, handlers)
    except BaseException:
        listener.close()
        raise
    threading.Thread(target=server.serve_forever, name=name, daemon=True).start()
    return server


def listen_unix(path: str) -> socket.socket:
    """A listening Unix socket at ``path`` (its folder is the control plane's, which only
    this user can enter), replacing what an ended process of the same pid left there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


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
                 converters: Mapping[str, Convert],
                 listener: socket.socket | None = None, *, unix: str | None = None) -> None:
        """On ``https://127.0.0.1:port`` (``listener``: the run's socket for that port,
        else one bound here), or with ``unix`` on a Unix socket at that path, plain HTTP:
        a worker's own, to which the run's router (``_router``) hands its conversions."""
        self.converters = dict(converters)
        self.errors: dict[str, BaseException] = {}
        self.calls = 0
        self._inflight: dict[int, Call] = {}
        #: calls still running past the server's timeout, by handler thread
        self.abandoned: dict[int, Call] = {}
        #: per CRD, the last call that outlived the server's timeout (see :meth:`hung`)
        self._hung: dict[str, Call] = {}
        self._calls_lock = threading.Lock()
        self._closed = threading.Event()
        self.unix = unix
        if unix is not None:
            sock, tls = listen_unix(unix), None
        else:
            # the run's socket when there is one (a copy: closing it leaves the run's open)
            sock = listener.dup() if listener is not None else listen(port)
            tls = (cert, key)
        self._server = serve(sock, self._answer, tls=tls)
        self._open = self._server.open
        self.port = port
        threading.Thread(target=self._reap, name="compatfuzz-webhook-reaper",
                         daemon=True).start()

    def _answer(self, target: str, body: bytes) -> tuple[int, bytes]:
        path, _, query = target.partition("?")  # the server adds ?timeout=30s
        crd = path[len(WEBHOOK_PATH):] if path.startswith(WEBHOOK_PATH) else ""
        return 200, json.dumps(self.review(crd, body,
                                           timeout=server_timeout(query))).encode()

    def _reap(self) -> None:
        """Give back the place of each converter call the server has given up on."""
        while not self._closed.wait(0.25):
            now = time.monotonic()
            with self._calls_lock:
                late = [c for t, c in self._inflight.items()
                        if c.due <= now and t not in self.abandoned]
                for call in late:
                    self.abandoned[call.thread] = call
                    self._hung[call.crd] = call
            for call in late:
                self._server.free(call.thread)

    def inflight(self) -> list[Call]:
        """The converter calls running now, oldest first."""
        with self._calls_lock:
            return sorted(self._inflight.values(), key=lambda c: c.started)

    def hung(self, crd: str, since: float = 0.0) -> Call | None:
        """The call converting ``crd``, begun at ``since`` (``time.monotonic()``) or later,
        that the server gave up on: one that outlived the server's timeout, else one still
        running (asked when the server has answered with an error, so it no longer waits
        for it; the server's clock starts before ours, so it can give up before
        :meth:`_reap` sees the call late). Calls begun earlier, by an example that ended
        at its own deadline, are not this one's."""
        with self._calls_lock:
            late = self._hung.pop(crd, None)
            running = [c for c in self._inflight.values() if c.crd == crd]
        return min([c for c in (late, *running) if c is not None and c.started >= since],
                   key=lambda c: c.started, default=None)

    def url(self, crd: str) -> str:
        return webhook_url(self.port, crd)

    def review(self, crd: str, body: bytes, *, timeout: float = SERVER_TIMEOUT
               ) -> dict[str, Any]:
        """The ConversionReview answer for one request body, which the server waits for
        ``timeout`` seconds."""
        self.calls += 1
        if len(self.abandoned) >= MAX_ABANDONED:
            stuck = next(iter(self.abandoned.values()))
            return failure(_uid(body), f"compatfuzz's conversion webhook converts no more: "
                            f"{len(self.abandoned)} converter calls never returned "
                            f"(the first for {stuck.crd})")
        now = time.monotonic()
        thread = threading.get_ident()
        with self._calls_lock:
            self._inflight[thread] = Call(crd, now, now + timeout, thread)
        try:
            return self._review(crd, body)
        finally:
            with self._calls_lock:
                self._inflight.pop(thread, None)
                self.abandoned.pop(thread, None)

    def _review(self, crd: str, body: bytes) -> dict[str, Any]:
        try:
            review = json.loads(body)
            request = review["request"]
            uid = request["uid"]
            desired = request["desiredAPIVersion"]
            objects = request["objects"]
        except (ValueError, KeyError, TypeError):
            return failure("", "not a ConversionReview")
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
        self._closed.set()
        self._server.stop()
        if self.unix is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.unix)


def failure(uid: str, message: str) -> dict[str, Any]:
    """A ConversionReview answer that fails the conversion with ``message``."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": uid, "result": {"status": "Failure", "message": message}}}


_server_timeout = server_timeout  # its name before the router used it


def _uid(body: bytes) -> str:
    try:
        return str(json.loads(body)["request"]["uid"])
    except (ValueError, KeyError, TypeError):
        return ""
