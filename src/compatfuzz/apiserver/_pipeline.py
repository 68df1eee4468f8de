"""A model of what the API server does to a custom resource on its way in and out.

Every property of ``compatfuzz.roundtrip`` moves objects through this one model (when the
API is judged as a Kubernetes API), so their verdicts agree with a real server: a field
the server prunes is lost, a default the server applies is there, a conversion response
the server refuses fails the request. The steps and their order follow
apiextensions-apiserver ``pkg/apiserver/customresource_handler.go``:

* **a client writes** in version A (request decoding, ``schemaCoercingDecoder`` +
  ``unstructuredDefaulter``): prune unknown fields by A's structural schema, drop
  non-nullable nulls, decode ObjectMeta, apply A's defaults. The server then fills the
  system fields (``metadata.uid``, ``metadata.creationTimestamp``).
* **the server stores** it in the storage version S (``versioning`` codec +
  ``schemaCoercingConverter``): the converter A -> S, the conversion-response rules
  (``conversion/webhook_converter.go``), then prune, null-drop and ObjectMeta decoding
  by S's schema. Nothing is defaulted on the way into storage.
* **a client reads** in version B (storage decoding): prune and decode by S, apply S's
  defaults (defaults run when reading from storage, not after conversion), the converter
  S -> B with the same response rules, then prune and decode by B's schema.

When A == S (or S == B) no converter is called, as the server short-circuits a conversion
to the same version. Each step records what it removed, defaulted or undid as a
:class:`Step`, so a failed property can say which hop changed a value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from compatfuzz.apiserver._conversion import check_response
from compatfuzz.apiserver._default import default_node
from compatfuzz.apiserver._objectmeta import Rejected, coerce_node, object_meta
from compatfuzz.apiserver._prune import _Paths, prune_node, prune_nulls_node
from compatfuzz.apiserver._structural import structural
from compatfuzz.apiserver._structural_node import Node, _as_root, _copy
from compatfuzz.apiserver._validate import update_errors, validation_errors
from compatfuzz.schema import Schema

__all__ = ["APIServer", "Step", "decode"]

#: what the server sets when it creates an object (``rest.FillObjectMetaSystemFields``)
SYSTEM_UID = "6f0c3b7e-0000-4000-8000-c0a7f0220001"
SYSTEM_CREATED = "2026-01-01T00:00:00Z"

Convert = Callable[[dict[str, Any], str, str], Any]


@dataclass(frozen=True)
class Step:
    """One thing the server did to an object: ``what`` is ``pruned``, ``defaulted``,
    ``null-dropped``, ``metadata-dropped`` or ``restored``; ``when`` names the hop."""

    what: str
    path: str
    version: str
    when: str
    value: Any = None

    def describe(self) -> str:
        import json

        if self.what == "pruned":
            return (f"{self.path}: pruned {self.when} (not in {self.version}'s schema)")
        if self.what == "defaulted":
            return (f"{self.path}: defaulted to {json.dumps(self.value)} by {self.version}'s "
                    f"schema {self.when}")
        if self.what == "null-dropped":
            return (f"{self.path}: null dropped {self.when} (not nullable in "
                    f"{self.version}'s schema)")
        if self.what == "restored":
            return (f"{self.path}: changed by the converter {self.when}, put back by the API "
                    "server (a conversion may change only labels and annotations)")
        return f"{self.path}: dropped when ObjectMeta was decoded {self.when}"


class _Trace(list[Step]):
    pass


def _apply(obj: dict[str, Any], schema: Schema, version: str, when: str,
           trace: list[Step] | None, *, drop_invalid: bool) -> dict[str, Any]:
    """``unstructuredSchemaCoercer.apply``: prune, drop nulls, decode ObjectMeta."""
    node = structural(schema)
    for key in ("apiVersion", "kind"):  # read with unstructured.NestedString
        if key in obj and not isinstance(obj[key], str):
            raise Rejected(f"{key} is not a string (got {type(obj[key]).__name__})", key)
    api_version = obj.get("apiVersion")
    if isinstance(api_version, str) and api_version.count("/") > 1:
        raise Rejected(f"unexpected GroupVersion string: {api_version}", "apiVersion")
    had_meta = "metadata" in obj
    meta_before = obj.get("metadata")
    paths = _Paths() if trace is not None else None
    prune_node(obj, _as_root(node), paths)
    if trace is not None and paths is not None:
        trace.extend(Step("pruned", p, version, when) for p in sorted(paths.found))
    nulls: list[str] | None = [] if trace is not None else None
    prune_nulls_node(obj, node, nulls)
    if trace is not None and nulls:
        trace.extend(Step("null-dropped", p, version, when) for p in nulls)
    coerce_node(obj, node, drop_invalid=drop_invalid)
    if had_meta:  # read before pruning, written back after (SetObjectMeta)
        meta = object_meta(meta_before, drop_invalid=drop_invalid, root=True)
        if trace is not None and isinstance(meta_before, dict):
            trace.extend(Step("metadata-dropped", f"metadata.{k}", version, when)
                         for k in meta_before if k not in meta and meta_before[k] not in
                         ("", 0, None, [], {}))
        obj["metadata"] = meta
    _served_numbers(obj)
    return obj


def _served_numbers(value: Any) -> Any:
    """``value`` with each whole float below 1e21 as the int a client reads back.

    The server holds a JSON number as int64 or float64 and writes a float64 with
    encoding/json (``encode.go``, ``floatEncoder``): its shortest round-tripping digits,
    without exponent or point below 1e21. So ``2.0`` comes back as ``2`` and
    ``4.443663336611346e16`` as ``44436633366113460`` (not the float's exact value,
    ``...456``); Python's ``repr`` gives the same shortest digits. Found by the real
    server in ``x-kubernetes-preserve-unknown-fields`` values of Tekton's Task.
    """
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return int(Decimal(repr(value)))
        return value
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, float | dict | list):
                value[k] = _served_numbers(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, float | dict | list):
                value[i] = _served_numbers(v)
    return value


def _default(obj: dict[str, Any], schema: Schema, version: str, when: str,
             trace: list[Step] | None) -> dict[str, Any]:
    applied: list[str] | None = [] if trace is not None else None
    default_node(obj, structural(schema), "", applied)
    _served_numbers(obj)  # a default is JSON the server decoded too
    if trace is not None and applied:
        for p in applied:
            trace.append(Step("defaulted", p, version, when, _value_at(obj, p)))
    return obj


def _value_at(obj: Any, path: str) -> Any:
    import re

    for token in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if token.startswith("["):
            obj = obj[int(token[1:-1])] if isinstance(obj, list) else None
        else:
            obj = obj.get(token) if isinstance(obj, dict) else None
    return obj


def _forget_defaults(back: Any, written: Any, s: Node | None) -> None:
    if s is None or not isinstance(back, dict):
        return
    mine = written if isinstance(written, dict) else {}
    for k in list(back):
        prop = s.properties.get(k)
        if prop is None:
            continue
        if k not in mine:
            if prop.has_default and back[k] == prop.default:
                del back[k]
                continue
            if isinstance(back[k], dict) and back[k]:
                _forget_defaults(back[k], {}, prop)
                if not back[k]:
                    del back[k]
        elif isinstance(back[k], dict):
            _forget_defaults(back[k], mine[k], prop)
        elif (isinstance(back[k], list) and isinstance(mine[k], list)
              and len(back[k]) == len(mine[k])):
            for b, w in zip(back[k], mine[k], strict=True):
                _forget_defaults(b, w, prop.items)


def decode(obj: Any, schema: Schema | Mapping[str, Any]) -> Any:
    """Return a request body as the API server holds it after decoding and defaulting.

    The steps of ``unstructuredSchemaCoercer.apply`` (prune at the root, drop non-nullable
    nulls, decode embedded and root ObjectMeta) and then ``unstructuredDefaulter``.

    Raises:
        Rejected: the metadata is malformed, so the server refuses the request.
    """
    if not isinstance(schema, Schema):
        schema = Schema(dict(schema), name="<openAPIV3Schema>", kubernetes=True,
                        meta={"openapi": schema})
    out = _copy(obj)
    if not isinstance(out, dict):
        return out
    _apply(out, schema, "", "", None, drop_invalid=False)
    return _default(out, schema, "", "", None)


class APIServer:
    """The API server's handling of one kind: its version schemas, storage version and
    the converter it calls (``convert(obj, from_version, to_version)``).

    Example::

        server = APIServer(schemas, storage="v1", convert=my_convert,
                           api_version=lambda v: f"example.com/{v}")
        written = server.accept(obj, "v1beta1")
        stored = server.store(written, "v1beta1")
        seen = server.read(stored, "v1alpha1")
    """

    def __init__(self, schemas: Mapping[str, Schema], *, storage: str, convert: Convert,
                 api_version: Callable[[str], str], typed: bool = True) -> None:
        self.schemas = dict(schemas)
        self.storage = storage
        self._convert = convert
        self._api_version = api_version
        self.typed = typed

    def accept(self, obj: dict[str, Any], version: str, trace: list[Step] | None = None,
               ) -> dict[str, Any]:
        """What the server holds after a client in ``version`` wrote ``obj``."""
        when = f"when the {version} client's request was decoded"
        out = _apply(_copy(obj), self.schemas[version], version, when, trace,
                     drop_invalid=False)
        out = _default(out, self.schemas[version], version, when, trace)
        if self.typed:
            meta = out.setdefault("metadata", {})
            if isinstance(meta, dict):
                meta["uid"] = SYSTEM_UID
                meta["creationTimestamp"] = SYSTEM_CREATED
        return out

    def _hop(self, obj: dict[str, Any], a: str, b: str, when: str,
             trace: list[Step] | None) -> dict[str, Any]:
        if a == b:
            return obj
        sent = _copy(obj)
        out = self._convert(sent, a, b)
        if not isinstance(out, dict):
            raise Rejected(f"the converter returned {type(out).__name__}, not an object")
        if not self.typed:
            copied: dict[str, Any] = _copy(out)
            return copied
        try:
            kept, restored = check_response(obj, out, self._api_version(b))
        except Rejected as exc:
            raise Rejected(f"the API server rejects the converter's {a} -> {b} response: "
                           f"{exc}") from None
        if trace is not None:
            trace.extend(Step("restored", f"metadata.{r.field}", b, when, r.new)
                         for r in restored)
        result: dict[str, Any] = _copy(kept)
        return result

    def store(self, obj: dict[str, Any], version: str, trace: list[Step] | None = None,
              ) -> dict[str, Any]:
        """The storage-version object the server writes for ``obj`` (of ``version``)."""
        s = self.storage
        when = f"when the {version} object was stored as {s}"
        out = self._hop(obj, version, s, f"converting {version} -> {s}", trace)
        return _apply(out, self.schemas[s], s, when, trace, drop_invalid=False)

    def read(self, stored: dict[str, Any], version: str, trace: list[Step] | None = None,
             ) -> dict[str, Any]:
        """What a client in ``version`` reads for the ``stored`` object."""
        s = self.storage
        when = f"when the stored {s} object was read"
        out = _apply(_copy(stored), self.schemas[s], s, when, trace, drop_invalid=True)
        out = _default(out, self.schemas[s], s, when, trace)
        if version == s:
            return out
        out = self._hop(out, s, version, f"converting {s} -> {version}", trace)
        when = f"when the converter's {version} output was decoded"
        return _apply(out, self.schemas[version], version, when, trace, drop_invalid=False)

    def write(self, obj: dict[str, Any], version: str, trace: list[Step] | None = None,
              ) -> dict[str, Any]:
        """``store(accept(obj))``: a client in ``version`` creates or updates ``obj``."""
        return self.store(self.accept(obj, version, trace), version, trace)

    def as_written(self, back: dict[str, Any], written: dict[str, Any], version: str
                   ) -> dict[str, Any]:
        """``back`` without what the client who wrote ``written`` cannot tell from it.

        Two additions are not a loss of information, so a round trip ignores them:

        * annotations the client did not write: converters stash what an older version
          cannot hold in annotations, and Cluster API's conversion fuzz tests likewise
          delete their ``conversion-data`` annotation before comparing
          (``util/conversion/conversion.go``, ``FuzzTestFunc``);
        * fields the client did not write whose value is what ``version``'s own schema
          defaults them to (and objects holding only such fields): a converter that
          materialises ``spec: {}`` lets the storage version's defaults fill it, and the
          client reads the values its own schema gives to absent fields. A default that
          ``version`` does not share is still reported.
        """
        out: dict[str, Any] = _copy(back)
        meta, wmeta = out.get("metadata"), written.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
            wanted = wmeta.get("annotations") if isinstance(wmeta, dict) else None
            wanted = wanted if isinstance(wanted, dict) else {}
            kept = {k: v for k, v in meta["annotations"].items() if k in wanted}
            if kept or "annotations" in (wmeta or {}):
                meta["annotations"] = kept
            else:
                del meta["annotations"]
        _forget_defaults(out, written, structural(self.schemas[version]))
        return out

    def validate(self, obj: Any, version: str, limit: int = 20) -> list[str]:
        """The reasons the server's validation of ``version`` rejects ``obj`` (empty: valid)."""
        return validation_errors(obj, self.schemas[version], limit)

    def update_errors(self, obj: Any, version: str, limit: int = 20) -> list[str]:
        """Why the server refuses a ``version`` client's unchanged update of ``obj``
        (decoded as that client's request is), under validation ratcheting."""
        return update_errors(self.accept(obj, version), self.schemas[version], limit,
                             old=_served_numbers(_copy(obj)))
