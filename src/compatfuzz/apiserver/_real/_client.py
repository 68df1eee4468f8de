"""A small JSON client for kube-apiserver: one kept-alive HTTPS connection per thread.

Only what the properties need (POST, GET, PUT, DELETE of JSON). Every answer that is not
2xx becomes a :class:`ServerError` holding the server's ``Status`` (its code, reason,
message and field causes), so a failure shows what a user's ``kubectl`` would show.
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
from typing import Any

from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.errors import CompatfuzzError

__all__ = ["Client", "ServerError"]


class ServerError(CompatfuzzError):
    """kube-apiserver answered a request with an error ``Status``."""

    def __init__(self, method: str, path: str, code: int, status: dict[str, Any]) -> None:
        self.method = method
        self.path = path
        self.code = code
        self.status = status
        self.reason = str(status.get("reason") or "")
        self.message = str(status.get("message") or status)
        super().__init__(self.describe())

    @property
    def causes(self) -> list[str]:
        """The field errors of a 422 (``details.causes``), as ``field: message``."""
        details = self.status.get("details")
        causes = details.get("causes") if isinstance(details, dict) else None
        out = []
        for cause in causes if isinstance(causes, list) else []:
            if isinstance(cause, dict):
                field = cause.get("field") or ""
                text = cause.get("message") or cause.get("reason") or ""
                out.append(f"{field}: {text}" if field and not str(text).startswith(field)
                           else str(text))
        return out

    def explanation(self) -> str:
        """The server's message, then the field causes it does not already say."""
        causes = [c for c in self.causes if c not in self.message]
        return self.message + "".join(f"\n    {c}" for c in causes[:20])

    def describe(self) -> str:
        head = f"{self.code} {self.reason}".strip()
        return (f"the API server answered {self.method} {self.path} with {head}: "
                f"{self.explanation()}")


class Client:
    """JSON over HTTPS to ``endpoint``, with the admin client certificate."""

    def __init__(self, endpoint: Endpoint, timeout: float = 60.0) -> None:
        self.endpoint = endpoint
        url = urllib.parse.urlsplit(endpoint.url)
        self._host = url.hostname or "127.0.0.1"
        self._port = url.port or 443
        self._ctx = endpoint.ssl_context()
        self._timeout = timeout
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPSConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(self._host, self._port, context=self._ctx,
                                               timeout=self._timeout)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json",
                accept: str = "application/json") -> Any:
        """Send one request; return the decoded JSON answer (``accept`` asks for another
        rendering, e.g. a ``meta.k8s.io`` Table).

        Raises:
            ServerError: a non-2xx answer.
        """
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": accept}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):  # a kept-alive connection the server closed: once more
            conn = self._connection()
            try:
                conn.request(method, path, body=data, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest, http.client.ResponseNotReady):
                self.close()
                if attempt == 2:
                    raise
            except BaseException:
                self.close()  # an interrupted exchange leaves the connection unusable
                raise
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = {"message": raw[:2000].decode(errors="replace")}
        if not 200 <= response.status < 300:
            status = answer if isinstance(answer, dict) else {"message": str(answer)}
            raise ServerError(method, path, response.status, status)
        return answer
