"""Hypothesis strategies for *our* inputs: random JSON Schemas (STYLE.md 23).

Schemas are drawn satisfiable by construction where cheap (ordered bounds, enum values of
the right type) so that most draws exercise generation rather than error paths.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PATTERNS = [
    "^[a-z]+$", "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "^\\d{3}-\\d{4}$", "abc", "^(foo|bar)+$",
    "^[A-Z][a-z]{0,5}$", "^$",
]
FORMATS = ["date-time", "date", "email", "hostname", "ipv4", "ipv6", "uri", "uuid", "byte",
           "duration", "time"]


def _bounded(lo_key: str, hi_key: str, lo: int, hi: int) -> st.SearchStrategy[dict[str, int]]:
    parts = st.tuples(st.integers(lo, hi), st.integers(0, hi - lo), st.booleans(), st.booleans())
    return parts.map(
        lambda t: {**({lo_key: t[0]} if t[2] else {}), **({hi_key: t[0] + t[1]} if t[3] else {})}
    )


def scalar_schemas() -> st.SearchStrategy[dict[str, Any]]:
    integer = st.tuples(_bounded("minimum", "maximum", -1000, 1000),
                        st.sampled_from([None, 1, 2, 5, 7])).map(
        lambda t: {"type": "integer", **t[0], **({"multipleOf": t[1]} if t[1] else {})}
    ).filter(
        lambda s: "multipleOf" not in s or not ("minimum" in s and "maximum" in s) or any(
            x % s["multipleOf"] == 0 for x in range(s["minimum"], s["maximum"] + 1)
        )
    )
    number = st.tuples(_bounded("minimum", "maximum", -100, 100), st.booleans()).map(
        lambda t: {"type": "number", **t[0], **({"exclusiveMinimum": t[0]["minimum"] - 1}
                                                if t[1] and "minimum" in t[0] else {})}
    )
    string = st.one_of(
        _bounded("minLength", "maxLength", 0, 12).map(lambda b: {"type": "string", **b}),
        st.sampled_from(PATTERNS).map(lambda p: {"type": "string", "pattern": p}),
        st.sampled_from(FORMATS).map(lambda f: {"type": "string", "format": f}),
    )
    enum = st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=3), st.booleans()),
                    min_size=1, max_size=4, unique_by=lambda v: (type(v).__name__, v)).map(
        lambda vs: {"enum": vs}
    )
    const = st.one_of(st.integers(), st.text(max_size=5)).map(lambda v: {"const": v})
    nullable = st.sampled_from(["integer", "string", "boolean"]).map(
        lambda t: {"type": [t, "null"]}
    )
    return st.one_of(integer, number, string, enum, const, nullable,
                     st.just({"type": "boolean"}), st.just({"type": "null"}))


def schemas(max_leaves: int = 12) -> st.SearchStrategy[dict[str, Any]]:
    """Random schemas: objects, arrays, unions and intersections of scalar schemas."""

    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        props = st.dictionaries(st.sampled_from(list("abcdefgh")), children, max_size=4)
        obj = props.flatmap(
            lambda p: st.tuples(
                st.just(p),
                st.sets(st.sampled_from(sorted(p))) if p else st.just(set()),
                st.sampled_from([None, False, {"type": "integer"}]),
            )
        ).map(lambda t: {
            "type": "object", "properties": t[0],
            **({"required": sorted(t[1])} if t[1] else {}),
            **({"additionalProperties": t[2]} if t[2] is not None else {}),
        })
        array = st.tuples(children, _bounded("minItems", "maxItems", 0, 4), st.booleans()).map(
            lambda t: {"type": "array", "items": t[0], **t[1],
                       **({"uniqueItems": True} if t[2] else {})}
        )
        any_of = st.lists(children, min_size=1, max_size=3).map(lambda bs: {"anyOf": bs})
        one_of = st.lists(scalar_schemas(), min_size=1, max_size=3).map(lambda bs: {"oneOf": bs})
        all_of = st.tuples(
            st.dictionaries(st.sampled_from(list("xyz")), scalar_schemas(), max_size=2),
            st.dictionaries(st.sampled_from(list("uvw")), scalar_schemas(), max_size=2),
        ).map(lambda t: {"allOf": [{"type": "object", "properties": t[0]},
                                   {"type": "object", "properties": t[1],
                                    "required": sorted(t[1])}]})
        return st.one_of(obj, array, any_of, one_of, all_of)

    return st.recursive(scalar_schemas(), extend, max_leaves=max_leaves)
