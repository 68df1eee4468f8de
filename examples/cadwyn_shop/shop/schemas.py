"""The HEAD schemas: the only ones the business logic knows (Cadwyn derives the older ones).

2023-01-01  ``name``, ``email``, ``credit_limit: int``, ``fax``
2023-06-01  ``name`` split into ``first_name``/``last_name``; ``email`` renamed ``email_address``
2024-01-01  ``credit_limit`` widened from int to Decimal (cents); ``fax`` removed (kept in
            ``metadata``)
"""

from __future__ import annotations

from decimal import Decimal
from enum import Enum

from pydantic import BaseModel, Field


class Tier(str, Enum):
    basic = "basic"
    gold = "gold"


class Customer(BaseModel):
    """A customer, as created (POST /customers) and as read back (GET /customers/{id})."""

    first_name: str
    # None when the customer gave a single name: "Cher" and "Cher " are different names
    last_name: str | None = None
    email_address: str
    # Decimal, not float: every int an old client sent must survive (a float loses 2**53 + 1)
    credit_limit: Decimal = Field(ge=0)
    tier: Tier = Tier.basic
    metadata: dict[str, str] = Field(default_factory=dict)


class CustomerResource(Customer):
    id: int
