"""Loosenings (NEW accepts more: a limit relaxed, an enum value added, a field no longer
required, a pattern relaxed or removed) break only old readers: impact ``reads``, a
warning under the default ``kubernetes`` profile, an error under ``kubernetes-strict``,
``--fail-on-impact reads`` or a config's ``fail_on_impact = "reads"``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.compat import Finding, Impact, Severity, Side, diff, resolve_policy

STRICT = resolve_policy("kubernetes-strict")


def _crd(field: dict[str, Any], *, required: tuple[str, ...] = ("x",),
         under: str = "spec") -> dict[str, Any]:
    return {"type": "object", "properties": {under: {
        "type": "object", "required": list(required),
        "properties": {"x": {"type": "string"}, "f": field}}}}


def _write(tmp_path: Path, name: str, content: Any) -> str:
    p = tmp_path / name
    p.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(p)


def _array(max_items: int) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "maxItems": max_items}


@settings(max_examples=30, deadline=None)
@given(old=st.integers(0, 40), more=st.integers(1, 40))
def test_any_widened_max_items_reads_and_passes_by_default(old: int, more: int) -> None:
    """A raised maxItems is one ``bound-relaxed`` loosening: impact ``reads``, a
    warning, exit 0 by default; exit 1 under the strict profile; a lowered one is an
    error either way."""
    a, b = _crd(_array(old)), _crd(_array(old + more))
    report = diff(a, b, dynamic=False)
    [f] = report.findings
    assert (f.rule, f.keyword, f.breaks) == ("bound-relaxed", "maxItems",
                                             frozenset({Side.RESPONSE}))
    assert f.loosening and f.breaking
    assert (f.severity, f.impact, report.exit_code) == (Severity.WARNING, Impact.READS, 0)
    assert "old readers" in f.impact_note
    strict = diff(a, b, dynamic=False, policy=STRICT)
    assert (strict.findings[0].severity, strict.exit_code) == (Severity.ERROR, 1)
    assert diff(a, b, dynamic=False, fail_on_impact="reads").exit_code == 1
    assert diff(a, b, dynamic=False, fail_on_impact="none").exit_code == 1
    assert diff(a, b, dynamic=False, fail_on_impact="create").exit_code == 0
    # the other direction tightens: the default changes nothing there
    back = diff(b, a, dynamic=False)
    [t] = back.findings
    assert (t.rule, t.severity, back.exit_code) == ("bound-tightened", Severity.ERROR, 1)
    assert not t.loosening


@pytest.mark.parametrize(("old", "new", "rule"), [
    ({"type": "integer", "maximum": 5}, {"type": "integer", "maximum": 9}, "bound-relaxed"),
    ({"type": "integer", "minimum": 5}, {"type": "integer", "minimum": 1}, "bound-relaxed"),
    ({"type": "string", "maxLength": 5}, {"type": "string", "maxLength": 63},
     "bound-relaxed"),
    ({"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
     {"type": "object", "maxProperties": 3, "additionalProperties": {"type": "string"}},
     "bound-relaxed"),
    ({"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["a", "b"]},
     "enum-value-added"),
    ({"type": "string", "enum": ["a"]}, {"type": "string"}, "enum-dropped"),
    ({"type": "string", "pattern": "^[a-z]+$"}, {"type": "string", "pattern": "^[a-z0-9]+$"},
     "pattern-changed"),
    ({"type": "string", "pattern": "^[a-z]+$"}, {"type": "string"}, "pattern-changed"),
])
def test_each_loosening_warns_with_its_witness(old: dict[str, Any], new: dict[str, Any],
                                               rule: str) -> None:
    """Witness search on: a relaxed pattern is a loosening once the search finds a string
    NEW accepts and OLD refuses, and none the other way; the witness is kept."""
    report = diff(_crd(old), _crd(new), budget=60, whole_budget=0)
    [f] = [f for f in report.findings if f.breaking]
    assert (f.rule, f.breaks, f.impact) == (rule, frozenset({Side.RESPONSE}), Impact.READS)
    assert (f.severity, report.exit_code) == (Severity.WARNING, 0)
    assert f.witness is not None and f.witness.side is Side.RESPONSE
    strict = diff(_crd(old), _crd(new), budget=60, whole_budget=0, policy=STRICT)
    assert strict.exit_code == 1 and strict.breaking[0].witness == f.witness


def test_a_dropped_required_field_warns() -> None:
    report = diff(_crd({"type": "string"}), _crd({"type": "string"}, required=()),
                  dynamic=False)
    [f] = report.findings
    assert (f.rule, f.severity, f.impact, report.exit_code) == (
        "required-removed", Severity.WARNING, Impact.READS, 0)


def test_a_loosened_status_field_warns_too() -> None:
    """status is written by the server: a loosening there is exactly what old readers
    meet, and it still only warns by default."""
    a = _crd(_array(2), under="status")
    b = _crd(_array(8), under="status")
    report = diff(a, b, dynamic=False)
    assert [(f.rule, f.severity) for f in report.findings] == [
        ("bound-relaxed", Severity.WARNING)]
    assert report.exit_code == 0


def test_a_pattern_that_changes_both_ways_is_no_loosening() -> None:
    a = _crd({"type": "string", "pattern": "^[a-z]+$"})
    b = _crd({"type": "string", "pattern": "^[0-9]+$"})
    report = diff(a, b, budget=60, whole_budget=0)
    [f] = report.breaking
    assert (f.rule, f.severity, f.loosening) == ("pattern-changed", Severity.ERROR, False)
    # and without the witness search nobody can tell the sides apart: it stays an error
    relaxed = _crd({"type": "string", "pattern": "^[a-z0-9]+$"})
    static = diff(a, relaxed, dynamic=False)
    assert [(f.rule, f.severity) for f in static.breaking] == [
        ("pattern-changed", Severity.ERROR)]


def test_other_verdicts_do_not_move() -> None:
    """A tightening next to a loosening still fails, with or without the strict profile."""
    a = _crd({"type": "string", "enum": ["a", "b"], "maxLength": 5})
    b = _crd({"type": "string", "enum": ["a", "c"], "maxLength": 9})
    report = diff(a, b, dynamic=False)
    by_rule = {f.rule: f.severity for f in report.findings if f.breaking}
    assert by_rule == {"enum-value-removed": Severity.ERROR,
                       "enum-value-added": Severity.WARNING,
                       "bound-relaxed": Severity.WARNING}
    assert report.exit_code == 1


def test_loosening_needs_the_response_side_alone() -> None:
    def f(rule: str, *sides: Side) -> Finding:
        return Finding(rule, "spec.f", 1, 2, "m", frozenset(sides))

    assert f("bound-relaxed", Side.RESPONSE).loosening
    assert not f("bound-relaxed", Side.RESPONSE, Side.REQUEST).loosening
    assert not f("bound-tightened", Side.REQUEST).loosening
    # a break no rule explains is never assumed to be harmless
    assert not f("witness-only", Side.RESPONSE).loosening
    assert not f("unhandled", Side.RESPONSE).loosening


# -- the command line ---------------------------------------------------------------------

@pytest.fixture
def relaxed(tmp_path: Path) -> tuple[str, str]:
    return (_write(tmp_path, "old.json", _crd(_array(16))),
            _write(tmp_path, "new.json", _crd(_array(64))))


def test_cli_reports_a_loosening_as_a_warning_and_exits_0(
        relaxed: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", *relaxed, "--config", "none", "--budget", "30",
                 "--whole-budget", "0"]) == 0
    out = capsys.readouterr().out
    assert "WARNING  bound-relaxed" in out and "spec.f [maxItems]" in out
    assert "witness (response) at spec.f:" in out
    assert ("policy: built-in profile kubernetes: bound-relaxed (a loosening) = warn (it "
            "breaks only old readers; --fail-on-impact reads or --policy kubernetes-strict "
            "makes it fail)") in out
    assert "impact: reads: a loosening: every write still succeeds; only old readers" in out
    assert out.rstrip().endswith("0 breaking (0 with a witness), 0 ignored, "
                                 "1 allowed with a warning")


@pytest.mark.parametrize(("flags", "severity", "code"), [
    ((), "warning", 0),
    (("--fail-on-impact", "reads"), "error", 1),
    (("--fail-on-impact", "none"), "error", 1),
    (("--fail-on-impact", "create"), "warning", 0),
    (("--policy", "kubernetes-strict"), "error", 1),
    # an error below the gate: shown, does not fail
    (("--policy", "kubernetes-strict", "--fail-on-impact", "create"), "error", 0),
    (("--severity", "bound-relaxed=error"), "error", 1),
    (("--policy", "gateway-api"), "warning", 0),
])
def test_cli_gate_on_a_loosening(relaxed: tuple[str, str], capsys: pytest.CaptureFixture[str],
                                 flags: tuple[str, ...], severity: str, code: int) -> None:
    assert main(["diff", *relaxed, "--config", "none", "--no-witness", "--format", "json",
                 *flags]) == code
    doc = json.loads(capsys.readouterr().out)
    [f] = doc["findings"]
    assert (f["impact"], f["breaking"], f["severity"], doc["exit_code"]) == (
        "reads", True, severity, code)


def test_fail_on_impact_reads_names_itself_in_the_policy_line(
        relaxed: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", *relaxed, "--config", "none", "--no-witness",
                 "--fail-on-impact", "reads"]) == 1
    assert ("policy: built-in profile kubernetes: bound-relaxed (a loosening) = error "
            "(--fail-on-impact reads: what breaks old readers fails)"
            ) in capsys.readouterr().out


def test_an_unknown_impact_is_a_usage_error(relaxed: tuple[str, str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["diff", *relaxed, "--fail-on-impact", "read"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--fail-on-impact" in err and "'read'" in err
    assert all(level in err for level in ("none", "reads", "create", "update-field",
                                          "any-update"))


def test_the_configs_fail_on_impact_asks_for_loosenings(
        relaxed: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(tmp_path, "compatfuzz.toml", '[diff]\nfail_on_impact = "reads"\n')
    assert main(["diff", *relaxed, "--config", config, "--no-witness"]) == 1
    assert "fail_on_impact from" in capsys.readouterr().err
    # the command line wins over the config
    assert main(["diff", *relaxed, "--config", config, "--no-witness",
                 "--fail-on-impact", "create"]) == 0
    strict = _write(tmp_path, "strict.toml", '[diff]\npolicy = "kubernetes-strict"\n')
    assert main(["diff", *relaxed, "--config", strict, "--no-witness"]) == 1
    bad = _write(tmp_path, "bad.toml", '[diff]\nfail_on_impact = "read"\n')
    capsys.readouterr()
    assert main(["diff", *relaxed, "--config", bad, "--no-witness"]) == 2
    err = capsys.readouterr().err
    assert "unknown fail_on_impact 'read'" in err and "did you mean 'reads'?" in err
    assert "none, reads, create, update-field, any-update" in err


def test_policy_files_extend_either_reading(relaxed: tuple[str, str], tmp_path: Path) -> None:
    strict = _write(tmp_path, "strict.toml", 'extends = "kubernetes-strict"\n')
    assert main(["diff", *relaxed, "--config", "none", "--no-witness",
                 "--policy", strict]) == 1
    # a file's own word on a rule wins over the default's loosening entry, both ways
    loud = _write(tmp_path, "loud.toml", '[rules]\n"bound-relaxed" = "error"\n')
    assert main(["diff", *relaxed, "--config", "none", "--no-witness",
                 "--policy", loud]) == 1
    quiet = _write(tmp_path, "quiet.toml", 'extends = "kubernetes-strict"\n[rules]\n'
                   '"bound-relaxed" = "warn"\n')
    assert main(["diff", *relaxed, "--config", "none", "--no-witness", "--policy", quiet,
                 "--fail-on-impact", "reads"]) == 0
