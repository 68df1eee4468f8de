"""The compatibility engine: static rules, then witnesses, as one stream of events.

``check(old, new)`` compares two revisions of one API: two schemas, two CRDs (every
served version, plus CRD-level rules: versions, storage version, scope), or two served
versions of one CRD (``crd.yaml@v1beta1`` and ``crd.yaml@v1``). It yields
:class:`~compatfuzz.compat.Event` objects and never prints (STYLE.md 20); ``diff`` is the
convenience wrapper that collects them into a :class:`Report`.

Why both halves: static rules name a change precisely (rule id, path, old and new keyword
values) but are claims; the Hypothesis search proves each claim with a shrunk witness and,
run on the whole schema pair, catches changes no rule describes (``witness-only``).
"""

from __future__ import annotations

import copy
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from compatfuzz.apiserver._admission import CRDRefused, refused
from compatfuzz.compat._budget import (
    OUT_OF_BUDGET,
    Clock,
    OutOfBudget,
    WitnessBudget,
)
from compatfuzz.compat._cel_witness import judge_rules
from compatfuzz.compat._focus import _plain
from compatfuzz.compat._impact import assess
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
    Severity,
    Side,
    Started,
    Status,
    Witness,
    Witnessing,
)
from compatfuzz.compat._policy import Policy
from compatfuzz.compat._profiles import builtin_profile
from compatfuzz.compat._static import BOTH, NONE, default_gaps, walk_with_aliases
from compatfuzz.compat._witness import (
    Judge,
    Rejection,
    Verdict,
    _too_large,
    explains,
    search,
    witness_for,
)
from compatfuzz.errors import InvalidArgument, SchemaLoadError, UnsupportedSchema
from compatfuzz.schema import CRD, Schema
from compatfuzz.strategies._cel import check_rules
from compatfuzz.strategies._warm import warm_up

__all__ = ["Report", "Revision", "check", "diff", "load_revision"]

@dataclass(frozen=True)
class Revision:
    """One side of a comparison: a single schema, or a CRD with its served versions."""

    label: str
    schema: Schema | None = None
    crd: CRD | None = None
    #: every component schema of a whole OpenAPI / Swagger document, by name
    definitions: Mapping[str, Schema] | None = None
    #: the CRD ``schema`` is one version of (``FILE@VERSION``), which the API server
    #: must accept
    origin: CRD | None = None

    def definition(self) -> CRD | None:
        """The CRD this revision is, or is a version of."""
        return self.crd or self.origin

    def schemas(self) -> dict[str, Schema]:
        """Served versions by name (``{"": schema}`` for a single schema; definitions by
        name for a whole document)."""
        if self.definitions is not None:
            return dict(self.definitions)
        if self.crd is None:
            assert self.schema is not None
            return {"": self.schema}
        return {v.name: v.schema for v in self.crd.versions
                if v.served and v.schema is not None}


def split_spec(text: str) -> tuple[Path, str | None, str | None]:
    """``FILE[#NAME][@VERSION]`` -> (file, definition, version); a file that exists under
    the whole name wins (a path may contain ``#`` or ``@``)."""
    from compatfuzz.schema._spec import parse_spec

    spec = parse_spec(text)
    return spec.path or Path(text), spec.definition, spec.version


