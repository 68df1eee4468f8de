"""Sharded nightly jobs: distinct examples per minute and time to a seeded bug, 1 vs N shards.

Issue 21's must-show. One script runs, side by side, the same job as 1, 2 and 4
``compatfuzz fuzz --shard K/N`` processes on this machine (N local processes stand for N CI
matrix jobs or Indexed Job pods) on a copy of ``examples/shipments``:

* **exploration**: every shard gets the same ``--duration``; a converter wrapper appends the
  hash of every object it is handed to a per-process file, so the job's *distinct* examples
  are counted across shards (two shards drawing the same object count once). Reported per
  wall-clock minute and per CPU-second of the shards (``RUSAGE_CHILDREN``): on 2 cores, 4
  shards cannot buy more wall-clock throughput, but examples per CPU-second is what each
  extra machine adds;
* **time to a seeded bug**: ``bug_weight_rounded_up.toml`` (the converter rounds a
  fractional weight up), each job with ``--database none`` and a night label per repetition
  (distinct seeds, :func:`compatfuzz.roundtrip._engine._shard.shard_seed`), timed until the first
  counterexample file of any shard appears. A shard's ``--duration`` is split over its own
  units only, so with N shards the bug's unit gets N times the time, but it starts no
  sooner unless it moved up its shard's order: this bug is found within its unit's first
  examples, so the figure is mostly when its unit starts;
* **time to a rare bug**: the correct converters, except that ``to_hub`` raises on the
  objects whose hash is 0 modulo ``--needle`` (a crash on 1 input in K, hit by any unit
  that converts): the time to find it is the time to explore about K distinct objects,
  which N shards do together.

Run ``python benchmarks/bench_shards.py --help``; benchmarks/README.md has the figures.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLE = ROOT / "examples" / "shipments"

COUNTING = '''\
"""Wraps the example's converters: logs a hash of every object handed to them."""
import hashlib, json, os

import {module} as _real


