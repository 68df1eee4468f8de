"""``compatfuzz init cadwyn:module:bundle``: a compatfuzz.toml with ``cadwyn = ...`` that
loads and runs, the number of properties fuzz will run, and clear mistakes (issue 20,
item 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("cadwyn")

from compatfuzz.cadwyn._suite import CadwynSuite
from compatfuzz.cli import main
from compatfuzz.roundtrip import load_config

SHOP = Path(__file__).resolve().parents[2] / "examples" / "cadwyn_shop"


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(SHOP / "shop", tmp_path / "shop")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_writes_a_config_that_loads_and_runs(shop: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (shop / "shop" / "app.py").unlink()  # the bundle alone: the bundle form
    assert main(["init", "cadwyn:shop.versions:version_bundle"]) == 0
    err = capsys.readouterr().err
    # Customer, used both ways, three old versions: 3 valid up, 3 valid down, 3 round trips;
    # CustomerResource, returned only: 3 valid down; the migration code of the two versions
    # with VersionChanges
    assert ("14 properties to check (schemas: Customer, CustomerResource; versions: "
            "2023-01-01, 2023-06-01, 2024-01-01 against head; the VersionChange code of 2 "
            "versions); next: compatfuzz fuzz\n") in err
    keys = [line.split("#")[0].strip() for line in
            (shop / "compatfuzz.toml").read_text().splitlines() if not line.startswith("#")]
    assert [k for k in keys if k] == ["[[api]]", 'name = "shop"',
                                      'cadwyn = "shop.versions:version_bundle"']
    (suite,) = load_config(shop / "compatfuzz.toml")
    assert isinstance(suite, CadwynSuite) and suite.name == "shop"
    assert sorted(p.name for p in shop.iterdir()) == ["compatfuzz.toml", "shop"]  # no stub
    assert main(["fuzz", "--database", "none", "--max-examples", "10", "--seed", "1"]) == 0
    assert "14 passed" in capsys.readouterr().err


def test_init_takes_the_cadwyn_app_and_a_name(shop: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "cadwyn:shop.app:app", "--name", "store"]) == 0
    assert ("20 properties to check (routes: create_customer, get_customer; resources used "
            "through the app as clients do: customers;") in \
        capsys.readouterr().err
    (suite,) = load_config(shop / "compatfuzz.toml")
    assert suite.name == "store"


@pytest.mark.parametrize(("args", "message"), [
    (["cadwyn:shop.versions:version_bundle@head"],
     "expected cadwyn:module:bundle, got 'cadwyn:shop.versions:version_bundle@head'"),
    (["cadwyn:shop.versions"], "expected cadwyn:module:bundle"),
    (["cadwyn:shop.versions:version_bundle", "cadwyn:shop.lossy:version_bundle"],
     "a Cadwyn bundle is the whole API"),
    (["cadwyn:shop.versions:version_bundle", "--convert", "conv:convert"],
     "a Cadwyn bundle's converters are its own migrations"),
    (["cadwyn:shop.schemas:Customer"], "Expected a cadwyn.VersionBundle or a cadwyn.Cadwyn app"),
])
def test_init_mistakes(shop: Path, args: list[str], message: str,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "fix:" in err and "Traceback" not in err


def test_init_writes_the_app_that_serves_the_bundle(shop: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "cadwyn:shop.versions:version_bundle"]) == 0
    err = capsys.readouterr().err
    assert "found shop.app:app, the Cadwyn app serving this bundle, and wrote " \
           'cadwyn = "shop.app:app"' in err, err
    assert "resources used through the app as clients do: customers" in err
    text = (shop / "compatfuzz.toml").read_text()
    assert '\ncadwyn = "shop.app:app"' in text  # the app form
    commented = next(line for line in text.splitlines() if line.startswith('# cadwyn = "'))
    assert commented.startswith('# cadwyn = "shop.versions:version_bundle"')
    (suite,) = load_config(shop / "compatfuzz.toml")
    assert [r.name for r in suite.api.routes] == ["create_customer", "get_customer"]
    # uncommented instead of the app line, it loads as the bundle form
    (shop / "compatfuzz.toml").write_text(
        text.replace('\ncadwyn = "shop.app:app"', "\n#")
        .replace('# cadwyn = "shop.versions', 'cadwyn = "shop.versions'))
    (suite,) = load_config(shop / "compatfuzz.toml")
    assert suite.api.routes == ()


def test_init_without_an_app_says_nothing_of_one(shop: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (shop / "shop" / "app.py").unlink()
    assert main(["init", "cadwyn:shop.versions:version_bundle"]) == 0
    assert "found" not in capsys.readouterr().err
    assert "shop.app" not in (shop / "compatfuzz.toml").read_text()


def test_find_app_takes_one_app_under_any_name_and_refuses_two(shop: Path) -> None:
    from compatfuzz.cadwyn._discover import find_app

    load_config_text = '[[api]]\nname = "s"\ncadwyn = "shop.versions:version_bundle"\n'
    (shop / "compatfuzz.toml").write_text(load_config_text)
    (suite,) = load_config(shop / "compatfuzz.toml")  # puts the copy first on sys.path
    bundle = suite.api.bundle
    # re-exported by the package: still one app
    (shop / "shop" / "__init__.py").write_text("from shop.app import app  # Cadwyn(\n")
    assert find_app(bundle, "shop.versions", shop) in ("shop:app", "shop.app:app")
    # a second app serving the same bundle: which one is meant is not ours to guess
    # (built as shop/app.py builds its app: Cadwyn 8 warns unless its changelog is off)
    (shop / "shop" / "other.py").write_text(
        "from cadwyn import Cadwyn\nfrom shop.app import _CHANGELOG_OFF\n"
        "from shop.versions import version_bundle\n"
        "other = Cadwyn(versions=version_bundle, **_CHANGELOG_OFF)\n")
    assert find_app(bundle, "shop.versions", shop) is None
