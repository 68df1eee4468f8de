"""Strategies for JSON scalars under JSON Schema keywords, built by construction.

Each function takes a (normalised) schema node and returns one Hypothesis strategy, so a
scalar costs one draw. Filtering is kept for the rare keyword combinations that cannot be
built directly (a pattern *and* a length, a float ``multipleOf``).

String formats have two tables, like ``compatfuzz.schema.check_format``: JSON Schema's
meaning, and for Kubernetes sources the API server's (issue "API-server fidelity"), keyed
by the server's normalised names (``date-time`` -> ``datetime``). The Kubernetes table
draws every spelling the server admits, not only the canonical one: Go *and* unit-word
durations (``"1h30m"``, ``"3 days"``, ``"PT1H"``), zero-padded IPv4 octets, upper-case
UUIDs, MACs with ``-`` or ``.``, because converters meet those in real objects. A format
the server ignores constrains nothing, so it draws plain text. A field with both a
``format`` and a ``pattern`` draws from each side and keeps values that satisfy both,
warning (``UnsupportedRuleWarning``) when they rarely or never do instead of letting the
field silently disappear.
"""

from __future__ import annotations

import base64
import math
import string
from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from hypothesis import assume
from hypothesis import strategies as st

from compatfuzz.errors import UnsupportedSchema
from compatfuzz.schema import check_format
from compatfuzz.strategies import _edges
from compatfuzz.strategies import _kubernetes as k8s
from compatfuzz.strategies._edges import Family
from compatfuzz.strategies._regex import compile_pattern

__all__ = [
    "format_strategy", "integer_edges_for", "integers_for", "number_edges_for", "numbers_for",
    "string_edges_for", "strings_for",
]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
# Strings without maxLength are capped so objects stay small; documented in from_schema.
DEFAULT_MAX_STRING = 24
# A format with a pattern: draws per value (each from both sides) before rejecting, and
# draws after which a pair that nearly never holds is reported.
_BOTH_TRIES = 8
_BOTH_SAMPLE = 200

_hostname = st.tuples(
    st.lists(k8s.dns_label, min_size=0, max_size=2),
    st.text(alphabet=string.ascii_lowercase, min_size=2, max_size=6),
).map(lambda t: ".".join([*t[0], t[1]]))
_uri_path = st.lists(
    st.text(alphabet=string.ascii_letters + string.digits + "-._~", min_size=1, max_size=8),
    max_size=3,
).map(lambda parts: "/" + "/".join(parts) if parts else "")
_uri = st.tuples(
    st.sampled_from(["http", "https", "ftp", "urn", "s3"]), _hostname,
    st.one_of(st.just(""), st.integers(min_value=1, max_value=65535).map(lambda p: f":{p}")),
    _uri_path,
).map(lambda t: f"{t[0]}://{t[1]}{t[2]}{t[3]}")
_iso_duration = st.one_of(
    # Weeks stand alone in ISO 8601 ("P3W"); the other designators combine in order.
    st.integers(0, 99).map(lambda n: f"P{n}W"),
    st.tuples(
        st.lists(st.tuples(st.integers(0, 99), st.sampled_from("YMD")), max_size=2,
                 unique_by=lambda t: t[1]),
        st.lists(st.tuples(st.integers(0, 99), st.sampled_from("HMS")), max_size=2,
                 unique_by=lambda t: t[1]),
    ).map(
        lambda t: "P"
        + "".join(f"{n}{u}" for n, u in sorted(t[0], key=lambda x: "YMD".index(x[1])))
        + ("T" + "".join(f"{n}{u}" for n, u in sorted(t[1], key=lambda x: "HMS".index(x[1])))
           if t[1] else "")
    ).map(lambda s: s if len(s) > 1 else "PT0S"),
)
_email = st.tuples(k8s.dns_label, _hostname).map("@".join)
_ipv4 = st.ip_addresses(v=4).map(str)
_ipv6 = st.ip_addresses(v=6).map(str)

