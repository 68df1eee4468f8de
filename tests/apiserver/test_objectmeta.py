"""ObjectMeta decoding, against apiextensions-apiserver ``objectmeta/coerce.go`` and
apimachinery ``metav1.Time`` / ``runtime.DefaultUnstructuredConverter``."""

from __future__ import annotations

import pytest

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
