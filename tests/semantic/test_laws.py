"""The laws semantic equality must obey, as properties (STYLE.md 22/23).

``key(a) == key(b)`` defines each built-in equality, so agreement of the fast ``eq`` walk
with key equality implies reflexivity, symmetry and transitivity for every pair drawn;
the laws are also checked directly, on values drawn from small pools of equivalent
spellings so that equal pairs and triples are common.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.schema import Schema
from compatfuzz.semantic import canonicalise, diff, equal
from compatfuzz.semantic._api import compiled
from tests.semantic.strategies import (
    CALENDAR_GROUPS,
    CRD_QUANTITY,
    DURATION_GROUPS,
    DURATION_WORDS,
    GO_DURATION_GROUPS,
    INT_OR_STRING,
    JUNK,
    KITCHEN_SINK,
    int_or_strings,
    iso_durations,
    json_values,
    kitchen_sink_objects,
    quantities,
    spelled,
    times,
)

DURATIONS = ["timeout"]
SCHEMAS: dict[str, Any] = {"kitchen-sink": KITCHEN_SINK, "no-schema": None}
schema_names = st.sampled_from(sorted(SCHEMAS))


def _values(name: str) -> st.SearchStrategy[Any]:
    return kitchen_sink_objects() if name == "kitchen-sink" else json_values()


@settings(max_examples=40)
@given(st.data(), schema_names)
def test_fast_walk_agrees_with_key_equality(data: st.DataObject, name: str) -> None:
    root = compiled(SCHEMAS[name], DURATIONS)
    a = data.draw(_values(name), label="a")
    b = data.draw(_values(name), label="b")
    assert root.eq(a, b) == (root.key(a) == root.key(b))


@given(kitchen_sink_objects())
def test_reflexive(a: Any) -> None:
    assert equal(a, a, schema=KITCHEN_SINK, go_durations=DURATIONS)
    assert equal(a, copy.deepcopy(a), schema=KITCHEN_SINK, go_durations=DURATIONS)


@given(kitchen_sink_objects(), kitchen_sink_objects())
def test_symmetric(a: Any, b: Any) -> None:
    assert equal(a, b, schema=KITCHEN_SINK, go_durations=DURATIONS) == \
        equal(b, a, schema=KITCHEN_SINK, go_durations=DURATIONS)


LEAF_SCHEMAS = {
    "quantity": (CRD_QUANTITY, quantities()),
    "date-time": ({"type": "string", "format": "date-time"}, times()),
    "int-or-string": (INT_OR_STRING, int_or_strings()),
    "map-of-quantities": ({"type": "object", "additionalProperties": CRD_QUANTITY},
                          st.dictionaries(st.sampled_from(["cpu"]), quantities(), max_size=1)),
}


@pytest.mark.parametrize("kind", sorted(LEAF_SCHEMAS))
@settings(max_examples=100)
@given(data=st.data())
def test_transitive_on_leaves(kind: str, data: st.DataObject) -> None:
    schema, values = LEAF_SCHEMAS[kind]
    a, b, c = (data.draw(values, label=x) for x in "abc")
    if equal(a, b, schema=schema) and equal(b, c, schema=schema):
        assert equal(a, c, schema=schema)
    assert equal(a, b, schema=schema) == equal(b, a, schema=schema)


@given(kitchen_sink_objects(), kitchen_sink_objects(), kitchen_sink_objects())
def test_transitive(a: Any, b: Any, c: Any) -> None:
    def eq(x: Any, y: Any) -> bool:
        return equal(x, y, schema=KITCHEN_SINK, go_durations=DURATIONS)

    if eq(a, b) and eq(b, c):
        assert eq(a, c)


@given(st.data(), schema_names)
def test_canonicalise_is_idempotent_and_keeps_meaning(data: st.DataObject, name: str) -> None:
    schema = SCHEMAS[name]
    x = data.draw(_values(name))
    once = canonicalise(x, schema=schema, go_durations=DURATIONS)
    assert canonicalise(once, schema=schema, go_durations=DURATIONS) == once
    assert equal(once, x, schema=schema, go_durations=DURATIONS)


@given(kitchen_sink_objects(), kitchen_sink_objects())
def test_equal_objects_have_equal_canonical_keys(a: Any, b: Any) -> None:
    root = compiled(KITCHEN_SINK, DURATIONS)
    ca = canonicalise(a, schema=KITCHEN_SINK, go_durations=DURATIONS)
    cb = canonicalise(b, schema=KITCHEN_SINK, go_durations=DURATIONS)
    assert equal(a, b, schema=KITCHEN_SINK, go_durations=DURATIONS) == \
        (root.key(ca) == root.key(cb))


@settings(max_examples=40)
@given(st.data(), schema_names)
def test_diff_is_empty_iff_equal(data: st.DataObject, name: str) -> None:
    schema = SCHEMAS[name]
    a = data.draw(_values(name), label="a")
    b = data.draw(_values(name), label="b")
    changes = diff(a, b, schema=schema, go_durations=DURATIONS)
    assert (len(changes) == 0) == equal(a, b, schema=schema, go_durations=DURATIONS)
    for change in changes:  # a "changed" leaf really holds different values
        if change.kind in ("changed", "type-changed"):
            assert change.old != change.new or type(change.old) is not type(change.new)


def test_examples_of_the_rules() -> None:
    s = KITCHEN_SINK
    assert equal({"q": "1Gi"}, {"q": "1024Mi"}, schema=s)
    assert not equal({"q": "1G"}, {"q": "1Gi"}, schema=s)
    assert equal({"port": 1}, {"port": 1}, schema=s)
    assert not equal({"port": 1}, {"port": "1"}, schema=s)
    assert equal({"ratio": 1}, {"ratio": 1.0}, schema=s)
    assert not equal({"count": 1}, {"count": 1.0}, schema=s)
    assert not equal({"on": True}, {"on": 1}, schema=s)
    assert equal({"at": "2024-01-01T00:00:00Z"}, {"at": "2024-01-01T01:00:00+01:00"}, schema=s)
    assert equal({"finalizers": ["a", "b"]}, {"finalizers": ["b", "a"]}, schema=s)
    assert not equal({"finalizers": ["a", "a"]}, {"finalizers": ["a"]}, schema=s)
    assert not equal({"ratios": [1, 2]}, {"ratios": [2, 1]}, schema=s)
    assert equal({"limits": {}, "finalizers": None}, {}, schema=s)
    assert not equal({"nested": {}}, {}, schema=s)  # pointer to a zero struct is not nil
    assert equal({"nested": {}}, {}, schema=s, empty_struct_is_absent=True)
    assert equal({"nested": {"labels": {}}}, {"nested": {}}, schema=s)
    assert equal({"timeout": "90m"}, {"timeout": "1h30m"}, schema=s, go_durations=["timeout"])
    assert not equal({"timeout": "90m"}, {"timeout": "1h30m"}, schema=s)
    assert equal({"containers": [{"name": "a", "cpu": "1"}, {"name": "b"}]},
                 {"containers": [{"name": "b"}, {"name": "a", "cpu": "1000m"}]}, schema=s)
    assert equal({"either": "2024-01-01T00:00:00Z"}, {"either": "2024-01-01T00:00:00.0Z"},
                 schema=s)
    # without a schema: exact scalars, and null/[]/{} mean absent
    assert equal({"a": [], "b": {}, "c": None}, {})
    assert not equal(1, 1.0)
    assert not equal(True, 1)
    assert not equal({"q": "1Gi"}, {"q": "1024Mi"})


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else NotImplemented


def _same_parity(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a % 2 == b % 2
    return NotImplemented


@settings(max_examples=40)
@given(kitchen_sink_objects(), kitchen_sink_objects(), kitchen_sink_objects())
def test_laws_hold_with_registered_rules(a: Any, b: Any, c: Any) -> None:
    from compatfuzz.semantic import register_canonicaliser, register_comparator

    with register_canonicaliser(_lower, path="containers[*].name"), \
            register_comparator(_same_parity, path="count"):
        def eq(x: Any, y: Any) -> bool:
            return equal(x, y, schema=KITCHEN_SINK, go_durations=DURATIONS)

        assert eq(a, a)
        assert eq(a, b) == eq(b, a)
        if eq(a, b) and eq(b, c):
            assert eq(a, c)
        assert (len(diff(a, b, schema=KITCHEN_SINK, go_durations=DURATIONS)) == 0) == eq(a, b)
        once = canonicalise(a, schema=KITCHEN_SINK, go_durations=DURATIONS)
        assert eq(once, a)


# -- Kubernetes format: duration, ISO or Go by the field's own evidence (issue 17) -----
ISO_PATTERN = r"^P(T(\d+H)?(\d+M)?(\d+S)?)?$"
_DURATION_FIELDS: dict[str, dict[str, Any]] = {
    "iso-by-pattern": {"pattern": ISO_PATTERN},
    "iso-by-enum": {"enum": ["PT0S", "P1D", "P1W"]},
    "go": {},
    "go-by-mixed-evidence": {"pattern": "^P", "default": "1h"},
}
DURATION_FIELDS = {
    name: Schema({"type": "string", "format": "duration", **extra},
                 name=f"duration {name}", kubernetes=True)
    for name, extra in _DURATION_FIELDS.items()
}
duration_values = st.one_of(spelled(DURATION_GROUPS), spelled(CALENDAR_GROUPS),
                            spelled(GO_DURATION_GROUPS), iso_durations(), DURATION_WORDS, JUNK,
                            st.none())


@pytest.mark.parametrize("field", sorted(DURATION_FIELDS))
@settings(max_examples=150)
@given(a=duration_values, b=duration_values, c=duration_values)
def test_kubernetes_duration_equality_is_an_equivalence(field: str, a: Any, b: Any,
                                                        c: Any) -> None:
    schema = DURATION_FIELDS[field]
    root = compiled(schema)

    def eq(x: Any, y: Any) -> bool:
        return equal(x, y, schema=schema)

    assert eq(a, a)
    assert eq(a, b) == eq(b, a)
    if eq(a, b) and eq(b, c):
        assert eq(a, c)
    assert root.eq(a, b) == (root.key(a) == root.key(b))
    assert (len(diff(a, b, schema=schema)) == 0) == eq(a, b)
    once = canonicalise(a, schema=schema)
    assert canonicalise(once, schema=schema) == once
    assert eq(once, a)


@pytest.mark.parametrize("field", sorted(DURATION_FIELDS))
@settings(max_examples=50)
@given(data=st.data())
def test_kubernetes_duration_laws_with_go_durations_set(field: str,
                                                        data: st.DataObject) -> None:
    # go_durations over an ISO field: Go values by nanoseconds, ISO ones by ISO meaning.
    schema = Schema({"type": "object", "properties": {"t": DURATION_FIELDS[field].root}},
                    name=f"holder {field}", kubernetes=True)
    a, b, c = ({"t": data.draw(duration_values, label=x)} for x in "abc")

    def eq(x: Any, y: Any) -> bool:
        return equal(x, y, schema=schema, go_durations=["t"])

    assert eq(a, a)
    assert eq(a, b) == eq(b, a)
    if eq(a, b) and eq(b, c):
        assert eq(a, c)
