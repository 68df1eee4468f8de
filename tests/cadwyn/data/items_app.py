"""A Cadwyn app checked through its routes (tests/cadwyn/test_route_properties.py): create
and response schemas apart (``ItemCreate``, ``ItemResource``), both inheriting the fields the
instruction renames from ``ItemBase``, a nested model, path-based request migrations on two
routes and a schema-based response migration.

``ITEMS_BUG`` (read at import) writes in one bug: ``drop`` (the response migration loses the
renamed field), ``route`` (the PUT route's path-based migration is missing: old clients'
``color`` is dropped there), ``history`` (the response migration remembers the first colour
it ever saw: a failure that needs earlier requests), ``typo`` (the PUT migration's path is
``/item/{item_id}``, which no route serves), ``status`` (the response migration answers old
clients' creates 200 where the route declares 201); unset, the app is right.
``ITEMS_IDS=uuid`` names items by ``uuid4`` instead of a counter."""

from __future__ import annotations

import os
import uuid
from importlib.metadata import version

from cadwyn import (
    Cadwyn,
    RequestInfo,
    ResponseInfo,
    Version,
    VersionBundle,
    VersionChange,
    VersionedAPIRouter,
    convert_request_to_next_version_for,
    convert_response_to_previous_version_for,
    schema,
)
from pydantic import BaseModel

BUG = os.environ.get("ITEMS_BUG", "")
#: ``uuid``: the app names items by ``uuid4`` (as Cadwyn's tutorial does), else by a counter
UUID_IDS = os.environ.get("ITEMS_IDS", "") == "uuid"
Ident = str if UUID_IDS else int


class Dimensions(BaseModel):
    width: int
    height: int


class ItemBase(BaseModel):
    name: str
    colour_code: str | None = None
    dims: Dimensions | None = None


class ItemCreate(ItemBase):
    pass


class ItemResource(ItemBase):
    id: Ident  # type: ignore[valid-type]


_last: dict[str, str | None] = {}


class RenameColour(VersionChange):
    description = "`color` is `colour_code`"
    instructions_to_migrate_to_previous_version = (
        schema(ItemBase).field("colour_code").had(name="color"),
    )

    @convert_request_to_next_version_for("/items", ["POST"])
    def color_up(request: RequestInfo) -> None:
        request.body["colour_code"] = request.body.pop("color", None)

    if BUG != "route":  # the PUT route's old clients send `color` too
        @convert_request_to_next_version_for(
            "/item/{item_id}" if BUG == "typo" else "/items/{item_id}", ["PUT"])
        def color_up_on_put(request: RequestInfo) -> None:
            request.body["colour_code"] = request.body.pop("color", None)

    @convert_response_to_previous_version_for(ItemResource)
    def colour_down(response: ResponseInfo) -> None:
        if BUG == "status" and response.status_code == 201:
            response.status_code = 200  # old clients got 200, but the route says 201
        colour = response.body.pop("colour_code")
        if BUG == "drop":  # the response migration loses the field old clients sent
            colour = None
        if BUG == "history":  # remembers the first colour it ever saw
            colour = _last.setdefault("colour", colour)
        response.body["color"] = colour


bundle = VersionBundle(Version("2001-01-01", RenameColour), Version("2000-01-01"))
router = VersionedAPIRouter()
_items: dict[Ident, ItemCreate] = {}  # type: ignore[valid-type]


@router.post("/items", response_model=ItemResource, status_code=201)
async def create_item(item: ItemCreate) -> ItemResource:
    ident = str(uuid.uuid4()) if UUID_IDS else len(_items) + 1
    _items[ident] = item
    return ItemResource(id=ident, **item.model_dump())


@router.get("/items/{item_id}", response_model=ItemResource)
async def get_item(item_id: Ident) -> ItemResource:  # type: ignore[valid-type]
    return ItemResource(id=item_id, **_items[item_id].model_dump())


@router.put("/items/{item_id}", response_model=ItemResource)
async def put_item(item_id: Ident, item: ItemCreate) -> ItemResource:  # type: ignore[valid-type]
    _items[item_id] = item
    return ItemResource(id=item_id, **item.model_dump())


def reset() -> None:
    _items.clear()


_OFF = {"changelog_url": None} if int(version("cadwyn").split(".")[0]) < 9 else {}
app = Cadwyn(versions=bundle, **_OFF)
app.generate_and_include_versioned_routers(router)
