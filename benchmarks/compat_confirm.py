"""Every witness of every corpus release pair, tried on one real kube-apiserver (issue 19, item 5).

Why: a witness is compatfuzz's claim, judged by its own model of the API server; this is
the proof no peer gives, on real data. For each consecutive release pair of
../shared/corpus/crd-releases (``bench_compat_speed.pairs()``), ``compatfuzz diff`` with
the CLI's defaults, then :func:`compatfuzz.compat._confirm.confirm` on one control plane
shared by all pairs (each finding gets a CRD group of its own, so none sees another's
objects), as ``diff --apiserver real`` does per run.

    export KUBEBUILDER_ASSETS="$(compatfuzz apiserver install)"
    .venv/bin/python benchmarks/compat_confirm.py            # ~5 min on 2 cores
    .venv/bin/python benchmarks/compat_confirm.py --only keda

Writes benchmarks/results/compat_confirm.json (every finding tried: rule, path, verdict,
each step's answer) and prints a table per pair and the totals per verdict; every
``not-confirmed`` finding is listed with the server's message, since it means
compatfuzz's model and the server disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _repo import rel
from bench_compat_speed import CORPUS, pairs

from compatfuzz.compat import _confirm, diff, load_revision

HERE = Path(__file__).resolve().parent
VERDICTS = ("confirmed", "not-confirmed", "inconclusive", "not-run")


def run_pair(client: Any, version: str, old: Path, new: Path) -> dict[str, Any]:
    """One pair: the findings, then each witness on the server."""
    o, n = load_revision(str(old)), load_revision(str(new))
    began = time.perf_counter()
    report = diff(o, n)
    checked = time.perf_counter() - began
    _confirm.check_installable(client, o, n)
    began = time.perf_counter()
    findings = _confirm.confirm(o, n, report.findings, client, seed=0, version=version)
    tried = [f for f in findings if f.server is not None]
    return {
        "old": rel(old), "new": rel(new), "exit_code": report.exit_code,
        "breaking": sum(1 for f in findings if f.breaking),
        "diff_seconds": round(checked, 2),
        "server_seconds": round(time.perf_counter() - began, 2),
        "verdicts": dict(Counter(f.server.verdict for f in tried if f.server)),
        "tried": [{"rule": f.rule, "version": f.version, "path": f.path,
                   "impact": str(f.impact) if f.impact is not None else None,
                   **(f.server.to_json() if f.server else {})} for f in tried],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", metavar="TEXT", help="pairs whose label contains TEXT")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "compat_confirm.json")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"{rel(CORPUS)} is absent: nothing to try", file=sys.stderr)
        return 0
    rows: dict[str, Any] = {}
    began = time.perf_counter()
    with _confirm.control_plane() as client:
        version = _confirm.server_version(client)
        print(f"kube-apiserver {version}; {'pair':<76} tried  " + "  ".join(
            v[:9] for v in VERDICTS))
        for label, a, b in pairs():
            if args.only and args.only not in label:
                continue
            row = rows[label] = run_pair(client, version, a, b)
            counts = [row["verdicts"].get(v, 0) for v in VERDICTS]
            print(f"{label:<94} {sum(counts):>5}  " + "  ".join(
                f"{c:>9}" for c in counts), flush=True)
    total = Counter[str]()
    for row in rows.values():
        total.update(row["verdicts"])
    seconds = time.perf_counter() - began
    print(f"\n{len(rows)} pairs, {sum(total.values())} findings tried on the server in "
          f"{seconds:.0f} s: " + ", ".join(f"{total.get(v, 0)} {v}" for v in VERDICTS))
    for label, row in rows.items():
        for t in row["tried"]:
            if t["verdict"] == "not-confirmed":
                said = "; ".join(f"{a['step']}: {'accepted' if a['accepted'] else 'refused'}"
                                 for a in t.get("answers", []))
                print(f"  NOT CONFIRMED {label}: {t['rule']} {t['version']}:{t['path']}: "
                      f"{t.get('note', '')} ({said})")
    args.out.write_text(json.dumps({
        "server": version, "seconds": round(seconds, 1),
        "totals": {v: total.get(v, 0) for v in VERDICTS}, "pairs": rows,
    }, indent=1) + "\n")
    print(f"wrote {rel(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
