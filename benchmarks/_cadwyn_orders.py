"""A realistic Cadwyn bundle for ``bench_cadwyn.py``: an ``Order`` with nested lines and
addresses, lists, an aware datetime, constrained decimals, enums and optional fields,
through three versions with correct migrations (every unit passes, so the benchmark
measures whole runs, never a shrink).

2024-01-01  ``address`` (one address for shipping and billing)
2024-06-01  ``address`` renamed ``shipping_address``; ``billing_address`` added
2025-01-01  ``Status.on_hold`` added (older clients are shown ``placed``)
"""

from __future__ import annotations

from decimal import Decimal
from enum import Enum
from uuid import UUID

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
from pydantic import AwareDatetime, BaseModel, Field


class Status(str, Enum):
    placed = "placed"
    on_hold = "on_hold"
    paid = "paid"
    shipped = "shipped"
    cancelled = "cancelled"


class Country(str, Enum):
    GB = "GB"
    FR = "FR"
    DE = "DE"
    US = "US"


class Address(BaseModel):
    street: str = Field(min_length=1, max_length=100)
    city: str = Field(min_length=1, max_length=60)
    postcode: str = Field(pattern=r"^[A-Z0-9 ]{3,10}$")
    country: Country


class OrderLine(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-[0-9]{4}$")
    quantity: int = Field(ge=1, le=1000)
    unit_price: Decimal = Field(ge=0, max_digits=10, decimal_places=2)
    discount: Decimal | None = Field(default=None, ge=0, le=1, decimal_places=2)


class Order(BaseModel):
    id: UUID
    placed_at: AwareDatetime
    status: Status = Status.placed
    lines: list[OrderLine] = Field(min_length=1, max_length=20)
    shipping_address: Address
    billing_address: Address | None = None
    note: str | None = Field(default=None, max_length=500)
    tags: list[str] = Field(default_factory=list, max_length=10)


class AddOnHold(VersionChange):
    description = "an order can be on hold; older clients see it as placed"
    instructions_to_migrate_to_previous_version = (enum(Status).didnt_have("on_hold"),)

    @convert_response_to_previous_version_for(Order)
    def on_hold_is_placed(response: ResponseInfo) -> None:
        if response.body["status"] == Status.on_hold:
            response.body["status"] = Status.placed


class SplitAddress(VersionChange):
    description = "`address` is `shipping_address`; `billing_address` is new"
    instructions_to_migrate_to_previous_version = (
        schema(Order).field("shipping_address").had(name="address"),
        schema(Order).field("billing_address").didnt_exist,
    )

    @convert_request_to_next_version_for(Order)
    def address_is_shipping(request: RequestInfo) -> None:
        request.body["shipping_address"] = request.body.pop("address")

    @convert_response_to_previous_version_for(Order)
    def shipping_is_address(response: ResponseInfo) -> None:
        response.body["address"] = response.body.pop("shipping_address")
        response.body.pop("billing_address", None)


version_bundle = VersionBundle(
    HeadVersion(),
    Version("2025-01-01", AddOnHold),
    Version("2024-06-01", SplitAddress),
    Version("2024-01-01"),
)

__all__ = ["Address", "Order", "OrderLine", "version_bundle"]
