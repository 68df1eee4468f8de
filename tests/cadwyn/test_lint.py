"""Static checks of VersionChange code (``compatfuzz.cadwyn._lint``): each seeded bug of
``data/static_bugs.py`` is one finding naming the class, the function, the file and the
line; correct bundles (the shop example, the tutorial's) have none; and a run reports them
as the ``migrations[<version>]`` unit's failure before any example."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cadwyn")

from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.cadwyn import CadwynAPI
from compatfuzz.cadwyn._lint import findings
from compatfuzz.cli import main

DATA = Path(__file__).parent / "data"
SHOP = Path(__file__).resolve().parents[2] / "examples" / "cadwyn_shop"
_counter = itertools.count()


def _load(path: Path, monkeypatch: pytest.MonkeyPatch | None = None, bug: str = "") -> Any:
    """``path`` imported as a fresh module (``STATIC_BUG=bug`` while it runs)."""
    name = f"_compatfuzz_lint_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect finds the source of its classes through it
    if monkeypatch is not None:
        monkeypatch.setenv("STATIC_BUG", bug)
    spec.loader.exec_module(module)
    return module


def _findings(monkeypatch: pytest.MonkeyPatch, bug: str) -> list[Any]:
    module = _load(DATA / "static_bugs.py", monkeypatch, bug)
    return findings(CadwynAPI(module.version_bundle))


def test_the_correct_changes_have_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    # a same-named def in the branch not taken shadows nothing
    assert _findings(monkeypatch, "") == []


def test_a_second_def_of_the_same_name_is_reported_at_the_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    (found,) = _findings(monkeypatch, "shadowed")
    source = (DATA / "static_bugs.py").read_text().splitlines()
    assert found.check == "shadowed"
    assert (found.version_change, found.function, found.version) == (
        "AddDisplayAndNick", "drop_display_name", "2024-01-01")
    assert found.file == str(DATA / "static_bugs.py")
    assert source[found.line - 1].strip().startswith("def drop_display_name")
    second = [i + 1 for i, line in enumerate(source) if "def drop_display_name" in line][1]
    assert f"replaced by the `def drop_display_name` at line {second}" in found.message
    assert "Cadwyn registers only the last" in found.message


def test_a_response_migration_reading_the_old_name_is_told_its_direction(
        monkeypatch: pytest.MonkeyPatch) -> None:
    (found,) = _findings(monkeypatch, "wrong-direction")
    assert (found.check, found.version_change, found.function) == (
        "wrong-direction", "RenameEmail", "unrename_email")
    assert "reads `email`, which the 2023-01-01 Account body a response migration " \
           "receives does not have (2022-01-01's has it)" in found.message
    assert "read the new names and write the old ones" in found.hint
    line = (DATA / "static_bugs.py").read_text().splitlines()[found.line - 1]
    assert 'response.body.pop("email")' in line


def test_a_key_no_version_has_gets_the_closest_name(monkeypatch: pytest.MonkeyPatch) -> None:
    (found,) = _findings(monkeypatch, "unknown-field")
    assert (found.check, found.function) == ("unknown-field", "drop_nickname")
    assert "reads `nick_name`, which no version of Account has" in found.message
    assert found.hint.startswith("did you mean `nickname`?")


def test_the_example_and_tutorial_bundles_have_no_finding() -> None:
    from tests.cadwyn._tutorial import BUGS, make_bundle

    for bug in (None, *BUGS):  # the seeded bugs are behaviour, not code a reader sees
        assert findings(CadwynAPI(make_bundle(bug))) == [], bug
    from compatfuzz.roundtrip import load_config

    load_config(SHOP / "compatfuzz.toml")  # puts examples/cadwyn_shop on sys.path
    from shop import lossy, versions  # type: ignore[import-not-found]

    for module in (versions, lossy):
        assert findings(CadwynAPI(module.version_bundle)) == [], module.__name__


def test_a_run_fails_the_version_s_migrations_unit_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "static_bugs.py").write_text((DATA / "static_bugs.py").read_text())
    config = tmp_path / "compatfuzz.toml"
    config.write_text('[[api]]\nname = "accounts"\ncadwyn = "static_bugs:version_bundle"\n')
    monkeypatch.setenv("STATIC_BUG", "shadowed")
    monkeypatch.delitem(sys.modules, "static_bugs", raising=False)
    assert main(["fuzz", "--config", str(config), "--database", "none", "--seed", "1",
                 "--property", "migrations"]) == 1
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "[1/2] ok      accounts::migrations[2023-01-01]  (1 example," in out
    assert "FAIL    accounts::migrations[2024-01-01]" in out
    assert "static_bugs.py:58: AddDisplayAndNick.drop_display_name (version 2024-01-01)" in out
    assert "fix: give the functions different names" in out


_CLASS = '''
from cadwyn import ResponseInfo, VersionChange, convert_response_to_previous_version_for, schema
from pydantic import BaseModel


class Thing(BaseModel):
    a: str = ""
    b: str = ""


class Change(VersionChange):
    description = "b is new"
    instructions_to_migrate_to_previous_version = (schema(Thing).field("b").didnt_exist,)
{defs}
'''
_DEF = '''
    @convert_response_to_previous_version_for(Thing)
    def {name}(response: ResponseInfo) -> None:
        response.body.pop("b", None)
'''


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["drop", "hide", "strip"]), min_size=1, max_size=5))
def test_every_earlier_def_of_a_repeated_name_is_a_finding(names: list[str]) -> None:
    from cadwyn import HeadVersion, Version, VersionBundle

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "change.py"
        path.write_text(textwrap.dedent(_CLASS).format(
            defs="".join(_DEF.format(name=n) for n in names)))
        module = _load(path)
        bundle = VersionBundle(HeadVersion(), Version("2001-01-01", module.Change),
                               Version("2000-01-01"))
        found = findings(CadwynAPI(bundle))
    expected = [n for i, n in enumerate(names) if n in names[i + 1:]]
    assert sorted(f.function for f in found) == sorted(expected)
    assert {f.check for f in found} <= {"shadowed"}


def test_the_key_error_of_a_migration_run_backwards_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from compatfuzz.cadwyn import MigrationFailure

    module = _load(DATA / "static_bugs.py", monkeypatch, "wrong-direction")
    api = CadwynAPI(module.version_bundle)
    with pytest.raises(MigrationFailure) as info:
        api.response_down(module.Account, {"email_address": "a@b", "display_name": "",
                                           "nickname": ""}, "2022-01-01")
    assert "raised KeyError: 'email'" in str(info.value)
    assert ("hint: `email` is a 2022-01-01 field, and a response migration of version "
            "2023-01-01 receives the 2023-01-01 body and makes the 2022-01-01 one: does it "
            "run in the wrong direction?") in str(info.value)
    # a KeyError on a key neither side has gets no such hint
    module = _load(DATA / "static_bugs.py", monkeypatch, "unknown-field")
    with pytest.raises(MigrationFailure) as info:
        CadwynAPI(module.version_bundle).response_down(
            module.Account, {"email_address": "a@b", "display_name": "", "nickname": ""},
            "2023-01-01")
    assert "nick_name" in str(info.value) and "hint:" not in str(info.value)
