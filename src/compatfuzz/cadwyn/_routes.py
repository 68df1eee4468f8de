"""A Cadwyn app's resources as its clients use them: through its routes, in process.

Cadwyn's promise to a client of version ``V`` is that it can go on talking ``V`` while the
business logic only knows HEAD (docs/concepts/version_changes.md). The schema-level units
(``_suite``) check each migration on its own; the route properties here check the promise
as a client sees it, through the app itself (an ASGI call, no network), so that everything
Cadwyn runs takes part: request and response migrations, path-based ones, a create schema
that differs from the response schema, FastAPI's own validation and the app's storage.

A :class:`Resource` is a create route (``POST /things``) and a read route
(``GET /things/{thing_id}``), and an update route (``PUT``/``PATCH`` on the same path) when
the app has one, found by :func:`find_resources`. Per resource:

* ``write_then_read[V]``: a ``V`` client creates a body of ``V``'s create schema, then reads
  the resource back as ``V``: each field it sent that ``V``'s response schema has reads
  back as it was sent (by the response schema's meaning: ``model_diff``'s canonical form);
* ``cross_version[V->W]``: written as ``V``, read as ``W`` and as the newest version (both
  answer 200), written back unchanged by ``W``'s client through the update route, and read
  again as ``V``: what ``V`` sent is still there.

A request is one :class:`Call`; every call since the app's state was last reset is kept in
:attr:`AppClient.history`, so a failure that needs earlier requests (state a migration or an
endpoint keeps between requests) can be told apart: ``_fresh`` re-runs the failing example
alone, on an app imported anew in a process of its own.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import sys
import traceback
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compatfuzz.cadwyn._bundle import Route, body_keys
from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent

#: the methods that write a resource back (``cross_version``'s unchanged update)
UPDATE_METHODS = ("PUT", "PATCH")
#: libraries whose frames a route failure's traceback leaves out: the user's code is what
#: is left (their migrations, endpoints and storage)
_FRAMEWORK = ("starlette", "fastapi", "cadwyn", "anyio", "httpx", "httpx2", "pydantic",
              "asyncio", "concurrent", "contextlib", "threading", "compatfuzz", "hypothesis",
              "_pytest", "pluggy", "sniffio")


@dataclass(frozen=True)
class Resource:
    """A collection the app lets clients create in and read from.

    ``param`` is the read route's path parameter and ``id_field`` the key of the create
    response whose value fills it.
    """

    name: str
    create: Route
    read: Route
    update: Route | None
    param: str
    id_field: str

    def item_path(self, ident: Any) -> str:
        return self.read.path.replace("{" + self.param + "}", str(ident))

    def with_params(self) -> dict[str, Route]:
        """Its routes that take header, query or cookie parameters, by role (``create``,
        ``read``, ``update``): a route example sends parameters for these."""
        return {role: route for role, route in (("create", self.create), ("read", self.read),
                                                ("update", self.update))
                if route is not None and route.params}

    def __str__(self) -> str:
        update = f", {_method(self.update)} {self.update.path}" if self.update else ""
        return (f"{self.name} (POST {self.create.path}, GET {self.read.path}{update}; "
                f"id from the create response's `{self.id_field}`)")


def _method(route: Route) -> str:
    return next(m for m in UPDATE_METHODS if m in route.methods)


def _params(path: str) -> list[str]:
    return re.findall(r"{([^}:]+)(?::[^}]*)?}", path)


def _id_field(param: str, response: type[Any]) -> str | None:
    names = body_keys(response)
    for candidate in (param, "id", param.removesuffix("_id"), param.removesuffix("Id")):
        if candidate in names:
            return candidate
    return None


def find_resources(routes: Sequence[Route], *, skip: Sequence[str] = ()
                   ) -> tuple[list[Resource], list[str]]:
    """The app's resources, and why a create route was left out (a note per route).

    A create route is a ``POST`` with a request body model and a response model; its read
    route a ``GET`` on the create path plus one path parameter, returning a model that has
    that parameter (or ``id``) as a field. ``skip``: path parameters compatfuzz fills
    itself (the version, where the app takes it in the path).
    """
    resources: list[Resource] = []
    notes: list[str] = []
    for create in routes:
        if "POST" not in create.methods or create.body is None:
            continue
        if create.response is None:
            notes.append(f"POST {create.path} ({create.name}) has no response model: "
                         "compatfuzz cannot learn the created resource's id")
            continue
        base = create.path.rstrip("/")
        reads = [r for r in routes if "GET" in r.methods and r.response is not None
                 and r.path.rstrip("/").startswith(base + "/")
                 and len([p for p in _params(r.path) if p not in skip])
                 == len([p for p in _params(create.path) if p not in skip]) + 1
                 and "/" not in r.path.rstrip("/")[len(base) + 1:]]
        if not reads:
            notes.append(f"POST {create.path} ({create.name}) has no GET "
                         f"{base}/{{id}} beside it: nothing reads what it creates")
            continue
        read = reads[0]
        param = [p for p in _params(read.path) if p not in skip][-1]
        id_field = _id_field(param, create.response)
        if id_field is None:
            notes.append(f"POST {create.path} ({create.name}): its response model "
                         f"{create.response.__name__} has no `{param}` or `id` field to "
                         f"fill GET {read.path} with")
            continue
        update = next((r for r in routes if r.path == read.path and r.body is not None
                       and any(m in r.methods for m in UPDATE_METHODS)), None)
        name = base.rsplit("/", 1)[-1] or create.name
        resources.append(Resource(name, create, read, update, param, id_field))
    return resources, notes


@dataclass(frozen=True)
class Call:
    """One request a client made, and what the app answered."""

    method: str
    path: str
    version: str
    body: Any
    status: int
    answer: Any
    #: for a create, the id the app gave the new resource and the answer's key holding it:
    #: a replay maps it to the id the replayed create gets (an app's ids are its own:
    #: ``uuid4``, a counter)
    created: Any = None
    id_field: str = ""
    #: the header, query and cookie parameters sent (``_params.Sent``), when any
    params: Any = None

    def to_json(self) -> dict[str, Any]:
        """The request, as a replay sends it again."""
        out = {"method": self.method, "path": self.path, "version": self.version,
               "body": self.body}
        if self.params:
            out["params"] = self.params
        if self.created is not None:
            out.update(created=self.created, id_field=self.id_field)
        return out

    def __str__(self) -> str:
        query = "&".join(f"{k}={v}" for k, vs in (self.params or {}).get("query", {}).items()
                         for v in (vs if isinstance(vs, list) else [vs]))
        extra = "".join(f" [{where} {k}: {v!r}]" for where in ("header", "cookie")
                        for k, v in (self.params or {}).get(where, {}).items())
        sent = "" if self.body is None else f" {_short(self.body)}"
        path = f"{self.path}?{query}" if query else self.path
        return f"{self.method} {path} as {self.version}{extra}{sent} -> {self.status}"


def _head_refused(exc: BaseException, call: Call, tally: Any) -> RouteFailure | None:
    """Cadwyn's ``CadwynHeadRequestValidationError`` (``cadwyn/exceptions.py``): the
    request migrations made of a request its version accepts one HEAD refuses. Said as a
    failure of the migrations, with what each one did to the parameters."""
    errors = getattr(exc, "errors", None)
    if type(exc).__name__ != "CadwynHeadRequestValidationError" or not isinstance(errors, list):
        return None
    lines = [f"{str(call).rsplit(' -> ', 1)[0]}: HEAD's route refuses what the request "
             f"migrations made of it:"]
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ()))
        lines.append(f"    {where} = {_short(error.get('input'), 80)}: {error.get('msg')}")
    steps = getattr(tally, "steps", None) or []
    if steps:
        lines.append("  the request migrations that ran on it, in order:")
        for name, changes in steps:
            lines.append(f"    {name}" + (": " + "; ".join(changes) if changes else ""))
    return RouteFailure("\n".join(lines), calls=(call,))


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class RouteError(ConverterError):
    """The app raised while answering a request (a migration, the endpoint, FastAPI's own
    response validation): the request and the user's frames of the traceback."""