def load_revision(spec: str | Path, *, ref_roots: Iterable[str | Path] | None = None
                  ) -> Revision:
    """Load one side of a diff from a command-line spec.

    ``FILE`` (CRD, OpenAPI, JSON Schema), ``FILE@VERSION`` (one served version of a CRD;
    two of these against the same file compare versions inside one CRD),
    ``FILE#NAME`` (one definition of an OpenAPI / Swagger / JSON Schema document holding
    several, or one CRD of a file holding several; ``FILE#NAME@VERSION`` combines both;
    ``NAME`` may be a JSON pointer, ``openapi.yaml#/components/schemas/Order``) or
    ``kubernetes:RELEASE:API_VERSION:KIND`` (``kubernetes:1.25:apps/v1:Deployment``, a
    built-in kind from kubernetes-validate). ``ref_roots`` are extra folders a ``$ref``
    may read (besides the file's own folder).

    Raises:
        SchemaLoadError: the file cannot be read or holds no usable schema.
        InvalidArgument: a CRD file holds several CRDs, or ``@VERSION`` does not exist.
    """
    from compatfuzz import schema as schema_mod
    from compatfuzz.schema._load import crds_from_documents
    from compatfuzz.schema._spec import parse_spec, spec_hint

    text = str(spec)
    parsed = parse_spec(text)
    if parsed.builtin:
        assert parsed.api_version is not None and parsed.kind is not None
        s = schema_mod.load_kubernetes(parsed.api_version, parsed.kind,
                                       release=parsed.release or "1.37")
        return Revision(text, schema=s)
    assert parsed.path is not None
    path, definition, version = parsed.path, parsed.definition, parsed.version
    docs = schema_mod.read_documents(path)
    is_crd = any(isinstance(d, Mapping) and d.get("kind") == "CustomResourceDefinition"
                 for d in docs)
    if not is_crd:
        if version is not None:
            raise InvalidArgument(
                f"{path}: @{version} selects a CRD version, but {path} is not a CRD; "
                f"drop '@{version}'"
            )
        components = _component_names(docs) if definition is None else None
        if components is not None and len(components) > 1:
            # a whole OpenAPI document: every component schema, paired by name
            try:
                return Revision(text, definitions={
                    name: schema_mod.load_schema(path, definition=name, ref_roots=ref_roots)
                    for name in components})
            except SchemaLoadError as exc:
                raise spec_hint(exc, str(path)) from None
        try:
            return Revision(text, schema=schema_mod.load_schema(path, definition=definition,
                                                                ref_roots=ref_roots))
        except SchemaLoadError as exc:
            raise spec_hint(exc, str(path)) from None
    # the documents already read: load_crds(path) would read and parse the file again
    # (a second second for Kyverno's 1.4 MB ClusterPolicy)
    crds: list[CRD] = crds_from_documents(docs, source=str(path))
    if definition is not None:
        crds = [c for c in crds if definition in (c.name, c.kind, c.plural)]
        if not crds:
            raise InvalidArgument(
                f"{path} has no CRD named {definition!r}; use its name, kind or plural"
            )
    if len(crds) != 1:
        names = ", ".join(c.name for c in crds)
        raise InvalidArgument(
            f"{path} holds {len(crds)} CRDs ({names}); compatfuzz diff compares one CRD "
            f"at a time: pick one with {path}#<name>"
        )
    crd = crds[0]
    if version is None:
        return Revision(text, crd=crd)
    served = [x.name for x in crd.versions]
    if version not in served:
        raise SchemaLoadError(
            f"CRD {crd.name} has no version {version!r}; its versions are: "
            f"{', '.join(served)}", source=str(path),
            hint=f"append @VERSION to the file name ({path}@VERSION), one of: "
                 f"{', '.join(served)}",
        )
    v = crd.version(version)
    if v.schema is None:
        raise InvalidArgument(f"{path}@{version}: this version has no schema to compare")
    return Revision(text, schema=v.schema, origin=crd)


def _component_names(docs: list[Any]) -> list[str] | None:
    """The component schema names of an OpenAPI 3 / Swagger 2 document, else ``None``."""
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        return None
    doc = docs[0]
    if "openapi" in doc:
        table = (doc.get("components") or {}).get("schemas")
    elif "swagger" in doc:
        table = doc.get("definitions")
    else:
        return None
    return [str(k) for k in table] if isinstance(table, Mapping) else None


