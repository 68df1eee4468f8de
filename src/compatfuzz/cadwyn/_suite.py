"""A Cadwyn bundle as a :class:`compatfuzz.roundtrip.Suite`: ``compatfuzz fuzz``, the pytest
plugin, reports and ``--replay`` for ``[[api]] cadwyn = "shop.versions:version_bundle"``.

First, per version ``v`` that has ``VersionChange`` classes, ``migrations[v]``: their code passes
the static checks of ``_lint`` (same-named migrations, body keys a migration reads that the
body it receives cannot have), one run, before any example.

Then, per schema and old version ``v`` (versions written oldest first, ``head`` the newest
shape; a request-only or response-only schema, as :meth:`CadwynAPI.roles` tells, gets only
its direction's units):

* ``valid[v->head]``: an old client's request, migrated to HEAD, is valid there;
* ``valid[head->v]``: a HEAD response migrated to ``v`` is valid in ``v``;
* ``roundtrip[v->head]``: request-up then response-down gives the client back what it sent.

Given the app (:attr:`CadwynAPI.routes` not empty), the units are per route instead, named
after its endpoint (``create_customer::valid[2023-01-01->head]``): ``valid[v->head]`` for a
route with a request body, ``valid[head->v]`` for one with a response model, and
``roundtrip[v->head]`` where both are the same schema; each runs the route's path-based
migrations with the schema-based ones.

Given the app, its resources (``_routes``: a ``POST`` route and the ``GET`` route that reads
what it creates) are also checked as clients use them, through the app in process
(``_sequences``): ``write_then_read[v]`` per version and ``cross_version[v->w]`` per pair,
named after the resource (``customers::write_then_read[2023-01-01]``).

Examples are drawn and judged by the pydantic family's engine (``model_strategy``,
``model_diff``; see ``_properties``); what is Cadwyn's own is the migrations, run as Cadwyn
runs them, and the blame that names the ``VersionChange`` and its migration or instruction.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from compatfuzz.cadwyn._bundle import HEAD, CadwynAPI, Route
from compatfuzz.cadwyn._coverage import instrument
from compatfuzz.cadwyn._lint import MigrationCodeError, check_version
from compatfuzz.cadwyn._properties import (
    check_request_roundtrip,
    check_request_up,
    check_response_down,
    request_bodies,
)
from compatfuzz.cadwyn._routes import AppClient, RouteError, RouteFailure, find_resources
from compatfuzz.errors import CompatfuzzWarning, InvalidArgument
from compatfuzz.roundtrip import Property, Suite, Unit
from compatfuzz.roundtrip._check._accept import Accept, check_accepts
from compatfuzz.roundtrip._check._suite import check_api_name


class RoleGuessWarning(CompatfuzzWarning):
    """The bundle form guessed a schema's role, or left a schema out (``CadwynAPI.notes``):
    the app form takes roles from the routes."""


#: the properties a Cadwyn API has
PROPERTIES = (Property.ROUNDTRIP, Property.VALID, Property.MIGRATIONS,
              Property.WRITE_THEN_READ, Property.CROSS_VERSION)
#: the properties checked through the app's routes, per resource
ROUTE_PROPERTIES = (Property.WRITE_THEN_READ, Property.CROSS_VERSION)
#: the properties whose units are not per schema or per route
SCHEMA_FREE = (Property.MIGRATIONS, *ROUTE_PROPERTIES)
#: the kind of the ``migrations[<version>]`` units: the bundle's code, not one schema
BUNDLE = "bundle"


class CadwynSuite(Suite):
    """The round-trip units of every schema of one :class:`CadwynAPI`.

    .. versionadded:: 0.2
    """

    def __init__(self, name: str, api: CadwynAPI, *, source: str | None = None,
                 accept: Sequence[Accept] = (), overrides: Any = None,
                 reset: Callable[[], Any] | None = None) -> None:
        """``accept`` lists deliberate differences a round trip may show (a field an old
        version drops on purpose); a migrated body must still be valid, as Cadwyn
        validates it too (an invalid one is a 422 or a 500 to the client). ``overrides``
        (:class:`compatfuzz.strategies.Overrides`) steers the drawing of bodies by field
        path, in every version. ``reset`` empties the app's storage: called before each
        example of a route property, so that each starts from a fresh app."""
        check_api_name(name)
        if api.app is None and api.path_migrations():
            found = api.path_migrations()
            raise InvalidArgument(
                f"API {name!r}: the bundle has path-based migrations "
                f"({'; '.join(found[:3])}{', ...' if len(found) > 3 else ''}), which belong "
                "to a route: the bundle form would check the schemas without them and fail "
                "what the app does right. Point cadwyn at the Cadwyn app serving the bundle "
                "(cadwyn = \"module:app\"; `compatfuzz init cadwyn:<module>:<bundle>` finds it)")
        for note in api.notes:
            warnings.warn(RoleGuessWarning(f"API {name!r}: {note}"), stacklevel=2)
        self.name = name
        self.accept = check_accepts(name, accept, [[*api.versions, HEAD]])
        self.api = api
        self.source = source
        self.kind = "cadwyn"
        self._by_name = {schema.__name__: schema for schema in api.schemas}
        self._routes = {route.name: route for route in api.routes}
        self._strategies: dict[tuple[str, str, bool], Any] = {}
        self.overrides = overrides
        skip = [str(getattr(api.app, "api_version_parameter_name", "")).replace("-", "_")]
        #: the app's resources, and why a POST route is not one (``_routes.find_resources``)
        self.resources, self.resource_notes = (
            find_resources(api.routes, skip=skip) if api.app is not None else ([], []))
        self._resources = {r.name: r for r in self.resources}
        self.reset = reset
        self._client: AppClient | None = None
        #: per unit, the verdict of re-running its first failure on a fresh app
        self._fresh: dict[Unit, str] = {}
        #: requests to send before the next route example (a replay's saved history)
        self.prelude: list[Any] = []
        self._tally = instrument(api.bundle)

    def units(self, properties: Sequence[Property]) -> list[Unit]:
        # each version's VersionChange code, read before any example (``_lint``); the
        # oldest version has no changes
        static = ([Unit(self.name, BUNDLE, Property.MIGRATIONS, (v,))
                   for v in self.api.versions[1:]]
                  if Property.MIGRATIONS in properties else [])
        return static + self._example_units(properties) + self._resource_units(properties)

    def _resource_units(self, properties: Sequence[Property]) -> list[Unit]:
        out: list[Unit] = []
        versions = self.api.versions
        for resource in self.resources:
            if Property.WRITE_THEN_READ in properties:
                out.extend(Unit(self.name, resource.name, Property.WRITE_THEN_READ, (v,),
                                show_kind=True) for v in versions)
            if Property.CROSS_VERSION in properties:
                out.extend(Unit(self.name, resource.name, Property.CROSS_VERSION, (v, w),
                                show_kind=True) for v in versions for w in versions if v != w)
        return out

    def _example_units(self, properties: Sequence[Property]) -> list[Unit]:
        if self._routes:
            return self._route_units(properties)
        several = len(self._by_name) > 1
        out: list[Unit] = []
        for kind, schema in self._by_name.items():
            roles = self.api.roles(schema)
            for prop in PROPERTIES:
                if prop not in properties or prop in SCHEMA_FREE:
                    continue
                for version in self.api.versions:
                    pairs = []
                    if "request" in roles and (prop is Property.VALID or len(roles) == 2):
                        pairs.append((version, HEAD))
                    if "response" in roles and prop is Property.VALID:
                        pairs.append((HEAD, version))
                    out.extend(Unit(self.name, kind, prop, pair, show_kind=several)
                               for pair in pairs)
        return out

    def _route_units(self, properties: Sequence[Property]) -> list[Unit]:
        out: list[Unit] = []
        for name, route in self._routes.items():
            shared = route.body is not None and route.body is route.response
            for prop in PROPERTIES:
                if prop not in properties or prop in SCHEMA_FREE:
                    continue
                for version in self.api.versions:
                    pairs = []
                    if route.body is not None and (prop is Property.VALID or shared):
                        pairs.append((version, HEAD))
                    if route.response is not None and prop is Property.VALID:
                        pairs.append((HEAD, version))
                    out.extend(Unit(self.name, name, prop, pair, show_kind=True)
                               for pair in pairs)
        return out

    def _target(self, unit: Unit) -> tuple[type[Any], Route | None]:
        """The schema a unit's bodies are drawn from and judged by, and its route."""
        route = self._routes.get(unit.kind)
        if route is not None:
            model = route.body if unit.versions[1] == HEAD else route.response
            if model is not None:
                return model, route
        try:
            return self._by_name[unit.kind], None
        except KeyError:
            known = sorted(self._routes) or sorted(self._by_name)
            raise InvalidArgument(f"{self.name} has no {'route' if self._routes else 'schema'} "
                                  f"{unit.kind!r}; it has {known}") from None

    def _schema(self, unit: Unit) -> type[Any]:
        if unit.property in ROUTE_PROPERTIES:
            body: type[Any] = self._resource(unit).create.body
            return body
        return self._target(unit)[0]

    def _resource(self, unit: Unit) -> Any:
        try:
            return self._resources[unit.kind]
        except KeyError:
            raise InvalidArgument(f"{self.name} has no resource {unit.kind!r}; it has "
                                  f"{sorted(self._resources)}") from None

    def client(self) -> AppClient:
        """The in-process client of the app (one per suite, opened on first use)."""
        if self._client is None:
            self._client = AppClient(self.api.app, reset=self.reset, tally=self._tally)
        return self._client

    def strategy(self, unit: Unit) -> Any:
        if unit.property is Property.MIGRATIONS:
            from hypothesis import strategies as st

            # one run: the code does not depend on an example (not None, which the engine
            # reads as "nothing checked yet": the failure would have no counterexample)
            return st.just({"version": unit.versions[0]})
        schema = self._schema(unit)
        source = unit.versions[0]
        key = (unit.kind, source, unit.property in ROUTE_PROPERTIES)
        if key not in self._strategies:
            bodies = request_bodies(self.api, schema, source, overrides=self.overrides)
            if unit.property in ROUTE_PROPERTIES:
                bodies = self._with_params(self._resource(unit), bodies)
            self._strategies[key] = bodies
        return self._strategies[key]

    def _with_params(self, resource: Any, bodies: Any) -> Any:
        """A route example: the body alone, or, when the resource's routes take header,
        query or cookie parameters, ``{"body": ..., "params": {role: Sent}}``."""
        from hypothesis import strategies as st

        from compatfuzz.cadwyn._params import params_strategy

        roles = resource.with_params()
        if not roles:
            return bodies
        header = self.client().parameter
        return st.fixed_dictionaries({
            "body": bodies,
            "params": st.fixed_dictionaries({
                role: params_strategy(route.params, version_header=header)
                for role, route in roles.items()}).map(
                    lambda sent: {role: v for role, v in sent.items() if v})})

    def check(self, unit: Unit, example: Any) -> None:
        if unit.property is Property.MIGRATIONS:
            found = check_version(self.api, unit.versions[0])
            if found:
                raise MigrationCodeError(found)
            return
        if unit.property in ROUTE_PROPERTIES:
            self._check_route(unit, example)
            return
        schema, route = self._target(unit)
        self._tally.where = (f"{'/'.join(sorted(route.methods))} {route.path}"
                             if route is not None else f"schema {schema.__name__}")
        a, b = unit.versions
        if unit.property is Property.ROUNDTRIP:
            check_request_roundtrip(self.api, schema, a, example, route=route)
        elif unit.property is Property.VALID and b == HEAD:
            check_request_up(self.api, schema, a, example, route=route)
        elif unit.property is Property.VALID:
            check_response_down(self.api, schema, b, example, route=route)
        else:
            raise InvalidArgument(f"a Cadwyn API has no {unit.property} property; its "
                                  f"properties are {', '.join(map(str, PROPERTIES))}")

    def migration_code(self) -> tuple[str, ...]:
        return tuple(self._tally.known)

    def take_exercised(self) -> tuple[tuple[str, str, int], ...]:
        return self._tally.take()

    def _check_route(self, unit: Unit, example: Any) -> None:
        from compatfuzz.cadwyn._sequences import cross_version, write_then_read

        resource = self._resource(unit)
        client = self.client()
        if self.reset is not None:
            client.reset()
        if self.prelude:
            prelude, self.prelude = self.prelude, []
            self.replay_history(prelude)
        before = len(client.history)
        try:
            body, params = example, None
            if resource.with_params():
                body, params = example["body"], example["params"]
            if unit.property is Property.WRITE_THEN_READ:
                write_then_read(self.api, resource, client, unit.versions[0], body,
                                params=params)
            else:
                a, b = unit.versions
                cross_version(self.api, resource, client, (a, b), body, params=params)
        except (RouteFailure, RouteError) as exc:
            earlier = client.history[:before]
            if not earlier:
                raise
            note = self._history_note(unit, example, earlier)
            if not note:
                raise
            exc.args = (f"{exc.args[0]}\n{note}", *exc.args[1:])
            exc.history = [call.to_json() for call in earlier]  # type: ignore[union-attr]
            raise

    def replay_history(self, history: Sequence[Any]) -> None:
        """Send the requests a saved failure needed (``Counterexample.history``) to the app
        before the replayed example: ``compatfuzz fuzz --replay`` calls it once."""
        client = self.client()
        ids: dict[str, str] = {}  # a recorded create's id -> the replayed create's
        for call in history:
            path = "/".join(ids.get(part, part) for part in str(call["path"]).split("/"))
            sent = client.request(str(call["method"]), path, str(call["version"]),
                                  call.get("body"), params=call.get("params"))
            field = call.get("id_field")
            if call.get("created") is not None and field and isinstance(sent.answer, dict) \
                    and field in sent.answer:
                ids[str(call["created"])] = str(sent.answer[field])

    def _history_note(self, unit: Unit, example: Any, earlier: Sequence[Any]) -> str:
        """Whether the failure needs the requests before it: the example re-run alone on a
        freshly imported app (``_fresh``), once per unit (shrinking replays it often)."""
        if unit not in self._fresh:
            from compatfuzz.cadwyn._fresh import run_fresh

            self._fresh[unit] = run_fresh(self, unit, example)
        verdict = self._fresh[unit]
        if verdict != "passed":
            return ""
        shown = [f"    {call}" for call in earlier]
        if len(shown) > 10:  # the first ones set the state, the last ones are nearest
            shown[5:-5] = [f"    ... {len(shown) - 10} more"]
        return ("  this failure needs earlier requests: alone, on a freshly imported app, "
                f"the example passes. The {len(earlier)} request"
                f"{'s' if len(earlier) != 1 else ''} before it since the app started (the "
                "replay sends them first):\n"
                + "\n".join(shown) + "\n  state kept between requests (a module-level or "
                "mutable default in a migration or an endpoint) changes what a client "
                "reads; if your storage is meant to keep it, give reset = \"module:function\" "
                "to empty it before each example")

    def __repr__(self) -> str:
        return f"CadwynSuite({self.name!r}, {self.api!r})"
