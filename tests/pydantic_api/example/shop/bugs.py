"""Seeded converter bugs: each replaces one correct converter of ``conversion``.

``BUGS[name] = (pair, buggy converter, the unit that must catch it)``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shop import conversion
from shop.models import v1, v2


def rename_writes_field_name(doc: dict[str, Any]) -> dict[str, Any]:
    """v2 -> v1 writes the Python name ``customer_name``, not the alias ``customerName``."""
    out = conversion.v2_to_v1(doc)
    out["customer_name"] = out.pop("customerName")
    return out


def split_lowercases_domain(order: v1.Order) -> v2.Order:
    """v1 -> v2 lower-cases the domain ("domains are case-insensitive"): v1 keeps case."""
    out = conversion.v1_to_v2(order)
    out.contact_domain = out.contact_domain.lower()
    return out


def widening_truncates(doc: dict[str, Any]) -> dict[str, Any]:
    """v3 -> v2 truncates a fractional quantity instead of stashing it."""
    out = conversion.v3_to_v2(doc)
    out["stash"].pop("quantity", None)
    out["quantity"] = max(1, min(1000, int(float(doc["quantity"]))))
    return out


def removed_field_dropped(doc: dict[str, Any]) -> dict[str, Any]:
    """v2 -> v3 drops ``gift_note`` (removed in v3) instead of stashing it."""
    out = conversion.v2_to_v3(doc)
    out["stash"].pop("gift_note", None)
    return out


def narrowed_enum_passed_through(doc: dict[str, Any]) -> dict[str, Any]:
    """v2 -> v3 copies ``status`` as is, but v3 has no ``cancelled`` status."""
    out = conversion.v2_to_v3(doc)
    if doc.get("status") == "cancelled":
        out["status"] = "cancelled"
    return out


def datetime_drops_zone(order: v1.Order) -> v2.Order:
    """v1 -> v2 stores ``created`` as naive local wall time, dropping its offset."""
    out = conversion.v1_to_v2(order)
    out.created = datetime.fromisoformat(order.created.isoformat()).replace(tzinfo=None)
    return out


def mutates_input(doc: dict[str, Any]) -> dict[str, Any]:
    """v2 -> v1 pops the renamed fields out of the document it was given."""
    doc["customerName"] = doc.pop("customer")
    doc["contact"] = f"{doc.pop('contact_user')}@{doc.pop('contact_domain')}"
    return doc


BUGS = {
    "rename_writes_field_name": (("v2", "v1"), rename_writes_field_name, "valid[v2->v1]"),
    "split_lowercases_domain": (("v1", "v2"), split_lowercases_domain, "roundtrip[v1->v2]"),
    "widening_truncates": (("v3", "v2"), widening_truncates, "roundtrip[v3->v2]"),
    "removed_field_dropped": (("v2", "v3"), removed_field_dropped, "roundtrip[v2->v3]"),
    "narrowed_enum_passed_through": (("v2", "v3"), narrowed_enum_passed_through,
                                     "valid[v2->v3]"),
    "datetime_drops_zone": (("v1", "v2"), datetime_drops_zone, "roundtrip[v1->v2]"),
    "mutates_input": (("v2", "v1"), mutates_input, "no_mutation[v2->v1]"),
}
