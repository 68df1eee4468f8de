"""Issue 11, item 2: a dead worker fails its unit and the run goes on; workers die with
their parent; a hung run still answers SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults._project import alive, children, command, fuzz, project, wait_for

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc to find the worker processes")

SPIN = """
    def convert(obj, desired):
        while True:  # burns CPU, forever
            pass
"""


def test_a_worker_that_dies_fails_its_unit_and_the_run_goes_on(tmp_path: Path) -> None:
    config = project(tmp_path, """
        def convert(obj, desired):
            if desired.endswith("/v1"):
                os._exit(3)  # only the way back to v1 kills the process
            return {**obj, "apiVersion": desired}
    """)
    done = fuzz(config, "--max-examples", "5", "--workers", "2", timeout=60)
    assert done.returncode == 1, done.stderr
    by_id = {u["id"]: u for u in done.report["units"]}
    assert len(by_id) == 6 and not done.report["not_run"]  # every unit ran
    dead = {i for i, u in by_id.items() if "exited with status 3" in u["message"]}
    assert dead == {"t::roundtrip[v1->v2]", "t::roundtrip[v2->v1]", "t::valid[v2->v1]",
                    "t::no_mutation[v2->v1]"}
    assert all(by_id[i]["status"] == "failed" for i in dead)
    assert {by_id[i]["status"] for i in set(by_id) - dead} == {"passed"}
    assert done.report["status"] == "failed"


def _start(config: Path, *args: str) -> subprocess.Popen[bytes]:
    with (config.parent / "stderr.txt").open("wb") as err:
        return subprocess.Popen(command(config, "--workers", "2", "--example-deadline",
                                        "none", *args),
                                stdout=subprocess.DEVNULL, stderr=err, cwd=config.parent)


def _two_workers(proc: subprocess.Popen[bytes], report: Path) -> list[int]:
    wait_for(report, lambda d: len(d.get("running", [])) == 2)
    end = time.monotonic() + 10
    while time.monotonic() < end:
        kids = [k for k in children(proc.pid) if alive(k)]
        if len(kids) >= 2:
            return kids
        time.sleep(0.05)
    raise AssertionError("the two workers never started")


def _all_gone(pids: list[int], timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


@linux_only
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    config = project(tmp_path, SPIN)
    proc = _start(config)
    workers: list[int] = []
    try:
        workers = _two_workers(proc, tmp_path / "report.json")
        proc.kill()  # SIGKILL: no handler, no finally, no atexit
        proc.wait(10)
        assert _all_gone(workers), "orphaned workers still burn CPU"
    finally:
        proc.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@linux_only
def test_a_hung_run_still_stops_on_a_second_sigterm(tmp_path: Path) -> None:
    config = project(tmp_path, SPIN)
    proc = _start(config)
    workers: list[int] = []
    try:
        workers = _two_workers(proc, tmp_path / "report.json")
        proc.send_signal(signal.SIGTERM)  # asks the workers to stop
        time.sleep(0.5)
        if proc.poll() is None:  # still finishing its spinning examples: abort
            proc.send_signal(signal.SIGTERM)  # the parent kills its workers
        proc.wait(15)
        # 130 from the CLI, or -SIGTERM when the second signal came as the stopped run was
        # already exiting (its handlers restored): either way stopped by the signals
        assert proc.returncode in (130, -signal.SIGTERM), (tmp_path / "stderr.txt").read_text()
        assert _all_gone(workers)
        doc = wait_for(tmp_path / "report.json", lambda d: d["status"] != "running")
        assert doc["status"] == "interrupted"
        stopped = [u for u in doc["units"] if u["status"] == "interrupted"]
        assert len(doc["running"]) + len(stopped) == 2 and len(doc["not_run"]) == 4
    finally:
        proc.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@linux_only
@pytest.mark.extended  # waits the whole grace period; the second-SIGTERM test is the quick case
def test_one_sigterm_ends_a_hung_run_after_the_grace_period(tmp_path: Path) -> None:
    """Kubernetes sends SIGTERM once, then SIGKILL 30 s later: one SIGTERM must do. With
    ``--example-deadline none`` nothing else ends an example stuck in a converter."""
    from compatfuzz._commands.fuzz import STOP_GRACE

    config = project(tmp_path, SPIN)
    proc = _start(config)
    workers: list[int] = []
    try:
        workers = _two_workers(proc, tmp_path / "report.json")
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)  # once
        proc.wait(STOP_GRACE + 20)  # a safety net: it used to need SIGKILL
        took = time.monotonic() - sent
        stderr = (tmp_path / "stderr.txt").read_text()
        assert proc.returncode == 130, stderr
        assert took >= STOP_GRACE - 0.5, stderr  # the units were given their grace
        assert f"did not stop within {STOP_GRACE:g}s of SIGTERM; ending them" in stderr
        assert _all_gone(workers)
        doc = wait_for(tmp_path / "report.json", lambda d: d["status"] != "running")
        assert doc["status"] == "interrupted"
    finally:
        proc.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
