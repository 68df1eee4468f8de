"""Request-only and response-only schemas get only their direction's units, and the
constraint Cadwyn carries over a ``had(type=...)`` (a list's ``min_length=1`` becoming a
string's) is caught on the response side: the shape of the finding on Cadwyn's tutorial
(docs/cadwyn.md)."""

from __future__ import annotations

from typing import Annotated

import pytest

pytest.importorskip("cadwyn")

from cadwyn import (
    RequestInfo,
    ResponseInfo,
    Version,
    VersionBundle,
    VersionChange,
    convert_request_to_next_version_for,
    convert_response_to_previous_version_for,
    schema,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from pydantic import BaseModel, Field

from compatfuzz.cadwyn import CadwynAPI, MigrationFailure, check_response_down, response_bodies
from compatfuzz.cadwyn._suite import CadwynSuite
from compatfuzz.roundtrip import Property


class TeamCreate(BaseModel):
    members: list[str]


class Team(BaseModel):
    members: Annotated[list[str], Field(min_length=1)]


def _bundle() -> VersionBundle:
    class MembersList(VersionChange):
        description = "a team has several members"
        instructions_to_migrate_to_previous_version = (
            schema(TeamCreate).field("members").had(name="member", type=str),
            schema(Team).field("members").had(name="member", type=str),
        )

        @convert_request_to_next_version_for(TeamCreate)
        def up(request: RequestInfo) -> None:
            request.body["members"] = [request.body.pop("member")]

        @convert_response_to_previous_version_for(Team)
        def down(response: ResponseInfo) -> None:
            response.body["member"] = response.body.pop("members")[0]

    return VersionBundle(Version("2001-01-01", MembersList), Version("2000-01-01"))


def test_units_follow_the_schemas_roles() -> None:
    api = CadwynAPI(_bundle())
    assert api.roles(TeamCreate) == {"request"}
    assert api.roles(Team) == {"response"}
    units = {u.id for u in CadwynSuite("teams", api).units(list(Property))}
    assert units == {
        "teams::TeamCreate::valid[2000-01-01->head]", "teams::TeamCreate::valid[2001-01-01->head]",
        "teams::Team::valid[head->2000-01-01]", "teams::Team::valid[head->2001-01-01]",
        "teams::migrations[2001-01-01]"}  # the code of the one version with a change


def test_min_length_carried_from_list_to_string_is_caught() -> None:
    api = CadwynAPI(_bundle())
    # Cadwyn keeps the field's constraints when only its type changes
    assert api.model(Team, "2000-01-01").model_json_schema()["properties"]["member"][
        "minLength"] == 1
    failures: list[MigrationFailure] = []

    @hypothesis_seed(0)
    @settings(max_examples=100, database=None, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.filter_too_much])
    @given(response_bodies(api, Team))
    def run(body: dict[str, object]) -> None:
        try:
            check_response_down(api, Team, "2000-01-01", body)
        except MigrationFailure as exc:
            failures.append(exc)
            raise

    with pytest.raises(MigrationFailure):
        run()
    message = str(failures[-1])
    assert "member: String should have at least 1 character (got '')" in message
    assert "MembersList.down (version 2001-01-01)" in message


class Person(BaseModel):
    pass


class PersonCreate(Person):
    nickname: str


def test_a_base_class_named_only_for_its_subclasses_is_no_schema() -> None:
    class NicknameWasName(VersionChange):
        description = "name -> nickname, on every Person"
        instructions_to_migrate_to_previous_version = (
            schema(Person).field("name").existed_as(type=str),
            schema(PersonCreate).field("nickname").didnt_exist,
        )

        @convert_request_to_next_version_for(PersonCreate)
        def up(request: RequestInfo) -> None:
            request.body["nickname"] = request.body.pop("name")

    api = CadwynAPI(VersionBundle(Version("2001-01-01", NicknameWasName),
                                  Version("2000-01-01")))
    # Person alone would fail valid[head->2000-01-01]: no migration adds its `name`
    assert api.schemas == (PersonCreate,)
