"""Correct Frobber converters, hub and spoke through an internal version.

Follows the Kubernetes API changes guide: the internal Frobber has ``params`` (a list)
and ``heightInInches``/``widthInInches``.  v6 only has room for the first param, so the
others travel in an annotation when an object is stored as v6, and come back when it is
read as v7beta1: v7beta1 -> v6 -> v7beta1 loses nothing.
"""

from __future__ import annotations

import json
from typing import Any

GROUP = "frobber.example.com"
HUB = f"{GROUP}/__internal"
#: Where v6 keeps params[1:], which it has no field for.
EXTRA_PARAMS = f"{GROUP}/extra-params"

_RENAMES = {"height": "heightInInches", "width": "widthInInches"}  # v6 -> internal


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(obj))


def to_hub(obj: dict[str, Any]) -> dict[str, Any]:
    """Convert a served Frobber (v6 or v7beta1) to the internal version."""
    out = _copy(obj)
    version = str(out.get("apiVersion", "")).rpartition("/")[2]
    if version not in ("v6", "v7beta1"):
        raise ValueError(f"unknown Frobber apiVersion {obj.get('apiVersion')!r}")
    spec = out.get("spec")
    if version == "v6" and isinstance(spec, dict):
        for old, new in _RENAMES.items():
            if old in spec:
                spec[new] = spec.pop(old)
        if "param" in spec:
            params = [spec.pop("param")]
            annotations = out.get("metadata", {}).get("annotations") or {}
            extra = _extra_params(annotations.get(EXTRA_PARAMS))
            if extra is not None:
                params += extra
                del annotations[EXTRA_PARAMS]
                if not annotations:
                    del out["metadata"]["annotations"]
            spec["params"] = params
    out["apiVersion"] = HUB
    return out


def from_hub(hub: dict[str, Any], version: str) -> dict[str, Any]:
    """Convert an internal Frobber to ``version`` (``"v6"`` or ``"v7beta1"``)."""
    if version not in ("v6", "v7beta1"):
        raise ValueError(f"unknown Frobber version {version!r}")
    out = _copy(hub)
    out["apiVersion"] = f"{GROUP}/{version}"
    spec = out.get("spec")
    if version == "v6" and isinstance(spec, dict):
        for old, new in _RENAMES.items():
            if new in spec:
                spec[old] = spec.pop(new)
        params = spec.pop("params", None)
        if params:
            spec["param"] = params[0]
            if len(params) > 1:
                meta = out.setdefault("metadata", {})
                meta.setdefault("annotations", {})[EXTRA_PARAMS] = json.dumps(params[1:])
    return out


def convert(obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
    """The same conversion, ConversionReview style (what a webhook handler calls)."""
    return from_hub(to_hub(obj), desired_api_version.rpartition("/")[2])


def _extra_params(value: Any) -> list[str] | None:
    if not isinstance(value, str):
        return None
    try:
        extra = json.loads(value)
    except ValueError:
        return None
    if isinstance(extra, list) and all(isinstance(p, str) for p in extra):
        return extra
    return None
