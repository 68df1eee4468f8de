"""Instants, ISO 8601 durations and Go durations: parsing, keys and canonical spellings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.semantic import (
    canonical_date_time,
    canonical_duration,
    canonical_go_duration,
    format_go_duration,
    parse_go_duration,
)
from compatfuzz.semantic._values import _civil_from_days, date_time_key, duration_key
from tests.semantic.strategies import rfc3339


@pytest.mark.parametrize(("a", "b"), [
    ("2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00"),
    ("2024-01-01T00:00:00Z", "2023-12-31T19:00:00-05:00"),
    ("2024-01-01T00:00:00.5Z", "2024-01-01T00:00:00.500Z"),
    ("2024-01-01t00:00:00z", "2024-01-01T00:00:00Z"),
])
def test_same_instant(a: str, b: str) -> None:
    assert date_time_key(a) == date_time_key(b)
    assert canonical_date_time(a) == canonical_date_time(b)


def test_fraction_digits_are_exact_beyond_microseconds() -> None:
    assert date_time_key("2024-01-01T00:00:00.1234567Z") != \
        date_time_key("2024-01-01T00:00:00.1234568Z")
    assert canonical_date_time("2024-01-01T02:00:00.1234567+02:00") == \
        "2024-01-01T00:00:00.1234567Z"


@pytest.mark.parametrize("bad", ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z",
                                 "2024-01-01T24:00:00Z", "2024-01-01 00:00:00Z",
                                 "2016-12-31T23:59:60Z", "2024-03-05T10:20:60Z",
                                 "2024-01-01T00:00:00", "2024-01-01T00:00:00+2400", 5])
def test_invalid_date_times_are_not_canonicalised(bad: object) -> None:
    assert date_time_key(bad) is None
    assert canonical_date_time(bad) is NotImplemented


def test_second_60_is_not_an_instant_and_compares_exactly() -> None:
    """Go's time.Parse rejects second 60, so metav1.Time never holds a leap second; such a
    string is compared exactly, not as the next second (it was, at any minute)."""
    from compatfuzz.semantic import equal

    schema = {"properties": {"t": {"type": "string", "format": "date-time"}}}
    assert not equal({"t": "2024-03-05T10:20:60Z"}, {"t": "2024-03-05T10:21:00Z"}, schema=schema)
    assert not equal({"t": "2016-12-31T23:59:60Z"}, {"t": "2017-01-01T00:00:00Z"}, schema=schema)
    assert equal({"t": "2016-12-31T23:59:60Z"}, {"t": "2016-12-31T23:59:60Z"}, schema=schema)
    assert canonical_date_time("2024-03-05T10:20:60Z") is NotImplemented


@pytest.mark.parametrize(("texts", "canonical"), [
    (["0000-01-01T00:00:00+01:00", "0000-01-01T00:30:00+01:30", "0000-01-01T01:00:00+02:00"],
     "0000-01-01T00:00:00+01:00"),
    (["0000-01-01T00:00:00.25+00:01", "0000-01-01T05:00:00.250+05:01"],
     "0000-01-01T00:00:00.25+00:01"),
    (["9999-12-31T23:00:00-23:59", "9999-12-31T23:59:00-23:00"], "9999-12-31T23:59:00-23:00"),
    (["9999-12-31T23:59:59.9-00:01"], "9999-12-31T23:59:59.9-00:01"),
])
def test_instants_outside_utc_years_0_to_9999_have_one_spelling(texts: list[str],
                                                                 canonical: str) -> None:
    """Before 0000-01-01Z (or after 9999Z) UTC cannot spell the instant; the offset of the
    fewest minutes that can is used, so canonical forms are still unique (they were left
    as written, so two spellings of one instant canonicalised differently)."""
    for text in texts:
        assert canonical_date_time(text) == canonical
        assert date_time_key(canonical) == date_time_key(text)


@given(st.integers(-23 * 60 - 59, 23 * 60 + 59), st.integers(0, 2 * 86400),
       st.from_regex(r"(\.[0-9]{1,3})?", fullmatch=True), st.booleans())
def test_edge_year_canonical_is_unique_and_idempotent(offset: int, delta: int, frac: str,
                                                      late: bool) -> None:
    from compatfuzz.semantic._values import _days_from_civil
    base = _days_from_civil(10000, 1, 1) * 86400 - 86400 if late else \
        _days_from_civil(0, 1, 1) * 86400 - 86400
    utc = base + delta
    local = utc + offset * 60
    days, rem = divmod(local, 86400)
    y, mo, d = _civil_from_days(days)
    if not 0 <= y <= 9999:
        return
    h, rem = divmod(rem, 3600)
    mi, s = divmod(rem, 60)
    tz = f"{'+' if offset >= 0 else '-'}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{tz}"
    canonical = canonical_date_time(text)
    assert canonical is not NotImplemented
    assert date_time_key(canonical) == date_time_key(text)
    assert canonical_date_time(canonical) == canonical
    if canonical[-1] != "Z":  # only out-of-range UTC years get an offset
        utc_days = (date_time_key(text)[0]) // 86400  # type: ignore[index]
        assert not 0 <= _civil_from_days(utc_days)[0] <= 9999


@given(rfc3339())
def test_date_time_canonical_is_idempotent_and_same_instant(text: str) -> None:
    canonical = canonical_date_time(text)
    assert canonical.endswith("Z")
    assert canonical_date_time(canonical) == canonical
    assert date_time_key(canonical) == date_time_key(text)


@pytest.mark.parametrize(("a", "b", "same"), [
    ("P1W", "P7D", True), ("PT1H", "PT60M", True), ("PT1H", "PT3600S", True),
    ("P1Y", "P12M", True), ("PT0S", "P0D", True), ("PT1,5S", "PT1.5S", True),
    ("P1D", "PT24H", False), ("P1M", "P30D", False), ("-P1D", "P1D", False),
])
def test_iso_durations(a: str, b: str, same: bool) -> None:
    assert (duration_key(a) == duration_key(b)) is same
    assert (canonical_duration(a) == canonical_duration(b)) is same


@pytest.mark.parametrize(("text", "canonical"), [
    ("PT90M", "PT1H30M"), ("P14M", "P1Y2M"), ("P2W", "P14D"), ("PT0.5H", "PT30M"),
    ("-PT90S", "-PT1M30S"), ("P0D", "PT0S"), ("P1.5M", "P1.5M"),
])
def test_iso_duration_canonical(text: str, canonical: str) -> None:
    assert canonical_duration(text) == canonical
    assert canonical_duration(canonical) == canonical


@pytest.mark.parametrize("bad", ["P", "PT", "P1DT", "1D", "P1H", "PT1D", "P-1D", ""])
def test_invalid_iso_durations(bad: str) -> None:
    assert duration_key(bad) is None


@pytest.mark.parametrize(("text", "ns", "go"), [
    # expectations from Go's time package documentation and tests
    ("1h30m", 5_400_000_000_000, "1h30m0s"), ("90m", 5_400_000_000_000, "1h30m0s"),
    ("1.5h", 5_400_000_000_000, "1h30m0s"), ("300ms", 300_000_000, "300ms"),
    ("-1.5h", -5_400_000_000_000, "-1h30m0s"), ("2h45m", 9_900_000_000_000, "2h45m0s"),
    ("1\u00b5s", 1000, "1\u00b5s"), ("1us", 1000, "1\u00b5s"), ("0", 0, "0s"),
    ("1.000000001s", 1_000_000_001, "1.000000001s"), ("100.00100s", 100_001_000_000, "1m40.001s"),
    (".5s", 500_000_000, "500ms"), ("5.s", 5_000_000_000, "5s"),
    ("9223372036854775807ns", 2**63 - 1, "2562047h47m16.854775807s"),
    ("-9223372036854775808ns", -(2**63), "-2562047h47m16.854775808s"),
])
def test_go_durations(text: str, ns: int, go: str) -> None:
    assert parse_go_duration(text) == ns
    assert format_go_duration(ns) == go
    assert canonical_go_duration(text) == go


@pytest.mark.parametrize("bad", ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "1 s",
                                 "9223372036854775808ns", "3000000h"])
def test_invalid_go_durations(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_go_duration(bad)
    assert canonical_go_duration(bad) is NotImplemented


@given(st.integers(-(2**63), 2**63 - 1))
def test_go_duration_string_round_trips(ns: int) -> None:
    assert parse_go_duration(format_go_duration(ns)) == ns
