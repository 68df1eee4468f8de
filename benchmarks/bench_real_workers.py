"""Round trips per second through a real kube-apiserver with ``--workers 1`` and ``2``.

    .venv/bin/python benchmarks/bench_real_workers.py [--examples 40] [--rounds 2]
        [--workers 1,2] [--json benchmarks/results/real_workers.json]

Each run is ``compatfuzz fuzz --apiserver real --property roundtrip --workers N`` in a
fresh process on the bundled Gadget test API (``tests/roundtrip/gadgets.py``: three
versions, six roundtrip units, its sound converter), the same seed and ``--max-examples``
for every run, so each worker count checks the same examples. With ``--workers 2`` two
units run at once and each conversion goes, through the run's router, to the worker
whose example it is (``compatfuzz.apiserver._real._router``).

Rate = examples (one round trip each: create, get, update, get through kube-apiserver,
etcd and the conversion webhook) / the run's own seconds (the CLI's summary line, from
the first unit to the last: the control plane's start is shown apart). Rounds alternate
the worker counts (the machine is shared: a slow moment hits both); the table shows
each count's median.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CRD = REPO / "tests" / "roundtrip" / "data" / "gadgets.yaml"
_CLI = "import sys; from compatfuzz.cli import main; sys.exit(main(sys.argv[1:]))"
SUMMARY = re.compile(r"(\d+) examples in ([0-9.]+)s")


def _run(config: Path, workers: int, examples: int, seed: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    with tempfile.TemporaryDirectory() as out:
        report = Path(out) / "report.json"
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", _CLI, "fuzz", "--config", str(config),
             "--apiserver", "real", "--property", "roundtrip", "--workers", str(workers),
             "--max-examples", str(examples), "--seed", str(seed), "--database", "none",
             "--report", str(report)], capture_output=True, text=True, env=env, check=False)
        wall = time.monotonic() - began
        found = SUMMARY.search(done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"workers={workers}: exit {done.returncode}\n{done.stderr[-3000:]}")
        units = json.loads(report.read_text())["units"]
    count, seconds = int(found.group(1)), float(found.group(2))
    return {"workers": workers, "examples": count, "units": len(units),
            "run_seconds": seconds, "wall_seconds": round(wall, 2),
            "start_seconds": round(wall - seconds, 2),
            "round_trips_per_second": round(count / seconds, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=40, help="--max-examples per unit")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=HERE / "results" / "real_workers.json")
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "compatfuzz.toml"
        (Path(folder) / "bench_gadgets.py").write_text(
            "from tests.roundtrip.gadgets import from_hub, to_hub  # noqa: F401\n")
        config.write_text(f'[[api]]\nname = "gadgets"\ncrd = {json.dumps(str(CRD))}\n'
                          'to_hub = "bench_gadgets:to_hub"\n'
                          'from_hub = "bench_gadgets:from_hub"\n')
        runs: list[dict[str, Any]] = []
        for r in range(args.rounds):
            for workers in (counts if r % 2 == 0 else counts[::-1]):
                run = _run(config, workers, args.examples, args.seed)
                run["round"] = r
                runs.append(run)
                print(f"round {r}: workers={workers}: {run['examples']} round trips in "
                      f"{run['run_seconds']:.1f}s ({run['round_trips_per_second']:.1f}/s; "
                      f"control plane start and stop {run['start_seconds']:.1f}s)",
                      file=sys.stderr)
    table = []
    for workers in counts:
        mine = [r for r in runs if r["workers"] == workers]
        table.append({"workers": workers, "examples": mine[0]["examples"],
                      "median_run_seconds": statistics.median(r["run_seconds"] for r in mine),
                      "median_round_trips_per_second": statistics.median(
                          r["round_trips_per_second"] for r in mine)})
    base = table[0]["median_round_trips_per_second"]
    print(f"{'workers':>7}  {'round trips':>11}  {'seconds':>7}  {'per second':>10}  "
          f"{'speed-up':>8}")
    for row in table:
        row["speed_up"] = round(row["median_round_trips_per_second"] / base, 2)
        print(f"{row['workers']:>7}  {row['examples']:>11}  {row['median_run_seconds']:>7.1f}"
              f"  {row['median_round_trips_per_second']:>10.1f}  {row['speed_up']:>7.2f}x")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "api": "gadgets (tests/roundtrip/gadgets.py), property roundtrip, 6 units",
        "max_examples": args.examples, "seed": args.seed, "rounds": args.rounds,
        "cpus": os.cpu_count(), "table": table, "runs": runs}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
