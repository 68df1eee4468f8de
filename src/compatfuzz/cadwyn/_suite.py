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

Examples are drawn and judged by the pydantic family's engine (``model_strategy``,
``model_diff``; see ``_properties``); what is Cadwyn's own is the migrations, run as Cadwyn
runs them, and the blame that names the ``VersionChange`` and its migration or instruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compatfuzz.cadwyn._bundle import HEAD, CadwynAPI, Route
from compatfuzz.cadwyn._lint import MigrationCodeError, check_version
from compatfuzz.cadwyn._properties import (
    check_request_roundtrip,
    check_request_up,
    check_response_down,
    request_bodies,
)
from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip import Property, Suite, Unit
from compatfuzz.roundtrip._check._accept import Accept, check_accepts
from compatfuzz.roundtrip._check._suite import check_api_name

#: the properties a Cadwyn API has
PROPERTIES = (Property.ROUNDTRIP, Property.VALID, Property.MIGRATIONS)
#: the kind of the ``migrations[<version>]`` units: the bundle's code, not one schema
BUNDLE = "bundle"


class CadwynSuite(Suite):
    """The round-trip units of every schema of one :class:`CadwynAPI`.

    .. versionadded:: 0.2
    """

    def __init__(self, name: str, api: CadwynAPI, *, source: str | None = None,
                 accept: Sequence[Accept] = (), overrides: Any = None) -> None:
        """``accept`` lists deliberate differences a round trip may show (a field an old
        version drops on purpose); a migrated body must still be valid, as Cadwyn
        validates it too (an invalid one is a 422 or a 500 to the client). ``overrides``
        (:class:`compatfuzz.strategies.Overrides`) steers the drawing of bodies by field
        path, in every version."""
        check_api_name(name)
        self.name = name
        self.accept = check_accepts(name, accept, [[*api.versions, HEAD]])
        self.api = api
        self.source = source
        self.kind = "cadwyn"
        self._by_name = {schema.__name__: schema for schema in api.schemas}
        self._routes = {route.name: route for route in api.routes}
        self._strategies: dict[tuple[str, str], Any] = {}
        self.overrides = overrides

    def units(self, properties: Sequence[Property]) -> list[Unit]:
        # each version's VersionChange code, read before any example (``_lint``); the
        # oldest version has no changes
        static = ([Unit(self.name, BUNDLE, Property.MIGRATIONS, (v,))
                   for v in self.api.versions[1:]]
                  if Property.MIGRATIONS in properties else [])
        return static + self._example_units(properties)

    def _example_units(self, properties: Sequence[Property]) -> list[Unit]:
        if self._routes:
            return self._route_units(properties)
        several = len(self._by_name) > 1
        out: list[Unit] = []
        for kind, schema in self._by_name.items():
            roles = self.api.roles(schema)
            for prop in PROPERTIES:
                if prop not in properties or prop is Property.MIGRATIONS:
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
                if prop not in properties or prop is Property.MIGRATIONS:
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
        return self._target(unit)[0]

    def strategy(self, unit: Unit) -> Any:
        if unit.property is Property.MIGRATIONS:
            from hypothesis import strategies as st

            return st.just(None)  # one run: the code does not depend on an example
        schema = self._schema(unit)
        source = unit.versions[0]
        key = (unit.kind, source)
        if key not in self._strategies:
            self._strategies[key] = request_bodies(self.api, schema, source,
                                                   overrides=self.overrides)
        return self._strategies[key]

    def check(self, unit: Unit, example: Any) -> None:
        if unit.property is Property.MIGRATIONS:
            found = check_version(self.api, unit.versions[0])
            if found:
                raise MigrationCodeError(found)
            return
        schema, route = self._target(unit)
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

    def __repr__(self) -> str:
        return f"CadwynSuite({self.name!r}, {self.api!r})"
