"""examples/shipments (issue 18, "Must show"): a three-version CRD of our own whose correct
converter passes every property, and whose seeded bugs (examples/shipments/bugs.py) are each
caught within the default 100 examples per pair, shrunk, and replayed, in ``compatfuzz
fuzz``, ``--replay`` and pytest.

Every ``compatfuzz fuzz`` command line starts with :func:`fuzz_args`, and every in-process
run loads its APIs with :func:`load_apis`, so running the same tests through another
API-server backend is a line in each.  To keep the default run short,
it checks the correct converter on ``roundtrip`` (the property every bug is caught by), each
bug on one seed with the unit that shows it first, and one bug through the CLI and
``--replay``; ``--run-slow`` adds the other properties, :data:`SLOW_SEEDS` and every bug
through the CLI.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.cli import main
from compatfuzz.roundtrip import UnitFinished, load_config, run

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
SHIPMENTS = REPO / "examples" / "shipments"
SOUND = SHIPMENTS / "compatfuzz.toml"
SEED = 1
SLOW_SEEDS = range(2, 12)


def fuzz_args(config: Path) -> list[str]:
    """The start of every ``compatfuzz fuzz`` command line in this module."""
    return ["fuzz", "--config", str(config), "--database", "none"]


def load_apis(config: Path) -> list[Any]:
    """The APIs of ``config``, for every in-process ``run`` in this module."""
    return load_config(config)


def bug_config(bug: str) -> Path:
    return SHIPMENTS / f"bug_{bug}.toml"


@dataclass(frozen=True)
class Expect:
    """Where a seeded bug may show, and how a failure caused by it reads."""

    #: the unit that shows it first, without its API name
    first: str
    properties: tuple[str, ...]
    #: the units of ``properties`` that must not fail (the bug cannot show there)
    clean: frozenset[str]
    #: every diff of a failing unit touches only these paths ...
    paths: frozenset[str] = frozenset()
    #: ... or its error says this
    error: str = ""


def _units(prop: str, *pairs: str) -> frozenset[str]:
    return frozenset(f"shipments::{prop}[{pair}]" for pair in pairs)


# Each bug: the unit that shows it first (the default run checks that one), the properties
# that catch it, the units of those properties it cannot reach (they must pass), and how its
# failures read.
EXPECTED: dict[str, Expect] = {
    # to_hub raises on every bracketed (IPv6) destination a v1alpha1 object carries
    "ipv6_first_colon": Expect(
        "roundtrip[v1alpha1->v1]", ("roundtrip",),
        _units("roundtrip", "v1beta1->v1", "v1->v1beta1"), error="to_hub() raised ValueError"),
    # v1alpha1 clients read "::1:80" back; valid catches the v1alpha1 output of any v1 host
    "join_without_brackets": Expect(
        "valid[v1->v1alpha1]", ("roundtrip", "valid"),
        _units("roundtrip", "v1beta1->v1", "v1->v1beta1")
        | _units("valid", "v1alpha1->v1beta1", "v1alpha1->v1", "v1beta1->v1", "v1->v1beta1"),
        paths=frozenset({"spec.destination"}), error="spec.destination: '"),
    "weight_in_kilograms": Expect(
        "roundtrip[v1alpha1->v1]", ("roundtrip",),
        _units("roundtrip", "v1beta1->v1", "v1->v1beta1"),
        paths=frozenset({"spec.weightGrams", "spec.weight"})),
    "weight_rounded_up": Expect(
        "roundtrip[v1->v1alpha1]", ("roundtrip",),
        _units("roundtrip", "v1beta1->v1", "v1->v1beta1"),
        paths=frozenset({"spec.weight", "spec.weightGrams"})),
    "critical_becomes_high": Expect(
        "roundtrip[v1->v1alpha1]", ("roundtrip",),
        _units("roundtrip", "v1alpha1->v1beta1", "v1alpha1->v1", "v1beta1->v1alpha1",
               "v1beta1->v1"), paths=frozenset({"spec.priority"})),
    "empty_notes_dropped": Expect(
        "roundtrip[v1alpha1->v1]", ("roundtrip",),
        _units("roundtrip", "v1->v1alpha1", "v1->v1beta1"), paths=frozenset({"spec.notes"})),
    "notes_stashed_for_v1alpha1_only": Expect(
        "roundtrip[v1beta1->v1]", ("roundtrip",),
        _units("roundtrip", "v1alpha1->v1", "v1->v1alpha1", "v1->v1beta1"),
        paths=frozenset({"spec.notes"})),
    "priority_defaulted_in_converter": Expect(
        "roundtrip[v1->v1alpha1]", ("roundtrip",), frozenset(),
        paths=frozenset({"spec.priority"})),
}
BUGS = sorted(EXPECTED)
#: the bug the default run takes through the CLI and --replay (every unit of roundtrip
#: catches it within a few dozen examples, so its run is the shortest)
CLI_BUG = "priority_defaulted_in_converter"


def fuzz_bug(bug: str, seed: int, out: Path) -> tuple[int, list[dict[str, Any]]]:
    """Run ``compatfuzz fuzz`` on a bug's config with the properties that catch it;
    (exit status, the report's units)."""
    report = out / "report.json"
    argv = [*fuzz_args(bug_config(bug)), "--seed", str(seed), "--report", str(report)]
    for prop in EXPECTED[bug].properties:
        argv += ["--property", prop]
    rc = main(argv)
    doc = json.loads(report.read_text())
    # found within the default profile's 100 examples per unit (the rest is shrinking)
    assert doc["profile"] == "default" and doc["max_examples"] is None, doc
    return rc, doc["units"]


def run_first_unit(bug: str, seed: int) -> list[dict[str, Any]]:
    """Run the unit that shows ``bug`` first, in-process with the default profile; the
    result in the report's form."""
    apis = load_apis(bug_config(bug))
    only = [f"shipments::{EXPECTED[bug].first}"]
    results = [e.result for e in run(apis, seed=seed, database="none", only=only)
               if isinstance(e, UnitFinished)]
    assert [r.unit.id for r in results] == only
    return [{"id": r.unit.id, "status": str(r.status), "message": r.message,
             "counterexample": r.counterexample and r.counterexample.to_json()}
            for r in results]


def check_caught(bug: str, units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assert ``units`` show ``bug`` caught, and only where it can show; return the
    failed units."""
    expect = EXPECTED[bug]
    failed = [u for u in units if u["status"] != "passed"]
    assert failed, f"{bug} not caught: {[u['id'] for u in units]}"
    for unit in failed:
        assert unit["status"] == "failed", unit["message"]
        assert unit["id"] not in expect.clean, unit["message"]
        cx = unit["counterexample"]
        paths = {row["path"] for row in cx["diff"]}
        if paths:
            assert paths <= expect.paths, (unit["id"], cx["diff"])
        else:
            assert expect.error and expect.error in cx["error"], (unit["id"], cx["error"])
    return failed


@pytest.mark.parametrize("prop", [
    "roundtrip",
    # each takes as long again (6-15 s on a loaded 2-core machine): --run-slow
    pytest.param("valid", marks=pytest.mark.slow),
    pytest.param("no_mutation", marks=pytest.mark.slow),
    pytest.param("path_independent", marks=pytest.mark.slow),
])
def test_correct_converter_passes_every_unit(
        prop: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    rc = main([*fuzz_args(SOUND), "--seed", str(SEED), "--report", str(report),
               "--property", prop])
    doc = json.loads(report.read_text())
    problems = {u["id"]: u["message"] for u in doc["units"] if u["status"] != "passed"}
    assert rc == 0 and not problems, problems
    # every ordered pair of the three versions (for path_independent: ordered triple)
    assert len(doc["units"]) == 6 and {u["property"] for u in doc["units"]} == {prop}
    assert all(u["examples"] == 100 for u in doc["units"])
    assert "6 passed" in capsys.readouterr().err


@pytest.mark.parametrize("bug", BUGS)
def test_seeded_bug_is_caught_with_a_minimal_counterexample(bug: str) -> None:
    (unit,) = check_caught(bug, run_first_unit(bug, SEED))
    cx = unit["counterexample"]
    assert cx["shrunk"]
    assert set(cx["object"]) == {"apiVersion", "kind", "spec"}  # metadata shrunk away
    assert len(cx["object"]["spec"]) <= 1, cx["object"]  # one field (or none) shows it


def _fuzz_and_replay(bug: str, seed: int, out: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    """``compatfuzz fuzz`` catches ``bug``; each counterexample file it wrote replays as
    still failing with the bug's config and passes with the correct converter's."""
    rc, units = fuzz_bug(bug, seed, out)
    assert rc == 1
    for unit in check_caught(bug, units):
        cx_file = unit["counterexample_file"]
        assert Path(cx_file).parent == out / "compatfuzz-counterexamples"
        capsys.readouterr()
        assert main([*fuzz_args(bug_config(bug)), "--replay", cx_file]) == 1
        assert "still failing" in capsys.readouterr().err
        assert main([*fuzz_args(SOUND), "--replay", cx_file]) == 0
        assert "passes now" in capsys.readouterr().err


def test_cli_catches_a_bug_and_its_counterexample_files_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fuzz_and_replay(CLI_BUG, SEED, tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("bug", BUGS)
def test_seeded_bug_is_caught_whatever_the_seed(bug: str) -> None:
    """The claim is statistical: the first unit catches each bug on more seeds."""
    for seed in SLOW_SEEDS:
        check_caught(bug, run_first_unit(bug, seed))


@pytest.mark.slow
@pytest.mark.parametrize("bug", BUGS)
def test_cli_catches_every_bug_only_where_it_can_show_and_replays(
        bug: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every unit of the properties that catch a bug: it fails only where the bug can
    reach, and every counterexample file replays."""
    _fuzz_and_replay(bug, SEED, tmp_path, capsys)


def test_pytest_plugin_fails_the_bug_and_passes_the_fix(pytester: pytest.Pytester) -> None:
    for name in ("crd.yaml", "conversion.py", "bugs.py", "compatfuzz.toml",
                 "bug_critical_becomes_high.toml"):
        shutil.copy(SHIPMENTS / name, pytester.path / name)
    unit = "shipments::roundtrip[v1->v1alpha1]"
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", f"--compatfuzz-seed={SEED}",
        f"bug_critical_becomes_high.toml::{unit}", f"compatfuzz.toml::{unit}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*spec.priority: changed: \"Critical\" -> \"High\"*",
        "FAILED bug_critical_becomes_high.toml::shipments::roundtrip[[]v1->v1alpha1[]]*",
    ])
