"""Cost of ``CompiledRules.check`` against the raw cel-python evaluation it wraps.

For each rule (real ones from Cluster API, Gateway API and the Kubernetes docs) the same
300 generated values are checked by compatfuzz (``compile_rules(...).check``: schema-aware
conversion, collapsed AST, Kubernetes functions, memo off because values are distinct) and
by the peer, plain cel-python (``Environment().program(compile(rule)).evaluate``). Rounds
alternate the order to cancel drift on a shared machine; we report the median µs per check
of each side and the median of the per-round ratios ours/peer, plus the cost of a repeated
value (answered from ``check``'s memo).

Run: ``python benchmarks/bench_cel.py [--rounds 5] [--values 300]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from typing import Any

from celpy.adapter import json_to_cel

from compatfuzz.strategies._cel import _environment, compile_rules

Maker = Callable[[random.Random], Any]

CASES: list[tuple[str, str, Maker]] = [
    ("enum-like string (cluster-api)",
     "!(self in ['Ready','Available','HealthCheckSucceeded','OwnerRemediated',"
     "'ExternallyRemediated'])",
     lambda r: "".join(r.choices(string.ascii_letters, k=8))),
    ("has() guard (gateway-api)",
     "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
     lambda r: {"type": r.choice(["ReplaceFullPath", "ReplacePrefixMatch"]),
                "replaceFullPath": str(r.random())}),
    ("unique names, 3 items (cluster-api)",
     "self.all(x, self.exists_one(y, x.name == y.name))",
     lambda r: [{"name": str(r.random())} for _ in range(3)]),
    ("min <= replicas <= max (k8s docs)",
     "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
     lambda r: {"minReplicas": r.randint(0, 5), "replicas": r.randint(0, 9),
                "maxReplicas": r.randint(5, 9)}),
]


def _time(fn: Callable[[Any], Any], values: list[Any]) -> float:
    start = time.perf_counter()
    for v in values:
        fn(v)
    return (time.perf_counter() - start) / len(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--values", type=int, default=300)
    args = parser.parse_args(argv)
    env = _environment()
    print(f"python {sys.version.split()[0]}, {args.rounds} rounds x {args.values} values")
    print(f"{'rule':38s} {'ours us':>8s} {'peer us':>8s} {'ours/peer':>9s} {'memo us':>8s}")
    for label, rule, make in CASES:
        peer_program = env.program(env.compile(rule))

        def peer(v: Any, program: Any = peer_program) -> Any:
            try:
                return program.evaluate({"self": json_to_cel(v)})
            except Exception as exc:  # an error is a "does not hold", as in check()
                return exc

        ours_t, peer_t, ratios, memo_t = [], [], [], []
        for round_no in range(args.rounds):
            rnd = random.Random(round_no)
            values = [make(rnd) for _ in range(args.values)]
            check = compile_rules({"x-kubernetes-validations": [{"rule": rule}]}).check
            if round_no % 2:
                p, o = _time(peer, values), _time(check, values)
            else:
                o, p = _time(check, values), _time(peer, values)
            ours_t.append(o)
            peer_t.append(p)
            ratios.append(o / p)
            memo_t.append(_time(check, values))
        print(f"{label:38s} {statistics.median(ours_t) * 1e6:8.0f} "
              f"{statistics.median(peer_t) * 1e6:8.0f} {statistics.median(ratios):9.2f} "
              f"{statistics.median(memo_t) * 1e6:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
