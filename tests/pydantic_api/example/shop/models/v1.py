"""Order v1: the customer's name under the alias ``customerName``, one ``contact`` string,
a whole ``quantity``, a ``gift_note``, and four statuses."""

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
    CANCELLED = "cancelled"


class Order(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: UUID
    customer_name: str = Field(alias="customerName", min_length=1, max_length=40)
    contact: str = Field(pattern=r"^[a-z0-9._-]{1,20}@[A-Za-z0-9.-]{1,20}$")
    quantity: int = Field(ge=1, le=1000)
    price: Decimal = Field(ge=0, max_digits=8, decimal_places=2)
    created: datetime
    status: Status = Status.NEW
    gift_note: str | None = None
    labels: dict[Label, str] = {}
    #: what another version holds and this one cannot, kept by the converters; the
    #: server's own field: clients never send it (not in the JSON Schema)
    stash: SkipJsonSchema[dict[str, str]] = {}