_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date-time": k8s.rfc3339,
    "date": st.dates().map(lambda d: d.isoformat()).filter(lambda s: len(s) == 10),
    "time": k8s.rfc3339.map(lambda s: s.split("T", 1)[1]),
    "email": _email,
    "idn-email": _email,
    "hostname": _hostname,
    "idn-hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "uri": _uri,
    "iri": _uri,
    "uri-reference": st.one_of(_uri, _uri_path),
    "iri-reference": st.one_of(_uri, _uri_path),
    "uri-template": st.tuples(_uri, st.sampled_from(["", "/{id}", "{?q,page}", "/{+path}"])).map(
        "".join
    ),
    "uuid": st.uuids().map(str),
    "byte": st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode()),
    "password": st.text(max_size=DEFAULT_MAX_STRING),
    "regex": st.sampled_from(["^[a-z]+$", ".*", "a|b", "[0-9]{1,3}", ""]),
    "json-pointer": st.lists(st.text(alphabet=string.ascii_letters, max_size=5), max_size=3).map(
        lambda parts: "".join("/" + p for p in parts)
    ),
    "relative-json-pointer": st.integers(0, 5).map(str),
    "duration": _iso_duration,
    "cidr": st.tuples(_ipv4, st.integers(0, 32)).map(lambda t: f"{t[0]}/{t[1]}"),
    "mac": st.binary(min_size=6, max_size=6).map(lambda b: ":".join(f"{x:02x}" for x in b)),
}


# ------------------------------------------------ the API server's formats (Kubernetes)
def _kube_ok(fmt: str) -> Callable[[str], bool]:
    return lambda value: check_format(fmt, value, kubernetes=True)


def _upper_keeping_micro(word: str) -> str:
    return word.upper().replace("\u039c", "\u00b5")


def _title_keeping_micro(word: str) -> str:
    return word.title().replace("\u039c", "\u00b5")


# strfmt.ParseDuration's second chance: number + unit words, any case ("2 Hours 5 min").
_UNIT_WORDS = [
    "ns", "nano", "nanos", "nanoseconds", "us", "\u00b5s", "micro", "microseconds", "ms",
    "milli", "millis", "milliseconds", "s", "sec", "secs", "seconds", "m", "min", "mins",
    "minutes", "h", "hr", "hour", "hours", "d", "day", "days", "w", "wk", "week", "weeks",
]
_word_durations = st.tuples(
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["", " "]),
                       st.sampled_from(_UNIT_WORDS),
                       # "\u00b5s".upper() is Greek "\u039cS", which the server rejects
                       st.sampled_from([str.lower, _upper_keeping_micro, _title_keeping_micro])),
             min_size=1, max_size=3),
    st.sampled_from(["", " ", ", "]),
).map(lambda t: t[1].join(f"{n}{gap}{case(unit)}" for n, gap, unit, case in t[0]))
# Go's spelling stays the common one (half the draws), as in real objects.
_kube_durations = st.one_of(
    k8s.go_durations, k8s.go_durations, k8s.go_durations, k8s.go_durations,
    _word_durations,
    _iso_duration.filter(_kube_ok("duration")),  # "PT1H30M"; "P1Y" alone is not one
    st.sampled_from(["PT0S", "1 hour", "3 days ago", "1h 30m", "P1DT12H", "10 µs"]),
)


def _zero_padded(ip: str) -> str:
    return ".".join(part.zfill(3) for part in ip.split("."))


def _isbn10(digits: list[int]) -> str:
    check = -sum((i + 1) * d for i, d in enumerate(digits)) % 11
    check = (check * 10) % 11  # the check digit weighs 10: 10 * c == -total (mod 11)
    return "".join(map(str, digits)) + ("X" if check == 10 else str(check))


def _isbn13(digits: list[int]) -> str:
    total = sum((1, 3)[i % 2] * d for i, d in enumerate(digits))
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def _hyphenate(text: str, cuts: list[int], sep: str) -> str:
    out, last = [], 0
    for cut in sorted(set(cuts)):
        if 0 < cut < len(text):
            out.append(text[last:cut])
            last = cut
    return sep.join([*out, text[last:]])


def _luhn_complete(prefix: str, length: int, body: list[int]) -> str:
    digits = prefix + "".join(map(str, body))[: length - len(prefix) - 1]
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (1 if i % 2 else 2)  # the check digit will be the undoubled one
        total += d - 9 if d >= 10 else d
    return digits + str(-total % 10)


# govalidator's issuer patterns: (prefix, length)
_CARDS = [("4", 13), ("4", 16), ("51", 16), ("55", 16), ("6011", 16), ("65", 16),
          ("34", 15), ("37", 15), ("300", 14), ("305", 14), ("36", 14), ("38", 14),
          ("2131", 15), ("1800", 15), ("35", 16)]
