"""Converters for the three-version Gadget CRD (data/gadgets.yaml), hub v1 (its storage).

v1beta1 has no ``spec.note`` and v1alpha1 holds one ``spec.param`` instead of the list
``spec.params``; each keeps what it cannot hold in an annotation (a *stash*), as real
conversion webhooks do (Cluster API's ``cluster.x-k8s.io/conversion-data``).

* :func:`to_hub` / :func:`from_hub`: correct and lossless.
* ``DROP_EMPTY``: also correct, but drops empty lists (``params: []`` -> absent) and
  writes its stash JSON with other spacing: a real server cannot tell the difference.
* ``UNSTASHED``: leaves v1's ``note`` in the v1beta1 object instead of stashing it. As
  plain dicts it round-trips; on a server v1beta1's schema prunes it.
* ``UID_CHANGER``: mints a new ``metadata.uid``, which the API server refuses.
* ``FINALIZER_STASH``: hides ``note`` in ``metadata.finalizers``, which the server puts back.
* ``CONVERSION_DATA``: correct and lossless in Cluster API's style: every older version
  carries the whole hub spec in one :data:`DATA` annotation (``MarshalData``), read back
  on the way to the hub (``UnmarshalData``), which keeps it as Go's shallow ObjectMeta
  copy does (``sigs.k8s.io/cluster-api/util/conversion/conversion.go``; its
  ``FuzzTestFunc`` deletes the annotation from both sides before comparing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compatfuzz.roundtrip import API

CRD = Path(__file__).parent / "data" / "gadgets.yaml"
GROUP = "example.com"
PARAMS = "example.com/params"
NOTE = "example.com/note"
DATA = "example.com/conversion-data"


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    return meta.setdefault("annotations", {})  # type: ignore[no-any-return]


def _tidy(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("annotations") == {}:
        del meta["annotations"]
    if meta == {}:
        del obj["metadata"]
    return obj


def to_hub(obj: dict[str, Any], *, compact: bool = False) -> dict[str, Any]:
    """Any version -> v1."""
    version = obj["apiVersion"].split("/")[1]
    out = json.loads(json.dumps(obj))
    out["apiVersion"] = f"{GROUP}/v1"
    annotations = _annotations(out)
    if PARAMS in annotations or NOTE in annotations or "param" in out.get("spec", {}):
        out.setdefault("spec", {})
    spec = out.get("spec", {})
    if version == "v1alpha1":
        stash = annotations.pop(PARAMS, None)
        param = spec.pop("param", None)
        if stash is not None:
            spec["params"] = json.loads(stash)
        elif param is not None:
            spec["params"] = [param]
    if version in ("v1alpha1", "v1beta1") and NOTE in annotations:
        spec["note"] = annotations.pop(NOTE)
    return _tidy(out)


def from_hub(hub: dict[str, Any], version: str, *, compact: bool = False,
             stash_note: bool = True) -> dict[str, Any]:
    """v1 -> ``version``."""
    out = json.loads(json.dumps(hub))
    out["apiVersion"] = f"{GROUP}/{version}"
    spec = out.get("spec", {})
    if version == "v1":
        return out
    annotations = _annotations(out)
    if "note" in spec and stash_note:
        annotations[NOTE] = spec.pop("note")
    if version == "v1alpha1":
        params = spec.pop("params", None)
        if params is not None:
            if len(params) == 1:
                spec["param"] = params[0]
            else:
                if params:
                    spec["param"] = params[0]
                annotations[PARAMS] = json.dumps(
                    params, separators=(",", ":") if compact else (", ", ": "))
    return _tidy(out)


def _drop_empty(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for key in [k for k, v in spec.items() if v == []]:
            del spec[key]
    return obj


def to_hub_data(obj: dict[str, Any]) -> dict[str, Any]:
    """Any version -> v1, restoring from :data:`DATA` what the version cannot hold; the
    annotation stays on the hub."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    data = annotations.get(DATA)
    out = to_hub(obj)
    if obj["apiVersion"].endswith("/v1") or not isinstance(data, str):
        return out
    restored = json.loads(data)
    spec = out.get("spec") or {}
    if "note" in restored:
        spec["note"] = restored["note"]
    params = restored.get("params")
    if isinstance(params, list) and spec.get("params", [])[:1] == params[:1]:
        spec["params"] = params  # only the first fits in v1alpha1: the rest comes back
    if spec:
        out["spec"] = spec
    out.setdefault("metadata", {}).setdefault("annotations", {})[DATA] = data
    return out


def from_hub_data(hub: dict[str, Any], version: str) -> dict[str, Any]:
    """v1 -> ``version``, the whole hub spec kept in :data:`DATA`."""
    clean = json.loads(json.dumps(hub))
    notes = (clean.get("metadata") or {}).get("annotations") or {}
    notes.pop(DATA, None)
    out = from_hub(_tidy(clean), version, stash_note=False)
    if version == "v1":
        return out
    spec = out.get("spec", {})
    spec.pop("note", None)
    annotations = _annotations(out)
    annotations.pop(PARAMS, None)
    annotations[DATA] = json.dumps(hub.get("spec", {}), sort_keys=True)
    return out


def api(kind: str = "correct", **options: Any) -> API:
    """The Gadget API with one of the converters described in the module docstring."""
    if kind == "correct":
        return API.from_crd("gadgets", CRD, to_hub=to_hub, from_hub=from_hub, **options)
    if kind == "drop-empty":
        return API.from_crd(
            "gadgets", CRD,
            to_hub=lambda o: _drop_empty(to_hub(o)),
            from_hub=lambda h, v: _drop_empty(from_hub(h, v, compact=True)), **options)
    if kind == "unstashed":
        return API.from_crd("gadgets", CRD, to_hub=to_hub,
                            from_hub=lambda h, v: from_hub(h, v, stash_note=v == "v1alpha1"),
                            **options)
    if kind == "uid-changer":
        def new_uid(h: dict[str, Any], v: str) -> dict[str, Any]:
            out = from_hub(h, v)
            out.setdefault("metadata", {})["uid"] = "00000000-0000-4000-8000-000000000bad"
            return out
        return API.from_crd("gadgets", CRD, to_hub=to_hub, from_hub=new_uid, **options)
    if kind == "conversion-data":
        return API.from_crd("gadgets", CRD, to_hub=to_hub_data, from_hub=from_hub_data,
                            **options)
    if kind == "finalizer-stash":
        def hide(h: dict[str, Any], v: str) -> dict[str, Any]:
            out = from_hub(h, v, stash_note=False)
            note = out.get("spec", {}).pop("note", None)
            if note is not None and v != "v1":
                out.setdefault("metadata", {})["finalizers"] = [f"note/{note}"]
            return out

        def unhide(o: dict[str, Any]) -> dict[str, Any]:
            out = to_hub(o)
            meta = out.get("metadata") or {}
            for f in meta.get("finalizers") or ():
                if f.startswith("note/"):
                    out.setdefault("spec", {})["note"] = f[5:]
            return out
        return API.from_crd("gadgets", CRD, to_hub=unhide, from_hub=hide, **options)
    raise ValueError(kind)
