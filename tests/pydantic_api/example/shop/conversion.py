"""Correct converters between the Order versions (per pair; the chain does v1 <-> v3).

``v1_to_v2`` takes and returns model instances (its parameter is annotated); the others
work on the JSON documents.  What a version cannot hold goes to ``stash``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from shop.models import v1, v2


def v1_to_v2(order: v1.Order) -> v2.Order:
    user, _, domain = order.contact.partition("@")
    return v2.Order(id=order.id, customer=order.customer_name, contact_user=user,
                    contact_domain=domain, quantity=order.quantity, price=order.price,
                    created=order.created, status=order.status.value,
                    gift_note=order.gift_note, labels=order.labels, stash=order.stash)


def v2_to_v1(doc: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in doc.items()
           if k not in ("customer", "contact_user", "contact_domain")}
    out["customerName"] = doc["customer"]
    out["contact"] = f"{doc['contact_user']}@{doc['contact_domain']}"
    return out


def v2_to_v3(doc: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in doc.items() if k != "gift_note"}
    stash = dict(doc.get("stash", {}))
    if doc.get("gift_note") is not None:
        stash["gift_note"] = doc["gift_note"]
    out["quantity"] = stash.pop("quantity", str(doc["quantity"]))
    if doc.get("status") == "cancelled":
        out["cancelled"] = True
        out["status"] = stash.pop("status", "new")
    out["stash"] = stash
    return out


def v3_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in doc.items() if k != "cancelled"}
    stash = dict(doc.get("stash", {}))
    out["gift_note"] = stash.pop("gift_note", None)
    quantity = Decimal(str(doc["quantity"]))
    if quantity == quantity.to_integral_value() and 1 <= quantity <= 1000:
        out["quantity"] = int(quantity)
    else:
        out["quantity"] = 1
        stash["quantity"] = str(doc["quantity"])
    if doc.get("cancelled"):
        if doc.get("status", "new") != "new":
            stash["status"] = doc["status"]
        out["status"] = "cancelled"
    out["stash"] = stash
    return out
