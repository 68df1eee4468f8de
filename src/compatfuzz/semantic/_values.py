"""Parsers for the value types compared by meaning: RFC 3339 instants and durations.

Each type gets a *key* (a hashable value such that equal keys mean equal meaning) and a
*canonical string* (one spelling per key). Equality built from keys is an equivalence by
construction, which is what the law tests rely on (STYLE.md 22). Python's ``datetime`` is
not used for instants because it truncates to microseconds and rejects leap seconds and
year 0; we keep the exact fractional digits instead.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

__all__ = [
    "canonical_date_time",
    "canonical_duration",
    "canonical_go_duration",
    "date_time_key",
    "duration_key",
    "format_go_duration",
    "go_duration_key",
    "parse_go_duration",
]

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})",
    re.ASCII,
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar (any year)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def date_time_key(value: Any) -> tuple[int, str] | None:
    """(seconds since the epoch, fractional digits) of an RFC 3339 date-time, or None.

    Any offset; fractional seconds kept exactly (trailing zeros dropped), so two strings
    have equal keys iff they name the same instant.
    """
    if not isinstance(value, str):
        return None
    m = _RFC3339.fullmatch(value)
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    # Second 60 is rejected like Go's time.Parse does (metav1.Time cannot hold it), so a
    # leap-second string is compared exactly instead of as "the next second".
    if not 1 <= mo <= 12 or h > 23 or mi > 59 or s > 59:
        return None
    days_in_month = 29 if mo == 2 and _is_leap(y) else _DAYS_IN_MONTH[mo - 1]
    if not 1 <= d <= days_in_month:
        return None
    offset = 0
    tz = m.group(8)
    if tz not in ("Z", "z"):
        oh, om = int(tz[1:3]), int(tz[4:6])
        if oh > 23 or om > 59:
            return None
        offset = (oh * 3600 + om * 60) * (1 if tz[0] == "+" else -1)
    seconds = _days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset
    return seconds, (m.group(7) or "").rstrip("0")


_YEAR0 = _days_from_civil(0, 1, 1) * 86400  # 0000-01-01T00:00:00Z
_YEAR10K = _days_from_civil(10000, 1, 1) * 86400  # first second RFC 3339 cannot spell
_MAX_OFFSET = 23 * 60 + 59  # minutes


def canonical_date_time(value: Any) -> Any:
    """The instant of an RFC 3339 date-time in UTC, e.g. ``2024-05-01T10:00:00.5Z``.

    One spelling per instant: UTC with the fractional digits kept exactly (trailing zeros
    dropped). An instant UTC cannot spell because its UTC year leaves 0000-9999
    gets the offset of the fewest minutes that brings the local time into range:
    ``0000-01-01T00:30:00+01:30`` and ``0000-01-01T00:00:00+01:00`` (both
    ``-0001-12-31T23:00:00Z``) -> ``0000-01-01T00:00:00+01:00``.
    Returns ``NotImplemented`` for anything that is not a valid RFC 3339 date-time (so the
    field falls back to exact comparison); second 60 (a leap second) is not valid here,
    as in Go's ``time.Parse``.
    """
    key = date_time_key(value)
    if key is None:
        return NotImplemented
    seconds, frac = key
    offset = 0  # minutes east of UTC
    if seconds < _YEAR0:  # east of UTC by ceil((_YEAR0 - seconds) / 60) minutes
        offset = -((seconds - _YEAR0) // 60)
    elif seconds >= _YEAR10K:  # west of UTC by ceil((seconds - _YEAR10K + 1) / 60) minutes
        offset = (_YEAR10K - 1 - seconds) // 60
    if abs(offset) > _MAX_OFFSET:  # cannot happen for a parsed value; be safe
        return NotImplemented
    local = seconds + offset * 60
    days, rem = divmod(local, 86400)
    y, mo, d = _civil_from_days(days)
    h, rem = divmod(rem, 3600)
    mi, s = divmod(rem, 60)
    if offset == 0:
        zone = "Z"
    else:
        zone = f"{'+' if offset > 0 else '-'}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}" + \
        (f".{frac}" if frac else "") + zone


_NUM = r"(\d+(?:[.,]\d+)?)"
_ISO_DURATION = re.compile(
    rf"([+-])?P(?!$)(?:{_NUM}Y)?(?:{_NUM}M)?(?:{_NUM}W)?(?:{_NUM}D)?"
    rf"(?:T(?=\d)(?:{_NUM}H)?(?:{_NUM}M)?(?:{_NUM}S)?)?",
    re.ASCII,
)


def duration_key(value: Any) -> tuple[Fraction, Fraction, Fraction] | None:
    """(months, days, seconds) of an ISO 8601 duration, or None.

    Only exact conversions are made: years are 12 months, weeks 7 days, hours 3600 s and
    minutes 60 s. Months, days and seconds stay separate because their lengths vary
    (``P1D`` is not ``PT24H`` across a DST change; ``P1M`` is not ``P30D``).
    """
    if not isinstance(value, str):
        return None
    m = _ISO_DURATION.fullmatch(value)
    if m is None:
        return None
    y, mo, w, d, h, mi, s = (Fraction(g.replace(",", ".")) if g else Fraction(0)
                             for g in m.groups()[1:])
    sign = -1 if m.group(1) == "-" else 1
    return sign * (y * 12 + mo), sign * (w * 7 + d), sign * (h * 3600 + mi * 60 + s)


def _decimal(x: Fraction) -> str:
    """Exact decimal text of a fraction whose denominator divides a power of ten."""
    if x.denominator == 1:
        return str(x.numerator)
    for k in range(1, 400):
        scaled = x * 10**k
        if scaled.denominator == 1:
            digits = str(scaled.numerator).rjust(k + 1, "0")
            return (digits[:-k] + "." + digits[-k:]).rstrip("0").rstrip(".")
    return str(float(x))  # pragma: no cover - inputs are decimal, so this is unreachable


def canonical_duration(value: Any) -> Any:
    """One spelling per ISO 8601 duration: ``P1Y2M3DT4H5M6.5S``, zero as ``PT0S``.

    Returns ``NotImplemented`` for anything that is not an ISO 8601 duration.
    """
    key = duration_key(value)
    if key is None:
        return NotImplemented
    months, days, seconds = key
    if not (months or days or seconds):
        return "PT0S"
    negative = min(months, days, seconds) < 0
    months, days, seconds = abs(months), abs(days), abs(seconds)
    out = "-P" if negative else "P"
    if months.denominator == 1:
        years, rest_months = divmod(months.numerator, 12)
        out += (f"{years}Y" if years else "") + (f"{rest_months}M" if rest_months else "")
    else:
        out += f"{_decimal(months)}M"
    if days:
        out += f"{_decimal(days)}D"
    if seconds:
        hours = seconds.numerator // (seconds.denominator * 3600)
        rest = seconds - hours * 3600
        minutes = rest.numerator // (rest.denominator * 60)
        rest -= minutes * 60
        out += "T" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "") + \
            (f"{_decimal(rest)}S" if rest else "")
    return out


# Go time.ParseDuration / Duration.String, ported exactly (float64 fractions included).
_UNITS = {
    "ns": 1, "us": 1000, "\u00b5s": 1000, "\u03bcs": 1000, "ms": 1_000_000,
    "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000,
}
_U63 = 1 << 63


class _GoDurationError(ValueError):
    pass


def parse_go_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``"1h30m"``, ``"1.5s"``), as ``time.ParseDuration``.

    Raises:
        ValueError: ``text`` is not a Go duration.
    """
    orig = text
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise _GoDurationError(f"time: invalid duration {orig!r}")
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise _GoDurationError(f"time: invalid duration {orig!r}")
        i = 0
        v = 0
        while i < len(s) and "0" <= s[i] <= "9":
            if v > _U63 // 10:
                raise _GoDurationError(f"time: invalid duration {orig!r}")
            v = v * 10 + ord(s[i]) - 48
            if v > _U63:
                raise _GoDurationError(f"time: invalid duration {orig!r}")
            i += 1
        pre = i > 0
        s = s[i:]
        post = False
        f = 0
        scale = 1.0
        if s and s[0] == ".":
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and "0" <= s[i] <= "9":
                if not overflow:
                    if f > (_U63 - 1) // 10:
                        overflow = True
                    else:
                        y = f * 10 + ord(s[i]) - 48
                        if y > _U63:
                            overflow = True
                        else:
                            f = y
                            scale *= 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise _GoDurationError(f"time: invalid duration {orig!r}")
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise _GoDurationError(f"time: missing unit in duration {orig!r}")
        unit_name, s = s[:i], s[i:]
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise _GoDurationError(f"time: unknown unit {unit_name!r} in duration {orig!r}")
        if v > _U63 // unit:
            raise _GoDurationError(f"time: invalid duration {orig!r}")
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _U63:
                raise _GoDurationError(f"time: invalid duration {orig!r}")
        total += v
        if total > _U63:
            raise _GoDurationError(f"time: invalid duration {orig!r}")
    if neg:
        return -total
    if total > _U63 - 1:
        raise _GoDurationError(f"time: invalid duration {orig!r}")
    return total


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    digits = ""
    printing = False
    for _ in range(prec):
        digit = v % 10
        printing = printing or digit != 0
        if printing:
            digits = str(digit) + digits
        v //= 10
    return ("." + digits if printing else ""), v


