"""CadwynAPI: versions, per-version models and converters from a bundle's own migrations,
checked against Cadwyn's public ``migrate_response_body`` and against hand-worked bodies."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("cadwyn")

import cadwyn
from hypothesis import given, settings

from compatfuzz.cadwyn import (
    HEAD,
    CadwynAPI,
    MigrationFailure,
    load_bundle,
    request_bodies,
    response_bodies,
)
from compatfuzz.errors import InvalidArgument
from tests.cadwyn._tutorial import Plan, User, make_bundle

SHOP = Path(__file__).resolve().parents[2] / "examples" / "cadwyn_shop"


@pytest.fixture(scope="module")
def api() -> CadwynAPI:
    return CadwynAPI(make_bundle())


def test_versions_oldest_first_and_models_as_cadwyn_generates_them(api: CadwynAPI) -> None:
    assert api.versions == ("2000-01-01", "2001-01-01", "2002-01-01")
    assert api.schemas == (User,)
    assert api.model(User, HEAD) is User
    old = set(api.model(User, "2000-01-01").model_fields)
    assert {"name", "email", "address", "fax"} <= old
    assert not {"first_name", "email_address", "addresses"} & old
    assert "fax" in api.model(User, "2001-01-01").model_fields
    assert "fax" not in api.model(User, "2002-01-01").model_fields


def test_request_up_by_hand(api: CadwynAPI) -> None:
    body = {"name": "Ann Lee", "email": "a@x", "address": "1 Main St", "balance": 7,
            "fax": "555"}
    up = api.request_up(User, body, "2000-01-01")
    assert up.body["first_name"] == "Ann"
    assert up.body["last_name"] == "Lee"
    assert up.body["email_address"] == "a@x"
    assert up.body["addresses"] == ["1 Main St"]
    assert up.body["metadata"] == {"legacy_fax": "555"}
    # oldest first: the 2001 change (rename/split) runs before the 2002 one (fax, balance)
    assert [s.version for s in up.steps] == ["2001-01-01", "2002-01-01"]


def test_response_down_by_hand(api: CadwynAPI) -> None:
    head = {"first_name": "Cher", "email_address": "c@x", "addresses": ["a", "b"],
            "balance": "2.75", "plan": "enterprise", "metadata": {"legacy_fax": "9"}}
    down = api.response_down(User, head, "2000-01-01")
    assert down.body == {"name": "Cher", "email": "c@x", "address": "a", "balance": 2,
                         "plan": "pro", "fax": "9", "metadata": {}}
    # newest first
    assert [s.version for s in down.steps] == ["2002-01-01", "2001-01-01"]


@settings(max_examples=50, database=None)
@given(body=response_bodies(CadwynAPI(make_bundle()), User))
def test_response_down_agrees_with_cadwyns_migrate_response_body(body: dict) -> None:
    bundle_api = CadwynAPI(make_bundle())
    for version in bundle_api.versions:
        ours = bundle_api.response_down(User, body, version).body
        theirs = cadwyn.migrate_response_body(
            bundle_api.bundle, User, latest_body=User.model_validate(body).model_dump(
                by_alias=True), version=version)
        assert ours == theirs.model_dump(mode="json", by_alias=True, warnings=False)


@settings(max_examples=30, database=None)
@given(body=request_bodies(CadwynAPI(make_bundle()), User, "2000-01-01"))
def test_request_bodies_are_valid_in_their_version(body: dict) -> None:
    CadwynAPI(make_bundle()).model(User, "2000-01-01").model_validate(body)


def test_a_raising_migration_names_its_version_change_and_function(api: CadwynAPI) -> None:
    head = {"first_name": "A", "email_address": "e", "addresses": ["x"], "balance": "1",
            "metadata": {}}
    broken = CadwynAPI(make_bundle())
    change = next(c for v in broken.bundle.versions for c in v.changes
                  if c.__name__ == "DecimalBalanceRemoveFaxNewPlan")
    # a HEAD body whose metadata the migration cannot pop from: what a None would do
    original = change.alter_response_by_schema_instructions[User][0].transformer

    def down(response: cadwyn.ResponseInfo) -> None:
        response.body["metadata"] = None
        original(response)

    change.alter_response_by_schema_instructions[User][0].transformer = down
    with pytest.raises(MigrationFailure) as info:
        broken.response_down(User, head, "2001-01-01")
    assert "DecimalBalanceRemoveFaxNewPlan.down (version 2002-01-01) raised " \
           "AttributeError" in str(info.value)
    assert info.value.blamed_steps[0].version_change == "DecimalBalanceRemoveFaxNewPlan"


def test_an_invalid_result_names_the_field_and_the_instruction() -> None:
    api = CadwynAPI(make_bundle("enum_member_not_mapped"))
    head = {"first_name": "A", "email_address": "e", "addresses": ["x"], "balance": "1",
            "plan": Plan.enterprise.value}
    with pytest.raises(MigrationFailure) as info:
        api.response_down(User, head, "2001-01-01")
    message = str(info.value)
    assert info.value.field == "plan"
    assert "plan: Input should be 'free' or 'pro'" in message
    assert "DecimalBalanceRemoveFaxNewPlan: enum(Plan).didnt_have('enterprise')" in message


def test_bad_arguments_are_named(api: CadwynAPI) -> None:
    with pytest.raises(InvalidArgument, match=re.escape("Expected a cadwyn.VersionBundle")):
        CadwynAPI({"not": "a bundle"})
    with pytest.raises(InvalidArgument, match=re.escape("version='1999-01-01'")):
        api.model(User, "1999-01-01")
    with pytest.raises(InvalidArgument, match=re.escape("not a valid User in version 2000-01-01")):
        api.request_up(User, {"name": 1}, "2000-01-01")
    with pytest.raises(InvalidArgument, match="pass it in CadwynAPI"):
        api.converters(Plan)


def test_load_bundle_takes_the_bundle_or_the_app() -> None:
    sys.modules.pop("shop", None)
    from_bundle = load_bundle("shop.versions:version_bundle", root=SHOP)
    from_app = load_bundle("shop.app:app", root=SHOP)
    assert from_bundle.bundle is from_app.bundle
    with pytest.raises(InvalidArgument, match="has no attribute 'bundle'"):
        load_bundle("shop.versions:bundle", root=SHOP)
    hint = re.escape('e.g. cadwyn = "shop.versions:version_bundle"')
    with pytest.raises(InvalidArgument, match=hint):
        load_bundle("shop.versions", root=SHOP)


def test_converters_are_plain_json_callables(api: CadwynAPI) -> None:
    convert = api.converters(User)
    up = convert.request_up({"name": "A", "email": "e", "address": "x", "balance": 1},
                            "2000-01-01")
    assert convert.response_down(up, "2000-01-01") == {
        "name": "A", "email": "e", "address": "x", "balance": 1, "plan": "free",
        "metadata": {}, "fax": None}
