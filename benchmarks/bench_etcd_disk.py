"""etcd's disk over a long ``--apiserver real`` run: bounded, or growing with the night.

Every example creates objects on the real server (one per ``roundtrip``/``valid``
example, two per ``path_independent``) and updates them. Kept, they fill etcd's file and
kube-apiserver's watch cache for as long as the run goes; etcd's own history of each
update stays until kube-apiserver compacts it (every 5 minutes by default). compatfuzz
deletes a kind's objects every ``SWEEP_EVERY`` creates (``RealKind.sweep``) and starts
kube-apiserver with ``--etcd-compaction-interval=1m``. Side by side, one after the other
on the same machine and the same example (``examples/frobber``, ``--duration``):

* **swept**: as compatfuzz runs;
* **kept**: no sweep and the 5-minute default compaction (how it was).

Every 15 s: the size of etcd's file (``member/snap/db``) and the objects stored. The
figure that matters is the last size against the size after the first minutes: flat for
*swept*, rising for *kept*.

Run: ``python benchmarks/bench_etcd_disk.py [--minutes 30]`` (needs the binaries:
``KUBEBUILDER_ASSETS`` or ``testenv/build.py``; prints what it starts).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FROBBER = REPO / "examples" / "frobber" / "compatfuzz.toml"

#: the run, in a fresh interpreter; ``kept`` turns the sweep off and compaction back to 5m
RUN = """
import sys
from compatfuzz.apiserver._real import _backend, _process
if sys.argv[1] == "kept":
    _backend.SWEEP_EVERY = 10**12
    _process.COMPACTION_INTERVAL = "5m"
from compatfuzz.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _db_size(tmp: Path) -> int | None:
    found = list(tmp.glob("compatfuzz-apiserver-*/etcd/member/snap/db"))
    return found[0].stat().st_size if found else None


def run(variant: str, minutes: float, tmp: Path) -> dict[str, Any]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    argv = [sys.executable, "-c", RUN, variant, "fuzz", "--config", str(FROBBER),
            "--apiserver", "real", "--duration", f"{minutes * 60:.0f}s", "--database",
            "none", "--profile", "nightly", "--report", str(tmp / "report.json"), "-q"]
    print(f"{variant}: compatfuzz fuzz --apiserver real for {minutes:g} min "
          "(starts kube-apiserver and etcd)", file=sys.stderr)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    samples: list[tuple[float, int]] = []
    while proc.poll() is None:
        time.sleep(15)
        size = _db_size(tmp)
        if size is not None:
            samples.append((round(time.monotonic() - start), size))
            print(f"  {variant} {samples[-1][0]:5d}s  etcd db {size / 2**20:7.1f} MiB",
                  file=sys.stderr)
    err = proc.stderr.read() if proc.stderr else ""
    report = json.loads((tmp / "report.json").read_text())
    examples = sum(u.get("examples", 0) for u in report.get("units", []))
    return {"variant": variant, "minutes": minutes, "exit": proc.returncode,
            "examples": examples, "samples": samples, "stderr_tail": err[-400:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--out", type=Path,
                        default=REPO / "benchmarks" / "results" / "etcd_disk.json")
    args = parser.parse_args()
    results = []
    for variant in ("swept", "kept"):
        with tempfile.TemporaryDirectory(prefix="bench-etcd-") as tmp:
            results.append(run(variant, args.minutes, Path(tmp)))
    for r in results:
        sizes = [s for _, s in r["samples"]]
        early = [s for t, s in r["samples"] if t <= 180] or sizes[:1]
        r["early_mib"] = round(max(early) / 2**20, 1) if early else None
        r["peak_mib"] = round(max(sizes) / 2**20, 1) if sizes else None
        r["last_mib"] = round(sizes[-1] / 2**20, 1) if sizes else None
        print(f"{r['variant']:6s} {r['examples']:7d} examples in {r['minutes']:g} min: etcd "
              f"db {r['early_mib']} MiB at 3 min, {r['peak_mib']} MiB peak, "
              f"{r['last_mib']} MiB at the end (exit {r['exit']})")
    load = os.getloadavg()[0]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load_1m_at_end": load, "results": results},
                                   indent=1) + "\n")
    print(f"written to {args.out} (load {load:.1f})")


if __name__ == "__main__":
    main()
