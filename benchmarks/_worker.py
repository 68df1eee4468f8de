"""One timed run of one engine on one schema, in a fresh process; prints nothing, writes JSON.

``bench_strategies.py`` starts this script once per (engine, kind, round): with
the project venv's (``.venv``) Python for compatfuzz and with ``benchmarks/.peer-venv``'s Python for
hypothesis-jsonschema (which needs its own pinned Hypothesis). Running *both* engines the
same way, each in a cold process with identical measuring code, keeps the comparison fair:
no engine profits from caches warmed by an earlier round, and imports are excluded from
both timings.

Measured (``time.perf_counter``):

* ``construct_s``: the ``from_schema(...)`` call alone;
* ``first_example_s``: from entering the ``@given`` test to the first example reaching it
  (strategies are lazy, so this is where deferred compilation happens);
* ``build_s = construct_s + first_example_s``: what a user waits before the first example;
* ``rate``: examples per second after the first one, ``(n - 1) / (t_last - t_first)``.
  Examples the engine rejects internally (filters, ``assume``) cost time but are not
  counted, so this is the rate of examples *delivered*.

Examples are drawn with ``@given(strategy)`` and ``@settings(max_examples=N,
phases=[Phase.generate], database=None, deadline=None, suppress_health_check=all)`` under a
fixed ``@seed``, and all of them are written out for the parent to check (validity and
leaf-path coverage are computed there, with one piece of code for both engines).

This file must stay importable by the peer's venv: stdlib and Hypothesis only at the top.
"""

# Imports live inside main(): each engine runs in its own venv (compatfuzz's or the peer's)
# where the other engine is not installed.
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any


def _unserialisable(value: object) -> object:
    # Not JSON: keep a marker so the parent counts the example as invalid, not lost.
    return {"__unserialisable__": repr(value)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=["ours", "peer"], required=True)
    parser.add_argument("--schema-file", help="bundled JSON schema (peer)")
    parser.add_argument("--api-version", help="Kubernetes apiVersion (ours)")
    parser.add_argument("--kind", help="Kubernetes kind (ours)")
    parser.add_argument("--release", default="1.37", help="Kubernetes release (ours)")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    args = parser.parse_args(argv)

    from hypothesis import HealthCheck, Phase, given, seed, settings

    schema: Any
    if args.engine == "ours":
        from compatfuzz.schema import load_kubernetes
        from compatfuzz.strategies import from_schema

        schema = load_kubernetes(args.api_version, args.kind, release=args.release)
    else:
        from hypothesis_jsonschema import (  # type: ignore[import-not-found, no-redef]
            from_schema,
        )

        with open(args.schema_file, encoding="utf-8") as f:
            schema = json.load(f)

    import hypothesis

    stamps: list[float] = []
    examples: list[Any] = []

    t0 = time.perf_counter()
    strategy = from_schema(schema)
    t_constructed = time.perf_counter()

    @seed(args.seed)
    @settings(
        max_examples=args.examples,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @given(strategy)
    def record(value: Any) -> None:
        stamps.append(time.perf_counter())
        examples.append(value)

    error = None
    t_run = time.perf_counter()
    try:
        record()
    except Exception as exc:  # report, don't crash: the parent prints it in the table
        error = f"{type(exc).__name__}: {exc}"[:2000]
    t_done = time.perf_counter()

    n = len(stamps)
    result = {
        "engine": args.engine,
        "hypothesis": hypothesis.__version__,
        "python": sys.version.split()[0],
        "seed": args.seed,
        "requested": args.examples,
        "n": n,
        "construct_s": t_constructed - t0,
        "first_example_s": (stamps[0] - t_run) if n else None,
        "build_s": (t_constructed - t0 + stamps[0] - t_run) if n else None,
        "rate": ((n - 1) / (stamps[-1] - stamps[0])) if n > 1 and stamps[-1] > stamps[0]
        else None,
        "total_s": t_done - t0,
        "error": error,
        "examples": examples,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, default=_unserialisable)
    return 0


if __name__ == "__main__":
    sys.exit(main())
