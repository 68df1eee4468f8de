"""Issue 11, item 5: SIGKILL mid-shrink keeps the failure and says how far the run got.

A failure is on disk (unshrunk, ``"shrunk": false``) the moment it is found; the report
lists finished units, the running ones (with that file) and those that never ran; JUnit
is written as the run goes and lists every unit that has no result as skipped.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.faults._project import command, project, wait_for

# Fails for n > 5 and takes 0.3 s per failing call, so shrinking takes many seconds.
SLOW_FAILURE = """
    def convert(obj, desired):
        n = (obj.get("spec") or {}).get("n", 0)
        if n > 5:
            time.sleep(0.3)
            raise ValueError(f"n too big: {n}")
        return {**obj, "apiVersion": desired}
"""


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigkill_while_shrinking_keeps_the_failure(tmp_path: Path, workers: str) -> None:
    config = project(tmp_path, SLOW_FAILURE)
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            command(config, "--property", "roundtrip", "--property", "valid", "--workers",
                    workers, "--junit", str(junit), "--max-examples", "1000"),
            stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path)
    try:
        doc = wait_for(report, lambda d: any("counterexample_file" in r
                                             for r in d.get("running", [])))
        proc.kill()
        proc.wait(10)
    finally:
        proc.kill()
        proc.wait(10)
    assert doc["status"] == "running" and doc["pid"] == proc.pid
    running = [r for r in doc["running"] if "counterexample_file" in r]
    cx = json.loads(Path(running[0]["counterexample_file"]).read_text())
    assert cx["shrunk"] is False and cx["id"] == running[0]["id"]
    assert cx["object"]["spec"]["n"] > 5 and "n too big" in cx["error"]
    assert running[0]["status"] == "failing, shrinking"
    assert doc["not_run"], "4 units cannot all have started"
    # JUnit: every planned unit is there; those without a result are skipped
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == 4
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == 4 - len(doc["units"])
    messages = {c.find("skipped").get("message") for c in skipped}  # type: ignore[union-attr]
    assert any("still running" in m for m in messages)
    assert any("did not run" in m for m in messages)