class RouteFailure(NotEquivalent):
    """A route property does not hold: what the client sent and what it read back.

    ``history``: the requests before the example that the failure needs (set when a fresh
    app passes the example alone), as ``Call.to_json`` rows."""

    def __init__(self, message: str, changes: Any = None, *,
                 calls: Sequence[Call] = ()) -> None:
        super().__init__(message, changes)
        self.calls = tuple(calls)
        self.history: list[dict[str, Any]] = []


def _errors(exc: BaseException, limit: int = 3) -> str:
    """A validation error's first errors, one line: ``addresses: List should have at least
    1 item after validation, not 0 (got [])``."""
    try:
        errors = list(exc.errors())  # type: ignore[attr-defined]
    except Exception:  # not a pydantic or FastAPI validation error
        return ""
    parts = []
    for error in errors[:limit]:
        where = ".".join(str(part) for part in error.get("loc", ()))
        got = f" (got {_short(error['input'], 60)})" if "input" in error else ""
        parts.append(f"{where}: {error.get('msg')}{got}")
    more = f"; and {len(errors) - limit} more" if len(errors) > limit else ""
    return "; ".join(parts) + more


def summary(exc: BaseException) -> str:
    """``exc`` in one line: its type and first line, or a validation error's errors (their
    message's last line is pydantic's "For further information visit ...")."""
    details = _errors(exc)
    if details:
        return f"{type(exc).__name__}: {details}"
    lines = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def user_frames(exc: BaseException) -> str:
    """``exc``'s traceback without the frames of the web stack (Starlette, FastAPI,
    Cadwyn, anyio, pydantic) or of compatfuzz: the user's migrations and endpoints."""
    roots = []
    for name in _FRAMEWORK:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            roots.append(str(Path(file).resolve().parent) + os.sep)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not str(Path(f.filename).resolve()).startswith(tuple(roots))]
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if not frames:
        return last
    return ("Traceback (most recent call last; your code only):\n"
            + "".join(traceback.format_list(frames)) + last)