_hex = "0123456789abcdef"
_mac_bytes = st.sampled_from([6, 6, 6, 8, 20]).flatmap(
    lambda n: st.binary(min_size=n, max_size=n)
)


def _mac(raw: bytes, style: int) -> str:
    octets = [f"{x:02x}" for x in raw]
    if style == 0:
        return ":".join(octets)
    if style == 1:
        return "-".join(octets).upper()
    return ".".join(octets[i] + octets[i + 1] for i in range(0, len(octets), 2))


_KUBE_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "bsonobjectid": st.binary(min_size=12, max_size=12).map(bytes.hex),
    "uri": st.one_of(
        _uri, _uri_path.filter(bool), st.just("*"),
        _email.map(lambda e: f"mailto:{e}"),  # opaque
        st.sampled_from(["http://[::1]:8080/x", "http://user:pw@example.com/",
                         "https://example.com/a?b=c#d", "/healthz"]),
    ),
    "email": st.one_of(
        _email,
        st.tuples(st.text(alphabet=string.ascii_letters, min_size=1, max_size=8), _email).map(
            lambda t: f"{t[0]} <{t[1]}>"
        ),
        st.sampled_from(['"a b"@example.com', "a@example.com (Ann)", "a@[192.0.2.1]",
                         "grp: a@example.com;"]),
    ),
    "hostname": st.one_of(
        _hostname,
        st.sampled_from(["localhost", "a", "xn--bcher-kva.example", "b\u00fccher.de",
                         "\u2603.net", "1a.example.com", "a" * 63 + ".io"]),
    ),
    # ParseIPSloppy: zero-padded octets and IPv4 inside IPv6 are IPv4 to the server
    "ipv4": st.one_of(_ipv4, _ipv4.map(_zero_padded), _ipv4.map(lambda ip: f"::ffff:{ip}")),
    "ipv6": st.one_of(_ipv6, _ipv6.map(str.upper), _ipv4.map(lambda ip: f"::ffff:{ip}")),
    "cidr": st.one_of(
        st.tuples(_ipv4, st.integers(0, 32)).map(lambda t: f"{t[0]}/{t[1]}"),
        st.tuples(_ipv6, st.integers(0, 128)).map(lambda t: f"{t[0]}/{t[1]}"),
        st.tuples(_ipv4.map(_zero_padded), st.integers(0, 32)).map(lambda t: f"{t[0]}/{t[1]}"),
    ),
    # ":", "-" and "." spellings; not bare hex, which only newer Go versions accept
    "mac": st.tuples(_mac_bytes, st.integers(0, 2)).map(lambda t: _mac(*t)),
    "uuid": st.tuples(st.uuids(), st.booleans(), st.booleans()).map(
        lambda t: (str(t[0]).upper() if t[1] else str(t[0])).replace("-", "" if t[2] else "-")
    ),
    "uuid3": st.uuids(version=3).map(str),
    "uuid4": st.uuids(version=4).map(str),
    "uuid5": st.uuids(version=5).map(str),
    "isbn10": st.lists(st.integers(0, 9), min_size=9, max_size=9).map(_isbn10),
    "isbn13": st.lists(st.integers(0, 9), min_size=12, max_size=12).map(
        lambda d: _isbn13([9, 7, 8, *d[3:]])
    ),
    "creditcard": st.tuples(st.sampled_from(_CARDS),
                            st.lists(st.integers(0, 9), min_size=16, max_size=16)).map(
        lambda t: _luhn_complete(t[0][0], t[0][1], t[1])
    ),
    "ssn": st.tuples(st.integers(0, 999), st.integers(0, 99), st.integers(0, 9999),
                     st.sampled_from("- "), st.sampled_from("- ")).map(
        lambda t: f"{t[0]:03d}{t[3]}{t[1]:02d}{t[4]}{t[2]:04d}"
    ),
    "hexcolor": st.tuples(st.sampled_from(["", "#"]),
                          st.text(alphabet=_hex + "ABCDEF", min_size=3, max_size=3),
                          st.text(alphabet=_hex, min_size=0, max_size=0) | st.text(
                              alphabet=_hex, min_size=3, max_size=3)).map("".join),
    "rgbcolor": st.tuples(st.lists(st.integers(0, 255), min_size=3, max_size=3),
                          st.sampled_from(["", " "])).map(
        lambda t: "rgb(" + f"{t[1]},{t[1]}".join(map(str, t[0])) + ")"
    ),
    # govalidator.IsBase64 rejects "": at least one byte
    "byte": st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode()),
    "password": st.text(max_size=DEFAULT_MAX_STRING),
    "date": _FORMATS["date"],
    "duration": _kube_durations,
    "datetime": k8s.rfc3339,
    "k8sshortname": k8s.dns_label,
    "k8slongname": k8s.dns_subdomain,
}
_KUBE_FORMATS["isbn"] = st.one_of(
    _KUBE_FORMATS["isbn10"],
    st.tuples(_KUBE_FORMATS["isbn13"], st.lists(st.integers(1, 12), max_size=3)).map(
        lambda t: _hyphenate(t[0], t[1], "-")
    ),
)


