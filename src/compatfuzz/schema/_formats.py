"""Format checking that matches the API server, for validating generated and converted objects.

``jsonschema``'s checker knows JSON Schema formats; Kubernetes adds its own (``int32``,
``int64``, ``byte``, ``cidr``, ``mac``...) and gives ``duration`` the Go meaning
(``"1h30m"``), where JSON Schema means ISO 8601 (``"PT1H30M"``). A Kubernetes schema is
therefore checked with Kubernetes formats, anything else with JSON Schema's.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from functools import lru_cache
from typing import Any

__all__ = ["GO_DURATION_RE", "format_checker"]

# kube-openapi strfmt: a sequence of number+unit, units ns us µs ms s m h (and d, w).
GO_DURATION_RE = re.compile(
    r"^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d|w))+)$"
)
_MAC_RE = re.compile(
    r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{2}[:-]){7}([0-9A-Fa-f]{2})$"
    r"|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$"
)


def _int_range(bits: int) -> Any:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(instance: object) -> bool:
        if isinstance(instance, bool) or not isinstance(instance, int | float):
            return True
        return bool(lo <= instance <= hi)

    return check


def _byte(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        base64.b64decode(instance, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _cidr(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        ipaddress.ip_network(instance, strict=False)
    except ValueError:
        return False
    return "/" in instance


def _go_duration(instance: object) -> bool:
    return not isinstance(instance, str) or bool(GO_DURATION_RE.match(instance))


def _mac(instance: object) -> bool:
    return not isinstance(instance, str) or bool(_MAC_RE.match(instance))


@lru_cache(maxsize=2)
def format_checker(kubernetes: bool) -> Any:
    """Return a ``jsonschema.FormatChecker`` for Kubernetes or plain JSON Schema semantics."""
    import jsonschema

    # Start from the 2020-12 checkers: the bare FormatChecker() mixes drafts (its "time"
    # is draft 3's "%H:%M:%S", which rejects RFC 3339 times with an offset).
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("int32")(_int_range(32))
    checker.checks("int64")(_int_range(64))
    checker.checks("byte")(_byte)
    if kubernetes:
        checker.checks("duration")(_go_duration)
        checker.checks("cidr")(_cidr)
        checker.checks("mac")(_mac)
    return checker
