"""Acceptance: classic conversion bugs are caught within the default budget, with a
minimal counterexample and its field-path diff, and correct canonicalising converters
pass (1024Mi -> 1Gi, +01:00 -> Z, empty list -> absent)."""

from __future__ import annotations

from typing import Any

import pytest

from compatfuzz.errors import NotEquivalent
from compatfuzz.roundtrip import (
    Property,
    Status,
    Unit,
    UnitFinished,
    UnitResult,
    check,
    get_profile,
    run,
)

from .widgets import BUGS, GROUP, Converter

# Every bug shows on the way from v1 down to an older version and back: the two units
# whose first step goes down, as `compatfuzz fuzz --property roundtrip` runs them.
DOWN_AND_UP = ["widgets::roundtrip[v1->v1alpha1]", "widgets::roundtrip[v1->v1beta1]"]
SEED = 20261122

# bug -> (the diff path it must report, a predicate the minimal counterexample meets)
EXPECTED: dict[str, tuple[set[str], Any]] = {
    "dropped_list_tail": ({"spec.items[1]"}, lambda spec: spec == {"items": ["", ""]}),
    "quantity_precision_loss": ({"spec.memory"}, lambda spec: set(spec) == {"memory"}),
    "int_or_string_type_change": ({"spec.port"},
                                  lambda spec: spec == {"port": 0}),
    "new_field_lost": ({"spec.paused"}, lambda spec: set(spec) == {"paused"}),
    "two_field_interaction": ({"spec.maxReplicas"},
                              lambda spec: set(spec) == {"minReplicas", "maxReplicas"}
                              and sorted(spec.values()) == [0, 1]),
}


def _results(api: Any, **kwargs: Any) -> dict[str, UnitResult]:
    return {e.result.unit.id: e.result for e in run(api, database="none", seed=SEED, **kwargs)
            if isinstance(e, UnitFinished)}


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_seeded_bug_is_caught_with_a_minimal_counterexample(bug: str) -> None:
    api = BUGS[bug]().api()
    results = _results(api, only=DOWN_AND_UP)
    assert sorted(results) == sorted(DOWN_AND_UP)
    failed = [r for r in results.values() if r.status is Status.FAILED]
    assert failed, [r.message for r in results.values()]
    paths, minimal = EXPECTED[bug]
    for result in failed:
        cx = result.counterexample
        assert cx is not None and cx.shrunk
        assert {row["path"] for row in cx.diff} == paths
        assert set(cx.object) == {"apiVersion", "kind", "spec"}  # metadata shrunk away
        assert minimal(cx.object["spec"]), cx.object
        # The counterexample is real: checking it again fails the same way.
        with pytest.raises(NotEquivalent):
            check(api, cx.unit, cx.object)


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(BUGS))
def test_seeded_bug_is_caught_whatever_the_seed(bug: str) -> None:
    """The claim is statistical: check it on 20 seeds (run with --run-slow)."""
    for seed in range(20):
        results = [e.result for e in run(BUGS[bug]().api(), database="none", seed=seed,
                                         only=DOWN_AND_UP) if isinstance(e, UnitFinished)]
        assert any(r.status is Status.FAILED for r in results), f"missed with seed {seed}"


def test_budget_is_the_default_profile() -> None:
    # The bugs above are found with the default profile's examples, not a raised budget.
    assert get_profile("default").max_examples == 100


def test_correct_canonicalising_converter_passes_every_round_trip() -> None:
    results = _results(Converter().api(), properties=[Property.ROUNDTRIP])
    assert len(results) == 6
    failed = {k: r.message for k, r in results.items() if r.status is not Status.PASSED}
    assert not failed
    assert all(r.examples >= 100 for r in results.values())


def test_correct_converter_passes_the_other_properties() -> None:
    only = ["widgets::valid[v1->v1alpha1]", "widgets::no_mutation[v1alpha1->v1beta1]",
            "widgets::path_independent[v1alpha1->v1beta1->v1]"]
    results = _results(Converter().api(), only=only)
    assert sorted(results) == sorted(only)
    assert {k: r.status for k, r in results.items()} == dict.fromkeys(only, Status.PASSED)


CANONICAL = {
    "apiVersion": f"{GROUP}/v1alpha1", "kind": "Widget",
    "spec": {"memory": "1024Mi", "since": "2026-11-22T10:30:00+01:00", "items": []},
}


def test_canonicalisation_changes_spelling_but_not_meaning() -> None:
    api = Converter().api()
    converted = api.convert("Widget", CANONICAL, "v1alpha1", "v1")
    assert converted["spec"] == {"memory": "1Gi", "since": "2026-11-22T09:30:00Z"}
    for other in ("v1beta1", "v1"):
        check(api, Unit("widgets", "Widget", Property.ROUNDTRIP, ("v1alpha1", other)),
              CANONICAL)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_bug_changes_meaning_where_the_correct_converter_does_not(bug: str) -> None:
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "spec": {
        "items": ["a", "b", "c"], "memory": "1536", "port": 8080, "paused": True,
        "minReplicas": 5, "maxReplicas": 2}}
    unit = Unit("widgets", "Widget", Property.ROUNDTRIP, ("v1", "v1alpha1"))
    check(Converter().api(), unit, obj)
    with pytest.raises(NotEquivalent):
        check(BUGS[bug]().api(), unit, obj)
