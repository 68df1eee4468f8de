"""The rules the API server applies to a conversion response before it uses the object.

Mirrors apiextensions-apiserver ``pkg/apiserver/conversion/webhook_converter.go``
(``Convert``, ``validateConvertedObject``, ``restoreObjectMeta``) and the label and
annotation checks it calls (apimachinery ``pkg/api/validate/content/kube.go``,
``pkg/api/validation/objectmeta.go``). A converter may change only ``labels`` and
``annotations`` in ``metadata``: a changed ``name``, ``namespace`` or ``uid`` (or a
different ``kind``/``apiVersion``) makes the server fail the request, and any other
metadata change is silently undone, so data a converter hides there is lost.
"""

from __future__ import annotations

import re
from typing import Any

from compatfuzz.apiserver._objectmeta import Rejected
from compatfuzz.apiserver._structural_node import _copy

__all__ = ["Restored", "check_response", "label_key_errors"]

_LABEL_KEY = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*\Z")
ANNOTATIONS_LIMIT = 256 * 1024


def label_key_errors(key: str) -> list[str]:
    """``IsLabelKey`` (``IsQualifiedName``): an optional DNS-subdomain prefix and a name."""
    parts = key.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a label key has at most one '/'"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix.encode()) > 253 or not _DNS_SUBDOMAIN.match(prefix):
            errs.append("prefix part must be a lowercase RFC 1123 subdomain")
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _LABEL_KEY.match(name):
        errs.append("name part must consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")
    return errs


def _label_value_errors(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE.match(value):
        errs.append("a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character")
    return errs


class Restored:
    """A metadata field the converter changed and the server put back (a silent loss)."""

    __slots__ = ("field", "new", "old")

    def __init__(self, field: str, old: Any, new: Any) -> None:
        self.field, self.old, self.new = field, old, new


def _meta_string(obj: dict[str, Any], key: str) -> str:
    meta = obj.get("metadata")
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else ""


def check_response(original: dict[str, Any], converted: dict[str, Any], want_api_version: str
                   ) -> tuple[dict[str, Any], list[Restored]]:
    """Return the object the server keeps from ``converted``, and what it undid.

    Raises:
        Rejected: the server fails the conversion (and so the request) on this response.
    """
    got = converted.get("apiVersion")
    if got != want_api_version:
        raise Rejected(f"invalid groupVersion (expected {want_api_version}, received {got})",
                       "apiVersion")
    if converted.get("kind") != original.get("kind"):
        raise Rejected(f"invalid kind (expected {original.get('kind')}, received "
                       f"{converted.get('kind')})", "kind")
    for key in ("name", "namespace", "uid"):
        a, b = _meta_string(original, key), _meta_string(converted, key)
        if a != b:
            raise Rejected(f"must have the same {key}: {a!r} != {b!r}", f"metadata.{key}")
    if "metadata" not in converted:
        raise Rejected("missing metadata in converted object", "metadata")
    response_meta = converted["metadata"]
    if not isinstance(response_meta, dict):
        raise Rejected(f"invalid metadata of type {type(response_meta).__name__} in converted "
                       "object", "metadata")
    original_meta = original.get("metadata")
    meta: dict[str, Any] = _copy(original_meta) if isinstance(original_meta, dict) else {}
    restored = [Restored(k, meta.get(k), response_meta.get(k))
                for k in sorted(set(response_meta) | set(meta))
                if k not in ("labels", "annotations") and response_meta.get(k) != meta.get(k)]
    for fld in ("labels", "annotations"):
        value = response_meta.get(fld)
        if value is None:
            meta.pop(fld, None)
            continue
        if not isinstance(value, dict):
            raise Rejected(f"invalid metadata.{fld} of type {type(value).__name__} in converted "
                           "object", f"metadata.{fld}")
        before = meta.get(fld) if isinstance(meta.get(fld), dict) else {}
        assert isinstance(before, dict)
        changed = len(before) != len(value)
        for k, v in value.items():
            if not isinstance(v, str):
                raise Rejected(f"metadata.{fld}[{k}] must be a string, but is "
                               f"{type(v).__name__} in converted object", f"metadata.{fld}")
            changed = changed or before.get(k) != v
        if changed:
            _validate(fld, value)
        meta[fld] = value
    out = dict(converted)
    out["metadata"] = meta
    return out, restored


def _validate(fld: str, values: dict[str, str]) -> None:
    errors = []
    if fld == "labels":
        for k, v in values.items():
            errors += [f"key {k!r}: {e}" for e in label_key_errors(k)]
            errors += [f"value {v!r}: {e}" for e in _label_value_errors(v)]
    else:
        for k in values:
            errors += [f"key {k!r}: {e}" for e in label_key_errors(k.lower())]
        size = sum(len(k.encode()) + len(v.encode()) for k, v in values.items())
        if size > ANNOTATIONS_LIMIT:
            errors.append(f"annotations size {size} is larger than limit {ANNOTATIONS_LIMIT}")
    if errors:
        raise Rejected("; ".join(errors[:3]), f"metadata.{fld}")
