"""Which ``VersionChange`` made a Cadwyn diff's finding, and which fields it renamed.

A Cadwyn version's schema is HEAD's with the bundle's instructions undone, newest first
(``cadwyn.generate_versioned_models``); ``schema(X).field("email_address").had(
name="email")`` is a rename, not a field removed beside another added.  So every field of
a version has a HEAD name, and two fields with the same HEAD name are one field renamed:

* between two versions of a bundle, Cadwyn migrates the rename both ways and each version
  keeps its own names, so the finding warns (what a client must change to move on) unless
  the policy says otherwise;
* between two releases of one version, the version's contract changed: the finding keeps
  its rule's severity (an error).

:class:`Blame` gives the walker those renames (``compat/_static.py``, ``RENAMES``) and
names, on each finding, the ``VersionChange`` that made it (:attr:`Finding.made_by`):
between versions, the instructions of the versions in between that touch the field
(``CadwynAPI.blame``); between releases, the instructions on the field one release has
and the other lacks, or else HEAD itself, which changed with no ``VersionChange`` to keep
the old version as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compatfuzz.cadwyn import HEAD, CadwynAPI, Instruction
from compatfuzz.compat import Finding, FindingEvent, Finished, Policy, Severity
from compatfuzz.compat._static import Renamed

__all__ = ["Blame", "Version"]

_SEGMENT = re.compile(r'\[[^\]]*\]|[^.\[]+')


@dataclass(frozen=True)
class Version:
    """One side of a Cadwyn diff: a bundle, one of its versions and its HEAD schemas."""

    api: CadwynAPI
    version: str
    schemas: Mapping[str, type[Any]]

    def model(self, name: str) -> type[Any]:
        return self.api.model(self.schemas[name], self.version)

    def head_names(self, name: str) -> dict[str, str]:
        """``{field name in this version: its name at HEAD}`` for the fields of schema
        ``name`` that a ``had(name=...)`` renamed on the way down from HEAD."""
        if self.version == HEAD:
            return {}
        now: dict[str, str] = {}  # HEAD name -> name so far, newest change first
        for i in reversed(self.api.instructions(self.schemas[name], self.version)):
            if i.renamed is not None:
                newer, older = i.renamed
                head = next((h for h, n in now.items() if n == newer), newer)
                now[head] = older
        return {n: h for h, n in now.items() if n != h}


def _keys(model: type[Any]) -> dict[str, str]:
    """``{field name: JSON key}``: a field's alias is its key in the body."""
    fields = getattr(model, "model_fields", {})
    return {name: info.alias if isinstance(info.alias, str) else name
            for name, info in fields.items()}


def _first(path: str) -> str:
    """The top-level key of a finding's path (``email`` of ``email``, ``a`` of ``a.b``)."""
    seg = next(iter(_SEGMENT.findall(path)), "")
    if seg.startswith("["):
        try:
            return str(json.loads(seg[1:-1]))
        except ValueError:
            return seg[1:-1]
    return seg


def _named(instructions: Iterable[tuple[str, str]]) -> str:
    """``Change (version V); Other (version W)``, each once, in order."""
    return "; ".join(dict.fromkeys(f"{change} (version {version})"
                                   for change, version in instructions))