def format_strategy(fmt: str, kubernetes: bool) -> st.SearchStrategy[str] | None:
    """Values of string format ``fmt``: the API server's meaning for Kubernetes sources
    (None when the server ignores ``fmt``), JSON Schema's otherwise (None if unknown)."""
    if kubernetes:
        return _KUBE_FORMATS.get(fmt.replace("-", ""))
    return _FORMATS.get(fmt)


def _both(
    fmt: str, format_side: st.SearchStrategy[str], pattern: str, kubernetes: bool,
    warn: Callable[[str], None] | None,
) -> st.SearchStrategy[str]:
    """Strings with format ``fmt`` that also match ``pattern``.

    Each try draws one value from the pattern (kept if the format accepts it) and one from
    the format (kept if the pattern matches), so whichever side can satisfy the other is
    used; e.g. an ISO 8601 ``pattern`` on a Kubernetes ``format: duration`` is met by the
    pattern's ``"PT1H"``. Values depend only on the draws; the counts below only decide
    whether to warn. Shrinks towards the pattern's simplest value the format accepts.
    """
    compiled = compile_pattern(pattern, kubernetes=kubernetes)
    pattern_side = st.from_regex(compiled, fullmatch=False, alphabet=st.characters(codec="utf-8"))

    def format_ok(value: str) -> bool:
        return check_format(fmt, value, kubernetes=kubernetes)

    def pattern_ok(value: str) -> bool:
        return compiled.search(value) is not None

    seen = [0, 0]  # values drawn, values kept

    def tally(kept: bool) -> bool:
        seen[0] += 1
        seen[1] += kept
        if seen[0] == _BOTH_SAMPLE and seen[1] * 20 < seen[0] and warn is not None:
            warn(f"format {fmt!r} and pattern {pattern!r} hold together for only "
                 f"{seen[1]} of {seen[0]} generated values, so values there are rare or "
                 "missing")
        return kept

    @st.composite
    def both(draw: st.DrawFn) -> str:
        for _ in range(_BOTH_TRIES):
            value = draw(pattern_side)
            if tally(format_ok(value)):
                return value
            value = draw(format_side)
            if tally(pattern_ok(value)):
                return value
        assume(False)
        raise AssertionError("unreachable: assume(False) raised")  # pragma: no cover

    return both()


def strings_for(
    node: Mapping[str, Any], *, kubernetes: bool, format_override: st.SearchStrategy[Any] | None,
    warn: Callable[[str], None] | None = None,
) -> st.SearchStrategy[str]:
    """Strings honouring minLength, maxLength, pattern and format.

    ``warn(reason)`` is called once if the node's format and pattern rarely hold together.
    """
    min_len = int(node.get("minLength", 0))
    max_len = node.get("maxLength")
    if max_len is not None and int(max_len) < min_len:
        raise UnsupportedSchema(f"maxLength {max_len} < minLength {min_len}")
    pattern = node.get("pattern")
    fmt = node.get("format")
    base: st.SearchStrategy[str] | None = format_override
    if base is None and isinstance(fmt, str):
        base = format_strategy(fmt, kubernetes)
        if base is not None and isinstance(pattern, str):
            base = _both(fmt, base, pattern, kubernetes, warn)
            pattern = None
    needs_length_check = True
    if base is None and isinstance(pattern, str):
        base = st.from_regex(compile_pattern(pattern, kubernetes=kubernetes), fullmatch=False,
                             alphabet=st.characters(codec="utf-8"))
        pattern = None
    if base is None:
        cap = int(max_len) if max_len is not None else max(min_len + DEFAULT_MAX_STRING, 1)
        cap = min(cap, min_len + 256)
        base = st.text(min_size=min_len, max_size=cap)
        needs_length_check = False
    if isinstance(pattern, str):
        compiled = compile_pattern(pattern, kubernetes=kubernetes)
        base = base.filter(lambda s: compiled.search(s) is not None)
    if needs_length_check and (min_len or max_len is not None):
        hi = math.inf if max_len is None else int(max_len)
        base = base.filter(lambda s: min_len <= len(s) <= hi)
    return base


