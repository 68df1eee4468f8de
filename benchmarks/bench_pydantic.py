"""What the pydantic family costs per example, next to pydantic's own validation.

    .venv/bin/python benchmarks/bench_pydantic.py [--examples 300] [--rounds 3]

The model is the shop example's ``Order`` v1 (``tests/pydantic_api/example``: UUID,
aliased name, pattern, bounded int, ``Decimal`` with digits and places, aware datetime,
enum, optional note, a dict with pattern keys), loaded through its config as a user's
would be.  Per round, on the same seed:

* ``draw (schema only)``: Hypothesis examples/s of ``from_schema(model_schema(Order))``
  with a no-op body: our JSON Schema engine alone;
* ``draw (accepted)``: the same for ``model_strategy(Order)``, which adds the
  ``model_validate_json`` filter;
* ``model_validate_json``, ``canonical``: microseconds per document over the drawn
  documents: pydantic's own validation, and our equality's validate-and-dump;
* ``roundtrip[v1->v2]``, ``valid[v1->v2]``: examples/s of the units through the runner
  (the correct converters: a model-typed ``v1_to_v2`` and a dict ``v2_to_v1``).

Figures are medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

CONFIG = (Path(__file__).resolve().parent.parent / "tests" / "pydantic_api" / "example"
          / "compatfuzz.toml")


def _rate(strategy: Any, n: int, keep: list[Any] | None = None) -> float:
    @seed(1)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(doc: Any) -> None:
        if keep is not None:
            keep.append(doc)

    start = time.perf_counter()
    draw()
    return n / (time.perf_counter() - start)


def _per_doc(fn: Any, docs: list[Any]) -> float:
    start = time.perf_counter()
    for doc in docs:
        fn(doc)
    return (time.perf_counter() - start) / len(docs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from compatfuzz.pydantic import canonical, model_schema, model_strategy
    from compatfuzz.roundtrip import UnitFinished, load_config, run
    from compatfuzz.strategies import from_schema

    (api,) = load_config(CONFIG)
    order = api.models["v1"]
    rows: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        docs: list[Any] = []
        rows.setdefault("draw (schema only), examples/s", []).append(
            _rate(from_schema(model_schema(order)), args.examples))
        rows.setdefault("draw (accepted), examples/s", []).append(
            _rate(model_strategy(order), args.examples, docs))
        rows.setdefault("model_validate_json, us/doc", []).append(
            _per_doc(lambda d: order.model_validate_json(json.dumps(d)), docs))
        rows.setdefault("canonical, us/doc", []).append(
            _per_doc(lambda d: canonical(order, d), docs))
        for unit in ("roundtrip[v1->v2]", "valid[v1->v2]"):
            start = time.perf_counter()
            results = [e.result for e in run(api, database="none", seed=1,
                                             max_examples=args.examples,
                                             only=[f"orders::{unit}"])
                       if isinstance(e, UnitFinished)]
            elapsed = time.perf_counter() - start
            assert results and results[0].status.value == "passed", results
            rows.setdefault(f"{unit}, examples/s", []).append(results[0].examples / elapsed)
    print(f"Order v1, {args.examples} examples, median of {args.rounds} rounds")
    print("| measure | median | min | max |")
    print("|---|---|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {statistics.median(values):,.0f} | {min(values):,.0f} | "
              f"{max(values):,.0f} |")


if __name__ == "__main__":
    main()
