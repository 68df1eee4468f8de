"""Seconds per ``compatfuzz diff`` on every consecutive CRD release pair (issue 19, item 6).

Why: a pre-merge check must answer in about a second. This times ``diff`` as the CLI runs
it (load both files, then :func:`compatfuzz.compat.check` with the CLI's defaults), in
process, on every consecutive release pair of ../shared/corpus/crd-releases (MANIFEST.md
there names the tags), and records each pair's findings (rule, version, path, severity,
status, witness yes/no) so two runs can be compared verdict for verdict.

    .venv/bin/python benchmarks/bench_compat_speed.py                  # defaults, witnesses
    .venv/bin/python benchmarks/bench_compat_speed.py --no-witness     # static mode
    .venv/bin/python benchmarks/bench_compat_speed.py --out after.json --compare before.json
    .venv/bin/python benchmarks/bench_compat_speed.py --cli --out cli.json  # one process a pair
    .venv/bin/python benchmarks/bench_compat_speed.py --show cli.json     # a run's summary
    .venv/bin/python benchmarks/bench_compat_speed.py --witness-budget none --finding-budget none
                                                      # the witness search without its budget

Prints median / p90 / max wall seconds (and CPU seconds, ``time.process_time``: the
machine is shared) and the slowest 10 pairs; writes benchmarks/results/compat_speed.json
(or ``--out``). Each pair loads its files afresh, so nothing is reused across pairs
that a CLI run would not have, but the process is warm: imports, the CEL environment and
Hypothesis are set up once. ``--cli`` runs ``compatfuzz diff OLD NEW --format json`` in a
new process per pair instead, and times what a CI job waits for, start-up included (CPU
seconds of the child, ``resource.getrusage``).

``--compare`` lists a finding that became ``unwitnessed`` (its search ran out of the
budget, ``compat/_budget.py``) apart from every other difference: the budget may cut a
search short, but must change nothing else.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _repo import rel

from compatfuzz.compat import diff, load_revision

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus" / "crd-releases"


def _tag_key(tag: str) -> tuple[int, ...]:
    """v1.10.0 after v1.9.0; a ``main-<sha>`` tag after every release."""
    if tag.startswith("main"):
        return (10**6,)
    return tuple(int(x) for x in re.findall(r"\d+", tag))


def pairs() -> list[tuple[str, Path, Path]]:
    """(label, old file, new file) for each consecutive release pair of each CRD."""
    out = []
    for project in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        for crd in sorted(p for p in project.iterdir() if p.is_dir()):
            files = sorted(crd.glob("*.yaml"), key=lambda p: _tag_key(p.stem))
            for a, b in itertools.pairwise(files):
                out.append((f"{project.name}/{crd.name} {a.stem}->{b.stem}", a, b))
    return out


def _summary(f: dict[str, Any]) -> dict[str, Any]:
    return {"rule": f["rule"], "version": f["version"], "path": f["path"],
            "keyword": f.get("keyword"), "severity": f["severity"],
            "breaking": f["breaking"], "status": f["status"],
            "witness": f.get("witness") is not None}


#: ``check``'s budget options, from --witness-budget / --finding-budget (main)
LIMITS: dict[str, Any] = {}


def run_one(old: Path, new: Path, dynamic: bool) -> dict[str, Any]:
    # the fixed values of identical required fields are kept per process: an earlier
    # pair's must not make this one look faster than a CLI run of it
    from compatfuzz.compat._focus import _filler_of

    _filler_of.cache_clear()
    wall, cpu = time.perf_counter(), time.process_time()
    report = diff(load_revision(str(old)), load_revision(str(new)), dynamic=dynamic,
                  **LIMITS)
    return {"seconds": round(time.perf_counter() - wall, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),
            "exit_code": report.exit_code,
            "findings": [_summary(f.to_json()) for f in report.findings]}


def run_cli(old: Path, new: Path, dynamic: bool) -> dict[str, Any]:
    """``compatfuzz diff`` in a process of its own, as CI runs it."""
    script = Path(sys.executable).with_name("compatfuzz")
    cmd = [str(script), "diff", str(old), str(new), "--format", "json"]
    if not dynamic:
        cmd.append("--no-witness")
    for flag, key in (("--witness-budget", "witness_seconds"),
                      ("--finding-budget", "finding_seconds")):
        if key in LIMITS:
            value = LIMITS[key]
            cmd.append(f"{flag}={'none' if value is None else f'{value}s'}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[1:])} exited {done.returncode}: {done.stderr}")
    report = json.loads(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3),
            "exit_code": done.returncode,
            "findings": [_summary(f) for f in report["findings"]]}


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Every finding that differs between two runs, pair by pair; one whose search ran
    out of budget in ``after`` (and differs only by that) begins ``unwitnessed:``."""
    lines = []
    old_pairs = {p["pair"]: p for p in before["pairs"]}
    for p in after["pairs"]:
        q = old_pairs.get(p["pair"])
        if q is None:
            continue
        key = ("rule", "version", "path", "keyword")
        a = {tuple(f[k] for k in key): f for f in q["findings"]}
        b = {tuple(f[k] for k in key): f for f in p["findings"]}
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                was, now = a.get(k), b.get(k)
                cut = now is not None and now["status"] == "unwitnessed"
                lines.append(f"{'unwitnessed: ' if cut else ''}{p['pair']}: {k}: "
                             f"{was} -> {now}")
    return lines


