"""The route properties as the steps a client takes (``_routes`` has the resources and the
client): written once, run on the app in this process or, to tell whether a failure needs
earlier requests, on a fresh copy of it (``_fresh``).

What a client reads back is judged by its version's response schema: both what it sent
and what it read are put in the pydantic family's canonical form (``pydantic._values``:
datetimes as instants, decimals by value, enums as members) by the schema that reads each,
and compared on the fields the client sent that the response schema has; a field only one
side has (an id the server assigns, a write-only password) is no difference.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from typing import Any

from compatfuzz.cadwyn._bundle import CadwynAPI, Route, Step, body_keys
from compatfuzz.cadwyn._routes import (
    UPDATE_METHODS,
    AppClient,
    Call,
    Resource,
    RouteFailure,
    _short,
)
from compatfuzz.errors import CompatfuzzError
from compatfuzz.pydantic._values import canonical
from compatfuzz.roundtrip._check._accept import accepted_changes
from compatfuzz.roundtrip._check._verdict import literal_diff, render_changes

__all__ = ["Params", "cross_version", "write_then_read"]

Params = dict[str, Any]
"""The parameters of a route example's requests besides the body, by the route's role:
``{"create": Sent, "read": Sent, "update": Sent}`` (``_params.Sent``)."""


def write_then_read(api: CadwynAPI, resource: Resource, client: AppClient, version: str,
                    body: dict[str, Any], *, params: Params | None = None) -> None:
    """A ``version`` client creates ``body`` and reads the resource back as ``version``:
    what it sent is what it reads.  ``params``: the header, query and cookie parameters
    each request sends, by the route's role (``create``, ``read``, ``update``).

    Raises:
        RouteFailure: a request was refused, or a sent field reads back otherwise.
        RouteError: the app raised while answering.
    """
    calls: list[Call] = []
    params = params or {}
    ident = _create(client, resource, version, body, calls, api=api,
                    params=params.get("create"))
    read = _read(client, resource, version, ident, calls, why="reads it back", api=api,
                 params=params.get("read"))
    _compare(api, resource, client, ident, version, sent=body, read=read, calls=calls,
             what=f"a {version} client created {_a(resource)} and reads back something "
                  "else")


def cross_version(api: CadwynAPI, resource: Resource, client: AppClient,
                  pair: tuple[str, str], body: dict[str, Any],
                  *, params: Params | None = None) -> None:
    """Written as ``source``; read as ``target`` and as the newest version; written back
    unchanged by ``target``'s client (through the update route, when the app has one); read
    again as ``source``: what ``source`` sent is still there.

    Raises:
        RouteFailure, RouteError: as :func:`write_then_read`.
    """
    source, target = pair
    calls: list[Call] = []
    params = params or {}
    ident = _create(client, resource, source, body, calls, api=api,
                    params=params.get("create"))
    seen = _read(client, resource, target, ident, calls,
                 why=f"a {target} client reads what a {source} client wrote",
                 params=params.get("read"))
    newest = api.versions[-1]
    if newest not in (source, target):
        _read(client, resource, newest, ident, calls,
              why=f"a {newest} client reads what a {source} client wrote",
              params=params.get("read"))
    back: Any = None
    if resource.update is not None:
        model = api.model(resource.update.body, target)  # type: ignore[arg-type]
        keep = body_keys(model)
        back = {k: v for k, v in seen.answer.items() if k in keep} \
            if isinstance(seen.answer, dict) else seen.answer
        method = next(m for m in UPDATE_METHODS if m in resource.update.methods)
        call = client.request(method, resource.item_path(ident), target, back,
                              route=resource.update.path, params=params.get("update"))
        calls.append(call)
        if not 200 <= call.status < 300:
            raise _refused(call, calls, f"a {target} client wrote back what it read, "
                                        "unchanged, and the app refused it")
    read = _read(client, resource, source, ident, calls,
                 why=f"the {source} client reads it again", params=params.get("read"))
    did = "wrote it back unchanged" if resource.update is not None else "read it"
    _compare(api, resource, client, ident, source, sent=body, read=read, calls=calls,
             what=f"a {source} client created {_a(resource)}, a {target} client "
                  f"{did}, and the {source} client reads back something else",
             wrote_back=None if resource.update is None else (target, back))


def _declared(api: CadwynAPI, route: Route, version: str) -> int | None:
    """The success status ``route`` declares as Cadwyn serves it in ``version``
    (``endpoint(...).had(status_code=...)`` changes it), or ``None`` (FastAPI's 200)."""
    try:
        served = api.version_routes(version)
    except Exception:  # the routes as a version sees them are a help here
        return route.status_code
    same = [r for r in served if r.name == route.name and r.methods == route.methods]
    return same[0].status_code if same else route.status_code


def _status(api: CadwynAPI, route: Route, call: Call, calls: list[Call]) -> None:
    """A success answer must carry the status the route declares in the client's version
    (its OpenAPI document says so; a status a migration sets otherwise breaks clients that
    check it)."""
    declared = _declared(api, route, call.version)
    if declared is not None and 200 <= call.status < 300 and call.status != declared:
        raise _refused(call, calls, f"{call.method} {route.path} as {call.version} "
                                    f"answered {call.status}, but the route declares "
                                    f"{declared} in {call.version}")


def _create(client: AppClient, resource: Resource, version: str, body: Any,
            calls: list[Call], *, api: CadwynAPI | None = None,
            params: Any = None) -> Any:
    call = client.request("POST", resource.create.path, version, body,
                          route=resource.create.path, params=params)
    calls.append(call)
    if not 200 <= call.status < 300:
        raise _refused(call, calls, f"the app refused a body {version}'s "
                                    f"{resource.create.body.__name__} accepts"  # type: ignore[union-attr]
                       if call.status == 422 else f"a {version} client cannot create")
    if api is not None:
        _status(api, resource.create, call, calls)
    if not isinstance(call.answer, dict) or resource.id_field not in call.answer:
        raise RouteFailure(
            f"POST {resource.create.path} as {version} answered {call.status} without "
            f"`{resource.id_field}`, the id GET {resource.read.path} needs:\n"
            f"  {_short(call.answer, 400)}\n" + _log(calls), calls=calls)
    ident = call.answer[resource.id_field]
    if client.history and client.history[-1] is call:  # a replay maps the app's new id
        client.history[-1] = dataclasses.replace(call, created=ident,
                                                 id_field=resource.id_field)
    return ident


def _read(client: AppClient, resource: Resource, version: str, ident: Any,
          calls: list[Call], *, why: str, api: CadwynAPI | None = None,
          params: Any = None) -> Call:
    call = client.request("GET", resource.item_path(ident), version, route=resource.read.path,
                          params=params)
    calls.append(call)
    if not 200 <= call.status < 300:
        raise _refused(call, calls, why + f", and the app answered {call.status}")
    if api is not None:
        _status(api, resource.read, call, calls)
    return call


def _refused(call: Call, calls: Sequence[Call], what: str) -> RouteFailure:
    return RouteFailure(f"{what}:\n  {call.method} {call.path} as {call.version} -> "
                        f"{call.status} {_short(call.answer, 600)}\n" + _log(calls),
                        calls=calls)


def _log(calls: Sequence[Call]) -> str:
    return "  the requests, in order:\n" + "\n".join(f"    {c}" for c in calls)


def _compare(api: CadwynAPI, resource: Resource, client: AppClient, ident: Any,
             version: str, *, sent: dict[str, Any], read: Call, calls: list[Call],
             what: str, wrote_back: tuple[str, Any] | None = None) -> None:
    create = api.model(resource.create.body, version)  # type: ignore[arg-type]
    response = api.model(resource.read.response, version)  # type: ignore[arg-type]
    try:
        wrote = canonical(create, sent)
        got = canonical(response, read.answer)
    except CompatfuzzError as exc:  # the app answered with what its own schema refuses
        raise RouteFailure(f"{what}: {exc}\n" + _log(calls), calls=calls) from None
    readable = body_keys(response)
    shared = [k for k in sent if k in readable and isinstance(wrote, dict) and k in wrote]
    changes, _ = accepted_changes(literal_diff({k: wrote[k] for k in shared},
                                               {k: got.get(k) for k in shared}))
    if not changes:
        return
    lines = [f"{what}:",
             render_changes(changes)]
    with _paused(client):  # what the blame runs is no call of the run's
        head = client.request("GET", resource.item_path(ident), api.versions[-1],
                              route=resource.read.path, params=read.params).answer
        lines.extend(_blame(api, resource, version, sent=sent, head=head, changes=changes,
                            keys=shared))
        if wrote_back is not None:
            lines.extend(_update_lines(api, resource, *wrote_back))
    lines.append(_log(calls))
    raise RouteFailure("\n".join(lines), changes, calls=calls)


def _paused(client: AppClient) -> Any:
    return client.tally.pause() if client.tally is not None else contextlib.nullcontext()


def _a(resource: Resource) -> str:
    return f"a resource with POST {resource.create.path}"


def _ran(api: CadwynAPI, route: Any, schema: Any, version: str, body: Any) -> str:
    try:
        steps = api.request_up(schema, body, version, route=route).steps
    except Exception as exc:  # the app's own answer said more; this is a help
        return f"(cannot tell: {type(exc).__name__})"
    return "; ".join(dict.fromkeys(str(s) for s in steps)) or "none"


def _update_lines(api: CadwynAPI, resource: Resource, version: str, back: Any) -> list[str]:
    """Which request migrations the write-back ran, beside the create's: a path-based
    migration registered for one route only leaves the other route's old clients
    unmigrated."""
    update = resource.update
    if update is None or not isinstance(back, dict):
        return []
    method = next(m for m in UPDATE_METHODS if m in update.methods)
    on_update = _ran(api, update, update.body, version, back)
    on_create = _ran(api, resource.create, resource.create.body, version,
                     {k: v for k, v in back.items()
                      if k in body_keys(api.model(resource.create.body, version))})  # type: ignore[arg-type]
    if (on_update == "none") == (on_create == "none"):
        return []
    return [f"  the {version} write-back ran other request migrations than a {version} "
            f"create: {method} {update.path}: {on_update}; POST {resource.create.path}: "
            f"{on_create} (a path-based migration registered for one route only?)"]


def _blame(api: CadwynAPI, resource: Resource, version: str, *, sent: dict[str, Any],
           head: Any, changes: Sequence[Any], keys: Sequence[str]) -> list[str]:
    """Which migrations touched each lost field, by direction: the request migrations that
    carried it up to HEAD, the response migrations that carried it back down. Re-run
    outside the app by ``CadwynAPI`` (the same loops as Cadwyn's), down from ``head``, the
    object as the newest version reads it."""
    from compatfuzz.cadwyn._properties import _top_key

    up: tuple[Step, ...] = ()
    down: tuple[Step, ...] = ()
    try:
        migrated = api.request_up(resource.create.body, sent, version,  # type: ignore[arg-type]
                                  route=resource.create)
        up = migrated.steps
        down = api.response_down(resource.read.response, head,  # type: ignore[arg-type]
                                 version, route=resource.read).steps
    except Exception:  # the blame is a help; the failure stands without it
        pass
    lines = []
    for key in dict.fromkeys(_top_key(c.path, set(keys)) for c in changes):
        if key is None:
            continue
        ups = [_step(s, key) for s in up if s.touched(key)]
        downs = [_step(s, key) for s in down if s.touched(key)]
        if not ups and not downs:
            lines.append(f"  no migration touched `{key}` on the way to HEAD or back: look "
                         f"at the endpoint, the storage and the schema instructions")
            continue
        if ups:
            lines.append(f"  `{key}` on the way up ({version} -> HEAD, request migrations): "
                         + "; ".join(ups))
        if downs:
            lines.append(f"  `{key}` on the way down (HEAD -> {version}, response "
                         "migrations): " + "; ".join(downs))
    return lines



def _step(step: Step, key: str) -> str:
    """``Change.migration (version 2): color "" -> absent``: what the step did to ``key``."""
    def value(body: Any) -> str:
        return _short(body[key], 60) if isinstance(body, dict) and key in body else "absent"

    return f"{step} made `{key}` {value(step.before)} -> {value(step.after)}"