def _as_revision(value: Any, what: str) -> Revision:
    if isinstance(value, Revision):
        return value
    if isinstance(value, Schema):
        origin = value.meta.get("definition_of")
        return Revision(value.name or value.source, schema=value,
                        origin=origin if isinstance(origin, CRD) else None)
    if isinstance(value, CRD):
        return Revision(value.source, crd=value)
    if isinstance(value, (str, Path)):
        return load_revision(value)
    if isinstance(value, Mapping):
        return Revision(f"<{what}>", schema=Schema(root=value, name=what))
    raise InvalidArgument(
        f"Expected a Schema, CRD, Revision, path or JSON Schema mapping but got "
        f"{what}={value!r} (type={type(value).__name__}); load files with "
        "compatfuzz.compat.load_revision()"
    )


def _segments(path: str) -> list[str]:
    return re.findall(r'\[[^\]]*\]|[^.\[]+', path)


def _expand(paths: list[str], aliases: list[tuple[str, str]]) -> list[str]:
    """Every path a finding stands for: its own, plus the same spot under each alias."""
    out = list(paths)
    frontier = list(paths)
    while frontier and len(out) < 5000:
        nxt = []
        for p in frontier:
            for first, other in aliases:
                if p == first or p.startswith((first + ".", first + "[")):
                    q = other + p[len(first):]
                    if q not in out:
                        out.append(q)
                        nxt.append(q)
        frontier = nxt
    return out


def _warm(ctx: Any) -> None:
    """Build both sides' validators before a finding's clock starts: the first build imports
    jsonschema and its format checkers, a one-off that is no part of any search (1.5 s where
    Python compiles them from source, e.g. with PYTHONDONTWRITEBYTECODE and an install that
    wrote no bytecode) and would otherwise spend the first finding's seconds."""
    for schema in (ctx.old_schema, ctx.new_schema):
        if isinstance(schema, Schema):
            schema.validator  # noqa: B018 (a cached property: building it is the point)


def _seed(*parts: str) -> int:
    return zlib.crc32("\0".join(parts).encode())


