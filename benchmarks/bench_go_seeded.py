"""The Go example's seeded bugs (examples/go-operator, ``SHIPYARD_BUG=<name>``): on how
many of 20 seeds each is caught within the default 100 examples.

    .venv/bin/python benchmarks/bench_go_seeded.py [--seeds 20]
        [--json benchmarks/results/go_seeded.json]

For every bug and seed ``1..--seeds``, the unit that shows the bug first
(``tests/golang/test_example.py``, ``EXPECTED``) runs as ``compatfuzz fuzz --seed S``
runs it (the default profile: 100 examples, then shrinking), through the API-server
model, the Go process started with the bug switched on. Caught = the unit failed. The
sound conversion (no bug) runs every unit on the same seeds and must pass each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from compatfuzz.roundtrip import UnitFinished, load_config, run

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONFIG = REPO / "examples" / "go-operator" / "compatfuzz.toml"
sys.path.insert(0, str(REPO))
from tests.golang.test_example import EXPECTED  # noqa: E402


def _statuses(only: list[str] | None, seed: int) -> list[str]:
    apis = load_config(CONFIG)  # a new Go process: it reads SHIPYARD_BUG when it starts
    try:
        return [str(e.result.status) for e in run(apis, seed=seed, database="none",
                                                   only=only)
                if isinstance(e, UnitFinished)]
    finally:
        apis[0].converter._process.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--sound-seeds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seeds = range(1, args.seeds + 1)
    out: dict[str, dict[str, int]] = {}
    for bug, (unit, _) in sorted(EXPECTED.items()):
        os.environ["SHIPYARD_BUG"] = bug
        caught = sum(_statuses([f"vessels::{unit}"], s) == ["failed"] for s in seeds)
        out[bug] = {"caught": caught, "seeds": len(seeds)}
        print(f"{bug:<26} {unit:<26} caught on {caught:2d} of {len(seeds)} seeds", flush=True)
    os.environ.pop("SHIPYARD_BUG", None)
    sound = [_statuses(None, s) for s in range(1, args.sound_seeds + 1)]
    passed = all(st == "passed" for statuses in sound for st in statuses)
    print(f"sound conversion: {'every unit passed' if passed else 'FAILED'} on seeds "
          f"1..{args.sound_seeds} ({sum(map(len, sound))} units)")
    if args.json:
        args.json.write_text(json.dumps({"bugs": out, "sound_passed": passed,
                                         "sound_units": sum(map(len, sound))},
                                        indent=2) + "\n")


if __name__ == "__main__":
    main()
