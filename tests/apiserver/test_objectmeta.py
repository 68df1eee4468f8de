"""ObjectMeta decoding, against apiextensions-apiserver ``objectmeta/coerce.go`` and
apimachinery ``metav1.Time`` / ``runtime.DefaultUnstructuredConverter``."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from compatfuzz.apiserver import Rejected, coerce, decode

ROOT = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "x-kubernetes-preserve-unknown-fields": True}}}}}


def test_root_metadata_is_decoded_into_object_meta() -> None:
    got = decode({"metadata": {
        "name": "n", "labels": {}, "finalizers": [], "generation": 0, "unknown": 1,
        "creationTimestamp": "2024-01-02T03:04:05.987654+01:00",
        "ownerReferences": [{"name": "o"}],
        "deletionGracePeriodSeconds": 0,
    }}, ROOT)
    assert got == {"metadata": {
        "name": "n",
        "creationTimestamp": "2024-01-02T02:04:05Z",  # UTC, whole seconds
        "ownerReferences": [{"apiVersion": "", "kind": "", "name": "o", "uid": ""}],
        "deletionGracePeriodSeconds": 0,  # a pointer: zero is kept
    }}


def test_unset_times_are_omitted_and_zero_pointers_are_null() -> None:
    # CreationTimestamp is tagged omitzero (apimachinery types.go); deletionTimestamp is a
    # *Time: a zero instant in any zone is kept as null
    got = decode({"metadata": {"name": "a", "deletionTimestamp": "0001-01-01T01:00:00+01:00",
                               "generation": 2.0},
                  "spec": {"template": {
                      "metadata": {"name": "b", "creationTimestamp": None}, "x": 1}}}, ROOT)
    assert got["metadata"] == {"name": "a", "deletionTimestamp": None, "generation": 2}
    assert got["spec"]["template"] == {"metadata": {"name": "b"}, "x": 1}


def test_null_metadata_is_written_back_and_typemeta_must_be_strings() -> None:
    assert decode({"metadata": None}, ROOT) == {"metadata": {}}
    for bad in ({"kind": 0}, {"apiVersion": None}, {"apiVersion": "a/b/c"}):
        with pytest.raises(Rejected):
            decode(bad, ROOT)


@pytest.mark.parametrize(("metadata", "path"), [
    ({"name": 1}, "metadata.name"),
    ({"labels": {"a": 1}}, "metadata.labels"),
    ({"generation": 1.5}, "metadata.generation"),
    ({"creationTimestamp": "yesterday"}, "metadata.creationTimestamp"),
])
def test_malformed_metadata_is_rejected_or_dropped(metadata: dict[str, object],
                                                   path: str) -> None:
    with pytest.raises(Rejected) as info:
        decode({"metadata": metadata}, ROOT)
    assert info.value.path == path
    embedded = {"spec": {"template": {"metadata": {**metadata, "namespace": "ns"}}}}
    dropped = coerce(embedded, ROOT, drop_invalid=True)
    assert dropped["spec"]["template"]["metadata"] == {"namespace": "ns"}
    # metadata that is not an object at all passes through ("pass through on error")
    odd = {"spec": {"template": {"metadata": 7}}}
    assert coerce(odd, ROOT, drop_invalid=True) == odd


def test_embedded_kind_must_be_a_string() -> None:
    with pytest.raises(Rejected, match="must be a string"):
        coerce({"spec": {"template": {"kind": 3}}}, ROOT)
    assert coerce({"spec": {"template": {"kind": 3}}}, ROOT, drop_invalid=True) == {
        "spec": {"template": {}}}


@pytest.mark.parametrize(("value", "stored"), [
    # Go's time.Parse(time.RFC3339, ...), as metav1.Time.UnmarshalJSON calls it: its layout
    # parser reads the hour with getnum(value, false), one or two digits
    ("2026-01-02T3:04:05Z", "2026-01-02T03:04:05Z"),
    ("2026-01-02T03:04:05,5Z", "2026-01-02T03:04:05Z"),
    ("2026-01-02T03:04:05-24:60", "2026-01-03T04:04:05Z"),
    ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
    # refused: the layout's "T" and "Z" are literals, digits are ASCII
    ("2026-01-02t03:04:05z", None), ("2026-01-02T03:04:05z", None),
    ("\u0662\u0660\u0662\u0666-01-02T03:04:05Z", None), ("2026-01-02T\u0663:04:05Z", None),
    ("2026-01-02T03:04:05+25:00", None), ("+001-01-02T03:04:05Z", None),
])
def test_times_are_parsed_as_go_parses_rfc3339(value: str, stored: str | None) -> None:
    if stored is None:
        with pytest.raises(Rejected) as info:
            decode({"metadata": {"creationTimestamp": value}}, ROOT)
        assert info.value.path == "metadata.creationTimestamp"
    else:
        got = decode({"metadata": {"creationTimestamp": value}}, ROOT)
        assert got["metadata"]["creationTimestamp"] == stored


@pytest.mark.parametrize(("value", "stored"), [
    # found by conformance/test_apiserver_conformance.py against apiextensions-apiserver
    # v0.37.2: GetObjectMetaWithOptions (objectmeta/coerce.go) re-marshals the metadata
    # with encoding/json, which writes a float64 with its shortest digits padded with
    # zeros, and parses the int64 from that text, not from the float's exact value
    (-4.212749141137949e16, -42127491411379490),
    (2.0**62, 4611686018427388000),
    (9.223372036854775e18, 9223372036854775000),
    (2.0**53 + 2, 9007199254740994),
    (1.0, 1),
])
def test_integral_floats_are_read_as_go_writes_them(value: float, stored: int) -> None:
    for field in ("generation", "deletionGracePeriodSeconds"):
        got = decode({"metadata": {field: value}}, ROOT)
        assert got["metadata"][field] == stored
        embedded = {"spec": {"template": {"metadata": {field: value}}}}
        dropped = coerce(embedded, ROOT, drop_invalid=True)
        assert dropped["spec"]["template"]["metadata"][field] == stored


@given(st.floats(min_value=-(2.0**63), max_value=2.0**63).filter(float.is_integer))
@example(2.0**63)
@example(-(2.0**63))  # Go: "cannot unmarshal number -9223372036854776000 into ... int64"
def test_an_integral_float_keeps_its_value_and_its_shortest_digits(value: float) -> None:
    # the stored int64 reads back as the same float64 and has no more significant digits
    # than the shortest spelling of that float (encoding/json's); +-2^63, whose spelling
    # is beyond int64, is refused
    try:
        stored = decode({"metadata": {"generation": value}}, ROOT)["metadata"].get("generation", 0)
    except Rejected as exc:
        assert exc.path == "metadata.generation"
        assert abs(value) == 2.0**63
        return
    assert float(stored) == value
    digits = str(abs(stored)).rstrip("0") or "0"
    mantissa = repr(abs(value)).split("e")[0].replace(".", "").rstrip("0").lstrip("0") or "0"
    assert digits == mantissa