@dataclass
class _Run:
    direction: Direction
    policy: Policy
    budget: int
    whole_budget: int
    dynamic: bool
    seed: int
    pruning: bool | None
    ratcheting: bool = True
    clock: Clock = field(default_factory=lambda: Clock(WitnessBudget()))
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: witness searches already run in this check, by what they judge (:func:`_search_key`)
    searched: dict[str, tuple[Witness | None, str]] = field(default_factory=dict)

    def finalize(self, f: Finding) -> Finding:
        sides = self.direction.sides(f.path)
        breaking = bool(f.breaks & sides)
        rule = RULES[f.rule]
        if breaking:
            default = f.suggested or rule.severity
        else:
            default = Severity.WARNING if rule.severity is Severity.WARNING else Severity.INFO
        sev, source = self.policy.decide(f, breaking=breaking, default=default)
        f = f.evolve(breaking=breaking, severity=sev, policy=source)
        if not breaking and f.impact is not None and f.impact > Impact.NONE:
            # e.g. a newly required status field: the server writes status, so the side
            # the change breaks is not one that matters there (direction auto)
            f = f.evolve(impact=Impact.NONE, impact_note=(
                f"breaks no side that matters at {f.path} (direction {self.direction})"))
        entry = self.policy.ignored(f)
        if entry is not None:
            f = f.evolve(ignore_reason=entry.reason)
        return f

    def searches(self, f: Finding) -> bool:
        """Whether :meth:`prove` runs a witness search for ``f`` (for progress events)."""
        if not self.dynamic or f.context is None:
            return False
        return f.rule == "validations-changed" or not RULES[f.rule].behavioural

    def prove(self, f: Finding, pruning: bool) -> Finding:
        """Search a witness for each side the finding claims to break (and matters here),
        within the finding's share of the run's budget (``compat/_budget.py``): a search
        cut short leaves the finding *unwitnessed*, its static verdict unchanged."""
        ctx = f.context
        if self.dynamic and ctx is not None:
            _warm(ctx)
        if f.rule == "validations-changed" and ctx is not None:  # CEL: evaluated
            def judged() -> Finding:
                return judge_rules(f, self.direction.sides(f.path), search=self.dynamic,
                                   pruning=pruning, budget=self.budget,
                                   seed=_seed(str(self.seed), f.rule, f.location))

            if not self.dynamic:
                return judged()
            with self.clock.search():
                try:
                    return judged()
                except OutOfBudget as exc:
                    return f.evolve(status=Status.UNWITNESSED,
                                    message=f"{f.message} [{self.clock.note(exc)}]")
        if not self.dynamic or ctx is None or RULES[f.rule].behavioural:
            return f  # defaults, merge semantics: a validator cannot witness them
        decide = bool(getattr(ctx, "decide", False))
        sides = [s for s in (Side.REQUEST, Side.RESPONSE)
                 if s in f.breaks and (decide or s in self.direction.sides(f.path))]
        if not sides:
            return f
        ctx.rule = f.rule
        found: dict[Side, Any] = {}
        notes: list[str] = []
        cut: list[Side] = []
        with self.clock.search():
            for side in sides:
                # the same change at another place (a $ref'd type used twice, or a served
                # version with the same schema) is the same search: run it once
                key = _search_key(f, side, pruning, self.budget)
                if key not in self.searched:
                    try:
                        self.searched[key] = witness_for(
                            f, side, pruning=pruning, budget=self.budget,
                            seed=_seed(str(self.seed), f.rule, f.location, str(side)))
                    except OutOfBudget as exc:
                        self.searched[key] = (None, self.clock.note(exc))
                w, note = self.searched[key]
                if w is not None:
                    w = Witness(w.side, ctx.path, copy.deepcopy(w.value), w.reason)
                if w is not None:
                    found[side] = w
                elif note:
                    notes.append(f"{side}: {note}")
                    if note.startswith(OUT_OF_BUDGET):
                        cut.append(side)
        if decide:
            # a side whose search was cut short keeps its static claim: not decided
            # (unless the claim is too weak to stand alone: claim_if_cut)
            kept = frozenset(cut) & f.breaks if ctx.claim_if_cut else frozenset()
            breaks = frozenset(found) | kept
            if not breaks and cut:
                return f.evolve(breaks=NONE, status=Status.UNWITNESSED,
                                message=f.message + " (undecided: the witness search ran "
                                "out of budget before it found a value one side accepts "
                                "and the other refuses; not counted as breaking; "
                                "--finding-budget and --witness-budget give it more)")
            if not breaks:
                return f.evolve(breaks=NONE, status=Status.UNCONFIRMED,
                                message=f.message + " (no witness either way: equivalent "
                                "as far as the search can tell)")
            f = f.evolve(breaks=breaks)
        if found:
            first = found.get(Side.REQUEST) or found[Side.RESPONSE]
            return f.evolve(status=Status.CONFIRMED, witness=first)
        return f.evolve(status=Status.UNWITNESSED if cut else Status.UNCONFIRMED,
                        message=f.message + (f" [{'; '.join(notes)}]" if notes else ""))

    def whole(self, old: Schema, new: Schema, version: str, *, static: list[Finding],
              pruning: bool, aliases: list[tuple[str, str]]) -> Iterator[Finding]:
        """Search the whole pair for breaks no static finding explains."""
        if not self.dynamic or self.whole_budget <= 0:
            return
        if old.kubernetes == new.kubernetes and _plain(old.root) == _plain(new.root):
            return  # the same schema on both sides (up to descriptions) breaks nothing
        auto = self.direction is Direction.AUTO

        def keep(v: Any) -> Any:
            # status is response-only under Kubernetes semantics: not part of a request
            if auto and isinstance(v, dict) and "status" in v:
                return {k: x for k, x in v.items() if k != "status"}
            return v

        for side in (Side.REQUEST, Side.RESPONSE):
            if side is Side.RESPONSE and self.direction is Direction.REQUEST:
                continue
            if side is Side.REQUEST and self.direction is Direction.RESPONSE:
                continue
            judge = Judge(old, new, pruning, keep=keep if side is Side.REQUEST else _same)
            # a finding stands for its own path and the same spot under each alias
            claims = [SimpleNamespace(rule=s.rule, keyword=s.keyword, path=p, old=s.old,
                                      new=s.new)
                      for s in static if side in s.breaks
                      for p in _expand([s.path], aliases)]

            def unexplained(v: Verdict, r: Rejection, claims: list[Any] = claims,
                            side: Side = side) -> bool:
                # a witness is explained when a reported finding accounts for one of
                # its rejections (that finding's keyword at its path), not merely for
                # something above it, so an ignored parent finding hides nothing
                return side in self.direction.sides(r.path) and not any(
                    explains(c, r) for c in claims)

            # a field one side lacks, read with pruning, is its finding's whole story
            settled = frozenset(p for s in static if pruning
                                and s.rule in ("field-added", "field-removed")
                                for p in _expand([s.path], aliases))
            with self.clock.search():
                try:
                    w, verdict, note = search(
                        judge, side, budget=self.whole_budget,
                        seed=_seed(str(self.seed), version, str(side)),
                        match=unexplained, every=True, settled=settled)
                except OutOfBudget as exc:
                    w, verdict, note = None, None, self.clock.note(exc)
            if note.startswith(("search failed", OUT_OF_BUDGET)):
                self.notes.append(f"whole-schema {side} search: {note}")
            if w is None or verdict is None:
                continue
            yield Finding(
                rule="witness-only", path=verdict.path or "$", old=None, new=None,
                message=f"the search found a {side}-side break here that no rule explains: "
                f"{verdict.reason}", breaks=frozenset({side}), status=Status.CONFIRMED,
                witness=w.__class__(side, "$", w.value, w.reason), version=version,
            )


