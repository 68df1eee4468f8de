"""CEL rules in witnesses: a rule added (or changed) is checked, not assumed (issue 19).

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
* **transition** (``oldSelf``): the API server runs it on update only, so it never
  refuses re-creating an object; it is judged on an OLD object and its unchanged update
  (``oldSelf == self``). One it rejects is a break for updates; else stored objects are
  safe (it restricts changes, which is what it is for).
* otherwise a Hypothesis search of OLD-valid objects (from OLD's schema at the node) for
  one the rule rejects: found, the finding is confirmed with that object; none within
  the budget, it stays unconfirmed and says so.

Removed rules are judged the same way in the other direction (NEW objects OLD rejects).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compatfuzz.compat._model import Finding, Side, Status, Witness
from compatfuzz.compat._witness import (
    _known,
    _settings,
    _short,
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


def _absent(schema: Schema, node: Mapping[str, Any], pruning: bool) -> Any:
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
        self.finding = f
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

    def judge(self, entry: Mapping[str, Any], *, search: bool, budget: int,
              seed: int) -> _Outcome:
        rule = str(entry["rule"])
        node = {**self.rnode, "x-kubernetes-validations": [dict(entry)]}
        compiled = compile_rules(node, path=self.path or "self", resolve=self.reader.resolve)
        if compiled.unsupported:
            return _Outcome(rule, note=f"rule not evaluated: {compiled.unsupported[0].reason}")
        if compiled.transition:
            return self._transition(rule, entry, search=search, budget=budget, seed=seed)
        held, used = holds_without(rule, _absent(self.writer, self.wnode, self.pruning))
        if held:
            writer = "OLD" if self.side is Side.REQUEST else "NEW"
            names = ", ".join(used)
            return _Outcome(rule, safe=(
                f"compatible by construction: {writer} has no {names} at {self.path or '$'}, "
                f"so has(self.{used[0]}) is false for every object {writer} allows and "
                "the rule holds whatever their other fields"))
        if not search:
            return _Outcome(rule, note="search disabled")

        def rejects(value: Any) -> str | None:
            failed, _ = compiled.outcome(self.seen(value))
            if not failed:
                return None
            why = failed[0][1]
            message = entry.get("message")
            said = f"{message} " if isinstance(message, str) and message and not why else ""
            return f"{said}{why + ' ' if why else ''}(rule: {rule})"

        return self._search(rule, rejects, budget=budget, seed=seed,
                            what="object")

    def _transition(self, rule: str, entry: Mapping[str, Any], *, search: bool,
                    budget: int, seed: int) -> _Outcome:
        if not search:
            return _Outcome(rule, note="search disabled")

        def rejects(value: Any) -> str | None:
            seen = self.seen(value)
            held = transition_holds(rule, seen, seen, self.rnode,
                                    resolve=self.reader.resolve)
            if held is None or held:
                return None
            return (f"the transition rule rejects an unchanged update (oldSelf == self) "
                    f"(rule: {rule})")

        out = self._search(rule, rejects, budget=budget, seed=seed,
                           what="unchanged update")
        if out.witness is not None or out.note.startswith("search"):
            return out
        return _Outcome(rule, safe=(
            f"transition rule (oldSelf): accepted every unchanged update of the "
            f"{budget} objects searched and never runs on create, so stored objects are "
            "safe; it only restricts changes"))

    def _search(self, rule: str, rejects: Any, *, budget: int, seed: int,
                what: str) -> _Outcome:
        from hypothesis import find
        from hypothesis.errors import NoSuchExample, Unsatisfiable

        from compatfuzz.strategies import from_schema

        if budget <= 0:
            return _Outcome(rule, note="search disabled")
        writer = sub_schema(self.writer, self.wnode)
        too_large = _too_large(writer)
        if too_large is not None:
            return _Outcome(rule, note=f"search skipped: {too_large}")
        try:
            found = find(from_schema(writer, kubernetes=self.writer.kubernetes),
                         lambda v: rejects(v) is not None,
                         settings=_settings(budget), random=random.Random(seed))
        except (NoSuchExample, Unsatisfiable):
            return _Outcome(rule, note=f"no {what} among {budget} searched breaks the rule: "
                            "not confirmed, not proven compatible either")
        except Exception as exc:  # a strategy that cannot be built must not sink the report
            return _Outcome(rule, note=f"search failed: {type(exc).__name__}: "
                            f"{_short(str(exc), 200)}")
        reason = rejects(found)
        if reason is None:  # pragma: no cover - find() only returns satisfying values
            return _Outcome(rule, note="witness did not reproduce")
        return _Outcome(rule, witness=Witness(
            self.side, self.path or "$", _read_first(found, rule),
            f"rejected by {self.who}: {_short(reason)}"))


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
    ``search=False`` (``--no-witness``) still applies the proofs by construction.
    """
    ctx = f.context
    if ctx is None:
        return f
    breaks = set(f.breaks)
    found: list[Witness] = []
    said: list[str] = []
    unknown = False
    for side in (Side.REQUEST, Side.RESPONSE):
        if side not in f.breaks or side not in sides:
            continue
        judge = _Judge(f, side, pruning=pruning)
        rules = f.new if side is Side.REQUEST else f.old
        node = ctx.new if side is Side.REQUEST else ctx.old
        outcomes = [judge.judge(e, search=search, budget=budget, seed=seed + i)
                    for i, e in enumerate(_entries(node, list(rules or ())))]
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
            said += [f"{side}: {o.note or o.safe}" for o in outcomes
                     if o.note != "search disabled"]
    message = f.message + (f" [{'; '.join(said)}]" if said else "")
    if found:
        return f.evolve(breaks=frozenset(breaks), status=Status.CONFIRMED,
                        witness=found[0], message=message)
    if unknown and not search:
        return f.evolve(breaks=frozenset(breaks), message=message)  # still not-checked
    # judged, no witness: either proven safe (no longer in breaks) or still open
    return f.evolve(breaks=frozenset(breaks), status=Status.UNCONFIRMED, message=message)
