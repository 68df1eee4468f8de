"""Outcomes and the events the round-trip engine yields.

The engine never prints (STYLE.md 20): ``run()`` yields these events and the CLI's
progress display, the JSON report writer and the pytest plugin each consume them.
Everything here is a plain, picklable dataclass so worker processes can send results
back, and converts to JSON with :meth:`to_json` for the report.
"""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Counterexample",
    "Event",
    "Notice",
    "Property",
    "RunFinished",
    "RunStarted",
    "Status",
    "StopReason",
    "Unit",
    "UnitFinished",
    "UnitResult",
    "UnitStarted",
]


class Property(str, enum.Enum):
    """The properties checked for every version pair (or triple, or single version)."""

    #: A -> B -> A gives back an object semantically equal to the original.
    ROUNDTRIP = "roundtrip"
    #: A -> B output validates under B's schema.
    VALID = "valid"
    #: Converting A -> B leaves the input object untouched.
    NO_MUTATION = "no_mutation"
    #: A -> B -> C equals A -> C (needs three versions).
    PATH_INDEPENDENT = "path_independent"
    #: Defaulting twice equals defaulting once (per version with a defaulter).
    DEFAULT_IDEMPOTENT = "default_idempotent"
    #: convert(default_A(x)) equals default_B(convert(x)).
    DEFAULT_COMMUTES = "default_commutes"
    #: An example survives every wire and text encoding of its version and back (per
    #: version; protobuf: binary, proto3 JSON with either field name, YAML).
    ENCODINGS = "encodings"
    #: A version's migration code passes static checks before any example (per version;
    #: Cadwyn: same-named migrations, keys read the body cannot have).
    MIGRATIONS = "migrations"
    #: A client of one version creates a resource and reads back what it sent (per
    #: version; a web app's routes, in process: Cadwyn).
    WRITE_THEN_READ = "write_then_read"
    #: Written by a client of A, read and written back unchanged by one of B, read again
    #: by A's: what A sent is still there (a web app's routes).
    CROSS_VERSION = "cross_version"

    def __str__(self) -> str:
        return self.value

    @property
    def arity(self) -> int:
        """How many versions one unit of this property names."""
        if self is Property.PATH_INDEPENDENT:
            return 3
        if self in (Property.DEFAULT_IDEMPOTENT, Property.ENCODINGS, Property.MIGRATIONS,
                    Property.WRITE_THEN_READ):
            return 1
        return 2


class Status(str, enum.Enum):
    """Outcome of one unit; ordered by severity so a run's status is the ``max``."""

    PASSED = "passed"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    @property
    def severity(self) -> int:
        return list(Status).index(self)

    # str defines all four comparisons alphabetically; order by severity instead.
    def __lt__(self, other: object) -> bool:
        return self.severity < _severity(other)

    def __le__(self, other: object) -> bool:
        return self.severity <= _severity(other)

    def __gt__(self, other: object) -> bool:
        return self.severity > _severity(other)

    def __ge__(self, other: object) -> bool:
        return self.severity >= _severity(other)

    __hash__ = str.__hash__


def _severity(other: object) -> int:
    if not isinstance(other, Status):
        raise TypeError(f"cannot compare Status with {type(other).__name__}")
    return other.severity


class StopReason(str, enum.Enum):
    """Why a run ended."""

    COMPLETED = "completed"
    DURATION = "duration"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Unit:
    """One test: a property of one kind of one API over a tuple of versions."""

    api: str
    kind: str
    property: Property
    versions: tuple[str, ...]
    show_kind: bool = False

    # ``builtins.property``: the ``property`` field above shadows the decorator here.
    @builtins.property
    def name(self) -> str:
        """``roundtrip[v1alpha1->v1]``: the pytest item name."""
        return f"{self.property}[{'->'.join(self.versions)}]"

    @builtins.property
    def id(self) -> str:
        """``widgets::roundtrip[v1alpha1->v1]`` (the kind is added when an API has several)."""
        kind = f"{self.kind}::" if self.show_kind else ""
        return f"{self.api}::{kind}{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "api": self.api, "kind": self.kind,
                "property": str(self.property), "versions": list(self.versions)}


@dataclass(frozen=True)
class Counterexample:
    """A minimal failing object with everything needed to understand and replay it."""

    unit: Unit
    object: Any
    error: str
    error_type: str
    diff: list[dict[str, Any]] = field(default_factory=list)
    seed: int | None = None
    reproduce: str = ""
    shrunk: bool = True
    config: str | None = None
    traceback: str = ""
    output: str = ""
    #: requests sent before the example that its failure needs (a web app's route
    #: properties: ``[{"method", "path", "version", "body"}]``); ``--replay`` sends them
    #: first
    history: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        extra = {"history": list(self.history)} if self.history else {}
        return {
            "format": "compatfuzz-counterexample/1",
            **self.unit.to_json(),
            "object": self.object,
            "error_type": self.error_type,
            "error": self.error,
            "diff": self.diff,
            "seed": self.seed,
            "reproduce_failure": self.reproduce,
            "shrunk": self.shrunk,
            "config": self.config,
            "traceback": self.traceback,
            "output": self.output,
            **extra,
        }


