"""A converter that is a real CRD conversion webhook, spoken to over ConversionReview.

Most CRD conversions are written in Go and served by the operator's webhook, not callable
from Python; sending generated objects to the running webhook exactly as the API server
does (``apiextensions.k8s.io/v1`` ConversionReview, one object per request) lets
compatfuzz round-trip them all the same. Only the standard library is used (``urllib``,
``ssl``): the webhook is usually local (``make run``, a port-forward or a kind cluster).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compatfuzz.errors import ConverterError, InvalidArgument

__all__ = ["WebhookError", "webhook_converter"]

REVIEW_API_VERSION = "apiextensions.k8s.io/v1"


class WebhookError(ConverterError):
    """The webhook refused a conversion, failed, or answered something that is not a valid
    ConversionReview response (the API server would fail the request the same way)."""


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
    self-signed server. ``timeout`` is per request, in seconds.

    >>> convert = webhook_converter("https://127.0.0.1:9443/convert", insecure=True)
    >>> API.from_crd("widgets", "crd.yaml", convert=convert)  # doctest: +SKIP

    Raises (from the returned function, wrapped by the API in ``ConverterError``):
        WebhookError: unreachable, an HTTP error, a ``Failure`` result, a response whose
            uid or number of objects does not match the request.

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
            if not Path(ca_file).is_file():
                raise InvalidArgument(f"ca_file {str(ca_file)!r} is not a file; pass the "
                                      "PEM CA bundle that signed the webhook's certificate")
            context = ssl.create_default_context(cafile=str(ca_file))

    def convert(obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        uid = str(uuid.uuid4())
        review = {"apiVersion": REVIEW_API_VERSION, "kind": "ConversionReview",
                  "request": {"uid": uid, "desiredAPIVersion": desired_api_version,
                              "objects": [obj]}}
        request = urllib.request.Request(
            url, data=json.dumps(review).encode(), method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=context) as reply:
                body = reply.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode(errors="replace")
            raise WebhookError(f"{url} answered HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise WebhookError(
                    f"the conversion webhook {url} has a certificate we do not trust "
                    f"({reason.verify_message}); pass the CA that signed it (webhook_ca / "
                    "ca_file=) or, for a local test server, webhook_insecure = true"
                ) from None
            raise WebhookError(f"cannot reach the conversion webhook {url}: {reason}; "
                               "is it running?") from None
        try:
            response = json.loads(body)["response"]
            result = response.get("result") or {}
            converted = response.get("convertedObjects")
        except (ValueError, KeyError, TypeError, AttributeError):
            raise WebhookError(f"{url} did not answer a ConversionReview: "
                               f"{body[:200].decode(errors='replace')!r}") from None
        if response.get("uid") != uid:
            raise WebhookError(f"{url} answered uid {response.get('uid')!r}, expected the "
                               f"request's {uid!r}")
        if result.get("status") != "Success":
            raise WebhookError(f"{url} refused the conversion to {desired_api_version}: "
                               f"{result.get('message') or result}")
        if not isinstance(converted, list) or len(converted) != 1:
            raise WebhookError(f"{url} returned {converted!r:.120} as convertedObjects, "
                               "expected a list of exactly the one object sent")
        out = converted[0]
        if not isinstance(out, dict):
            raise WebhookError(f"{url} returned {out!r:.80}, expected a JSON object")
        return out

    convert.__name__ = f"webhook({url})"
    return convert
