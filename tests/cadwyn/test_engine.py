"""One engine for Python models (issue 20): Cadwyn bodies are drawn by the pydantic family's
``model_strategy`` and the round trip is judged by its ``model_diff``, so a body means the
same in both families; only the blame (the VersionChange, the migration) is Cadwyn's."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

pytest.importorskip("cadwyn")

from cadwyn import (
    RequestInfo,
    ResponseInfo,
    Version,
    VersionBundle,
    VersionChange,
    convert_request_to_next_version_for,
    convert_response_to_previous_version_for,
    schema,
)
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, ConfigDict, Field

from compatfuzz.cadwyn import (
    CadwynAPI,
    LostInRoundTrip,
    check_request_roundtrip,
    request_bodies,
)
from compatfuzz.pydantic import model_diff


class Ticket(BaseModel):
    """HEAD: strict, as many services declare their models; a UUID arrives as JSON text."""

    model_config = ConfigDict(strict=True)

    id: uuid.UUID
    opened_at: dt.datetime
    labels: dict[str, str] = Field(default_factory=dict)


def _bundle(up: Any = None, down: Any = None) -> VersionBundle:
    """2000-01-01 called ``opened_at`` ``opened``; ``up``/``down`` replace the correct
    migrations' extra work (``up(body)``/``down(body)`` after the rename)."""

    class RenameOpened(VersionChange):
        description = "opened -> opened_at"
        instructions_to_migrate_to_previous_version = (
            schema(Ticket).field("opened_at").had(name="opened"),
        )

        @convert_request_to_next_version_for(Ticket)
        def rename_up(request: RequestInfo) -> None:
            request.body["opened_at"] = request.body.pop("opened")
            if up is not None:
                up(request.body)

        @convert_response_to_previous_version_for(Ticket)
        def rename_down(response: ResponseInfo) -> None:
            response.body["opened"] = response.body.pop("opened_at")
            if down is not None:
                down(response.body)

    return VersionBundle(Version("2001-01-01", RenameOpened), Version("2000-01-01"))


def _to_utc(body: dict[str, Any]) -> None:
    """What a service does before storing: the same instant, in UTC."""
    body["opened_at"] = body["opened_at"].astimezone(dt.timezone.utc)


def _drop_labels(body: dict[str, Any]) -> None:
    body["labels"] = {k: v for k, v in body["labels"].items() if not k.startswith("x")}


@settings(max_examples=40, database=None, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(body=request_bodies(CadwynAPI(_bundle(up=_to_utc)), Ticket, "2000-01-01"))
def test_a_strict_models_json_bodies_are_drawn_and_migrated(body: dict[str, Any]) -> None:
    # pydantic reads a JSON body in JSON mode, where a strict UUID may be a string: the
    # old strategy validated in Python mode and could draw none of these
    uuid.UUID(body["id"])
    api = CadwynAPI(_bundle(up=_to_utc))
    # the same instant in UTC is what the client sent, as pydantic's datetime.__eq__ says
    check_request_roundtrip(api, Ticket, "2000-01-01", body)


def test_the_same_instant_in_another_offset_is_no_loss() -> None:
    api = CadwynAPI(_bundle(up=_to_utc))
    body = {"id": str(uuid.UUID(int=7)), "opened": "2020-01-01T01:00:00+01:00"}
    back = check_request_roundtrip(api, Ticket, "2000-01-01", body).body
    assert back["opened"] == "2020-01-01T00:00:00Z"
    assert model_diff(api.model(Ticket, "2000-01-01"), body, back) == []


def test_another_instant_is_a_loss_named_by_field() -> None:
    def shift(body: dict[str, Any]) -> None:  # the offset dropped, the wall clock kept
        body["opened_at"] = body["opened_at"].replace(tzinfo=dt.timezone.utc)

    api = CadwynAPI(_bundle(up=shift))
    body = {"id": str(uuid.UUID(int=7)), "opened": "2020-01-01T01:00:00+01:00"}
    with pytest.raises(LostInRoundTrip) as info:
        check_request_roundtrip(api, Ticket, "2000-01-01", body)
    message = str(info.value)
    assert "opened:" in message
    assert "RenameOpened.rename_up (version 2001-01-01)" in message
    assert [c.path for c in info.value.diff] == ["opened"]


def test_a_nested_loss_is_named_by_its_field_path_and_blamed_on_its_migration() -> None:
    api = CadwynAPI(_bundle(up=_drop_labels))
    body = {"id": str(uuid.UUID(int=7)), "opened": "2020-01-01T00:00:00Z",
            "labels": {"team": "a", "xkey": "b"}}
    with pytest.raises(LostInRoundTrip) as info:
        check_request_roundtrip(api, Ticket, "2000-01-01", body)
    assert [(c.path, str(c.kind)) for c in info.value.diff] == [("labels.xkey", "lost")]
    message = str(info.value)
    assert 'labels.xkey: lost: "b" -> (absent: key removed)' in message
    assert "`labels` was changed by: RenameOpened.rename_up (version 2001-01-01)" in message
