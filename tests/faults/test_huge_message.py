"""A converter raising a 50 MB message: the message is cut in the worker, SIGTERM is honoured.

The message used to be copied whole into the error, its traceback, every failure update
piped from the worker and every rewrite of the counterexample file, so each failing example
cost seconds and the run answered SIGTERM late or not at all.  It is now cut where it is
captured (``_text.CAPTURE_TEXT_LIMIT``): the unit fails with the cut message, which says how
much was dropped, and the run stops when asked.  Subprocess timeouts only bound the test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.faults._project import command, project, sigterm_when

HUGE = 50_000_000
#: ``_text.CAPTURE_TEXT_LIMIT``, what is kept of one message
CAPTURE_TEXT_LIMIT = 1_000_000
# fails for n > 5 (so there is something to shrink, and SIGTERM lands mid-run) with a
# message of 50 MB
HUGE_FAILURE = f"""
    def convert(obj, desired):
        n = (obj.get("spec") or {{}}).get("n", 0)
        if n > 5:
            time.sleep(0.2)
            raise ValueError("x" * {HUGE})
        return {{**obj, "apiVersion": desired}}
"""


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.extended)])
def test_a_50_mb_message_is_cut_in_the_worker_and_sigterm_is_honoured(
        tmp_path: Path, workers: str) -> None:
    config = project(tmp_path, HUGE_FAILURE)
    report = tmp_path / "report.json"
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            command(config, "--property", "roundtrip", "--workers", workers,
                    "--max-examples", "1000"),
            stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path)
    # the first failure is on disk the moment it is found: the unit is shrinking
    found = tmp_path / "compatfuzz-counterexamples"
    sigterm_when(proc, lambda: found.is_dir() and any(found.iterdir()), within=120)
    stderr = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert proc.returncode == 1, stderr[-3000:]
    doc = json.loads(report.read_text())
    assert doc["status"] != "running", doc["status"]
    failed = [u for u in doc["units"] if u["status"] == "failed"]
    assert failed, doc["units"]  # the unit whose failure was on disk, at least
    # another worker's unit that had found nothing yet is interrupted, not left running
    assert all(u["status"] in ("failed", "interrupted") for u in doc["units"]), doc["units"]
    for unit in failed:
        cx = json.loads(Path(unit["counterexample_file"]).read_text())
        # cut in the worker: the file holds what was captured, and says what was dropped
        assert cx["error"].startswith("t: convert() raised ValueError: xxx"), cx["error"][:200]
        assert len(cx["error"]) < CAPTURE_TEXT_LIMIT + 10_000, len(cx["error"])
        assert "49.0 MB more, cut where it was captured" in cx["error"]
        assert len(cx["traceback"]) < CAPTURE_TEXT_LIMIT + 10_000, len(cx["traceback"])
        assert 'raise ValueError("x" *' in cx["traceback"]
        assert "ValueError: xxx" in cx["traceback"]
    # the 50 MB never reached the terminal either
    assert len(stderr) < 200_000, len(stderr)
