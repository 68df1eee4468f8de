"""Hostile and mixed inputs to the nightly job's reports: ``report merge``, ``--shard``.

* a report labelled with another night, merged with a job's shards, can never make the
  real shards "stale" and pass a failed job: a mix of nights is refused (exit 2, each file
  with its night) unless ``--night`` picks one, and every report set aside is printed;

The reports are written by the real report writer (``_report.ReportWriter``) and given the
``"shard"`` object ``fuzz --shard`` writes (``tests/roundtrip/_shards.py``); the commands
run through ``compatfuzz.cli.main``, so a traceback fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.cli import main
from compatfuzz.roundtrip import (
    Counterexample,
    Property,
    RunFinished,
    RunStarted,
    Status,
    StopReason,
    Unit,
    UnitFinished,
    UnitResult,
    UnitStarted,
)
from compatfuzz.roundtrip._reports._report import ReportWriter
from tests.roundtrip._shards import as_shard, write

UNITS = [Unit("t", "T", Property.ROUNDTRIP, ("v1", "v2")),
         Unit("t", "T", Property.ROUNDTRIP, ("v2", "v1")),
         Unit("t", "T", Property.VALID, ("v1", "v2"))]
JOB = sorted(u.id for u in UNITS)


def _report(folder: Path, name: str, results: list[UnitResult]) -> dict[str, Any]:
    """What the real writer leaves for a finished run of ``results``."""
    report = folder / name
    writer = ReportWriter(report, folder / "compatfuzz-counterexamples", min_interval=0)
    writer.handle(RunStarted(tuple(r.unit for r in results), None, "default", 100, None, 1,
                             "none"))
    for result in results:
        writer.handle(UnitStarted(result.unit))
        writer.handle(UnitFinished(result))
    writer.handle(RunFinished(StopReason.COMPLETED, tuple(results), 1.0))
    return json.loads(report.read_text())  # type: ignore[no-any-return]


def _passed(unit: Unit) -> UnitResult:
    return UnitResult(unit, Status.PASSED, 100, 0.5)


def _failed(unit: Unit) -> UnitResult:
    cx = Counterexample(unit, {"spec": {"n": 1}}, "lost spec.n", "AssertionError", seed=1)
    return UnitResult(unit, Status.FAILED, 7, 0.5, counterexample=cx)


def _job(folder: Path, night: str = "n1") -> list[Path]:
    """Shards 1..3 of a job of ``night``; shard 2 found a failure."""
    files = []
    for k, unit in enumerate(UNITS, start=1):
        result = _failed(unit) if k == 2 else _passed(unit)
        doc = _report(folder, f"s{k}.json", [result])
        files.append(write(folder / f"s{k}.json",
                           as_shard(doc, k, 3, JOB, units=[unit.id], night=night)))
    return files


def _other(folder: Path, night: str = "n2") -> Path:
    """A passing report of a later night (another job of one shard)."""
    unit = Unit("o", "O", Property.ROUNDTRIP, ("v1", "v2"))
    doc = as_shard(_report(folder, "other.json", [_passed(unit)]), 1, 1, [unit.id],
                   night=night)
    doc["updated"] = "2099-01-01T00:00:00+00:00"
    return write(folder / "other.json", doc)


def _merge(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["report", "merge", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_report_of_a_later_night_cannot_pass_a_failed_job(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path)
    other = _other(tmp_path)
    merged = tmp_path / "merged.json"
    code, out, err = _merge(capsys, *files, other, "--report", merged)
    # was: the three real shards dropped as stale, "passed", exit 0
    assert code == 2, out + err
    assert "passed" not in out and not merged.exists()
    assert "Traceback" not in err and "2 nights" in err and "--night" in err
    for f in files:
        assert str(f) in err
    assert str(other) in err and "'n1'" in err and "'n2'" in err


def test_night_picks_the_reports_to_merge_and_names_every_one_set_aside(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path)
    other = _other(tmp_path)
    code, out, err = _merge(capsys, *files, other, "--night", "n1")
    assert code == 1, out + err  # shard 2's failure stands
    assert f"set aside: {other}: shard 1/1 of night 'n2', not of night 'n1'" in out
    # picking the other night is the user's choice, and the failure it leaves is said
    code, out, err = _merge(capsys, *files, other, "--night", "n2")
    assert code == 0, out + err
    assert f"set aside: {files[1]}: shard 2/3 of night 'n1'" in out
    assert "it reports 1 failed unit, not merged" in out
    # a night no report has is an error, not an empty pass
    code, out, err = _merge(capsys, *files, "--night", "n9")
    assert code == 2 and "no report is of night 'n9'" in err, out + err


def test_the_same_report_twice_is_counted_once_and_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path)
    copy = write(tmp_path / "copy" / "s2.json", json.loads(files[1].read_text()))
    code, out, err = _merge(capsys, *files, copy)
    assert code == 1, out + err
    line = next(x for x in out.splitlines() if x.startswith("set aside: "))
    assert line.endswith(": counted once") and "the same report as" in line
    assert str(copy) in line and str(files[1]) in line


# --- the shard count ---------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["--shard", "1/99999999999999999999"],
    ["--shard", "1/1000000"],
    ["--shard", "1/10001"],
    ["--shard", "1/" + "9" * 5000],
    ["--shards", "1000000"],
    ["--shards", "9" * 5000],
])
def test_a_shard_count_over_the_bound_is_refused_at_once(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["fuzz", "--config", str(tmp_path / "none.toml"), *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    assert argv[0] in err and "Traceback" not in err and len(err) < 1000, err
    if argv[1].count("9") < 5000 and argv[1] != "1/99999999999999999999":
        assert "10,000" in err


@pytest.mark.parametrize("index", ["9" * 5000, "10000000"])
def test_a_huge_job_completion_index_is_refused(
        index: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "compatfuzz.toml"
    config.write_text("")
    monkeypatch.setenv("JOB_COMPLETION_INDEX", index)
    code = main(["fuzz", "--config", str(config), "--shards", "4"])
    err = capsys.readouterr().err
    assert code == 2 and "JOB_COMPLETION_INDEX" in err and len(err) < 1000, err


def test_a_report_of_a_million_shards_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path)
    doc = json.loads(files[0].read_text())
    doc["shard"]["count"] = 1_000_000
    write(files[0], doc)
    code, out, err = _merge(capsys, files[0])
    assert code == 2 and "$.shard.count" in err and "10,000" in err, out + err


def test_merging_one_report_of_ten_thousand_shards_is_a_few_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The missing shards are one line per run of them: the merge's work and size are
    the reports', not N's (a line per missing shard made 1/1000000 an 800 MB merge)."""
    unit = UNITS[0]
    doc = as_shard(_report(tmp_path, "s.json", [_passed(unit)]), 1, 10_000, [unit.id],
                   night="n1")
    doc["shard"]["owners"] = {unit.id: 1}
    report = write(tmp_path / "s.json", doc)
    merged = tmp_path / "merged.json"
    code, out, err = _merge(capsys, report, "--report", merged)
    assert code == 2, out + err  # 9,999 shards missing
    assert "shards 2-10000/10000: no report" in out
    assert "9999 shards missing" in out and len(out.splitlines()) < 10, out
    assert merged.stat().st_size < 20_000
    lines = json.loads(merged.read_text())["merge"]["shards"]
    assert [(x["number"], x.get("last"), x["state"]) for x in lines] == [
        (1, None, "finished"), (2, 10_000, "missing")]


