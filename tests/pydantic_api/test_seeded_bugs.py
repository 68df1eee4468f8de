"""Acceptance (issue 20): each seeded migration bug of ``example/shop/bugs.py`` is caught
within the default 100 examples, and the correct converters pass every property."""

from __future__ import annotations

import pytest

from compatfuzz.roundtrip import Status, UnitFinished, run

from ._shop import bugs, shop_api

SEED = 20261126
NAMES = sorted(bugs())


def _result(api: object, unit: str, seed: int) -> object:
    (result,) = [e.result for e in run(api, database="none", seed=seed,  # type: ignore[arg-type]
                                       only=[f"orders::{unit}"])
                 if isinstance(e, UnitFinished)]
    return result


def test_correct_converters_pass_every_property() -> None:
    # 40 examples a unit: the seeded bugs below show how few a bug needs
    results = [e.result for e in run(shop_api(), database="none", seed=SEED, max_examples=40)
               if isinstance(e, UnitFinished)]
    assert len(results) == 27  # 3 encodings; 6 pairs x roundtrip, valid, no_mutation;
    # 6 triples
    assert {r.unit.id: r.status for r in results if r.status is not Status.PASSED} == {}


@pytest.mark.parametrize("name", NAMES)
def test_seeded_bug_is_caught(name: str) -> None:
    pair, fn, unit = bugs()[name]
    result = _result(shop_api(converters={pair: fn}), unit, SEED)
    assert result.status is Status.FAILED, result.message  # type: ignore[attr-defined]
    assert result.counterexample is not None  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_seeded_bug_is_caught_on_20_seeds(name: str) -> None:
    pair, fn, unit = bugs()[name]
    api = shop_api(converters={pair: fn})
    missed = [seed for seed in range(20)
              if _result(api, unit, seed).status is not Status.FAILED]  # type: ignore[attr-defined]
    assert missed == []
