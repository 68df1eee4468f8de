"""A bundle of the Cadwyn tutorial's kinds of changes, built fresh per test, with seeded bugs.

Cadwyn's docs (docs/how_to/change_openapi_schemas/*.md, docs/quickstart/tutorial.md) walk
through: renaming a field, changing its type (the tutorial's ``address: str`` ->
``addresses: list[str]``), removing a field, narrowing an enum, and splitting a field.
``make_bundle(bug)`` returns a three-version bundle with all of them, correct unless ``bug``
names one of :data:`BUGS`: the migration mistake each kind invites. A ``VersionChange`` binds
to one bundle only, so the classes are defined inside the factory.
"""

from __future__ import annotations

import math
from decimal import Decimal
from enum import Enum

from cadwyn import (
    HeadVersion,
    RequestInfo,
    ResponseInfo,
    Version,
    VersionBundle,
    VersionChange,
    convert_request_to_next_version_for,
    convert_response_to_previous_version_for,
    enum,
    schema,
)
from pydantic import BaseModel, Field

STASH = "legacy_fax"


class Plan(str, Enum):
    free = "free"
    pro = "pro"
    enterprise = "enterprise"  # not before 2002-01-01


class User(BaseModel):
    """HEAD: what the business logic sees."""

    first_name: str
    last_name: str | None = None
    email_address: str
    addresses: list[str] = Field(min_length=1)
    balance: Decimal
    plan: Plan = Plan.free
    metadata: dict[str, str] = Field(default_factory=dict)


#: seeded bug -> (the property that catches it, the version whose clients see it)
BUGS: dict[str, tuple[str, str]] = {
    # rename: the request migration forgets the rename, HEAD misses `email_address`
    "rename_forgotten_in_request": ("request_up", "2000-01-01"),
    # split: an empty last name read as "no last name" ("Cher " comes back "Cher")
    "split_drops_empty_last_name": ("roundtrip", "2000-01-01"),
    # remove: the removed field is dropped instead of stashed
    "removed_field_not_stashed": ("roundtrip", "2001-01-01"),
    # type change (tutorial): the single address "tidied up" on its way into the list
    "address_stripped": ("roundtrip", "2000-01-01"),
    # type change: Decimal -> int without rounding, cents are invalid in the old int
    "decimal_not_rounded_down": ("response_down", "2001-01-01"),
    # enum narrowing: the member old clients don't know is not mapped
    "enum_member_not_mapped": ("response_down", "2001-01-01"),
    # type change: the old int read as a float, beyond 2**53 it is another number
    "int_read_as_float": ("roundtrip", "2001-01-01"),
}


def make_bundle(bug: str | None = None) -> VersionBundle:
    """Three versions (2000-01-01, 2001-01-01, 2002-01-01) and HEAD; ``bug`` seeds one bug."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"unknown bug {bug!r}; one of {sorted(BUGS)}")

    class RenameEmailSplitNameAddresses(VersionChange):
        description = "email -> email_address; name -> first/last; address -> addresses"
        instructions_to_migrate_to_previous_version = (
            schema(User).field("email_address").had(name="email"),
            schema(User).field("first_name").had(name="name"),
            schema(User).field("last_name").didnt_exist,
            schema(User).field("addresses").didnt_exist,
            schema(User).field("address").existed_as(type=str),
        )

        @convert_request_to_next_version_for(User)
        def up(request: RequestInfo) -> None:
            body = request.body
            if bug != "rename_forgotten_in_request":
                body["email_address"] = body.pop("email")
            first, space, last = body.pop("name").partition(" ")
            body["first_name"] = first
            if bug == "split_drops_empty_last_name":
                body["last_name"] = last or None
            else:
                body["last_name"] = last if space else None
            address = body.pop("address")
            if bug == "address_stripped":
                body["addresses"] = [address.strip()]
            else:
                body["addresses"] = [address]

        @convert_response_to_previous_version_for(User)
        def down(response: ResponseInfo) -> None:
            body = response.body
            body["email"] = body.pop("email_address")
            first, last = body.pop("first_name"), body.pop("last_name")
            body["name"] = first if last is None else f"{first} {last}"
            body["address"] = body.pop("addresses")[0]

    class DecimalBalanceRemoveFaxNewPlan(VersionChange):
        description = "balance has cents; fax is gone (stashed); the enterprise plan is new"
        instructions_to_migrate_to_previous_version = (
            schema(User).field("balance").had(type=int),
            schema(User).field("fax").existed_as(type=str | None, info=Field(default=None)),
            enum(Plan).didnt_have("enterprise"),
        )

        @convert_request_to_next_version_for(User)
        def up(request: RequestInfo) -> None:
            body = request.body
            fax = body.pop("fax", None)
            if fax is not None and bug != "removed_field_not_stashed":
                body.setdefault("metadata", {})[STASH] = fax
            if bug == "int_read_as_float":
                body["balance"] = float(body["balance"])

        @convert_response_to_previous_version_for(User)
        def down(response: ResponseInfo) -> None:
            body = response.body
            body["fax"] = body["metadata"].pop(STASH, None)
            if bug != "decimal_not_rounded_down":
                body["balance"] = math.floor(body["balance"])
            if bug != "enum_member_not_mapped" and body["plan"] == Plan.enterprise:
                body["plan"] = Plan.pro

    return VersionBundle(
        HeadVersion(),
        Version("2002-01-01", DecimalBalanceRemoveFaxNewPlan),
        Version("2001-01-01", RenameEmailSplitNameAddresses),
        Version("2000-01-01"),
    )
