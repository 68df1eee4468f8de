"""A Cadwyn app whose routes take a header, a query and a cookie parameter, and whose request
migrations rewrite them for old clients (tests/cadwyn/test_route_params.py).

``PARAMS_BUG`` (read at import) writes in one bug: ``absent`` (the create migration reads
the optional ``tag`` query parameter as if every client sent it), ``rescale`` (the create
migration doubles old clients' ``x-priority`` header past what HEAD allows), ``cookie``
(the read migration reads the optional ``session`` cookie as if it were always there);
unset, the app is right."""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Annotated

from cadwyn import (
    Cadwyn,
    RequestInfo,
    Version,
    VersionBundle,
    VersionChange,
    VersionedAPIRouter,
    convert_request_to_next_version_for,
)
from fastapi import Cookie, Header, Query
from pydantic import BaseModel

BUG = os.environ.get("PARAMS_BUG", "")


class ThingCreate(BaseModel):
    name: str


class ThingResource(ThingCreate):
    id: int
    tag: str | None = None
    priority: int = 5


class LowerTagsAndFinerPriority(VersionChange):
    description = "tags are lower case; x-priority went from 0-4 to 0-9"
    instructions_to_migrate_to_previous_version = ()

    @convert_request_to_next_version_for("/things", ["POST"])
    def tag_and_priority_up(request: RequestInfo) -> None:
        if BUG == "absent" or "tag" in request.query_params:
            request.query_params["tag"] = request.query_params["tag"].lower()
        if "x-priority" in request.headers:
            old = int(request.headers["x-priority"])
            request.headers["x-priority"] = str(old * 2 if BUG == "rescale" else min(9, old * 2))

    @convert_request_to_next_version_for("/things/{thing_id}", ["GET"])
    def session_up(request: RequestInfo) -> None:
        if BUG == "cookie" or "session" in request.cookies:
            request.cookies["session"] = request.cookies["session"].strip()


bundle = VersionBundle(Version("2001-01-01", LowerTagsAndFinerPriority), Version("2000-01-01"))
router = VersionedAPIRouter()
_things: dict[int, ThingResource] = {}


@router.post("/things", response_model=ThingResource, status_code=201)
async def create_thing(thing: ThingCreate,
                       tag: Annotated[str | None, Query(max_length=12)] = None,
                       x_priority: Annotated[int, Header(ge=0, le=9)] = 5) -> ThingResource:
    ident = len(_things) + 1
    _things[ident] = ThingResource(id=ident, name=thing.name, tag=tag, priority=x_priority)
    return _things[ident]


@router.get("/things/{thing_id}", response_model=ThingResource)
async def get_thing(thing_id: int,
                    session: Annotated[str | None, Cookie()] = None) -> ThingResource:
    return _things[thing_id]


def reset() -> None:
    _things.clear()


_OFF = {"changelog_url": None} if int(version("cadwyn").split(".")[0]) < 9 else {}
app = Cadwyn(versions=bundle, **_OFF)
app.generate_and_include_versioned_routers(router)
