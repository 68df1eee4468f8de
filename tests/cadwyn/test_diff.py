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
    rc, doc = _diff(capsys, f"{BUNDLE}@2023-06-01", f"{BUNDLE}@2024-01-01")
    assert rc == 1 and doc["direction"] == "both"
    rows = _rows(doc)
    # 2024-01-01 returns credit_limit as a decimal string, which a 2023-06-01 client refuses
    assert rows[("Customer.response", "type-changed", "credit_limit")] == (
        True, "confirmed", "response")
    made = {(f["version"], f["path"]): f["made_by"] for f in doc["findings"]}
    assert made[("Customer.response", "credit_limit")] == (
        "WidenCreditLimitAndRemoveFax (version 2024-01-01)")
    assert made[("CustomerResource.response", "fax")] == (
        "WidenCreditLimitAndRemoveFax (version 2024-01-01)")


def test_a_rename_between_versions_is_one_finding_that_warns(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``field("email_address").had(name="email")``: not `email` removed beside a required
    `email_address` added, but one rename, which Cadwyn migrates (each version keeps its
    own names), so it warns and the run passes."""
    rc, doc = _diff(capsys, f"{BUNDLE}@2023-01-01", f"{BUNDLE}@2023-06-01")
    assert rc == 0 and doc["breaking"] == 0
    found = {(f["version"], f["rule"], f["path"]): f for f in doc["findings"]}
    for old, new in (("name", "first_name"), ("email", "email_address")):
        f = found[("Customer", "field-renamed", old)]
        assert (f["old"], f["new"], f["severity"], f["status"]) == (
            old, new, "warning", "confirmed")
        assert f["made_by"] == "SplitNameAndRenameEmail (version 2023-06-01)"
        assert "Cadwyn migrates" in f["policy"] and "Cadwyn migrates" in f["message"]
        assert ("CustomerResource.response", "field-renamed", old) in found
    assert not {key for key in found if key[1] in ("field-removed", "required-added",
                                                  "required-removed", "witness-only")}
    # the policy has the last word: an error again, and the run fails
    rc, doc = _diff(capsys, f"{BUNDLE}@2023-01-01", f"{BUNDLE}@2023-06-01",
                    "--severity", "field-renamed=error")
    assert rc == 1 and doc["breaking"] == 4


def test_findings_speak_of_requests_and_responses(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["diff", f"{BUNDLE}@2023-06-01", f"{BUNDLE}@2024-01-01", "--config", "none"])
    out = capsys.readouterr().out
    assert rc == 1
    assert ("impact: requests: old clients' requests that were valid are refused (422)"
            in out)
    assert "impact: responses: old clients may reject what they read" in out
    assert "made by: WidenCreditLimitAndRemoveFax (version 2024-01-01)" in out
    assert "policy: built-in profile rest: type-changed = error (its severity)" in out
    for word in ("kubernetes", "custom resource", "ratcheting", "stored object",
                 "any-update"):
        assert word not in out.lower(), word
    rc, doc = _diff(capsys, f"{BUNDLE}@2023-06-01", f"{BUNDLE}@2024-01-01")
    assert doc["policy"] == "rest"
    # a response model's type change refuses no request
    notes = {(f["version"], f["rule"]): f["impact_note"] for f in doc["findings"]}
    assert notes[("Customer.response", "type-changed")] == (
        "old clients may reject what they read")


def test_a_contract_change_at_head_is_made_by_head(capsys: pytest.CaptureFixture[str]) -> None:
    spec = f"{BUNDLE}@2023-01-01"
    rc, doc = _diff(capsys, "--new-path", "next_release", spec, spec)
    made = {(f["version"], f["rule"]): f["made_by"] for f in doc["findings"]}
    assert rc == 1 and made[("Customer", "bound-tightened")] == (
        "HEAD (shop.schemas.Customer), with no VersionChange to keep 2023-01-01 as it was")
    assert made[("CustomerResource.response", "enum-value-added")].startswith(
        "HEAD (shop.schemas.CustomerResource)")


def test_a_rename_between_two_releases_of_one_version_breaks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The next release edits a VersionChange: 2000-01-01 calls `email_address` `mail`, no
    longer `email`. Within a release Cadwyn migrates the rename; across releases the
    contract of 2000-01-01 changed."""
    for release, old_name in (("old", "email"), ("new", "mail")):
        (tmp_path / release).mkdir()
        (tmp_path / release / "people.py").write_text(
            textwrap.dedent(PEOPLE).replace("OLD_NAME", old_name), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    spec = "cadwyn:people:bundle@2000-01-01"
    rc, doc = _diff(capsys, "--old-path", "old", "--new-path", "new", spec, spec)
    assert rc == 1
    (f,) = doc["findings"]
    assert (f["rule"], f["path"], f["old"], f["new"], f["severity"]) == (
        "field-renamed", "email", "email", "mail", "error")
    assert f["made_by"] == "RenameEmail (version 2001-01-01, edited in NEW)"
    assert "both are HEAD's 'email_address'" in f["message"]
    # the same rename between the versions of one release only warns
    rc, doc = _diff(capsys, "--old-path", "new", "--new-path", "new", spec,
                    "cadwyn:people:bundle@2001-01-01")
    (f,) = doc["findings"]
    assert (rc, f["rule"], f["severity"], f["made_by"]) == (
        0, "field-renamed", "warning", "RenameEmail (version 2001-01-01)")


PEOPLE = '''
from cadwyn import (Version, VersionBundle, VersionChange, convert_request_to_next_version_for,
                    convert_response_to_previous_version_for, schema)
from pydantic import BaseModel


class Person(BaseModel):
    email_address: str
    age: int


class RenameEmail(VersionChange):
    description = "`OLD_NAME` is `email_address`"
    instructions_to_migrate_to_previous_version = (
        schema(Person).field("email_address").had(name="OLD_NAME"),
    )

    @convert_request_to_next_version_for(Person)
    def up(request):
        request.body["email_address"] = request.body.pop("OLD_NAME")

    @convert_response_to_previous_version_for(Person)
    def down(response):
        response.body["OLD_NAME"] = response.body.pop("email_address")


bundle = VersionBundle(Version("2001-01-01", RenameEmail), Version("2000-01-01"))
'''


TEAMS_APP = '''
from importlib.metadata import version

from cadwyn import (Cadwyn, Version, VersionBundle, VersionChange, VersionedAPIRouter, endpoint,
                    schema)
from pydantic import BaseModel


class Team(BaseModel):
    members: list[str]


class TeamsCanBeDeleted(VersionChange):
    description = "a team can be deleted; creating one answers 201"
    instructions_to_migrate_to_previous_version = (
        endpoint("/teams/{team_id}", ["DELETE"]).didnt_exist,
        endpoint("/teams", ["POST"]).had(status_code=200),
        schema(Team).field("members").had(description="who is in"),  # the bundle knows Team
    )


router = VersionedAPIRouter()


@router.post("/teams", response_model=Team, status_code=201)
async def create_team(team: Team) -> Team:
    return team


@router.delete("/teams/{team_id}")
async def delete_team(team_id: int) -> None:
    return None


bundle = VersionBundle(Version("2001-01-01", TeamsCanBeDeleted), Version("2000-01-01"))
# Cadwyn 8 warns unless its changelog is off (an error under the tests' filterwarnings)
_OFF = {"changelog_url": None} if int(version("cadwyn").split(".")[0]) < 9 else {}
app = Cadwyn(versions=bundle, **_OFF)
app.generate_and_include_versioned_routers(router)
'''


def test_the_app_s_routes_are_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "teams_app.py").write_text(textwrap.dedent(TEAMS_APP), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    new, old = "cadwyn:teams_app:app@2001-01-01", "cadwyn:teams_app:app@2000-01-01"
    # a 2001-01-01 client moving back to 2000-01-01 loses DELETE and its 201
    rc, doc = _diff(capsys, new, old)
    rows = {(f["rule"], f["path"]): f for f in doc["findings"]}
    assert rc == 1 and set(rows) == {("route-removed", "DELETE /teams/{team_id}"),
                                     ("route-status-changed", "POST /teams")}
    removed = rows[("route-removed", "DELETE /teams/{team_id}")]
    assert (removed["version"], removed["severity"], removed["impact"]) == (
        "routes", "error", "any-update")
    assert removed["made_by"] == "TeamsCanBeDeleted (version 2001-01-01)"
    status = rows[("route-status-changed", "POST /teams")]
    assert (status["old"], status["new"], status["severity"]) == (201, 200, "warning")
    # the other way the route is new: info, and the run passes
    rc, doc = _diff(capsys, old, new)
    assert rc == 0 and {(f["rule"], f["severity"]) for f in doc["findings"]} == {
        ("route-added", "info"), ("route-status-changed", "warning")}
    rc = main(["diff", new, old, "--config", "none"])
    assert "impact: requests: old clients' calls to it are answered 404 or 405" in (
        capsys.readouterr().out)
    # a bundle has no routes: said so when the other side is the app
    rc = main(["diff", "cadwyn:teams_app:bundle@2001-01-01", old, "--config", "none"])
    assert rc == 0 and "routes not compared: OLD names the VersionBundle" in (
        capsys.readouterr().err)


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
