"""The routes of a Cadwyn app, compared between two versions (or two releases of one).

A client calls routes, not schemas: a route that ``endpoint("/x", ["DELETE"]).didnt_exist``
hides from an older version, or one the HEAD router lost, is answered 404 or 405 where
it used to work.  Given the app on both sides (``cadwyn:shop.app:app@2023-06-01``), each
version's routes are what Cadwyn serves in it (``CadwynAPI.version_routes``), keyed by
method and path:

* ``route-removed`` (error): a (method, path) OLD serves and NEW does not;
* ``route-added`` (info): the reverse, which no old client notices;
* ``route-status-changed`` (warning): the declared success status differs (``201`` ->
  ``200``), which only clients that check the exact code notice.

Each is reported under ``routes:METHOD PATH`` with the ``VersionChange`` whose endpoint
instruction made it, when one between the two versions names the route.  A bundle on
either side has no routes: they are not compared (a note says so when one side is the
app).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from compatfuzz.cadwyn import HEAD
from compatfuzz.compat import (
    RULES,
    Finding,
    Finished,
    Impact,
    Note,
    Policy,
    Severity,
    Side,
)
from compatfuzz.compat._rest import judge

__all__ = ["route_events"]


def _table(routes: Any) -> dict[tuple[str, str], Any]:
    return {(method, route.path): route for route in routes for method in sorted(route.methods)}


def _made_by(blame: Any, method: str, path: str) -> str:
    """The ``VersionChange`` between the two versions whose endpoint instruction names
    ``method path`` (as the newer or the older path of an ``endpoint(...).had``)."""
    old, new = blame.old, blame.new
    if old.version == new.version:
        return ""
    api = new.api
    order = [*api.versions, HEAD]
    if old.version not in order or new.version not in order:
        return ""
    lo, hi = sorted((old.version, new.version), key=order.index)
    if lo == HEAD:
        return ""
    found = []
    for version, change in api.changes_between(lo):
        if order.index(version) > order.index(hi):
            continue
        for i in change.alter_endpoint_instructions:
            paths = {getattr(i, "endpoint_path", None),
                     getattr(getattr(i, "attributes", None), "path", None)}
            if path in paths and method in set(getattr(i, "endpoint_methods", ())):
                found.append(f"{change.__name__} (version {version})")
    return "; ".join(dict.fromkeys(found))


def _finish(f: Finding, policy: Policy, made_by: str) -> Finding:
    """``f`` decided as the engine decides a finding (``_Run.finalize``): severity and
    policy line, impact in requests and responses, ignore entry."""
    breaking = bool(f.breaks)
    rule = RULES[f.rule]
    default = rule.severity if breaking or rule.severity is Severity.WARNING else Severity.INFO
    severity, source = policy.decide(f, breaking=breaking, default=default)
    impact, note = judge(f)
    f = f.evolve(breaking=breaking, severity=severity, policy=source, impact=impact,
                 impact_note=note, made_by=made_by)
    entry = policy.ignored(f)
    return f.evolve(ignore_reason=entry.reason) if entry is not None else f


def route_events(blame: Any, policy: Policy, fail_on_impact: Any) -> Iterator[Any]:
    """A :class:`Finished` with the route findings (module docstring), if any; a
    :class:`Note` when only one side is the app."""
    old, new = blame.old, blame.new
    if old.api.app is None or new.api.app is None:
        if old.api.app is not new.api.app:
            side = "OLD" if old.api.app is None else "NEW"
            yield Note("", f"routes not compared: {side} names the VersionBundle, not the "
                       "Cadwyn app (name the app on both sides, e.g. cadwyn:shop.app:app@V)")
        return
    before = _table(old.api.version_routes(old.version))
    after = _table(new.api.version_routes(new.version))
    found = []
    for (method, path), route in before.items():
        if (method, path) not in after:
            found.append(Finding(
                "route-removed", f"{method} {path}", route.name, None,
                f"{method} {path} ({route.name}) is not served: old clients' calls are "
                "answered 404 or 405", frozenset({Side.REQUEST}), version="routes"))
        elif route.status_code != after[method, path].status_code:
            now = after[method, path].status_code
            found.append(Finding(
                "route-status-changed", f"{method} {path}", route.status_code, now,
                f"{method} {path} answers {now or 'the default status'} where it answered "
                f"{route.status_code or 'the default status'}",
                frozenset({Side.RESPONSE}), version="routes", keyword="status_code"))
    for (method, path), route in after.items():
        if (method, path) not in before:
            found.append(Finding(
                "route-added", f"{method} {path}", None, route.name,
                f"{method} {path} ({route.name}) is new", frozenset(), version="routes"))
    if not found:
        return
    gate = Impact(fail_on_impact) if isinstance(fail_on_impact, str) else fail_on_impact
    yield Finished(tuple(_finish(f, policy, _made_by(blame, *f.path.split(" ", 1)))
                         for f in found), gate)