def _log(obj):
    digest = hashlib.sha1(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()
    with open(os.path.join({hashes!r}, f"{{os.getpid()}}.txt"), "a") as f:
        f.write(digest + "\\n")
    return digest


NEEDLE = {needle}


def to_hub(obj, *args, **kwargs):
    digest = _log(obj)
    if NEEDLE and int(digest, 16) % NEEDLE == 0:
        raise ValueError("the 1-in-{needle} input")  # a converter that crashes on rare input
    return _real.{to_hub}(obj, *args, **kwargs)


def from_hub(obj, *args, **kwargs):
    return _real.{from_hub}(obj, *args, **kwargs)
'''


def _project(work: Path, bug: bool, needle: int = 0) -> Path:
    """A copy of the example whose converters log what they see (and, with ``needle``,
    raise on the objects whose hash is 0 modulo ``needle``); returns its config."""
    shutil.copytree(EXAMPLE, work, dirs_exist_ok=True)
    hashes = work / "hashes"
    hashes.mkdir()
    if bug:
        module, to_hub, from_hub = "bugs", "weight_rounded_up.to_hub", "weight_rounded_up.from_hub"
    else:
        module, to_hub, from_hub = "conversion", "to_hub", "from_hub"
    (work / "counting.py").write_text(COUNTING.format(
        module=module, hashes=str(hashes), to_hub=to_hub, from_hub=from_hub, needle=needle))
    config = work / "bench.toml"
    config.write_text('[[api]]\nname = "shipments"\ncrd = "crd.yaml"\nhub = "v1"\n'
                      'to_hub = "counting:to_hub"\nfrom_hub = "counting:from_hub"\n')
    return config


def _job(config: Path, shards: int, duration: float, night: str, *, stop_on_bug: bool,
         database: str) -> dict[str, float]:
    """Run one job of ``shards`` processes; wall time, CPU time, time to first failure."""
    out = config.parent / f"out-{night}-{shards}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    procs = []
    for k in range(1, shards + 1):
        cmd = [str(Path(sys.executable).parent / "compatfuzz"), "fuzz", "--config", str(config),
               "--shard", f"{k}/{shards}", "--night", night, "--duration", f"{duration}s",
               "--database", database, "--report", str(out / f"shard-{k}.json"),
               "--counterexamples", str(out / "cx"), "-q"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
    found = float("nan")
    while any(p.poll() is None for p in procs):
        if (out / "cx").is_dir() and any((out / "cx").iterdir()) and math.isnan(found):
            found = time.monotonic() - start
            if stop_on_bug:
                for p in procs:
                    p.kill()
        time.sleep(0.05)
    wall = time.monotonic() - start
    if math.isnan(found) and (out / "cx").is_dir() and any((out / "cx").iterdir()):
        found = wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "found": found}


def _distinct(hashes: Path) -> tuple[int, int]:
    seen: set[str] = set()
    total = 0
    for f in hashes.iterdir():
        lines = f.read_text().split()
        total += len(lines)
        seen.update(lines)
        f.unlink()
    return len(seen), total


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--shards", default="1,2,4", help="job sizes (default: 1,2,4)")
    parser.add_argument("--duration", type=float, default=30.0,
                        help="each shard's --duration for exploration, seconds (default 30)")
    parser.add_argument("--bug-duration", type=float, default=60.0,
                        help="each shard's --duration when hunting the bug (default 60)")
    parser.add_argument("--nights", type=int, default=3,
                        help="repetitions of the bug hunt, each a new night (default 3)")
    parser.add_argument("--needle", type=int, default=20000,
                        help="the rare bug: the converter raises on 1 object in NEEDLE "
                             "(default 20000)")
    parser.add_argument("--needle-nights", type=int, default=7,
                        help="repetitions of the rare-bug hunt (default 7)")
    parser.add_argument("--needle-duration", type=float, default=180.0,
                        help="each shard's --duration when hunting the rare bug (default 180)")
    parser.add_argument("--parts", default="explore,bug,needle",
                        help="which tables (default explore,bug,needle)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.shards.split(",")]
    parts = set(args.parts.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        clean = _project(Path(tmp) / "clean", bug=False)
        buggy = _project(Path(tmp) / "buggy", bug=True)
        rare = _project(Path(tmp) / "rare", bug=False, needle=args.needle)
        if "explore" in parts:
            _explore(clean, sizes, args.duration)
        if "bug" in parts:
            _hunt(buggy, sizes, args.bug_duration, args.nights,
                  "the seeded bug weight_rounded_up")
        if "needle" in parts:
            _hunt(rare, sizes, args.needle_duration, args.needle_nights,
                  f"a rare bug (the converter raises on 1 object in {args.needle})")


def _explore(clean: Path, sizes: list[int], duration: float) -> None:
    """Distinct examples the job explores, per wall-clock minute and per CPU-second."""
    print(f"# exploration: each shard --duration {duration:g}s on examples/shipments "
          f"(correct converters), {os.cpu_count()} CPUs")
    print("| shards | wall s | CPU s | examples | distinct | distinct/min wall | "
          "distinct/CPU-s |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        r = _job(clean, n, duration, "explore", stop_on_bug=False, database="none")
        distinct, total = _distinct(clean.parent / "hashes")
        print(f"| {n} | {r['wall']:.1f} | {r['cpu']:.1f} | {total} | {distinct} | "
              f"{distinct / r['wall'] * 60:.0f} | {distinct / r['cpu']:.1f} |", flush=True)


def _hunt(config: Path, sizes: list[int], duration: float, nights: int, what: str) -> None:
    """Seconds until any shard of the job writes a counterexample, per night (seed)."""
    print(f"\n# time to {what}: each shard --duration {duration:g}s, {nights} nights, "
          "--database none")
    print("| shards | seconds to first counterexample, per night | median | mean |")
    print("|---|---|---|---|")
    for n in sizes:
        times = []
        for night in range(nights):
            r = _job(config, n, duration, f"night-{night}", stop_on_bug=True,
                     database="none")
            times.append(r["found"])
            _distinct(config.parent / "hashes")
        shown = ", ".join("not found" if math.isnan(t) else f"{t:.1f}" for t in times)
        finite = [float("inf") if math.isnan(t) else t for t in times]
        print(f"| {n} | {shown} | {statistics.median(finite):.1f} | "
              f"{statistics.fmean(finite):.1f} |", flush=True)


if __name__ == "__main__":
    main()
