"""Issue 10, item 2: ``no_mutation`` shows the exact change a converter made to its input,
even one semantic equality calls no change (an empty list popped)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import NotEquivalent
from compatfuzz.roundtrip import API, Property, Unit, check

SCHEMA = {"type": "object", "properties": {
    "items": {"type": "array", "items": {"type": "string"}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}


def _pops_empty(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    if obj.get("items") == []:
        obj.pop("items")  # mutates the caller's object
    return dict(obj)


def test_popping_an_empty_list_is_shown_literally() -> None:
    api = API.from_schemas("orders", {"v1": SCHEMA, "v2": SCHEMA}, convert=_pops_empty)
    unit = Unit("orders", "orders", Property.NO_MUTATION, ("v1", "v2"))
    with pytest.raises(NotEquivalent) as info:
        check(api, unit, {"items": [], "labels": {}})
    message = str(info.value)
    assert message.startswith("converting v1 -> v2 mutated its input:\n")
    assert "items: lost: [] -> (absent: key removed)" in message
    assert [(c.path, str(c.kind), c.old, c.new) for c in info.value.diff] == [
        ("items", "lost", [], None)]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(0.5, 2) | st.text(max_size=2),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=8,
)


@given(JSON, JSON)
def test_literal_diff_is_empty_exactly_when_the_json_texts_match(a: Any, b: Any) -> None:
    from compatfuzz.roundtrip._check._verdict import literal_diff

    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert (literal_diff(a, b) == []) == same


@given(JSON)
def test_literal_diff_of_a_value_with_itself_is_empty(a: Any) -> None:
    from compatfuzz.roundtrip._check._verdict import literal_diff

    assert literal_diff(a, a) == []