def _bounds(node: Mapping[str, Any]) -> tuple[Any, Any, bool, bool]:
    lo, hi = node.get("minimum"), node.get("maximum")
    xlo, xhi = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    lo_excl = hi_excl = False
    if isinstance(xlo, int | float) and not isinstance(xlo, bool) and (lo is None or xlo >= lo):
        lo, lo_excl = xlo, True
    if isinstance(xhi, int | float) and not isinstance(xhi, bool) and (hi is None or xhi <= hi):
        hi, hi_excl = xhi, True
    return lo, hi, lo_excl, hi_excl


def _integer_range(node: Mapping[str, Any]) -> tuple[int, int]:
    """The integers the node's bounds, exclusive bounds and int32/int64 format allow."""
    lo, hi, lo_excl, hi_excl = _bounds(node)
    fmt = node.get("format")
    default_lo, default_hi = INT32 if fmt == "int32" else INT64
    ilo = default_lo if lo is None else math.floor(lo) + 1 if lo_excl else math.ceil(lo)
    ihi = default_hi if hi is None else math.ceil(hi) - 1 if hi_excl else math.floor(hi)
    if fmt in ("int32", "int64"):
        ilo, ihi = max(ilo, default_lo), min(ihi, default_hi)
    return ilo, ihi


def integer_edges_for(node: Mapping[str, Any]) -> st.SearchStrategy[int] | None:
    """The integer edge values (``_edges.integer_edges``) the node's bounds allow."""
    ilo, ihi = _integer_range(node)
    step = 1
    if node.get("multipleOf") is not None:
        found = _edges.fraction_step(node["multipleOf"])
        if found is None or found == 0:
            return None
        step = abs(found)
    if ilo > ihi:
        return None
    return _edges.integer_edges(ilo, ihi, step)


def number_edges_for(node: Mapping[str, Any]) -> st.SearchStrategy[float | int] | None:
    """The number edge values the node's bounds allow (none under ``multipleOf``)."""
    if node.get("multipleOf") is not None:
        return None
    lo, hi, lo_excl, hi_excl = _bounds(node)
    return _edges.number_edges(lo, hi, lo_excl, hi_excl,
                               32 if node.get("format") == "float" else 64)


def string_edges_for(
    node: Mapping[str, Any], *, kubernetes: bool
) -> tuple[st.SearchStrategy[Any] | None, int]:
    """Edge values of a string node, and their swarm family: plain strings, date-times and
    Kubernetes (Go) durations; none under a pattern, which decides what is valid."""
    fmt = node.get("format")
    if isinstance(node.get("pattern"), str):
        return None, Family.STRING
    min_len = int(node.get("minLength", 0))
    max_len = node.get("maxLength")
    edges: st.SearchStrategy[Any] | None
    family = Family.STRING
    if fmt in ("date-time", "datetime"):
        edges, family = _edges.time_edges(kubernetes), Family.TIME
    elif fmt == "duration" and kubernetes:
        edges, family = _edges.duration_edges(), Family.DURATION
    elif isinstance(fmt, str) and format_strategy(fmt, kubernetes) is not None:
        return None, Family.STRING
    else:
        return _edges.string_edges(min_len, None if max_len is None else int(max_len)), family
    if min_len or max_len is not None:
        hi = math.inf if max_len is None else int(max_len)
        edges = edges.filter(lambda v: min_len <= len(v) <= hi)
    return edges, family


