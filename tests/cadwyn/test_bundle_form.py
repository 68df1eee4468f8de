"""What the bundle form (``cadwyn = "module:bundle"``, no app) cannot know, it no longer
guesses silently: a model that only sits inside another is checked through it, path-based
migrations (a route's) are refused with the reason, and a role it has to guess or a
subclass it leaves out is a warning that points to the app form."""

from __future__ import annotations

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
from pydantic import BaseModel

from compatfuzz.cadwyn import CadwynAPI
from compatfuzz.cadwyn._suite import CadwynSuite, RoleGuessWarning
from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip import Status, UnitFinished, run


class Address(BaseModel):
    street: str
    postcode: str | None = None


class Person(BaseModel):
    name: str
    home: Address | None = None


def _nested_bundle() -> VersionBundle:
    """2000-01-01's Address had ``zip`` where HEAD has ``postcode``; Cadwyn migrates a
    schema's own body, so the migrations are Person's, reaching into ``home``."""

    class ZipToPostcode(VersionChange):
        description = "Address.zip is postcode"
        instructions_to_migrate_to_previous_version = (
            schema(Address).field("postcode").had(name="zip"),)

        @convert_request_to_next_version_for(Person)
        def up(request: RequestInfo) -> None:
            home = request.body.get("home")
            if isinstance(home, dict) and "zip" in home:
                home["postcode"] = home.pop("zip")

        @convert_response_to_previous_version_for(Person)
        def down(response: ResponseInfo) -> None:
            home = response.body.get("home")
            if isinstance(home, dict) and "postcode" in home:
                home["zip"] = home.pop("postcode")

    return VersionBundle(Version("2001-01-01", ZipToPostcode), Version("2000-01-01"))


def test_a_model_that_only_sits_inside_another_is_checked_through_it() -> None:
    api = CadwynAPI(_nested_bundle())
    assert api.schemas == (Person,)  # Address alone was drawn as a body: its zip was
    # never migrated (the migrations are Person's), a false failure
    suite = CadwynSuite("people", api)
    results = [e.result for e in run(suite, database="none", seed=1, max_examples=50)
               if isinstance(e, UnitFinished)]
    assert results and {r.status for r in results} == {Status.PASSED}, [
        r.message for r in results if r.status is not Status.PASSED]


def test_path_based_migrations_are_refused_in_the_bundle_form_with_the_reason() -> None:
    class Tag(BaseModel):
        label: str

    class LabelWasName(VersionChange):
        description = "name is label"
        instructions_to_migrate_to_previous_version = (
            schema(Tag).field("label").had(name="name"),)

        @convert_request_to_next_version_for("/tags", ["POST"])
        def up(request: RequestInfo) -> None:
            request.body["label"] = request.body.pop("name")

    api = CadwynAPI(VersionBundle(Version("2001-01-01", LabelWasName), Version("2000-01-01")))
    assert api.path_migrations() == ["LabelWasName.up (POST /tags)"]
    with pytest.raises(InvalidArgument) as info:
        CadwynSuite("tags", api)
    text = str(info.value)
    assert "path-based migrations (LabelWasName.up (POST /tags))" in text
    assert "Point cadwyn at the Cadwyn app serving the bundle" in text


def test_a_subclass_the_bundle_never_names_is_a_warning_not_a_silent_skip() -> None:
    class BaseUser(BaseModel):
        email: str

    class UserCreate(BaseUser):
        password: str

    class UserResource(BaseUser):  # returned by a route, named by no migration
        id: int

    class EmailWasLogin(VersionChange):
        description = "login is email"
        instructions_to_migrate_to_previous_version = (
            schema(BaseUser).field("email").had(name="login"),)

        @convert_request_to_next_version_for(UserCreate)
        def up(request: RequestInfo) -> None:
            request.body["email"] = request.body.pop("login")

    api = CadwynAPI(VersionBundle(Version("2001-01-01", EmailWasLogin), Version("2000-01-01")))
    with pytest.warns(RoleGuessWarning) as caught:
        CadwynSuite("users", api)
    messages = [str(w.message) for w in caught]
    assert any("UserResource inherits the instructions on BaseUser, but the bundle names "
               "it in no migration" in m and "point cadwyn at the app" in m
               for m in messages), messages


def test_a_schema_with_instructions_and_no_migration_has_its_role_guessed_aloud() -> None:
    class Flag(BaseModel):
        on: bool = False

    class FlagDefault(VersionChange):
        description = "on had another default"
        instructions_to_migrate_to_previous_version = (
            schema(Flag).field("on").had(default=True),)

    api = CadwynAPI(VersionBundle(Version("2001-01-01", FlagDefault), Version("2000-01-01")))
    with pytest.warns(RoleGuessWarning, match="Flag has schema instructions but no "
                                              "migration: the bundle form cannot tell"):
        CadwynSuite("flags", api)
