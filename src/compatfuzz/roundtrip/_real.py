"""The round-trip properties through a real kube-apiserver (issue 18).

:class:`RealBackend` serves an :class:`~compatfuzz.roundtrip.API`'s Python converter as
the CRD's conversion webhook (or points the CRD at the user's own webhook), installs
each kind's CRD on a running control plane (``compatfuzz.apiserver._real``), and checks:

* ``roundtrip[A->B]``: create in A, get in B, update in B unchanged (a
  read-modify-write), get in A; what A's client reads back is what it was given back
  on create, compared with the same semantic equality and failure form as the model;
* ``valid[A->B]``: created in A and read in B, the object is created again in B under
  a new name: the server's full validation of B (no ratcheting on create) must take it.

A failure shows the server's answer: a 422 with its field errors, or a conversion error
with the converter's own message.
"""

from __future__ import annotations

from typing import Any

from compatfuzz.apiserver._real._backend import RealKind, comparable, crd_document, install
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.apiserver._real._webhook import ConversionWebhook
from compatfuzz.errors import ConverterError, InternalError, InvalidArgument, NotEquivalent
from compatfuzz.roundtrip._events import Property, Unit
from compatfuzz.roundtrip._model import API, Kind

__all__ = ["RealBackend"]


class RealBackend:
    """An API's kinds on a running control plane, converted by compatfuzz's webhook."""

    def __init__(self, api: API, endpoint: Endpoint) -> None:
        if api.pipeline != "apiserver":
            raise InvalidArgument(
                f"API {api.name!r}: the real API server judges CRDs only (pipeline "
                "'apiserver'); this API compares plain dicts")
        self.api = api
        self.client = Client(endpoint)
        self._kinds: dict[str, RealKind] = {}
        converters = {}
        for kind in api.kinds:
            converters[self._crd(kind)] = self._converter(kind)
        self.webhook = ConversionWebhook(endpoint.webhook_port, endpoint.webhook_cert,
                                         endpoint.webhook_key, converters)
        with open(endpoint.ca, "rb") as f:
            bundle = f.read()
        for kind in api.kinds:
            first = next(iter(kind.versions.values()))
            plural, scope = str(first.meta["plural"]), str(first.meta.get("scope", "Namespaced"))
            storage = api.server(kind).storage
            install(self.client, crd_document(
                group=kind.group, kind=kind.name, plural=plural, scope=scope,
                versions={v: s.meta["openapi"] for v, s in kind.versions.items()},
                storage=storage, webhook_url=self.webhook.url(self._crd(kind)),
                ca_bundle=bundle), source=str(first.source))
            self._kinds[kind.name] = RealKind(
                self.client, group=kind.group, plural=plural,
                namespaced=scope == "Namespaced", storage=storage)

    @staticmethod
    def _crd(kind: Kind) -> str:
        return str(next(iter(kind.versions.values())).meta["crd"])

    def _converter(self, kind: Kind) -> Any:
        def convert(obj: dict[str, Any], a: str, b: str) -> Any:
            return self.api.convert(kind, obj, a, b)
        return convert

    def close(self) -> None:
        self.webhook.close()
        self.client.close()

    def _fault(self, kind: Kind, exc: ServerError, step: str) -> BaseException:
        """A conversion error with the converter's own exception, else the server's."""
        converter = self.webhook.errors.pop(self._crd(kind), None)
        if converter is not None:
            err = ConverterError(f"{self.api.name}: {step}: the conversion webhook failed: "
                                 f"{converter}\n  ({exc.describe()})")
            err.__cause__ = converter
            return err
        return ConverterError(f"{self.api.name}: {step}: {exc.describe()}")

    def check(self, unit: Unit, obj: Any) -> None:
        """Check ``roundtrip`` or ``valid`` for ``unit`` on ``obj`` through the server."""
        kind = self.api.kind(unit.kind)
        real = self._kinds[kind.name]
        model = self.api.server(kind)
        a, b = unit.versions[:2]
        name = real.new_name()
        sent = real.prepare(obj, name)
        step = f"create in {a}"
        try:
            try:
                created = real.create(sent, a)
            except ServerError as exc:
                if self.webhook.errors.get(self._crd(kind)) is None and exc.code == 422:
                    raise InternalError(
                        f"{self.api.name}: compatfuzz generated a {kind.name} {a} object "
                        f"that the real API server refuses on create: {exc.describe()}\n"
                        "  This is a compatfuzz bug (its generator and the server "
                        "disagree), not your converter's: please report it") from None
                raise
            step = f"get in {b}"
            seen = real.get(name, b)
            if unit.property is Property.VALID:
                step = f"create in {b} (what a {b} client read, under a new name)"
                again = real.new_name()
                try:
                    real.create(real.prepare(seen, again), b)
                except ServerError as exc:
                    if exc.code != 422:
                        raise
                    lines = "\n".join(f"  {c}" for c in exc.causes) or f"  {exc.message}"
                    raise NotEquivalent(
                        f"written as {a}, read as {b}: the real API server refuses it on "
                        f"create in {b} ({exc.code} {exc.reason}):\n{lines}") from None
                return
            step = f"update in {b} (unchanged)"
            real.update(seen, b)
            step = f"get in {a}"
            back = real.get(name, a)
        except ServerError as exc:
            raise self._fault(kind, exc, step) from None
        from compatfuzz.roundtrip._properties import _expect_equal

        # What the client wrote, as A's schema decodes it (pruned, defaulted: no
        # converter runs): the create response alone would hide a loss on the way into
        # storage, since it is read back through the same lossy conversion.
        written = model.accept(sent, a)
        expected = model.as_written(comparable(written), sent, a)
        for answer, when in ((created, f"the object the server gave back on create in {a}"),
                             (back, f"what it reads after a {b} client read and updated it")):
            _expect_equal(expected, model.as_written(comparable(answer), sent, a), kind, a,
                          f"through the real API server (stored as {real.storage}): what a "
                          f"{a} client wrote is not {when}", api=self.api)
