"""Findings, rules and events of the compatibility checker.

A *finding* is one difference between two schema revisions, named by a rule id, located
by a Kubernetes-style field path and carrying the old and new keyword values. Which
*sides* it breaks is a property of the change itself (a tightened bound rejects values
old clients send: ``request``; a relaxed one lets the server send values old clients
reject: ``response``); whether it *is* breaking also depends on the direction the field
travels, which the engine decides per path (Kubernetes: ``spec`` both ways, ``status``
response only). Keeping the two apart lets one static walk serve every direction.

The engine yields :class:`Event` objects and never prints (STYLE.md 20).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "LOOSENING_RULES",
    "RULES",
    "Direction",
    "Finding",
    "FindingEvent",
    "Finished",
    "Impact",
    "Note",
    "PairStarted",
    "Rule",
    "ServerAnswer",
    "ServerCheck",
    "Severity",
    "Side",
    "Started",
    "Status",
    "Witness",
    "Witnessing",
]


class Side(str, enum.Enum):
    """Which party an incompatible change hurts.

    ``request``: a value an old client sends (valid under OLD) is rejected by NEW.
    ``response``: a value a new server sends (valid under NEW) is rejected by OLD clients.
    """

    REQUEST = "request"
    RESPONSE = "response"

    def __str__(self) -> str:
        return self.value


class Direction(str, enum.Enum):
    """How values travel through a field, which decides which sides matter.

    ``auto`` is Kubernetes semantics: ``status`` is written by the server only
    (response), everything else both ways.
    """

    REQUEST = "request"
    RESPONSE = "response"
    BOTH = "both"
    AUTO = "auto"

    def __str__(self) -> str:
        return self.value

    def sides(self, path: str) -> frozenset[Side]:
        """The sides that matter for a field at ``path`` under this direction."""
        if self is Direction.REQUEST:
            return frozenset({Side.REQUEST})
        if self is Direction.RESPONSE:
            return frozenset({Side.RESPONSE})
        if self is Direction.AUTO and (
            path == "status" or path.startswith(("status.", "status["))
        ):
            return frozenset({Side.RESPONSE})
        return frozenset({Side.REQUEST, Side.RESPONSE})


class Severity(str, enum.Enum):
    """How a finding is reported; ordered ``off < info < warning < error``."""

    OFF = "off"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Severity):
            return NotImplemented
        return self.rank < other.rank


_SEVERITY_RANK = {Severity.OFF: 0, Severity.INFO: 1, Severity.WARNING: 2, Severity.ERROR: 3}


class Status(str, enum.Enum):
    """What the dynamic search made of a finding; ordered by how sure we are it breaks.

    ``confirmed``: a witness was found. ``unconfirmed``: a rule says it breaks but no
    witness turned up within the budget (for a CEL rule: also one judged and proven not
    to break, see ``compat/_cel_witness.py``). ``unwitnessed``: the search ran out of its
    time or example budget before it could finish (``compat/_budget.py``); the static
    verdict stands. ``not-checked``: the search was switched
    off or cannot judge this rule (merge semantics, defaults). Whether an ignore entry matched
    is separate (:attr:`Finding.ignored`), so an accepted break keeps its evidence.
    """

    CONFIRMED = "confirmed"
    UNCONFIRMED = "unconfirmed"
    UNWITNESSED = "unwitnessed"
    NOT_CHECKED = "not-checked"

    def __str__(self) -> str:
        return self.value


class Impact(str, enum.Enum):
    """What a finding breaks for an object stored under OLD once NEW is installed.

    Ordered ``none < reads < create < update-field < any-update``:

    ``none``: nothing; no stored object and no client notices.
    ``reads``: only clients reading it (a response-side change, or a default that reads
    back differently); every write of a stored object still succeeds.
    ``create``: re-creating the stored object as it is fails (a restore, a
    delete-and-recreate, a GitOps sync to a fresh cluster); its updates pass, because
    validation ratcheting excuses an error in a value the update leaves unchanged.
    ``update-field``: an update that changes the value named in the finding's impact note
    (the field, or the object or list holding it) fails unless it also fixes it; other
    updates pass.
    ``any-update``: every update of a stored object fails (or loses its data), whatever
    it changes: the error is one ratcheting never excuses, or ratcheting is off.

    See ``compat/_impact.py`` for which change lands where, and why.
    """

    NONE = "none"
    READS = "reads"
    CREATE = "create"
    UPDATE_FIELD = "update-field"
    ANY_UPDATE = "any-update"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        return _IMPACT_RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Impact):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Impact):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Impact):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Impact):
            return NotImplemented
        return self.rank >= other.rank


_RESPONSE_ONLY = frozenset({Side.RESPONSE})

_IMPACT_RANK = {Impact.NONE: 0, Impact.READS: 1, Impact.CREATE: 2, Impact.UPDATE_FIELD: 3,
                Impact.ANY_UPDATE: 4}


@dataclass(frozen=True)
class Rule:
    """A compatibility rule: its id, the sides it breaks by default and a short summary."""

    id: str
    summary: str
    severity: Severity = Severity.ERROR
    # Rules that describe behaviour rather than accepted values; the search cannot refute them.
    behavioural: bool = False


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {r.id: r for r in rules}


RULES: Mapping[str, Rule] = _rules(
    Rule("field-removed", "a field was removed (data sent by old clients is lost or rejected)"),
    Rule("field-renamed", "a field was renamed (same subschema under a new name)"),
    Rule("field-added", "a field was added (breaks only closed or minProperties objects)"),
    Rule("type-changed", "the accepted JSON types changed"),
    Rule("singular-to-plural", "a scalar field became an array"),
    Rule("plural-to-singular", "an array field became a scalar"),
    Rule("wrapped-in-union", "a field was wrapped in oneOf/anyOf"),
    Rule("unwrapped-from-union", "a field was taken out of oneOf/anyOf"),
    Rule("union-branch-added", "a oneOf/anyOf branch was added"),
    Rule("union-branch-removed", "a oneOf/anyOf branch was removed"),
    Rule("required-added", "a field became required"),
    Rule("required-removed", "a required field became optional"),
    Rule("default-added", "a default was added to an existing field", behavioural=True),
    Rule("default-removed", "a default was removed", behavioural=True),
    Rule("default-changed", "a default value changed", behavioural=True),
    Rule("default-missing-in-version",
         "a field defaulted in one served version has no non-null default in another",
         behavioural=True),
    Rule("nullable-changed", "null became accepted or rejected"),
    Rule("enum-value-added", "an enum value was added (old clients may not handle it)"),
    Rule("enum-value-removed", "an enum value was removed"),
    Rule("enum-introduced", "a free field was restricted to an enum"),
    Rule("enum-dropped", "an enum restriction was removed"),
    Rule("bound-tightened", "a bound or length/size/multipleOf/uniqueItems got stricter"),
    Rule("bound-relaxed", "a bound or length/size/multipleOf/uniqueItems got looser"),
    Rule("pattern-changed", "the pattern accepts a different set of strings (witnessed)"),
    Rule("format-changed", "the string/number format changed"),
    Rule("content-closed", "unknown properties are no longer accepted or preserved"),
    Rule("content-opened", "unknown properties are now accepted or preserved"),
    Rule("list-type-changed", "x-kubernetes-list-type changed", behavioural=True),
    Rule("list-map-keys-changed", "x-kubernetes-list-map-keys changed", behavioural=True),
    Rule("map-type-changed", "x-kubernetes-map-type changed", behavioural=True),
    Rule("validations-changed", "x-kubernetes-validations (CEL rules) changed",
         behavioural=True),
    Rule("version-removed", "a served CRD version was removed or stopped being served"),
    Rule("version-added", "a CRD version started being served", Severity.INFO),
    Rule("definition-removed", "a component schema of a whole OpenAPI document was removed"),
    Rule("definition-added", "a component schema of a whole OpenAPI document was added",
         Severity.INFO),
    Rule("route-removed", "a route (method and path) of a web API is gone: old clients' "
         "calls are answered 404 or 405"),
    Rule("route-added", "a route (method and path) of a web API was added", Severity.INFO),
    Rule("route-status-changed", "a route answers with another success status code",
         Severity.WARNING, behavioural=True),
    Rule("storage-version-changed", "the CRD storage version changed", Severity.WARNING,
         behavioural=True),
    Rule("scope-changed", "the CRD scope (Namespaced/Cluster) changed", behavioural=True),
    Rule("crd-invalid", "the API server refuses NEW's CRD (kubectl apply fails)"),
    Rule("witness-only", "the search found a break that no static rule explains"),
    Rule("unhandled", "a keyword changed that no rule understands"),
)


#: The rules that can name a *loosening*: NEW accepts more than OLD (a limit raised, an
#: enum value added or the enum dropped, a field no longer required, a pattern relaxed or
#: removed, null or another type newly accepted, a union branch or an undeclared field
#: newly accepted, a format widened, CEL rules removed, a field added to a closed object).
#: A finding of one of them is a loosening only when it breaks the response side alone
#: (:attr:`Finding.loosening`): every value OLD accepted is still accepted, so every
#: write of a stored object succeeds and only old readers (clients and controllers
#: built for OLD, a rollback to OLD) may reject what new writers store.
LOOSENING_RULES: frozenset[str] = frozenset({
    "bound-relaxed", "enum-value-added", "enum-dropped", "required-removed",
    "pattern-changed", "nullable-changed", "type-changed", "content-opened",
    "union-branch-added", "wrapped-in-union", "format-changed", "validations-changed",
    "field-added",
})


@dataclass(frozen=True)
class Witness:
    """A shrunk value proving a finding: valid on one side, rejected (or dropped) on the other.

    ``value`` sits at ``path`` (the finding's path, or the parent object for field and
    required findings; default findings have none: a validator cannot see defaulting).
    ``side`` is the side it breaks; ``reason`` is what the other schema said (the
    validator message, or "field dropped by pruning").
    """

    side: Side
    path: str
    value: Any
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"side": str(self.side), "path": self.path, "value": self.value,
                "reason": self.reason}


@dataclass(frozen=True)
class ServerAnswer:
    """What a real kube-apiserver answered to one step of a witness confirmation
    (``compat/_confirm.py``): accepted (``message`` names a field it dropped, if any) or
    refused (``message`` is the server's ``Status`` message)."""

    step: str
    accepted: bool
    message: str = ""
    fields: tuple[str, ...] = ()  # the field paths a refusal names (its causes)

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "accepted": self.accepted, "message": self.message,
                "fields": list(self.fields)}