class AppClient:
    """Requests to an ASGI app in this process, as a client of one version or another.

    The version goes where the app reads it: Cadwyn's header (``api_version_parameter_name``,
    ``x-api-version`` by default) or, for an app that takes it in the path, that path
    parameter. Starlette's ``TestClient`` drives the app (its lifespan too), one per
    process: a forked worker opens its own.
    """

    def __init__(self, app: Any, *, reset: Callable[[], Any] | None = None,
                 tally: Any = None) -> None:
        self.app = app
        self.reset_hook = reset
        #: the bundle's migration counter (``_coverage.Tally``), told each request's route
        self.tally = tally
        self.parameter = str(getattr(app, "api_version_parameter_name", "x-api-version"))
        #: every call since the app started (a reset empties the user's storage; state it
        #: leaves is what a failure that needs earlier requests depends on)
        self.history: list[Call] = []
        self._client: Any = None
        self._pid = 0

    def _open(self) -> Any:
        if self._client is None or self._pid != os.getpid():
            try:
                from starlette.testclient import TestClient
            except ImportError as exc:  # pragma: no cover - the extra installs it
                raise InvalidArgument(
                    f"driving the app through its routes needs Starlette's TestClient and "
                    f"httpx ({exc}): pip install 'compatfuzz[cadwyn]'") from None
            client = TestClient(self.app, raise_server_exceptions=True)
            client.__enter__()  # the app's lifespan starts once, not per request
            pid = os.getpid()
            _OPEN[id(client)] = (pid, client)
            finalizer = weakref.finalize(self, _retire, pid, client)
            finalizer.atexit = False  # _close_all closes what is still open at exit
            self._client, self._pid = client, pid
        return self._client

    def close(self) -> None:
        """Stop the app's lifespan and the TestClient's event loop thread."""
        client, self._client = self._client, None
        if client is not None and self._pid == os.getpid():
            _OPEN.pop(id(client), None)
            _close(client)

    def reset(self) -> None:
        """Call the user's reset hook (their storage, emptied)."""
        if self.reset_hook is not None:
            self.reset_hook()

    def request(self, method: str, path: str, version: str, body: Any = None, *,
                route: str = "", params: Any = None) -> Call:
        """Send one request as a ``version`` client (``route``: the path as the app
        declares it, ``/items/{item_id}``, for the migration coverage; ``params``: its
        header, query and cookie parameters, ``_params.Sent``).

        Raises:
            RouteError: the app raised while answering (its traceback, your frames only).
        """
        close_retired()
        client = self._open()
        if self.tally is not None:
            self.tally.where = f"{method} {route or path}"
            self.tally.steps = []
        params = params or None
        headers: dict[str, str] = dict((params or {}).get("header", {}))
        cookies = (params or {}).get("cookie", {})
        if cookies:  # a header of its own: the client's cookie jar keeps nothing
            headers["cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        query = (params or {}).get("query") or None
        target = path
        placeholder = "{" + self.parameter.replace("-", "_") + "}"
        if placeholder in path or "{" + self.parameter + "}" in path:
            target = path.replace(placeholder, version).replace(
                "{" + self.parameter + "}", version)
        else:
            headers[self.parameter] = version
        try:
            response = client.request(method, target, json=body, headers=headers,
                                      params=query)
        except Exception as exc:
            failed = Call(method, target, version, body, 500, None, params=params)
            self.history.append(failed)
            refused = _head_refused(exc, failed, self.tally)
            if refused is not None:
                raise refused from None
            frames = user_frames(exc)
            # the frames are the failure's traceback block, printed once below it
            sent = str(failed).rsplit(" -> ", 1)[0]
            if type(exc).__name__ == "ResponseValidationError":  # fastapi/exceptions.py
                ran = [name for name, _ in (getattr(self.tally, "steps", None) or [])]
                error = RouteError(
                    f"{sent}: the app's answer does not fit the response model {version} "
                    f"declares (FastAPI validates it after the response migrations ran): "
                    f"{_errors(exc)}" + ("\n  the migrations that ran on this request, in "
                                         "order: " + ", ".join(ran) if ran else ""))
                frames = ""  # FastAPI's own text: the message above says it all
            else:
                error = RouteError(f"{sent} raised {summary(exc)}")
            error.user_traceback = frames
            raise error from exc
        finally:
            if self.tally is not None:
                self.tally.steps = None  # traced per request only: schema units add none
        try:
            answer = response.json()
        except ValueError:
            answer = response.text
        call = Call(method, target, version, body, response.status_code, answer,
                    params=params)
        self.history.append(call)
        return call


#: TestClients open in this process (or, after a fork, in the parent), by id: ``(pid, client)``
_OPEN: dict[int, tuple[int, Any]] = {}
#: TestClients whose :class:`AppClient` was collected, closed at the next safe point
_RETIRED: list[tuple[int, Any]] = []


def _retire(pid: int, client: Any) -> None:
    """An AppClient's finalizer: it only queues its TestClient.

    A finalizer runs wherever the garbage collector does, in the middle of someone else's
    example, perhaps holding a lock; closing there (the app's lifespan shutdown, a wait on
    the TestClient's event loop thread, anyio's ``BlockingPortal.call``) blocked a later
    unit until its example deadline.  :func:`close_retired` closes it where nothing runs.
    """
    _RETIRED.append((pid, client))


def close_retired() -> None:
    """Close the TestClients of collected AppClients (this process's only: a forked
    worker inherits the parent's, whose event loop threads it does not have)."""
    while _RETIRED:
        pid, client = _RETIRED.pop()
        if _OPEN.pop(id(client), None) is not None and pid == os.getpid():
            _close(client)


@atexit.register
def _close_all() -> None:
    """At exit, stop the lifespans of the apps this process still has open."""
    close_retired()
    for pid, client in list(_OPEN.values()):
        if pid == os.getpid():
            _close(client)
    _OPEN.clear()


def _close(client: Any) -> None:
    with contextlib.suppress(Exception):  # the app's shutdown failing at exit: no verdict
        client.__exit__(None, None, None)

