"""``compatfuzz fuzz``: exit codes, report, counterexample files, JUnit, replay, signals."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from compatfuzz.cli import main
from tests._net import free_port

REPO = Path(__file__).resolve().parents[1]
FROBBER = REPO / "examples" / "frobber"
FAILING = "frobber::roundtrip[v7beta1->v6]"


def test_correct_frobber_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    rc = main(["fuzz", "--config", str(FROBBER / "compatfuzz.toml"), "--database", "none",
               "--max-examples", "40", "--report", str(report)])
    assert rc == 0
    doc = json.loads(report.read_text())
    assert doc["status"] == "passed" and doc["stop_reason"] == "completed"
    assert doc["summary"]["passed"] == len(doc["units"]) == 6
    assert all(u["examples"] == 40 for u in doc["units"])
    err = capsys.readouterr().err
    assert "frobber::roundtrip[v6->v7beta1]" in err and "6 passed" in err
    # per-unit coverage: the Frobber spec has 6 leaf paths; every unit reports what it hit
    for unit in doc["units"]:
        cov = unit["coverage"]
        assert cov["leaf_paths"] == 6 and 0 < cov["covered"] <= 6
        assert set(cov["edge_classes"]).isdisjoint(cov["missing_edge_classes"])
        assert "bool:true" not in cov["missing_edge_classes"] + cov["edge_classes"]
    assert re.search(r"frobber::valid\[v6->v7beta1\]  \(40 examples, [0-9.]+s"
                     r"( after [0-9.]+s set-up)?, \d+% of 6 "
                     r"leaf paths, (all edge classes|edge classes never hit: )", err)


def test_lossy_frobber_fails_with_report_files_junit_and_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, junit = tmp_path / "out" / "report.json", tmp_path / "junit.xml"
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", "none",
               "--report", str(report), "--junit", str(junit), "--seed", "5"])
    assert rc == 1
    doc = json.loads(report.read_text())
    by_id = {u["id"]: u for u in doc["units"]}
    assert {i for i, u in by_id.items() if u["status"] == "failed"} == {FAILING}
    cx_file = Path(by_id[FAILING]["counterexample_file"])
    assert cx_file.parent == tmp_path / "out" / "compatfuzz-counterexamples"
    cx = json.loads(cx_file.read_text())
    assert cx["object"]["spec"] == {"params": ["", ""]}
    assert cx["diff"] == [{"path": "spec.params[1]", "kind": "lost", "old": "", "new": None}]
    assert cx["config"] == str((FROBBER / "lossy.toml").resolve())
    err = capsys.readouterr().err
    assert "minimal counterexample" in err and "spec.params[1]" in err
    # a replay never loads the file's config: the command names it (issue 22, item 6)
    lossy = os.path.relpath(FROBBER / "lossy.toml")
    assert f"replay: compatfuzz fuzz --replay {cx_file} --config {lossy}\n" in err

    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "6" and suite.get("failures") == "1"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["leaf_paths"] == "6" and 0 < float(props["leaf_path_coverage"]) <= 1

    assert main(["fuzz", "--replay", str(cx_file), "--config", lossy]) == 1  # still broken
    assert main(["fuzz", "--replay", str(cx_file), "--config",
                 str(FROBBER / "compatfuzz.toml")]) == 0  # fixed converter
    assert "passes now" in capsys.readouterr().err


def test_api_and_property_filters(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--api", "frobber",
               "--property", "valid", "--database", "none", "--max-examples", "20",
               "--report", str(report)])
    assert rc == 0
    assert {u["property"] for u in json.loads(report.read_text())["units"]} == {"valid"}


@pytest.mark.parametrize("argv", [
    ["--config", "does-not-exist.toml"],
    ["--config", str(FROBBER / "compatfuzz.toml"), "--api", "widgets"],
    ["--replay", str(FROBBER / "crd.yaml")],
])
def test_config_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", *argv]) == 2
    assert "error:" in capsys.readouterr().err


def test_unreadable_configs_and_bad_property_exit_2_with_a_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "compatfuzz.toml"
    binary.write_bytes(b"\xff\xfe[[api]]")
    cases = {
        ("--config", str(tmp_path)): "pass --config",  # a folder
        ("--config", str(binary)): "UTF-8",
        ("--config", str(FROBBER / "compatfuzz.toml"), "--property", "roundtrp"):
            "the properties are: roundtrip",
    }
    for argv, fix in cases.items():
        assert main(["fuzz", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert "error:" in err and fix in err and "Traceback" not in err, err


def test_replay_of_a_unit_the_config_does_not_have_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"format": "compatfuzz-counterexample/1", "api": "frobber", "kind": "Frobber",
           "property": "path_independent", "versions": ["v6", "v7beta1"],
           "object": {"apiVersion": "frobber.example.com/v6", "kind": "Frobber"}}
    for change in ({}, {"property": "roundtrip", "versions": ["v6", "v9"]},
                   {"property": "roundtrip", "kind": "Frobnicator"}):
        cx = tmp_path / "cx.json"
        cx.write_text(json.dumps({**doc, **change}))
        assert main(["fuzz", "--replay", str(cx), "--config",
                     str(FROBBER / "compatfuzz.toml")]) == 2
        err = capsys.readouterr().err
        assert "is not a unit of API 'frobber'" in err
        assert "frobber::roundtrip[v6->v7beta1]" in err  # the fix lists the real units


def test_no_config_found_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(tmp_path)
    assert main(["fuzz"]) == 2
    assert "pass --config" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["--duration", "soon"],
    ["--max-examples", "0"],
    ["--max-examples", "5", "--duration", "1m"],
    ["--workers", "-1"],
])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["fuzz", *argv])
    assert info.value.code == 2
    # what was wrong, and where the options are, without argparse's 12 lines of usage
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("compatfuzz fuzz: error: argument --"), err
    assert err[1:] == ["  see: compatfuzz fuzz --help"]


@pytest.mark.parametrize(("argv", "prog"), [
    (["fuzz", "--nope"], "compatfuzz fuzz"),
    (["report", "merge", "a.json", "--nope"], "compatfuzz report merge"),
    (["sample", "crd.yaml", "--nope"], "compatfuzz sample"),
    (["--nope"], "compatfuzz"),
])
def test_an_unknown_argument_names_its_subcommand(argv: list[str], prog: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{prog}: error: unrecognized arguments: --nope", f"  see: {prog} --help"]


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("1h30m", 5400), ("90s", 90),
                                               ("90", 90), ("1.5m", 90)])
def test_duration_syntax(text: str, seconds: float) -> None:
    from compatfuzz._commands.fuzz import parse_duration

    assert parse_duration(text) == seconds


def _wait_for(report: Path, predicate: object, timeout: float = 60) -> dict[str, object]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if report.is_file():
            doc = json.loads(report.read_text())  # atomic writes: always parseable
            if predicate(doc):  # type: ignore[operator]
                return doc  # type: ignore[no-any-return]
        time.sleep(0.1)
    pytest.fail(f"report never reached the expected state: {report.read_text()}")


@pytest.mark.parametrize(("sig", "workers"), [
    (signal.SIGTERM, "2"),
    pytest.param(signal.SIGINT, "1", marks=pytest.mark.slow),
])
def test_signal_writes_report_and_keeps_counterexamples(tmp_path: Path, sig: int,
                                                        workers: str) -> None:
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
         str(FROBBER / "lossy.toml"), "--duration", "20m", "--workers", workers,
         "--database", str(tmp_path / "db"), "--report", str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )
    try:
        if workers == "2":  # the lossy pair runs next to the first unit and fails fast
            _wait_for(report, lambda d: any(u["id"] == FAILING for u in d["units"]))
        else:
            _wait_for(report, lambda d: d["status"] == "running")
            time.sleep(1.0)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    doc = json.loads(report.read_text())
    assert doc["stop_reason"] == "interrupted"
    assert doc["not_run"], "a 20 minute run cannot have finished"
    statuses = {u["id"]: u["status"] for u in doc["units"]}
    assert "interrupted" in statuses.values()
    if workers == "2":
        assert proc.returncode == 1
        assert statuses[FAILING] == "failed"
        files = list((tmp_path / "compatfuzz-counterexamples").glob("*.json"))
        assert [json.loads(f.read_text())["id"] for f in files] == [FAILING]
    else:
        assert proc.returncode == 130, err.decode()


def test_unreachable_redis_is_one_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("redis")
    rc = main(["fuzz", "--config", str(FROBBER / "compatfuzz.toml"),
               "--database", f"redis://127.0.0.1:{free_port()}/0", "--max-examples", "5"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "cannot reach the Redis example database" in err
    assert "[1/" not in err  # stopped before running any unit


def test_failure_hints_fit_a_config_declared_api(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10, items 5 and 8: no @reproduce_failure (there is no test function to
    decorate), the pytest node id instead; and with --database none no claim that the
    example database keeps the failure."""
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", "none",
               "--property", "roundtrip", "--seed", "5", "--report", str(tmp_path / "r.json")])
    assert rc == 1
    err = capsys.readouterr().err
    assert "@reproduce_failure" not in err
    node = f"{os.path.relpath(FROBBER / 'lossy.toml')}::{FAILING}"
    assert f"  or: pytest '{node}' --compatfuzz-seed=5\n" in err
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", "none",
               "--property", "roundtrip", "--report", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert rc == 1 and "example database" not in err and "@reproduce_failure" not in err
    assert "replay: compatfuzz fuzz --replay" in err


