"""Round-trip examples/s vs raw generation on a Deployment-sized CRD (goal: >= 50%).

Two round-trip figures: compared as plain dicts (``pipeline="plain"``), and judged through
the API-server model (``pipeline="apiserver"``: pruning, null-dropping, ObjectMeta
decoding and defaulting at every hop, storage in v1, a v2 client's update in between).

    .venv/bin/python benchmarks/bench_roundtrip.py [--examples 200] [--rounds 5]

The API is Kubernetes 1.37 ``apps/v1 Deployment`` (from ``load_kubernetes``) served as two
versions ``v1`` and ``v2`` of a CRD-like kind with an identity converter, so the figure is
compatfuzz's own overhead: copying, two conversions and ``semantic.equal``.  Both sides
are Hypothesis tests with identical settings (generate phase only, no database) drawing
from the very same strategy object with the same seed (so the same objects); one side
does nothing with the object (raw generation), the other runs the ``roundtrip[v1->v2]``
property.  Each round times both, alternating which goes first, and the figure is the
median over rounds of (round-trip examples/s) / (raw examples/s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from compatfuzz.roundtrip import API, Kind, Property, Unit, build_test
from compatfuzz.roundtrip._check._properties import strategy_for
from compatfuzz.roundtrip._engine._given import Recorder
from compatfuzz.schema import load_kubernetes

GROUP = "bench.example.com"


def make_api(pipeline: str = "plain") -> API:
    schema = load_kubernetes("apps/v1", "Deployment")
    kind = Kind("Deployment", {"v1": schema, "v2": schema}, group=GROUP, hub="v1")

    def identity(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        return {**obj, "apiVersion": desired}

    # The built-in kind keeps its $refs (kubernetes-validate's schema, not a CRD's), so the
    # API-server pipeline warns it is not structural: known here, and not what is timed.
    import warnings

    from compatfuzz.errors import CompatfuzzWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "API 'bench': .* is not a structural schema",
                                CompatfuzzWarning)
        return API("bench", [kind], convert=identity, pipeline=pipeline)


def bench_settings(n: int) -> settings:
    return settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck))


def time_raw(api: API, n: int, round_seed: int) -> tuple[int, float]:
    count = {"n": 0}
    strategy = strategy_for(api, api.kinds[0], "v1")

    @seed(round_seed)
    @bench_settings(n)
    @given(obj=strategy)
    def raw(obj: Any) -> None:
        count["n"] += 1

    start = time.perf_counter()
    raw()
    return count["n"], time.perf_counter() - start


def time_roundtrip(api: API, n: int, round_seed: int) -> tuple[int, float]:
    recorder = Recorder()
    unit = Unit("bench", "Deployment", Property.ROUNDTRIP, ("v1", "v2"))
    test = seed(round_seed)(build_test(api, unit, settings=bench_settings(n),
                                       recorder=recorder))
    start = time.perf_counter()
    test()
    return recorder.calls, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    plain, served = make_api("plain"), make_api("apiserver")
    for api in (plain, served):
        time_raw(api, 10, 0)  # warm up: build the strategy and compile the semantic schema
        time_roundtrip(api, 10, 0)
    rows = []
    for r in range(args.rounds):
        order = [("raw", time_raw, plain), ("roundtrip", time_roundtrip, plain),
                 ("apiserver", time_roundtrip, served)]
        if r % 2:
            order.reverse()
        rates: dict[str, float] = {}
        for name, fn, api in order:
            count, seconds = fn(api, args.examples, r + 1)
            rates[name] = count / seconds
            print(f"round {r + 1}: {name:<9} {count} examples in {seconds:.2f}s "
                  f"= {rates[name]:.1f}/s", file=sys.stderr)
        rows.append({**rates, "ratio": rates["roundtrip"] / rates["raw"],
                     "ratio_apiserver": rates["apiserver"] / rates["raw"]})
    ratio = statistics.median(r["ratio"] for r in rows)
    ratio_served = statistics.median(r["ratio_apiserver"] for r in rows)
    raw = statistics.median(r["raw"] for r in rows)
    rt = statistics.median(r["roundtrip"] for r in rows)
    served_rate = statistics.median(r["apiserver"] for r in rows)
    print("| Deployment (apps/v1, K8s 1.37), identity converter | examples/s (median) |")
    print("|---|---|")
    print(f"| raw generation (`from_schema`) | {raw:.1f} |")
    print(f"| `roundtrip[v1->v2]`, plain dicts | {rt:.1f} |")
    print(f"| `roundtrip[v1->v2]`, API-server pipeline | {served_rate:.1f} |")
    print(f"| **ratio round-trip / raw**, plain (median of {args.rounds} rounds) | "
          f"**{ratio:.0%}** (goal >= 50%: {'met' if ratio >= 0.5 else 'NOT met'}) |")
    print(f"| **ratio round-trip / raw**, API-server pipeline | "
          f"**{ratio_served:.0%}** (goal >= 50%: {'met' if ratio_served >= 0.5 else 'NOT met'}) |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"examples": args.examples, "rounds": rows, "ratio": ratio,
                       "ratio_apiserver": ratio_served, "raw_per_s": raw,
                       "roundtrip_per_s": rt, "apiserver_per_s": served_rate}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