def format_go_duration(ns: int) -> str:
    """Go's ``Duration.String()``: ``"1h30m0s"``, ``"1.5s"``, ``"500ms"``, ``"0s"``."""
    u = abs(ns)
    sign = "-" if ns < 0 else ""
    if u < 1_000_000_000:
        if u == 0:
            return "0s"
        if u < 1000:
            unit, prec = "ns", 0
        elif u < 1_000_000:
            unit, prec = "\u00b5s", 3
        else:
            unit, prec = "ms", 6
        frac, u = _fmt_frac(u, prec)
        return f"{sign}{u}{frac}{unit}"
    frac, u = _fmt_frac(u, 9)
    out = f"{u % 60}{frac}s"
    u //= 60
    if u > 0:
        out = f"{u % 60}m" + out
        u //= 60
        if u > 0:
            out = f"{u}h" + out
    return sign + out


def go_duration_key(value: Any) -> int | None:
    """Nanoseconds of a Go duration string, or None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        return parse_go_duration(value)
    except ValueError:
        return None


def canonical_go_duration(value: Any) -> Any:
    """Go's spelling of a Go duration (``"90m"`` -> ``"1h30m0s"``), else ``NotImplemented``.

    For fields holding ``metav1.Duration``; mark them with ``go_durations=`` or
    ``register_canonicaliser(canonical_go_duration, path=...)``.
    """
    ns = go_duration_key(value)
    return NotImplemented if ns is None else format_go_duration(ns)
