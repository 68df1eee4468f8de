"""The HEAD schemas of the shop's *next release*: ../../shop/schemas.py with two changes
made at HEAD only, as they often are, and no ``VersionChange`` for them (the walk-through
of ``compatfuzz diff --new-path`` in docs/cadwyn.md):

* ``Tier.platinum``, a new enum member: every existing version now returns it, though no
  old client knows it (Cadwyn's ``enum(Tier).didnt_have("platinum")`` would hide it);
* ``email_address`` has ``max_length=254``: every existing version now rejects longer
  addresses it used to accept (``schema(Customer).field("email_address").didnt_have(
  "max_length")`` would keep them).

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
    platinum = "platinum"


class Customer(BaseModel):
    """A customer, as created (POST /customers) and as read back (GET /customers/{id})."""

    first_name: str
    # None when the customer gave a single name: "Cher" and "Cher " are different names
    last_name: str | None = None
    email_address: str = Field(max_length=254)
    # Decimal, not float: every int an old client sent must survive (a float loses 2**53 + 1)
    credit_limit: Decimal = Field(ge=0)
    tier: Tier = Tier.basic
    metadata: dict[str, str] = Field(default_factory=dict)


class CustomerResource(Customer):
    id: int
