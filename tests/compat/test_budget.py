"""The witness search's budget: a diff ends, and a finding whose search was cut short is
reported *unwitnessed* with its static verdict (``compat/_budget.py``); the live line on
a terminal while witnesses are searched (``_commands/diff.py``)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz._commands.diff import _WitnessProgress
from compatfuzz.cli import main
from compatfuzz.compat import (
    FindingEvent,
    Note,
    Status,
    Witnessing,
    check,
    diff,
    load_revision,
)
from compatfuzz.compat._budget import Clock, OutOfBudget, WitnessBudget, timed_find
from compatfuzz.errors import InvalidArgument
from compatfuzz.schema import Schema
from tests.test_cli_progress import _Terminal

REPO = Path(__file__).resolve().parents[2]
COMPATFUZZ = Path(sys.executable).with_name("compatfuzz")


def _spec(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        spec["required"] = required
    return {"type": "object", "properties": {"spec": spec}}


def _static(report: Any) -> list[tuple[Any, ...]]:
    """What a finding claims without a witness: rule, place, values and verdict."""
    return [(f.rule, f.location, f.keyword, f.old, f.new, f.breaking, f.severity)
            for f in report.findings]


#: two patterns that accept the same strings: no witness exists, so a search for one
#: runs until its budget (of examples or time) is spent
SAME_STRINGS = (_spec({"name": {"type": "string", "pattern": "^[a-z]+$"}}),
                _spec({"name": {"type": "string", "pattern": "^[a-z][a-z]*$"}}))


@given(old=st.integers(1, 10**6), cut=st.integers(1, 10**6), enum=st.booleans())
def test_no_examples_leaves_each_finding_unwitnessed_with_its_static_verdict(
        old: int, cut: int, enum: bool) -> None:
    new = max(0, old - cut)
    props_old: dict[str, Any] = {"n": {"type": "integer", "maximum": old}}
    props_new: dict[str, Any] = {"n": {"type": "integer", "maximum": new}}
    if enum:
        props_old["mode"] = {"type": "string", "enum": ["a", "b"]}
        props_new["mode"] = {"type": "string", "enum": ["a"]}
    a, b = _spec(props_old), _spec(props_new, ["n"])
    static = diff(a, b, dynamic=False)
    cut_short = diff(a, b, witness_examples=0)
    assert _static(cut_short) == _static(static)
    assert cut_short.exit_code == static.exit_code == 1
    for f in cut_short.findings:
        searched = f.breaking  # every breaking rule here is one a validator can witness
        assert f.witness is None
        assert (f.status is Status.UNWITNESSED) == searched, f
        if searched:
            assert "witness search ran out of budget (0 examples per run; " \
                   "--witness-examples raises it)" in f.message


def test_a_small_time_budget_ends_a_search_that_would_run_for_ever() -> None:
    # a million examples per finding: only the time budget can end this search
    events = list(check(*SAME_STRINGS, budget=10**6, whole_budget=0, direction="request",
                        finding_seconds=0.3))
    [f] = [e.finding for e in events if isinstance(e, FindingEvent)]
    assert (f.rule, f.status, f.witness) == ("pattern-changed", Status.UNWITNESSED, None)
    # cut short, the equivalence is not concluded: the static claim (breaking) stands
    assert f.breaking and "equivalent" not in f.message
    assert "(0.3 s per finding; --finding-budget raises it)" in f.message
    notes = [e.message for e in events if isinstance(e, Note)]
    assert any("ran out of budget for 1 finding" in n for n in notes), notes


def test_the_run_budget_is_shared_by_every_finding() -> None:
    old, new = SAME_STRINGS
    old = _spec({k: v for k in ("a", "b", "c") for v in [old["properties"]["spec"]
                                                        ["properties"]["name"]]})
    new = _spec({k: v for k in ("a", "b", "c") for v in [new["properties"]["spec"]
                                                        ["properties"]["name"]]})
    report = diff(old, new, budget=10**6, whole_budget=0, direction="request",
                  witness_seconds=0.3, finding_seconds=None)
    assert [f.status for f in report.findings] == [Status.UNWITNESSED] * 3
    assert all("(0.3 s per run; --witness-budget raises it)" in f.message
               for f in report.findings)


def test_within_budget_a_pattern_search_still_concludes() -> None:
    f, = diff(*SAME_STRINGS, budget=20, whole_budget=0, witness_seconds=None,
              finding_seconds=None).findings
    assert f.status is Status.UNCONFIRMED and not f.breaking
    assert "equivalent as far as the search can tell" in f.message


def test_witnessed_findings_are_the_same_with_any_budget() -> None:
    old = _spec({"replicas": {"type": "integer", "minimum": 0, "maximum": 10},
                 "mode": {"type": "string", "enum": ["Fast", "Safe"]}})
    new = _spec({"replicas": {"type": "integer", "minimum": 0, "maximum": 5},
                 "mode": {"type": "string", "enum": ["Fast", "Safe", "Turbo"]}}, ["mode"])
    free = diff(old, new, witness_seconds=None, finding_seconds=None)
    bounded = diff(old, new)
    assert all(f.status is Status.CONFIRMED for f in free.breaking)
    assert [f.to_json() for f in bounded.findings] == [f.to_json() for f in free.findings]


def test_a_cel_rule_no_drawn_value_meets_is_reported_unwitnessed() -> None:
    rule = "self.code == 'x7Qz-exactly-this-and-nothing-else'"
    old = Schema(root=_spec({"code": {"type": "string"}}), kubernetes=True)
    old.root["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": rule}]
    new = Schema(root=json.loads(json.dumps(old.root)), kubernetes=True)
    new.root["properties"]["spec"]["x-kubernetes-validations"].append(
        {"rule": "self.code.size() < 5"})
    report = diff(old, new, witness_examples=0)
    [f] = [f for f in report.findings if f.rule == "validations-changed"]
    assert f.status is Status.UNWITNESSED and f.breaking and report.exit_code == 1
    assert "witness search ran out of budget" in f.message


@pytest.mark.parametrize("steps", [1, 2, 3, 5, 8, 13, 40, 200])
def test_a_search_cut_short_returns_a_real_witness_or_nothing(steps: int) -> None:
    ticks = iter(range(10**6))
    clock = Clock(WitnessBudget(seconds=None, finding_seconds=steps),
                  now=lambda: float(next(ticks)))
    from hypothesis import strategies as hs

    from compatfuzz.compat._witness import _settings

    with clock.search():
        try:
            found = timed_find(hs.integers(), lambda v: v > 1000, settings=_settings(10**4),
                               random=__import__("random").Random(steps))
        except OutOfBudget:
            return
    assert found > 1000


@pytest.mark.parametrize(("name", "value"), [
    ("witness_seconds", -1), ("finding_seconds", "3s"), ("witness_examples", 2.5),
    ("witness_examples", True), ("witness_seconds", float("nan"))])
def test_bad_budget_values_are_refused(name: str, value: Any) -> None:
    with pytest.raises(InvalidArgument, match=f"{name}={value!r}"):
        diff(*SAME_STRINGS, **{name: value})


@pytest.mark.parametrize(("flag", "value"), [
    ("--witness-budget", "10x"), ("--witness-budget", "-3s"), ("--finding-budget", "soon"),
    ("--witness-examples", "many"), ("--witness-examples", "-1")])
def test_bad_budget_flags_exit_2_naming_the_flag_and_a_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(SAME_STRINGS[0]))
    new.write_text(json.dumps(SAME_STRINGS[1]))
    with pytest.raises(SystemExit) as exit_:
        main(["diff", str(old), str(new), f"{flag}={value}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: {value!r}" in err
    assert "fix: give " in err and f"e.g. {flag} " in err and f"{flag} none" in err


def test_budget_flags_reach_the_search(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(SAME_STRINGS[0]))
    new.write_text(json.dumps(SAME_STRINGS[1]))
    code = main(["diff", str(old), str(new), "--budget", "1000000", "--finding-budget",
                 "0.2s", "--witness-budget", "1m", "--whole-budget", "0", "--format",
                 "json"])
    out, err = capsys.readouterr()
    [f] = json.loads(out)["findings"]
    assert code == 1 and f["status"] == "unwitnessed" and f["breaking"]
    assert "0.2 s per finding; --finding-budget raises it" in f["message"]
    assert "ran out of budget for 1 finding" in err


# -- progress -------------------------------------------------------------------------------


def _witnessing(done: int, total: int, clock: Any = None) -> Witnessing:
    return Witnessing("v1", "bound-tightened", "v1:spec.replicas", done, total, 0.0, 0,
                      clock)


def test_the_progress_line_names_the_finding_and_the_count() -> None:
    out = _Terminal()
    progress = _WitnessProgress(out, after=0.0)
    clock = Clock(WitnessBudget())
    clock.examples, clock.spent = 1234, 2.0
    events = iter([_witnessing(2, 5, clock)])
    watched = progress.watch(events, 8.0)
    next(watched)
    progress.draw()
    line = out.getvalue().rsplit("\r\x1b[K", 1)[-1]
    assert line.startswith("compatfuzz diff: witnessing [2/5], 1,234 examples, ")
    assert "6s left; running bound-tightened v1:spec.replicas" in line
    with pytest.raises(StopIteration):
        next(watched)
    assert out.getvalue().endswith("\r\x1b[K")  # cleared: nothing left above the report


def test_no_progress_line_when_not_a_terminal_or_in_the_first_seconds() -> None:
    import io

    piped = io.StringIO()
    progress = _WitnessProgress(piped, after=0.0)
    list(progress.watch(iter([_witnessing(0, 1)]), None))
    progress.draw()
    assert piped.getvalue() == ""
    early = _Terminal()
    progress = _WitnessProgress(early, after=60.0)
    watched = progress.watch(iter([_witnessing(0, 1)]), None)
    next(watched)
    progress.draw()
    assert early.getvalue() == ""


def _slow_diff(tmp_path: Path, *extra: str) -> list[str]:
    """A ``compatfuzz diff`` whose only search runs about 4 CPU seconds (see SAME_STRINGS)."""
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(SAME_STRINGS[0]))
    new.write_text(json.dumps(SAME_STRINGS[1]))
    return [str(COMPATFUZZ), "diff", str(old), str(new), "--budget", "1000000",
            "--whole-budget", "0", "--direction", "request", "--finding-budget", "4s",
            *extra]


def test_progress_shows_on_a_pseudo_terminal(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(_slow_diff(tmp_path, "--format", "json"),
                            stdout=subprocess.PIPE, stderr=follower, cwd=tmp_path)
    os.close(follower)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    finally:
        out, _ = proc.communicate(timeout=120)
        os.close(leader)
    text = seen.decode()
    assert proc.returncode == 1
    assert "compatfuzz diff: witnessing [0/1]" in text
    assert "running pattern-changed spec.name" in text
    # the line is cleared before anything else is written, and stdout is the JSON alone
    last = text.rindex("witnessing")
    assert "\r\x1b[K" in text[last:]
    assert json.loads(out)["findings"][0]["status"] == "unwitnessed"


@pytest.mark.extended  # a slow diff on a pipe; the terminal case is the default
def test_no_progress_on_a_pipe(tmp_path: Path) -> None:
    began = time.monotonic()
    done = subprocess.run(_slow_diff(tmp_path), capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert done.returncode == 1 and time.monotonic() - began > 3  # long enough to show
    assert "witnessing" not in done.stderr and "\x1b" not in done.stderr
    assert "unwitnessed: the witness search ran out of budget" in done.stdout
    assert "(0 with a witness, 1 unwitnessed: out of budget)" in done.stdout


# -- real CRDs --------------------------------------------------------------------------------


def test_a_real_release_pair_with_no_examples_keeps_every_static_finding(
        corpus_dir: Path) -> None:
    folder = corpus_dir / "crd-releases" / "karpenter" / "karpenter.sh_nodepools"
    old, new = (load_revision(str(folder / f"{tag}.yaml")) for tag in ("v0.37.0", "v1.0.0"))
    static = diff(old, new, dynamic=False)
    cut = diff(old, new, witness_examples=0)
    assert _static(cut) == _static(static) and cut.exit_code == static.exit_code
    assert any(f.status is Status.UNWITNESSED for f in cut.findings)
    assert not any(f.witness is not None for f in cut.findings)


def test_each_search_is_announced_once_and_none_without_the_search() -> None:
    old = _spec({"n": {"type": "integer", "maximum": 10},
                 "name": {"type": "string", "pattern": "^[a-z]+$"}})
    new = _spec({"n": {"type": "integer", "maximum": 5},
                 "name": {"type": "string", "pattern": "^[a-z][a-z]*$"}})
    events = list(check(old, new, budget=5, whole_budget=5))
    shown = [e for e in events if isinstance(e, Witnessing)]
    assert [(e.rule, e.location, e.done, e.total) for e in shown] == [
        ("bound-tightened", "spec.n", 0, 3), ("pattern-changed", "spec.name", 1, 3),
        ("", "whole schema", 2, 3)]
    assert all(e.clock is not None for e in shown)
    assert not [e for e in check(old, new, dynamic=False) if isinstance(e, Witnessing)]