# --- text from reports and flags, printed commands --------------------------------------

HOSTILE = "n1; touch PWNED #$(id)\x1b]0;owned\x07"


def test_a_hostile_night_label_is_quoted_and_escaped_in_the_rerun_command(
        tmp_path: Path) -> None:
    from tests.faults._project import LOSSY, fuzz, project

    config = project(tmp_path, LOSSY)
    done = fuzz(config, "--property", "valid", "--max-examples", "2", "--shard", "1/2",
                "--night", HOSTILE)
    assert done.returncode in (0, 2), done.stderr
    line = next(x for x in done.stderr.splitlines() if "rerun this shard with:" in x)
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    # pasted, the label is one word: no `touch`, no `$(id)`
    assert "--night 'n1; touch PWNED #$(id)\\x1b]0;owned\\x07'" in line, line


def test_a_reports_strings_are_escaped_and_its_replay_command_quoted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path, night=HOSTILE)
    doc = json.loads(files[1].read_text())
    cx = doc["units"][0]["counterexample_file"]
    quoted = tmp_path / "compatfuzz-counterexamples" / "x; rm -rf ~ #.json"
    Path(cx).rename(quoted)
    doc["units"][0]["counterexample_file"] = str(quoted)
    doc["notices"] = ["redis went away\x1b[2J"]
    write(files[1], doc)
    code, out, err = _merge(capsys, *files)
    assert code == 1, out + err
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "\\x1b]0;owned\\x07" in out  # the night, escaped
    assert f"replay: compatfuzz fuzz --replay '{quoted}'" in out