@dataclass(frozen=True)
class ServerCheck:
    """A witness tried on a real kube-apiserver (``diff --apiserver real``).

    ``verdict`` is ``confirmed`` (the server refused the witness on create again, naming
    the finding's field, or dropped its data), ``not-confirmed`` (the server took the
    witness, or refused it under the revision that should take it: the finding or its
    witness is wrong), ``inconclusive`` (refused for other fields only) or ``not-run``
    (``note`` says why, e.g. the server refused NEW as an update of OLD).
    """

    verdict: str
    answers: tuple[ServerAnswer, ...] = ()
    note: str = ""
    server: str = ""  # the server's version, e.g. v1.37.2

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "server": self.server, "note": self.note,
                "answers": [a.to_json() for a in self.answers]}


@dataclass(frozen=True)
class Finding:
    """One difference between OLD and NEW, with what it breaks and how sure we are.

    ``breaks`` are the sides the change hurts whatever the direction; ``breaking`` says
    whether that matters at this path under the chosen direction. ``version`` names the
    served CRD version (``""`` for a single schema); ``definition`` the ``$defs`` entry
    the node came from, which groups findings for built-in kinds.
    """

    rule: str
    path: str
    old: Any
    new: Any
    message: str
    breaks: frozenset[Side]
    breaking: bool = False
    severity: Severity = Severity.ERROR
    status: Status = Status.NOT_CHECKED
    witness: Witness | None = None
    version: str = ""
    definition: str = ""
    keyword: str = ""
    ignore_reason: str = ""
    # The policy line that set ``severity`` (FILE:LINE or a built-in profile).
    policy: str = field(default="", compare=False)
    # What it breaks for an object stored under OLD; None: not judged
    # (protobuf), which a --fail-on-impact gate never lets pass.
    impact: Impact | None = field(default=None, compare=False)
    # Why, in one line, naming the value whose change the server refuses.
    impact_note: str = field(default="", compare=False)
    # The change in the API's source that made this difference, when the input can tell
    # (a Cadwyn VersionChange: "SplitNameAndRenameEmail (version 2023-06-01)").
    made_by: str = field(default="", compare=False)
    # What a real kube-apiserver said of the witness (``diff --apiserver real``).
    server: ServerCheck | None = field(default=None, compare=False)
    # Severity the rule suggests for this particular finding (None: the rule's default).
    suggested: Severity | None = field(default=None, repr=False, compare=False)
    # Private search context (subschemas at this path); not part of equality or output.
    context: Any = field(default=None, repr=False, compare=False)

    def evolve(self, **changes: Any) -> Finding:
        return replace(self, **changes)

    @property
    def ignored(self) -> bool:
        """An ignore-file entry accepted this finding (its reason is ``ignore_reason``)."""
        return bool(self.ignore_reason)

    @property
    def loosening(self) -> bool:
        """NEW accepts more here and refuses nothing OLD accepted: a rule of
        :data:`LOOSENING_RULES` that breaks the response side only (a relaxed pattern once
        the witness search found no string OLD accepts and NEW refuses). It can break old
        readers, never a write."""
        return self.rule in LOOSENING_RULES and self.breaks == _RESPONSE_ONLY

    @property
    def location(self) -> str:
        return f"{self.version}:{self.path}" if self.version else self.path

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "path": self.path,
            "version": self.version,
            "keyword": self.keyword,
            "old": self.old,
            "new": self.new,
            "message": self.message,
            "breaks": sorted(str(s) for s in self.breaks),
            "breaking": self.breaking,
            "severity": str(self.severity),
            "status": str(self.status),
            "witness": self.witness.to_json() if self.witness else None,
            "definition": self.definition,
            "ignored": self.ignored,
            "impact": str(self.impact) if self.impact is not None else None,
            **({"impact_note": self.impact_note} if self.impact_note else {}),
            **({"policy": self.policy} if self.policy else {}),
            **({"made_by": self.made_by} if self.made_by else {}),
            **({"server": self.server.to_json()} if self.server else {}),
            **({"ignore_reason": self.ignore_reason} if self.ignore_reason else {}),
        }