def integers_for(node: Mapping[str, Any], *, kubernetes: bool) -> st.SearchStrategy[int]:
    """Integers honouring bounds, exclusive bounds, multipleOf and int32/int64 formats."""
    lo, hi, _, _ = _bounds(node)
    ilo, ihi = _integer_range(node)
    mult = node.get("multipleOf")
    if mult is not None:
        m = Fraction(str(mult))
        klo = math.ceil(Fraction(ilo) / m)
        khi = math.floor(Fraction(ihi) / m)
        if klo > khi:
            raise UnsupportedSchema(f"no multiple of {mult} in [{ilo}, {ihi}]")
        if m.denominator == 1:
            step = int(m)
            return st.integers(min_value=klo, max_value=khi).map(lambda k: k * step)
        # A fractional multipleOf: only integers that are multiples of the numerator work.
        step = m.numerator
        klo, khi = math.ceil(Fraction(ilo, step)), math.floor(Fraction(ihi, step))
        if klo > khi:
            raise UnsupportedSchema(f"no integer multiple of {mult} in [{ilo}, {ihi}]")
        return st.integers(min_value=klo, max_value=khi).map(lambda k: k * step)
    if ilo > ihi:
        raise UnsupportedSchema(f"no integer in [{lo}, {hi}]")
    return st.integers(min_value=ilo, max_value=ihi)


def _float_inside(bound: Any, toward: float) -> float | None:
    """``bound`` as a float, moved one step ``toward`` the range when an integer bound has
    no exact float (10**300): Hypothesis refuses an inexact bound."""
    if bound is None:
        return None
    as_float = float(bound)
    if isinstance(bound, int) and as_float != bound and (as_float < bound) == (toward > 0):
        return math.nextafter(as_float, toward)
    return as_float


def numbers_for(node: Mapping[str, Any], *, kubernetes: bool) -> st.SearchStrategy[float | int]:
    """JSON numbers: finite floats (and integers) honouring bounds and multipleOf."""
    lo, hi, lo_excl, hi_excl = _bounds(node)
    mult = node.get("multipleOf")
    width: Literal[32, 64] = 32 if node.get("format") == "float" else 64
    if mult is not None:
        m = Decimal(str(mult))
        klo = (Decimal(str(lo)) / m).to_integral_value(rounding="ROUND_CEILING") if lo is not None \
            else Decimal(-(10**6))
        khi = (Decimal(str(hi)) / m).to_integral_value(rounding="ROUND_FLOOR") if hi is not None \
            else Decimal(10**6)
        if lo_excl and klo * m == Decimal(str(lo)):
            klo += 1
        if hi_excl and khi * m == Decimal(str(hi)):
            khi -= 1
        if klo > khi:
            raise UnsupportedSchema(f"no multiple of {mult} in the bounds")

        def scale(k: int) -> float | int:
            value = Decimal(k) * m
            return int(value) if value == value.to_integral_value() else float(value)

        def is_multiple(x: float | int) -> bool:
            # jsonschema's own test (float division), so generated values validate.
            if isinstance(mult, float):
                q = x / mult
                try:
                    return bool(int(q) == q)
                except OverflowError:
                    return False
            return bool(x % mult == 0 if isinstance(x, int) else float(x) % mult == 0)

        return st.integers(min_value=int(klo), max_value=int(khi)).map(scale).filter(
            lambda x: is_multiple(x) and (lo is None or (x > lo if lo_excl else x >= lo))
            and (hi is None or (x < hi if hi_excl else x <= hi))
        )
    floats = st.floats(
        min_value=_float_inside(lo, math.inf), max_value=_float_inside(hi, -math.inf),
        exclude_min=lo_excl and lo is not None,
        exclude_max=hi_excl and hi is not None, allow_nan=False, allow_infinity=False,
        width=width,
    )
    ilo = None if lo is None else (math.floor(lo) + 1 if lo_excl else math.ceil(lo))
    ihi = None if hi is None else (math.ceil(hi) - 1 if hi_excl else math.floor(hi))
    # Whole numbers only within int64 too: a bound of 1e300 left no int64 above it, and
    # the integers' own range was inverted (a Hypothesis InvalidArgument).
    ilo = INT64[0] if ilo is None else max(ilo, INT64[0])
    ihi = INT64[1] if ihi is None else min(ihi, INT64[1])
    if ilo <= ihi:
        return st.one_of(st.integers(min_value=ilo, max_value=ihi), floats)
    return floats
