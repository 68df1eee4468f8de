"""``compatfuzz report merge`` on the reports of real ``compatfuzz fuzz`` runs (issue 21).

Each shard here is a real ``fuzz --report`` run narrowed with ``--property`` to the units
the shard owns, given the ``"shard"`` object of the contract (``tests/roundtrip/_shards.py``,
without ``owners``, as reports written before it was added): the tests choose which units a
shard holds and what it found.  Merges of real ``fuzz --shard K/N`` runs are in
``test_shard_cli.py``.  The project is the
seeded-bug API of the fault tests: its converter loses ``spec.n`` on the way to v2, so
both round trips fail within 50 examples on every seed and the other properties hold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from compatfuzz.cli import main
from compatfuzz.roundtrip._reports._merge import canonical_json, simpler_key
from tests.faults._project import LOSSY, project, wait_for
from tests.roundtrip._shards import as_shard, digest, write

PROPERTIES = ("roundtrip", "valid", "no_mutation")
JOB = sorted(f"t::{p}[{a}->{b}]" for p in PROPERTIES for a, b in (("v1", "v2"), ("v2", "v1")))
# LOSSY, and 50 ms per conversion when SLOW is set: a run long enough to kill mid-unit
CONVERTER = LOSSY.replace("        out = ", "        if os.environ.get('SLOW'):\n"
                          "            time.sleep(0.05)\n        out = ")


def fuzz(config: Path, out: Path, *args: str, env: dict[str, str] | None = None,
         seed: int | None = None) -> tuple[int, dict[str, Any]]:
    """A real ``compatfuzz fuzz --report out/report.json`` run; its exit code and report."""
    report = out / "report.json"
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config),
         "--database", "none", "--report", str(report), "--max-examples", "100", "-q",
         *(["--seed", str(seed)] if seed is not None else []), *args],
        capture_output=True, text=True, timeout=300, cwd=config.parent, check=False,
        env={**os.environ, **(env or {})})
    return done.returncode, json.loads(report.read_text())


def merge(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command line, in a subprocess (the exit code is the process's)."""
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", "report", "merge",
                           *map(str, argv)], capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One unsharded run of the whole job, one run per property (a shard's units), and a
    second round-trip run with another seed."""
    tmp = tmp_path_factory.mktemp("merge")
    config = project(tmp, CONVERTER)
    found: dict[str, Any] = {"config": config, "tmp": tmp}
    found["single"] = fuzz(config, tmp / "single")
    for prop in PROPERTIES:
        found[prop] = fuzz(config, tmp / prop, "--property", prop, seed=1)
    found["roundtrip2"] = fuzz(config, tmp / "roundtrip2", "--property", "roundtrip", seed=2)
    return found


def ids(doc: dict[str, Any]) -> list[str]:
    return sorted(r["id"] for r in doc["units"])


def test_merged_shards_equal_a_single_process_run(runs: dict[str, Any], tmp_path: Path) -> None:
    code, single = runs["single"]
    assert ids(single) == JOB and code == 1  # the seeded bug is found in one process
    files = [write(tmp_path / f"shard-{k}.json",
                   as_shard(runs[prop][1], k, 3, JOB))
             for k, prop in enumerate(PROPERTIES, start=1)]
    # the shards' files moved together (a CI artifact): a counterexample file is taken
    # from the report's folder only, never from a path a report names outside it
    for prop in PROPERTIES:
        if (runs["tmp"] / prop / "compatfuzz-counterexamples").is_dir():
            shutil.copytree(runs["tmp"] / prop / "compatfuzz-counterexamples",
                            tmp_path / "compatfuzz-counterexamples", dirs_exist_ok=True)
    out = tmp_path / "merged"
    done = merge(*files[::-1], "--report", out / "report.json", "--junit", out / "junit.xml",
                 "--html", out / "report.html")
    assert done.returncode == code, done.stderr
    doc = json.loads((out / "report.json").read_text())
    # same units, same verdicts, same summary, as one process
    assert ids(doc) == ids(single)
    assert {r["id"]: r["status"] for r in doc["units"]} == {
        r["id"]: r["status"] for r in single["units"]}
    assert doc["summary"] == single["summary"] and doc["not_run"] == single["not_run"] == []
    assert doc["status"] == single["status"] == "failed"
    assert doc["format"] == single["format"]
    # every shard's examples are counted once
    assert sum(r["examples"] for r in doc["units"]) == sum(
        r["examples"] for prop in PROPERTIES for r in runs[prop][1]["units"])
    # JUnit and HTML render the merged job as they render a run
    cases = {f"{c.get('classname')}::{c.get('name')}": c
             for c in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    assert sorted(cases) == JOB
    assert {k for k, c in cases.items() if c.find("failure") is not None} == {
        r["id"] for r in single["units"] if r["status"] == "failed"}
    page = (out / "report.html").read_text()
    assert 'id="run-status">failed</span>' in page and "minimal counterexample" in page
    # the text: a line per shard, each failure once with its counterexample file
    for k in (1, 2, 3):
        assert f"shard {k}/3: finished" in done.stdout
    for r in doc["units"]:
        if r["status"] == "failed":
            assert done.stdout.count(f"FAIL {r['id']} ") == 1
            assert f"replay: compatfuzz fuzz --replay {r['counterexample_file']}" in done.stdout
            assert Path(r["counterexample_file"]).is_file()
            # the message whole, as the shard's log has it (three lines cut a header
            # "what the API server did to these fields:" from its field lines)
            message = r["counterexample"]["error"].splitlines()
            for line in message[:40]:
                assert f"    {line}\n" in done.stdout, line
    assert done.stdout.rstrip().endswith("-> failed (exit 1)")


def test_missing_shard_is_named_with_its_units(runs: dict[str, Any], tmp_path: Path) -> None:
    one = write(tmp_path / "shard-1.json", as_shard(runs["valid"][1], 1, 3, JOB))
    three = write(tmp_path / "shard-3.json", as_shard(runs["no_mutation"][1], 3, 3, JOB))
    done = merge(one, three, "--report", tmp_path / "merged.json", "--html",
                 tmp_path / "merged.html", "--junit", tmp_path / "junit.xml")
    # every unit that ran holds, yet the job failed: shard 2/3 (the round trips) is gone
    assert done.returncode == 2, done.stdout + done.stderr
    assert "shard 2/3: no report" in done.stdout
    assert ("2 units only shard 2/3 owned did not run: t::roundtrip[v1->v2], "
            "t::roundtrip[v2->v1]") in done.stdout
    doc = json.loads((tmp_path / "merged.json").read_text())
    assert doc["not_run"] == ["t::roundtrip[v1->v2]", "t::roundtrip[v2->v1]"]
    assert doc["status"] == "incomplete"
    assert [s["state"] for s in doc["merge"]["shards"]] == ["finished", "missing", "finished"]
    # the page and the JUnit file say so too, not just "not run"
    assert ("shard 2/3: no report; 2 units only it owned did not run"
            in (tmp_path / "merged.html").read_text())
    skipped = {c.get("name"): c.find("skipped").get("message")  # type: ignore[union-attr]
               for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
               if c.find("skipped") is not None}
    assert skipped == dict.fromkeys(["roundtrip[v1->v2]", "roundtrip[v2->v1]"],
                                    "did not run: shard 2/3 wrote no report")


def test_killed_shard_is_reported_as_such(runs: dict[str, Any], tmp_path: Path) -> None:
    """Shard 2/2 is a real ``compatfuzz fuzz`` killed with SIGKILL mid-unit: its report
    is the one it left, still ``running``."""
    one = write(tmp_path / "shard-1.json", as_shard(runs["valid"][1], 1, 2, JOB))
    report = tmp_path / "shard-2" / "report.json"
    report.parent.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(runs["config"]),
         "--database", "none", "--report", str(report), "--max-examples", "2000",
         "--property", "no_mutation", "--property", "roundtrip"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
        env={**os.environ, "SLOW": "1"})
    try:
        wait_for(report, lambda d: bool(d.get("running")), timeout=120)
        proc.kill()
        proc.wait(10)
    finally:
        proc.kill()
        proc.wait(10)
    killed = json.loads(report.read_text())
    assert killed["status"] == "running" and killed["running"]
    job = JOB
    two = write(tmp_path / "shard-2.json", as_shard(killed, 2, 2, job))
    out = tmp_path / "merged"
    done = merge(one, two, "--report", out / "report.json", "--junit", out / "junit.xml")
    assert done.returncode == 2, done.stdout + done.stderr  # never 0: the job did not finish
    assert "shard 2/2: died" in done.stdout and "DIED: its report still says running" in (
        done.stdout)
    running = [r["id"] for r in killed["running"]]
    assert f"was running: {', '.join(sorted(running))}" in done.stdout
    doc = json.loads((out / "report.json").read_text())
    lost = sorted(u for u in job if u not in {r["id"] for r in killed["units"]}
                  and u not in {r["id"] for r in runs["valid"][1]["units"]})
    assert lost and doc["not_run"] == lost and doc["status"] == "incomplete"
    shard = doc["merge"]["shards"][1]
    assert shard["state"] == "died" and shard["running"] == sorted(running)
    skipped = [c for c in ET.parse(out / "junit.xml").getroot().iter("testcase")
               if c.find("skipped") is not None]
    assert sorted(f"{c.get('classname')}::{c.get('name')}" for c in skipped) == lost
    messages = {f"{c.get('classname')}::{c.get('name')}": c.find("skipped").get("message")  # type: ignore[union-attr]
                for c in skipped}
    for unit in lost:
        assert messages[unit] == ("did not finish: shard 2/2 died while running it"
                                  if unit in running else
                                  "did not run: shard 2/2 died before it started")
    assert doc["notices"][0].startswith("shard 2/2 died (died): 1 unit was running")


def test_duplicate_failures_are_merged(runs: dict[str, Any], tmp_path: Path) -> None:
    """Each shard owns one round trip and replayed the other's from the database: each
    failure is found twice, reported once with the simplest counterexample."""
    job = JOB[2:4]
    a, b = runs["roundtrip"][1], runs["roundtrip2"][1]
    files = [write(tmp_path / "shard-1.json", as_shard(a, 1, 2, job, units=[job[0]],
                                                       replayed=[job[1]])),
             write(tmp_path / "shard-2.json", as_shard(b, 2, 2, job, units=[job[1]],
                                                       replayed=[job[0]]))]
    done = merge(*files, "--report", tmp_path / "merged.json")
    assert done.returncode == 1, done.stderr
    doc = json.loads((tmp_path / "merged.json").read_text())
    assert ids(doc) == job
    for unit in job:
        found = {k: next(r for r in d["units"] if r["id"] == unit) for k, d in ((1, a), (2, b))}
        row = next(r for r in doc["units"] if r["id"] == unit)
        assert row["examples"] == found[1]["examples"] + found[2]["examples"]
        objects = [f["counterexample"]["object"] for f in found.values()]
        best = min(objects, key=simpler_key)
        assert row["counterexample"]["object"] == best
        assert done.stdout.count(f"FAIL {unit} ") == 1
        failure = next(f for f in doc["merge"]["failures"] if f["id"] == unit)
        assert failure["found_by"] == [k for k, f in found.items()
                                       if canonical_json(f["counterexample"]["object"])
                                       == canonical_json(best)]
    assert len(doc["merge"]["failures"]) == 2


def _shard(runs: dict[str, Any], k: int = 1, n: int = 2, **kw: Any) -> dict[str, Any]:
    return as_shard(runs["valid"][1], k, n, JOB, **kw)


BAD: dict[str, tuple[Callable[[dict[str, Any], Path], list[Path]], str, str]] = {
    "another shard count": (
        lambda r, t: [write(t / "a.json", _shard(r, 1, 2)), write(t / "b.json", _shard(r, 2, 3))],
        "b.json at $.shard.count: is shard 2/3, but", "every --shard K/N of one N"),
    "another config": (
        lambda r, t: [write(t / "a.json", _shard(r, 1)),
                      write(t / "b.json", _shard(r, 2, config_digest="0" * 64))],
        "b.json at $.shard.config_digest: was planned from another config", "one job only"),
    "other job units": (
        lambda r, t: [write(t / "a.json", _shard(r, 1)),
                      write(t / "b.json", {**_shard(r, 2), "shard": {
                          **_shard(r, 2)["shard"], "job_units": JOB[2:]}})],
        "$.shard.job_units: plans other units than", "same config, --api, --property"),
    "one shard twice": (
        lambda r, t: [write(t / "a.json", _shard(r, 1)),
                      write(t / "b.json", _shard(r, 1, seed=7))],
        "at $.shard.number: is shard 1/2, and so is", "pass each shard's report once"),
    "a shard count that is not a count": (
        lambda r, t: [write(t / "a.json", {**_shard(r), "shard": {
            **_shard(r)["shard"], "count": "three"}})],
        "a.json at $.shard.count: expected a shard K/N", "--report FILE"),
    "cut JSON": (
        lambda r, t: [(t / "a.json").write_text(json.dumps(_shard(r))[:300]) and t / "a.json"],
        "a.json: not valid JSON (line 1, column", "compatfuzz fuzz --shard K/N"),
    "not a report": (
        lambda r, t: [write(t / "crd.json", {"kind": "CustomResourceDefinition"})],
        "crd.json at $.format: not a compatfuzz report", "--report FILE"),
    "bad unit status": (
        lambda r, t: [write(t / "a.json", {**_shard(r), "units": [
            {**_shard(r)["units"][0], "status": "great"}]})],
        "a.json at $.units[0].status: unknown unit status 'great'", "--report FILE"),
    "unit outside the job": (
        lambda r, t: [write(t / "a.json", {**_shard(r), "shard": {
            **_shard(r)["shard"], "job_units": JOB[:2], "units": []}})],
        "a.json at $.units[0].id: unit 't::valid[v1->v2]' is not one of the job's units",
        "--report FILE"),
    "no such file": (lambda r, t: [t / "shard-9.json"], "shard-9.json: no such file",
                     "check the path"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_inputs_exit_2_naming_file_and_path(runs: dict[str, Any], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                case: str) -> None:
    make, where, fix = BAD[case]
    files = make(runs, tmp_path)
    out = tmp_path / "merged.json"
    assert main(["report", "merge", *map(str, files), "--report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("compatfuzz report: error: ") and "Traceback" not in err
    assert where in err and "fix: " in err and fix in err, err
    assert not out.exists()


def test_last_nights_report_is_a_missing_shard_not_its_old_verdict(
        runs: dict[str, Any], tmp_path: Path) -> None:
    """A shard that did not run tonight leaves last night's report on a kept volume (the
    Kubernetes example's): merged, it would pass the job on an old verdict. It is that
    shard missing, named with the stale file, even when the config changed since."""
    tonight = [write(tmp_path / f"shard-{k}.json",
                     as_shard(runs[prop][1], k, 3, JOB, night="n2"))
               for k, prop in ((1, "valid"), (2, "no_mutation"))]
    for k, doc in enumerate(json.loads(p.read_text()) for p in tonight):
        doc["updated"] = f"2026-11-27T0{k}:00:00+00:00"
        write(tonight[k], doc)
    old = as_shard(runs["roundtrip"][1], 3, 3, JOB, night="n1", config_digest="1" * 64)
    old["updated"] = "2026-11-26T05:00:00+00:00"
    write(tmp_path / "shard-3.json", old)
    out = tmp_path / "merged.json"
    done = merge(*sorted(tmp_path.glob("shard-*.json")), "--report", out)
    assert done.returncode == 2 and "--night" in done.stderr  # a mix of nights: refused
    assert not out.exists()
    done = merge(*sorted(tmp_path.glob("shard-*.json")), "--report", out, "--night", "n2")
    assert done.returncode == 2, done.stdout + done.stderr  # a shard missing, no failure
    assert (f"shard 3/3: no report of night n2 ({tmp_path / 'shard-3.json'} is of night "
            "n1: another night's, set aside)") in done.stdout
    doc = json.loads(out.read_text())
    assert doc["merge"]["nights"] == ["n2"] and doc["status"] == "incomplete"
    assert sorted(doc["not_run"]) == [u for u in JOB if u.startswith("t::roundtrip")]
    assert any("set aside: shard 3/3 of night 'n1'" in n for n in doc["notices"])
    assert "failed" not in {r["status"] for r in doc["units"]}  # the old failure is not in


def test_a_shards_notice_is_printed_under_its_line(runs: dict[str, Any],
                                                   tmp_path: Path) -> None:
    """What a shard said once (here: Redis went away mid-run) is on the terminal, not only
    in the merged JSON and HTML, also with -q."""
    said = ("the example database redis://redis:6379/0 stopped answering (ConnectionError); "
            "the run goes on with the local database .hypothesis/examples")
    one = {**as_shard(runs["valid"][1], 1, 1, JOB[4:]), "notices": [said]}
    done = merge(write(tmp_path / "shard-1.json", one), "-q")
    assert "shard 1/1: finished, 2 units" in done.stdout
    assert f"\n  note: {said}\n" in done.stdout, done.stdout


def test_output_over_a_shard_report_is_refused(runs: dict[str, Any], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    shard = write(tmp_path / "shard-1.json", as_shard(runs["valid"][1], 1, 1, JOB[4:]))
    before = shard.read_text()
    assert main(["report", "merge", str(shard), "--report", str(shard)]) == 2
    assert "is one of the reports being merged" in capsys.readouterr().err
    assert shard.read_text() == before


def test_unsharded_report_is_shard_one_of_one(runs: dict[str, Any], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, single = runs["single"]
    path = write(tmp_path / "report.json", single)
    assert main(["report", "merge", str(path), str(path)]) == code  # the same file twice
    text = capsys.readouterr().out
    assert "compatfuzz report merge: 1 shard (night not given), 6 units" in text
    assert "shard 1/1: finished" in text
    assert main(["report", "merge", str(path), "-q"]) == code
    quiet = capsys.readouterr().out
    assert "shard 1/1: finished" not in quiet and quiet.count("FAIL ") == text.count("FAIL ") == 2


def test_two_unsharded_reports_are_refused_with_the_reason(
        runs: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two plain ``fuzz --report`` runs are each a job of their own (shard 1/1)."""
    a = write(tmp_path / "a.json", runs["valid"][1])
    b = write(tmp_path / "b.json", runs["roundtrip"][1])
    assert main(["report", "merge", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "has no \"shard\" object, so it is shard 1/1 of a job of its own" in err
    assert "run each shard with --shard K/N" in err
    assert digest(JOB) != digest(JOB[1:])  # the helper's digest tells jobs apart
