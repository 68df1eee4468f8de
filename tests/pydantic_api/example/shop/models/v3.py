"""Order v3: ``quantity`` widened to a decimal (sold by weight), ``gift_note`` removed,
``status`` narrowed (a cancelled order is ``cancelled = true``)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Annotated
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

Label = Annotated[str, StringConstraints(pattern=r"^[a-z]{1,8}$")]


class Status(str, Enum):
    NEW = "new"
    PAID = "paid"
    SHIPPED = "shipped"


class Order(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: UUID
    customer: str = Field(min_length=1, max_length=40)
    contact_user: str = Field(pattern=r"^[a-z0-9._-]{1,20}$")
    contact_domain: str = Field(pattern=r"^[A-Za-z0-9.-]{1,20}$")
    quantity: Decimal = Field(gt=0, max_digits=10, decimal_places=3)
    price: Decimal = Field(ge=0, max_digits=8, decimal_places=2)
    created: datetime
    status: Status = Status.NEW
    cancelled: bool = False
    labels: dict[Label, str] = {}
    stash: SkipJsonSchema[dict[str, str]] = {}
