"""Ignore files and severity overrides: how a project accepts a known break on purpose.

An ignore file is YAML or JSON::

    ignore:
      - rule: enum-value-added
        path: spec.strategy.type          # glob: "*" matches anything, brackets are literal
        version: v1beta2                  # optional: one served version
        keyword: enum                     # optional glob: the changed keyword (maxLength)
        reason: Recreate was announced in the 1.4 release notes
    severity:
      field-added: off
      storage-version-changed: error

A ``reason`` is required: an ignore without one is a break nobody can explain later.

A *profile* (``--policy``) is the other half: a severity for each rule, each
entry remembering the file line (or built-in profile) it came from, so a finding can say
which line let it pass; see :mod:`compatfuzz.compat._profiles`. The helpers that find
that line (``_line``, ``_where``) live here, since both an ignore file's ``severity:``
and a profile's entries quote it, and the profiles module builds on this one.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compatfuzz.compat._model import RULES, Finding, Rule, Severity
from compatfuzz.errors import InvalidArgument, SchemaLoadError

__all__ = ["IgnoreEntry", "Policy", "PolicyEntry", "load_policy", "parse_severity"]


@functools.lru_cache(maxsize=512)
def _glob(pattern: str) -> re.Pattern[str]:
    """``*`` matches anything and ``?`` one character; brackets are literal, so a path
    glob can say ``spec.containers[*].image`` the way findings print it."""
    return re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."))


@dataclass(frozen=True)
class IgnoreEntry:
    """Accept findings of ``rule`` (or ``*``) at paths matching ``path`` (a glob);
    ``version`` and ``keyword`` (a glob: ``minLength``, ``max*``) narrow it further, so
    a verdict about one bound cannot hide a new finding about another on the same field."""

    rule: str
    path: str
    reason: str
    version: str = ""
    keyword: str = ""

    def matches(self, finding: Finding) -> bool:
        if self.rule not in ("*", finding.rule):
            return False
        if self.version and self.version != finding.version:
            return False
        if self.keyword and _glob(self.keyword).fullmatch(finding.keyword) is None:
            return False
        return _glob(self.path).fullmatch(finding.path) is not None


@dataclass(frozen=True)
class PolicyEntry:
    """One line of a policy profile: findings of ``rule`` get ``severity``.

    ``keyword`` narrows it to findings about one keyword (crdify's ``maxProperties``
    check is ``bound-tightened`` on ``maxProperties`` only); ``when`` is ``added`` or
    ``removed`` for a rule that covers both directions of a flag (``nullable-changed``:
    null newly accepted, or no longer), or ``loosened`` for a finding that is a
    loosening (:attr:`Finding.loosening`: NEW accepts more, old readers may break; the
    built-in profiles' entries only). ``source`` is what a finding quotes: ``FILE:LINE:
    text`` or ``built-in profile NAME: ...``.
    """

    rule: str
    severity: Severity
    source: str
    keyword: str = ""
    when: str = ""

    def matches(self, finding: Finding) -> bool:
        if self.rule != finding.rule:
            return False
        if self.keyword and self.keyword != finding.keyword:
            return False
        if self.when == "added":
            return not finding.old and bool(finding.new)
        if self.when == "removed":
            return bool(finding.old) and not finding.new
        if self.when == "loosened":
            return finding.loosening
        return True


@dataclass(frozen=True)
class Policy:
    """Ignore entries, per-rule severity overrides, and a profile's entries.

    ``severities`` (``--severity``, an ignore file's ``severity:``) win over everything
    and apply whether or not the finding breaks at its path, as they always did;
    ``sources`` says where each came from. ``entries`` are the profile (``--policy``): the
    last entry matching a finding sets its severity when it breaks; a finding that does
    not break at its path stays info unless an entry lowers it further (``ignore``), so
    a profile that only warns about added fields does not turn every harmless addition
    into a warning. ``profile`` names the built-in profile at the root. A bare
    ``Policy()`` has no entries: every rule at its own severity, loosenings included (the
    ``kubernetes-strict`` reading); ``check`` without a policy uses the built-in
    ``kubernetes`` profile, which lets loosenings pass with a warning
    (``compat/_profiles.py``).
    """

    ignores: tuple[IgnoreEntry, ...] = ()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    entries: tuple[PolicyEntry, ...] = ()
    profile: str = "kubernetes"
    sources: Mapping[str, str] = field(default_factory=dict)

    def ignored(self, finding: Finding) -> IgnoreEntry | None:
        for entry in self.ignores:
            if entry.matches(finding):
                return entry
        return None

    def entry_for(self, finding: Finding) -> PolicyEntry | None:
        """The profile entry that decides ``finding`` (the last that matches), if any."""
        for entry in reversed(self.entries):
            if entry.matches(finding):
                return entry
        return None

    def decide(self, finding: Finding, *, breaking: bool,
               default: Severity) -> tuple[Severity, str]:
        """The severity of ``finding`` and the policy line that set it.

        ``default`` is what the rule alone says here (its severity when breaking, info
        otherwise).
        """
        if finding.rule in self.severities:
            sev = self.severities[finding.rule]
            return sev, self.sources.get(finding.rule, f"severity override: {finding.rule} = {sev}")
        entry = self.entry_for(finding)
        if entry is None:
            why = "its severity" if breaking else "not breaking at this path"
            return default, f"built-in profile {self.profile}: {finding.rule} = {default} ({why})"
        if breaking or entry.severity < default:
            return entry.severity, entry.source
        return default, (f"built-in profile {self.profile}: {finding.rule} = {default} "
                         f"(not breaking at this path; {entry.source} applies when it is)")

    def failing_loosenings(self, why: str) -> Policy:
        """This policy with its built-in loosening entries (``when = "loosened"``) at
        ``error``, quoting ``why`` (``--fail-on-impact reads``): an entry a policy file or
        ``--severity`` wrote keeps its word."""
        entries = tuple(
            PolicyEntry(e.rule, Severity.ERROR, f"{e.source.split(' = ')[0]} = error ({why})",
                        e.keyword, e.when) if e.when == "loosened" else e
            for e in self.entries)
        return Policy(self.ignores, self.severities, entries, self.profile, self.sources)

    def merged(self, other: Policy) -> Policy:
        return Policy(self.ignores + other.ignores, {**self.severities, **other.severities},
                      self.entries + other.entries,
                      other.profile if other.entries else self.profile,
                      {**self.sources, **other.sources})


def _rule_id(value: Any, *, source: str, pointer: str, allow_star: bool,
             known: Mapping[str, Rule] = RULES) -> str:
    if allow_star and value == "*":
        return "*"
    if not isinstance(value, str) or value not in known:
        close = difflib.get_close_matches(str(value), list(known), n=1)
        hint = (f"did you mean {close[0]!r}?" if close else
                "run `compatfuzz diff --list-rules` for the rule ids")
        raise SchemaLoadError(f"unknown rule id {value!r}", source=source, pointer=pointer,
                              hint=hint)
    return value


# the words a policy file may use beside the Severity values (error/warn/ignore)
_ALIASES = {"warn": Severity.WARNING, "ignore": Severity.OFF, "none": Severity.OFF}


def _severity(value: Any, *, source: str, pointer: str) -> Severity:
    word = str(value).lower() if value is not False else "off"
    if word in _ALIASES:
        return _ALIASES[word]
    try:
        return Severity(word)
    except ValueError:
        raise SchemaLoadError(
            f"unknown severity {value!r}", source=source, pointer=pointer,
            hint="use one of: error, warn, ignore (or " + ", ".join(
                s.value for s in Severity) + ")",
        ) from None


def _line(text: str, pattern: str, nth: int = 0, start: int = 0) -> tuple[int, str]:
    """The 1-based number and text of the ``nth`` line after line ``start`` matching
    ``pattern`` (0, "" if none): what a finding quotes as the line that set its
    severity."""
    seen = 0
    for i, line in enumerate(text.splitlines(), 1):
        if i > start and re.search(pattern, line):
            if seen == nth:
                return i, line.strip()
            seen += 1
    return 0, ""


def _where(source: str, text: str, pattern: str, nth: int = 0, start: int = 0) -> str:
    """``FILE:LINE: text`` of that line (``FILE`` alone if none matches): the ``source``
    a :class:`PolicyEntry` or a severity override quotes."""
    number, line = _line(text, pattern, nth, start)
    return f"{source}:{number}: {line}" if number else source


def parse_severity(text: str, *, rules: Mapping[str, Rule] = RULES) -> tuple[str, Severity]:
    """Parse a ``RULE=LEVEL`` command-line override; ``rules`` are the valid ids (another
    rule family, such as protobuf's, passes its own)."""
    rule, sep, level = text.partition("=")
    if not sep:
        raise InvalidArgument(
            f"Expected RULE=LEVEL but got --severity={text!r}; "
            "for example --severity enum-value-added=warning"
        )
    return (_rule_id(rule.strip(), source="--severity", pointer="", allow_star=False,
                     known=rules),
            _severity(level.strip(), source="--severity", pointer=""))


def load_policy(path: str | Path, *, rules: Mapping[str, Rule] = RULES) -> Policy:
    """Read an ignore file (YAML or JSON); errors name the file, the entry and the fix.

    ``rules`` are the valid rule ids (default: compat's; protobuf passes its own).

    Raises:
        SchemaLoadError: the file is unreadable or an entry is malformed.
    """
    from compatfuzz.schema._read import parse_documents, read_text

    source = str(path)
    try:
        text = read_text(path)  # a regular file, bounded
    except UnicodeDecodeError as exc:
        raise SchemaLoadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                              source=source, hint="save the ignore file as UTF-8") from None
    except OSError as exc:
        raise SchemaLoadError(f"cannot read ignore file: {exc.strerror}", source=source,
                              hint="check the --ignore path") from None
    # the bounded reader: no alias bomb or absurd nesting
    docs = parse_documents(text, source=source)
    if len(docs) > 1:
        raise SchemaLoadError(f"expected one YAML document, found {len(docs)}",
                              source=source, hint="remove the extra '---' separators")
    doc = docs[0] if docs else None
    if doc is None:
        return Policy()
    if not isinstance(doc, Mapping):
        raise SchemaLoadError("expected a mapping with 'ignore' and/or 'severity'",
                              source=source, hint="start the file with `ignore:`")
    unknown = set(doc) - {"ignore", "severity"}
    if unknown:
        raise SchemaLoadError(f"unknown top-level key(s) {sorted(unknown)}", source=source,
                              pointer=f"/{sorted(unknown)[0]}",
                              hint="only 'ignore' and 'severity' are allowed")
    entries: list[IgnoreEntry] = []
    raw = doc.get("ignore") or []
    if not isinstance(raw, list):
        raise SchemaLoadError("'ignore' must be a list of {rule, path, reason}",
                              source=source, pointer="/ignore")
    for i, item in enumerate(raw):
        ptr = f"/ignore/{i}"
        if not isinstance(item, Mapping):
            raise SchemaLoadError("an ignore entry must be a mapping", source=source,
                                  pointer=ptr, hint="write `- {rule: ..., path: ..., "
                                  "reason: ...}`")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise SchemaLoadError("ignore entry has no 'reason'", source=source,
                                  pointer=ptr, hint="say why this break is acceptable")
        rule = _rule_id(item.get("rule"), source=source, pointer=ptr + "/rule",
                        allow_star=True, known=rules)
        pattern = item.get("path", "*")
        if not isinstance(pattern, str):
            raise SchemaLoadError("'path' must be a string glob", source=source,
                                  pointer=ptr + "/path", hint='e.g. "spec.template.*"')
        keyword = item.get("keyword") or ""
        if not isinstance(keyword, str):
            raise SchemaLoadError("'keyword' must be a string glob", source=source,
                                  pointer=ptr + "/keyword", hint='e.g. "maxLength"')
        entries.append(IgnoreEntry(rule, pattern, reason.strip(),
                                   str(item.get("version") or ""), keyword))
    sev_raw = doc.get("severity") or {}
    if not isinstance(sev_raw, Mapping):
        raise SchemaLoadError("'severity' must map rule ids to levels", source=source,
                              pointer="/severity")
    severities = {
        _rule_id(k, source=source, pointer=f"/severity/{k}", allow_star=False, known=rules):
            _severity(v, source=source, pointer=f"/severity/{k}")
        for k, v in sev_raw.items()
    }
    start = _line(text, r"^\s*['\"]?severity['\"]?\s*:")[0]
    return Policy(tuple(entries), severities, sources={
        k: _where(source, text, rf"^\s*['\"]?{re.escape(k)}['\"]?\s*:", start=start)
        for k in severities})
