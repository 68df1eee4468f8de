"""The seeded-bug suite: how soon compatfuzz finds real conversion bugs in a rich CRD.

Each bug of ``seeded.BUGS`` (the Sprocket CRD, one classic bug in an otherwise correct
converter) must be caught by its round-trip unit within the ``default`` profile's 100
examples with a fixed seed, and the reported failure must name the field the bug
corrupts. A bug the generator does not find in that budget is ``xfail(strict=True)`` with
the reason, so a change of the generator that flips it shows (and the mark must then go).
``benchmarks/bench_seeded.py`` measures the same thing as a distribution over 20 seeds.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    units,
)

from .seeded import BUGS, NAME, Bug, Converter, first_failure, without_local_constants

SEED = 20261124
SLOW_SEEDS = range(20)

_WHY = "not caught within the default budget yet: "
# Every bug is caught with SEED since the swarm generator (issue 9); before it, 26 of the
# 33 were not (benchmarks/results/seeded_before.json). A bug the generator misses again
# goes here with the reason, as a strict xfail.
NOT_CAUGHT: dict[str, str] = {}
# Caught with SEED, but by fewer than 19 of the default runs of seeds 0-19 (the slow
# test's claim), measured by benchmarks/bench_seeded.py (results/seeded_after.json): none
# since the edge classes of 5617fd7 (all 33 bugs on 20 of 20 seeds). A bug that slips
# goes here with its figure, as a non-strict xfail.
NOT_ALWAYS_CAUGHT: dict[str, str] = {}
# The slow test's bar, from the issue: caught by the default run of 19 of 20 seeds.
SEEDS_NEEDED = 19


@pytest.fixture(autouse=True)
def _generator_alone() -> Iterator[None]:
    """Seeded runs see the generator alone, as an installed compatfuzz does: without
    Hypothesis's pool of literals from local modules, which any edit to compatfuzz's
    source (or the set of modules a session has loaded) changes, reshuffling the runs."""
    with without_local_constants():
        yield


def _param(name: str, reasons: dict[str, str], *, strict: bool = True) -> Any:
    if name in reasons:
        return pytest.param(name, marks=pytest.mark.xfail(strict=strict,
                                                          reason=_WHY + reasons[name]))
    return name


def _under(path: str, fields: tuple[str, ...]) -> bool:
    """Whether a diff path names one of ``fields`` or something inside it."""
    return any(path == f or (path.startswith(f) and path[len(f)] in ".[") for f in fields)


def _result(bug: Bug, seed: int) -> UnitResult:
    results = [e.result for e in run(bug.api(), only=[bug.unit_id], seed=seed,
                                      database="none") if isinstance(e, UnitFinished)]
    assert [r.unit.id for r in results] == [bug.unit_id]
    return results[0]


def _first_failure(bug: Bug, seed: int) -> tuple[int, Any, BaseException] | None:
    """The bug unit's first failing example in a default run with ``seed``, generation
    only: shrinking 33 bugs through the API-server model would cost minutes."""
    api = bug.api()
    (unit,) = [u for u in units(api) if u.id == bug.unit_id]
    return first_failure(api, unit, seed, get_profile("default").max_examples)


@pytest.mark.parametrize("name", [_param(n, NOT_CAUGHT) for n in BUGS])
def test_seeded_bug_is_caught_within_the_default_budget(name: str) -> None:
    bug = BUGS[name]
    found = _first_failure(bug, SEED)
    assert found is not None, f"{name} ({bug.category}) not caught in 100 examples"
    calls, obj, exc = found
    assert calls <= get_profile("default").max_examples
    assert isinstance(exc, NotEquivalent), exc
    paths = {change.path for change in exc.diff}
    assert paths and all(_under(p, bug.fields) for p in paths), (bug.fields, paths, obj)


# One bug per value family runs the whole way, shrinking included, as `compatfuzz fuzz` does.
SHRUNK = ["int64_through_float", "nanoseconds_truncated", "list_map_key_collision",
          "empty_struct_dropped"]


@pytest.mark.parametrize("name", [_param(n, NOT_CAUGHT) for n in SHRUNK])
def test_a_run_reports_the_seeded_bug_with_a_shrunk_counterexample(name: str) -> None:
    bug = BUGS[name]
    result = _result(bug, SEED)
    assert result.status is Status.FAILED, (
        f"{name} ({bug.category}) not caught in {result.examples} examples: {result.message}")
    cx = result.counterexample
    assert cx is not None and cx.shrunk
    paths = {row["path"] for row in cx.diff}
    assert paths and all(_under(p, bug.fields) for p in paths), (bug.fields, paths)
    with pytest.raises(NotEquivalent):  # the counterexample is real
        check(bug.api(), cx.unit, cx.object)


@pytest.mark.parametrize("name", list(BUGS))
def test_each_bug_loses_information_the_correct_converter_keeps(name: str) -> None:
    """The bug is real and detectable by the round-trip property: on its witness object
    the correct converter round-trips and the bug changes exactly its field."""
    bug = BUGS[name]
    unit = Unit(NAME, "Sprocket", Property.ROUNDTRIP, bug.unit)
    check(Converter().api(), unit, bug.witness_object())
    with pytest.raises(NotEquivalent) as caught:
        check(bug.api(), unit, bug.witness_object())
    paths = {change.path for change in caught.value.diff}
    assert paths and all(_under(p, bug.fields) for p in paths), (bug.fields, paths)


def test_the_suite_is_broad() -> None:
    assert len(BUGS) >= 20
    assert len({bug.category for bug in BUGS.values()}) == len(BUGS)
    ids = {u.id for u in units(Converter().api(), [Property.ROUNDTRIP])}
    assert {bug.unit_id for bug in BUGS.values()} <= ids
    assert set(NOT_CAUGHT) <= set(BUGS) and set(NOT_ALWAYS_CAUGHT) <= set(BUGS)
    assert get_profile("default").max_examples == 100  # "the default budget"


def test_local_constants_can_be_set_aside() -> None:
    # After a Hypothesis upgrade that moved the pool, every verdict above would again
    # depend on compatfuzz's own literals: fail loudly instead.
    with without_local_constants() as alone:
        assert alone


def test_correct_converter_passes_every_round_trip() -> None:
    results = [e.result for e in run(Converter().api(), properties=[Property.ROUNDTRIP],
                                     seed=SEED, database="none")
               if isinstance(e, UnitFinished)]
    assert len(results) == 6
    assert {r.unit.id: r.message for r in results if r.status is not Status.PASSED} == {}
    assert all(r.examples >= 100 for r in results)


def test_correct_converter_passes_the_other_properties() -> None:
    only = [f"{NAME}::valid[v1->v1alpha1]", f"{NAME}::valid[v1alpha1->v1]",
            f"{NAME}::no_mutation[v1->v1alpha1]",
            f"{NAME}::path_independent[v1->v1alpha1->v1beta1]",
            f"{NAME}::path_independent[v1alpha1->v1beta1->v1]"]
    results = {e.result.unit.id: e.result for e in run(Converter().api(), only=only,
                                                       seed=SEED, database="none")
               if isinstance(e, UnitFinished)}
    assert sorted(results) == sorted(only)
    assert {k: r.message for k, r in results.items() if r.status is not Status.PASSED} == {}


@pytest.mark.slow
def test_correct_converter_passes_every_property_at_length() -> None:
    results = [e.result for e in run(Converter().api(), seed=SEED, database="none",
                                     max_examples=1000) if isinstance(e, UnitFinished)]
    assert len(results) == 24
    assert {r.unit.id: r.message for r in results if r.status is not Status.PASSED} == {}


@pytest.mark.slow
# not strict: which bugs sit at 18 or 19 of 20 seeds moves with any generator edit
@pytest.mark.parametrize("name", [_param(n, {**NOT_CAUGHT, **NOT_ALWAYS_CAUGHT},
                                         strict=n in NOT_CAUGHT) for n in BUGS])
def test_seeded_bug_is_caught_whatever_the_seed(name: str) -> None:
    """The claim is statistical: 19 of 20 seeds catch it (run with --run-slow)."""
    bug = BUGS[name]
    missed = []
    for seed in SLOW_SEEDS:
        result = _result(bug, seed)
        if result.status is not Status.FAILED:
            missed.append(seed)
            continue
        cx = result.counterexample
        assert cx is not None
        assert all(_under(row["path"], bug.fields) for row in cx.diff), cx.diff
    assert len(SLOW_SEEDS) - len(missed) >= SEEDS_NEEDED, f"missed with seeds {missed}"
