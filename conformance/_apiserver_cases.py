"""Hypothesis strategies for the API-server differential: small structural schemas, objects
that follow them (valid, or mutated with unknown fields, nulls, wrong types and metadata
junk), and Quantity strings.

The schemas are what a CRD author writes (``openAPIV3Schema``); they are kept small so
that a disagreement is easy to read, and reach every branch the upstream algorithms
have: nested objects, lists, maps (``additionalProperties``), preserve-unknown-fields,
embedded resources with their own ``apiVersion``/``kind``/``metadata``, nullable, and
defaults at every level (inside list items and map values too).
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

NAMES = ("a", "b", "spec", "status", "x", "items", "metadata", "kind", "apiVersion")
MAP_KEYS = st.sampled_from(("k", "l", "metadata", "a", "0", ""))
UNKNOWN_KEYS = st.sampled_from(("zz", "unknown", "a", "metadata", "kind", "apiVersion", "Name"))

# --- schemas --------------------------------------------------------------------------------

def _copy_node(node: dict[str, Any]) -> dict[str, Any]:
    return dict(node)


_SCALARS: tuple[dict[str, Any], ...] = (
    {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"},
    {"type": "string", "format": "date-time"},
    {"x-kubernetes-int-or-string": True},
    {"x-kubernetes-preserve-unknown-fields": True},
)


def _meta_schema() -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from((
        {"type": "object"},
        {"type": "object", "properties": {"name": {"type": "string"}}},
        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
                                          "generateName": {"type": "string"}}},
    ))


@st.composite
def _object_schema(draw: st.DrawFn, child: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    shape = draw(st.sampled_from(("props", "props", "map", "map-true", "preserve",
                                  "embedded", "empty")))
    out: dict[str, Any] = {"type": "object"}
    if shape in ("props", "preserve", "embedded"):
        names = draw(st.lists(st.sampled_from(NAMES[:6]), max_size=3, unique=True))
        if names:
            out["properties"] = {n: draw(child) for n in names}
    if shape == "map":
        out["additionalProperties"] = draw(child)
    elif shape == "map-true":
        out["additionalProperties"] = True
    elif shape == "preserve":
        out["x-kubernetes-preserve-unknown-fields"] = True
    elif shape == "embedded":
        out["x-kubernetes-embedded-resource"] = True
        props = out.setdefault("properties", {})
        if draw(st.booleans()):
            props["metadata"] = draw(_meta_schema())
        if draw(st.booleans()):
            props["apiVersion"] = {"type": "string"}
            props["kind"] = {"type": "string"}
        if draw(st.booleans()) or not props:
            out["x-kubernetes-preserve-unknown-fields"] = True
        if not props:
            del out["properties"]
    if draw(st.integers(0, 7)) == 0 and out.get("properties"):
        # a field declared only inside a value validation: still pruned by the server
        out["anyOf"] = [{"properties": {"zz": {"maxLength": 3}}}, {"required": ["a"]}]
    return out


def _node(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    scalar = st.sampled_from(_SCALARS).map(_copy_node)
    if depth <= 0:
        return scalar
    child = _node(depth - 1)
    array = st.builds(lambda items: {"type": "array", "items": items}, child)
    return st.one_of(scalar, _object_schema(child), array)


@st.composite
def _with_extras(draw: st.DrawFn, node: dict[str, Any], at_root: bool = False
                 ) -> dict[str, Any]:
    """Add ``nullable`` and ``default`` through the tree (not at the root or in metadata)."""
    node = dict(node)
    embedded = at_root or node.get("x-kubernetes-embedded-resource")
    if "properties" in node:
        # ObjectMeta may restrict only name and generateName: no nullable/default in it
        node["properties"] = {k: (v if k == "metadata" and embedded else draw(_with_extras(v)))
                              for k, v in node["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            node[key] = draw(_with_extras(node[key]))
    if not at_root:
        if draw(st.integers(0, 3)) == 0:
            node["nullable"] = True
        if draw(st.integers(0, 3)) == 0:
            node["default"] = draw(values(node, mutate=draw(st.integers(0, 3)) == 0,
                                          depth=2))
    return node


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A CRD version's openAPIV3Schema: an object root with optional metadata/spec/status."""
    props: dict[str, Any] = {}
    if draw(st.booleans()):
        props["metadata"] = draw(_meta_schema())
    if draw(st.integers(0, 3)) == 0:
        props["apiVersion"] = {"type": "string"}
        props["kind"] = {"type": "string"}
    for name in draw(st.lists(st.sampled_from(("spec", "status", "a", "items")), min_size=1,
                              max_size=3, unique=True)):
        props[name] = draw(_node(3))
    root: dict[str, Any] = {"type": "object", "properties": props}
    if draw(st.integers(0, 5)) == 0:
        root["x-kubernetes-preserve-unknown-fields"] = True
    if draw(st.integers(0, 9)) == 0:
        root["x-kubernetes-embedded-resource"] = True
    return draw(_with_extras(root, at_root=True))