def _same(v: Any) -> Any:
    return v


def _search_key(f: Finding, side: Side, pruning: bool, budget: int) -> str:
    """Everything :func:`witness_for` judges a finding by, as text: two findings with
    one key get the same answer, whatever their path. That is the rule, keyword and
    values, the subschemas on both sides (and the ``$defs`` they may refer to), the
    candidates, and the finding's path *relative to* the judged node (``explains`` and
    ``required-*`` read the field name from it), not the node's own path."""
    ctx = f.context
    rel: Any = (f.path[len(ctx.path):] if f.path.startswith(ctx.path)
                else [f.path, ctx.path])
    what: list[Any] = ([ctx.same_search] if ctx.same_search
                       else [f.rule, f.keyword, f.old, f.new])
    return json.dumps([
        *what, str(side), pruning, budget, rel, ctx.field,
        ctx.decide, ctx.old, ctx.new, ctx.old_schema.kubernetes, ctx.new_schema.kubernetes,
        ctx.old_schema.root.get("$defs"), ctx.new_schema.root.get("$defs"),
        repr(ctx.candidates)], sort_keys=True, default=repr)


def _document_level(old: Mapping[str, Schema], new: Mapping[str, Schema]
                    ) -> Iterator[Finding]:
    """Component schemas only one side of a whole-document diff has."""
    for name in sorted(set(old) - set(new)):
        yield Finding("definition-removed", "$", name, None,
                      f"component schema {name} removed; operations that use it change",
                      BOTH, version=name, keyword="components.schemas")
    for name in sorted(set(new) - set(old)):
        yield Finding("definition-added", "$", None, name, f"component schema {name} added",
                      NONE, version=name, keyword="components.schemas")


def _refusal(rev: Revision) -> CRDRefused | None:
    crd = rev.definition()
    return refused(crd) if crd is not None else None


def _invalid_crd(error: CRDRefused) -> Finding:
    """NEW's CRD is refused by the API server: no object of it can be written or read."""
    first, more = error.problems[0], len(error.problems) - 1
    message = (f"kubectl apply would refuse this CRD: {error.lines[0]}"
               + (f" (and {more} more error{'s' if more > 1 else ''})" if more else ""))
    return Finding("crd-invalid", "$", None, list(error.lines), message, BOTH,
                   keyword=first.field)


