"""Accepted differences and stash annotations: what a property does not count as a failure.

Why this exists: a team that knows v1 allows timeouts v1alpha1 cannot
hold, or that drops a field on purpose, could only turn a whole property off, losing every
other finding of it. ``compatfuzz diff`` has had ``--ignore`` for this
(``compat/_policy.py``); an :class:`Accept` entry is its round-trip counterpart: a
difference at an accepted field path, for the properties and version pairs it names, is
not a failure, and a unit fails only on a difference no entry accepts. Every report lists
what each entry accepted (with its ``why`` and a count) and names an entry that accepted
nothing as *stale*, so an entry outliving the difference it was written for shows up.

Stash annotations are a converter's own bookkeeping: a Kubernetes converter keeps what a
version cannot hold in ``metadata.annotations`` (Cluster API's
``cluster.x-k8s.io/conversion-data``, written by ``MarshalData`` and read back by
``UnmarshalData`` in ``sigs.k8s.io/cluster-api/util/conversion/conversion.go``, whose
``FuzzTestFunc`` deletes it before comparing). Its content depends on the path an object
took, so every property compares objects without the annotations whose keys start with a
configured prefix (``stash_annotations``), as ``roundtrip`` already ignores annotations
the client never wrote (``apiserver/_pipeline.py``, ``as_written``).
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import fnmatch
import functools
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip._events import Property, Unit

__all__ = [
    "Accept",
    "AcceptError",
    "accept_summary",
    "accepted_changes",
    "accepted_errors",
    "check_accepts",
    "check_stash_prefixes",
    "checking",
    "from_table",
    "is_accepted",
    "strip_stash",
]

#: The keys of an accept entry (``[[api.accept]]``).
ACCEPT_KEYS = ("path", "property", "versions", "why")
#: keys people reach for, from ``compatfuzz diff``'s ignore files and elsewhere
_SYNONYMS = {"reason": "why", "justification": "why", "field": "path", "version": "versions",
             "pair": "versions", "properties": "property", "rule": "property"}
_VERSIONS = re.compile(r"[A-Za-z0-9_.*?-]+(?:->[A-Za-z0-9_.*?-]+)*")


class AcceptError(InvalidArgument):
    """A mistake in an accept entry: ``key`` is the entry's key at fault, ``hint`` the fix
    (the config loader turns it into a ``SchemaLoadError`` at that key)."""

    def __init__(self, message: str, *, key: str | None, hint: str,
                 index: int | None = None) -> None:
        self.reason, self.key, self.hint, self.index = message, key, hint, index
        super().__init__(f"{message}; {hint}")


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


@dataclass(frozen=True)
class Accept:
    """Accept differences at ``path`` for the properties and version pairs named.

    ``path`` is a field-path glob as diffs print paths (``spec.timeout``,
    ``spec.params[*]``, ``metadata.annotations.*``, ``**.ttl``); it accepts the field and
    everything inside it. ``property`` is a property name or glob (``"*"``, the default,
    is every property); ``versions`` a glob over the unit's versions joined by ``->`` as
    unit names show them (``"v1->v1alpha1"``, ``"*->v1alpha1"``; a ``path_independent``
    unit's three versions read ``"v1->v1beta1->v1alpha1"``, commas work too). ``why`` is
    required: an accepted difference nobody can explain later is a bug hidden on purpose.

    Example::

        API.from_crd("widgets", crd, convert=convert, accept=[
            Accept(path="spec.timeout", versions="v1->v1alpha1",
                   why="v1alpha1 holds whole seconds only (KEP-1234)")])

    Raises:
        InvalidArgument: a missing ``why``, a bad glob or an unknown property name.

    .. versionadded:: 0.2
    """

    path: str
    why: str
    property: str = "*"
    versions: str = "*"
    _tokens: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from compatfuzz.semantic import PathGlob

        for key in ACCEPT_KEYS:
            value = getattr(self, key)
            if not isinstance(value, str):
                raise AcceptError(f"{key} must be a string, got {value!r} "
                                  f"({type(value).__name__})", key=key,
                                  hint=f'write {key} = "..." (a TOML string)')
        if not self.why.strip():
            raise AcceptError("an accepted difference needs a why", key="why",
                              hint='add why = "..." saying why the difference is deliberate '
                                   "(a ticket, a release note)")
        try:
            glob = PathGlob.parse(self.path)
        except InvalidArgument as exc:
            raise AcceptError(str(exc), key="path",
                              hint="field-path globs: spec.timeout, spec.params[*], "
                                   "metadata.annotations.*, **.ttl") from None
        object.__setattr__(self, "_tokens", glob.tokens)
        names = [p.value for p in Property]
        if not self.property or not any(fnmatch.fnmatchcase(n, self.property) for n in names):
            close = difflib.get_close_matches(self.property, names, n=1, cutoff=0.5)
            raise AcceptError(
                f"property {self.property!r} names no property", key="property",
                hint=(f"did you mean {close[0]!r}? " if close else "")
                + f"the properties are: {', '.join(names)} (or a glob such as \"*\")")
        versions = self.versions.replace(",", "->").replace(" ", "")
        if not _VERSIONS.fullmatch(versions):
            raise AcceptError(
                f"versions {self.versions!r} is not a version-pair glob", key="versions",
                hint='write versions = "v1->v1alpha1" or "*->v1alpha1" (version names, '
                     "* and ? joined by ->)")
        object.__setattr__(self, "versions", versions)

    def applies(self, unit: Unit) -> bool:
        """Whether this entry covers ``unit`` (its property and its versions)."""
        return (fnmatch.fnmatchcase(str(unit.property), self.property)
                and fnmatch.fnmatchcase("->".join(unit.versions), self.versions))

    def matches(self, path: str) -> bool:
        """Whether a difference at ``path`` (as a diff prints it) lies under ``path``."""
        return _matches(self._tokens, _segments(path))

    def to_json(self) -> dict[str, str]:
        return {"property": self.property, "versions": self.versions, "path": self.path,
                "why": self.why}


def check_accepts(name: str, entries: Iterable[Any],
                  versions: Sequence[Sequence[str]]) -> tuple[Accept, ...]:
    """``entries`` as :class:`Accept` objects, each naming versions the API has.

    ``versions`` holds each kind's version names. A glob is fine as long as every literal
    version it names exists and it covers some unit; a version that is not the API's gets
    the closest name.
    """
    if isinstance(entries, (Accept, Mapping, str)):
        raise InvalidArgument(f"API {name!r}: accept= takes a list of Accept entries but got "
                              f"{entries!r}; write accept=[Accept(...)]")
    out = []
    known = sorted({v for vs in versions for v in vs})
    for i, given in enumerate(entries):
        entry = given
        if isinstance(given, Mapping):
            try:
                entry = from_table(given)
            except AcceptError as exc:
                exc.index = i
                raise
        elif not isinstance(given, Accept):
            raise InvalidArgument(f"API {name!r}: accept[{i}] is {given!r} "
                                  f"({type(given).__name__}), not an Accept entry; write "
                                  "Accept(path=..., why=...)")
        for literal in entry.versions.split("->"):
            if not _is_glob(literal) and literal not in known:
                close = ([k for k in known if k.startswith(literal)]
                         or difflib.get_close_matches(literal, known, n=1, cutoff=0.5))
                raise AcceptError(
                    f"versions {entry.versions!r} names {literal!r}, which is not a version "
                    f"of API {name!r}", key="versions", index=i,
                    hint=(f"did you mean {close[0]!r}? " if close else "")
                    + f"the versions are: {', '.join(known)}")
        if not any(fnmatch.fnmatchcase("->".join(combo), entry.versions)
                   for vs in versions for n in (1, 2, 3)
                   for combo in _combos(list(vs), n)):
            raise AcceptError(
                f"versions {entry.versions!r} matches no unit of API {name!r}", key="versions",
                index=i, hint="units name their versions joined by -> (roundtrip[v1->v2], "
                              f"path_independent[v1->v2->v3]); the versions are: "
                              f"{', '.join(known)}")
        out.append(entry)
    return tuple(out)


def from_table(entry: Mapping[str, Any]) -> Accept:
    """One accept table (``[[api.accept]]``) as an :class:`Accept`: unknown keys and a
    missing ``path`` or ``why`` are refused (``key=None``: the entry itself is at fault)."""
    unknown = sorted(str(k) for k in set(entry) - set(ACCEPT_KEYS))
    if unknown:
        guesses = [f"{k!r} -> {c[0]!r}" for k in unknown
                   if (c := [_SYNONYMS[k]] if k in _SYNONYMS else
                       difflib.get_close_matches(k, ACCEPT_KEYS, n=1, cutoff=0.6))]
        raise AcceptError(f"unknown key(s) {', '.join(unknown)} in an accept entry", key=None,
                          hint=(f"did you mean {', '.join(guesses)}? " if guesses else "")
                          + f"the keys are: {', '.join(ACCEPT_KEYS)}")
    for key in ("path", "why"):
        if key not in entry:
            example = ('"spec.timeout"' if key == "path" else
                       '"v1alpha1 holds whole seconds only"')
            raise AcceptError(f"accept entry has no {key}", key=None,
                              hint=f"add {key} = {example}"
                              + (": a deliberate difference needs its reason written down"
                                 if key == "why" else ""))
    return Accept(**entry)


def _combos(vs: list[str], n: int) -> Iterator[tuple[str, ...]]:
    return itertools.permutations(vs, n)


def check_stash_prefixes(name: str, prefixes: Any) -> tuple[str, ...]:
    """``prefixes`` as a tuple of non-empty annotation-key prefixes."""
    if isinstance(prefixes, str) or not all(isinstance(p, str) and p for p in prefixes):
        raise InvalidArgument(
            f"API {name!r}: Expected a list of annotation-key prefixes but got "
            f"stash_annotations={prefixes!r}; write "
            'stash_annotations=["cluster.x-k8s.io/conversion-data"]')
    return tuple(prefixes)


# -- field paths as diffs print them --------------------------------------------------

_NAME = re.compile(r"\.?([A-Za-z0-9_$-]+)")
_LIST_MAP = re.compile(r'[^=\s"]+=')


@functools.lru_cache(maxsize=4096)
def _segments(path: str) -> tuple[tuple[str, bool], ...]:
    """``spec.ports[name="a"].port`` -> ``(("spec", False), ("ports", False), ("", True),
    ("port", False))``: each name or map key, and each list item (``is_item``), following
    ``semantic._diff.join_name`` / ``join_key`` / ``join_value`` and list indices."""
    out: list[tuple[str, bool]] = []
    pos = 0
    while pos < len(path):
        if path[pos] == "[":
            end, quoted = pos + 1, False
            while end < len(path) and (quoted or path[end] != "]"):
                if path[end] == "\\" and quoted:
                    end += 1
                elif path[end] == '"':
                    quoted = not quoted
                end += 1
            inner = path[pos + 1:end]
            pos = end + 1
            if inner.startswith('"') and inner.endswith('"') and len(inner) >= 2:
                try:
                    out.append((json.loads(inner), False))
                    continue
                except ValueError:
                    pass
            if inner.isdigit() or inner.startswith("=") or _LIST_MAP.match(inner):
                out.append(("", True))
            else:
                out.append((inner, False))
            continue
        m = _NAME.match(path, pos)
        if m is None:  # not a path we print: compare it as one name
            return ((path, False),)
        out.append((m.group(1), False))
        pos = m.end()
    return tuple(out)


def _matches(tokens: tuple[str, ...], segs: tuple[tuple[str, bool], ...]) -> bool:
    @functools.cache
    def at(i: int, j: int) -> bool:
        if i == len(tokens):
            return True  # the glob names this field or one it lies in
        token = tokens[i]
        if token == "**":
            return at(i + 1, j) or (j < len(segs) and at(i, j + 1))
        if j == len(segs):
            return False
        name, item = segs[j]
        ok = item if token == "[*]" else (not item and token in ("*", name))
        return ok and at(i + 1, j + 1)

    return at(0, 0)


# -- the check in progress ------------------------------------------------------------


@dataclass
class _Check:
    accept: tuple[Accept, ...]
    unit: Unit
    used: set[int]
    written: frozenset[str] | None = None


_CURRENT: contextvars.ContextVar[_Check | None] = contextvars.ContextVar(
    "compatfuzz_accept", default=None)


@contextlib.contextmanager
def checking(accept: Sequence[Accept], unit: Unit, used: set[int], *,
             written: Iterable[str] | None = None) -> Iterator[None]:
    """Within the block, the entries of ``accept`` that cover ``unit`` apply to the
    comparisons made; the indexes of those that accepted a difference go into ``used``.
    ``written`` (the annotation keys the client wrote) makes :func:`strip_stash` also
    drop every other annotation. A context variable, not an argument, so every
    comparison of a check sees it."""
    token = _CURRENT.set(_Check(tuple(accept), unit, used,
                                None if written is None else frozenset(written)))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def is_accepted(path: str) -> bool:
    """Whether an accept entry of the check in progress covers a difference at ``path``
    (and note that it did)."""
    if path == "<root>":
        path = ""
    state = _CURRENT.get()
    if state is None:
        return False
    for i, entry in enumerate(state.accept):
        if entry.applies(state.unit) and entry.matches(path):
            state.used.add(i)
            return True
    return False


def accepted_changes(changes: Any) -> tuple[list[Any], int]:
    """The changes no accept entry covers, and how many were accepted."""
    left = [c for c in changes or () if not is_accepted(str(getattr(c, "path", "") or ""))]
    return left, len(list(changes or ())) - len(left)


def accepted_errors(errors: Sequence[str]) -> list[str]:
    """The validation messages (``path: reason``) no accept entry covers."""
    out = []
    for message in errors:
        path = message.split(": ", 1)[0]
        if not is_accepted(path):
            out.append(message)
    return out


def strip_stash(obj: Any, prefixes: Sequence[str], *, tidy: bool = True) -> Any:
    """``obj`` without the annotations whose keys start with one of ``prefixes`` (and,
    inside :func:`checking` with ``written``, without those the client did not write);
    with ``tidy`` an annotations map (and a ``metadata``) left empty by that is dropped
    too, as converters drop them. ``obj`` itself is not changed."""
    state = _CURRENT.get()
    written = state.written if state is not None else None
    if (not prefixes and written is None) or not isinstance(obj, dict):
        return obj
    meta = obj.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(notes, dict):
        return obj

    def stash(key: Any) -> bool:
        return (str(key).startswith(tuple(prefixes))
                or (written is not None and key not in written))

    if not any(stash(k) for k in notes):
        return obj
    kept = {k: v for k, v in notes.items() if not stash(k)}
    assert isinstance(meta, dict)
    new_meta = {k: v for k, v in meta.items() if k != "annotations"}
    if kept or not tidy:
        new_meta["annotations"] = kept
    out = {k: v for k, v in obj.items() if k != "metadata"}
    if new_meta or not tidy:
        out["metadata"] = new_meta
    return out


# -- reports --------------------------------------------------------------------------


def accept_summary(entries: Sequence[Mapping[str, Any]], results: Iterable[Any]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(accepted, stale) for a run's report.

    ``entries`` are the run's accept entries as ``RunStarted.accept`` lists them (each
    with its ``api`` and ``index``); ``results`` its ``UnitResult`` s. An entry is
    *accepted* with the number of examples and the units it accepted a difference in, and
    *stale* when it covers a unit that passed (ran every example) yet accepted nothing.
    """
    counts: dict[tuple[str, int], int] = {}
    units: dict[tuple[str, int], list[str]] = {}
    ran: list[Unit] = []
    for r in results:
        # only a unit that ran every example: one that failed stopped early, maybe before
        # the difference an entry accepts could show
        if str(r.status) == "passed":
            ran.append(r.unit)
        for index, count in getattr(r, "accepted", ()) or ():
            key = (r.unit.api, index)
            counts[key] = counts.get(key, 0) + count
            units.setdefault(key, []).append(r.unit.id)
    accepted, stale = [], []
    for e in entries:
        key = (e["api"], e["index"])
        row = {**e, "count": counts.get(key, 0), "units": units.get(key, [])}
        if row["count"]:
            accepted.append(row)
            continue
        entry = Accept(path=e["path"], why=e["why"], property=e["property"],
                       versions=e["versions"])
        covered = [u.id for u in ran if u.api == e["api"] and entry.applies(u)]
        if covered:
            stale.append({**row, "units": covered})
    return accepted, stale


def describe(row: Mapping[str, Any]) -> str:
    """``gadgets: spec.timeout (roundtrip, v1->v1alpha1)``: an entry in one line."""
    scope = []
    if row.get("property", "*") != "*":
        scope.append(str(row["property"]))
    if row.get("versions", "*") != "*":
        scope.append(str(row["versions"]))
    return (f"{row['api']}: {row['path']}" + (f" ({', '.join(scope)})" if scope else ""))
