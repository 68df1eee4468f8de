"""Converters for the two-version Timer CRD (data/timers.yaml), hub v1 (its storage).

Issue 17: ``spec.timeout`` is an ISO 8601 duration (its ``pattern`` says so) and
``spec.interval`` a Go duration. v1alpha1 keeps both in seconds (``PT5400S``, ``5400s``; a timeout
whose seconds do not fit in int64, which the server would refuse, stays in hours),
v1 in hours, minutes and seconds (``PT1H30M``, ``1h30m0s``), so every round trip respells
them, as real webhooks that parse and re-print durations do.

* :func:`to_hub` / :func:`from_hub`: correct and lossless; only the spelling changes.
* ``rounds-to-minutes``: ``from_hub`` rounds the timeout to whole minutes, a real bug
  (``PT1S`` comes back as ``PT0S``), which must be reported as such and not hidden behind a
  respelling such as ``PT0H`` -> ``PT0S``.

The parsers are deliberately our own (not ``compatfuzz.semantic``'s): the converter is the
code under test. Strings they cannot read are passed through unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from compatfuzz.roundtrip import API

CRD = Path(__file__).parent / "data" / "timers.yaml"
GROUP = "example.com"

_ISO = re.compile(r"P(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?")
_MAX_INT64 = 2**63 - 1
_GO = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def _seconds(match: re.Match[str] | None) -> int | None:
    if match is None or not any(match.groups()):
        return None
    h, m, s = (int(g or 0) for g in match.groups())
    return h * 3600 + m * 60 + s


def iso_seconds(text: Any) -> int | None:
    """Seconds of ``PT1H30M``-style text, or None."""
    return _seconds(_ISO.fullmatch(text)) if isinstance(text, str) else None


def go_seconds(text: Any) -> int | None:
    """Seconds of ``1h30m``-style text (whole units only), or None."""
    return _seconds(_GO.fullmatch(text)) if isinstance(text, str) else None


def _hms(seconds: int) -> tuple[int, int, int]:
    return seconds // 3600, seconds // 60 % 60, seconds % 60


def iso_hms(seconds: int) -> str:
    """``PT1H30M``; zero is ``PT0S``."""
    h, m, s = _hms(seconds)
    text = (f"{h}H" if h else "") + (f"{m}M" if m else "") + (f"{s}S" if s else "")
    return "PT" + (text or "0S")


def go_hms(seconds: int) -> str:
    """Go's ``Duration.String`` for whole seconds: ``1h30m0s``, ``2m5s``, ``0s``."""
    h, m, s = _hms(seconds)
    if h:
        return f"{h}h{m}m{s}s"
    return f"{m}m{s}s" if m else f"{s}s"


def _respell(spec: dict[str, Any], hub: bool, round_timeout: bool = False) -> None:
    timeout, interval = iso_seconds(spec.get("timeout")), go_seconds(spec.get("interval"))
    if timeout is not None:
        if round_timeout:
            timeout = (timeout + 30) // 60 * 60  # the bug: whole minutes, half up
        # The server refuses a number beyond int64 (strfmt ParseDuration's strconv.Atoi):
        # seconds only where they fit, as v1alpha1 allows either spelling.
        seconds_fit = timeout <= _MAX_INT64
        spec["timeout"] = iso_hms(timeout) if hub or not seconds_fit else f"PT{timeout}S"
    if interval is not None:
        spec["interval"] = go_hms(interval) if hub else f"{interval}s"


def to_hub(obj: dict[str, Any]) -> dict[str, Any]:
    """Any version -> v1."""
    out = json.loads(json.dumps(obj))
    out["apiVersion"] = f"{GROUP}/v1"
    if isinstance(out.get("spec"), dict):
        _respell(out["spec"], hub=True)
    return out


def from_hub(hub: dict[str, Any], version: str, *,
             round_timeout: bool = False) -> dict[str, Any]:
    """v1 -> ``version``."""
    out = json.loads(json.dumps(hub))
    out["apiVersion"] = f"{GROUP}/{version}"
    if isinstance(out.get("spec"), dict):
        _respell(out["spec"], hub=version == "v1", round_timeout=round_timeout)
    return out


def api(kind: str = "correct", **options: Any) -> API:
    """The Timer API with one of the converters described in the module docstring."""
    if kind == "correct":
        return API.from_crd("timers", CRD, to_hub=to_hub, from_hub=from_hub, **options)
    if kind == "rounds-to-minutes":
        return API.from_crd(
            "timers", CRD, to_hub=to_hub,
            from_hub=lambda h, v: from_hub(h, v, round_timeout=True), **options)
    raise ValueError(kind)
