"""Workers inherit the run's one-off set-up instead of each paying it again.

``compatfuzz fuzz`` forks a worker per unit. Importing jsonschema and the semantic
comparators, loading their plugins and Hypothesis's own first-use set-up cost a cold
worker about 1 s, so a CRD with 15 versions (930 units) took 20 minutes with one example
each. The parent now does that set-up once before it forks (``_workers._prewarm``).
How fast that is is measured in ``benchmarks/bench_unit_overhead.py``; here, that a
converter (which runs in the worker) finds it done.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

CONVERTER = '''\
import json
import os
import sys

from compatfuzz.strategies import _warm

def _note():
    with open(os.environ["PREWARM_LOG"], "a") as out:
        out.write(json.dumps({
            "pid": os.getpid(),
            "semantic": "compatfuzz.semantic._engine" in sys.modules,
            "jsonschema": "jsonschema.validators" in sys.modules,
            "hypothesis": bool(_warm._WARM),
        }) + "\\n")

def to_hub(obj):
    _note()
    return {**obj, "apiVersion": "ex.com/hub"}

def from_hub(obj, version):
    return {**obj, "apiVersion": "ex.com/" + version}
'''


def _project(folder: Path, versions: int) -> Path:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0}}}}}
    names = [f"v{i}" for i in range(1, versions + 1)]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.ex.com"},
           "spec": {"group": "ex.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": v, "served": True, "storage": v == names[-1],
                                  "schema": {"openAPIV3Schema": schema}} for v in names]}}
    (folder / "crd.yaml").write_text(yaml.safe_dump(crd))
    (folder / "conv.py").write_text(CONVERTER)
    config = folder / "compatfuzz.toml"
    config.write_text('[[api]]\nname = "widget"\ncrd = "crd.yaml"\nhub = "hub"\n'
                      'to_hub = "conv:to_hub"\nfrom_hub = "conv:from_hub"\n')
    return config


def test_workers_start_with_the_one_off_set_up_done(tmp_path: Path) -> None:
    config = _project(tmp_path, 3)
    log = tmp_path / "prewarm.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config),
         "--max-examples", "1", "--seed", "1", "--property", "roundtrip"],
        check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={**os.environ, "PREWARM_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    notes = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({n["pid"] for n in notes}) == 6  # 3 versions: 6 pairs, a worker each
    # the first converter call of every worker, before it compared anything
    first = {n["pid"]: n for n in reversed(notes)}
    assert all(n["semantic"] and n["jsonschema"] and n["hypothesis"]
               for n in first.values()), notes

