"""CEL rules met by construction, on every CRD version of ../shared/corpus with rules.

For each CRD version whose schema carries ``x-kubernetes-validations``, side by side in one
process (the machine is shared, so only shares and ratios are compared):

* **constructed**: the share of objects drawn with the CEL filter switched off that pass
  every CEL rule of the version (judged by ``compatfuzz.apiserver``'s CEL validation, the
  API server's semantics): what construction alone achieves;
* **random** (the peer: how generation worked before construction): the same share with
  construction switched off too;
* **valid/s**: valid objects per CPU second of the normal strategy (construction and the
  filter), and the rules it still filters (not recognised).

Run: ``python benchmarks/bench_cel_construct.py [-n 100] [--corpus ../shared/corpus]``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from compatfuzz.apiserver._validate import _rules
from compatfuzz.schema import Schema, load_crds
from compatfuzz.strategies import _cel_construct
from compatfuzz.strategies._api import sampling_strategy
from compatfuzz.strategies._compile import Compiler


def _versions(corpus: Path) -> Iterator[tuple[str, str, Schema]]:
    files = sorted([*corpus.glob("crds/*/*.yaml"), *corpus.glob("crds-cel/*/*.yaml"),
                    *corpus.glob("crd-releases/*/*/*.yaml")])
    for path in files:
        try:
            crds = load_crds(path)
        except Exception as exc:
            print(f"# {path}: {exc}", file=sys.stderr)
            continue
        for crd in crds:
            for version in crd.versions:
                if version.schema is not None and _rules(version.schema).any:
                    yield str(path.relative_to(corpus)), version.name, version.schema


@contextlib.contextmanager
def _mode(construct: bool, filtered: bool) -> Iterator[None]:
    saved_cel, saved_make = Compiler.with_cel, _cel_construct.construction
    if not filtered:
        Compiler.with_cel = lambda self, gen, *a, **k: gen  # type: ignore[method-assign]
    if not construct:
        def bare(node: Any, resolve: Any = None) -> Any:
            return _cel_construct.Construction(dict(node), (), frozenset())

        _cel_construct.construction = bare  # type: ignore[assignment]
    try:
        yield
    finally:
        Compiler.with_cel = saved_cel  # type: ignore[method-assign]
        _cel_construct.construction = saved_make  # type: ignore[assignment]


def _draw(schema: Schema, n: int) -> tuple[list[Any], float, Any]:
    strategy, plan = sampling_strategy(schema)
    out: list[Any] = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value: Any) -> None:
        out.append(value)

    start = time.process_time()
    with contextlib.suppress(Exception):
        run()
    return out, time.process_time() - start, plan


def _share(schema: Schema, values: list[Any]) -> float:
    rules = _rules(schema)
    return sum(1 for v in values if next(rules.errors(v), None) is None) / max(1, len(values))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--corpus", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"{'CRD version':<92} {'constructed':>11} {'random':>7} {'valid/s':>8} filtered")
    rows = 0
    low: list[str] = []
    for name, version, schema in _versions(args.corpus):
        with _mode(construct=True, filtered=False):
            built, _, _ = _draw(schema, args.n)
        with _mode(construct=False, filtered=False):
            random, _, _ = _draw(schema, args.n)
        valid, cpu, plan = _draw(schema, args.n)
        filtered = sum(len(s.rules) for s in plan.cel_filtered().values())
        share = _share(schema, built)
        rows += 1
        if share < 0.95:
            low.append(f"{name}@{version}")
        print(f"{name + '@' + version:<92} {share:>10.0%} {_share(schema, random):>7.0%} "
              f"{len(valid) / max(cpu, 1e-9):>8.1f} {filtered}", flush=True)
    print(f"# {rows} CRD versions with CEL rules; {rows - len(low)} at >= 95% constructed"
          + (f"; below: {', '.join(low)}" if low else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
