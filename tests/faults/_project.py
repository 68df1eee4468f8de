"""A throw-away two-version API with a converter of the test's choosing, run through the
real CLI in a subprocess: every fault test is bounded by a subprocess timeout, whatever the
code under test does (issue 11 asks that no test can hang the suite)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCHEMA = {"type": "object", "properties": {
    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
    "spec": {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 1000}}}}}
HEADER = "import os, signal, sys, time\n\n"
#: loses spec.n on the way to v2 whenever it is set: both round trips fail within 50
#: examples on every seed (a rarer trigger made the database tests flaky)
LOSSY = """
    def convert(obj, desired):
        out = {**obj, "apiVersion": desired}
        if desired.endswith("/v2") and "n" in (obj.get("spec") or {}):
            out["spec"] = {k: v for k, v in out["spec"].items() if k != "n"}
        return out
"""


@dataclass
class Run:
    returncode: int
    stderr: str
    seconds: float
    report: dict[str, Any]


def project(tmp: Path, converter: str, **toml: str) -> Path:
    """Write ``conv.py`` (``converter`` defines ``convert(obj, desired)``), two schemas and
    ``compatfuzz.toml``; return the config path."""
    (tmp / "conv.py").write_text(HEADER + textwrap.dedent(converter))
    for v in ("v1", "v2"):
        (tmp / f"{v}.json").write_text(json.dumps(SCHEMA))
    extra = "".join(f"{k} = {v}\n" for k, v in toml.items())
    config = tmp / "compatfuzz.toml"
    config.write_text('[[api]]\nname = "t"\nkind = "T"\ngroup = "g.example.com"\n'
                      'schemas = { v1 = "v1.json", v2 = "v2.json" }\n'
                      f'convert = "conv:convert"\n{extra}')
    return config


def command(config: Path, *args: str) -> list[str]:
    report = config.parent / "report.json"
    return [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config),
            "--database", "none", "--report", str(report), *args]


def fuzz(config: Path, *args: str, timeout: float = 60) -> Run:
    """Run ``compatfuzz fuzz`` on ``config``; fail the test (not hang) after ``timeout``."""
    started = time.monotonic()
    done = subprocess.run(command(config, *args), capture_output=True, text=True,
                          timeout=timeout, cwd=config.parent, check=False)
    report = config.parent / "report.json"
    doc = json.loads(report.read_text()) if report.is_file() else {}
    return Run(done.returncode, done.stderr, time.monotonic() - started, doc)


def wait_for(path: Path, predicate: Any, timeout: float = 30) -> dict[str, Any]:
    """Poll a JSON file (written atomically) until ``predicate(doc)`` holds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.is_file():
            doc = json.loads(path.read_text())
            if predicate(doc):
                return doc  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached the expected state: "
                         f"{path.read_text() if path.is_file() else 'missing'}")


def children(pid: int) -> list[int]:
    """Child pids of ``pid`` (Linux ``/proc``)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "children").read_text().split()
        except FileNotFoundError:  # the thread ended between listing and reading
            continue
        out.extend(int(c) for c in text)
    return out


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie or a vanished process does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def sigterm_when(proc: subprocess.Popen[bytes], ready: Any, within: float) -> None:
    """Send ``proc`` one SIGTERM once ``ready()`` holds (or ``within`` seconds passed,
    or it ended), then wait for it to end; 120 s is only a safety net (such runs used to
    need SIGKILL). Kills it whatever happens."""
    import signal

    try:
        end = time.monotonic() + within
        while proc.poll() is None and time.monotonic() < end and not ready():
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    finally:
        proc.kill()
        proc.wait(10)
