"""Schema-aware semantic equality and readable diffs for API objects.

The Python counterpart of Kubernetes' ``apiequality.Semantic.DeepEqual``, driven by the
schema: quantities by value, times as instants, sets and list-maps without order,
absent/null/empty lists and maps alike, and pluggable comparators. See ``docs/semantic.md``.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.schema._quantity import (
    InvalidQuantity,
    Quantity,
    parse_quantity,
    quantity_from_json,
)
from compatfuzz.semantic._api import assert_equal, canonicalise, diff, equal
from compatfuzz.semantic._diff import Change, ChangeKind, Diff
from compatfuzz.semantic._registry import (
    PathGlob,
    Registration,
    register_canonicaliser,
    register_comparator,
    unregister,
)
from compatfuzz.semantic._scalars import canonical_quantity
from compatfuzz.semantic._values import (
    canonical_date_time,
    canonical_duration,
    canonical_go_duration,
    format_go_duration,
    parse_go_duration,
)

__all__ = [
    "Change",
    "ChangeKind",
    "Diff",
    "InvalidQuantity",
    "PathGlob",
    "Quantity",
    "Registration",
    "assert_equal",
    "canonical_date_time",
    "canonical_duration",
    "canonical_go_duration",
    "canonical_quantity",
    "canonicalise",
    "diff",
    "equal",
    "format_go_duration",
    "parse_go_duration",
    "parse_quantity",
    "quantity_from_json",
    "register_canonicaliser",
    "register_comparator",
    "unregister",
]

_rehome(globals())
# Quantity lives in compatfuzz.schema (the CEL quantity library in strategies needs it
# too); its public home is here.
for _obj in (InvalidQuantity, Quantity, parse_quantity, quantity_from_json):
    _obj.__module__ = __name__
del _obj
