"""The round-trip properties through a real kube-apiserver (issue 18).

An API's ``apiserver`` mode says who judges its round trips: ``"model"`` (the default,
``compatfuzz.apiserver.APIServer``), ``"real"`` (a kube-apiserver and etcd started for
the run, ``compatfuzz.apiserver._real``) or ``"both"`` (each example through both, every
step's answers compared: the end-to-end check of the model).

:func:`serving` starts one control plane for a run and installs each such API's CRDs on
it, their ``conversion.strategy: Webhook`` pointing at compatfuzz's own webhook (which
serves the API's Python converter) or at the user's (``webhook = URL``). The process
that checks examples (a unit's worker, forked after the install) serves the webhook
itself on the run's fixed port: a converter's crash stays its unit's, as in model mode.
:class:`RealBackend` then checks, as a client of the server would:

* ``roundtrip[A->B]``: create in A, get in B, update in B unchanged (a
  read-modify-write), get in A; what A's client wrote is what it was given back on
  create and what it reads at the end, compared with the model's semantic equality;
* ``valid[A->B]``: created in A and read in B, the object is created again in B under
  a new name: B's full validation (no ratcheting on create) must take it;
* ``path_independent[A,B,C]``: two copies created in A; one read and updated by a B
  client; both read and updated unchanged by a C client, then compared as stored.

A failure shows the server's answer: a 422 with its field errors, or a conversion error
with the converter's own message.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._real._backend import RealKind, comparable, crd_document, install
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint, StartError
from compatfuzz.apiserver._real._webhook import ConversionWebhook, listen, webhook_url
from compatfuzz.errors import (
    CompatfuzzError,
    ConverterError,
    Disagreement,
    ExampleRejected,
    InternalError,
    InvalidArgument,
    NotEquivalent,
)
from compatfuzz.roundtrip._deadline import ExampleDeadline, where
from compatfuzz.roundtrip._events import Property, Unit
from compatfuzz.roundtrip._model import API, Kind
from compatfuzz.roundtrip._suite import Suite

__all__ = ["MODES", "REAL_PROPERTIES", "RealBackend", "RunServer", "ServerUnavailable", "attach",
           "backend_for", "serving", "set_mode"]

MODES = ("model", "real", "both")
#: the properties a real server judges; the others never involve the server
REAL_PROPERTIES = (Property.ROUNDTRIP, Property.VALID, Property.PATH_INDEPENDENT)


class ServerUnavailable(CompatfuzzError):
    """The control plane cannot be talked to (not started here, or gone): a setup error
    that ends the unit as an error, since no object is to blame."""

    setup_error = True


# -- one control plane per run -------------------------------------------------------

#: ``listener``: the webhook's socket, bound by the process that started the control plane
#: and inherited by its forks, which serve it one at a time (``_webhook.listen``)
_state: dict[str, Any] = {"endpoint": None, "pid": 0, "webhook": None, "backends": {},
                          "listener": None}


def attach(endpoint: Endpoint | None) -> None:
    """Make ``endpoint`` the control plane this process (and its forks) checks against."""
    close_backends()
    _state["endpoint"] = endpoint


def close_backends() -> None:
    """Close this process's backends and webhook (never a parent's, after a fork)."""
    if _state["pid"] == os.getpid():
        for backend in _state["backends"].values():
            backend.client.close()
        if _state["webhook"] is not None:
            _state["webhook"].close()
    _state.update(pid=os.getpid(), webhook=None, backends={})


def backend_for(api: API) -> RealBackend:
    """This process's backend for ``api`` (created on first use, after a fork too)."""
    endpoint: Endpoint | None = _state["endpoint"]
    if endpoint is None:
        raise ServerUnavailable(
            f"API {api.name!r} asks for apiserver = {api.apiserver!r}, but no kube-apiserver "
            "runs for this process: run it with 'compatfuzz fuzz' or the pytest plugin, "
            "or in Python inside 'with compatfuzz.roundtrip.serving(apis):'")
    if _state["pid"] != os.getpid():  # a fork: the parent's sockets are not ours
        _state.update(pid=os.getpid(), webhook=None, backends={})
    backend: RealBackend | None = _state["backends"].get(id(api))
    if backend is None:
        if _state["webhook"] is None and user_webhook(api) is None:
            _state["webhook"] = ConversionWebhook(endpoint.webhook_port, endpoint.webhook_cert,
                                                  endpoint.webhook_key, {},
                                                  listener=_state["listener"])
        backend = RealBackend(api, endpoint, install=False, webhook=_state["webhook"])
        _state["backends"][id(api)] = backend
    else:
        backend.serve()  # two APIs of one CRD (two configs): this one's converter now
    return backend


