"""``format: duration`` in a Kubernetes schema: the API server accepts Go and ISO 8601
spellings alike (kube-openapi ``strfmt.ParseDuration``), so each field has the meaning its
own ``pattern`` and values give it. A Go field (the default, ``metav1.Duration``) is
unchanged by ``90m`` -> ``1h30m0s`` (issue 10, item 10); an ISO field by ``PT1H`` ->
``PT3600S`` (issue 17). Outside Kubernetes ``format: duration`` is ISO 8601."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.schema import Schema, check_format, load_schema
from compatfuzz.semantic import (
    canonical_duration,
    canonicalise,
    diff,
    equal,
    format_go_duration,
    parse_go_duration,
    register_canonicaliser,
)
from compatfuzz.semantic._values import duration_key
from compatfuzz.strategies import from_schema

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: timers.example.com}
spec:
  group: example.com
  names: {kind: Timer, plural: timers}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              every: {type: string, format: duration}
"""


@pytest.fixture(scope="module")
def crd_schema(tmp_path_factory: pytest.TempPathFactory) -> object:
    path: Path = tmp_path_factory.mktemp("crd") / "timers.yaml"
    path.write_text(CRD)
    return load_schema(path, version="v1")


def test_a_respelt_go_duration_is_no_change(crd_schema: object) -> None:
    assert equal({"spec": {"every": "90m"}}, {"spec": {"every": "1h30m0s"}},
                 schema=crd_schema)
    assert not equal({"spec": {"every": "90m"}}, {"spec": {"every": "91m"}},
                     schema=crd_schema)


@given(st.integers(min_value=0, max_value=10**15))
def test_go_duration_spellings_of_one_length_are_equal(crd_schema: object,
                                                       nanos: int) -> None:
    text = format_go_duration(nanos)
    assert parse_go_duration(text) == nanos
    seconds = f"{nanos // 10**9}s" if nanos % 10**9 == 0 else f"{nanos}ns"
    assert equal({"spec": {"every": text}}, {"spec": {"every": seconds}}, schema=crd_schema)


def test_plain_json_schema_durations_stay_iso_8601() -> None:
    schema = {"type": "object", "properties": {"t": {"type": "string", "format": "duration"}}}
    assert equal({"t": "P1W"}, {"t": "P7D"}, schema=schema)


# -- issue 17: one meaning per field, from the field's own pattern and values ---------
#
# kube-openapi pkg/validation/strfmt/duration.go ParseDuration accepts Go and ISO 8601
# spellings alike, so the server cannot say what a value means; the field can.

ISO_PATTERN = r"^P(T(\d+H)?(\d+M)?(\d+S)?)?$"


def _kube(**field: object) -> Schema:
    props = {"t": {"type": "string", "format": "duration", **field}}
    return Schema({"type": "object", "properties": props}, name="Timer", kubernetes=True)


ISO_FIELDS = {
    "pattern": _kube(pattern=ISO_PATTERN),
    "unanchored-pattern": _kube(pattern="^P"),
    "enum": _kube(enum=["PT0S", "PT1H", "P1D"]),
    "default": _kube(default="PT30S"),
    "examples": _kube(examples=["P1W"]),
    "example": _kube(example="PT5M"),
}
GO_FIELDS = {
    "plain": _kube(),
    "go-pattern": _kube(pattern=r"^([0-9]+(ns|us|ms|s|m|h))+$"),
    "either-pattern": _kube(pattern=r"^(P.*|[0-9].*)$"),  # evidence both ways: Go
    "mixed-enum": _kube(enum=["PT1H", "1h"]),
    "go-default-iso-pattern": _kube(pattern="^P|^[0-9]", default="1h"),
    "broken-pattern": _kube(pattern="(P"),  # not a regex at all: no evidence
}


def _eq(schema: Schema, a: str, b: str) -> bool:
    return equal({"t": a}, {"t": b}, schema=schema)


@pytest.mark.parametrize("field", sorted(ISO_FIELDS))
@pytest.mark.parametrize(("a", "b"), [("PT0H", "PT0S"), ("PT1H", "PT3600S"),
                                      ("PT1H", "PT60M"), ("P1W", "P7D"), ("P1Y", "P12M"),
                                      ("PT1.5H", "PT1H30M"), ("-PT0S", "PT0S")])
def test_iso_spellings_of_one_length_are_equal_where_the_field_is_iso(
        field: str, a: str, b: str) -> None:
    assert _eq(ISO_FIELDS[field], a, b)


