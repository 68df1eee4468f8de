"""Load schemas from every source compatfuzz supports into one normalised model.

Every loader returns :class:`Schema`: a self-contained JSON Schema 2020-12 document with
local ``$ref`` only and ``x-kubernetes-*`` extensions kept, so the other parts of
compatfuzz deal with one dialect.
"""

from __future__ import annotations

from compatfuzz.schema._model import CRD, CRDVersion, Schema, resolve_pointer
from compatfuzz.schema._wellknown import WellKnown, classify, definition_kind

__all__ = [
    "CRD",
    "CRDVersion",
    "Schema",
    "WellKnown",
    "classify",
    "definition_kind",
    "resolve_pointer",
]