def test_files_go_beside_the_config_when_run_from_a_subfolder(tmp_path: Path) -> None:
    """Issue 10, item 6: the example database, counterexample files and Hypothesis's other
    files land beside the config, so a run from a subfolder shares pytest's database."""
    for name in ("crd.yaml", "lossy.py", "conversion.py"):
        shutil.copy(FROBBER / name, tmp_path / name)
    shutil.copy(FROBBER / "lossy.toml", tmp_path / "compatfuzz.toml")
    sub = tmp_path / "deep" / "sub"
    sub.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    done = subprocess.run(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--property", "roundtrip", "-q"],
        cwd=sub, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    assert list(sub.rglob("*")) == []  # nothing where the command ran
    assert (tmp_path / "compatfuzz-counterexamples").is_dir()
    examples = tmp_path / ".hypothesis" / "examples"
    saved = {p for p in examples.rglob("*") if p.is_file()}
    assert saved, "the failure must be in the database beside the config"
    assert f"database={examples}" in done.stderr
    # pytest, also run from the subfolder, replays from that same database
    node = f"{os.path.relpath(tmp_path / 'compatfuzz.toml', sub)}::{FAILING}"
    ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                          node], cwd=sub, env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    assert ran.returncode == 1, ran.stdout
    assert not (sub / ".hypothesis" / "examples").exists()
    assert {p for p in examples.rglob("*") if p.is_file()} >= saved


