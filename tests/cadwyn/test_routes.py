"""Given the Cadwyn app (issue 20, item 2): roles come from its routes, units are named after
its endpoints, and a route's path-based migrations run with the schema-based ones; a path
migration that loses a field is caught and a right one passes. The bundle form is unchanged
(tests/cadwyn/test_bundle.py, test_roles.py)."""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cadwyn")

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
from pydantic import BaseModel, Field

from compatfuzz.cadwyn import CadwynAPI, LostInRoundTrip, Route, check_request_roundtrip
from compatfuzz.cadwyn._suite import CadwynSuite
from compatfuzz.roundtrip import Property, Status, UnitFinished, run

SHOP = Path(__file__).resolve().parents[2] / "examples" / "cadwyn_shop"
# Cadwyn 8 warns unless its changelog is off; Cadwyn 9 warns when the argument is given
_CHANGELOG_OFF: dict[str, Any] = (
    {"changelog_url": None} if int(version("cadwyn").split(".")[0]) < 9 else {})


class Note(BaseModel):
    text: str
    tags: list[str] = Field(default_factory=list)


def _app(*, lossy: bool) -> Cadwyn:
    """2000-01-01 had one optional ``label`` where HEAD has ``tags``; the migrations are
    path-based (``POST /notes``), as Cadwyn's docs write migrations for one endpoint."""

    class TagsFromLabel(VersionChange):
        description = "label -> tags"
        instructions_to_migrate_to_previous_version = (
            schema(Note).field("tags").didnt_exist,
            schema(Note).field("label").existed_as(type=str | None, info=Field(default=None)),
        )

        @convert_request_to_next_version_for("/notes", ["POST"])
        def label_to_tags(request: RequestInfo) -> None:
            label = request.body.pop("label", None)
            # the lossy one forgets the label: the old client's label is gone
            request.body["tags"] = [] if label is None or lossy else [label]

        @convert_response_to_previous_version_for("/notes", ["POST"])
        def tags_to_label(response: ResponseInfo) -> None:
            tags = response.body.pop("tags")
            response.body["label"] = tags[0] if tags else None

    bundle = VersionBundle(Version("2001-01-01", TagsFromLabel), Version("2000-01-01"))
    router = VersionedAPIRouter()

    @router.post("/notes", response_model=Note)
    async def create_note(note: Note) -> Note:
        return note

    app = Cadwyn(versions=bundle, **_CHANGELOG_OFF)
    app.generate_and_include_versioned_routers(router)
    return app


def _results(api: CadwynAPI) -> dict[str, Status]:
    suite = CadwynSuite("notes", api)
    return {e.result.unit.id: e.result.status for e in run(suite, database="none", seed=0)
            if isinstance(e, UnitFinished)}


def test_a_right_path_migration_passes() -> None:
    api = CadwynAPI(_app(lossy=False))
    assert api.routes == (Route("create_note", "/notes", frozenset({"POST"}), Note, Note),)
    assert _results(api) == {
        f"notes::create_note::{unit}": Status.PASSED
        for v in ("2000-01-01", "2001-01-01")
        for unit in (f"roundtrip[{v}->head]", f"valid[{v}->head]", f"valid[head->{v}]")
    } | {"notes::migrations[2001-01-01]": Status.PASSED}


def test_a_path_migration_that_loses_a_field_is_caught_and_named() -> None:
    api = CadwynAPI(_app(lossy=True))
    assert _results(api)["notes::create_note::roundtrip[2000-01-01->head]"] is Status.FAILED
    route = api.routes[0]
    with pytest.raises(LostInRoundTrip) as info:
        check_request_roundtrip(api, Note, "2000-01-01", {"text": "", "label": "x"},
                                route=route)
    message = str(info.value)
    assert 'label: type-changed: "x" -> null' in message, message
    assert "TagsFromLabel.label_to_tags (version 2001-01-01)" in message


def test_roles_and_units_come_from_the_apps_routes() -> None:
    sys.modules.pop("shop", None)
    sys.modules.pop("shop.app", None)
    sys.path.insert(0, str(SHOP))
    try:
        from shop.app import app
        from shop.schemas import Customer, CustomerResource
    finally:
        sys.path.remove(str(SHOP))
    api = CadwynAPI(app)
    assert [(r.name, r.path, r.body, r.response) for r in api.routes] == [
        ("create_customer", "/customers", Customer, CustomerResource),
        ("get_customer", "/customers/{customer_id}", None, CustomerResource),
    ]
    # the bundle's migrations name Customer both ways; the routes only ever take it
    assert api.roles(Customer) == {"request"}
    assert api.roles(CustomerResource) == {"response"}
    units = [u.id for u in CadwynSuite("shop", api).units([Property.ROUNDTRIP,
                                                           Property.VALID])]
    assert units[:2] == ["shop::create_customer::valid[2023-01-01->head]",
                         "shop::create_customer::valid[head->2023-01-01]"]
    assert "shop::get_customer::valid[head->2024-01-01]" in units
    assert not any("get_customer::valid[2" in u or "roundtrip" in u for u in units)
