"""Tests of the leaf-path coverage metric used by benchmarks/bench_strategies.py.

The benchmark's coverage figures are only as good as this metric, so its definition (see
the ``compatfuzz/schema/_leafpaths.py`` docstring) is pinned here on hand-written schemas and
checked as properties on generated ones.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.semantic.strategies import json_values

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "_leafpaths.py"
_spec = importlib.util.spec_from_file_location("_bench_leafpaths", _PATH)
assert _spec is not None and _spec.loader is not None
lp = importlib.util.module_from_spec(_spec)
sys.modules["_bench_leafpaths"] = lp
_spec.loader.exec_module(lp)

ITEMS = lp.ITEMS

STR = {"type": ["string", "null"]}
INT = {"type": ["integer", "null"]}

POD_LIKE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["Pod"]},
        "metadata": {"$ref": "#/$defs/Meta", "description": "siblings of $ref are merged"},
        "spec": {
            "type": ["object", "null"],
            "properties": {
                "containers": {"type": "array", "items": {"$ref": "#/$defs/Container"}},
                "nodeSelector": {"type": "object", "additionalProperties": STR},
                "args": {"type": "array", "items": STR},
                "raw": {"type": "object"},
            },
        },
    },
    "$defs": {
        "Meta": {"type": "object", "properties": {"name": STR, "labels": {
            "type": "object", "additionalProperties": STR}}},
        "Container": {"type": "object", "properties": {
            "image": STR,
            "port": {"$ref": "#/$defs/IntOrString"},
        }},
        "IntOrString": {"oneOf": [STR, INT]},
    },
}

POD_LIKE_LEAVES = {
    ("kind",),
    ("metadata", "name"),
    ("metadata", "labels"),
    ("spec", "containers", ITEMS, "image"),
    ("spec", "containers", ITEMS, "port"),
    ("spec", "nodeSelector"),
    ("spec", "args", ITEMS),
    ("spec", "raw"),
}


def test_leaves_of_a_kubernetes_like_schema() -> None:
    # Maps, property-less objects and unions of scalars are leaves; arrays collapse to [*].
    assert lp.leaf_paths(POD_LIKE) == POD_LIKE_LEAVES


def test_recursion_is_cut_at_the_first_revisit_of_a_definition() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "properties": {
            "value": INT,
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
        }}},
    }
    assert lp.leaf_paths(schema) == {("value",), ("children", ITEMS)}


def test_a_definition_used_twice_side_by_side_is_expanded_twice() -> None:
    # Only a revisit on the *current path* cuts; siblings are independent.
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P"}},
        "$defs": {"P": {"type": "object", "properties": {"x": INT}}},
    }
    assert lp.leaf_paths(schema) == {("a", "x"), ("b", "x")}


def test_combinators_contribute_the_union_of_their_properties() -> None:
    schema = {
        "allOf": [{"properties": {"a": INT}}, {"properties": {"b": STR}}],
        "anyOf": [{"properties": {"c": INT}}, {"type": "null"}],
        "oneOf": [{"properties": {"a": {"type": "object", "properties": {"deep": INT}}}}],
    }
    # "a" is a scalar in one part and an object in another: the object wins (interior).
    assert lp.leaf_paths(schema) == {("a", "deep"), ("b",), ("c",)}


def test_prefix_items_collapse_into_one_star() -> None:
    schema = {"type": "array", "prefixItems": [
        {"type": "object", "properties": {"p": INT}}, {"type": "object", "properties": {"q": INT}},
    ]}
    assert lp.leaf_paths(schema) == {(ITEMS, "p"), (ITEMS, "q")}


def test_scalar_and_boolean_roots_have_the_empty_path() -> None:
    assert lp.leaf_paths({"type": "integer"}) == {()}
    assert lp.leaf_paths(True) == {()}
    assert lp.leaf_paths({"type": "array"}) == {(ITEMS,)}


def test_non_local_or_dangling_refs_are_errors_naming_the_ref() -> None:
    with pytest.raises(ValueError, match=r"non-local \$ref 'other.json#/x'"):
        lp.leaf_paths({"properties": {"a": {"$ref": "other.json#/x"}}})
    with pytest.raises(ValueError, match=r"'#/\$defs/Missing' points to nothing"):
        lp.leaf_paths({"properties": {"a": {"$ref": "#/$defs/Missing"}}})


def test_coverage_counts_values_at_leaves_and_not_nulls_by_default() -> None:
    examples = [
        {"kind": "Pod", "metadata": {"name": None, "labels": {}},
         "spec": {"containers": [{"image": None}, {"image": "nginx", "port": 80}]}},
        {"spec": {"args": [], "raw": None, "nodeSelector": None}},
        None,
        "not even an object",
    ]
    cov = lp.coverage(POD_LIKE, examples)
    # args: [] has no element, so args[*] is not covered; empty maps count as set.
    assert lp.covered_paths(POD_LIKE_LEAVES, examples) == {
        ("kind",), ("metadata", "labels"),
        ("spec", "containers", ITEMS, "image"), ("spec", "containers", ITEMS, "port"),
    }
    assert (cov.total, cov.covered) == (8, 4)
    assert cov.ratio == 0.5
    assert cov.missing == POD_LIKE_LEAVES - lp.covered_paths(POD_LIKE_LEAVES, examples)
    with_null = lp.covered_paths(POD_LIKE_LEAVES, examples, count_null=True)
    assert with_null - lp.covered_paths(POD_LIKE_LEAVES, examples) == {
        ("metadata", "name"), ("spec", "raw"), ("spec", "nodeSelector"),
    }


def test_values_of_the_wrong_shape_do_not_cover_deeper_paths() -> None:
    examples = [{"spec": {"containers": {"image": "x"}}}, {"metadata": ["name"]}]
    assert lp.covered_paths(POD_LIKE_LEAVES, examples) == frozenset()


def test_format_path() -> None:
    assert lp.format_path(("spec", "containers", ITEMS, "image")) == "spec.containers[*].image"
    assert lp.format_path((ITEMS, ITEMS)) == "[*][*]"
    assert lp.format_path(("metadata", "x-y")) == "metadata['x-y']"
    assert lp.format_path(()) == "<root>"


# --- properties on generated schemas -------------------------------------------------------

NAMES = st.text(alphabet="abcdefgh", min_size=1, max_size=3)
SCALARS = st.sampled_from([STR, INT, {"type": "boolean"}, {"oneOf": [STR, INT]},
                           {"type": "object", "additionalProperties": STR}])


def _compound(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda it: {"type": "array", "items": it}, children),
        st.dictionaries(NAMES, children, min_size=1, max_size=4).map(
            lambda props: {"type": "object", "properties": props}),
    )


SCHEMAS = st.recursive(SCALARS, _compound, max_leaves=20)


def _full_instance(schema: Any, leaf: Any) -> Any:
    """An instance with every property present and one element per array."""
    if "properties" in schema:
        return {k: _full_instance(v, leaf) for k, v in schema["properties"].items()}
    if schema.get("type") == "array":
        return [_full_instance(schema["items"], leaf)]
    return leaf


@given(SCHEMAS)
def test_leaf_paths_are_prefix_free(schema: Any) -> None:
    paths = lp.leaf_paths(schema)
    assert paths
    for path in paths:
        for cut in range(len(path)):
            assert path[:cut] not in paths


@given(SCHEMAS, st.sampled_from(["x", 0, False, {}, []]))
def test_an_instance_filling_every_leaf_covers_everything(schema: Any, leaf: Any) -> None:
    cov = lp.coverage(schema, [_full_instance(schema, leaf)])
    assert cov.ratio == 1.0
    assert cov.missing == frozenset()


@given(SCHEMAS)
def test_null_leaves_cover_only_with_count_null(schema: Any) -> None:
    example = _full_instance(schema, None)
    paths = lp.leaf_paths(schema)
    assert lp.covered_paths(paths, [example], count_null=True) == paths
    assert lp.covered_paths(paths, [example]) == frozenset()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet="abc", max_size=2),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(NAMES, c, max_size=4),
    max_leaves=15,
)


@given(SCHEMAS, st.lists(JSON, max_size=4), st.lists(JSON, max_size=4))
def test_coverage_is_a_monotone_subset_of_the_leaf_paths(
    schema: Any, a: list[Any], b: list[Any]
) -> None:
    paths = lp.leaf_paths(schema)
    hit_a = lp.covered_paths(paths, a)
    hit_ab = lp.covered_paths(paths, a + b)
    assert hit_a <= hit_ab <= paths
    assert hit_ab == hit_a | lp.covered_paths(paths, b)


# --- the driver's arithmetic and argument handling ------------------------------------------

_DRIVER = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_strategies.py"


def _driver() -> Any:
    spec = importlib.util.spec_from_file_location("_bench_strategies", _DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ratios_are_medians_of_per_round_ratios_not_ratios_of_medians() -> None:
    bench = _driver()
    # Round 2 ran while the machine was busy: both sides slowed down 10x.
    ours = [{"build_s": 0.1, "rate": 100.0, "coverage": 0.9, "n": 300, "valid": 300,
             "values": 150.0, "values_rate": 15000.0},
            {"build_s": 1.0, "rate": 10.0, "coverage": 0.8, "n": 300, "valid": 300,
             "values": 150.0, "values_rate": 1500.0},
            {"build_s": 0.1, "rate": 100.0, "coverage": 0.9, "n": 300, "valid": 300,
             "values": 150.0, "values_rate": 15000.0}]
    peer = [{"build_s": 10.0, "rate": 2.0, "coverage": 0.1, "n": 300, "valid": 270,
             "values": 5.0, "values_rate": 10.0},
            {"build_s": 100.0, "rate": 0.2, "coverage": 0.1, "n": 300, "valid": 280,
             "values": 5.0, "values_rate": 1.0},
            {"build_s": 30.0, "rate": 1.0, "coverage": 0.2, "n": 300, "valid": 290,
             "values": 4.0, "values_rate": 4.0}]
    summary = bench.summarise({"ours": ours, "peer": peer}, total_paths=10)
    assert summary["ratio"]["build_s"] == pytest.approx(0.01)  # 0.01, 0.01, 0.0033
    assert summary["ratio"]["rate"] == pytest.approx(50.0)  # 50, 50, 100
    assert summary["ratio"]["coverage"] == pytest.approx(8.0)  # 9, 8, 4.5
    assert summary["ratio"]["values_rate"] == pytest.approx(1500.0)  # 1500, 1500, 3750
    assert summary["peer"]["valid"] == 840
    assert summary["ours"]["rate"] == 100.0
    table = bench.markdown_table({"v1 X": {"summary": summary}}, ["ours", "peer"])
    assert "| v1 X | 10 | 0.01 | 50x | 1.5e+03x | 0.100 / 30.000 | 100.0 / 1.0 | 150.0 / 5.0 |" \
        in table
    assert "93.3%" in table  # the peer's 840 valid of 900


def test_failed_runs_are_reported_not_averaged_in() -> None:
    bench = _driver()
    ours = [{"build_s": 0.1, "rate": 100.0, "coverage": 0.9, "n": 300, "valid": 300}]
    peer = [{"engine": "peer", "n": 0, "error": "timed out after 900 s"}]
    summary = bench.summarise({"ours": ours, "peer": peer}, total_paths=10)
    assert summary["peer"]["errors"] == ["timed out after 900 s"]
    assert summary["ratio"]["rate"] is None
    assert "n/a" in bench.markdown_table({"k": {"summary": summary}}, ["ours", "peer"])


def test_kinds_accept_short_names_and_api_version_kind_pairs() -> None:
    bench = _driver()
    assert bench.parse_kinds("HPA, batch/v1:Job") == [
        ("autoscaling/v2", "HorizontalPodAutoscaler"), ("batch/v1", "Job")]
    with pytest.raises(SystemExit, match=r"unknown kind 'Job'.*API_VERSION:KIND"):
        bench.parse_kinds("Job")


_LEAF_VALUES = _driver().leaf_values


@given(json_values(max_leaves=12), json_values(max_leaves=12))
def test_leaf_values_count_scalars_and_empty_containers(a: Any, b: Any) -> None:
    count = _LEAF_VALUES
    assert count(a) >= 1
    assert count([a, b]) == count(a) + count(b) == count({"x": a, "y": b})
    assert count([]) == count({}) == count(None) == 1
