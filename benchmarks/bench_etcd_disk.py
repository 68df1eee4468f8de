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

Every 15 s: the size of etcd's file (``member/snap/db``; bbolt grows it in steps and
never gives space back), the bytes of it in use and the keys stored (etcd's own
``/metrics``). What matters is how they go on: flat for *swept*, rising for *kept*.

Run: ``python benchmarks/bench_etcd_disk.py [--minutes 30]`` (needs the binaries:
``KUBEBUILDER_ASSETS``, e.g. from ``compatfuzz apiserver install``; prints what it
starts).
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
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


def _etcd_url(tmp: Path) -> str | None:
    """etcd's client URL, from the command line of the run's kube-apiserver."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(tmp).encode() in a for a in args):
            for a in args:
                if a.startswith(b"--etcd-servers="):
                    return a.split(b"=", 1)[1].decode()
    return None


def _in_use(tmp: Path) -> tuple[int, int] | None:
    """(bytes of etcd's file in use, keys stored) from etcd's own /metrics, with the
    client certificate only kube-apiserver holds (in the run's folder)."""
    url = _etcd_url(tmp)
    folders = list(tmp.glob("compatfuzz-apiserver-*/pki"))
    if url is None or not folders:
        return None
    pki = folders[0]
    ctx = ssl.create_default_context(cafile=str(pki / "etcd-ca.crt"))
    ctx.load_cert_chain(str(pki / "apiserver-etcd-client.crt"),
                        str(pki / "apiserver-etcd-client.key"))
    try:
        with urllib.request.urlopen(f"{url}/metrics", context=ctx, timeout=10) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("etcd_mvcc_db_total_size_in_use_in_bytes", "etcd_debugging_mvcc_keys_total"):
            values[name] = int(float(value))
    return (values.get("etcd_mvcc_db_total_size_in_use_in_bytes", 0),
            values.get("etcd_debugging_mvcc_keys_total", 0))


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
    samples: list[tuple[float, int, int, int]] = []
    while proc.poll() is None:
        time.sleep(15)
        size, used = _db_size(tmp), _in_use(tmp)
        if size is not None and used is not None:
            samples.append((round(time.monotonic() - start), size, *used))
            print(f"  {variant} {samples[-1][0]:5d}s  etcd file {size / 2**20:6.1f} MiB, "
                  f"in use {used[0] / 2**20:6.1f} MiB, {used[1]:6d} keys", file=sys.stderr)
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
        last = r["samples"][-1] if r["samples"] else (0, 0, 0, 0)
        r["last"] = {"file_mib": round(last[1] / 2**20, 1),
                     "in_use_mib": round(last[2] / 2**20, 1), "keys": last[3]}
        print(f"{r['variant']:6s} {r['examples']:7d} examples in {r['minutes']:g} min: at "
              f"the end etcd's file {r['last']['file_mib']} MiB, in use "
              f"{r['last']['in_use_mib']} MiB, {last[3]} keys (exit {r['exit']})")
    load = os.getloadavg()[0]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load_1m_at_end": load, "results": results},
                                   indent=1) + "\n")
    print(f"written to {args.out} (load {load:.1f})")


if __name__ == "__main__":
    main()