def test_a_python_declared_api_reads_paths_beside_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 10, item 6: ``API.from_crd(..., "crd.yaml")`` in a module reads the CRD next
    to that module, whatever the working directory, as ``crd = "crd.yaml"`` in TOML does."""
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(FROBBER / "crd.yaml", proj / "crd.yaml")
    for v in ("v1", "v2"):
        (proj / f"{v}.json").write_text('{"type": "object"}')
    (proj / "declared_api_mod.py").write_text(
        "from compatfuzz.roundtrip import API\n"
        "def convert(obj, version):\n    return {**obj, 'apiVersion': version}\n"
        "crd = API.from_crd('frobber', 'crd.yaml', convert=convert)\n"
        "plain = API.from_schemas('plain', {'v1': 'v1.json', 'v2': 'v2.json'}, "
        "convert=convert)\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.syspath_prepend(str(proj))
    import importlib

    mod = importlib.import_module("declared_api_mod")
    assert [k.name for k in mod.crd.kinds] == ["Frobber"]
    assert list(mod.plain.kinds[0].versions) == ["v1", "v2"]


def test_accepted_differences_and_stale_entries_in_every_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # examples/frobber/accepted.toml: lossy.toml (which fails roundtrip[v7beta1->v6] on
    # spec.params[1]) with that loss accepted, and an entry no difference matches
    report, junit, page = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    rc = main(["fuzz", "--config", str(FROBBER / "accepted.toml"), "--database", "none",
               "--seed", "5", "--max-examples", "50", "--report", str(report),
               "--junit", str(junit), "--html", str(page)])
    assert rc == 0
    err = capsys.readouterr().err
    assert re.search(r"compatfuzz fuzz: accepted: frobber: spec\.params\[\*\] \(roundtrip, "
                     r"v7beta1->v6\): \d+ examples in 1 unit; why: v6 has room for one "
                     r"param", err), err
    assert ("compatfuzz fuzz: warning: stale accept entry frobber: spec.widthInInches "
            "(*->v6): it accepted nothing in the 3 units it covers; remove it if the "
            "difference is gone (why: v6 rounded widths to whole inches before 6.2)") in err
    doc = json.loads(report.read_text())
    (accepted,) = doc["accepted"]
    assert accepted["units"] == [FAILING] and accepted["count"] > 0
    assert accepted["why"].startswith("v6 has room for one param")
    (stale,) = doc["stale_accepts"]
    assert (stale["path"], stale["count"], len(stale["units"])) == ("spec.widthInInches", 0, 3)
    unit = next(u for u in doc["units"] if u["id"] == FAILING)
    assert unit["status"] == "passed" and unit["accepted"] == [
        {"index": 0, "count": accepted["count"]}]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")
             if p.get("name") in ("accepted", "stale_accept")}
    assert props["accepted"] == (f"spec.params[*]: {accepted['count']} examples; why: "
                                 f"{accepted['why']}")
    assert props["stale_accept"].startswith("frobber: spec.widthInInches (*->v6) accepted "
                                            "nothing in 3 units")
    assert suite.get("tests") == "6" and suite.get("failures") == "0"
    html = page.read_text()
    assert "<h2>Accepted differences (1)</h2>" in html
    assert "<h2>Stale accept entries (1)</h2>" in html
    assert "v6 rounded widths to whole inches before 6.2" in html


@pytest.mark.parametrize(("prop", "needs"), [
    ("encodings", "a protobuf API"),
    ("path_independent", "three or more versions"),
    ("default_idempotent", "defaulters"),
])
def test_a_run_that_would_test_nothing_is_not_a_pass(
        prop: str, needs: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 0 must mean 'checked and held': a CI job asking for a property that has no
    unit here would otherwise go green having tested nothing (issue 17, audit)."""
    config = str(FROBBER / "compatfuzz.toml")
    assert main(["fuzz", "--config", config, "--property", prop, "-q"]) == 2
    err = capsys.readouterr().err
    assert f"nothing to run: {prop} plans no unit for frobber" in err and needs in err, err
