"""The fixed cost of one unit when each unit runs in its own worker process.

``compatfuzz fuzz`` runs every unit (one property on one version pair or triple) in a
forked worker, so that a converter's ``os._exit``, signal or leftover thread fails its unit
and not the run. A CRD served in 15 versions has 930 units; with ``--max-examples 1`` what
a unit costs is almost all fixed cost. Side by side in one script, interleaved so that a
machine slowing down slows all three:

* **in-process**: the same units run one after another in this process
  (``run(..., isolate=False)``), the floor: no fork, every one-off cost paid once;
* **isolated**: a worker per unit, as the CLI runs them (``isolate=True``); the parent
  does Hypothesis's, jsonschema's and the semantic comparators' one-off set-up before
  it forks (``roundtrip/_engine/_workers.py::_prewarm``), so workers inherit it;
* **isolated, cold**: the same without that set-up in the parent (how it was): each
  worker pays it again.

Each measurement runs in a fresh interpreter (one-off costs included, as a user's run pays
them: once per run, or once per worker). Reported: wall seconds per unit (median of
``--repeat`` rounds) and the ratios to the floor. Wall time, because a worker's CPU time is
not the parent's; the machine's load is printed beside it.

Run: ``python benchmarks/bench_unit_overhead.py [--versions 15] [--units 60] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from compatfuzz.roundtrip._check._config import load_config
from compatfuzz.roundtrip._engine import _workers
from compatfuzz.roundtrip._engine._runner import run
from compatfuzz.roundtrip._events import Status, UnitFinished

CONVERTER = '''\
def to_hub(obj):
    return {**obj, "apiVersion": "ex.com/hub"}


def from_hub(obj, version):
    return {**obj, "apiVersion": "ex.com/" + version}
'''

CONFIG = '''\
[[api]]
name = "widget"
crd = "crd.yaml"
hub = "hub"
to_hub = "conv:to_hub"
from_hub = "conv:from_hub"
'''


def write_project(folder: Path, versions: int) -> Path:
    """A CRD served in ``versions`` identical versions, converted through an internal hub."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "maxLength": 20},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "mode": {"type": "string", "enum": ["a", "b", "c"]}}}}}
    names = [f"v{i}" for i in range(1, versions + 1)]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.ex.com"},
           "spec": {"group": "ex.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                              "listKind": "WidgetList"},
                    "versions": [{"name": v, "served": True, "storage": v == names[-1],
                                  "schema": {"openAPIV3Schema": schema}} for v in names]}}
    (folder / "crd.yaml").write_text(yaml.safe_dump(crd))
    (folder / "conv.py").write_text(CONVERTER)
    (folder / "compatfuzz.toml").write_text(CONFIG)
    return folder / "compatfuzz.toml"


def per_unit(config: Path, units: int, isolate: bool) -> float:
    """Wall seconds per unit of ``units`` roundtrip units with one example each."""
    [api] = load_config(config)
    start = time.perf_counter()
    done = 0
    for event in run(api, max_examples=1, seed=1, database="none", isolate=isolate,
                     properties=["roundtrip"], plan_limit=units):
        if isinstance(event, UnitFinished):
            if event.result.status is not Status.PASSED:
                raise SystemExit(f"{event.result.unit.id}: {event.result.message}")
            done += 1
    return (time.perf_counter() - start) / done


def cold(fn: Callable[[], float]) -> float:
    """``fn`` with the parent's set-up before forking turned off."""
    saved = _workers._prewarm
    _workers._prewarm = lambda selected: None  # type: ignore[assignment]
    try:
        return fn()
    finally:
        _workers._prewarm = saved  # type: ignore[assignment]


VARIANTS = ("in-process", "isolated", "isolated, cold")


def measure(variant: str, folder: Path, units: int) -> float:
    """One variant's seconds per unit, in this (fresh) process."""
    config = folder / "compatfuzz.toml"
    os.chdir(folder)  # Hypothesis's caches (.hypothesis/) go into the scratch folder
    sys.path.append(str(folder))
    if variant == "in-process":
        return per_unit(config, units, isolate=False)
    if variant == "isolated":
        return per_unit(config, units, isolate=True)
    return cold(lambda: per_unit(config, units, isolate=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", type=int, default=15)
    parser.add_argument("--units", type=int, default=60,
                        help="roundtrip units per round (a fixed sample of the pairs)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:  # one measurement, in a fresh interpreter
        print(measure(args.variant, args.folder, args.units))
        return 0
    rounds: dict[str, list[float]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="compatfuzz-bench-") as tmp:
        write_project(Path(tmp), args.versions)
        for _ in range(args.repeat):
            for variant in VARIANTS:  # interleaved: a slower machine slows all three
                out = subprocess.run(
                    [sys.executable, __file__, "--variant", variant, "--folder", tmp,
                     "--units", str(args.units)],
                    check=True, capture_output=True, text=True).stdout
                rounds[variant].append(float(out.split()[-1]))
    floor = statistics.median(rounds["in-process"])
    figures: dict[str, Any] = {"versions": args.versions, "units": args.units,
                               "repeat": args.repeat, "load_average": os.getloadavg()[0]}
    print(f"{args.units} roundtrip units of a CRD with {args.versions} served versions, "
          f"--max-examples 1, median of {args.repeat} rounds "
          f"(load average {figures['load_average']:.1f})")
    for name, values in rounds.items():
        median = statistics.median(values)
        figures[name] = {"seconds_per_unit": median, "ratio_to_in_process": median / floor}
        print(f"  {name:15} {median:6.3f} s/unit  {median / floor:5.1f}x in-process")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
