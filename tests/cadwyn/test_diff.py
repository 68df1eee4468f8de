"""``compatfuzz diff cadwyn:module:bundle@VERSION ...``: one version of a bundle in two
releases of the service (``--old-path``/``--new-path``) or two versions of one bundle,
schema by schema, each schema in the direction its migrations say, with witnesses; bad
specs exit 2 naming the spec and the fix (issue 20, item 3)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cadwyn")

from hypothesis import given, settings
from hypothesis import strategies as st

# imported here, not first inside a @given test: compatfuzz.roundtrip registers its
# Hypothesis profiles on import, which Hypothesis refuses under an active @settings
import compatfuzz.cadwyn  # noqa: F401
from compatfuzz._commands._cadwyninput import cadwyn_events
from compatfuzz.cli import main
from compatfuzz.compat import Finished

SHOP = Path(__file__).resolve().parents[2] / "examples" / "cadwyn_shop"
BUNDLE = "cadwyn:shop.versions:version_bundle"
VERSIONS = ("2023-01-01", "2023-06-01", "2024-01-01", "head")


@pytest.fixture(autouse=True)
def _in_shop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SHOP)  # modules resolve from the working directory


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    rc = main(["diff", *args, "--config", "none", "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def _rows(doc: dict[str, Any]) -> dict[tuple[str, str, str], tuple[bool, str, str | None]]:
    return {(f["version"], f["rule"], f["path"]):
            (f["breaking"], f["status"], (f["witness"] or {}).get("side"))
            for f in doc["findings"]}


def test_a_release_that_changes_an_existing_version_is_caught(
        capsys: pytest.CaptureFixture[str]) -> None:
    """next_release/ adds an enum member and a max_length at HEAD with no VersionChange:
    2023-01-01's contract changed, in both directions."""
    spec = f"{BUNDLE}@2023-01-01"
    rc, doc = _diff(capsys, "--new-path", "next_release", spec, spec)
    # Customer's two, and the enum member again for CustomerResource, what the routes return
    assert rc == 1 and doc["breaking"] == 3
    rows = _rows(doc)
    assert any(k[0].startswith("CustomerResource") and k[1:] == ("enum-value-added", "tier")
               for k in rows)
    # old clients are sent a tier they do not know ...
    assert rows[("Customer", "enum-value-added", "tier")] == (True, "confirmed", "response")
    # ... and a long email they could send is refused (`email` is 2023-01-01's name)
    assert rows[("Customer", "bound-tightened", "email")] == (True, "confirmed", "request")
    # rolled back, each breaks the other way: a client of the release sends platinum
    rc, doc = _diff(capsys, "--old-path", "next_release", spec, spec)
    rows = _rows(doc)
    assert rc == 1 and doc["breaking"] == 3
    assert rows[("Customer", "enum-value-removed", "tier")] == (True, "confirmed", "request")
    assert rows[("Customer", "bound-relaxed", "email")] == (True, "confirmed", "response")


def test_two_releases_import_side_by_side_and_leave_sys_modules_as_they_were(
        capsys: pytest.CaptureFixture[str]) -> None:
    before = {m: sys.modules[m] for m in sys.modules if m == "shop" or m.startswith("shop.")}
    spec = f"{BUNDLE}@head"
    rc, doc = _diff(capsys, "--old-path", ".", "--new-path", "next_release", spec, spec)
    # at head credit_limit is a Decimal: the request and response shapes differ
    assert rc == 1 and ("Customer.response", "enum-value-added", "tier") in _rows(doc)
    after = {m: sys.modules[m] for m in sys.modules if m == "shop" or m.startswith("shop.")}
    assert after == before


def test_a_migration_only_change_keeps_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    """shop.lossy differs from shop.versions in a migration, not in any version's schema."""
    for version in VERSIONS:
        rc, doc = _diff(capsys, f"{BUNDLE}@{version}",
                        f"cadwyn:shop.lossy:version_bundle@{version}")
        assert (rc, doc["findings"]) == (0, []), version


def test_two_versions_of_one_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _diff(capsys, f"{BUNDLE}@2023-01-01", f"{BUNDLE}@2023-06-01")
    assert rc == 1 and doc["direction"] == "both"
    rows = _rows(doc)
    # a 2023-01-01 client's body has no first_name: 2023-06-01 refuses it
    assert rows[("Customer", "required-added", "first_name")] == (True, "confirmed", "request")
    # and 2023-06-01 returns no `name`, which a 2023-01-01 client requires
    assert rows[("Customer", "required-removed", "name")] == (True, "confirmed", "response")


@settings(max_examples=4, deadline=None)
@given(st.sampled_from(VERSIONS))
def test_every_version_is_compatible_with_itself(version: str) -> None:
    spec = f"{BUNDLE}@{version}"
    finished = [e for e in cadwyn_events(spec, spec, "auto", budget=20, whole_budget=20)
                if isinstance(e, Finished)]
    # one comparison per schema (Customer, CustomerResource) and per shape (request and
    # response) where the two differ
    assert 2 <= len(finished) <= 4
    assert all(e.findings == () for e in finished)


