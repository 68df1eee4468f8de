"""Coverage of generated objects: leaf paths that carried a value and edge classes hit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from compatfuzz.schema import Schema
from compatfuzz.strategies import Coverage, from_schema
from compatfuzz.strategies._coverage import edge_classes

QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE])?$",
            "x-kubernetes-int-or-string": True}
SCHEMA = Schema({"type": "object", "properties": {
    "n": {"type": "integer", "minimum": 0, "maximum": 10},
    "big": {"type": "integer"},
    "s": {"type": "string", "maxLength": 5},
    "q": QUANTITY,
    "when": {"type": "string", "format": "date-time"},
    "d": {"type": "string", "format": "duration"},
    "on": {"type": "boolean"},
    "list": {"type": "array", "items": {"type": "object", "properties": {
        "x": {"type": "number"}}}},
}}, kubernetes=True)


@pytest.mark.parametrize(("kind", "value", "node", "want"), [
    ("integer", 0, {}, {"int:zero"}),
    ("integer", -1, {}, {"int:one"}),
    ("integer", 9, {"maximum": 10}, {"int:bound"}),
    ("integer", 2**53 + 1, {}, {"int:2^53"}),
    ("integer", -(2**63), {}, {"int:int64"}),
    ("integer", 2**31, {}, {"int:2^31"}),
    ("string", "", {}, {"string:empty"}),
    ("string", "12345", {"maxLength": 5}, {"string:digits", "string:max-length"}),
    ("string", "a\U0001F600", {}, {"string:non-ascii", "string:astral"}),
    ("quantity", "1Gi", {}, {"quantity:binary-suffix"}),
    ("quantity", "5m", {}, {"quantity:decimal-suffix"}),
    ("quantity", "1e3", {}, {"quantity:exponent"}),
    ("quantity", "9007199254740993", {}, {"quantity:over-2^53"}),
    ("quantity", "1234567890123456789", {}, {"quantity:many-digits", "quantity:over-2^53"}),
    ("quantity", 7, {}, {"quantity:int"}),
    ("time", "2024-02-29T00:00:00.000000001+05:30", {},
     {"time:nanoseconds", "time:offset", "time:leap-day"}),
    ("time", "2024-01-01T00:00:00Z", {}, {"time:whole-seconds"}),
    ("duration", "1h2m3.5s4ms5us6ns", {},
     {f"duration:{u}" for u in ("h", "m", "s", "ms", "us", "ns")}),
    ("boolean", False, {}, {"bool:false"}),
])
def test_edge_classes(kind: str, value: Any, node: dict[str, Any], want: set[str]) -> None:
    assert edge_classes(kind, value, node) == want


def test_coverage_counts_leaf_paths_and_edges() -> None:
    cov = Coverage(SCHEMA)
    assert "int:2^53" in cov.applicable and "int:2^53" not in cov.edges
    # n is bounded to [0, 10]: its 2^53 edge is not applicable, big's is
    assert cov.observe({"n": 0, "list": [{"x": 1.5}]}) == {"int:zero", "int:bound",  # minimum 0
                                                            "number:fraction"}
    assert cov.to_json()["covered"] == 2
    assert "list[*].x" not in cov.missing_paths() and "s" in cov.missing_paths()
    cov.observe({"big": 2**53})
    assert "int:2^53" in cov.edges
    assert cov.summary().startswith("38% of 8 leaf paths, edge classes missing:")


@settings(max_examples=40, deadline=None)
@given(from_schema(SCHEMA))
def test_observed_classes_are_applicable(obj: Any) -> None:
    cov = Coverage(SCHEMA)
    assert cov.observe(obj) <= cov.applicable
