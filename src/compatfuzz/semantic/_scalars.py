"""Scalars compared by meaning: numbers, quantities, date-times and durations.

Why a module of its own: each of these parses a value into an exact key (apimachinery's
``resource.Quantity``, RFC 3339 instants, ISO 8601 and Go durations; the parsers are in
``compatfuzz.schema._quantity`` and ``_values``) and falls back to exact comparison when it
does not parse; which duration language a Kubernetes ``format: duration`` field speaks is
decided here too (:func:`iso_duration_field`, after kube-openapi's ``strfmt/duration.go``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from compatfuzz.schema._pattern import search as pattern_search
from compatfuzz.schema._quantity import (
    BINARY_SI,
    DECIMAL_SI,
    InvalidQuantity,
    Quantity,
    quantity_from_json,
)
from compatfuzz.semantic._containers import ANY
from compatfuzz.semantic._diff import Change
from compatfuzz.semantic._node import ABSENT, Node, leaf_change
from compatfuzz.semantic._values import (
    _decimal,
    canonical_date_time,
    canonical_duration,
    canonical_go_duration,
    date_time_key,
    duration_key,
    go_duration_key,
)


class NumberNode(Node):
    """``type: number``: 1 == 1.0 (compared exactly, no float rounding); bool is not a number."""

    __slots__ = ()
    name = "number"

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        ta, tb = type(a), type(b)
        if (ta is int or ta is float) and (tb is int or tb is float):
            return bool(a == b or (ta is float and tb is float and math.isnan(a) and math.isnan(b)))
        return self.slow_eq(a, b)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        if isinstance(v, float) and not isinstance(v, bool):
            if math.isnan(v):
                return ("F",)
            return ("n", int(v) if v.is_integer() else float(v))
        if isinstance(v, int) and not isinstance(v, bool):
            return ("n", int(v))
        return ANY.key(v)

    def canon(self, v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        if not self.eq(a, b):
            leaf_change(self, a, b, path, out, numeric=True)


class _ParsedScalar(Node):
    """A string type compared by a parsed key, exact when it does not parse."""

    __slots__ = ()
    tag = "?"

    def parse(self, v: Any) -> Hashable | None:
        raise NotImplementedError

    def spell(self, v: Any) -> Any:
        raise NotImplementedError

    def eq(self, a: Any, b: Any) -> bool:
        if a is b:
            return True
        if type(a) is str and a == b:
            return True
        return self.key(a) == self.key(b)

    def key(self, v: Any) -> Hashable:
        if v is None:
            return ABSENT
        parsed = self.parse(v)
        return ANY.key(v) if parsed is None else (self.tag, parsed)

    def canon(self, v: Any) -> Any:
        if v is None:
            return None
        out = self.spell(v)
        return v if out is NotImplemented else out

    def detail(self, a: Any, b: Any) -> str:
        ca, cb = self.canon(a), self.canon(b)
        if (ca, cb) != (a, b):
            return f"{self.name}: {ca} != {cb}"
        return ""


@functools.lru_cache(maxsize=8192)
def _quantity_key_str(text: str) -> Hashable | None:
    try:
        q = quantity_from_json(text)
    except InvalidQuantity:
        return None
    return (q.coefficient, q.exponent)


def quantity_key(v: Any) -> Hashable | None:
    if isinstance(v, str):
        return _quantity_key_str(v)
    try:
        q = quantity_from_json(v)
    except InvalidQuantity:
        return None
    return (q.coefficient, q.exponent)


def canonical_quantity(value: Any) -> Any:
    """apimachinery's canonical quantity string: ``"1024Mi"`` -> ``"1Gi"``, 0.5 -> ``"500m"``.

    Returns ``NotImplemented`` when ``value`` is not a quantity.
    """
    try:
        return quantity_from_json(value).canonical()
    except InvalidQuantity:
        return NotImplemented


@functools.lru_cache(maxsize=8192)
def _unique_quantity_str(text: str) -> str | None:
    try:
        return unique_quantity(quantity_from_json(text))
    except InvalidQuantity:
        return None


def unique_quantity(q: Quantity) -> str:
    """The one spelling ``canonicalise`` gives a quantity's value, whatever its format.

    apimachinery's canonical form keeps the format (``"1Gi"`` but ``"1073741824"`` for the
    same value), so it is not unique per value. This is the shorter of the value's canonical
    DecimalSI and BinarySI spellings, DecimalSI on a tie or when BinarySI cannot hold the
    value (beyond +-(2**63-1), where apimachinery caps BinarySI): ``"1Gi"``, ``"1k"`` (also for
    ``"1e3"``), ``"500m"``, ``"1536Mi"``, ``"1T"``, ``"1Ki"`` (for ``"1024"``).
    """
    dec = Quantity(q.coefficient, q.exponent, DECIMAL_SI).canonical()
    c, e = q.coefficient, q.exponent
    if e < 0 or len(str(abs(c))) + e > 19 or abs(c) * 10**e > 2**63 - 1:
        return dec  # not an integer, or beyond the int64 cap BinarySI parses to
    binary = Quantity(c, e, BINARY_SI).canonical()
    return binary if len(binary) < len(dec) else dec


class QuantityNode(_ParsedScalar):
    """``resource.Quantity``: equal numeric value, whatever the suffix or format."""

    __slots__ = ()
    name = "quantity"
    tag = "q"

    def detail(self, a: Any, b: Any) -> str:
        try:
            qa, qb = quantity_from_json(a), quantity_from_json(b)
        except InvalidQuantity:
            return ""
        return f"quantity values {_decimal(Fraction(*qa.as_fraction()))} != " \
            f"{_decimal(Fraction(*qb.as_fraction()))}"

    def parse(self, v: Any) -> Hashable | None:
        return quantity_key(v)

    def diff(self, a: Any, b: Any, path: str, out: list[Change]) -> None:
        # "1" and 2 are both quantity spellings: a value change, not a type change.
        if not self.eq(a, b):
            both = a is not None and b is not None and \
                quantity_key(a) is not None and quantity_key(b) is not None
            leaf_change(self, a, b, path, out, same_type=both)

    def spell(self, v: Any) -> Any:
        if isinstance(v, str):
            out = _unique_quantity_str(v)
            return NotImplemented if out is None else out
        try:
            return unique_quantity(quantity_from_json(v))
        except InvalidQuantity:
            return NotImplemented


class TimeNode(_ParsedScalar):
    """``date-time`` / ``metav1.Time``: the same instant, any offset, exact fractions."""

    __slots__ = ()
    name = "date-time"
    tag = "t"

    def parse(self, v: Any) -> Hashable | None:
        return date_time_key(v)

    def spell(self, v: Any) -> Any:
        return canonical_date_time(v)


class DurationNode(_ParsedScalar):
    """An ISO 8601 duration: equal after exact unit conversions (P1W == P7D, PT1H == PT3600S).

    ``format: duration`` outside Kubernetes, and in a Kubernetes schema where
    :func:`iso_duration_field` says the field is ISO 8601. Strings that are not ISO 8601
    durations are compared exactly.
    """

    __slots__ = ()
    name = "duration"
    tag = "P"

    def parse(self, v: Any) -> Hashable | None:
        return duration_key(v)

    def spell(self, v: Any) -> Any:
        return canonical_duration(v)


class GoDurationNode(_ParsedScalar):
    """A Go ``time.Duration`` string (``metav1.Duration``): equal nanoseconds (90m == 1h30m).

    Also ``format: duration`` in a Kubernetes schema unless the field is ISO 8601
    (:func:`iso_duration_field`). Strings ``time.ParseDuration`` rejects (``"PT1H"``,
    ``"1 hour"``) are compared exactly.
    """

    __slots__ = ()
    name = "go-duration"
    tag = "g"

    def parse(self, v: Any) -> Hashable | None:
        return go_duration_key(v)

    def spell(self, v: Any) -> Any:
        return canonical_go_duration(v)


# Spellings that tell the two duration languages apart: a pattern's verdict on them says
# which one the field speaks. Go's (time.ParseDuration) and ISO 8601's never overlap: Go
# starts with a sign, digit or ".", ISO with an optional sign and "P".
_ISO_PROBES = ("PT0S", "PT1S", "PT1M", "PT1H", "PT90M", "PT1H30M", "PT3600S", "P1D", "P1W",
               "P1DT1H", "P1M", "P1Y")
_GO_PROBES = ("0", "0s", "1s", "1m", "1h", "90m", "1h30m", "1h30m0s", "1.5h", "500ms")


def _probe_pattern(pattern: str, probes: Sequence[str]) -> bool:
    """Whether ``pattern`` (an RE2 search, as the API server runs it) accepts a probe;
    a pattern compatfuzz cannot run tells nothing."""
    try:
        return any(pattern_search(pattern, probe) for probe in probes)
    except Exception:  # re.error, PatternUnsupported: no evidence either way
        return False


def iso_duration_field(obj: Mapping[str, Any]) -> bool:
    """Whether a Kubernetes ``format: duration`` field holds ISO 8601 durations.

    The API server gives the format no single meaning: kube-openapi's
    ``pkg/validation/strfmt/duration.go`` ``ParseDuration`` tries Go's
    ``time.ParseDuration`` and then an unanchored number-and-unit matcher, so ``"90m"``,
    ``"PT1H"`` and ``"PT3600S"`` are all valid, but what it computes for ISO strings is not
    their ISO meaning (``"P1M"`` is one *minute* there, ``"P1DT2H"`` two hours). The server
    only validates and stores the string; what it means is up to the field's consumer, and
    the field's own ``pattern`` and values say which: ISO 8601 when some evidence is ISO
    and none is Go. Evidence is the ``pattern`` accepting an ISO or a Go probe (above), and
    the ``enum``, ``const``, ``default``, ``example`` and ``examples`` strings that parse
    as either. A field without evidence, or with both kinds, stays Go (``metav1.Duration``,
    the Kubernetes convention).
    """
    iso = go = False
    pattern = obj.get("pattern")
    if isinstance(pattern, str):
        iso = _probe_pattern(pattern, _ISO_PROBES)
        go = _probe_pattern(pattern, _GO_PROBES)
    values: list[Any] = []
    for key in ("enum", "examples"):
        listed = obj.get(key)
        if isinstance(listed, list):
            values.extend(listed)
    values.extend(obj[key] for key in ("const", "default", "example") if key in obj)
    for value in values:
        iso = iso or duration_key(value) is not None
        go = go or go_duration_key(value) is not None
    return iso and not go
