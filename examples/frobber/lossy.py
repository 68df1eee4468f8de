"""A *lossy* Frobber converter, for the README walk-through: v6 keeps only params[0].

This is the mistake the Kubernetes API changes guide warns about ("it would be
unacceptable to have lost all but Params[0]"): it passes every hand-written test with
zero or one param, and compatfuzz finds the two-param object that breaks it.
"""

from __future__ import annotations

from typing import Any

from conversion import _RENAMES, GROUP, HUB, _copy


def to_hub(obj: dict[str, Any]) -> dict[str, Any]:
    out = _copy(obj)
    spec = out.get("spec")
    if out.get("apiVersion") == f"{GROUP}/v6" and isinstance(spec, dict):
        for old, new in _RENAMES.items():
            if old in spec:
                spec[new] = spec.pop(old)
        if "param" in spec:
            spec["params"] = [spec.pop("param")]
    out["apiVersion"] = HUB
    return out


def from_hub(hub: dict[str, Any], version: str) -> dict[str, Any]:
    out = _copy(hub)
    out["apiVersion"] = f"{GROUP}/{version}"
    spec = out.get("spec")
    if version == "v6" and isinstance(spec, dict):
        for old, new in _RENAMES.items():
            if new in spec:
                spec[old] = spec.pop(new)
        params = spec.pop("params", None)
        if params:
            spec["param"] = params[0]  # BUG: params[1:] are dropped
    return out
