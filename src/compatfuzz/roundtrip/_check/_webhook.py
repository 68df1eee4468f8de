"""A converter that is a real CRD conversion webhook, spoken to over ConversionReview.

Most CRD conversions are written in Go and served by the operator's webhook, not callable
from Python; sending generated objects to the running webhook exactly as the API server
does (``apiextensions.k8s.io/v1`` ConversionReview, one object per request) lets
compatfuzz round-trip them all the same. Only the standard library is used
(``http.client``, ``ssl``): the webhook is usually local (``make run``, a port-forward or
a kind cluster), so no proxy is ever used.

``timeout`` bounds the *whole* request (connecting, the TLS handshake, sending, and
reading the answer): a socket timeout alone applies per read, so a webhook dripping one
byte a second never timed out. A watchdog shuts the socket down at the
deadline; it keeps its own reference to the socket, since an HTTP/1.0 or
``Connection: close`` answer makes ``http.client`` drop ``conn.sock``.
Transport problems (unreachable, TLS, no answer in time, the per-example deadline firing
during the request) are :class:`WebhookUnavailable`: a setup error that ends the unit as
an error (exit 2), not a property failure, since no object is to blame.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from compatfuzz.errors import ConverterError, InvalidArgument
from compatfuzz.roundtrip._check._converter import WebhookAddress
from compatfuzz.roundtrip._deadline import ExampleDeadline

__all__ = ["WebhookError", "WebhookUnavailable", "ca_context", "converted_object",
           "webhook_converter"]

REVIEW_API_VERSION = "apiextensions.k8s.io/v1"
#: Larger answers are refused: a ConversionReview of one object is kilobytes.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024


class WebhookError(ConverterError):
    """The webhook refused a conversion, failed, or answered something that is not a valid
    ConversionReview response (the API server would fail the request the same way)."""


class WebhookUnavailable(WebhookError):
    """The webhook cannot be talked to at all: unreachable, a TLS failure, or no complete
    answer within the timeout.  A setup error (``setup_error``): the runner ends the unit
    as an error instead of blaming, and shrinking, the object that was being sent."""

    setup_error = True


def ca_context(ca_file: str | Path) -> ssl.SSLContext:
    """Return a TLS context trusting the PEM CA bundle ``ca_file``.

    Raises:
        InvalidArgument: ``ca_file`` is not a file, cannot be read, or holds no PEM
            certificate (``/etc/passwd``, a DER file, a key): OpenSSL's ``SSLError`` is
            never what the user sees.
    """
    path = str(ca_file)
    if not Path(path).is_file():
        raise InvalidArgument(f"ca_file {path!r} is not a file; pass the "
                              "PEM CA bundle that signed the webhook's certificate")
    try:
        return ssl.create_default_context(cafile=path)
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or type(exc).__name__
        raise InvalidArgument(
            f"ca_file {path!r} is not a PEM CA bundle ({reason}); pass the CA "
            "certificate that signed the webhook's certificate, in PEM "
            "(-----BEGIN CERTIFICATE-----; openssl x509 -inform der -in ca.der -out "
            "ca.pem converts a DER file)") from None


def webhook_converter(
    url: str,
    *,
    ca_file: str | Path | None = None,
    insecure: bool = False,
    timeout: float = 10.0,
) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    """Return ``convert(obj, desired_api_version)`` that asks the conversion webhook at
    ``url``, for ``API(convert=...)`` or ``webhook = "..."`` in ``compatfuzz.toml``.

    ``ca_file`` is the CA bundle that signed the webhook's certificate (the CRD's
    ``caBundle``, decoded); ``insecure=True`` skips certificate checks for a local
    self-signed server. ``timeout`` bounds each whole request, in seconds.

    >>> convert = webhook_converter("https://127.0.0.1:9443/convert", insecure=True)
    >>> API.from_crd("widgets", "crd.yaml", convert=convert)  # doctest: +SKIP

    Raises (from the returned function, wrapped by the API in ``ConverterError``):
        WebhookError: an HTTP error, a ``Failure`` result, a response whose uid or
            number of objects does not match the request.
        WebhookUnavailable: unreachable, a TLS failure, or no answer within ``timeout``.

    .. versionadded:: 0.1
    """
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise InvalidArgument(
            f"Expected an http(s) URL but got url={url!r}; a conversion webhook looks like "
            "https://127.0.0.1:9443/convert"
        )
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise InvalidArgument(f"Expected a positive number of seconds but got "
                              f"timeout={timeout!r}")
    context: ssl.SSLContext | None = None
    if url.startswith("https://"):
        if insecure:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif ca_file is not None:
            context = ca_context(ca_file)
        else:
            context = ssl.create_default_context()

    def convert(obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        uid = str(uuid.uuid4())
        review = {"apiVersion": REVIEW_API_VERSION, "kind": "ConversionReview",
                  "request": {"uid": uid, "desiredAPIVersion": desired_api_version,
                              "objects": [obj]}}
        status, body = _post(url, json.dumps(review).encode(), timeout, context)
        return converted_object(status, body, uid, desired_api_version, url)

    convert.__name__ = f"webhook({url})"
    # what a real API server needs to call the same webhook (``Converter.webhook``)
    convert.address = WebhookAddress(  # type: ignore[attr-defined]
        url, None if ca_file is None else str(ca_file), insecure)
    return convert


def converted_object(status: int, body: bytes, uid: str, desired_api_version: str,
                     who: str) -> dict[str, Any]:
    """The one object of a ConversionReview answer, checked as the API server checks it
    (``apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go``: the
    uid, a ``Success`` result, exactly as many objects as sent).

    Raises:
        WebhookError: an HTTP error, a ``Failure`` result, or an answer that is not a
            ConversionReview of one object; ``who`` names the webhook in the message.
    """
    if not 200 <= status < 300:
        detail = body[:300].decode(errors="replace")
        raise WebhookError(f"{who} answered HTTP {status}: {detail}")
    try:
        response = json.loads(body)["response"]
        result = response.get("result") or {}
        converted = response.get("convertedObjects")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise WebhookError(f"{who} did not answer a ConversionReview: "
                           f"{body[:200].decode(errors='replace')!r}") from None
    if response.get("uid") != uid:
        raise WebhookError(f"{who} answered uid {response.get('uid')!r}, expected the "
                           f"request's {uid!r}")
    if result.get("status") != "Success":
        raise WebhookError(f"{who} refused the conversion to {desired_api_version}: "
                           f"{result.get('message') or result}")
    if not isinstance(converted, list) or len(converted) != 1:
        raise WebhookError(f"{who} returned {converted!r:.120} as convertedObjects, "
                           "expected a list of exactly the one object sent")
    out = converted[0]
    if not isinstance(out, dict):
        raise WebhookError(f"{who} returned {out!r:.80}, expected a JSON object")
    return out


def _post(url: str, data: bytes, timeout: float,
          context: ssl.SSLContext | None) -> tuple[int, bytes]:
    """POST ``data``; (status, body). The whole exchange ends within ``timeout``."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname or ""
    conn: http.client.HTTPConnection
    if context is not None:
        conn = http.client.HTTPSConnection(host, parts.port, timeout=timeout,
                                           context=context)
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=timeout)
    expired = threading.Event()
    lock = threading.Lock()
    held: list[socket.socket] = []  # the connected socket, kept past conn.close()

    def shut(sock: socket.socket) -> None:
        # wakes a blocked read; the base method leaves TLS state be
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def expire() -> None:
        with lock:
            expired.set()
            for sock in (conn.sock, *held):
                if sock is not None:
                    shut(sock)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    try:
        # Connect first and keep the socket: an HTTP/1.0 or ``Connection: close`` answer
        # makes getresponse() drop ``conn.sock`` (the response reads through its own
        # file object), so a watchdog looking at ``conn.sock`` found nothing to shut and
        # a dripping body was read to its end.
        conn.connect()
        with lock:
            if conn.sock is not None:
                held.append(conn.sock)
                if expired.is_set():
                    shut(conn.sock)
        conn.request("POST", target, body=data, headers={
            "Content-Type": "application/json", "Accept": "application/json"})
        reply = conn.getresponse()
        body = reply.read(MAX_RESPONSE_BYTES + 1)
        status = reply.status
    except ExampleDeadline as exc:
        # the per-example deadline came first: still the webhook's fault, not the object's
        exc.unavailable = _too_slow(url, time.monotonic() - started, deadline=True)
        raise
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError):
            raise _too_slow(url, timeout) from None
        if isinstance(exc, ssl.SSLCertVerificationError):
            raise WebhookUnavailable(
                f"the conversion webhook {url} has a certificate we do not trust "
                f"({exc.verify_message}); pass the CA that signed it (webhook_ca / "
                "ca_file=) or, for a local test server, webhook_insecure = true"
            ) from None
        if isinstance(exc, ssl.SSLError):
            raise WebhookUnavailable(
                f"TLS with the conversion webhook {url} failed ({exc}); check that it "
                "serves HTTPS on this port (or use http://)") from None
        raise WebhookUnavailable(f"cannot reach the conversion webhook {url}: {exc}; "
                                 "is it running?") from None
    finally:
        timer.cancel()
        conn.close()
    if expired.is_set() or time.monotonic() - started > timeout:
        raise _too_slow(url, timeout)
    if len(body) > MAX_RESPONSE_BYTES:
        raise WebhookError(f"{url} answered more than {MAX_RESPONSE_BYTES} bytes; a "
                           "ConversionReview of one object is a few kilobytes")
    return status, body


def _too_slow(url: str, timeout: float, *, deadline: bool = False) -> WebhookUnavailable:
    if deadline:
        return WebhookUnavailable(
            f"the conversion webhook {url} did not answer within the per-example deadline "
            f"({timeout:.3g}s into the request); check that it is not stuck, or raise "
            "--example-deadline above webhook_timeout")
    return WebhookUnavailable(
        f"the conversion webhook {url} did not answer within {timeout:g}s (the timeout "
        "covers the whole request: connecting, sending and reading the answer); check "
        "that it is not stuck, or raise webhook_timeout / timeout=")