@pytest.mark.parametrize("field", sorted(ISO_FIELDS))
@pytest.mark.parametrize(("a", "b"), [
    ("PT1H", "PT3601S"),  # a second
    ("P1D", "PT24H"),     # a day is not 24 hours across a DST change
    ("P1M", "P30D"),      # months and days have no fixed ratio
    ("P1Y", "P365D"),
    ("PT1H", "1h"),       # a Go spelling in an ISO field is just a string
    ("1 hour", "60 minutes"),  # valid to the server, neither Go nor ISO: exact
])
def test_different_lengths_or_unreadable_values_differ_where_the_field_is_iso(
        field: str, a: str, b: str) -> None:
    assert not _eq(ISO_FIELDS[field], a, b)


@pytest.mark.parametrize("field", sorted(GO_FIELDS))
def test_fields_without_iso_evidence_stay_go(field: str) -> None:
    schema = GO_FIELDS[field]
    assert _eq(schema, "90m", "1h30m0s")
    assert not _eq(schema, "PT1H", "PT3600S")  # not Go: compared exactly
    assert _eq(schema, "PT1H", "PT1H")


@given(st.integers(0, 10**12))
def test_an_iso_length_in_seconds_equals_it_in_hours_minutes_seconds(seconds: int) -> None:
    h, m, s = seconds // 3600, seconds // 60 % 60, seconds % 60
    hms = "PT" + (f"{h}H" if h else "") + (f"{m}M" if m else "") + f"{s}S"
    schema = ISO_FIELDS["pattern"]
    assert _eq(schema, f"PT{seconds}S", hms)
    assert not _eq(schema, f"PT{seconds}S", f"PT{seconds + 1}S")


def test_diff_and_canonicalise_speak_iso_in_an_iso_field() -> None:
    schema = ISO_FIELDS["pattern"]
    assert canonicalise({"t": "PT3600S"}, schema=schema) == {"t": "PT1H"}
    assert canonicalise({"t": "PT0H"}, schema=schema) == {"t": "PT0S"}
    assert not diff({"t": "PT0H"}, {"t": "PT0S"}, schema=schema)
    (change,) = diff({"t": "PT1H"}, {"t": "PT3601S"}, schema=schema)
    assert str(change) == 't: "PT1H" -> "PT3601S"  [duration: PT1H != PT1H1S]'


def test_go_durations_option_still_marks_go_fields() -> None:
    # go_durations wins over the field's own evidence; ISO values there keep their
    # ISO meaning (the option's canonicaliser passes what Go cannot read to the field).
    schema = ISO_FIELDS["pattern"]
    assert equal({"t": "90m"}, {"t": "1h30m0s"}, schema=schema, go_durations=["t"])
    assert not equal({"t": "90m"}, {"t": "1h30m0s"}, schema=schema)
    assert equal({"t": "PT1H"}, {"t": "PT3600S"}, schema=schema, go_durations=["t"])
    assert not equal({"t": "PT1H"}, {"t": "1h"}, schema=schema, go_durations=["t"])


def test_canonical_duration_registered_by_path_makes_a_field_iso() -> None:
    # The ISO counterpart of go_durations, also reachable from [api.semantic]
    # canonicalisers = { "spec.t" = "compatfuzz.semantic:canonical_duration" }.
    schema = GO_FIELDS["plain"]
    assert not _eq(schema, "PT1H", "PT3600S")
    with register_canonicaliser(canonical_duration, path="t"):
        assert _eq(schema, "PT1H", "PT3600S")
        assert _eq(schema, "90m", "1h30m0s")  # what ISO cannot read stays Go
    assert not _eq(schema, "PT1H", "PT3600S")


def test_the_crd_generator_draws_what_the_iso_meaning_reads() -> None:
    """A Kubernetes format: duration with an ISO pattern gets values the pattern and the
    server accept, and every one of them parses as ISO 8601 (no value falls back to an
    exact comparison), so equal spellings of one draw compare equal."""
    schema = ISO_FIELDS["pattern"]
    pattern = re.compile(ISO_PATTERN)

    @settings(max_examples=200, database=None)
    @given(from_schema(schema))
    def check(obj: dict[str, str]) -> None:
        value = obj.get("t")
        if value is None:
            return
        assert pattern.search(value) and check_format("duration", value, kubernetes=True)
        key = duration_key(value)
        assert key is not None, value
        assert _eq(schema, value, canonical_duration(value))
        assert _eq(schema, value, f"PT{key[2]}S")  # the pattern holds hours/minutes/seconds

    check()
