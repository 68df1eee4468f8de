"""Issue 22, item 1: the number of versions cannot explode a run.

A CRD with 200 served versions planned 7,880,400 ``path_independent`` units (cubic in
the versions): gigabytes before the first unit, deaf to SIGTERM, and the same in
``pytest --collect-only``.  ``--duration`` gave every unit at least 0.5 s, so 1,140
units of a 10 s run took over an hour.  Now at most ``plan_limit`` (300) version tuples
per kind and property are planned, a fixed sample beyond; ``--duration`` is the whole
run's; a signal while loading or planning ends the run at once.  Commands that could eat
memory on the old code run in a child with an address-space limit and a timeout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compatfuzz.roundtrip import API, Property
from compatfuzz.roundtrip._check._limits import DEFAULT_PLAN_LIMIT
from compatfuzz.roundtrip._check._plan import is_unit, plan, units

resource = pytest.importorskip("resource")  # POSIX

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "n": {"type": "integer", "minimum": 0, "maximum": 9}}}}}


def _crd(versions: int) -> dict[str, object]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.g.example.com"},
        "spec": {"group": "g.example.com", "scope": "Namespaced",
                 "names": {"plural": "things", "singular": "thing", "kind": "Thing",
                           "listKind": "ThingList"},
                 "versions": [{"name": f"v{i}", "served": True, "storage": i == 1,
                               "schema": {"openAPIV3Schema": SCHEMA}}
                              for i in range(1, versions + 1)]}}


def _project(tmp: Path, versions: int) -> Path:
    (tmp / "crd.json").write_text(json.dumps(_crd(versions)))
    (tmp / "conv.py").write_text("def convert(obj, desired):\n"
                                 "    return {**obj, 'apiVersion': desired}\n")
    config = tmp / "compatfuzz.toml"
    config.write_text('[[api]]\nname = "t"\ncrd = "crd.json"\nconvert = "conv:convert"\n')
    return config


def _limited() -> None:
    """In the child: at most 1.5 GiB of address space (the old plan passed 3 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))


def _fuzz(config: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config),
         "--database", "none", "--report", str(config.parent / "report.json"), *args],
        cwd=config.parent, capture_output=True, text=True, timeout=timeout,
        preexec_fn=_limited, check=False)


def test_200_versions_plan_a_bounded_sample_and_say_so(tmp_path: Path) -> None:
    config = _project(tmp_path, 200)
    done = _fuzz(config, "--duration", "2s", "-q")
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "planned 300 of 7,880,400 path_independent triples of t/Thing" in done.stderr
    assert "planned 300 of 39,800 roundtrip pairs" in done.stderr
    assert "--plan-limit none" in done.stderr  # the way to lift it
    doc = json.loads((tmp_path / "report.json").read_text())
    assert len(doc["units"]) + len(doc["not_run"]) == 4 * DEFAULT_PLAN_LIMIT
    assert {s["property"]: s["total"] for s in doc["sampled"]}["path_independent"] \
        == 200 * 199 * 198


def test_pytest_collection_is_bounded_too(tmp_path: Path) -> None:
    _project(tmp_path, 200)
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "compatfuzz.toml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"{4 * DEFAULT_PLAN_LIMIT} tests collected" in done.stdout


def test_duration_is_the_whole_runs_limit(tmp_path: Path) -> None:
    config = _project(tmp_path, 20)  # 1,200 units (of 8,280)
    started = time.monotonic()
    done = _fuzz(config, "--duration", "5s", "-q", timeout=120)
    assert time.monotonic() - started < 45, "the old floor of 0.5 s a unit: over an hour"
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["stop_reason"] == "duration"
    assert all(u["examples"] >= 1 for u in doc["units"])  # a unit that ran checked something
    if doc["not_run"]:  # said, and not a pass: exit 0 means every planned unit ran
        assert done.returncode == 2
        assert f"{len(doc['not_run'])} of 1200 units did not run: the --duration budget " \
               "(5s) was spent" in done.stderr
        assert "not run" in done.stderr.splitlines()[-2]
        assert doc["status"] == "incomplete"  # said "passed" before (issue 22 audit)


def test_sigterm_while_planning_exits_at_once(tmp_path: Path) -> None:
    """Planned without a limit, 200 versions take many seconds and gigabytes: a SIGTERM
    then ends the command at once (the old code's handler only set a flag)."""
    config = _project(tmp_path, 200)
    proc = subprocess.Popen(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config),
         "--database", "none", "--plan-limit", "none"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=_limited)  # noqa: PLW1509 - only setrlimit, no lock taken
    try:
        status = Path(f"/proc/{proc.pid}/status")
        end = time.monotonic() + 60
        while time.monotonic() < end and proc.poll() is None:  # until it is planning
            rss = [int(line.split()[1]) for line in status.read_text().splitlines()
                   if line.startswith("VmRSS:")]
            if rss and rss[0] > 150_000:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1]
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait(10)
    assert proc.returncode == 130, err
    assert "interrupted while loading and planning; nothing ran" in err
    assert "Traceback" not in err


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 30), limit=st.integers(1, 400),
       defaulted=st.sets(st.integers(0, 29), max_size=3))
# default_idempotent was unbounded (found by CI on hypothesis 6.170.1)
@example(n=2, limit=1, defaulted={0, 1})
def test_a_plan_is_bounded_fixed_and_valid(n: int, limit: int, defaulted: set[int]) -> None:
    from compatfuzz.roundtrip import Kind

    vs = [f"v{i}" for i in range(n)]
    kind = Kind("Thing", {v: SCHEMA for v in vs})
    defaulters = {vs[i]: (lambda obj: obj) for i in defaulted if i < n}
    api = API("t", [kind], hub=vs[0], convert=lambda obj, desired: obj,
              defaulters=defaulters, plan_limit=limit)
    planned, sampled = plan(api)
    assert planned == units(api)  # the same every time: no run seed involved
    assert len(set(planned)) == len(planned)
    for prop in Property:
        tuples = [u.versions for u in planned if u.property is prop]
        assert len(tuples) <= limit
        assert all(is_unit(api, u) for u in planned)
    every = units(api, limit=None)
    for row in sampled:
        assert row.planned == limit < row.total
        assert row.total == sum(1 for u in every if u.property is row.property)
    if not sampled:
        assert planned == every
    else:
        assert set(planned) <= set(every)


@pytest.mark.parametrize("value", ["0", "-3", '"some"', "true", "1.5"])
def test_a_bad_plan_limit_is_named_with_its_fix(tmp_path: Path, value: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from compatfuzz.cli import main

    config = _project(tmp_path, 3)
    config.write_text(config.read_text() + f"plan_limit = {value}\n")
    assert main(["fuzz", "--config", str(config), "--database", "none"]) == 2
    err = capsys.readouterr().err
    assert "compatfuzz.toml" in err and "plan_limit" in err and "Traceback" not in err
    assert 'plan_limit = "none"' in err  # the fix
    if value.strip('"').lstrip("-").isdigit():
        with pytest.raises(SystemExit) as exc:  # argparse: usage error
            main(["fuzz", "--config", str(config), "--plan-limit", value])
        assert exc.value.code == 2


def test_plan_limit_key_lifts_the_limit(tmp_path: Path) -> None:
    from compatfuzz.roundtrip import load_config

    config = _project(tmp_path, 9)  # 504 triples
    assert len(units(load_config(config)[0], ["path_independent"])) == DEFAULT_PLAN_LIMIT
    config.write_text(config.read_text() + 'plan_limit = "none"\n')
    assert len(units(load_config(config)[0], ["path_independent"])) == 9 * 8 * 7