def set_mode(apis: Sequence[API | Suite], mode: str | None) -> list[API]:
    """Apply ``--apiserver MODE`` (``None``: each API's own) and return the APIs that
    need a real server. Only CRDs judged by the API-server pipeline can go through one;
    a flag given for a whole run leaves the others in model mode."""
    if mode is not None and mode not in MODES:
        raise InvalidArgument(f"--apiserver must be one of {', '.join(MODES)}, got {mode!r}")
    needed = []
    for api in apis:
        if not isinstance(api, API):
            continue
        if mode is not None:
            api.apiserver = mode if real_capable(api) or mode == "model" else "model"
        if api.apiserver != "model":
            needed.append(api)
    return needed


def real_capable(api: API) -> bool:
    """Whether a kube-apiserver can serve ``api``: CRDs under the API-server pipeline."""
    return api.pipeline == "apiserver" and all(
        "plural" in s.meta for k in api.kinds for s in k.versions.values())


class RunServer:
    """One control plane for a run (or a pytest session), started on first need; each
    API's CRDs installed once, before the processes that check examples fork."""

    def __init__(self, *, assets_dir: str | Path | None = None, start_timeout: float = 90.0,
                 on_start: Callable[[str], None] | None = None) -> None:
        self.assets_dir = assets_dir
        self.start_timeout = start_timeout
        self.on_start = on_start
        self.endpoint: Endpoint | None = None
        self._plane: Any = None
        self._installed: set[int] = set()

    def ensure(self, api: API) -> Endpoint:
        """Start the control plane if need be, install ``api``'s CRDs if not yet.

        Raises:
            MissingAssets: no kube-apiserver/etcd binaries (says how to get them).
            StartError: the control plane did not start (with the tail of its log).
            CRDRefused: the server refused a CRD (its message, e.g. a non-structural
                schema).
        """
        if self.endpoint is None:
            from compatfuzz.apiserver._real._assets import find_assets
            from compatfuzz.apiserver._real._process import ControlPlane

            assets = find_assets(
                folder=None if self.assets_dir is None else str(self.assets_dir))
            plane = ControlPlane(assets, start_timeout=self.start_timeout)
            self.endpoint = plane.start()
            self._plane = plane
            try:
                _state["listener"] = listen(self.endpoint.webhook_port)
            except OSError as exc:  # taken since it was picked: say so, stop what started
                self.stop()
                raise StartError(str(exc)) from None
            if self.on_start is not None:
                swept = (f"; removed {len(plane.swept)} control-plane folder"
                         f"{'s' if len(plane.swept) != 1 else ''} that killed runs left in "
                         f"{plane.swept[0].parent}" if plane.swept else "")
                self.on_start(f"kube-apiserver and etcd started at {self.endpoint.url}{swept}")
        if id(api) not in self._installed:
            client = Client(self.endpoint)
            try:
                install_api(client, api, self.endpoint)
            finally:
                client.close()
            self._installed.add(id(api))
        attach(self.endpoint)
        return self.endpoint

    def stop(self) -> None:
        """Stop kube-apiserver and etcd and remove their files (idempotent)."""
        attach(None)
        listener, _state["listener"] = _state["listener"], None
        if listener is not None:
            listener.close()
        plane, self._plane, self.endpoint = self._plane, None, None
        if plane is not None:
            plane.stop()


@contextlib.contextmanager
def serving(apis: Sequence[API | Suite], *, mode: str | None = None,
            assets_dir: str | Path | None = None, start_timeout: float = 90.0,
            on_start: Callable[[str], None] | None = None) -> Iterator[Endpoint | None]:
    """Start kube-apiserver and etcd for ``apis`` that ask for one (``mode`` overrides
    each API's ``apiserver``), install their CRDs, and stop both (and remove their files)
    on the way out, however it is left. Yields the endpoint, or ``None`` when every API
    stays in model mode.

    Raises:
        MissingAssets, StartError, CRDRefused: as :meth:`RunServer.ensure`.
    """
    needed = set_mode(apis, mode)
    if not needed:
        yield None
        return
    server = RunServer(assets_dir=assets_dir, start_timeout=start_timeout, on_start=on_start)
    try:
        for api in needed:
            server.ensure(api)
        yield server.endpoint
    finally:
        server.stop()