# --- objects --------------------------------------------------------------------------------

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
    st.sampled_from((0, 1, -1, 2**53 + 1, 2**63 - 1, -(2**63))),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from((1.0, 0.5, -0.0, 1e21, 1e300, 5e-324)),
    st.text(max_size=6),
)
ANY_JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)

TIMES = st.sampled_from((
    "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123456789+01:00", "2024-01-02T03:04:05-07:30",
    "0001-01-01T00:00:00Z", "0001-01-01T01:00:00+01:00", "9999-12-31T23:59:59Z",
    "2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-02t03:04:05z",
    "2024-01-02 03:04:05Z", "2024-01-02T03:04:05", "2024-01-02T24:00:00Z",
    "2024-06-30T23:59:60Z", "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05,5Z",
    "2024-01-02T03:04:05+24:00", "2024-01-02T03:04:05+23:59", "12024-01-02T03:04:05Z",
    "2024-1-2T3:4:5Z", "", "now", "0000-01-01T00:00:00Z",
))


def _junk() -> st.SearchStrategy[Any]:
    return st.one_of(JSON_SCALARS, st.just([]), st.just({}),
                     st.dictionaries(UNKNOWN_KEYS, JSON_SCALARS, max_size=2))


def _maybe_junk(valid: st.SearchStrategy[Any], mutate: bool) -> st.SearchStrategy[Any]:
    if not mutate:
        return valid
    return st.one_of(valid, valid, valid, _junk())


def _owner(mutate: bool) -> st.SearchStrategy[Any]:
    s = st.text(max_size=3)
    owner = st.fixed_dictionaries({}, optional={
        "apiVersion": _maybe_junk(s, mutate), "kind": s, "name": s, "uid": s,
        "controller": _maybe_junk(st.booleans(), mutate), "blockOwnerDeletion": st.booleans(),
        "extra": st.integers(),
    })
    return _maybe_junk(owner, mutate)


def _managed(mutate: bool) -> st.SearchStrategy[Any]:
    entry = st.fixed_dictionaries({}, optional={
        "manager": st.text(max_size=3), "operation": st.sampled_from(("Apply", "Update", "")),
        "apiVersion": st.text(max_size=3), "time": _maybe_junk(TIMES, mutate),
        "fieldsType": st.just("FieldsV1"),
        "fieldsV1": _maybe_junk(st.dictionaries(st.sampled_from(("f:a", "f:b")),
                                                st.just({}), max_size=2), mutate),
        "subresource": st.text(max_size=3), "bogus": st.integers(),
    })
    return _maybe_junk(entry, mutate)


def metadata(mutate: bool) -> st.SearchStrategy[Any]:
    """ObjectMeta as a client may send it; with ``mutate``, wrong types and unknown keys."""
    s = st.text(max_size=4)
    strings = st.dictionaries(st.text(max_size=3), s, max_size=2)
    i64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from((0, 1, 2**63 - 1)))
    fields: dict[str, st.SearchStrategy[Any]] = {
        "name": s, "generateName": s, "namespace": s, "selfLink": s, "uid": s,
        "resourceVersion": s,
        "generation": _maybe_junk(i64, mutate) if not mutate else st.one_of(
            i64, st.sampled_from((1.0, 1.5, -1.0, 1e19, 9.2e18, "1", None, True))),
        "creationTimestamp": st.one_of(TIMES, st.none()) if mutate else TIMES.filter(
            lambda t: t.endswith(("Z", "00", "30"))),
        "deletionTimestamp": st.one_of(TIMES, st.none()),
        "deletionGracePeriodSeconds": _maybe_junk(st.one_of(i64, st.none()), mutate),
        "labels": _maybe_junk(strings, mutate), "annotations": _maybe_junk(strings, mutate),
        "ownerReferences": _maybe_junk(st.lists(_owner(mutate), max_size=2), mutate),
        "finalizers": _maybe_junk(st.lists(_maybe_junk(s, mutate), max_size=2), mutate),
        "managedFields": _maybe_junk(st.lists(_managed(mutate), max_size=2), mutate),
    }
    if mutate:
        fields.update({"Name": s, "bogus": ANY_JSON, "clusterName": s,
                       "name": _maybe_junk(s, True), "namespace": _maybe_junk(s, True),
                       "labels": st.one_of(strings, _junk(), st.dictionaries(
                           st.text(max_size=2), JSON_SCALARS, max_size=2))})
    meta = st.fixed_dictionaries({}, optional=fields)
    if mutate:
        return st.one_of(meta, meta, meta, _junk())
    return meta