@dataclass(frozen=True)
class UnitResult:
    """How one unit went: status, examples run, counterexample if it failed."""

    unit: Unit
    status: Status
    examples: int
    seconds: float
    seed: int | None = None
    counterexample: Counterexample | None = None
    message: str = ""
    coverage: dict[str, Any] | None = None
    #: (index of an accept entry of the unit's API, examples in which it accepted a
    #: difference), for the entries that accepted any
    accepted: tuple[tuple[int, int], ...] = ()
    #: whether the failing example can be read back from the example database: ``None``
    #: when there is none or nothing was saved, ``False`` when the write was lost
    saved: bool | None = None
    #: what the example database gave back to replay first, in words (``""``: nothing);
    #: see ``_database.ReplayNote``
    replayed: str = ""
    #: the API's migration code this unit ran (a Cadwyn bundle's migrations):
    #: ``(migration, where, calls)``, ``where`` a route (``POST /items``) or a schema
    migrations: tuple[tuple[str, str, int], ...] = ()
    #: checks after the first failure: Hypothesis shrinking it and replaying the minimal
    #: one (``examples`` counts the examples drawn up to the failure)
    shrink_steps: int = 0
    #: seconds before the first example was checked (the schema read, the strategy built,
    #: the converter or server reached): part of ``seconds``, said apart when it is long
    setup_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            **self.unit.to_json(),
            "status": str(self.status),
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "seed": self.seed,
            "message": self.message,
            "coverage": self.coverage,
            "accepted": [{"index": i, "count": n} for i, n in self.accepted],
            "replayed": self.replayed,
            "counterexample": self.counterexample.to_json() if self.counterexample else None,
            **({"migrations": [{"migration": m, "where": w, "calls": n}
                               for m, w, n in self.migrations]} if self.migrations else {}),
            **({"shrink_steps": self.shrink_steps} if self.shrink_steps else {}),
            **({"setup_seconds": round(self.setup_seconds, 3)} if self.setup_seconds else {}),
        }

    def time_text(self) -> str:
        """``2.5s``, or ``2.5s after 12.5s set-up`` when getting to the first example took
        a second or more (the first unit of a kind builds what the others reuse)."""
        if self.setup_seconds < 1.0:
            return f"{self.seconds:.1f}s"
        return (f"{max(0.0, self.seconds - self.setup_seconds):.1f}s after "
                f"{self.setup_seconds:.1f}s set-up")

    def examples_text(self) -> str:
        """``25 examples`` or, after a failure, ``25 examples, then 137 shrinking steps``."""
        text = f"{self.examples} example{'s' if self.examples != 1 else ''}"
        if self.shrink_steps:
            text += (f", then {self.shrink_steps} shrinking step"
                     f"{'s' if self.shrink_steps != 1 else ''}")
        return text

    def coverage_summary(self) -> str:
        """``97% of 134 leaf paths, all edge classes`` (or the classes never hit)."""
        c = self.coverage
        if not c:
            return ""
        missing = c.get("missing_edge_classes") or []
        edges = ("all edge classes" if not missing else
                 "edge classes never hit: " + ", ".join(missing[:6])
                 + (f" (+{len(missing) - 6} more)" if len(missing) > 6 else ""))
        return f"{c['ratio']:.0%} of {c['leaf_paths']} leaf paths, {edges}"


@dataclass(frozen=True)
class RunStarted:
    units: tuple[Unit, ...]
    seed: int | None
    profile: str
    max_examples: int | None
    duration: float | None
    workers: int
    database: str
    #: the APIs' accept entries, each as ``Accept.to_json()`` plus its ``api`` and
    #: ``index``: what reports list as accepted or stale
    accept: tuple[dict[str, Any], ...] = ()
    #: the (kind, property) whose version tuples were sampled, each as
    #: ``Sampled.to_json()``: ``{"api", "kind", "property", "planned", "total"}``
    sampled: tuple[dict[str, Any], ...] = ()
    #: a sharded run's ``"shard"`` report key: ``number``, ``count``,
    #: ``night``, ``seed``, ``job_units``, ``units``, ``copies``, ``replayed``,
    #: ``config_digest``; ``None`` for an unsharded run
    shard: dict[str, Any] | None = None
    #: each API's migration code (``Suite.migration_code``), as ``{"api", "migration"}``:
    #: what the run's migration coverage counts, and warns of when none of it ran
    migrations: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class UnitStarted:
    unit: Unit


@dataclass(frozen=True)
class UnitFinished:
    result: UnitResult


@dataclass(frozen=True)
class RunFinished:
    stop_reason: StopReason
    results: tuple[UnitResult, ...]
    seconds: float

    @property
    def status(self) -> Status:
        return max((r.status for r in self.results), default=Status.PASSED)


@dataclass(frozen=True)
class Notice:
    """Something the user must hear once during a run, e.g. that the shared example
    database stopped answering and the run goes on with a local one (then ``database``
    names the database failures are saved in from now on)."""

    message: str
    database: str | None = None


Event = RunStarted | UnitStarted | UnitFinished | RunFinished | Notice
