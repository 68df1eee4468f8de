"""The version bundle of the next release: ../../shop/versions.py unchanged (a VersionChange
binds to one bundle and its HEAD schemas, so the file is repeated here).

How each older version differs from the newer one, and how to migrate.

Cadwyn (https://docs.cadwyn.dev) regenerates the 2023-06-01 and 2023-01-01 schemas from the
instructions below and runs the request migrations old -> HEAD and the response migrations
HEAD -> old around the unchanged business logic.
"""

from __future__ import annotations

import math

from cadwyn import (
    HeadVersion,
    RequestInfo,
    ResponseInfo,
    Version,
    VersionBundle,
    VersionChange,
    convert_request_to_next_version_for,
    convert_response_to_previous_version_for,
    schema,
)
from pydantic import Field

from shop.schemas import Customer, CustomerResource

FAX_KEY = "legacy_fax"


class SplitNameAndRenameEmail(VersionChange):
    description = "`name` is split into `first_name` and `last_name`; `email` is `email_address`"
    instructions_to_migrate_to_previous_version = (
        schema(Customer).field("first_name").had(name="name"),
        schema(Customer).field("last_name").didnt_exist,
        schema(Customer).field("email_address").had(name="email"),
    )

    @convert_request_to_next_version_for(Customer)
    def split_name(request: RequestInfo) -> None:
        # partition, not split(): "Cher" has no last name, "Cher " has an empty one
        first, space, last = request.body.pop("name").partition(" ")
        request.body["first_name"] = first
        request.body["last_name"] = last if space else None
        request.body["email_address"] = request.body.pop("email")

    @convert_response_to_previous_version_for(Customer, CustomerResource, check_usage=False)
    def join_name(response: ResponseInfo) -> None:
        first = response.body.pop("first_name")
        last = response.body.pop("last_name")
        response.body["name"] = first if last is None else f"{first} {last}"
        response.body["email"] = response.body.pop("email_address")


class WidenCreditLimitAndRemoveFax(VersionChange):
    description = "`credit_limit` has cents; `fax` is gone (an old client's is kept in metadata)"
    instructions_to_migrate_to_previous_version = (
        schema(Customer).field("credit_limit").had(type=int),
        schema(Customer).field("fax").existed_as(type=str | None, info=Field(default=None)),
    )

    @convert_request_to_next_version_for(Customer)
    def stash_fax(request: RequestInfo) -> None:
        fax = request.body.pop("fax", None)
        if fax is not None:
            request.body.setdefault("metadata", {})[FAX_KEY] = fax

    @convert_response_to_previous_version_for(Customer, CustomerResource, check_usage=False)
    def unstash_fax_and_round_down(response: ResponseInfo) -> None:
        response.body["fax"] = response.body["metadata"].pop(FAX_KEY, None)
        # an old client can't see cents: it is shown the whole amount it may spend
        response.body["credit_limit"] = math.floor(response.body["credit_limit"])


version_bundle = VersionBundle(
    HeadVersion(),
    Version("2024-01-01", WidenCreditLimitAndRemoveFax),
    Version("2023-06-01", SplitNameAndRenameEmail),
    Version("2023-01-01"),
)