def values(node: Any, *, mutate: bool, depth: int = 4, root: bool = False
           ) -> st.SearchStrategy[Any]:
    """JSON values that follow ``node`` (an openAPIV3Schema node); ``mutate`` breaks rules."""
    if not isinstance(node, dict) or depth < 0:
        return ANY_JSON
    typed = _typed(node, mutate=mutate, depth=depth, root=root)
    if node.get("nullable") or mutate:
        typed = st.one_of(typed, typed, typed, st.none())
    if mutate and not root:
        typed = st.one_of(typed, typed, typed, typed, _junk())
    return typed


def _typed(node: dict[str, Any], *, mutate: bool, depth: int, root: bool
           ) -> st.SearchStrategy[Any]:
    t = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(), st.text(max_size=4))
    if t == "string":
        return TIMES if node.get("format") == "date-time" else st.text(max_size=4)
    if t == "integer":
        return st.integers(-(2**63), 2**63 - 1)
    if t == "number":
        return st.one_of(st.integers(-100, 100), st.floats(allow_nan=False,
                                                          allow_infinity=False))
    if t == "boolean":
        return st.booleans()
    if t == "array":
        return st.lists(values(node.get("items"), mutate=mutate, depth=depth - 1),
                        max_size=3)
    if t != "object":
        return ANY_JSON  # preserve-unknown-fields without a type
    return _object_value(node, mutate=mutate, depth=depth, root=root)