def _crd_level(old: CRD, new: CRD) -> Iterator[Finding]:
    oserved = {v.name for v in old.versions if v.served}
    nserved = {v.name for v in new.versions if v.served}
    for name in sorted(oserved - nserved):
        gone = "removed" if name not in {v.name for v in new.versions} else "no longer served"
        yield Finding("version-removed", "$", name, None,
                      f"served version {name} {gone}; clients using it fail", BOTH,
                      version=name, keyword="spec.versions")
    for name in sorted(nserved - oserved):
        yield Finding("version-added", "$", None, name, f"version {name} is now served",
                      NONE, version=name, keyword="spec.versions")
    if old.storage_version != new.storage_version:
        yield Finding("storage-version-changed", "$", old.storage_version,
                      new.storage_version,
                      f"storage version {old.storage_version} -> {new.storage_version}: "
                      "stored objects need a storage migration", NONE,
                      keyword="spec.versions[*].storage")
    if old.scope != new.scope:
        yield Finding("scope-changed", "$", old.scope, new.scope,
                      f"scope {old.scope} -> {new.scope}: every URL of this resource "
                      "changes", BOTH, keyword="spec.scope")


def check(
    old: Any,
    new: Any,
    *,
    direction: Direction | str = Direction.AUTO,
    policy: Policy | None = None,
    budget: int = 200,
    whole_budget: int = 100,
    dynamic: bool = True,
    seed: int = 0,
    pruning: bool | None = None,
    ratcheting: bool = True,
    fail_on_impact: Impact | str | None = None,
    witness_seconds: float | None = 8.0,
    finding_seconds: float | None = 3.0,
    witness_examples: int | None = None,
) -> Iterator[Event]:
    """Yield events comparing revision ``old`` with ``new``; the last one is ``Finished``.

    Events: ``Started``, then per compared pair ``PairStarted``, a ``Witnessing`` as each
    witness search begins, its ``FindingEvent``s and any ``Note`` (a search that could not
    run or was cut short), and ``Finished`` with every finding.

    ``old``/``new`` are :class:`Schema`, :class:`CRD`, :class:`Revision`, a path/spec
    accepted by :func:`load_revision`, or a raw JSON Schema mapping. ``direction`` is
    ``auto`` (Kubernetes: ``status`` response-only, the rest both ways), ``request``,
    ``response`` or ``both``. ``budget`` is the number of examples searched per finding,
    ``whole_budget`` per side for the whole-schema search, which draws only the fields
    that differ (``_focus``); ``dynamic=False`` skips both.
    ``pruning`` (default: on for Kubernetes schemas) reads unknown fields as dropped
    rather than rejected. Runs are reproducible: the search is seeded from ``seed``.

    The search is bounded in CPU time as well as examples (``compat/_budget.py``):
    ``witness_seconds`` for every search of the run together (default 8),
    ``finding_seconds`` for one finding, or one side of the whole-schema search (default
    3), ``witness_examples`` examples drawn in the run (default: no limit); ``None`` lifts
    a limit. A finding whose search runs out is reported with its static verdict and
    status ``unwitnessed``, and a ``Note`` says how many were cut short. Within the
    budget, results do not depend on the machine's load (CPU time, not wall time).

    Each finding carries its :class:`Impact` on objects stored under OLD: ``ratcheting``
    (default: on, a Kubernetes 1.30+ server) says whether the API server ratchets CRD
    validation (``compat/_impact.py``). ``fail_on_impact`` (``none``, ``reads``,
    ``create``, ``update-field``, ``any-update``) lets a breaking finding fail the check
    only at that impact or above (``Finished.breaking``).

    ``policy`` defaults to the built-in ``kubernetes`` profile, which reports a
    loosening (:attr:`Finding.loosening`: NEW accepts more; impact ``reads``) as a
    ``warning`` that does not fail the check; ``fail_on_impact`` ``reads`` or ``none``
    makes it an ``error`` again, as does ``resolve_policy("kubernetes-strict")``.

    Example::

        for event in check("v1.yaml", "v2.yaml", direction="both"):
            if isinstance(event, FindingEvent) and event.finding.breaking:
                print(event.finding.rule, event.finding.path)

    Raises:
        InvalidArgument: bad ``direction``/``budget``/``witness_seconds``/
            ``finding_seconds``/``witness_examples``, or unusable inputs.
        SchemaLoadError: a file cannot be loaded.

    .. versionadded:: 0.1
    """
    try:
        direction = Direction(direction)
    except ValueError:
        raise InvalidArgument(
            f"Expected one of request, response, both, auto but got direction={direction!r}"
        ) from None
    for name, value in (("budget", budget), ("whole_budget", whole_budget)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidArgument(
                f"Expected a non-negative int but got {name}={value!r} "
                f"(type={type(value).__name__}); use 0 to skip that search"
            )
    gate = _impact_level(fail_on_impact)
    limits = WitnessBudget(witness_seconds, finding_seconds, witness_examples)
    o, n = _as_revision(old, "old"), _as_revision(new, "new")
    if policy is None:
        policy = builtin_profile("kubernetes")
    if gate is not None and gate <= Impact.READS:
        # the gate asks for what breaks old readers: loosenings fail again
        policy = policy.failing_loosenings(
            f"--fail-on-impact {gate}: what breaks old readers fails")
    run = _Run(direction, policy, budget, whole_budget, dynamic, seed, pruning,
               ratcheting=bool(ratcheting), clock=Clock(limits))
    yield Started(o.label, n.label, direction)

    pre: list[Finding] = []
    refused = {side: _refusal(rev) for side, rev in (("OLD", o), ("NEW", n))}
    if refused["NEW"] is not None:  # a release gate must fail: the first finding
        pre.append(_invalid_crd(refused["NEW"]))
    if refused["OLD"] is not None:
        lines = "\n".join(f"  {line}" for line in refused["OLD"].lines)
        yield Note("", f"OLD: kubectl apply would refuse this CRD (compared anyway):\n{lines}")
    if (o.definitions is None) != (n.definitions is None):
        raise InvalidArgument(
            f"cannot compare a whole OpenAPI document with one schema ({o.label} vs "
            f"{n.label}); name a definition on both sides with FILE#NAME, or on neither"
        )
    if o.definitions is not None and n.definitions is not None:
        pre += list(_document_level(o.definitions, n.definitions))
    if o.crd is not None and n.crd is not None:
        pre += list(_crd_level(o.crd, n.crd))
    elif (o.crd is None) != (n.crd is None):
        raise InvalidArgument(
            f"cannot compare a whole CRD with a single schema ({o.label} vs {n.label}); "
            "select a version on both sides with FILE@VERSION"
        )
    for raw in pre:
        f = run.finalize(assess(raw, None, ratcheting=run.ratcheting))
        run.findings.append(f)
        yield FindingEvent(f)

    oschemas, nschemas = o.schemas(), n.schemas()
    multi = n.crd is not None and len(nschemas) > 1
    gaps = list(default_gaps(nschemas, oschemas if o.crd is not None else None)
                ) if multi else []
    for version in [v for v in nschemas if v in oschemas]:
        yield PairStarted(version)
        os_, ns = oschemas[version], nschemas[version]
        prune = pruning if pruning is not None else (
            os_.kubernetes or ns.kubernetes or o.crd is not None)
        static, aliases = walk_with_aliases(os_, ns, version=version, pruning=prune)
        static += [g for g in gaps if g.version == version]
        searching = run.dynamic
        # CEL the API server refuses: exit 2, like any input error (a CRD already
        # reported as refused: a note, and the comparison goes on without the search)
        for side, schema in (("OLD", os_), ("NEW", ns)):
            try:
                check_rules(schema)
            except UnsupportedSchema as exc:
                if refused[side] is None:
                    raise
                run.dynamic = False
                run.notes.append(f"witness search skipped: {side} {exc}")
        too_large = _too_large(os_) or _too_large(ns)
        if too_large and searching:  # minItems: 1e6 would search for minutes
            run.dynamic = False
            run.notes.append(f"witness search skipped: {too_large}")
        searched = [f for f in static if run.searches(f)]
        whole = run.dynamic and run.whole_budget > 0
        if searched or whole:
            warm_up()  # Hypothesis's one-time set-up, outside the budget
        total, done = len(searched) + whole, 0
        proved = []
        for f in static:
            if run.searches(f):
                yield Witnessing(version, f.rule, f.location, done, total,
                                 run.clock.seconds, run.clock.examples, run.clock)
                done += 1
            proved.append(run.prove(f, prune))
        if whole:
            where = f"whole schema {version}" if version else "whole schema"
            yield Witnessing(version, "", where, done, total, run.clock.seconds,
                             run.clock.examples, run.clock)
        proved += list(run.whole(os_, ns, version, static=proved, pruning=prune,
                                 aliases=aliases))
        run.dynamic = searching
        for p in proved:
            f = run.finalize(assess(p, ns, ratcheting=run.ratcheting,
                                    sides=run.direction.sides(p.path)).evolve(context=None))
            run.findings.append(f)
            yield FindingEvent(f)
        for message in run.notes:
            yield Note(version, message)
        run.notes.clear()
    for g in gaps:  # versions only NEW serves have no pair, but their gaps count too
        if g.version not in oschemas:
            f = run.finalize(assess(g, nschemas.get(g.version), ratcheting=run.ratcheting))
            run.findings.append(f)
            yield FindingEvent(f)
    cut = sum(1 for f in run.findings if f.status is Status.UNWITNESSED)
    if cut:
        yield Note("", f"{OUT_OF_BUDGET} for {cut} finding{'' if cut == 1 else 's'} "
                   f"({limits.describe()}; {run.clock.seconds:.1f} CPU s searched): "
                   "they are reported unwitnessed, with their static verdict (each "
                   "names the limit it reached and the option that raises it)")
    yield Finished(tuple(run.findings), fail_on_impact=gate)


def _impact_level(value: Impact | str | None) -> Impact | None:
    if value is None or isinstance(value, Impact):
        return value
    try:
        return Impact(value)
    except ValueError:
        raise InvalidArgument(
            f"Expected one of {', '.join(i.value for i in Impact)} but got "
            f"fail_on_impact={value!r}; any-update fails only on changes that break "
            "every update of a stored object"
        ) from None


@dataclass(frozen=True)
class Report:
    """Every finding of one ``check`` run; ``exit_code`` is the CLI's (0 ok, 1 breaking)."""

    old: str
    new: str
    direction: Direction
    findings: tuple[Finding, ...]
    fail_on_impact: Impact | None = None

    @property
    def breaking(self) -> tuple[Finding, ...]:
        return Finished(self.findings, self.fail_on_impact).breaking

    @property
    def exit_code(self) -> int:
        return 1 if self.breaking else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old, "new": self.new, "direction": str(self.direction),
            "breaking": len(self.breaking), "exit_code": self.exit_code,
            "findings": [f.to_json() for f in self.findings],
        }


def diff(old: Any, new: Any, **options: Any) -> Report:
    """Run :func:`check` to the end and return its :class:`Report` (same options).

    Example::

        report = diff(load_revision("crd.yaml@v1beta1"), load_revision("crd.yaml@v1"))
        assert report.exit_code == 0, [f.to_json() for f in report.breaking]
    """
    started: Started | None = None
    for event in check(old, new, **options):
        if isinstance(event, Started):
            started = event
        elif isinstance(event, Finished):
            assert started is not None
            return Report(started.old, started.new, started.direction, event.findings,
                          event.fail_on_impact)
    raise AssertionError("check() ended without Finished")  # pragma: no cover
