"""equal() vs DeepDiff on equal Deployment-sized object pairs, as a ratio from one run.

    .venv/bin/python benchmarks/bench_semantic.py [--pairs 50] [--rounds 7]

Both tools see the same pairs in the same process; each round times both, alternating
which goes first, so machine noise hits both alike, and the figure is the median over rounds of
(DeepDiff time / equal() time). Two kinds of pairs, each equal semantically:

* ``copy``: ``b`` is ``a`` re-parsed from JSON, sharing no objects (DeepDiff also
  reports nothing);
* ``respelled``: keys reordered, list-map items reversed, ``"1Gi"`` as ``"1024Mi"``,
  times with another offset (DeepDiff reports differences, equal() does not).

The schema is compiled once before timing (cached by equal() anyway).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deepdiff import DeepDiff
from tests.semantic.deployment import deployment, respelled

from compatfuzz.schema import load_kubernetes
from compatfuzz.semantic import equal

Pairs = list[tuple[dict[str, Any], dict[str, Any]]]


def make_pairs(n: int, kind: str) -> Pairs:
    pairs = []
    for i in range(n):
        a = deployment()
        a["metadata"]["name"] = f"web-{i}"
        a["spec"]["replicas"] = i % 7
        a["metadata"]["labels"][f"team-{i % 5}"] = "yes"
        b = json.loads(json.dumps(a)) if kind == "copy" else respelled(a)
        pairs.append((a, b))
    return pairs


def run_equal(pairs: Pairs, schema: Any) -> float:
    start = time.perf_counter()
    for a, b in pairs:
        equal(a, b, schema=schema)
    return time.perf_counter() - start


def run_deepdiff(pairs: Pairs) -> float:
    start = time.perf_counter()
    for a, b in pairs:
        DeepDiff(a, b)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    schema = load_kubernetes("apps/v1", "Deployment")
    print(f"python {sys.version.split()[0]}, {args.pairs} pairs x {args.rounds} rounds, "
          f"schema {schema.name}")
    for kind in ("copy", "respelled"):
        pairs = make_pairs(args.pairs, kind)
        assert all(equal(a, b, schema=schema) for a, b in pairs)  # warm-up + sanity
        ratios, ours, theirs = [], [], []
        for i in range(args.rounds):
            if i % 2:  # alternate who goes first
                t_deepdiff = run_deepdiff(pairs)
                t_equal = run_equal(pairs, schema)
            else:
                t_equal = run_equal(pairs, schema)
                t_deepdiff = run_deepdiff(pairs)
            ours.append(t_equal / len(pairs))
            theirs.append(t_deepdiff / len(pairs))
            ratios.append(t_deepdiff / t_equal)
        print(f"{kind:>10}: equal() {statistics.median(ours) * 1e6:8.1f} us/pair   "
              f"DeepDiff {statistics.median(theirs) * 1e6:9.1f} us/pair   "
              f"ratio (median of rounds) {statistics.median(ratios):6.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
