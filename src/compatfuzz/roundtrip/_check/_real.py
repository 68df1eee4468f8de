"""The real kube-apiserver and etcd as a backend (``_backend``): one control plane a run.

An API's ``apiserver`` mode says who answers its properties' requests: ``"model"`` (the
default, ``compatfuzz.apiserver.APIServer``), ``"real"`` (a kube-apiserver and etcd
started for the run, ``compatfuzz.apiserver._real``) or ``"both"`` (each example through
both, every step's answers compared: the end-to-end check of the model, ``_both``).

:func:`serving` starts one control plane for a run and installs each such API's CRDs on
it, their ``conversion.strategy: Webhook`` pointing at compatfuzz's own webhook (which
serves the API's Python converter) or at the user's (``webhook = URL``). The process
that checks examples (a unit's worker, forked after the install) serves the webhook
itself on the run's fixed port: a converter's crash stays its unit's, as in model mode.
With several workers at once (:meth:`RunServer.route`) that port is the run's router's
(``_router``), and each worker serves its webhook on a Unix socket of its own, to which
the router hands the conversions of the objects that worker created.
:class:`RealBackend` answers the properties' requests (``_properties``: the same
sequence of creates, gets and updates as on the model) with HTTP requests to the server;
a failure shows the server's answer: a 422 with its field errors, or a conversion error
with the converter's own message.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._real._backend import RealKind, crd_document, install
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint, StartError
from compatfuzz.apiserver._real._router import ConversionRouter, socket_path
from compatfuzz.apiserver._real._webhook import (
    MAX_HANDLERS,
    ConversionWebhook,
    listen,
    webhook_url,
)
from compatfuzz.errors import (
    CompatfuzzError,
    ConverterError,
    ExampleRejected,
    InvalidArgument,
)
from compatfuzz.roundtrip._check._backend import Refused
from compatfuzz.roundtrip._check._model import API, Kind
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._deadline import ExampleDeadline, where
from compatfuzz.roundtrip._events import Unit

__all__ = ["MODES", "RealBackend", "RealSession", "RunServer",
           "ServerUnavailable", "TooLarge", "attach", "backend_for", "serving", "set_mode",
           "too_large"]

MODES = ("model", "real", "both")


class ServerUnavailable(CompatfuzzError):
    """The control plane cannot be talked to (not started here, or gone): a setup error
    that ends the unit as an error, since no object is to blame."""

    setup_error = True


# -- one control plane per run -------------------------------------------------------

#: ``listener``: the webhook's socket, bound by the process that started the control plane
#: and inherited by its forks, which serve it one at a time (``_webhook.listen``);
#: ``routes``: once the run routes conversions (:meth:`RunServer.route`), the folder of
#: the workers' sockets, and the router that serves the listener
_state: dict[str, Any] = {"endpoint": None, "pid": 0, "webhook": None, "backends": {},
                          "listener": None, "routes": None, "router": None}


def _webhook(endpoint: Endpoint) -> ConversionWebhook:
    """This process's webhook: on the run's port, or on its own socket for the router."""
    routes = _state["routes"]
    if routes is not None:
        return ConversionWebhook(0, "", "", {}, unix=socket_path(routes, os.getpid()))
    return ConversionWebhook(endpoint.webhook_port, endpoint.webhook_cert,
                             endpoint.webhook_key, {}, listener=_state["listener"])


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
            _state["webhook"] = _webhook(endpoint)
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
        self._routes_tmp: Path | None = None  # the sockets' folder when not in the plane's

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

    def route(self, workers: int) -> None:
        """Have each conversion served by the worker that created its objects, for
        ``workers`` processes checking examples at once: the run's port is served by a
        router (``_router``) and each process serves its webhook on a socket of its own.
        Call it after :meth:`ensure`, before the workers fork."""
        if _state["router"] is not None or self._plane is None or self.endpoint is None:
            return
        folder = self._plane.dir / "webhooks"
        if len(socket_path(folder, 4 * 10**9)) > 100:  # a Unix socket's path is short
            folder = Path(tempfile.mkdtemp(prefix="compatfuzz-webhooks-"))
            self._routes_tmp = folder
        folder.mkdir(mode=0o700, exist_ok=True)
        listener, _state["listener"] = _state["listener"], None
        _state["router"] = ConversionRouter(
            listener, self.endpoint.webhook_cert, self.endpoint.webhook_key, folder,
            handlers=max(MAX_HANDLERS, 2 * workers))
        _state["routes"] = str(folder)

    def stop(self) -> None:
        """Stop kube-apiserver and etcd and remove their files (idempotent)."""
        attach(None)
        router, _state["router"], _state["routes"] = _state["router"], None, None
        if router is not None:
            router.close()
        listener, _state["listener"] = _state["listener"], None
        if listener is not None:
            listener.close()
        if self._routes_tmp is not None:
            shutil.rmtree(self._routes_tmp, ignore_errors=True)
            self._routes_tmp = None
        plane, self._plane, self.endpoint = self._plane, None, None
        if plane is not None:
            plane.stop()


@contextlib.contextmanager
def serving(apis: Sequence[API | Suite], *, mode: str | None = None,
            assets_dir: str | Path | None = None, start_timeout: float = 90.0,
            on_start: Callable[[str], None] | None = None, workers: int = 1
            ) -> Iterator[Endpoint | None]:
    """Start kube-apiserver and etcd for ``apis`` that ask for one (``mode`` overrides
    each API's ``apiserver``), install their CRDs, and stop both (and remove their files)
    on the way out, however it is left. Yields the endpoint, or ``None`` when every API
    stays in model mode. ``workers`` > 1: that many processes check examples at once,
    each converting its own objects (:meth:`RunServer.route`).

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
        if workers > 1:
            server.route(workers)
        yield server.endpoint
    finally:
        server.stop()


# -- the CRDs and the webhook ----------------------------------------------------------

def _crd_name(kind: Kind) -> str:
    return str(next(iter(kind.versions.values())).meta["crd"])


def user_webhook(api: API) -> tuple[str, bytes | None] | None:
    """``(url, CA bundle)`` when ``api`` converts through the user's own conversion
    webhook (``webhook = URL``): the CRD then points at it, as in the user's cluster."""
    address = api.converter.webhook()
    if address is None:
        return None
    if address.insecure:
        raise InvalidArgument(
            f"API {api.name!r}: webhook_insecure cannot go through a real API server, which "
            "always checks the webhook's certificate; give webhook_ca (the CA that signed "
            "it), as the CRD's caBundle would")
    bundle = Path(address.ca_file).read_bytes() if address.ca_file is not None else None
    return address.url, bundle


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
            webhook = _webhook(endpoint)
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

    def fault(self, kind: Kind, exc: ServerError, step: str) -> BaseException:
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
            return TooLarge(
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
            from compatfuzz.roundtrip._check._usercode import find_user_traceback

            err.user_traceback = find_user_traceback(converter)  # the user's frames
            return err
        return ConverterError(f"{self.api.name}: {step}: {exc.describe()}")

    # -- the backend ------------------------------------------------------------------

    @contextlib.contextmanager
    def session(self, kind: Kind, unit: Unit, obj: Any) -> Iterator[RealSession]:
        """One example's requests to the server (``_backend.Session``). An object etcd
        cannot store is not tried (``ExampleRejected``); a deadline names the converter
        the server was waiting on; a server gone is :class:`ServerUnavailable`."""
        size = len(json.dumps(obj, separators=(",", ":")).encode())
        if size > STORABLE_BYTES:
            raise ExampleRejected(f"{size} bytes: more than etcd stores")
        real = self._kinds[kind.name]
        real.sweep()  # between examples: none of the objects swept is in use
        self._example_started = time.monotonic()  # the webhook calls that are its own
        session = RealSession(self, kind, real)
        try:
            yield session
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
                f"be reached during '{session.current}' ({type(exc).__name__}: {exc})"
            ) from exc

    def converter_failed(self, kind: Kind) -> bool:
        """Whether compatfuzz's webhook saw this kind's converter fail (the server's
        refusal is then the converter's doing, not validation's)."""
        return self.webhook is not None and self.webhook.errors.get(_crd_name(kind)) is not None


#: the largest object (compact JSON) tried through the server: etcd refuses a request
#: over 1.5 MiB (its ``--max-request-bytes`` default, ``server/embed/config.go``
#: ``DefaultMaxRequestBytes``), and the stored object carries metadata besides; a drawn
#: object above this is discarded (no cluster could hold it), not failed
STORABLE_BYTES = 1536 * 1024 - 64 * 1024


class TooLarge(ConverterError):
    """The server refused a converted object for its size: the model, which has no size
    limit, is not asked (``_both``)."""


def too_large(exc: BaseException) -> bool:
    """Whether ``exc`` is a :class:`TooLarge` refusal."""
    return isinstance(exc, TooLarge)


def _too_large(exc: BaseException) -> bool:
    """Whether the server refused a request for its size: its own 3 MiB limit (413), etcd's
    1.5 MiB (``etcdserver: request is too large``) or its gRPC client's 2 MiB."""
    if not isinstance(exc, ServerError):
        return False
    text = exc.describe()
    return exc.code == 413 or "request is too large" in text or (
        "ResourceExhausted" in text and "larger than max" in text)


class RealSession:
    """The server's answers to one example's requests (``_backend.Session``): a 422 that no
    converter caused is :class:`~._backend.Refused` with the server's field errors; any
    other failure is the converter's (its own exception when compatfuzz's webhook ran
    it), or a deadline."""

    judge = "the real API server"
    trace: list[Any] | None = None

    def __init__(self, backend: RealBackend, kind: Kind, real: RealKind) -> None:
        self.backend = backend
        self.kind = kind
        self.real = real
        self.storage: str = real.storage
        self.current = ""

    def name(self) -> str:
        return self.real.new_name()

    def prepare(self, obj: dict[str, Any], name: str) -> dict[str, Any]:
        return self.real.prepare(obj, name)

    def _ask(self, step: str, request: Callable[[], Any]) -> Any:
        self.current = step
        try:
            return request()
        except ServerError as exc:
            if exc.code == 422 and not self.backend.converter_failed(self.kind):
                raise Refused(step, list(exc.causes) or [exc.message],
                              f"{exc.code} {exc.reason}") from None
            raise self.backend.fault(self.kind, exc, step) from None

    def create(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        return self._ask(f"create in {version}", lambda: self.real.create(obj, version))  # type: ignore[no-any-return]

    def get(self, name: str, version: str) -> dict[str, Any]:
        return self._ask(f"get in {version}", lambda: self.real.get(name, version))  # type: ignore[no-any-return]

    def update(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        return self._ask(f"update in {version} (unchanged)",  # type: ignore[no-any-return]
                         lambda: self.real.update(obj, version))
