"""``PydanticAPI`` in Python: the converter forms (per pair, ``convert``, hub), model
instances in and out, and the mistakes a converter or a declaration can make."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_serializer

from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent
from compatfuzz.pydantic import PydanticAPI, model_input
from compatfuzz.roundtrip import Property, Status, Unit, UnitFinished, run, units


class A(BaseModel):
    name: str = Field(min_length=1, max_length=5)
    size: int = Field(ge=0, le=9)


class B(BaseModel):
    title: str = Field(min_length=1, max_length=5)
    size: int = Field(ge=0, le=9)


def a_to_b(doc: dict[str, Any]) -> dict[str, Any]:
    return {"title": doc["name"], "size": doc["size"]}


def b_to_a(b: B) -> A:  # gets a B instance, returns an A instance
    return A(name=b.title, size=b.size)


def _statuses(api: PydanticAPI) -> dict[str, Status]:
    return {e.result.unit.id: e.result.status
            for e in run(api, database="none", seed=1, max_examples=30)
            if isinstance(e, UnitFinished)}


def test_pairs_with_dicts_and_models_pass() -> None:
    api = PydanticAPI("things", {"a": A, "b": B},
                      converters={("a", "b"): a_to_b, ("b", "a"): b_to_a})
    assert model_input(b_to_a) is B and model_input(a_to_b) is None
    assert set(_statuses(api).values()) == {Status.PASSED}
    assert api.convert({"title": "x", "size": 1}, "b", "a") == {"name": "x", "size": 1}


def test_convert_and_hub_forms() -> None:
    def convert(doc: dict[str, Any], target: str) -> dict[str, Any]:
        return a_to_b(doc) if target == "b" else {"name": doc["title"], "size": doc["size"]}

    def to_hub(doc: dict[str, Any]) -> dict[str, Any]:
        return a_to_b(doc)

    def from_hub(doc: dict[str, Any], version: str) -> dict[str, Any]:
        return {"name": doc["title"], "size": doc["size"]}

    for api in (PydanticAPI("t", {"a": A, "b": B}, convert=convert),
                PydanticAPI("t", {"a": A, "b": B}, to_hub=to_hub, from_hub=from_hub,
                            hub="b")):
        assert set(_statuses(api).values()) == {Status.PASSED}


def test_a_lossy_converter_fails_roundtrip_with_the_field_path() -> None:
    api = PydanticAPI("t", {"a": A, "b": B}, converters={
        ("a", "b"): a_to_b, ("b", "a"): lambda d: {"name": d["title"], "size": 0}})
    with pytest.raises(NotEquivalent, match=r"a -> b -> a did not give back the original:"
                                            r"\n  size: changed: 3 -> 0"):
        api.check(Unit("t", "A", Property.ROUNDTRIP, ("a", "b")), {"name": "x", "size": 3})
    assert _statuses(api)["t::roundtrip[a->b]"] is Status.FAILED


@pytest.mark.parametrize(("returned", "message"), [
    ({1, 2}, r"returned \{1, 2\} \(set\) at the top level"),
    ({"title": float("nan"), "size": 1}, "a float nan at title"),
])
def test_a_converter_returning_what_json_cannot_hold_is_a_converter_error(
        returned: Any, message: str) -> None:
    api = PydanticAPI("t", {"a": A, "b": B}, converters={("a", "b"): lambda d: returned})
    with pytest.raises(ConverterError, match=message):
        api.convert({"name": "x", "size": 1}, "a", "b")


def test_a_model_typed_converter_given_an_invalid_document_says_so() -> None:
    api = PydanticAPI("t", {"a": A, "b": B}, converters={
        ("a", "b"): lambda d: {"title": "", "size": 1}, ("b", "a"): b_to_a})
    with pytest.raises(ConverterError, match=r"its input is not a valid B .*title: String "
                                             "should have at least 1 character"):
        api.convert({"title": "", "size": 1}, "b", "a")
    with pytest.raises(NotEquivalent, match="a -> b output is not a valid b B:\n  title:"):
        api.check(Unit("t", "A", Property.VALID, ("a", "b")), {"name": "x", "size": 1})


def test_declaration_mistakes() -> None:
    with pytest.raises(InvalidArgument, match="pydantic BaseModel subclass for version 'b'"):
        PydanticAPI("t", {"a": A, "b": dict})  # type: ignore[dict-item]
    with pytest.raises(InvalidArgument, match="need hub="):
        PydanticAPI("t", {"a": A, "b": B}, to_hub=a_to_b, from_hub=a_to_b)
    with pytest.raises(InvalidArgument, match="short API name"):
        PydanticAPI("a::b", {"a": A})
    # without converters, only each version's own encodings round trip is checked
    assert [u.id for u in units(PydanticAPI("t", {"a": A, "b": B}))] == [
        "t::encodings[a]", "t::encodings[b]"]


class Renamed(BaseModel):
    """Sends ``userName`` but reads only ``user``: every stored document fails to load."""

    user: str = Field(serialization_alias="userName")


class Rounded(BaseModel):
    """Sends the amount rounded to whole units: what it reads back has changed."""

    amount: Decimal = Field(max_digits=6, decimal_places=2)

    @field_serializer("amount")
    def whole(self, value: Decimal) -> str:
        return str(round(value))


@pytest.mark.parametrize(("model", "message"), [
    (Renamed, r"what v1 sends \(model_dump_json\) it does not read back as the same: the "
              r"result is not a valid Renamed:\n  user: Field required"),
    (Rounded, r"what v1 sends \(model_dump_json\) it does not read back as the same:\n"
              r"  amount: changed"),
])
def test_encodings_catches_a_model_that_cannot_read_what_it_sends(
        model: type[BaseModel], message: str) -> None:
    api = PydanticAPI("t", {"v1": model})
    (result,) = [e.result for e in run(api, database="none", seed=1)
                 if isinstance(e, UnitFinished)]
    assert result.unit.id == "t::encodings[v1]" and result.status is Status.FAILED
    assert re.search(message, result.message or ""), result.message
