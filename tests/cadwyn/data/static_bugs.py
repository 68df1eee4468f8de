"""Three VersionChanges, each with one bug a reader can see without running it (and one
correct change), for tests/cadwyn/test_lint.py. ``BUG`` picks which are written in."""

from __future__ import annotations

import os

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
from pydantic import BaseModel

BUG = os.environ.get("STATIC_BUG", "")


class Account(BaseModel):
    email_address: str
    display_name: str = ""
    nickname: str = ""


class RenameEmail(VersionChange):
    description = "email is email_address"
    instructions_to_migrate_to_previous_version = (
        schema(Account).field("email_address").had(name="email"),
    )

    @convert_request_to_next_version_for(Account)
    def rename_email(request: RequestInfo) -> None:
        request.body["email_address"] = request.body.pop("email")

    if BUG == "wrong-direction":
        @convert_response_to_previous_version_for(Account)
        def unrename_email(response: ResponseInfo) -> None:
            response.body["email_address"] = response.body.pop("email")  # the wrong way
    else:
        @convert_response_to_previous_version_for(Account)
        def unrename_email(response: ResponseInfo) -> None:
            response.body["email"] = response.body.pop("email_address")


class AddDisplayAndNick(VersionChange):
    description = "display_name and nickname are new"
    instructions_to_migrate_to_previous_version = (
        schema(Account).field("display_name").didnt_exist,
        schema(Account).field("nickname").didnt_exist,
    )

    @convert_response_to_previous_version_for(Account)
    def drop_display_name(response: ResponseInfo) -> None:
        del response.body["display_name"]

    if BUG == "shadowed":
        @convert_response_to_previous_version_for(Account)
        def drop_display_name(response: ResponseInfo) -> None:  # the bug
            del response.body["nickname"]
    elif BUG == "unknown-field":
        @convert_response_to_previous_version_for(Account)
        def drop_nickname(response: ResponseInfo) -> None:
            del response.body["nick_name"]  # a typo
    else:
        @convert_response_to_previous_version_for(Account)
        def drop_nickname(response: ResponseInfo) -> None:
            del response.body["nickname"]


version_bundle = VersionBundle(
    HeadVersion(),
    Version("2024-01-01", AddDisplayAndNick),
    Version("2023-01-01", RenameEmail),
    Version("2022-01-01"),
)
