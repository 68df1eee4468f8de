"""A real operator's Go API module, driven as its users would drive compatfuzz: Kueue.

    .venv/bin/python benchmarks/real_go_operator.py [--version v0.17.0] [--seed 1]
        [--json benchmarks/results/real_go_operator_kueue.json]

``sigs.k8s.io/kueue`` (nobody here wrote it) converts ClusterQueue, LocalQueue, Cohort
and Workload between ``kueue.x-k8s.io/v1beta1`` (spokes, ``ConvertTo``/``ConvertFrom``
calling conversion-gen functions) and ``v1beta2`` (the ``conversion.Hub``, storage).
The script fetches the module from the Go module proxy (``go mod download``, into Go's
own module cache: the user's checkout stands for it), writes the ``compatfuzz.toml`` a
user would (one ``[[api]]`` per kind: its CRD from ``config/components/crd/bases``,
``go = { module, packages }``, ``empty_struct_is_absent = true``) into a temporary
folder, and runs ``compatfuzz fuzz --seed S`` on it. It prints, per unit, its status and
the first line of each minimal counterexample's change, and saves them (no machine paths).
The first run builds the Go program (a minute or two).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODULE = "sigs.k8s.io/kueue"
KINDS = {"clusterqueues": "ClusterQueue", "localqueues": "LocalQueue",
         "cohorts": "Cohort", "workloads": "Workload"}
_CLI = "import sys; from compatfuzz.cli import main; sys.exit(main(sys.argv[1:]))"


def fetch(version: str) -> Path:
    done = subprocess.run(["go", "mod", "download", "-json", f"{MODULE}@{version}"],
                          capture_output=True, text=True, check=True)
    return Path(json.loads(done.stdout)["Dir"])


def config(root: Path) -> str:
    out = []
    for name in KINDS:
        crd = root / "config" / "components" / "crd" / "bases" / f"kueue.x-k8s.io_{name}.yaml"
        out += ["[[api]]", f'name = "{name}"', f"crd = {json.dumps(str(crd))}",
                f"go = {{ module = {json.dumps(str(root))}, packages = "
                '["./apis/kueue/v1beta1", "./apis/kueue/v1beta2"] }',
                "[api.semantic]", "empty_struct_is_absent = true", ""]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="v0.17.0")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    root = fetch(args.version)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "compatfuzz.toml"
        path.write_text(config(root))
        report = Path(tmp) / "report.json"
        done = subprocess.run(
            [sys.executable, "-c", _CLI, "fuzz", "--config", str(path), "--seed",
             str(args.seed), "--database", "none", "--report", str(report), "-q"],
            capture_output=True, text=True, check=False, cwd=tmp)
        units = json.loads(report.read_text())["units"]
    rows = []
    for unit in units:
        ce = unit.get("counterexample") or {}
        text = str(ce.get("error") or unit.get("message") or "")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        rows.append({"unit": unit["id"], "status": unit["status"],
                     "says": lines[1:3] if len(lines) > 1 else lines})
        print(f"{unit['status']:<7} {unit['id']}")
        for line in rows[-1]["says"]:
            print(f"          {line[:160]}")
    print(f"exit {done.returncode}: {sum(r['status'] == 'passed' for r in rows)} of "
          f"{len(rows)} units passed ({MODULE}@{args.version}, seed {args.seed})")
    if args.json:
        args.json.write_text(json.dumps({"module": f"{MODULE}@{args.version}",
                                         "seed": args.seed, "exit": done.returncode,
                                         "units": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
