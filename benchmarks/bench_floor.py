"""How close compatfuzz's Deployment generation is to Hypothesis's own floor.

    .venv/bin/python benchmarks/bench_floor.py [--examples 300] [--rounds 5]

The examples/s ratio against hypothesis-jsonschema (``bench_strategies.py``) compares
objects of very different richness. This asks a sharper question: how much of the time of
one rich Deployment is compatfuzz's, and how much is Hypothesis's own cost per choice?

1. One profiled run counts the choices (calls of Hypothesis's internal per-choice draw,
   read from ``cProfile`` statistics, not imported) per Deployment example.
2. Then, in rounds alternating the order, the same settings draw (a) Deployments from
   ``from_schema`` and (b) a bare ``@composite`` making that many ``integers(0, 9)``
   draws per example, the cheapest way Hypothesis's public API can make as many choices.
   The figure is the median over rounds of (a)/(b) examples/s: 100% would mean compatfuzz
   adds nothing on top of the choices its objects need.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from compatfuzz.schema import load_kubernetes
from compatfuzz.strategies import from_schema


def _runner(strategy: st.SearchStrategy[Any], examples: int, rnd: int) -> Callable[[], None]:
    @seed(rnd)
    @settings(max_examples=examples, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        pass

    return run


def _rate(strategy: st.SearchStrategy[Any], examples: int, rnd: int) -> float:
    run = _runner(strategy, examples, rnd)
    start = time.perf_counter()
    run()
    return examples / (time.perf_counter() - start)


def _choices_per_example(strategy: st.SearchStrategy[Any], examples: int) -> int:
    profile = cProfile.Profile()
    profile.runcall(_runner(strategy, examples, 0))
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    calls = sum(primitive for (file, _, name), (primitive, *_rest) in stats.items()
                if name == "_draw" and file.endswith("conjecture/data.py"))
    return round(calls / examples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    deployment = from_schema(load_kubernetes("apps/v1", "Deployment", release="1.37"))
    n = _choices_per_example(deployment, args.examples)
    coin = st.integers(min_value=0, max_value=9)

    @st.composite
    def bare(draw: st.DrawFn) -> list[int]:
        return [draw(coin) for _ in range(n)]

    ratios, ours, floor = [], [], []
    for rnd in range(args.rounds):
        pair = [("ours", deployment), ("floor", bare())]
        if rnd % 2:
            pair.reverse()
        rates = {name: _rate(strategy, args.examples, rnd) for name, strategy in pair}
        ours.append(rates["ours"])
        floor.append(rates["floor"])
        ratios.append(rates["ours"] / rates["floor"])
        print(f"round {rnd + 1}: Deployment {rates['ours']:.1f}/s, "
              f"{n} bare draws {rates['floor']:.1f}/s", file=sys.stderr)
    print(f"choices per Deployment example: {n}")
    print(f"Deployment from_schema: {statistics.median(ours):.1f} examples/s (median)")
    print(f"Hypothesis alone, {n} integer draws: {statistics.median(floor):.1f} examples/s")
    print(f"compatfuzz / floor: {statistics.median(ratios):.0%} (median of per-round ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
