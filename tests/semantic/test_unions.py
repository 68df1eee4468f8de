"""``anyOf``/``oneOf`` branches: ``$ref`` and nested unions are recognised, and which branch
compares a value never depends on the order the branches are listed in."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.semantic import canonicalise, diff, equal
from compatfuzz.semantic._api import compiled

DEFS = {
    "Obj": {"type": "object", "properties": {"x": {"type": "integer"}}},
    "Time": {"type": "string", "format": "date-time"},
    "Alias": {"$ref": "#/$defs/Time"},
    "Quantity": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                 "x-kubernetes-int-or-string": True,
                 "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
                            r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|"
                            r"(\.[0-9]+))))?$"},
    "Dur": {"type": "string", "format": "duration"},
}
A, B = "2024-01-01T10:00:00+01:00", "2024-01-01T09:00:00Z"


def union(kind: str, *branches: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"u": {kind: list(branches)}}, "$defs": DEFS}


REF_OBJ, REF_TIME = {"$ref": "#/$defs/Obj"}, {"$ref": "#/$defs/Time"}


@pytest.mark.parametrize("kind", ["oneOf", "anyOf"])
@pytest.mark.parametrize("branches", [
    [REF_OBJ, REF_TIME], [REF_TIME, REF_OBJ], [REF_OBJ, {"$ref": "#/$defs/Alias"}],
    [{"anyOf": [{"type": "number"}]}, {"type": "string", "format": "date-time"}],
    [{"oneOf": [REF_OBJ, {"anyOf": [REF_TIME]}]}, {"type": "integer"}],
    [{"allOf": [REF_TIME]}, REF_OBJ],
])
def test_ref_and_nested_union_branches_are_recognised(kind: str, branches: list[Any]) -> None:
    """Used to be False for [$ref Obj, $ref Time] and for nested unions: a $ref branch had
    no known type and took every value, comparing the times as strings."""
    schema = union(kind, *branches)
    assert equal({"u": A}, {"u": B}, schema=schema)
    assert canonicalise({"u": A}, schema=schema) == {"u": "2024-01-01T09:00:00Z"}
    assert not equal({"u": A}, {"u": "2024-01-01T10:00:00Z"}, schema=schema)


@pytest.mark.parametrize("branches", [[REF_TIME, REF_OBJ], [REF_OBJ, REF_TIME]])
def test_object_branch_behind_a_ref_keeps_struct_semantics(branches: list[Any]) -> None:
    """``{}`` under an object-with-properties branch is a zero struct, not absent (it was
    equal to absent when the time branch was listed first and took every value)."""
    schema = union("oneOf", *branches)
    assert not equal({"u": {}}, {}, schema=schema)
    assert equal({"u": {"x": 1}}, {"u": {"x": 1}}, schema=schema)
    assert not equal({"u": {"x": 1}}, {"u": {"x": 1.0}}, schema=schema)


BRANCHES: list[Any] = [
    {"type": "integer"}, {"type": "number"}, {"type": "string"},
    {"type": "string", "format": "date-time"}, {"$ref": "#/$defs/Dur"},
    {"$ref": "#/$defs/Quantity"}, REF_OBJ, {}, {"type": "boolean"},
    {"type": "array", "items": {"type": "number"}, "x-kubernetes-list-type": "set"},
]
VALUES = [1, 1.0, 2, "1", "1000m", "1k", 1000, A, B, "P1W", "P7D", True, {}, {"x": 1}, None,
          [1, 2.0], [2, 1], "x", 0.5, "500m"]


@given(st.lists(st.sampled_from(range(len(BRANCHES))), min_size=1, max_size=4, unique=True),
       st.sampled_from(VALUES), st.sampled_from(VALUES))
def test_branch_order_never_changes_the_answer(picks: list[int], a: Any, b: Any) -> None:
    answers = set()
    for order in itertools.permutations(picks):
        schema = union("anyOf", *(BRANCHES[i] for i in order))
        answers.add((equal({"u": a}, {"u": b}, schema=schema),
                     repr(canonicalise({"u": a}, schema=schema)),
                     len(diff({"u": a}, {"u": b}, schema=schema)) == 0))
    assert len(answers) == 1, answers


@pytest.mark.parametrize("branches", [
    [{"type": "integer"}, {"type": "number"}], [{"type": "number"}, {"type": "integer"}],
])
def test_integer_and_number_branches_compare_1_and_1_0_equal_in_any_order(
        branches: list[Any]) -> None:
    """The number branch admits integers and is more specific than exact comparison, so it
    takes both 1 and 1.0 (``anyOf: [integer, number]`` used to say 1 != 1.0, the reverse
    order 1 == 1.0)."""
    schema = union("anyOf", *branches)
    assert equal({"u": 1}, {"u": 1.0}, schema=schema)
    assert not equal({"u": 1}, {"u": "1"}, schema=schema)
    assert not equal({"u": True}, {"u": 1}, schema=schema)


@given(st.sampled_from(VALUES), st.sampled_from(VALUES), st.sampled_from(VALUES))
def test_union_equality_is_an_equivalence_and_agrees_with_keys(a: Any, b: Any, c: Any) -> None:
    schema = union("anyOf", *BRANCHES)
    root = compiled(schema)
    for x, y in ((a, b), (b, c), (a, c)):
        assert root.eq({"u": x}, {"u": y}) == (root.key({"u": x}) == root.key({"u": y}))
    if equal({"u": a}, {"u": b}, schema=schema) and equal({"u": b}, {"u": c}, schema=schema):
        assert equal({"u": a}, {"u": c}, schema=schema)


@pytest.mark.parametrize("formats", [["date-time", "duration"], ["duration", "date-time"]])
def test_union_beside_a_type_reads_each_branch_with_it(formats: list[str]) -> None:
    """``type: string, anyOf: [{format: date-time}, {format: duration}]`` used to ignore
    the union and compare every string exactly."""
    schema = {"type": "object", "properties": {"u": {
        "type": "string", "anyOf": [{"format": f} for f in formats]}}}
    assert equal({"u": A}, {"u": B}, schema=schema)
    assert equal({"u": "P1W"}, {"u": "P7D"}, schema=schema)
    assert not equal({"u": "P1D"}, {"u": "PT24H"}, schema=schema)
    assert not equal({"u": "x"}, {"u": "y"}, schema=schema)
