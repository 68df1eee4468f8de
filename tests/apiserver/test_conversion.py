"""Conversion-response rules, against apiextensions-apiserver
``conversion/webhook_converter.go`` (``validateConvertedObject``, ``restoreObjectMeta``)."""

from __future__ import annotations

from typing import Any

import pytest

from compatfuzz.apiserver import Rejected, check_response

ORIGINAL: dict[str, Any] = {
    "apiVersion": "example.com/v1", "kind": "Gadget",
    "metadata": {"name": "g", "namespace": "ns", "uid": "u-1", "finalizers": ["f"],
                 "labels": {"a": "b"}},
    "spec": {"x": 1},
}


def _converted(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v2", "kind": "Gadget",
            "metadata": {**ORIGINAL["metadata"], **meta}, "spec": {"y": 1}}


def test_labels_and_annotations_may_change_everything_else_is_put_back() -> None:
    response = _converted(labels={"c": "d"}, annotations={"example.com/stash": "{}"},
                          finalizers=["other"], generation=7)
    kept, restored = check_response(ORIGINAL, response, "example.com/v2")
    assert kept["metadata"] == {"name": "g", "namespace": "ns", "uid": "u-1",
                                "finalizers": ["f"], "labels": {"c": "d"},
                                "annotations": {"example.com/stash": "{}"}}
    assert kept["spec"] == {"y": 1}
    assert {(r.field, repr(r.old), repr(r.new)) for r in restored} == {
        ("finalizers", "['f']", "['other']"), ("generation", "None", "7")}


def test_dropping_labels_in_the_response_drops_them() -> None:
    response = _converted()
    del response["metadata"]["labels"]
    kept, _ = check_response(ORIGINAL, response, "example.com/v2")
    assert "labels" not in kept["metadata"]


@pytest.mark.parametrize(("change", "message"), [
    ({"apiVersion": "example.com/v1"}, "invalid groupVersion"),
    ({"kind": "Other"}, "invalid kind"),
    ({"metadata": {"name": "other", "namespace": "ns", "uid": "u-1"}}, "same name"),
    ({"metadata": {"name": "g", "namespace": "ns", "uid": "u-2"}}, "same uid"),
    ({"metadata": {**ORIGINAL["metadata"], "labels": {"a": 1}}}, "must be a string"),
    ({"metadata": {**ORIGINAL["metadata"], "labels": {"a": "not valid!"}}},
     "a valid label must be"),
    ({"metadata": {**ORIGINAL["metadata"], "annotations": {"bad key": "x"}}},
     "name part must consist"),
    ({"metadata": {**ORIGINAL["metadata"], "annotations": {"k": "x" * 262_144}}},
     "larger than limit"),
])
def test_responses_the_server_refuses(change: dict[str, Any], message: str) -> None:
    response = {**_converted(), **change}
    with pytest.raises(Rejected, match=message):
        check_response(ORIGINAL, response, "example.com/v2")


def test_a_response_without_metadata_is_refused() -> None:
    response = _converted()
    original = {k: v for k, v in ORIGINAL.items() if k != "metadata"}
    del response["metadata"]
    with pytest.raises(Rejected, match="missing metadata"):
        check_response(original, response, "example.com/v2")


def test_unchanged_invalid_labels_are_not_revalidated() -> None:
    original = {**ORIGINAL, "metadata": {**ORIGINAL["metadata"], "labels": {"a": "bad value"}}}
    response = {**_converted(), "metadata": dict(original["metadata"])}
    kept, _ = check_response(original, response, "example.com/v2")
    assert kept["metadata"]["labels"] == {"a": "bad value"}
