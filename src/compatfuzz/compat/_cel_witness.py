"""CEL rules in witnesses: a rule added (or changed) is checked, not assumed.

The static walk sees ``x-kubernetes-validations`` change and can say no more: whether a
new rule rejects what a client already sends, or an object already stored, depends on
what the rule computes. Here each added rule is judged against the objects the other
revision allows, evaluated with the generator's CEL evaluator
(:mod:`compatfuzz.strategies._cel`) the way the API server evaluates it: ``self`` bound
to the value at the rule's node, after pruning and converted by the node's schema
(apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``). Per rule:

* **by construction**: a rule whose result cannot depend on anything an OLD object holds
  (``!has(self.sa) || ...`` where OLD has no ``sa`` at that node, so ``has`` is false for
  every stored object) holds for all of them: not breaking, whatever the search budget.
* **transition** (``oldSelf``): the API server runs it only when there is an old value
  (``validateExpressions`` in validation.go: "transition rules are evaluated only if
  there is a comparable existing value"), so it never refuses re-creating an object; it
  is judged on an OLD object and its unchanged update (``oldSelf == self``). One it
  rejects is a break for updates; else stored objects are safe (it restricts changes,
  which is what it is for). A rule with ``optionalOldSelf: true`` runs on create too
  (``oldSelf`` an optional): not evaluated here, it stays unconfirmed.
* otherwise a Hypothesis search of OLD-valid objects (from OLD's schema at the node) for
  one the rule rejects: found, the finding is confirmed with that object; none within
  the budget, it stays unconfirmed and says so.

Removed rules are judged the same way in the other direction (NEW objects OLD rejects).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from compatfuzz.compat._budget import OUT_OF_BUDGET
from compatfuzz.compat._model import Finding, Side, Status, Witness
from compatfuzz.compat._witness import (
    _known,
    _one_value,
    _settings,
    _short,
    _size,
    _too_large,
    prune,
    sub_schema,
)
from compatfuzz.schema import Schema
from compatfuzz.strategies._cel import (
    compile_rules,
    escape_property,
    holds_without,
    transition_holds,
)

__all__ = ["judge_rules"]

#: ``rejects(value)``: why the reader refuses ``value`` (an object the writer allows), or None
Rejects = Callable[[Any], str | None]


@dataclass(frozen=True)
class _Outcome:
    """What became of one rule on one side: ``witness`` (it breaks), ``safe`` (a reason
    it cannot), or neither (``note`` says why not known)."""

    rule: str
    witness: Witness | None = None
    safe: str = ""
    note: str = ""


def _entries(node: Mapping[str, Any] | None, rules: list[Any]) -> list[Mapping[str, Any]]:
    """The ``x-kubernetes-validations`` entries of ``node`` whose rule is in ``rules``."""
    out = []
    for entry in (node or {}).get("x-kubernetes-validations") or ():
        if isinstance(entry, Mapping) and entry.get("rule") in rules:
            out.append(entry)
    return out


def _absent(schema: Schema, node: Mapping[str, Any], pruning: bool) -> Callable[[str], bool]:
    """``absent(name)``: the writer's objects never hold field ``name`` (as a rule
    spells it) at ``node``: the node does not declare it, and unknown fields are pruned
    (or refused) there rather than kept."""
    props, addl, preserve = _known(schema, node)
    if preserve or addl is True or isinstance(addl, Mapping):
        return lambda name: False
    if addl is None and not pruning:
        return lambda name: False  # an open JSON Schema object may hold any name
    names = {escape_property(str(k)) for k in props}
    return lambda name: name not in names


class _Judge:
    """One side of one finding: the writer's objects against the reader's rules."""

    def __init__(self, f: Finding, side: Side, *, pruning: bool) -> None:
        ctx = f.context
        self.side = side
        self.pruning = pruning
        if side is Side.REQUEST:
            self.writer, self.wnode = ctx.old_schema, dict(ctx.old or {})
            self.reader, self.rnode = ctx.new_schema, dict(ctx.new or {})
            self.who = "NEW"
        else:
            self.writer, self.wnode = ctx.new_schema, dict(ctx.new or {})
            self.reader, self.rnode = ctx.old_schema, dict(ctx.old or {})
            self.who = "OLD"
        self.path = ctx.path

    def seen(self, value: Any) -> Any:
        """The value as the reader's API server sees it: pruned by the reader's schema."""
        if not self.pruning:
            return value
        return prune(self.reader, self.rnode, value)

    def judge(self, entries: list[Mapping[str, Any]], *, search: bool, budget: int,
              seed: int) -> list[_Outcome]:
        """One outcome per rule: proofs first, then one search (``budget`` examples) for
        an object that any rule still open rejects, as for any other finding."""
        done: dict[int, _Outcome] = {}
        open_: list[tuple[int, str, Rejects, bool]] = []
        writer = "OLD" if self.side is Side.REQUEST else "NEW"
        absent = _absent(self.writer, self.wnode, self.pruning)
        for i, entry in enumerate(entries):
            rule = str(entry["rule"])
            node = {**self.rnode, "x-kubernetes-validations": [dict(entry)]}
            compiled = compile_rules(node, path=self.path or "self",
                                     resolve=self.reader.resolve)
            if compiled.unsupported:
                done[i] = _Outcome(rule, note="rule not evaluated: "
                                   f"{compiled.unsupported[0].reason}")
                continue
            if compiled.transition and entry.get("optionalOldSelf") is True:
                done[i] = _Outcome(rule, note="rule not evaluated: optionalOldSelf (CEL "
                                   "optional types) is not available in cel-python")
                continue
            if compiled.transition:
                open_.append((i, rule, self._update_rejects(rule), True))
                continue
            held, used = holds_without(rule, absent)
            if held:
                done[i] = _Outcome(rule, safe=(
                    f"compatible by construction: {writer} has no {', '.join(used)} at "
                    f"{self.path or '$'}, so has(self.{used[0]}) is false for every object "
                    f"{writer} allows and the rule holds whatever their other fields"))
                continue
            open_.append((i, rule, self._rejects(compiled, entry, rule), False))
        if open_:
            if not search or budget <= 0:
                done.update({i: _Outcome(rule, note="search disabled")
                             for i, rule, _, _ in open_})
            else:
                done.update(self._search(open_, budget=budget, seed=seed))
        return [done[i] for i in range(len(entries))]

    def _rejects(self, compiled: Any, entry: Mapping[str, Any], rule: str) -> Rejects:
        def rejects(value: Any) -> str | None:
            if value is None:
                return None  # validation.go: "We only validate non-null values"
            failed, _ = compiled.outcome(self.seen(value))
            if not failed:
                return None
            why = failed[0][1]
            message = entry.get("message")
            said = f"{message} " if isinstance(message, str) and message and not why else ""
            return f"{said}{why + ' ' if why else ''}(rule: {rule})"

        return rejects

    def _update_rejects(self, rule: str) -> Rejects:
        def rejects(value: Any) -> str | None:
            if value is None:
                return None
            seen = self.seen(value)
            held = transition_holds(rule, seen, seen, self.rnode,
                                    resolve=self.reader.resolve)
            if held is None or held:
                return None
            return ("the transition rule rejects an unchanged update (oldSelf == self) "
                    f"(rule: {rule})")

        return rejects

    def _search(self, open_: list[tuple[int, str, Rejects, bool]], *, budget: int,
                seed: int) -> dict[int, _Outcome]:
        """:meth:`_searched`, or each open rule noted unwitnessed when the budget of the
        search (``compat/_budget.py``) runs out first; the proofs already made stand."""
        from compatfuzz.compat._budget import OutOfBudget, note_for

        try:
            return self._searched(open_, budget=budget, seed=seed)
        except OutOfBudget as exc:
            note = note_for(exc)
            return {i: _Outcome(rule, note=note) for i, rule, _, _ in open_}

    def _searched(self, open_: list[tuple[int, str, Rejects, bool]], *, budget: int,
                  seed: int) -> dict[int, _Outcome]:
        from hypothesis.errors import NoSuchExample, Unsatisfiable

        from compatfuzz.compat._budget import check_budget, timed_find
        from compatfuzz.compat._focus import focus
        from compatfuzz.strategies import from_schema

        def all_(note: str) -> dict[int, _Outcome]:
            return {i: _Outcome(rule, note=note) for i, rule, _, _ in open_}

        check_budget()  # a run already spent tries nothing, not even the candidates

        writer = sub_schema(self.writer, self.wnode)
        too_large = _too_large(writer)
        if too_large is not None:
            return all_(f"search skipped: {too_large}")

        def first(value: Any) -> tuple[int, str, str] | None:
            for i, rule, rejects, _ in open_:
                reason = rejects(value)
                if reason is not None:
                    return i, rule, reason
            return None

        for cand in self._candidates([rule for _, rule, _, _ in open_], seed):
            if first(cand) is not None:
                return self._confirmed(open_, cand, first)
        try:
            # draw only the fields the rules (and the schemas) can tell apart: a field
            # no rule reads, the same on both sides, changes no verdict (``_focus``);
            # drawing whole objects under many CEL rules stalled the search
            reader = sub_schema(self.reader, self.rnode)
            found = timed_find(from_schema(focus(writer, writer, reader),
                                           kubernetes=self.writer.kubernetes),
                               lambda v: first(v) is not None,
                               settings=_settings(budget), random=random.Random(seed))
        except (NoSuchExample, Unsatisfiable):
            out = {}
            for i, rule, _, transition in open_:
                out[i] = _Outcome(rule, safe=(
                    "transition rule (oldSelf): it never runs on create, and accepted the "
                    f"unchanged update of every object searched (up to {budget}), so stored "
                    "objects are safe; it only restricts changes")) if transition else \
                    _Outcome(rule, note=f"no object among {budget} searched breaks the "
                             "rule: not confirmed, not proven compatible either")
            return out
        except Exception as exc:  # a strategy that cannot be built must not sink the report
            return all_(f"search failed: {type(exc).__name__}: {_short(str(exc), 200)}")
        return self._confirmed(open_, found, first)

    def _confirmed(self, open_: list[tuple[int, str, Rejects, bool]], found: Any,
                   first: Callable[[Any], tuple[int, str, str] | None]
                   ) -> dict[int, _Outcome]:
        hit = first(found)
        if hit is None:  # pragma: no cover - only called with a rejected value
            return {i: _Outcome(rule, note="witness did not reproduce")
                    for i, rule, _, _ in open_}
        i, rule, reason = hit
        # the finding is confirmed; the other open rules were not judged on their own
        out = {j: _Outcome(r) for j, r, _, _ in open_ if j != i}
        out[i] = _Outcome(rule, witness=Witness(
            self.side, self.path or "$", _read_first(found, rule),
            f"rejected by {self.who}: {_short(reason)}"))
        return out


    def _candidates(self, rules: list[str], seed: int) -> list[Any]:
        """Cheap exact tries before the search: the writer's smallest object with a field
        a rule reads set to a number the rules (the writer's own ones too) compare with,
        and one either side (``minReplicaCount: 101`` for ``<= 100``); the writer's
        schema and CEL rules at the node must accept it. Random integers rarely land in
        ``11..20`` between an old ``<= 20`` and a new ``<= 10``."""
        props, _, _ = _known(self.writer, self.wnode)
        texts = rules + [str(e.get("rule")) for e in self.wnode.get(
            "x-kubernetes-validations") or () if isinstance(e, Mapping)]
        numbers = sorted({int(n) for t in texts for n in re.findall(
            r"(?<![\w.])-?\d+(?![\w.])", t) if abs(int(n)) < 2**53})
        fields = [n for n in dict.fromkeys(
            m for t in rules for m in re.findall(r"\bself\.([A-Za-z_]\w*)", t))
            if isinstance(props.get(n), Mapping)
            and props[n].get("type") in ("integer", "number")]
        if not numbers or not fields:
            return []
        writer = sub_schema(self.writer, self.wnode)
        base = _one_value(writer, writer.root, seed)
        if not isinstance(base, dict):
            return []
        own = compile_rules(self.wnode, path=self.path or "self",
                            resolve=self.writer.resolve)
        out = []
        for name in fields:
            for value in sorted({v for n in numbers for v in (n - 1, n, n + 1)}, key=abs):
                cand = {**base, name: value}
                if writer.is_valid(cand) and own.check(cand):
                    out.append(cand)
        return sorted(out, key=_size)[:64]


def _read_first(value: Any, rule: str) -> Any:
    """``value`` with the fields the rule reads (``self.name``) first, so a witness cut
    short for display still shows them (``{"minReplicaCount": 101, ...}``)."""
    if not isinstance(value, dict):
        return value
    read = [n for n in dict.fromkeys(re.findall(r"\bself\.([A-Za-z_]\w*)", rule))
            if n in value]
    return {**{n: value[n] for n in read}, **value}


def judge_rules(f: Finding, sides: frozenset[Side], *, search: bool, pruning: bool,
                budget: int, seed: int) -> Finding:
    """Judge a ``validations-changed`` finding's rules on each side in ``sides``.

    Added rules are judged on the request side (OLD objects under NEW's rules), removed
    ones on the response side (NEW objects under OLD's rules). A side with a witness is
    confirmed; a side whose every rule is safe is dropped from ``breaks`` (with the
    reason in the message); otherwise the finding stays, unconfirmed, with why.
    ``search=False`` (``--no-dynamic``) still applies the proofs by construction.
    """
    ctx = f.context
    if ctx is None:
        return f
    breaks = set(f.breaks)
    found: list[Witness] = []
    said: list[str] = []
    unknown = False
    judged = False
    cut = False  # a search ran out of budget (``compat/_budget.py``)
    for side in (Side.REQUEST, Side.RESPONSE):
        if side not in f.breaks or side not in sides:
            continue  # a side that does not matter here (status: response only)
        judged = True
        judge = _Judge(f, side, pruning=pruning)
        rules = f.new if side is Side.REQUEST else f.old
        node = ctx.new if side is Side.REQUEST else ctx.old
        outcomes = judge.judge(_entries(node, list(rules or ())), search=search,
                               budget=budget, seed=seed)
        if not outcomes:
            unknown = True
            continue
        hits = [o.witness for o in outcomes if o.witness is not None]
        if hits:
            found.extend(hits)
            said += [f"{side}: {o.note}" for o in outcomes if o.note]
        elif all(o.safe for o in outcomes):
            breaks.discard(side)
            said += [f"{side}: {o.rule + ': ' if len(outcomes) > 1 else ''}{o.safe}"
                     for o in outcomes]
        else:
            unknown = True
            cut = cut or any(o.note.startswith(OUT_OF_BUDGET) for o in outcomes)
            said += [f"{side}: {o.rule + ': ' if len(outcomes) > 1 else ''}"
                     f"{o.note or o.safe}" for o in outcomes
                     if (o.note or o.safe) and o.note != "search disabled"]
    if not judged:
        return f
    message = f.message + (f" [{'; '.join(said)}]" if said else "")
    if found:
        return f.evolve(breaks=frozenset(breaks), status=Status.CONFIRMED,
                        witness=found[0], message=message)
    if unknown and not search:
        return f.evolve(breaks=frozenset(breaks), message=message)  # still not-checked
    # judged, no witness: either proven safe (no longer in breaks) or still open, and
    # then unwitnessed if its search was cut short
    return f.evolve(breaks=frozenset(breaks),
                    status=Status.UNWITNESSED if cut else Status.UNCONFIRMED,
                    message=message)