class Blame:
    """Renames and ``made by`` for one Cadwyn diff, OLD ``old`` against NEW ``new``."""

    def __init__(self, old: Version, new: Version) -> None:
        self.old = old
        self.new = new
        #: versions of a bundle (a rename migrates), not two releases of one version
        self.between_versions = old.version != new.version
        #: (schema, old key, new key) of the renames Cadwyn migrates
        self.migrated: set[tuple[str, str, str]] = set()
        self._pairs: dict[str, dict[str, Renamed]] = {}

    def renames(self, name: str) -> dict[str, dict[str, Renamed]]:
        """The renames for the walker (``compat/_static.py``, ``RENAMES``) when schema
        ``name`` is compared: its own at the root (``""``), and those of every other
        schema both sides have, under its ``$defs`` name (pydantic's: the class name)."""
        out = {"": self._pair(name)}
        for other in self.new.schemas:
            if other != name and other in self.old.schemas:
                out[other] = self._pair(other)
        return {k: v for k, v in out.items() if v}

    def _pair(self, name: str) -> dict[str, Renamed]:
        """The renames of schema ``name``'s fields, by OLD's key (computed once)."""
        if name not in self._pairs:
            self._pairs[name] = self._renamed(name)
        return self._pairs[name]

    def _renamed(self, name: str) -> dict[str, Renamed]:
        old_keys, new_keys = _keys(self.old.model(name)), _keys(self.new.model(name))
        old_head, new_head = self.old.head_names(name), self.new.head_names(name)
        gone = [f for f, key in old_keys.items() if key not in new_keys.values()]
        fresh = [f for f, key in new_keys.items() if key not in old_keys.values()]
        out = {}
        for field in gone:
            head = old_head.get(field, field)
            same = [f for f in fresh if new_head.get(f, f) == head]
            if len(same) != 1:
                continue
            before, after = old_keys[field], new_keys[same[0]]
            if self.between_versions:
                why = "Cadwyn migrates it: each version keeps its own name"
                self.migrated.add((name, before, after))
            else:
                why = f"both are HEAD's {head!r}"
            out[before] = Renamed(after, why)
        return out

    # -- made by -------------------------------------------------------------------------

    def made_by(self, f: Finding) -> str:
        """The ``VersionChange`` (or HEAD) that made ``f``, or ``""`` (module docstring)."""
        name = f.version.split(".", maxsplit=1)[0]  # Customer, Customer.request
        if f.path == "$" or name not in self.old.schemas or name not in self.new.schemas:
            return ""
        keys = {_first(f.path)}
        if f.rule == "field-renamed" and isinstance(f.new, str):
            keys.add(f.new)
        for side in (self.old, self.new):  # JSON keys to field names, as instructions say
            keys |= {field for field, key in _keys(side.model(name)).items() if key in keys}
        if self.between_versions:
            return self._between(name, keys)
        return self._release(name, keys, deep=len(_SEGMENT.findall(f.path)) > 1)

    def _touching(self, side: Version, name: str, version: str,
                  keys: Iterable[str]) -> list[Instruction]:
        if version == HEAD:
            return []
        schema = side.schemas[name]
        return [i for key in sorted(keys) for i in side.api.blame(schema, version, key, ())[1]]

    def _between(self, name: str, keys: set[str]) -> str:
        for side in (self.new, self.old):  # the bundle that has both versions
            order = [*side.api.versions, HEAD]
            if self.old.version in order and self.new.version in order:
                lo, hi = sorted((self.old.version, self.new.version), key=order.index)
                found = [i for i in self._touching(side, name, lo, keys)
                         if order.index(i.version) <= order.index(hi)]
                return _named((i.version_change, i.version) for i in found)
        return ""

    def _release(self, name: str, keys: set[str], *, deep: bool) -> str:
        version = self.new.version

        def said(side: Version) -> dict[tuple[str, str, str], Instruction]:
            return {(i.version, i.version_change, i.text): i
                    for i in self._touching(side, name, version, keys)}

        before, after = said(self.old), said(self.new)
        sides: dict[tuple[str, str], set[str]] = {}  # (change, version) -> OLD/NEW
        for where, mine, other in (("NEW", after, before), ("OLD", before, after)):
            for key, i in mine.items():
                if key not in other:
                    sides.setdefault((i.version_change, i.version), set()).add(where)
        if sides:
            how = {frozenset({"NEW"}): "added in NEW", frozenset({"OLD"}): "only in OLD"}
            return "; ".join(
                f"{change} (version {version}, {how.get(frozenset(w), 'edited in NEW')})"
                for (change, version), w in sides.items())
        if deep:  # a nested schema's own instructions may have made it: do not guess
            return ""
        head = self.new.schemas[name]
        where = f"HEAD ({head.__module__}.{head.__qualname__})"
        return where if version == HEAD else (
            f"{where}, with no VersionChange to keep {version} as it was")

    # -- findings ------------------------------------------------------------------------

    def finding(self, f: Finding, policy: Policy) -> Finding:
        """``f`` with its ``made_by``; a rename Cadwyn migrates warns, unless the policy
        decides its severity itself (a ``--severity``, a profile or policy file entry)."""
        f = f.evolve(made_by=self.made_by(f) or f.made_by)
        name = f.version.split(".", maxsplit=1)[0]
        if (f.rule == "field-renamed" and f.breaking and f.severity is Severity.ERROR
                and (name, f.old, f.new) in self.migrated
                and f.rule not in policy.severities and policy.entry_for(f) is None):
            f = f.evolve(severity=Severity.WARNING, policy=(
                f"built-in profile {policy.profile}: field-renamed = warning (Cadwyn "
                "migrates a rename between versions: each keeps its own names)"))
        return f

    def event(self, event: Any, policy: Policy) -> Any:
        """``event`` with its findings passed through :meth:`finding`."""
        if isinstance(event, FindingEvent):
            return FindingEvent(self.finding(event.finding, policy))
        if isinstance(event, Finished):
            return Finished(tuple(self.finding(f, policy) for f in event.findings),
                            event.fail_on_impact)
        return event