# -- the CRDs and the webhook ----------------------------------------------------------

def _crd_name(kind: Kind) -> str:
    return str(next(iter(kind.versions.values())).meta["crd"])


def user_webhook(api: API) -> tuple[str, bytes | None] | None:
    """``(url, CA bundle)`` when ``api`` converts through the user's own conversion
    webhook (``webhook = URL``): the CRD then points at it, as in the user's cluster."""
    convert = api.converter_function()
    url = getattr(convert, "webhook_url", None)
    if not isinstance(url, str):
        return None
    if getattr(convert, "webhook_insecure", False):
        raise InvalidArgument(
            f"API {api.name!r}: webhook_insecure cannot go through a real API server, which "
            "always checks the webhook's certificate; give webhook_ca (the CA that signed "
            "it), as the CRD's caBundle would")
    ca = getattr(convert, "webhook_ca", None)
    bundle = Path(ca).read_bytes() if ca is not None else None
    return url, bundle


def install_api(client: Client, api: API, endpoint: Endpoint) -> None:
    """Install ``api``'s CRDs with a Webhook conversion (ours or the user's)."""
    if not real_capable(api):
        raise InvalidArgument(
            f"API {api.name!r}: a real API server judges CRDs only (crd = ..., pipeline "
            "'apiserver'); set apiserver = \"model\" for this API")
    user = user_webhook(api)
    with open(endpoint.ca, "rb") as f:
        ours = f.read()
    for kind in api.kinds:
        first = next(iter(kind.versions.values()))
        plural, scope = str(first.meta["plural"]), str(first.meta.get("scope", "Namespaced"))
        url, bundle = user if user is not None else (
            webhook_url(endpoint.webhook_port, _crd_name(kind)), ours)
        install(client, crd_document(
            group=kind.group, kind=kind.name, plural=plural, scope=scope,
            versions={v: s.meta["openapi"] for v, s in kind.versions.items()},
            storage=api.server(kind).storage, webhook_url=url, ca_bundle=bundle),
            source=str(first.source))


