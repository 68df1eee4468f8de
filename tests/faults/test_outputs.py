"""Issue 22, item 7: output paths are checked before any unit runs, a write that fails
mid-run is said once and cannot end in exit 0, and "saved in the example database" is said
only when it was.

Tests run as root in CI, where a ``0o555`` folder stops nothing; an unwritable place is
therefore a path under a file, ``/proc``, or an ``OSError(ENOSPC)`` from the OS call that
writes (a full disk cannot be made without ``mount``).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.cli import main

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"


def _fuzz(*args: str, config: Path = FROBBER / "compatfuzz.toml") -> int:
    return main(["fuzz", "--config", str(config), "--database", "none",
                 "--max-examples", "5", *args])


def _no_unit_ran(err: str) -> None:
    assert "[1/" not in err and "properties, profile=" not in err, err
    assert "Traceback" not in err


def _place(tmp_path: Path, kind: str) -> Path:
    """A path output cannot be written to: a folder, a path under a file, ``/proc``."""
    if kind == "folder":
        (tmp_path / "out").mkdir()
        return tmp_path / "out"
    if kind == "under a file":
        (tmp_path / "plain").write_text("not a folder\n")
        return tmp_path / "plain" / "deeper" / "file.out"
    return Path("/proc/compatfuzz-cannot-write-here.out")


@pytest.mark.parametrize("flag", ["--report", "--junit", "--html"])
@pytest.mark.parametrize("kind", ["folder", "under a file", "/proc"])
def test_unwritable_output_is_a_usage_error_before_any_unit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, kind: str) -> None:
    if kind == "/proc" and not Path("/proc/self").is_dir():
        pytest.skip("needs Linux /proc")
    target = _place(tmp_path, kind)
    rc = _fuzz(flag, str(target))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"error: {flag} {target}" in err and "fix:" in err, err
    _no_unit_ran(err)


@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_unwritable_counterexample_folder_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    (tmp_path / "plain").write_text("not a folder\n")
    target = tmp_path / "plain" if kind == "a file" else tmp_path / "plain" / "cx"
    rc = _fuzz("--counterexamples", str(target), config=FROBBER / "lossy.toml")
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"--counterexamples {target}" in err and "fix:" in err, err
    _no_unit_ran(err)


@pytest.fixture
def frobber(tmp_path: Path) -> Path:
    """A copy of the example (the test may try to overwrite its config)."""
    shutil.copytree(FROBBER, tmp_path / "frobber")
    return tmp_path / "frobber" / "compatfuzz.toml"


@pytest.mark.parametrize("flag", ["--report", "--junit", "--html"])
def test_output_on_the_config_is_refused_and_the_config_kept(
        frobber: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    before = frobber.read_bytes()
    rc = _fuzz(flag, str(frobber), config=frobber)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"{flag} {frobber} is the config" in err, err
    assert frobber.read_bytes() == before
    _no_unit_ran(err)


def test_two_outputs_on_one_path_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    same = tmp_path / "out.xml"
    rc = _fuzz("--report", str(same), "--junit", str(tmp_path / "." / "out.xml"))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "is also the --report file" in err and "--junit" in err, err
    assert not same.exists()
    _no_unit_ran(err)


def _disk_full(monkeypatch: pytest.MonkeyPatch, name: str = "replace") -> list[str]:
    """Make ``os.<name>`` fail as on a full disk; return the paths it refused."""
    refused: list[str] = []
    real: Callable[..., Any] = getattr(os, name)

    def full(*args: Any, **kwargs: Any) -> Any:
        refused.append(str(args[-1]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    assert real is not None
    monkeypatch.setattr(os, name, full)
    return refused


def test_disk_full_mid_run_is_one_line_per_file_and_never_exit_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    refused = _disk_full(monkeypatch)
    rc = _fuzz("--report", str(report), "--junit", str(junit))
    err = capsys.readouterr().err
    assert refused  # the writes really were attempted and failed
    assert rc == 2, err  # every unit passed, but CI would read no report
    assert "6 passed" in err  # the run went on to the end
    for path in (report, junit):
        assert err.count(f"cannot write {path} (OSError: No space left on device)") == 1, err
    assert "not written (or out of date)" in err
    assert "Traceback" not in err


def test_disk_full_keeps_finding_failures_and_claims_no_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _disk_full(monkeypatch)
    rc = _fuzz("--report", str(tmp_path / "report.json"), "--seed", "5",
               config=FROBBER / "lossy.toml")
    err = capsys.readouterr().err
    assert rc == 1, err  # the failure is the truth, whatever the disk
    assert "FAILED" in err and "Traceback" not in err
    assert "6 properties" in err and "1 failed, 5 passed" in err
    # no replay line for a file that is not there
    assert "--replay" not in err and "counterexamples saved in" not in err
    assert not list(tmp_path.rglob("*.json"))  # and no half-written file left behind


def _database(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    if kind == "a file":
        (tmp_path / "db").write_text("not a folder\n")
        return tmp_path / "db"
    if kind == "under a file":
        (tmp_path / "plain").write_text("not a folder\n")
        return tmp_path / "plain" / "db"
    # a full disk: Hypothesis writes each example with os.write, and ignores the OSError
    _disk_full(monkeypatch, "write")
    return tmp_path / "db"


@pytest.mark.parametrize("kind", ["a file", "under a file", "disk full"])
def test_saved_in_the_example_database_only_when_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    db = _database(tmp_path, kind, monkeypatch)
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", str(db),
               "--property", "roundtrip", "--max-examples", "100",
               "--report", str(tmp_path / "report.json")])
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert rc == 1, err
    assert "FAILED" in err
    assert "saved in the example database" not in err.replace("NOT saved in", ""), err
    assert f"NOT saved in the example database {db}" in err, err
    assert "replays it from the example database" not in err


def test_saved_in_the_example_database_when_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "db"
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", str(db),
               "--property", "roundtrip", "--max-examples", "100",
               "--report", str(tmp_path / "report.json")])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert f"  saved in the example database {db}: the next run" in err, err
    assert "NOT saved" not in err
    # pytest's replay names the same database (its default is the config's folder)
    assert f"--compatfuzz-database {db}  (replays it from the example database)" in err, err
    doc = json.loads((tmp_path / "report.json").read_text())
    assert any(u["status"] == "failed" for u in doc["units"])


@pytest.mark.parametrize("flag", ["--report", "--junit", "--html"])
def test_an_output_never_replaces_an_input_or_a_device(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    """The atomic rename replaced whatever the path named: the run's own CRD, a converter,
    and as root /dev/null itself (issue 22 audit)."""
    project = tmp_path / "p"
    shutil.copytree(FROBBER, project)
    crd = project / "crd.yaml"
    before = crd.read_bytes()
    assert _fuzz(flag, str(crd), config=project / "compatfuzz.toml") == 2
    err = capsys.readouterr().err
    assert "exists and is not a compatfuzz report" in err and "fix:" in err, err
    assert crd.read_bytes() == before
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _fuzz(flag, str(fifo), config=project / "compatfuzz.toml") == 2
    assert "is not a regular file (a device or a pipe)" in capsys.readouterr().err
    assert not fifo.is_file()  # still a FIFO
    # a report of an earlier run may be overwritten, as every nightly job does
    out = tmp_path / f"out{flag}"
    for _ in range(2):
        assert _fuzz(flag, str(out), "--max-examples", "1",
                     config=project / "compatfuzz.toml") == 0, capsys.readouterr().err