@st.composite
def _object_value(draw: st.DrawFn, node: dict[str, Any], *, mutate: bool, depth: int,
                  root: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    props = node.get("properties") or {}
    for name, sub in props.items():
        if draw(st.integers(0, 3)) > 0:
            if name == "metadata" and (root or node.get("x-kubernetes-embedded-resource")):
                out[name] = draw(metadata(mutate))
            else:
                out[name] = draw(values(sub, mutate=mutate, depth=depth - 1))
    extra = node.get("additionalProperties")
    if extra is not None and extra is not False:
        for k in draw(st.lists(MAP_KEYS, max_size=3, unique=True)):
            out[k] = draw(values(extra if isinstance(extra, dict) else None,
                                 mutate=mutate, depth=depth - 1))
    embedded = root or node.get("x-kubernetes-embedded-resource")
    if embedded:
        if draw(st.booleans()):
            out["apiVersion"] = draw(_maybe_junk(st.sampled_from(
                ("v1", "example.com/v1", "a/b/c", "/v1", "")), mutate))
            out["kind"] = draw(_maybe_junk(st.sampled_from(("Widget", "")), mutate))
        if "metadata" not in props and draw(st.booleans()):
            out["metadata"] = draw(metadata(mutate))
    if node.get("x-kubernetes-preserve-unknown-fields") or mutate:
        for k in draw(st.lists(UNKNOWN_KEYS, max_size=2, unique=True)):
            out.setdefault(k, draw(ANY_JSON if not mutate else st.one_of(
                ANY_JSON, metadata(True))))
    return out


def objects(schema: dict[str, Any], mutate: bool) -> st.SearchStrategy[Any]:
    return values(schema, mutate=mutate, root=True)


# --- quantities -----------------------------------------------------------------------------

SUFFIXES = ("", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
            "e", "E", "e3", "E3", "e-3", "e+3", "e0", "e18", "e19", "e-9", "e-10", "e21",
            "e2147483647", "e2147483648", "e-2147483648", "e-2147483649",
            "e9223372036854775807", "e9223372036854775808", "i", "K", "ki", "mi", "x", " ",
            "Gi ", "e3.5", "ee3", "E-", "e+", "EE")
EDGE_QUANTITIES = (
    "0", "-0", "+0", "00", "0.0", ".0", "0.", "1.", ".5", "-.5", "+.5", "1..2", ".", "-", "+",
    "", " ", " 1", "1 ", "1 Gi", "0x10", "1_000", "1,5", "\u0661", "1e", "1E", "1e1", "1E1",
    "1Ei", "8Ei", "9Ei", "7.999Ei", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "99999999999999999999999999999", "123456789012345678",
    "1234567890123456789", "0.1234567890123456789", "1n", "1.5n", "0.1n", "-0.1n", "1.0001n",
    "100m", "1000m", "1000000u", "0.001", "1.000", "1000", "1000k", "1024Ki", "1023Ki",
    "1.5Gi", "0.5Ki", "1e-9", "1e-10", "1e1000000000", "1e-1000000000", "1e2147483647",
    "1e2147483648", "5e-2147483648", "1E2147483648", "--1", "+-1", "1-", "NaN", "Inf",
    "-Inf", "1.5e3", "1.5E3", "12E", "12Ei", "1k ", "\t1", "1\n", "\u0663", "1e+3", "1e+03",
    "1e03", "0e5", "0Gi", "0.000000001", "0.0000000001", "-0.0000000001", "1000000000000000000E",
)


NUMBERS = ("0", "1", "12", "1.5", "0.5", ".5", "5.", "007", "1000", "1024", "0.001",
           "0.000000001", "0.0000000015", "123456789012345678", "1234567890123456789",
           "9223372036854775807", "9223372036854775808", "18446744073709551616",
           "99999999999999999999999", "1.234567890123456789", "0.1234567890123456789012",
           "100000000000000000000", "3.14159", "1023", "1025", "8", "", ".")
SIGNS = ("", "-", "+")


def systematic_quantities() -> list[str]:
    """Every sign x number x suffix combination (about 4,000 strings)."""
    return [f"{s}{n}{x}" for s in SIGNS for n in NUMBERS for x in SUFFIXES]


@st.composite
def quantity_strings(draw: st.DrawFn) -> str:
    sign = draw(st.sampled_from(("", "", "-", "+", " ", "--")))
    whole = draw(st.one_of(st.text("0123456789", max_size=25), st.sampled_from(("0", "1"))))
    frac = draw(st.one_of(st.just(None), st.text("0123456789", max_size=22)))
    suffix = draw(st.one_of(st.sampled_from(SUFFIXES), st.builds(
        lambda e, n: f"{e}{n}", st.sampled_from(("e", "E", "e-", "E+")),
        st.one_of(st.integers(0, 1100), st.integers(0, 2**64)).map(str))))
    number = whole if frac is None else f"{whole}.{frac}"
    return f"{sign}{number}{suffix}"


def quantity_values() -> st.SearchStrategy[Any]:
    """JSON values for Quantity.UnmarshalJSON: strings (trimmed), numbers, junk."""
    return st.one_of(
        quantity_strings(),
        quantity_strings().map(lambda s: f" {s}\t"),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from((0.1, 1e-9, 1e-10, 1e21, 1.5, 100.0, -0.0, True, None)),
    )


_EXPONENT = re.compile(r"[eE]([+-]?\d+)\Z")


def go_exponent(text: str) -> int | None:
    """The int32 exponent Go's ParseQuantity ends up with for an ``e<n>`` suffix, if any."""
    m = _EXPONENT.search(text)
    if m is None:
        return None
    n = int(m.group(1))
    if not -(2**63) <= n < 2**63:
        return None  # rejected by strconv.ParseInt: cheap
    return (n + 2**31) % 2**32 - 2**31


# Exponents upstream handles fast although huge: a single digit needs no big arithmetic.
_VETTED = frozenset(("1e1000000000", "1e2147483647", "1e999999999", "1e9223372036854775807",
                     "1e100000", "1e-100000", "1.5e-30000", "5e-2147483649"))


def cheap_for_go(text: str, limit: int = 1000) -> bool:
    """False for quantities whose exponent makes upstream's inf.Dec arithmetic compute
    10**|exponent| digits: ``1e-1000000000`` or ``1.85496908476951418333e849113`` do not
    return within minutes in Go (the Python port answers at once)."""
    e = go_exponent(text)
    return e is None or -limit <= e <= limit or text in _VETTED


def cheap_pair(a: str, b: str, limit: int = 1000) -> bool:
    """Cmp rescales both operands: keep both exponents within ``limit``."""
    return all(go_exponent(t) is None or abs(go_exponent(t) or 0) <= limit for t in (a, b))
