"""Boundary values by construction, switched on per example (swarm testing).

Conversion bugs live at value-class edges: a zero taken for "unset", an int64 above 2^53
through a float, a nanosecond dropped by ``datetime``, a digit-only int-or-string parsed
into a number, a list longer than an older version's ``maxItems``, two list-map items that
share part of their key. Uniform random values reach those edges once in thousands of
draws, so every scalar here is drawn from its *edge table* or from its ordinary random
strategy, and the mix is decided per example:

* **Swarm testing** (Groce et al., "Swarm Testing", ISSTA 2012): each example draws one
  bitmask that switches value *families* (integers, strings, date-times, lists, ...) hot
  or cold, and a *density* for optional fields. A hot family draws from its edge table
  most of the time, a cold one rarely; so an example that is all about integer edges sits
  beside one full of near-duplicate list keys, and rare combinations of fields (both
  ``limits`` and ``requests``, five sibling strings) show up instead of averaging out.
* The edge tables list, for each value class, the values that sit on a boundary of a
  parser, a width or a canonical form, restricted to what the node's schema allows (so
  every value stays valid), with the simplest value first: the edge branch shrinks to it.

One example costs two extra choices (mask and density); each scalar one more (edge or
not). Measured on the seeded-bug suite (``benchmarks/bench_seeded.py``); the classes
reported by :class:`~compatfuzz.strategies.Coverage` are the ones built here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "DENSITIES",
    "Family",
    "bitmask",
    "duration_edges",
    "edged",
    "int_or_string_edges",
    "integer_edges",
    "number_edges",
    "quantity_edges",
    "string_edges",
    "swarm_mask",
    "time_edges",
]


class Family:
    """Bits of the per-example swarm mask."""

    INT = 1 << 0
    NUMBER = 1 << 1
    STRING = 1 << 2
    QUANTITY = 1 << 3
    INT_OR_STRING = 1 << 4
    TIME = 1 << 5
    DURATION = 1 << 6
    LIST = 1 << 7
    MAP = 1 << 8
    BOOL = 1 << 9
    EMPTY = 1 << 10  # optional objects without required fields come out as {}
    ALL = (1 << 11) - 1


def bitmask(bits: int) -> st.SearchStrategy[int]:
    """Uniform random ``bits``-bit masks in one choice, shrinking to 0.

    Bytes, not ``st.integers``: Hypothesis draws wide integers from a distribution that
    favours small magnitudes (a 24-bit integer has its top bit set in 5% of draws), which
    would leave the fields behind the low bits nearly always absent.
    """
    size = max(1, (bits + 7) // 8)
    return st.binary(min_size=size, max_size=size).map(
        lambda raw: int.from_bytes(raw, "little") & ((1 << bits) - 1)
    )


#: Drawn once per example: which families are hot (each is hot half the time).
swarm_mask = bitmask(Family.ALL.bit_length())
#: Optional-field presence per example, in eighths, for objects with many optional fields
#: (a narrow object's fields are present at least half the time). Index 0 is the sparsest,
#: which is where the density draw shrinks to.
DENSITIES = (1, 2, 4, 6)
density_index = st.integers(min_value=0, max_value=len(DENSITIES) - 1)

# Out of 10: how often a hot / cold family draws from its edge table.
_HOT, _COLD = 8, 1


def edged(
    random: st.SearchStrategy[Any], edges: st.SearchStrategy[Any] | None, family: int
) -> Callable[[st.DrawFn, Any], Any]:
    """A ``gen(draw, ex)`` that draws ``random`` or, mostly when the example's swarm has
    ``family`` hot, ``edges``.

    Each value is one ``one_of`` draw, so it is one span that Hypothesis's shrinker can
    delete whole, and the branch shrinks to ``random`` (first), whose own shrinking is
    the finest (``replicas > 5`` shrinks to 6, not to the nearest edge).
    """
    if edges is None:
        return lambda draw, ex: draw(random)
    hot = st.one_of([random] * (10 - _HOT) + [edges] * _HOT)
    cold = st.one_of([random] * (10 - _COLD) + [edges] * _COLD)

    def gen(draw: st.DrawFn, ex: Any) -> Any:
        return draw(hot if ex.hot & family else cold)

    return gen


def _sampled(values: Sequence[Any]) -> st.SearchStrategy[Any] | None:
    unique = list(dict.fromkeys(values))
    return st.sampled_from(unique) if unique else None


# ---------------------------------------------------------------- integers and numbers
# One class per line; an edge draw picks a class the bounds allow, then a value in it.
_INT_CLASSES: tuple[tuple[int, ...], ...] = (
    (0,),  # zero taken for "unset": the commonest integer bug
    (1, -1, 2, 10, 100, 1000, 1024),
    (2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**31 + 1),  # int32
    (2**32 - 1, 2**32, 2**32 + 5, 65535, 65536),  # uint32, uint16
    (2**53 + 1, -(2**53) - 1, 2**53 - 1, 2**53, 123456789123456789, 2**63 - 2),  # float64
    (2**63 - 1, -(2**63), -(2**63) + 1, 2**62),  # int64 extremes
)


def integer_edges(lo: int, hi: int, step: int = 1) -> st.SearchStrategy[int] | None:
    """0, +-1, the bounds and one inside them, the 2^31, 2^32, 2^53 and int64 edges,
    restricted to ``[lo, hi]`` and to multiples of ``step``; a class first, then a value,
    so that a wide int64 field reaches the float64 edge as often as a bounded one zero."""
    bounds = (lo, lo + 1, hi, hi - 1, lo + 2 * step, hi - step)
    classes = [*_INT_CLASSES, bounds]
    options = []
    for values in classes:
        stepped = values if step == 1 else (*(v - v % step for v in values),
                                            math.ceil(lo / step) * step)
        fitting = list(dict.fromkeys(v for v in stepped if lo <= v <= hi and v % step == 0))
        if fitting:
            options.append(st.sampled_from(fitting))
    return st.one_of(options) if options else None


_NUMBER_CLASSES: tuple[tuple[float | int, ...], ...] = (
    (0, 0.0),  # zero taken for "unset"
    (0.1, 0.5, 1, 1.5, -1, -0.5, 0.3333333333333333, 0.30000000000000004),  # rounding
    (1e-7, 2.5e-324, 1e21, 1e308, 3.4028235e38),  # tiny and huge: float32, exponents
    (2**53 + 1, 16777217),  # integers float64 / float32 cannot hold
)


def number_edges(lo: float | None, hi: float | None, lo_excl: bool, hi_excl: bool,
                 width: int) -> st.SearchStrategy[float | int] | None:
    """Zero, float32 and float64 rounding edges, tiny and huge magnitudes, the bounds: a
    class first, then a value, as for integers."""
    def ok(x: float) -> bool:
        if lo is not None and (x <= lo if lo_excl else x < lo):
            return False
        if hi is not None and (x >= hi if hi_excl else x > hi):
            return False
        return width == 64 or abs(x) <= 3.4028235e38

    bounds = tuple(b for b in (lo, hi) if b is not None)
    options = [s for values in (*_NUMBER_CLASSES, bounds)
               if (s := _sampled([x for x in values if ok(x)])) is not None]
    return st.one_of(options) if options else None


# ---------------------------------------------------------------------------- strings
# An empty piece beside a separator: split/partition and join lose it ("Cher " split on its
# first space is "Cher" and "", which `last or None` reads as no last name; Go's
# strings.Fields and Python's str.split() drop empty fields, Split(s, " ") keeps them); two
# words with a doubled separator are the same trap in the middle.
_SPLIT_PIECES = ("x ", " x", "x  y", "x,", ",x", "x,,y", "x/", "x y ")
# One class per line; a hot string picks a class first (string_edges weighs "" twice).
_STRING_CLASSES: tuple[tuple[str, ...], ...] = (
    ("",),
    (" ", " x ", "x ", "\tx", "x\n", "\u00a0x"),  # blank or padded: TrimSpace loses it
    ("0", "007", "42", "-1", "1e3", "2147483648"),  # digit-only: parsed as a number
    ("Ab", "AB", "ab", "Abc", "aBC"),  # case pairs: case folding merges them
    # NFC changes each of these: a converter that normalises Unicode loses them
    ("e\u0301", "Cafe\u0301", "A\u030a", "o\u0308", "n\u0303o"),  # combining marks
    ("\u212b", "\u2126", "\u037e", "K\u212a"),  # singletons: Angstrom, Ohm, Greek ";", Kelvin
    ("\u00e9", "\ufb01", "\U0001f600", "a\u200bb"),  # composed, ligature, astral, ZWSP
    ("null", "true", "a/b", "a.b", "\\", '"', "<>&"),  # words and escapes
    _SPLIT_PIECES,  # an empty piece beside a separator
)


def string_edges(min_len: int, max_len: int | None) -> st.SearchStrategy[str] | None:
    """Empty, blank, padded, digit-only, case pairs, combining and composed Unicode (NFC
    and NFD differ), astral characters, an empty piece beside a separator, and strings of
    exactly ``maxLength``."""
    hi = math.inf if max_len is None else max_len
    options: list[st.SearchStrategy[str]] = []
    for values in _STRING_CLASSES:
        fitting = [v for v in values if min_len <= len(v) <= hi]
        if fitting:
            options.append(st.sampled_from(fitting))
    if min_len == 0:
        # "" twice: empty-as-unset (Go's omitempty, a string pointer dropped) is the
        # commonest string bug, and one class in ten would leave it rare
        options.insert(1, st.just(""))
    if max_len is not None and 0 < max_len <= 4096 and max_len >= min_len:
        # the longest value: random, or padded with spaces at either end
        padded = " " + "x" * (max_len - 2) + " " if max_len >= 2 else " "
        options.append(st.one_of(st.text(min_size=max_len, max_size=max_len),
                                 st.just(padded)))
    if 0 < min_len <= 4096:
        options.append(st.just("x" * min_len))
    split = [v for v in _SPLIT_PIECES if min_len <= len(v) <= hi]
    if split:
        # twice, as "": a field split on a separator and joined back (a name into first
        # and last, an address into lines) is the commonest string migration (beside
        # rename, remove and type change), and these are the values it loses
        options.append(st.sampled_from(split))
    return st.one_of(options) if options else None


# ------------------------------------------------------------------- Kubernetes types
_ZERO_QUANTITIES = ("0", "0m", "0Gi", "0.0", "0k", "-0", "0e3", "+0")
_QUANTITY_CLASSES: tuple[tuple[str, ...], ...] = (
    _ZERO_QUANTITIES,
    # many significant digits; digit-only above 2^53 (float64 loses them)
    ("9007199254740993", "123456789123456789", "12345678901234567891",
     "1.0000000000000000001", "9223372036854775807", "9223372036854775808",
     "18446744073709551616"),
    # sub-milli precision: rounding to millis or micros loses it
    ("100500u", "1n", "999999999n", "0.0001", "1500u", "0.1m", "1.0005", "12e-9"),
    # suffix boundaries and exponents
    ("1023Ki", "1024Ki", "1025Ki", "1Mi", "1024Mi", "1Gi", "1.5Gi", "1536Mi", "1000m", "1k",
     "1000k", "1M", "8Ei", "8E", "1e3", "1E-3", "1e+6", "1e18", "1e-18", ".5", "5.", "+1"),
)


def quantity_edges(allow_numbers: bool) -> st.SearchStrategy[Any]:
    """Zero quantities in every spelling, more than 18 significant digits, digit-only
    values above 2^53, sub-milli precision, suffix boundaries and exponents: a class
    first, then a value, so that zero ("unset" to many converters) is a quarter of the
    edge draws rather than one value in six."""
    options: list[st.SearchStrategy[Any]] = [st.sampled_from(values)
                                             for values in _QUANTITY_CLASSES]
    if allow_numbers:
        options.append(st.sampled_from([0, 1, 1024, 2**53 + 1, 2**63 - 1]))
    return st.one_of(options)


_INT_OR_STRING_CLASSES: tuple[tuple[Any, ...], ...] = (
    (0, 1, -1, 3, 2**31 - 1),
    ("0", "3", "1", "007", "2147483648"),  # digit-only strings: parsed into ints
    ("25%", "0%", "100%", "50%"),  # percentages: scaled or parsed
)


def int_or_string_edges() -> st.SearchStrategy[Any]:
    """Ints beside the digit-only strings that spell them, and percentages."""
    return st.one_of([st.sampled_from(values) for values in _INT_OR_STRING_CLASSES])


_EPOCH = datetime(1970, 1, 1)
_FIRST_SECOND = -62_135_596_800  # 0001-01-01T00:00:00Z
_LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z


def render_time(seconds: int, nanos: int, offset_minutes: int, digits: int) -> str:
    """RFC 3339 text of ``seconds`` since 1970 plus ``nanos``, in the given offset, with
    ``digits`` fractional digits (truncated, as Go's layouts do)."""
    instant = _EPOCH + timedelta(seconds=seconds)
    local = instant.replace(tzinfo=timezone.utc).astimezone(
        timezone(timedelta(minutes=offset_minutes))
    )
    text = f"{local.year:04d}" + local.strftime("-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{nanos:09d}"[:digits]
    if offset_minutes == 0:
        return text + "Z"
    sign = "+" if offset_minutes > 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{text}{sign}{hours:02d}:{minutes:02d}"


_TIME_EDGES = [
    "0001-01-01T00:00:00Z",  # Go's zero time: "unset" to many converters
    "1970-01-01T00:00:00Z",
    "2024-02-29T12:00:00Z",  # leap day
    "2000-02-29T23:59:59.999999999Z",
    "2026-01-02T03:04:05.123456789Z",  # nanoseconds
    "2026-01-02T03:04:05.000000001Z",
    "2026-01-02T03:04:05.1Z",
    "2026-01-02T03:04:05+01:00",
    "2026-01-02T03:04:05.5-23:59",
    "2026-01-02T00:00:00+23:59",
    "1969-12-31T23:59:59.999999999Z",  # negative Unix time
    "1677-09-21T00:12:43.145224192Z",  # int64 Unix nanoseconds' minimum
    "2262-04-11T23:47:16.854775807Z",  # ... and maximum
    "2262-04-12T00:00:00Z",  # beyond it
    "9999-12-31T23:59:59.999999999Z",
]
# Kubernetes only: year 0000, which both Go's time.Parse and strfmt take; a lower-case
# "t"/"z", which strfmt's IsDateTime takes (it lower-cases first, strfmt/time.go) but
# Go's time.Parse(time.RFC3339, ...) refuses (the layout's "T" and "Z" are literals,
# time/format_rfc3339.go and time/format.go): only for a CRD's date-time string, never
# for a metav1.Time field, which metav1.Time.UnmarshalJSON parses with time.Parse
# (apimachinery pkg/apis/meta/v1/time.go).
_TIME_EDGES_KUBE = ["0000-01-01T00:00:00Z"]
_TIME_EDGES_STRFMT = ["2026-01-02t03:04:05z"]


def time_edges(kubernetes: bool, *, metav1: bool = False) -> st.SearchStrategy[str]:
    """Zero time, leap days, nanoseconds, far offsets, the int64-nanosecond range edges
    and the first and last instants RFC 3339 parsers take. ``metav1``: the field is a
    ``metav1.Time``/``MicroTime``, so only what Go's ``time.Parse`` takes (no lower-case
    ``t``/``z``)."""
    values = _TIME_EDGES + (_TIME_EDGES_KUBE if kubernetes else [])
    if kubernetes and not metav1:
        values += _TIME_EDGES_STRFMT
    return st.sampled_from(values[:1] * 4 + values)  # Go's zero time: a fifth of draws


#: Any instant Go's RFC 3339 parser takes (years 0001-9999), nanosecond precision, 0-9
#: fractional digits, offsets up to +-23:59.
rfc3339_any = st.tuples(
    # a day inside either end, so that every offset keeps the local year in 0001-9999
    st.integers(min_value=_FIRST_SECOND + 86_400, max_value=_LAST_SECOND - 86_400),
    st.integers(min_value=0, max_value=999_999_999),
    st.sampled_from([0, 0, 60, -300, 330, 840, -720, 1439, -1439, 45]),
    st.integers(min_value=0, max_value=9),
).map(lambda t: render_time(*t))


_DURATION_CLASSES: tuple[tuple[str, ...], ...] = (
    ("0s", "0"),
    ("1h0m0s", "1h30m", "1.5h", "36h", "5m"),  # whole hours and minutes
    ("90s", "59s", "61s", "1m30s", "3601s", "1h0m1s"),  # seconds, not whole minutes
    ("0.5s", "1.5s", "1m0.5s", "1h1m1.001s"),  # fractional seconds
    ("1ms", "999ms", "1.5ms"),  # one class per sub-second unit: each is its own bug
    ("1us", "1\u00b5s", "250us"),
    ("1ns", "999999999ns"),
    ("-1m30s", "-1ns", "2562047h47m16.854775807s", "-2562047h47m16.854775808s"),
)


def duration_edges() -> st.SearchStrategy[str]:
    """Every Go unit, seconds that are not whole minutes, fractions, negatives, the int64
    extremes: a class first, so that each sub-second unit is one edge draw in eight."""
    return st.one_of([st.sampled_from(values) for values in _DURATION_CLASSES])


def fraction_step(mult: Any) -> int | None:
    """The integer step of an integer ``multipleOf`` (None for fractional ones)."""
    m = Fraction(str(mult))
    return int(m) if m.denominator == 1 else None


def key_variants(key: str, which: int) -> list[str]:
    """Near-duplicates of a map key or set item (case-folded, padded, NFD-split), the
    ``which``-th first, then the others in turn, without ``key`` itself: the caller takes
    the first one its schema accepts, so a pattern that forbids padding still gets a
    case variant rather than no near-duplicate at all."""
    variants = (key.swapcase(), key.upper(), key.lower(), key + " ", " " + key,
                key.capitalize(), key + "\u0301", key[:-1] if len(key) > 1 else key + key)
    start = which % len(variants)
    ordered = variants[start:] + variants[:start]
    return [v for v in dict.fromkeys(ordered) if v != key]


def key_variant(key: str, which: int) -> str:
    """The ``which``-th near-duplicate of ``key`` (see :func:`key_variants`)."""
    return (key_variants(key, which) or [key + key])[0]


VARIANTS = 8
