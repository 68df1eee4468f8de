"""Issue 22, item 10: ``compatfuzz sample -n N`` runs in memory that does not grow with N.

One Hypothesis run keeps a record of every example it generated; ``sample -n 100000`` on
a Deployment grew by about 150 KB a sample (15 GB).  Samples now come from runs of
``sample.BATCH`` examples.  Measured as the child's peak RSS (``os.wait4``): on the old
code 2,000 samples of this schema took about 50 MB more than 250.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compatfuzz._commands.sample import BATCH, batch_seed

pytest.importorskip("resource")  # POSIX: ru_maxrss

#: 50 integers a sample: many choices (what Hypothesis keeps) for little generation time
SCHEMA = {"type": "array", "minItems": 50, "maxItems": 50, "items": {"type": "integer"}}


def _peak_mb(tmp: Path, n: int) -> tuple[float, list[str]]:
    """The peak RSS (MB) of ``compatfuzz sample -n n`` and its lines."""
    out = tmp / f"out{n}.jsonl"
    with out.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "compatfuzz.cli", "sample",
                                 str(tmp / "s.json"), "-n", str(n), "--seed", "7"],
                                stdout=fh, stderr=subprocess.DEVNULL, cwd=tmp)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            proc.kill()
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    return usage.ru_maxrss / 1024, out.read_text().splitlines()


@pytest.mark.extended  # ~30 s of sampling by design; CI runs it
def test_memory_does_not_grow_with_the_number_of_samples(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    few, small = _peak_mb(tmp_path, 250)
    many, lines = _peak_mb(tmp_path, 2000)
    assert len(small) == 250 and len(lines) == 2000
    assert all(len(json.loads(line)) == 50 for line in lines)
    assert many - few < 20, f"250 samples: {few:.0f} MB, 2,000: {many:.0f} MB"
    # -n up to one batch prints what it always printed: the first batch keeps --seed
    assert lines[:250] == small
    # later batches are not repeats of the first (a few simple arrays recur: each batch
    # starts from the simplest example, as every Hypothesis run does)
    assert len(set(lines)) > 1800


def test_batch_seeds_are_distinct_and_fixed() -> None:
    seeds = [batch_seed(7, i) for i in range(1000)]
    assert seeds[0] == 7 and len(set(seeds)) == 1000
    assert seeds == [batch_seed(7, i) for i in range(1000)]
    assert BATCH <= 1000
