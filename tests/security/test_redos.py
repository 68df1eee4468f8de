"""Issue 11, item 4: no ``pattern`` can backtrack catastrophically.

``^(a+)+$`` against ``aaaa...a!`` takes exponential time in a backtracking engine: one
``valid`` example took ~130 s and ``diff``'s witness search never finished. Patterns are
now checked with RE2 (linear time, the engine Kubernetes uses); a pattern RE2 rejects runs
under a CPU bound and is reported as unsupported. Every check here runs in a subprocess
with a timeout, so the old code fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.faults._project import fuzz, project

EVIL = "^(a+)+$"
EVIL_LOOKAHEAD = "^(?=a)(a+)+$"  # RE2 cannot run it: the bounded fallback must


def _python(code: str, timeout: float = 30) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_validation_is_linear_and_a_backtracking_pattern_is_bounded() -> None:
    out = _python(f"""
        import json, time
        from compatfuzz.schema import load_schema
        from compatfuzz.errors import UnsupportedSchema

        killer = "a" * 40 + "!"
        schema = load_schema({{"type": "string", "pattern": {EVIL!r}}})
        # CPU seconds, not wall time: the machine is shared; the bounds below separate
        # linear (milliseconds) from backtracking (2**40 steps: hours), not fast from slow
        t = time.process_time()
        errors = [e.message for e in schema.validator.iter_errors(killer)]
        linear = time.process_time() - t
        # the same verdicts as before on ordinary strings
        assert schema.is_valid("aaa") and not schema.is_valid("aab")
        look = load_schema({{"type": "string", "pattern": {EVIL_LOOKAHEAD!r}}})
        assert look.is_valid("aaa") and not look.is_valid("ba")
        t = time.process_time()
        try:
            look.is_valid(killer)
            refused = ""
        except UnsupportedSchema as exc:
            refused = str(exc)
        bounded = time.process_time() - t
        t = time.process_time()
        try:
            look.is_valid(killer)
        except UnsupportedSchema:
            pass
        again = time.process_time() - t
        print(json.dumps({{"errors": errors, "linear": linear, "refused": refused,
                          "bounded": bounded, "again": again}}))
    """)
    doc = json.loads(out)
    assert doc["errors"] == [f"'{'a' * 40}!' does not match '{EVIL}'"]
    assert doc["linear"] < 5
    assert "backtracks catastrophically" in doc["refused"] and EVIL_LOOKAHEAD in doc["refused"]
    assert "fix:" in doc["refused"]
    assert doc["bounded"] < 5 and doc["again"] < 0.5  # refused once, then at once


def test_fuzz_valid_with_a_catastrophic_pattern_finishes(tmp_path: Path) -> None:
    config = project(tmp_path, """
        def convert(obj, desired):
            return {**obj, "apiVersion": desired}
    """)
    for version, pattern in (("v1", "^a{32,40}!$"), ("v2", EVIL)):  # 2**32 steps in re
        schema = {"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "s": {"type": "string", "pattern": pattern}}, "required": ["s"]}
        (tmp_path / f"{version}.json").write_text(json.dumps(schema))
    done = fuzz(config, "--property", "valid", "--max-examples", "20", timeout=60)
    assert done.seconds < 30
    assert done.returncode == 1, done.stderr  # v1's strings do not match v2's pattern
    statuses = {u["id"]: u["status"] for u in done.report["units"]}
    assert statuses["t::valid[v1->v2]"] == "failed"


def test_diff_witness_search_with_a_catastrophic_pattern_finishes(tmp_path: Path) -> None:
    for name, pattern in (("old.json", "^a{20,40}!$"), ("new.json", EVIL)):
        (tmp_path / name).write_text(json.dumps({"type": "object", "properties": {
            "s": {"type": "string", "pattern": pattern}}}))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "compatfuzz.cli", "diff", "old.json",
                           "new.json", "--budget", "50", "--whole-budget", "30"],
                          capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, check=False)
    assert time.monotonic() - started < 30
    assert done.returncode == 1, done.stderr
    assert "pattern-changed" in done.stdout and "witness (request)" in done.stdout
