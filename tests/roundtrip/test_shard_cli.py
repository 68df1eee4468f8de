"""``compatfuzz fuzz --shard K/N`` / ``--shards N`` as N real processes (issue 21, items 1,
2 and 5): the lossy Frobber example split like a Kubernetes Indexed Job, one Redis or
directory example database shared across shards and nights."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.roundtrip._engine._database import _seal

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "frobber"
FAILING = "frobber::roundtrip[v7beta1->v6]"  # lossy.py drops params[1:] on the way to v6


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """The lossy Frobber config, copied (its counterexamples land beside it)."""
    folder = tmp_path / "job"
    folder.mkdir()
    for name in ("crd.yaml", "conversion.py", "lossy.py", "lossy.toml"):
        shutil.copy(EXAMPLE / name, folder / name)
    return folder / "lossy.toml"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JOB_COMPLETION_INDEX", "COMPATFUZZ_NIGHT", "GITHUB_RUN_ID")}
    return {**env, **extra}


def _fuzz(config: Path, *args: str, env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
                           str(config), *args], capture_output=True, text=True,
                          timeout=300, cwd=config.parent, env=env or _env(), check=False)


def _start_pods(config: Path, count: int, out: Path, *args: str) -> list[subprocess.Popen[str]]:
    """``count`` pods of an Indexed Job: ``--shards count`` with ``JOB_COMPLETION_INDEX``."""
    return [subprocess.Popen(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config), "-q",
         "--shards", str(count), "--report", str(out / f"shard-{index}.json"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=config.parent,
        env=_env(JOB_COMPLETION_INDEX=str(index))) for index in range(count)]


def _finish(pods: list[subprocess.Popen[str]], out: Path,
            ) -> list[tuple[int, str, dict[str, Any]]]:
    done = []
    for index, pod in enumerate(pods):
        _, err = pod.communicate(timeout=300)
        assert "Traceback" not in err, err
        report = json.loads((out / f"shard-{index}.json").read_text())
        done.append((pod.returncode, err, report))
    return done


def _pods(config: Path, count: int, out: Path, *args: str,
          ) -> list[tuple[int, str, dict[str, Any]]]:
    return _finish(_start_pods(config, count, out, *args), out)


@pytest.mark.extended  # examples/test_nightly.py runs the indexed job by default
def test_three_indexed_job_pods_run_the_unsharded_units_each_once(job: Path,
                                                                  tmp_path: Path) -> None:
    whole = _fuzz(job, "--max-examples", "25", "--database", "none", "-q",
                  "--report", str(tmp_path / "whole.json"))
    assert whole.returncode == 1, whole.stderr
    rows = json.loads((tmp_path / "whole.json").read_text())["units"]
    verdicts = {r["id"]: r["status"] for r in rows}
    pods = _pods(job, 3, tmp_path, "--max-examples", "25", "--database", "none",
                 "--night", "n1")
    owned: collections.Counter[str] = collections.Counter()
    sharded: dict[str, str] = {}
    for index, (code, err, report) in enumerate(pods):
        shard = report["shard"]
        assert (shard["number"], shard["count"], shard["night"]) == (index + 1, 3, "n1")
        assert sorted(shard["job_units"]) == sorted(verdicts)
        assert shard["replayed"] == [] and shard["copies"] == {}
        assert sorted(r["id"] for r in report["units"]) == shard["units"]
        assert report["seed"] == shard["seed"]
        owned.update(shard["units"])
        sharded.update({r["id"]: r["status"] for r in report["units"]})
        assert code == (1 if FAILING in shard["units"] else 0), err
        assert f"compatfuzz fuzz: shard {index + 1}/3: " in err  # header and final line
        assert (f"rerun this shard with: compatfuzz fuzz --config lossy.toml --shard "
                f"{index + 1}/3 --night n1 --database none") in err
    assert owned == collections.Counter(list(verdicts))  # every unit, each once
    assert sharded == verdicts
    assert len({r["shard"]["config_digest"] for _, _, r in pods}) == 1
    assert len({r["shard"]["seed"] for _, _, r in pods}) == 3
    # their merge is the unsharded run's report: the same units, the same verdicts
    merged = _merge(*(tmp_path / f"shard-{i}.json" for i in range(3)),
                    "--report", tmp_path / "merged.json")
    assert merged.returncode == whole.returncode == 1, merged.stdout + merged.stderr
    doc = json.loads((tmp_path / "merged.json").read_text())
    assert {r["id"]: r["status"] for r in doc["units"]} == verdicts
    assert doc["not_run"] == [] and doc["status"] == "failed"
    assert doc["merge"]["owners"] == {u: i + 1 for i, (_, _, r) in enumerate(pods)
                                      for u in r["shard"]["units"]}


def _merge(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", "report", "merge",
                           *map(str, argv)], capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.extended  # test_merge_cli.py names a missing shard by default
def test_two_missing_shards_are_each_named_with_the_units_they_owned(
        job: Path, tmp_path: Path) -> None:
    """Each report names every unit's owner, so a merge missing two of four shards says
    which lost unit was whose (it used to list them together)."""
    pods = _pods(job, 4, tmp_path, "--max-examples", "5", "--database", "none",
                 "--night", "n1")
    owners = pods[0][2]["shard"]["owners"]
    assert all(r["shard"]["owners"] == owners for _, _, r in pods)
    for index, (_, _, report) in enumerate(pods):
        assert sorted(u for u, k in owners.items() if k == index + 1) == report["shard"]["units"]
    done = _merge(tmp_path / "shard-0.json", tmp_path / "shard-2.json", "--report",
                  tmp_path / "merged.json", "--junit", tmp_path / "junit.xml")
    assert done.returncode != 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "merged.json").read_text())
    lines = {s["number"]: s for s in doc["merge"]["shards"]}
    for number in (2, 4):
        lost = sorted(u for u, k in owners.items() if k == number)
        assert lines[number]["state"] == "missing"
        assert lines[number]["not_run"] == lost
        assert (f"shard {number}/4: no report\n  the {len(lost)} units it owned did not "
                f"run: {', '.join(lost)}") in done.stdout
        assert f"shard {number}/4: no report; the {len(lost)} units it owned did not run" \
            in doc["notices"]
    assert sorted(doc["not_run"]) == sorted(u for u, k in owners.items() if k in (2, 4))


def test_a_failure_one_shard_finds_is_replayed_first_by_every_shard_next_night(
        job: Path, tmp_path: Path,
        real_redis: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, _ = real_redis
    night1 = tmp_path / "night1"
    pods = _pods(job, 3, night1, "--max-examples", "100", "--database", url,
                 "--night", "1")
    (owner,) = [i for i, (_, _, r) in enumerate(pods) if FAILING in r["shard"]["units"]]
    code, err, report = pods[owner]
    assert code == 1, err
    assert {r["id"]: r["status"] for r in report["units"]}[FAILING] == "failed"

    night2 = tmp_path / "night2"
    for index, (code, err, report) in enumerate(_pods(job, 3, night2, "--max-examples",
                                                      "100", "--database", url,
                                                      "--night", "2")):
        assert code == 1, err  # a still-failing unit fails every shard
        first = report["units"][0]  # before the shard generated anything
        assert (first["id"], first["status"]) == (FAILING, "failed")
        assert "replayed the 1 failure compatfuzz saved" in first["replayed"]
        if index == owner:
            assert report["shard"]["replayed"] == []
        else:
            assert report["shard"]["replayed"] == [FAILING]
            assert FAILING not in report["shard"]["units"]
            assert first["examples"] <= 2  # the saved failure, no generation
            assert f"saved failures of 1 unit other shards own: {FAILING}" in err
            # the header counts the shard's own units and the replay apart
            own = len(report["shard"]["units"])
            assert f"shard {index + 1}/3: {own} properties + 1 replay, " in err


@pytest.mark.extended  # faults/test_redis.py and test_pytest_xdist.py take Redis outages by default
def test_a_redis_outage_mid_run_ends_no_shard(
        job: Path, tmp_path: Path,
        real_redis: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, server = real_redis
    pods = _start_pods(job, 3, tmp_path, "--max-examples", "400", "--database", url,
                       "--night", "n")
    reports = [tmp_path / f"shard-{i}.json" for i in range(3)]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in reports):  # every shard is running
        assert time.monotonic() < deadline, "the shards did not start"
        assert all(p.poll() is None for p in pods)
        time.sleep(0.1)
    server.kill()  # the outage
    server.wait(timeout=10)
    for code, err, report in _finish(pods, tmp_path):
        assert code in (0, 1), err
        assert "stopped answering" in err and "the local database" in err, err
        assert any("stopped answering" in n for n in report["notices"])
        assert report["status"] in ("passed", "failed")
        assert report["not_run"] == []
        assert all(r["status"] in ("passed", "failed") for r in report["units"])


@pytest.mark.extended  # a damaged folder; test_example_database.py reads damaged entries
def test_a_damaged_or_foreign_directory_database_is_a_cache_not_a_crash(
        job: Path, tmp_path: Path) -> None:
    db = tmp_path / "db"
    first = _pods(job, 2, tmp_path / "n1", "--max-examples", "100", "--database",
                  str(db), "--night", "1")
    assert any(code == 1 for code, _, _ in first)
    files = sorted(p for p in db.rglob("*") if p.is_file())
    assert files
    for i, path in enumerate(files):
        data = path.read_bytes()
        if data.startswith(b"cf1:"):  # sealed, but choices another Hypothesis wrote
            path.write_bytes(_seal(os.urandom(24)))
        elif i % 3 == 0:
            path.write_bytes(os.urandom(40))  # garbage
        elif i % 3 == 1:
            path.write_bytes(data[: len(data) // 2])  # truncated by a cut-off sync
        else:
            path.write_bytes(b"")
    (db / "not-a-key-folder").write_bytes(b"junk")
    (db / "0123456789abcdef").mkdir(exist_ok=True)
    (db / "0123456789abcdef" / "entry").write_bytes(os.urandom(100))
    for code, err, report in _pods(job, 2, tmp_path / "n2", "--max-examples", "100",
                                   "--database", str(db), "--night", "2"):
        assert code in (0, 1), err
        assert all(r["status"] in ("passed", "failed") for r in report["units"]), err
        assert report["not_run"] == []


@pytest.mark.parametrize("args, env, message", [
    (["--shard", "5/4"], {}, "1 <= K <= N but got 5/4"),
    (["--shard", "two"], {}, "Expected --shard K/N"),
    (["--shards", "3"], {}, "reads this shard's index from JOB_COMPLETION_INDEX, which is "
                            "not set"),
    (["--shards", "3"], {"JOB_COMPLETION_INDEX": "3"}, "must be the same number"),
    (["--shard", "1/2", "--shards", "2"], {}, "not allowed with argument"),
    (["--shard", "1/2", "--replay", "cx.json"], {}, "--replay re-checks one "
                                                    "counterexample file; --shard splits"),
    (["--night", "n1"], {}, "this run is not sharded"),
])
def test_bad_shard_flags_are_usage_errors(job: Path, args: list[str], env: dict[str, str],
                                          message: str) -> None:
    done = _fuzz(job, *args, "--database", "none", env=_env(**env))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (job.parent / "compatfuzz-counterexamples").exists()  # nothing ran


def test_a_seeded_shard_says_its_seeds_come_from_the_seed_not_a_night(job: Path) -> None:
    done = _fuzz(job, "--shard", "1/2", "--seed", "5", "--max-examples", "2", "--database",
                 "none", "-q")
    assert done.returncode in (0, 1), done.stderr
    assert "shard 1/2 (seeds from --seed 5): " in done.stderr
    assert "of night" not in done.stderr
    assert ("rerun this shard with: compatfuzz fuzz --config lossy.toml --shard 1/2 --seed 5 "
            "--database none") in done.stderr
