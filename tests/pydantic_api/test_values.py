"""Equality as pydantic means it (``canonical``), validity as pydantic judges it, and the
strategy of accepted documents."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from compatfuzz.errors import NotEquivalent
from compatfuzz.pydantic import (
    canonical,
    equivalent,
    expect_equivalent,
    expect_valid,
    model_diff,
    model_schema,
    model_strategy,
    validation_errors,
)


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Part(BaseModel):
    name: str = Field(min_length=1, max_length=8)
    weight: Decimal = Field(ge=0, max_digits=6, decimal_places=3)


class Thing(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    id: UUID
    at: dt.datetime
    price: Decimal = Field(max_digits=8, decimal_places=2)
    colour: Colour = Colour.RED
    note: str | None = None
    display_name: str = Field(alias="displayName", default="")
    parts: list[Part] = []
    tags: set[str] = set()


BASE = {"id": "0b2c1d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d", "at": "2026-01-01T00:00:00Z",
        "price": "1.50"}


def _with(**changes: Any) -> dict[str, Any]:
    out = dict(BASE)
    out.update(changes)
    return out


@pytest.mark.parametrize(("a", "b"), [
    (_with(at="2026-01-01T00:00:00Z"), _with(at="2026-01-01T00:00:00+00:00")),
    (_with(at="2026-01-01T01:30:00+01:30"), _with(at="2026-01-01T00:00:00Z")),
    (_with(at="0001-01-01T00:30:00+01:00"), _with(at="0001-01-01T01:30:00+02:00")),
    (_with(price="1.5"), _with(price=1.5)),
    (_with(price="2"), _with(price="2.00")),
    (_with(id=BASE["id"].upper()), BASE),
    (BASE, _with(colour="red", note=None, parts=[], tags=[])),  # defaults, explicit
    (_with(displayName="x"), _with(display_name="x")),  # alias and field name
    (_with(tags=["a", "b", "c"]), _with(tags=["c", "a", "b"])),  # a set
])
def test_documents_that_mean_the_same_are_equivalent(a: Any, b: Any) -> None:
    assert equivalent(Thing, a, b)
    assert model_diff(Thing, a, b) == []


@pytest.mark.parametrize(("a", "b", "path"), [
    (_with(note="hi"), BASE, "note"),  # lost: back to the default
    (_with(at="2026-01-01T00:00:00Z"), _with(at="2026-01-01T00:00:00"), "at"),  # naive
    (_with(at="2026-01-01T00:00:00Z"), _with(at="2026-01-01T00:00:01Z"), "at"),
    (_with(at="0001-01-01T00:30:00+01:00"), _with(at="0001-01-01T00:30:00+02:00"), "at"),
    (_with(price="1.50"), _with(price="1.51"), "price"),
    (_with(colour="blue"), BASE, "colour"),
    (_with(parts=[{"name": "a", "weight": 1}]), _with(parts=[]), "parts[0]"),
    (_with(parts=[{"name": "a", "weight": 1}]), _with(parts=[{"name": "a", "weight": 1.5}]),
     "parts[0].weight"),
])
def test_a_changed_or_lost_field_is_reported_by_its_path(a: Any, b: Any, path: str) -> None:
    assert not equivalent(Thing, a, b)
    assert [c.path for c in model_diff(Thing, a, b)] == [path]
    with pytest.raises(NotEquivalent, match=path.replace("[", r"\[")):
        expect_equivalent(Thing, a, b, "changed")


@given(model_strategy(Thing))
def test_every_drawn_document_is_accepted_and_means_its_own_dump(doc: Any) -> None:
    assert validation_errors(Thing, doc) == []
    dumped = Thing.model_validate_json(json.dumps(doc)).model_dump(mode="json", by_alias=True)
    assert equivalent(Thing, doc, dumped)
    assert canonical(Thing, canonical(Thing, doc)) == canonical(Thing, doc)  # idempotent


@given(model_strategy(Thing), st.integers(-23 * 60, 23 * 60))
def test_the_same_instant_in_any_offset_is_equivalent(doc: Any, minutes: int) -> None:
    at = Thing.model_validate_json(json.dumps(doc)).at
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.timezone.utc)
    try:
        moved = at.astimezone(dt.timezone(dt.timedelta(minutes=minutes)))
    except OverflowError:  # the same instant is outside years 1-9999 in that offset
        assume(False)
    shifted = dict(doc, at=at.isoformat())
    assert equivalent(Thing, shifted, dict(doc, at=moved.isoformat()))


@given(model_strategy(Thing), st.text(min_size=1, max_size=5))
def test_a_lost_or_changed_field_is_caught(doc: Any, note: str) -> None:
    with_note = dict(doc, note=note)
    assert not equivalent(Thing, with_note, {k: v for k, v in doc.items() if k != "note"}
                          | {"note": None})
    changes = model_diff(Thing, with_note, dict(doc, note=note + "x"))
    assert [c.path for c in changes] == ["note"]


def test_invalid_documents_are_reported_with_pydantic_errors_naming_the_field() -> None:
    bad = _with(price="abc", parts=[{"name": ""}])
    errors = validation_errors(Thing, bad)
    assert "price: Input should be a valid decimal (got \"abc\")" in errors
    assert any(e.startswith("parts[0].name: String should have at least 1 character")
               for e in errors)
    assert any(e.startswith("parts[0].weight: Field required") for e in errors)
    with pytest.raises(NotEquivalent, match=r"out:\n  price: Input should be a valid"):
        expect_valid(Thing, bad, "out")


def test_decimal_constraints_become_a_pattern_the_generator_honours() -> None:
    weight = model_schema(Part)["properties"]["weight"]
    assert weight["anyOf"][1] == {"type": "string", "pattern": r"^\d{1,3}(\.\d{1,3})?$"}
    assert weight["anyOf"][0] == {"type": "integer", "minimum": 0.0, "maximum": 999}
    # serialization mode keeps pydantic's own form: what a server sends
    assert model_schema(Part, "serialization")["properties"]["weight"]["type"] == "string"


@given(model_strategy(Thing, shape="response"))
def test_response_documents_are_what_the_model_sends(doc: Any) -> None:
    import jsonschema

    jsonschema.validate(doc, model_schema(Thing, "serialization"))
    assert isinstance(doc["price"], str)  # a Decimal is sent as a string
    # read back, it means itself (a set's order in the dump is hash order, not meaning)
    assert equivalent(Thing, doc, Thing.model_validate_json(json.dumps(doc)).model_dump(
        mode="json", by_alias=True))
