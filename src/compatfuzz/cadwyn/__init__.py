"""Cadwyn version bundles as compatfuzz API families.

:class:`CadwynAPI` turns a ``cadwyn.VersionBundle`` into versions, per-version pydantic models
and converters built from the bundle's own migrations; the property functions check what a
Cadwyn user expects of them, and the strategies draw bodies from each version's JSON Schema.
Needs the ``cadwyn`` extra (``pip install 'compatfuzz[cadwyn]'``). See docs/cadwyn.md.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.cadwyn._bundle import (
    HEAD,
    CadwynAPI,
    Instruction,
    Migrated,
    MigrationFailure,
    Route,
    SchemaConverters,
    Step,
)
from compatfuzz.cadwyn._properties import (
    LostInRoundTrip,
    check_request_roundtrip,
    check_request_up,
    check_response_down,
    load_bundle,
    request_bodies,
    response_bodies,
)
from compatfuzz.cadwyn._suite import CadwynSuite

__all__ = [
    "HEAD",
    "CadwynAPI",
    "CadwynSuite",
    "Instruction",
    "LostInRoundTrip",
    "Migrated",
    "MigrationFailure",
    "Route",
    "SchemaConverters",
    "Step",
    "check_request_roundtrip",
    "check_request_up",
    "check_response_down",
    "load_bundle",
    "request_bodies",
    "response_bodies",
]

_rehome(globals())
