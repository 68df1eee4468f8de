"""A pydantic ``field_validator`` that never returns: drawing runs under the example deadline.

The pydantic API keeps what ``model_validate_json`` accepts, so the user's validators run
while an example is drawn.  The first example's draw was outside the per-example deadline
(armed only once an example was being checked) and outside the worker parent's watch, so
``fuzz`` hung, a SIGTERM only said "finishing the running examples" and the report stayed
``running``.  Now the unit ends at the deadline as an error naming the validator, and a
SIGTERM sent meanwhile ends the run with the report written.  Subprocess timeouts only
bound the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults._project import sigterm_when

MODELS = """
import time
from pydantic import BaseModel, field_validator


class V1(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def never(cls, v):
        while True:
            time.sleep(0.05)


class V2(BaseModel):
    n: int


def convert(doc, target):
    return doc
"""


def _project(tmp: Path) -> list[str]:
    (tmp / "models.py").write_text(MODELS)
    (tmp / "compatfuzz.toml").write_text(
        '[[api]]\nname = "t"\npydantic = { v1 = "models:V1", v2 = "models:V2" }\n'
        'convert = "models:convert"\n')
    return [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
            str(tmp / "compatfuzz.toml"), "--database", "none", "--report",
            str(tmp / "report.json"), "--property", "encodings", "--example-deadline", "3"]


@pytest.mark.parametrize("sigterm", [False, True])
def test_a_validator_that_never_returns_fails_at_the_deadline(
        tmp_path: Path, sigterm: bool) -> None:
    report = tmp_path / "report.json"
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(_project(tmp_path), stdout=subprocess.DEVNULL, stderr=err,
                                cwd=tmp_path)
    if sigterm:
        sigterm_when(proc, report.is_file, within=60)
    else:
        try:
            proc.wait(120)  # a safety net: it used to need SIGKILL
        finally:
            proc.kill()
            proc.wait(10)
    stderr = (tmp_path / "stderr.txt").read_text(errors="replace")
    doc = json.loads(report.read_text())
    assert doc["status"] != "running", stderr[-3000:]
    units = {u["id"]: u for u in doc["units"]}
    stuck = units.get("t::encodings[v1]")
    if sigterm and stuck is None:  # stopped before the unit ended: said so
        assert doc["status"] == "interrupted", doc
        return
    assert stuck is not None, doc
    assert stuck["status"] == "error", stuck
    assert "generating one example took longer than the 3s" in stuck["message"]
    assert "stuck in models.py" in stuck["message"] and "never()" in stuck["message"]
    if not sigterm:
        assert proc.returncode == 2, stderr[-3000:]
        assert units["t::encodings[v2]"]["status"] == "passed"


@pytest.mark.extended  # ~30 s; the fuzz test beside it checks the same deadline; CI runs it
def test_under_pytest_the_first_draw_is_under_the_deadline_too(tmp_path: Path) -> None:
    """The pytest plugin armed the deadline only once an example was being checked: the
    first draw, which runs the validator, hung ``pytest`` as it hung ``fuzz``."""
    _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "compatfuzz.toml", "-p", "no:cacheprovider",
         "-q", "-k", "encodings", "--compatfuzz-example-deadline", "3",
         "--compatfuzz-database", "none"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert "generating one example took longer than the 3s" in out, out[-3000:]
    assert "1 failed, 1 passed" in out, out[-3000:]
