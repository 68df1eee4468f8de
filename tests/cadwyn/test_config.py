"""``[[api]] cadwyn = "module:bundle"`` in compatfuzz.toml: examples/cadwyn_shop through
``load_config``/``run`` and the CLI (the correct bundle passes, the lossy one fails with the
VersionChange and migration named, and replays), and a bad value is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cadwyn")

from compatfuzz.cli import main
from compatfuzz.roundtrip import UnitFinished, load_config, run

SHOP = Path(__file__).resolve().parents[2] / "examples" / "cadwyn_shop"
SEED = 3


def _results(config: Path) -> dict[str, object]:
    events = run(load_config(config), seed=SEED, database="none")
    return {e.result.unit.id: e.result for e in events if isinstance(e, UnitFinished)}


def test_the_app_form_checks_each_route() -> None:
    # the app serves (Cadwyn starts it only when each response migration finds a route)
    # and each route's units pass
    results = _results(SHOP / "app.toml")
    assert len(results) == 9
    failed = {uid: r.message for uid, r in results.items() if str(r.status) != "passed"}
    assert not failed, failed


def test_the_correct_bundle_passes_every_unit() -> None:
    results = _results(SHOP / "compatfuzz.toml")
    versions = ("2023-01-01", "2023-06-01", "2024-01-01")
    # Customer has migrations both ways; CustomerResource (what the routes return) only
    # response ones
    assert sorted(results) == sorted(
        [f"shop::Customer::roundtrip[{v}->head]" for v in versions]
        + [f"shop::Customer::valid[{a}->{b}]" for v in versions
           for a, b in ((v, "head"), ("head", v))]
        + [f"shop::CustomerResource::valid[head->{v}]" for v in versions])
    failed = {uid: r.message for uid, r in results.items() if str(r.status) != "passed"}
    assert not failed, failed


def test_the_lossy_bundle_fails_naming_the_version_change(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    report = tmp_path / "report.json"
    config = SHOP / "lossy.toml"
    rc = main(["fuzz", "--config", str(config), "--database", "none", "--seed", str(SEED),
               "--report", str(report)])
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert rc == 1
    assert "FAIL    shop::Customer::roundtrip[2023-01-01->head]" in out
    assert "SplitNameAndRenameEmail.split_name (version 2023-06-01)" in out
    assert "1 failed, 11 passed" in out
    saved = next((tmp_path / "compatfuzz-counterexamples").glob("*.json"))
    assert main(["fuzz", "--config", str(config), "--database", "none",
                 "--replay", str(saved)]) == 1
    # the replayed unit is named as the run named it, schema included
    assert "replaying shop::Customer::roundtrip[2023-01-01->head] on" in capsys.readouterr().err
    assert main(["fuzz", "--config", str(SHOP / "compatfuzz.toml"), "--database", "none",
                 "--replay", str(saved)]) == 0


def test_a_value_that_is_no_bundle_names_the_file_and_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "compatfuzz.toml"
    (tmp_path / "shopmodels.py").write_text("from pydantic import BaseModel\n\n\n"
                                            "class Customer(BaseModel):\n    name: str\n")
    config.write_text('[[api]]\nname = "shop"\ncadwyn = "shopmodels:Customer"\n')
    assert main(["fuzz", "--config", str(config), "--database", "none"]) == 2
    err = capsys.readouterr().err
    assert "at $.api[0].cadwyn: Expected a cadwyn.VersionBundle or a cadwyn.Cadwyn app" in err
    assert 'fix: point at the VersionBundle or the Cadwyn app' in err