class RealBackend:
    """An API's kinds on a running control plane, converted by compatfuzz's webhook
    (``webhook``, shared by every API of the process) or by the user's."""

    def __init__(self, api: API, endpoint: Endpoint, *, install: bool = True,
                 webhook: ConversionWebhook | None = None) -> None:
        if not real_capable(api):
            raise InvalidArgument(
                f"API {api.name!r}: the real API server judges CRDs only (pipeline "
                "'apiserver'); this API compares plain dicts")
        self.api = api
        self.client = Client(endpoint)
        self._own_webhook = False
        self._example_started = 0.0  # time.monotonic() when the running check began
        ours = user_webhook(api) is None  # else the server calls the user's webhook
        if ours and webhook is None:
            webhook = ConversionWebhook(endpoint.webhook_port, endpoint.webhook_cert,
                                        endpoint.webhook_key, {},
                                        listener=_state["listener"])
            self._own_webhook = True
        self.webhook = webhook if ours else None
        self.serve()
        if install:
            try:
                install_api(self.client, api, endpoint)
            except BaseException:
                self.close()  # a webhook left listening would answer the next backend's
                raise
        self._kinds: dict[str, RealKind] = {}
        for kind in api.kinds:
            first = next(iter(kind.versions.values()))
            self._kinds[kind.name] = RealKind(
                self.client, group=kind.group, plural=str(first.meta["plural"]),
                namespaced=first.meta.get("scope", "Namespaced") == "Namespaced",
                storage=api.server(kind).storage)

    def serve(self) -> None:
        """Make the webhook convert this API's CRDs with this API's converter."""
        if self.webhook is not None:
            for kind in self.api.kinds:
                self.webhook.converters[_crd_name(kind)] = self._converter(kind)

    def _converter(self, kind: Kind) -> Any:
        def convert(obj: dict[str, Any], a: str, b: str) -> Any:
            return self.api.convert(kind, obj, a, b)
        return convert

    def close(self) -> None:
        if self._own_webhook and self.webhook is not None:
            self.webhook.close()
        self.client.close()

    def _fault(self, kind: Kind, exc: ServerError, step: str) -> BaseException:
        """A conversion error with the converter's own exception, else the server's; a
        converter call that outlived the server's timeout stops the unit (each shrink
        step would wait out the server's timeout again)."""
        hung = (self.webhook.hung(_crd_name(kind), since=self._example_started)
                if self.webhook is not None else None)
        if hung is not None:
            frame = hung.frame()
            stuck = (f"; it is stuck in {where(frame)}" if frame is not None else
                     f"; it returned {time.monotonic() - hung.started:.0f}s after the call")
            del frame
            stop = ExampleDeadline()
            stop.reason = (
                f"{self.api.name}: {step}: the converter did not answer the API server "
                f"within the {hung.due - hung.started:g}s the server waits for a "
                f"conversion webhook{stuck}; a converter that sleeps, loops or waits "
                f"fails the property (shrinking stopped: the counterexample is not "
                f"minimal)\n  ({exc.describe()})")
            return stop
        if _too_large(exc):
            return ConverterError(
                f"{self.api.name}: {step}: the object is too large for the API server once "
                f"converted: {exc.describe()}\n  (etcd stores at most 1.5 MiB an object, "
                "its --max-request-bytes; kube-apiserver sends it at most 2 MiB and takes at "
                "most 3 MiB a request; the object as written was under "
                f"{STORABLE_BYTES // 1024} KiB, so the conversion made it larger)")
        converter = (self.webhook.errors.pop(_crd_name(kind), None)
                     if self.webhook is not None else None)
        if converter is not None:
            err = ConverterError(f"{self.api.name}: {step}: the conversion webhook failed: "
                                 f"{converter}\n  ({exc.describe()})")
            err.__cause__ = converter
            from compatfuzz.roundtrip._usercode import find_user_traceback

            err.user_traceback = find_user_traceback(converter)  # the user's frames
            return err
        return ConverterError(f"{self.api.name}: {step}: {exc.describe()}")

    # -- the properties --------------------------------------------------------------

    def check(self, unit: Unit, obj: Any, *, both: bool = False) -> None:
        """Check ``unit``'s property on ``obj`` through the server; with ``both``, also
        through the model, step by step, raising :class:`Disagreement` where they part."""
        kind = self.api.kind(unit.kind)
        size = len(json.dumps(obj, separators=(",", ":")).encode())
        if size > STORABLE_BYTES:
            raise ExampleRejected(f"{size} bytes: more than etcd stores")
        real = self._kinds[kind.name]
        real.sweep()  # between examples: none of the objects swept is in use
        model = self.api.server(kind) if both else None
        self._example_started = time.monotonic()  # the webhook calls that are its own
        steps = _Steps(self, kind, model, unit.versions[0])
        try:
            self._check(unit, obj, kind, real, steps)
        except ExampleDeadline as exc:
            # the example waited on the server, which waited on a converter: name the
            # converter's frame, not the socket read this thread was in
            calls = self.webhook.inflight() if self.webhook is not None else []
            if calls and exc.where is None:
                frame = calls[0].frame()
                if frame is not None:
                    exc.where = (f"{where(frame)}, in the converter the API server called "
                                 "through compatfuzz's conversion webhook")
                del frame
            raise
        except OSError as exc:  # refused, reset: the server is gone, no object is to blame
            raise ServerUnavailable(
                f"{self.api.name}: the kube-apiserver at {self.client.endpoint.url} cannot "
                f"be reached during '{steps.current}' ({type(exc).__name__}: {exc})") from exc
        steps.finish()

    def _check(self, unit: Unit, obj: Any, kind: Kind, real: RealKind,
               steps: _Steps) -> None:
        from compatfuzz.roundtrip._properties import _expect_equal

        model = self.api.server(kind)
        vs = unit.versions
        a = vs[0]
        name = real.new_name()
        sent = real.prepare(obj, name)
        created = steps.create(real, sent, a)
        if unit.property is Property.VALID:
            b = vs[1]
            seen = steps.get(real, name, b)
            again = real.new_name()
            resent = real.prepare(seen, again)
            try:
                steps.run(f"create in {b} (what a {b} client read, under a new name)",
                          lambda: real.create(resent, b),
                          lambda m: _validated(m, resent, b))
            except ServerError as exc:
                if exc.code != 422:
                    raise self._fault(kind, exc, steps.current) from None
                lines = "\n".join(f"  {c}" for c in exc.causes) or f"  {exc.message}"
                raise NotEquivalent(
                    f"written as {a}, read as {b}: the real API server refuses it on "
                    f"create in {b} ({exc.code} {exc.reason}):\n{lines}") from None
            return
        if unit.property is Property.PATH_INDEPENDENT:
            b, c = vs[1], vs[2]
            twin = real.new_name()
            steps.create(real, real.prepare(obj, twin), a, twin=True)
            seen = steps.get(real, name, b)
            steps.update(real, seen, b)
            via = steps.get(real, name, c)
            direct = steps.get(real, twin, c, twin=True)
            steps.update(real, via, c)
            steps.update(real, direct, c, twin=True)
            s = real.storage
            via_s = steps.get(real, name, s)
            direct_s = steps.get(real, twin, s, twin=True)
            _expect_equal(comparable(direct_s), comparable(via_s), kind, s,
                          f"through the real API server: read as {c} after a {b} client "
                          f"updated it differs from read as {c} directly, as stored in {s} "
                          "(the storage version)", api=self.api)
            return
        b = vs[1]
        seen = steps.get(real, name, b)
        steps.update(real, seen, b)
        back = steps.get(real, name, a)
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


