"""Hypothesis strategies for semantic-equality tests: values that are often *equivalent but
differently spelled*, so reflexivity, symmetry and transitivity get exercised on equal pairs
and triples, not only on trivially different ones."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from compatfuzz.semantic._values import _civil_from_days

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
CRD_QUANTITY = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": QUANTITY_PATTERN,
    "x-kubernetes-int-or-string": True,
}
INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}],
                 "x-kubernetes-int-or-string": True}

# Groups of spellings with the same value; drawing from few groups makes equal pairs likely.
QUANTITY_GROUPS: list[list[Any]] = [
    ["1Gi", "1024Mi", "1048576Ki", "1073741824", 1073741824, "1.0Gi", "+1Gi", "0.0009765625Ti"],
    ["500m", "0.5", 0.5, ".5", "5e-1", "0.50", "500000u"],
    ["1", 1, 1.0, "1000m", "1e0", "1.", "01", "+1"],
    ["1k", "1000", 1000, "1e3", "1E3", "0.001M", "1000000m"],
    ["0", 0, "0Gi", "0m", "-0", "0.0", "0e5"],
    ["100Mi", "102400Ki"],
    ["-2", "-2000m", -2],
    ["1n", "0.1n", "0.000000001", "1e-9"],
    ["9Ei", "9223372036854775807Ki", "9223372036854775807"],
    ["12E", "12e18", "12000P"],
]
TIME_GROUPS: list[list[str]] = [
    ["2024-01-01T00:00:00Z", "2024-01-01T01:00:00+01:00", "2023-12-31T19:00:00-05:00",
     "2024-01-01T00:00:00.000Z", "2024-01-01t00:00:00z", "2024-01-01T05:30:00+05:30"],
    ["2024-01-01T00:00:00.5Z", "2024-01-01T00:00:00.50Z", "2024-01-01T02:00:00.500+02:00"],
    ["2024-01-01T00:00:00.1234567Z", "2024-01-01T00:00:00.12345670Z"],
    ["2024-01-01T00:00:00.1234568Z"],
    ["2016-12-31T23:59:60Z"], ["2017-01-01T00:00:00Z"],  # second 60 is not an instant (Go)
    ["0000-01-01T00:00:00+01:00", "0000-01-01T00:30:00+01:30"],  # UTC year -1
]
DURATION_GROUPS: list[list[str]] = [
    ["P1W", "P7D", "P0Y7D"], ["PT1H", "PT60M", "PT3600S", "PT0.5H30M"], ["P1Y", "P12M"],
    ["P1D"], ["PT24H"], ["PT0S", "P0D", "-PT0S"], ["PT1.5S", "PT1,5S"],
]
GO_DURATION_GROUPS: list[list[str]] = [
    ["1h30m", "90m", "5400s", "1.5h", "1h30m0s"], ["1s", "1000ms", "1000000us", "1000000000ns"],
    ["0", "0s", "-0s"], ["500ms", "0.5s"],
]
JUNK = st.sampled_from(["", "yesterday", "1.1.1", "Gi", "1Gb", "P", "PT"])
# Strings the API server takes as durations (kube-openapi strfmt ParseDuration) but that
# neither Go nor ISO 8601 reads, and ISO spellings with calendar units (issue 17).
DURATION_WORDS = st.sampled_from(["1 hour", "60 minutes", "3 days ago", "1h 30m", "PT1H "])
CALENDAR_GROUPS: list[list[str]] = [
    ["P1M"], ["P30D"], ["P31D"], ["P1Y", "P12M", "P0.5Y6M"], ["P365D"],
    ["P1DT1H", "P1DT60M"], ["PT25H"],
]


def iso_durations() -> st.SearchStrategy[str]:
    """Well-formed ISO 8601 durations (sign, fractions, every designator), some zero."""
    number = st.one_of(st.integers(0, 3).map(str), st.integers(0, 10**6).map(str),
                       st.from_regex(r"[0-9]{1,3}[.,][0-9]{1,3}", fullmatch=True))
    date = st.tuples(*(st.one_of(st.just(""), number.map(lambda n, u=u: n + u))
                       for u in "YMWD")).map("".join)
    time = st.tuples(*(st.one_of(st.just(""), number.map(lambda n, u=u: n + u))
                       for u in "HMS")).map("".join)
    return st.builds(lambda sign, d, t: f"{sign}P{d}" + (f"T{t}" if t else ""),
                     st.sampled_from(["", "-", "+"]), date, time).filter(
        lambda s: s.rstrip("T")[-1] != "P")


def spelled(groups: list[list[Any]]) -> st.SearchStrategy[Any]:
    """One spelling of one value, drawn from a few equivalence groups."""
    return st.sampled_from(groups).flatmap(st.sampled_from)


def quantities() -> st.SearchStrategy[Any]:
    return st.one_of(spelled(QUANTITY_GROUPS), quantity_strings(), JUNK)


def quantity_strings() -> st.SearchStrategy[str]:
    """Arbitrary well-formed quantity strings (any suffix, exponent, sign, fraction)."""
    number = st.one_of(
        st.from_regex(r"[0-9]{1,25}", fullmatch=True),
        st.from_regex(r"[0-9]{0,12}\.[0-9]{0,14}", fullmatch=True).filter(lambda s: s != "."),
    )
    suffix = st.one_of(
        st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E",
                         "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]),
        st.integers(-30, 30).map(lambda e: f"e{e}"),
        st.integers(-30, 30).map(lambda e: f"E{e:+d}"),
    )
    return st.builds(lambda sign, n, s: sign + n + s,
                     st.sampled_from(["", "-", "+"]), number, suffix)


@st.composite
def rfc3339(draw: st.DrawFn) -> str:
    """A valid RFC 3339 date-time with a random offset and fractional digits."""
    seconds = draw(st.integers(0, 4102444800))  # 1970 .. 2100
    frac = draw(st.from_regex(r"(\.[0-9]{1,12})?", fullmatch=True))
    offset = draw(st.integers(-23 * 60 - 59, 23 * 60 + 59))
    local = seconds + offset * 60
    days, rem = divmod(local, 86400)
    y, mo, d = _civil_from_days(days)
    h, rem = divmod(rem, 3600)
    mi, s = divmod(rem, 60)
    tz = "Z" if offset == 0 and draw(st.booleans()) else \
        f"{'+' if offset >= 0 else '-'}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{tz}"


def times() -> st.SearchStrategy[Any]:
    return st.one_of(spelled(TIME_GROUPS), rfc3339(), JUNK)


def int_or_strings() -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from([1, "1", 1.0, "01", 80, "80", "http", True, 0, "0"]),
                     st.integers(-3, 3), st.text(max_size=2))


def numbers() -> st.SearchStrategy[Any]:
    return st.one_of(st.sampled_from([1, 1.0, 2, 2.0, 0.5, -0.0, 0, True, "1"]),
                     st.integers(-5, 5), st.floats(allow_nan=True, width=16))


EMPTY = st.sampled_from([None, [], {}])

KITCHEN_SINK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "q": CRD_QUANTITY,
        "limits": {"type": "object", "additionalProperties": CRD_QUANTITY},
        "port": INT_OR_STRING,
        "at": {"type": "string", "format": "date-time"},
        "ttl": {"type": "string", "format": "duration"},
        "timeout": {"type": "string"},
        "ratio": {"type": "number"},
        "count": {"type": "integer"},
        "name": {"type": "string"},
        "on": {"type": "boolean"},
        "finalizers": {"type": "array", "x-kubernetes-list-type": "set",
                       "items": {"type": "string"}},
        "containers": {
            "type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "cpu": CRD_QUANTITY,
                "args": {"type": "array", "items": {"type": "string"}},
            }},
        },
        "ratios": {"type": "array", "items": {"type": "number"}},
        "nested": {"type": ["object", "null"], "properties": {
            "at": {"type": "string", "format": "date-time"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "either": {"oneOf": [{"type": "string", "format": "date-time"},
                             {"type": "array", "items": {"type": "number"}}]},
    },
}


def json_values(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2),
                        st.sampled_from([1.0, 0.5, -0.0]), st.sampled_from(["", "a", "1"]))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=3),
                                st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
        max_leaves=max_leaves,
    )


def _optional_fields(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {}, optional={k: st.one_of(v, st.none()) for k, v in fields.items()})


def containers() -> st.SearchStrategy[Any]:
    item = _optional_fields({
        "name": st.sampled_from(["app", "side"]),
        "cpu": spelled(QUANTITY_GROUPS[1:3]),
        "args": st.one_of(EMPTY, st.lists(st.sampled_from(["a", "b"]), max_size=2)),
    })
    return st.lists(item, max_size=3)


def kitchen_sink_objects() -> st.SearchStrategy[Any]:
    """Objects for KITCHEN_SINK, with equivalent spellings, empties and some wrong types."""
    return _optional_fields({
        "q": quantities(),
        "limits": st.one_of(EMPTY, st.dictionaries(st.sampled_from(["cpu", "memory"]),
                                                   spelled(QUANTITY_GROUPS[:4]), max_size=2)),
        "port": int_or_strings(),
        "at": times(),
        "ttl": st.one_of(spelled(DURATION_GROUPS), JUNK),
        "timeout": spelled(GO_DURATION_GROUPS),
        "ratio": numbers(),
        "count": numbers(),
        "name": st.sampled_from(["a", "b", ""]),
        "on": st.sampled_from([True, False, 1, 0]),
        "finalizers": st.one_of(EMPTY, st.lists(st.sampled_from(["x", "y", "z"]), max_size=3)),
        "containers": st.one_of(EMPTY, containers()),
        "ratios": st.one_of(EMPTY, st.lists(numbers(), max_size=2)),
        "nested": st.one_of(EMPTY, _optional_fields({
            "at": spelled(TIME_GROUPS[:2]),
            "labels": st.one_of(EMPTY, st.dictionaries(st.sampled_from("ab"),
                                                       st.sampled_from(["", "1"]), max_size=2)),
        })),
        "free": st.one_of(EMPTY, json_values()),
        "either": st.one_of(spelled(TIME_GROUPS[:2]), st.lists(numbers(), max_size=2), EMPTY),
        "unknown": json_values(3),
    })
