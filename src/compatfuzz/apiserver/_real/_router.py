"""Each conversion to the worker whose example it is: ``--workers N`` through one server.

The CRDs of a run name one conversion webhook (``https://127.0.0.1:<port>/convert/...``),
but with ``--workers N`` several worker processes check examples at once, each with its
own converters and its own bookkeeping of what they did (the converter's exception,
calls that hung: ``_webhook.ConversionWebhook``). So the process that started the control
plane serves that port with a :class:`ConversionRouter` (TLS, as the webhook it stands
for), and each worker serves its webhook on a Unix socket of its own,
``<folder>/<pid>.sock`` (:func:`socket_path`) in a folder only this user can enter.

The router reads a ``ConversionReview``'s objects' ``metadata.name``: compatfuzz names
every object it creates ``cf-<pid>-<n>`` (``_backend.RealKind.new_name``), the pid of the
worker that created it, so that worker converts it. The request goes to that worker's
socket unchanged (its path with the server's ``?timeout=``, its body), and the worker's
answer comes back unchanged: the converter's limits (``MAX_HANDLERS``, the server's
timeout, hung calls, ``MAX_ABANDONED``) are kept where it runs. A request the router
cannot place (objects no worker of the run created, of two workers, or of a worker that
has ended) is answered with a ``Failure`` that says why, which the API server passes to
its client as a conversion error.

The router holds no converter and runs no user code; it waits for a worker at most the
server's own timeout for the call (plus :data:`SLACK`), so a converter that hangs ties up
a router thread no longer than the server waits for it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
from pathlib import Path

from compatfuzz.apiserver._real._webhook import (
    MAX_HANDLERS,
    failure,
    serve,
    server_timeout,
)

__all__ = ["SLACK", "ConversionRouter", "route_of", "socket_path"]

#: seconds the router waits for a worker beyond the server's own timeout for the call
SLACK = 2.0
_NAME = re.compile(r"cf-([1-9][0-9]{0,9})-[0-9]+")


def socket_path(folder: str | Path, pid: int) -> str:
    """Where worker ``pid`` serves its conversion webhook."""
    return os.path.join(folder, f"{pid}.sock")


def route_of(body: bytes) -> tuple[str, int | None, str]:
    """``(uid, pid, why)`` for one request body: the pid of the worker that created its
    objects, or ``None`` with why no worker converts them."""
    try:
        request = json.loads(body)["request"]
        uid = str(request["uid"])
        objects = request["objects"]
        if not isinstance(objects, list):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        return "", None, "not a ConversionReview"
    pids: dict[int, str] = {}
    for obj in objects:
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        found = _NAME.fullmatch(name) if isinstance(name, str) else None
        if found is None or not isinstance(name, str):
            return uid, None, (f"the object named {json.dumps(name)[:80]} was not created "
                               "by a compatfuzz worker (their names are cf-<pid>-<n>), so "
                               "no worker converts it")
        pids.setdefault(int(found.group(1)), name)
    if len(pids) > 1:
        return uid, None, ("the request holds objects of several workers ("
                           + ", ".join(sorted(pids.values())) + "); each converts only "
                           "its own")
    if not pids:
        return uid, None, "the request holds no object"
    return uid, next(iter(pids)), ""


class ConversionRouter:
    """Serve the run's webhook port (``listener``, which it then owns) over TLS with
    ``cert`` and ``key``, handing each request to the worker socket under ``folder``
    named by the pid in its objects' names."""

    def __init__(self, listener: socket.socket, cert: str, key: str, folder: str | Path,
                 *, handlers: int = MAX_HANDLERS) -> None:
        self.folder = str(folder)
        self.routed = 0  # requests a worker answered
        self._server = serve(listener, self._answer, tls=(cert, key), handlers=handlers,
                             name="compatfuzz-webhook-router")

    def _answer(self, target: str, body: bytes) -> tuple[int, bytes]:
        uid, pid, why = route_of(body)
        if pid is None:
            return 200, _failed(uid, why)
        _, _, query = target.partition("?")
        wait = server_timeout(query) + SLACK
        conn = _UnixConnection(socket_path(self.folder, pid), wait)
        try:
            conn.request("POST", target, body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            answer = response.read()
            self.routed += 1
            return response.status, answer
        except (FileNotFoundError, ConnectionRefusedError):
            return 200, _failed(uid, f"worker process {pid}, which created these objects, "
                                "serves no conversions now (its unit has ended)")
        except TimeoutError:
            return 200, _failed(uid, f"worker process {pid} did not answer within "
                                f"{wait:g}s (the API server has given up on this call)")
        except (OSError, http.client.HTTPException) as exc:
            return 200, _failed(uid, f"worker process {pid} ended its connection before "
                                f"answering ({type(exc).__name__}: {exc})")
        finally:
            conn.close()

    def close(self) -> None:
        """Stop listening, and end the API server's kept-alive connections."""
        self._server.stop()


def _failed(uid: str, why: str) -> bytes:
    return json.dumps(failure(uid, f"compatfuzz's conversion router: {why}")).encode()


class _UnixConnection(http.client.HTTPConnection):
    """HTTP to a worker's Unix socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
