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


@pytest.mark.extended  # ~12 s of shop routes; test_route_properties.py has route units
def test_the_app_form_checks_each_route() -> None:
    # the app serves (Cadwyn starts it only when each response migration finds a route)
    # and each route's units pass, and the customers resource's through the app: 3
    # write_then_read, 6 cross_version
    results = _results(SHOP / "app.toml")
    assert len(results) == 9 + 2 + 3 + 6  # and migrations[2023-06-01], [2024-01-01]
    assert "shop::customers::cross_version[2023-01-01->2024-01-01]" in results
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
        + [f"shop::CustomerResource::valid[head->{v}]" for v in versions]
        + [f"shop::migrations[{v}]" for v in versions[1:]])
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
    assert "1 failed, 13 passed" in out
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


def test_an_accepted_difference_passes_the_lossy_bundle(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    import shutil

    shutil.copytree(SHOP / "shop", tmp_path / "shop",
                    ignore=shutil.ignore_patterns("__pycache__"))
    config = tmp_path / "compatfuzz.toml"
    config.write_text((SHOP / "accepted.toml").read_text())  # lossy.toml, its loss accepted
    report = tmp_path / "report.json"
    rc = main(["fuzz", "--config", str(config), "--database", "none", "--seed", str(SEED),
               "--report", str(report)])
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert rc == 0, out
    assert "accepted: shop: name (roundtrip, 2023-01-01->head)" in out
    import json

    (row,) = json.loads(report.read_text())["accepted"]
    assert row["units"] == ["shop::Customer::roundtrip[2023-01-01->head]"]
    # a version the bundle does not have is named at its key
    config.write_text(config.read_text().replace('"2023-01-01->head"', '"2023-01-02->head"'))
    assert main(["fuzz", "--config", str(config), "--database", "none"]) == 2
    err = capsys.readouterr().err
    assert "at $.api[0].accept[0].versions" in err and "did you mean '2023-01-01'?" in err


def test_the_extra_brings_what_fastapi_s_testclient_needs() -> None:
    # starlette 1.10+ imports httpx2 and warns (an error here) on httpx alone: the cadwyn
    # extra installs both, so a user's route tests run beside compatfuzz's
    from starlette.testclient import TestClient

    load_config(SHOP / "app.toml")  # puts examples/cadwyn_shop on sys.path
    from shop.app import app  # type: ignore[import-not-found]

    old = {"x-api-version": "2023-01-01"}
    with TestClient(app) as client:
        made = client.post("/customers", headers=old,
                           json={"name": "Cher", "email": "c@x", "credit_limit": 5})
        assert made.status_code == 200, made.text
        read = client.get(f"/customers/{made.json()['id']}", headers=old)
    assert read.status_code == 200
    assert read.json()["name"] == "Cher" and read.json()["email"] == "c@x"
