"""Breaking-change checks between two revisions of one API, each proven by a witness.

Static rules name every difference between OLD and NEW (rule id, field path, old and new
keyword values, which side it breaks); a Hypothesis search then looks for a shrunk object
that proves it, and searches the whole schema pair for breaks no rule explains.
See ``docs/compat.md``.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.compat._engine import Report, Revision, check, diff, load_revision
from compatfuzz.compat._model import (
    RULES,
    Direction,
    Event,
    Finding,
    FindingEvent,
    Finished,
    Impact,
    Note,
    PairStarted,
    Rule,
    Severity,
    Side,
    Started,
    Status,
    Witness,
    Witnessing,
)
from compatfuzz.compat._policy import (
    IgnoreEntry,
    Policy,
    PolicyEntry,
    load_policy,
    parse_severity,
)
from compatfuzz.compat._profiles import load_crdify, load_profile, resolve_policy

__all__ = [
    "RULES",
    "Direction",
    "Event",
    "Finding",
    "FindingEvent",
    "Finished",
    "IgnoreEntry",
    "Impact",
    "Note",
    "PairStarted",
    "Policy",
    "PolicyEntry",
    "Report",
    "Revision",
    "Rule",
    "Severity",
    "Side",
    "Started",
    "Status",
    "Witness",
    "Witnessing",
    "check",
    "diff",
    "load_crdify",
    "load_policy",
    "load_profile",
    "load_revision",
    "parse_severity",
    "resolve_policy",
]

_rehome(globals())
