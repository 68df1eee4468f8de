"""Strategies for Kubernetes well-known types and realistic ObjectMeta.

The JSON shape of these types says little (a Quantity is "a string or a number"); their
meaning is in apimachinery's parsers. We generate values the API server accepts, weighted
towards the edge cases that break conversions: suffix boundaries, 1023/1024/1025Ki, tiny
milli and nano values, exponents, int64 bounds, time offsets and fractional seconds.
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

from compatfuzz.strategies import _edges

__all__ = [
    "OBJECT_META_FIELDS",
    "annotation_keys",
    "api_versions",
    "dns_label",
    "dns_subdomain",
    "go_durations",
    "int_or_strings",
    "kinds",
    "label_values",
    "micro_times",
    "object_meta",
    "qualified_names",
    "quantities",
    "times",
]

_LOWER_ALNUM = string.ascii_lowercase + string.digits
_NAME_MIDDLE = string.ascii_letters + string.digits + "-_."


def _fix_label(text: str, edge: str, max_len: int) -> str:
    """Make ``text`` start and end with an alphanumeric and fit ``max_len``."""
    text = text[:max_len]
    if not text:
        return "x"
    if not text[0].isalnum():
        text = edge + text[1:]
    if not text[-1].isalnum():
        text = text[:-1] + edge
    return text


def _fix_subdomain(text: str) -> str:
    labels = [_fix_label(part, "x", 63) for part in text.split(".")]
    return ".".join(labels)[:253].rstrip(".-") or "x"


# One draw each: a string over the right alphabet, repaired into shape. Shrinks to "x".
#: RFC 1123 label: ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``, at most 63 characters.
dns_label = st.text(alphabet=_LOWER_ALNUM + "-", min_size=1, max_size=63).map(
    lambda t: _fix_label(t, "x", 63)
)
#: RFC 1123 subdomain: dot-separated labels, at most 253 characters.
dns_subdomain = st.text(alphabet=_LOWER_ALNUM + "-.", min_size=1, max_size=80).map(
    _fix_subdomain
)
_name_part = st.text(alphabet=_NAME_MIDDLE, min_size=1, max_size=63).map(
    lambda t: _fix_label(t, "x", 63)
)


def _qualified(text: str) -> str:
    prefix, slash, name = text.rpartition("/")
    name = _fix_label(name.replace("/", ""), "x", 63)
    if not slash:
        return name
    return f"{_fix_subdomain(prefix.lower().replace('/', '.').replace('_', '-'))}/{name}"


#: Label/annotation key: optional DNS-subdomain prefix and "/", then a name part.
qualified_names = st.text(alphabet=_NAME_MIDDLE + "/", min_size=1, max_size=40).map(_qualified)
annotation_keys = qualified_names
#: Label value: empty or a name part.
label_values = st.text(alphabet=_NAME_MIDDLE, max_size=63).map(
    lambda t: _fix_label(t, "x", 63) if t else ""
)

_BINARY = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_DECIMAL = ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"]
_EDGE_NUMBERS = [
    "0", "1", "2", "10", "100", "999", "1000", "1001", "1023", "1024", "1025", "1.5",
    "0.1", "0.5", ".5", "5.", "0.001", "0.000001", "1.0", "123.456", "9223372036854775807",
    "9223372036854775808", "18446744073709551616", "0.000000001", "1000000000000000000000",
]


def _number_text() -> st.SearchStrategy[str]:
    plain = st.integers(min_value=0, max_value=10**7).map(str)
    decimal = st.tuples(
        st.integers(min_value=0, max_value=10**4), st.integers(min_value=0, max_value=10**4)
    ).map(lambda t: f"{t[0]}.{t[1]}")
    return st.one_of(st.sampled_from(_EDGE_NUMBERS), plain, decimal)


def _suffix() -> st.SearchStrategy[str]:
    exponent = st.tuples(
        st.sampled_from(["e", "E"]), st.sampled_from(["", "+", "-"]),
        st.integers(min_value=0, max_value=20),
    ).map(lambda t: f"{t[0]}{t[1]}{t[2]}")
    return st.one_of(st.sampled_from(["", *_BINARY, *_DECIMAL]), exponent)


# Values that sit on a boundary of the parser or of canonicalisation.
_EDGE_QUANTITIES = [
    "1023Ki", "1024Ki", "1025Ki", "1Mi", "1024Mi", "1Gi", "1.5Gi", "0.5Gi", "1536Mi", "1000m",
    "1", "0.1m", "100m", "0.001", "1n", "1u", "999999999n", "1e3", "1E-3", "1e+6", "12e-9",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "8Ei", "8E", "0",
    "-0", "+1", ".5", "5.", "1k", "1M", "1000k", "0.000000001", "1.0000000001", "100Gi",
]
#: Strings resource.ParseQuantity accepts, with edge cases, plus plain JSON numbers.
quantity_strings = st.one_of(
    st.sampled_from(_EDGE_QUANTITIES),
    st.tuples(st.sampled_from(["", "", "", "+", "-"]), _number_text(), _suffix()).map("".join),
)


def quantities(allow_numbers: bool) -> st.SearchStrategy[Any]:
    """Quantity values: mostly strings, JSON integers when the schema allows them."""
    if not allow_numbers:
        return quantity_strings
    return st.one_of(quantity_strings, st.integers(min_value=0, max_value=2**40))


def int_or_strings(allow_int: bool = True, allow_str: bool = True) -> st.SearchStrategy[Any]:
    """IntOrString values: ports, counts, percentages and names (1 and "1" both appear)."""
    options: list[st.SearchStrategy[Any]] = []
    if allow_int:
        options.append(st.integers(min_value=0, max_value=65535))
        options.append(st.integers(min_value=-(2**31), max_value=2**31 - 1))
    if allow_str:
        options.append(st.integers(min_value=0, max_value=100).map(lambda n: f"{n}%"))
        options.append(dns_label)
        options.append(st.integers(min_value=0, max_value=65535).map(str))
    return st.one_of(options)


# Seconds since the epoch, one draw, shrinking to 1970-01-01T00:00:00Z.
_seconds = st.integers(min_value=0, max_value=7_258_118_399)  # up to 2199-12-31
_micros = st.integers(min_value=0, max_value=999_999)


def _render(seconds: int, micros: int, offset_minutes: int, digits: int) -> str:
    return _edges.render_time(seconds, micros * 1000, offset_minutes, digits)


# metav1.Time marshals as RFC 3339 seconds in UTC; other offsets and fractions are the
# edge cases a converter must treat as the same instant.
_time_forms = st.sampled_from([(0, 0)] * 6 + [(60, 0), (-300, 0), (0, 3), (330, 9)])
#: metav1.Time: canonical RFC 3339 seconds in UTC, sometimes with an offset or fraction.
times = st.tuples(_seconds, _time_forms).map(lambda t: _render(t[0], 0, t[1][0], t[1][1]))
#: metav1.MicroTime: microsecond precision.
micro_times = st.tuples(_seconds, _micros, st.sampled_from([0, 0, 0, 60])).map(
    lambda t: _render(t[0], t[1], t[2], 6)
)
#: Any RFC 3339 date-time: every offset, 0-9 fractional digits.
rfc3339 = _edges.rfc3339_any

_GO_UNITS = ["ns", "us", "ms", "s", "m", "h"]
#: Go time.Duration strings (metav1.Duration): "1h30m", "1.5s", "0s", "-5m", and the other
#: spellings time.ParseDuration takes ("0", ".5s", "+1m", "1µs", "1μs", "1.5h").
go_durations = st.one_of(
    st.sampled_from(
        ["0s", "1s", "1m", "1h", "1h0m0s", "1.5s", "300ms", "2562047h47m16.854775807s",
         "0", "-0", ".5s", "+1m", "1\u00b5s", "1\u03bcs", "1.5h", "-2562047h47m16.854775808s"]
    ),
    st.tuples(
        st.sampled_from(["", "-"]),
        st.lists(
            st.tuples(st.integers(min_value=0, max_value=10**4), st.sampled_from(_GO_UNITS)),
            min_size=1, max_size=3,
        ),
    ).map(lambda t: t[0] + "".join(f"{n}{u}" for n, u in t[1])),
)


#: ObjectMeta fields whose schema is a bare string or map but whose values the API server
#: validates (apimachinery's ValidateObjectMeta): generated realistically, by construction.
OBJECT_META_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "name": dns_subdomain,
    "generateName": dns_label.map(lambda s: s[:57] + "-"),
    "namespace": dns_label,
    "labels": st.dictionaries(qualified_names, label_values, max_size=3),
    "annotations": st.dictionaries(annotation_keys, st.text(max_size=20), max_size=2),
    "uid": st.uuids().map(str),
    "resourceVersion": st.integers(min_value=1, max_value=10**9).map(str),
    "generation": st.integers(min_value=0, max_value=2**63 - 1),
    "deletionGracePeriodSeconds": st.integers(min_value=0, max_value=2**31),
    "creationTimestamp": times,
    "finalizers": st.lists(qualified_names, max_size=2, unique=True),
}


#: apiVersion and kind of embedded objects (x-kubernetes-embedded-resource).
api_versions = st.sampled_from(["v1", "apps/v1", "batch/v1", "example.com/v1alpha1"])
kinds = st.sampled_from(["ConfigMap", "Secret", "Deployment", "Job", "Widget"])


def object_meta(namespaced: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """A realistic user-written ObjectMeta for CRDs, whose schema leaves metadata open."""
    optional = {
        key: OBJECT_META_FIELDS[key]
        for key in ("labels", "annotations", "generateName", "uid", "resourceVersion",
                    "generation", "creationTimestamp", "finalizers")
    }
    if namespaced:
        optional["namespace"] = dns_label
    return st.fixed_dictionaries({"name": dns_subdomain}, optional=optional)