TEAMS = '''
from cadwyn import (Version, VersionBundle, VersionChange, convert_request_to_next_version_for,
                    convert_response_to_previous_version_for, schema)
from pydantic import BaseModel


class TeamCreate(BaseModel):
    members: list[str]
    motto: str


class Team(BaseModel):
    members: list[str]
    motto: str


class MottoIsRequired(VersionChange):
    description = "a team has a motto"
    instructions_to_migrate_to_previous_version = (
        schema(TeamCreate).field("motto").didnt_exist,
        schema(Team).field("motto").didnt_exist,
    )

    @convert_request_to_next_version_for(TeamCreate)
    def default_motto(request):
        request.body["motto"] = "ours"

    @convert_response_to_previous_version_for(Team)
    def drop_motto(response):
        response.body.pop("motto")


bundle = VersionBundle(Version("2001-01-01", MottoIsRequired), Version("2000-01-01"))
'''


def test_each_schema_is_compared_in_its_own_direction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A request body only in requests, a response model only in responses: the same change
    (a new required field) breaks the first and not the second."""
    (tmp_path / "teams_bundle.py").write_text(textwrap.dedent(TEAMS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc, doc = _diff(capsys, "cadwyn:teams_bundle:bundle@2000-01-01",
                    "cadwyn:teams_bundle:bundle@2001-01-01")
    assert rc == 1
    rows = _rows(doc)
    assert {key[0] for key in rows} == {"TeamCreate.request", "Team.response"}
    assert rows[("TeamCreate.request", "required-added", "motto")][:2] == (True, "confirmed")
    assert not rows[("Team.response", "required-added", "motto")][0]
    # --schema picks one; --direction overrides the roles
    rc, doc = _diff(capsys, "cadwyn:teams_bundle:bundle@2000-01-01",
                    "cadwyn:teams_bundle:bundle@2001-01-01", "--schema", "Team")
    assert rc == 0 and {f["version"] for f in doc["findings"]} == {"Team.response"}
    rc, doc = _diff(capsys, "cadwyn:teams_bundle:bundle@2000-01-01",
                    "cadwyn:teams_bundle:bundle@2001-01-01", "--schema", "Team",
                    "--direction", "request")
    assert rc == 1 and {f["version"] for f in doc["findings"]} == {"Team.request"}


@pytest.mark.parametrize("output_format", ["text", "github", "sarif"])
def test_every_output_format(capsys: pytest.CaptureFixture[str], output_format: str) -> None:
    spec = f"{BUNDLE}@2023-01-01"
    rc = main(["diff", "--new-path", "next_release", spec, spec, "--config", "none",
               "--format", output_format])
    out = capsys.readouterr().out
    assert rc == 1 and "platinum" in out and "Customer:email" in out


@pytest.mark.parametrize(("args", "message", "fix"), [
    ([f"{BUNDLE}@2023-01-02", f"{BUNDLE}@head"],
     "the bundle has no version '2023-01-02'; its versions are 2023-01-01, 2023-06-01, "
     "2024-01-01, head", "did you mean '2023-01-01'?"),
    ([BUNDLE, f"{BUNDLE}@head"], f"expected cadwyn:module:bundle@VERSION, got '{BUNDLE}'",
     "VERSION one of the bundle's versions"),
    (["cadwyn:shop.schemas:Customer@head", f"{BUNDLE}@head"],
     "Expected a cadwyn.VersionBundle or a cadwyn.Cadwyn app", "name the VersionBundle"),
    (["cadwyn:shop.versions:version_bundl@head", f"{BUNDLE}@head"],
     "has no function 'version_bundl'", "fix:"),
    ([f"{BUNDLE}@head", "pydantic:shop.schemas:Customer"],
     "one revision is a Cadwyn version, the other is not", "fix: compare two versions"),
    (["--schema", "Custmer", f"{BUNDLE}@head", f"{BUNDLE}@head"],
     "--schema Custmer: no schema of that name in both bundles; they share Customer",
     "did you mean --schema Customer?"),
    (["--old-path", "nowhere", f"{BUNDLE}@head", f"{BUNDLE}@head"],
     "nowhere is not a folder", "--old-path"),
    (["--new-path", "shop", f"{BUNDLE}@head", f"{BUNDLE}@head"],
     "shop has no shop/ or shop.py to import 'shop.versions' from", "src/ folder"),
    (["--apiserver", "real", f"{BUNDLE}@head", f"{BUNDLE}@head"],
     "a Cadwyn API has none", "fix: drop --apiserver"),
    (["--old-path", ".", "pydantic:shop.schemas:Customer", "pydantic:shop.schemas:Customer"],
     "--old-path applies to Cadwyn revisions", "fix: drop it"),
])
def test_bad_specs_are_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str],
                                    message: str, fix: str) -> None:
    assert main(["diff", *args, "--config", "none"]) == 2
    err = capsys.readouterr().err
    assert message in err and fix in err and "Traceback" not in err