def _stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [r["seconds"] for r in rows]
    cpus = [r["cpu_seconds"] for r in rows]
    return {
        "median": round(statistics.median(walls), 2), "p90": round(_quantile(walls, 0.9), 2),
        "max": round(max(walls), 2), "total": round(sum(walls), 1),
        "cpu_median": round(statistics.median(cpus), 2),
        "cpu_p90": round(_quantile(cpus, 0.9), 2), "cpu_max": round(max(cpus), 2),
    }


def _print(stats: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    print(f"\n{len(rows)} pairs: median {stats['median']} s, p90 {stats['p90']} s, "
          f"max {stats['max']} s (cpu: median {stats['cpu_median']} s, p90 "
          f"{stats['cpu_p90']} s, max {stats['cpu_max']} s); load average "
          f"{stats['load_average']} on {stats['cores']} cores")
    print("slowest 10:")
    for r in sorted(rows, key=lambda r: -r["seconds"])[:10]:
        print(f"  {r['seconds']:7.2f}s wall {r['cpu_seconds']:7.2f}s cpu  {r['pair']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-witness", action="store_true",
                    help="static rules only (compatfuzz diff --no-witness)")
    ap.add_argument("--only", metavar="TEXT", help="pairs whose label contains TEXT")
    ap.add_argument("--cli", action="store_true",
                    help="run compatfuzz diff in a new process per pair (start-up included)")
    ap.add_argument("--witness-budget", metavar="SECONDS",
                    help="compatfuzz diff --witness-budget: CPU seconds per run, or none "
                    "(default: diff's)")
    ap.add_argument("--finding-budget", metavar="SECONDS",
                    help="compatfuzz diff --finding-budget: CPU seconds per finding, or none")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "compat_speed.json")
    ap.add_argument("--compare", type=Path, metavar="JSON",
                    help="an earlier run's output: list every finding that differs")
    ap.add_argument("--show", type=Path, metavar="JSON",
                    help="print the summary of a recorded run (recomputed from its pairs)")
    args = ap.parse_args()
    if args.show:
        recorded = json.loads(args.show.read_text())
        _print({**recorded["stats"], **_stats(recorded["pairs"])}, recorded["pairs"])
        return 0
    if not CORPUS.is_dir():
        print(f"{rel(CORPUS)} is absent: nothing to time", file=sys.stderr)
        return 0
    for key, text in (("witness_seconds", args.witness_budget),
                      ("finding_seconds", args.finding_budget)):
        if text is not None:
            LIMITS[key] = None if text == "none" else float(text.rstrip("s"))
    rows = []
    for label, a, b in pairs():
        if args.only and args.only not in label:
            continue
        run = run_cli if args.cli else run_one
        row = {"pair": label, **run(a, b, dynamic=not args.no_witness)}
        rows.append(row)
        print(f"{row['seconds']:7.2f}s wall {row['cpu_seconds']:7.2f}s cpu  {label}  "
              f"({len(row['findings'])} findings, exit {row['exit_code']})", flush=True)
    stats = {"pairs": len(rows), "witness": not args.no_witness, "cli": args.cli,
             "limits": {k: LIMITS.get(k, "default") for k in ("witness_seconds",
                                                              "finding_seconds")},
             **_stats(rows), "load_average": [round(x, 2) for x in os.getloadavg()],
             "cores": os.cpu_count()}
    _print(stats, rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"stats": stats, "pairs": rows}, indent=1) + "\n")
    if args.compare:
        diffs = compare(json.loads(args.compare.read_text()), {"pairs": rows})
        cut = sum(1 for line in diffs if line.startswith("unwitnessed: "))
        print(f"\n{len(diffs)} findings differ from {rel(args.compare)} ({cut} only "
              "unwitnessed: their search ran out of budget)")
        for line in diffs:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