def test_a_counterexample_file_outside_the_reports_folder_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path)
    doc = json.loads(files[1].read_text())
    doc["units"][0]["counterexample_file"] = "/etc/passwd"
    write(files[1], doc)
    merged = tmp_path / "merged.json"
    code, out, err = _merge(capsys, *files, "--report", merged)
    assert code == 1, out + err
    assert "--replay /etc/passwd" not in out
    assert "replay: refused: the report names a counterexample file outside its folder " \
           "(/etc/passwd)" in out
    assert "/etc/passwd" not in json.dumps(json.loads(merged.read_text())["units"])


@pytest.mark.parametrize(("where", "value", "words"), [
    ("seconds", "NaN", "NaN is not JSON"),
    ("seconds", "Infinity", "Infinity is not JSON"),
    ("examples", "1" + "0" * 5000, "too long"),
    ("examples", "10000000000000", "examples 0..1,000,000,000"),
])
def test_nan_huge_numbers_and_absurd_example_counts_in_a_report_are_refused(
        where: str, value: str, words: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path)
    text = files[0].read_text()
    key = f'"{where}": '
    at = text.index(key, text.index('"units"')) + len(key)
    end = min(text.index(",", at), text.index("\n", at))
    files[0].write_text(text[:at] + value + text[end:])
    merged = tmp_path / "merged.json"
    code, out, err = _merge(capsys, *files, "--report", merged)
    assert code == 2 and words in err and str(files[0]) in err, out + err
    assert "Traceback" not in err and len(err) < 2000 and not merged.exists()


@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--seed", "9" * 5000, "at most 39 digits"),
    ("--max-examples", "1000000000000", "at most 1,000,000,000 examples"),
])
def test_a_huge_seed_or_example_count_is_a_usage_error(
        flag: str, value: str, words: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["fuzz", "--config", str(tmp_path / "none.toml"), flag, value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and words in err and len(err) < 1000, err


FAKE = "compatfuzz report merge: 3 passed -> passed (exit 0)"


def test_a_newline_in_a_report_cannot_print_a_verdict_of_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A counterexample file name or a night label holding a newline printed a line of
    the report's choosing, such as a fake 'passed' under the real shards' failure."""
    files = _job(tmp_path, night=f"n1\n{FAKE}")
    doc = json.loads(files[1].read_text())
    cx = doc["units"][0]["counterexample_file"]
    moved = tmp_path / "compatfuzz-counterexamples" / f"a\n{FAKE}\n.json"
    Path(cx).rename(moved)
    doc["units"][0]["counterexample_file"] = str(moved)
    write(files[1], doc)
    code, out, err = _merge(capsys, *files)
    assert code == 1, out + err
    assert not any(line.startswith(FAKE) for line in (out + err).splitlines()), out
    assert "\\x0a" in out or "\\n" in out


def test_the_night_hint_is_quoted_for_the_shell(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _job(tmp_path, night="n1'$(touch PWNED)")
    other = _other(tmp_path, night="n1")
    code, out, err = _merge(capsys, *files, other)
    assert code == 2, out + err
    hint = next(line for line in err.splitlines() if "--night LABEL" in line)
    # shlex.quote: in single quotes, so $( ) is not run when pasted
    assert "'n1'\"'\"'$(touch PWNED)'" in hint, hint


@pytest.mark.parametrize(("where", "value"), [
    ("count", int("9" * 4000)), ("unit-seed", int("9" * 4000)), ("unit-seed", -1)])
def test_huge_numbers_in_a_shard_report_are_refused_in_a_short_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, value: int) -> None:
    """A 4,000-digit shard count was echoed whole (a 4,153-character line), and a unit's
    4,000-digit seed was taken into the merged report."""
    files = _job(tmp_path)
    doc = json.loads(files[0].read_text())
    if where == "count":
        doc["shard"]["count"] = value
    else:
        doc["units"][0]["seed"] = value
    write(files[0], doc)
    code, _out, err = _merge(capsys, files[0])
    assert code == 2 and "Traceback" not in err and len(err) < 800, err
    assert ("$.shard.count" if where == "count" else "$.units[0].seed") in err, err


@pytest.mark.parametrize("shard", ["\u0661/\u0662", "1/\u0662", "\uff11/2"])
def test_a_shard_in_digits_other_than_ascii_is_refused(
        shard: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["fuzz", "--config", str(tmp_path / "none.toml"), "--shard", shard])
    assert exit_.value.code == 2