#: the largest object (compact JSON) tried through the server: etcd refuses a request
#: over 1.5 MiB (its ``--max-request-bytes`` default, ``server/embed/config.go``
#: ``DefaultMaxRequestBytes``), and the stored object carries metadata besides; a drawn
#: object above this is discarded (no cluster could hold it), not failed
STORABLE_BYTES = 1536 * 1024 - 64 * 1024


def _too_large(exc: BaseException) -> bool:
    """Whether the server refused a request for its size: its own 3 MiB limit (413), etcd's
    1.5 MiB (``etcdserver: request is too large``) or its gRPC client's 2 MiB."""
    if not isinstance(exc, ServerError):
        return False
    text = exc.describe()
    return exc.code == 413 or "request is too large" in text or (
        "ResourceExhausted" in text and "larger than max" in text)


class _Steps:
    """The requests of one example, each beside the model's answer when ``model`` is
    given (``--apiserver both``): the model follows the same objects (its own stored
    copies), so the first step where the two answer differently is the one reported."""

    def __init__(self, backend: RealBackend, kind: Kind, model: Any, origin: str) -> None:
        self.backend = backend
        self.origin = origin  # the version the example was written in
        self.kind = kind
        self.model = model
        self.current = ""
        self.stored: dict[bool, Any] = {}  # the model's stored object (and its twin's)

    def run(self, step: str, real: Callable[[], Any],
            modelled: Callable[[Any], Any] | None = None) -> Any:
        """Do ``real``; with a model, do ``modelled(model)`` too and compare."""
        from compatfuzz.apiserver import Rejected

        self.current = step
        outcome: Any = None
        failure: BaseException | None = None
        try:
            outcome = real()
        except ServerError as exc:
            failure = exc
        if self.model is None or modelled is None or (failure is not None
                                                      and _too_large(failure)):
            if failure is not None:  # the model has no size limit: the server's words
                raise failure
            return outcome
        try:
            expected = modelled(self.model)
            refused = None
        except (Rejected, ConverterError, NotEquivalent) as exc:
            expected, refused = None, exc
        if failure is not None and refused is not None:
            raise failure  # both refuse: the server's words (and the converter's)
        if failure is not None or refused is not None:
            said = (f"the server refused it ({failure})" if failure is not None
                    else "the server accepted it")
            thought = (f"the model refused it ({refused})" if refused is not None
                       else "the model accepted it")
            raise Disagreement(
                f"{self.backend.api.name}: the API-server model and the real kube-apiserver "
                f"disagree at '{step}': {said}, but {thought}. This is a compatfuzz model "
                "bug (or a Kubernetes version the model does not follow), not your "
                "converter's: please report it with this example",
                step=step, model=None if refused else expected,
                server=None if failure else outcome)
        if isinstance(expected, dict) and isinstance(outcome, dict):
            self._compare(step, expected, outcome)
        return outcome

    def _compare(self, step: str, expected: dict[str, Any], outcome: dict[str, Any]) -> None:
        from compatfuzz.roundtrip._properties import _expect_equal

        mine, theirs = comparable(expected), comparable(outcome)
        version = str(outcome.get("apiVersion", "")).rsplit("/", 1)[-1]
        try:
            _expect_equal(mine, theirs, self.kind, version,
                          "model vs server", api=self.backend.api)
        except NotEquivalent as exc:
            raise Disagreement(
                f"{self.backend.api.name}: the API-server model and the real kube-apiserver "
                f"answer '{step}' differently (model -> server below). This is a compatfuzz "
                "model bug (or a Kubernetes version the model does not follow), not your "
                f"converter's: please report it with this example\n{exc}",
                exc.diff, step=step, model=mine, server=theirs) from None

    # each step, for the server and, when comparing, for the model

    def create(self, real: RealKind, sent: dict[str, Any], version: str, *,
               twin: bool = False) -> Any:
        def modelled(m: Any) -> Any:
            self.stored[twin] = m.write(sent, version)
            return m.read(self.stored[twin], version)
        try:
            return self.run(f"create in {version}", lambda: real.create(sent, version),
                            modelled)
        except ServerError as exc:
            if exc.code == 422 and not self._converter_failed():
                raise InternalError(
                    f"{self.backend.api.name}: compatfuzz generated a {self.kind.name} "
                    f"{version} object that the real API server refuses on create: "
                    f"{exc.describe()}\n  This is a compatfuzz bug (its generator and the "
                    "server disagree), not your converter's: please report it") from None
            raise self.backend._fault(self.kind, exc, self.current) from None

    def get(self, real: RealKind, name: str, version: str, *, twin: bool = False) -> Any:
        try:
            return self.run(f"get in {version}", lambda: real.get(name, version),
                            lambda m: m.read(self.stored[twin], version))
        except ServerError as exc:
            raise self.backend._fault(self.kind, exc, self.current) from None

    def update(self, real: RealKind, seen: dict[str, Any], version: str, *,
               twin: bool = False) -> Any:
        from compatfuzz.roundtrip._properties import refused_update

        def modelled(m: Any) -> Any:
            refused_update(m, _plain(seen), self.origin, version)
            self.stored[twin] = m.write(_plain(seen), version)
            return m.read(self.stored[twin], version)
        try:
            return self.run(f"update in {version} (unchanged)",
                            lambda: real.update(seen, version), modelled)
        except ServerError as exc:
            if exc.code == 422 and not self._converter_failed():
                lines = "\n".join(f"  {c}" for c in exc.causes) or f"  {exc.message}"
                raise NotEquivalent(
                    f"written as {self.origin}, read as {version}: a {version} client "
                    f"cannot write it back unchanged: the real API server refuses the "
                    f"update ({exc.code} {exc.reason}):\n{lines}") from None
            raise self.backend._fault(self.kind, exc, self.current) from None

    def _converter_failed(self) -> bool:
        webhook = self.backend.webhook
        return webhook is not None and webhook.errors.get(_crd_name(self.kind)) is not None

    def finish(self) -> None:
        self.current = "done"


def _validated(model: Any, obj: dict[str, Any], version: str) -> None:
    """The model's create in ``version``: decoded, then fully validated (no ratcheting);
    only whether it is taken is compared, as ``valid`` judges only that."""
    from compatfuzz.roundtrip._accept import accepted_errors

    errors = accepted_errors(model.validate(model.accept(obj, version), version))
    if errors:
        raise NotEquivalent("; ".join(errors))


def _plain(obj: dict[str, Any]) -> dict[str, Any]:
    """What the model takes from a server's answer: the object without server fields."""
    out: dict[str, Any] = comparable(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        out = {**out, "metadata": {**(out.get("metadata") or {}),
                                   **{k: meta[k] for k in ("name", "namespace") if k in meta}}}
    return out
