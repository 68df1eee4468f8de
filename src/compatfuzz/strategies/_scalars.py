"""Strategies for JSON scalars under JSON Schema keywords, built by construction.

Each function takes a (normalised) schema node and returns one Hypothesis strategy, so a
scalar costs one draw. Filtering is kept for the rare keyword combinations that cannot be
built directly (a pattern *and* a length, a float ``multipleOf``).
"""

from __future__ import annotations

import base64
import math
import string
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from hypothesis import strategies as st

from compatfuzz.errors import UnsupportedSchema
from compatfuzz.strategies import _kubernetes as k8s
from compatfuzz.strategies._regex import compile_ecma

__all__ = ["integers_for", "numbers_for", "strings_for"]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
# Strings without maxLength are capped so objects stay small; documented in from_schema.
DEFAULT_MAX_STRING = 24

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

_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date-time": k8s.rfc3339,
    "date": st.dates().map(lambda d: d.isoformat()).filter(lambda s: len(s) == 10),
    "time": k8s.rfc3339.map(lambda s: s.split("T", 1)[1]),
    "email": st.tuples(k8s.dns_label, _hostname).map("@".join),
    "idn-email": st.tuples(k8s.dns_label, _hostname).map("@".join),
    "hostname": _hostname,
    "idn-hostname": _hostname,
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
    "uri": _uri,
    "iri": _uri,
    "uri-reference": st.one_of(_uri, _uri_path),
    "iri-reference": st.one_of(_uri, _uri_path),
    "uuid": st.uuids().map(str),
    "byte": st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode()),
    "password": st.text(max_size=DEFAULT_MAX_STRING),
    "regex": st.sampled_from(["^[a-z]+$", ".*", "a|b", "[0-9]{1,3}", ""]),
    "json-pointer": st.lists(st.text(alphabet=string.ascii_letters, max_size=5), max_size=3).map(
        lambda parts: "".join("/" + p for p in parts)
    ),
    "relative-json-pointer": st.integers(0, 5).map(str),
    "duration": _iso_duration,
    "cidr": st.ip_networks(v=4).map(str) if hasattr(st, "ip_networks") else st.tuples(
        st.ip_addresses(v=4), st.integers(0, 32)
    ).map(lambda t: f"{t[0]}/{t[1]}"),
    "mac": st.binary(min_size=6, max_size=6).map(lambda b: ":".join(f"{x:02x}" for x in b)),
}
# Kubernetes gives `duration` the Go meaning (kube-openapi strfmt).
_KUBE_FORMATS = {**_FORMATS, "duration": k8s.go_durations}


def format_strategy(fmt: str, kubernetes: bool) -> st.SearchStrategy[str] | None:
    return (_KUBE_FORMATS if kubernetes else _FORMATS).get(fmt)


def strings_for(
    node: Mapping[str, Any], *, kubernetes: bool, format_override: st.SearchStrategy[Any] | None
) -> st.SearchStrategy[str]:
    """Strings honouring minLength, maxLength, pattern and format."""
    min_len = int(node.get("minLength", 0))
    max_len = node.get("maxLength")
    if max_len is not None and int(max_len) < min_len:
        raise UnsupportedSchema(f"maxLength {max_len} < minLength {min_len}")
    pattern = node.get("pattern")
    fmt = node.get("format")
    base: st.SearchStrategy[str] | None = format_override
    if base is None and isinstance(fmt, str):
        base = format_strategy(fmt, kubernetes)
    needs_length_check = True
    if base is None and isinstance(pattern, str):
        base = st.from_regex(compile_ecma(pattern), fullmatch=False,
                             alphabet=st.characters(codec="utf-8"))
        pattern = None
    if base is None:
        cap = int(max_len) if max_len is not None else max(min_len + DEFAULT_MAX_STRING, 1)
        cap = min(cap, min_len + 256)
        base = st.text(min_size=min_len, max_size=cap)
        needs_length_check = False
    if isinstance(pattern, str):
        compiled = compile_ecma(pattern)
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


def integers_for(node: Mapping[str, Any], *, kubernetes: bool) -> st.SearchStrategy[int]:
    """Integers honouring bounds, exclusive bounds, multipleOf and int32/int64 formats."""
    lo, hi, lo_excl, hi_excl = _bounds(node)
    fmt = node.get("format")
    default_lo, default_hi = INT32 if fmt == "int32" else INT64
    ilo = default_lo if lo is None else math.floor(lo) + 1 if lo_excl else math.ceil(lo)
    ihi = default_hi if hi is None else math.ceil(hi) - 1 if hi_excl else math.floor(hi)
    if lo is not None and fmt in ("int32", "int64"):
        ilo = max(ilo, default_lo)
    if hi is not None and fmt in ("int32", "int64"):
        ihi = min(ihi, default_hi)
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
        min_value=lo, max_value=hi, exclude_min=lo_excl and lo is not None,
        exclude_max=hi_excl and hi is not None, allow_nan=False, allow_infinity=False,
        width=width,
    )
    ilo = None if lo is None else (math.floor(lo) + 1 if lo_excl else math.ceil(lo))
    ihi = None if hi is None else (math.ceil(hi) - 1 if hi_excl else math.floor(hi))
    if ilo is None or ihi is None or ilo <= ihi:
        ints = st.integers(
            min_value=ilo if ilo is not None else INT64[0],
            max_value=ihi if ihi is not None else INT64[1],
        )
        return st.one_of(ints, floats)
    return floats