# -- events -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    """The check began: labels of the two revisions and the direction used."""

    old: str
    new: str
    direction: Direction


@dataclass(frozen=True)
class PairStarted:
    """One pair of schemas (one served version, or the single schema) is being compared."""

    version: str


@dataclass(frozen=True)
class Note:
    """Something the user should know that is not a finding (a search that could not run)."""

    version: str
    message: str


@dataclass(frozen=True)
class Witnessing:
    """The witness search of one finding begins (or, with ``rule`` ``""``, the
    whole-schema search of a pair): ``done`` of ``total`` searches of this pair are over.
    ``seconds`` (CPU) and ``examples`` are what the run's searches spent before this one;
    ``clock`` (not compared) reads them live while it runs, for a progress line. Consumers
    show progress from it; it changes nothing in the report.
    """

    version: str
    rule: str
    location: str
    done: int
    total: int
    seconds: float = 0.0
    examples: int = 0
    clock: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class FindingEvent:
    """A finding is final: rule, witness status, severity and ignores are applied."""

    finding: Finding


@dataclass(frozen=True)
class Finished:
    """The check ended; ``findings`` in report order, ``breaking`` those that fail it.

    With ``fail_on_impact`` (``--fail-on-impact``), a breaking finding fails the check
    only when its :class:`Impact` is at least that level; one whose impact was not
    judged (``None``) always does.
    """

    findings: tuple[Finding, ...]
    fail_on_impact: Impact | None = None

    @property
    def breaking(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings
                     if f.breaking and f.severity is Severity.ERROR
                     and not f.ignored and not self.below_gate(f))

    def below_gate(self, f: Finding) -> bool:
        """Whether ``f`` passes only because its impact is below ``fail_on_impact``."""
        gate = self.fail_on_impact
        return gate is not None and f.impact is not None and f.impact < gate

    @property
    def exit_code(self) -> int:
        return 1 if self.breaking else 0


Event = Started | PairStarted | Witnessing | Note | FindingEvent | Finished
