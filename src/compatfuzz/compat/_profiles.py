"""Policy profiles for ``compatfuzz diff --policy``.

A project states what it promises, and the verdict should follow that promise rather than
one rule set for everybody: Gateway API allows loosened validation and enum additions in
a minor release, and a project that already gates on crdify has written its promise in
crdify's format. ``--policy`` takes one of:

* ``kubernetes`` (the default for CRDs and schema files): every rule at its own
  severity, except that a *loosening* warns instead of failing (below);
* ``kubernetes-strict``: every rule at its own severity, loosenings included: the
  Kubernetes API conventions read to the letter ("Any API change must not make an
  existing client fail"), for a project whose old clients validate what they read;
* ``rest``: the same severities for a web API (the default for pydantic and Cadwyn
  inputs): its report speaks of requests and responses (``compat/_rest.py``), and the
  policy line a finding quotes names a profile that fits it;
* ``gateway-api``: Gateway API's published policy (below);
* ``crdify:FILE``: a crdify configuration, read as crdify reads it;
* ``FILE``: our own format, TOML or YAML::

      extends = "gateway-api"          # optional: kubernetes (default),
                                       # kubernetes-strict, rest or gateway-api
      [rules]
      "field-added" = "warn"           # error, warn or ignore
      "bound-tightened[maxLength]" = "ignore"   # RULE[KEYWORD]: one keyword only

Every entry keeps the line it came from; a finding quotes it (``policy:``), so a reviewer
sees which line let a change pass.

Why loosenings warn by default. A loosening (``Finding.loosening``: a limit relaxed such
as ``maxItems`` 16 -> 64, an enum value added, a field no longer required, a pattern
relaxed or removed, null or a type newly accepted, ...) refuses nothing OLD accepted: no
write of a stored object fails, and only old readers (a client or controller built for
OLD, a rollback to OLD) may meet a value they do not expect. Projects announce such
changes as compatible (Kueue's changelog calls a raised ``maxItems`` "relaxed"; Gateway
API's versioning policy allows "Loosened validation" in a minor release), and on the
corpus's release pairs these findings were most of the verdicts that disagreed with the
projects' own. crdify (kubernetes-sigs/crdify) draws the same line:
``pkg/validations/property/max.go`` and ``min.go`` flag only a tighter bound ("maximum
decreased", "minimum increased"), ``required.go`` only a newly required field
("new required fields"), ``pattern.go`` passes a removed pattern ("removing a pattern is
considered safe"), and ``enum.go`` has an ``additionPolicy`` (``Allow`` passes an added
value, the setting OLM's CRD upgrade-safety preflight runs crdify with). So the default
``kubernetes`` profile reports a loosening with impact ``reads`` at ``warning``: shown,
with its witness, never failing; ``--fail-on-impact reads`` (or ``none``) makes it fail
again (``Policy.failing_loosenings``), as does ``kubernetes-strict``, a policy file's
``"RULE" = "error"`` or ``--severity RULE=error``. A changed pattern that accepts other
strings on both sides, and every change with ``--no-witness`` where only a search could
tell the sides apart, is not a loosening and keeps its severity.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compatfuzz.compat._model import LOOSENING_RULES, Severity
from compatfuzz.compat._policy import (
    Policy,
    PolicyEntry,
    _line,
    _rule_id,
    _severity,
    _where,
)
from compatfuzz.errors import SchemaLoadError

__all__ = ["CRDIFY_VALIDATIONS", "PROFILES", "builtin_profile", "load_crdify",
           "load_profile", "resolve_policy"]

_W = Severity.WARNING

# Gateway API: site-src/concepts/versioning.md ("What can Change", minor version: "New
# experimental API fields", "Loosened validation", "Making required fields optional")
# and crdify.yaml at the repository root (enum: additionPolicy: Allow), both in
# kubernetes-sigs/gateway-api. Allowed in a minor release, not a patch release: so they
# warn (shown, exit 0) rather than vanish.
_VERSIONING = "site-src/concepts/versioning.md"
_GATEWAY: tuple[tuple[str, str], ...] = (
    ("field-added", f'{_VERSIONING}: "New experimental API fields"'),
    ("required-removed", f'{_VERSIONING}: "Making required fields optional"'),
    ("bound-relaxed", f'{_VERSIONING}: "Loosened validation"'),
    ("enum-dropped", f'{_VERSIONING}: "Loosened validation"'),
    ("content-opened", f'{_VERSIONING}: "Loosened validation"'),
    ("enum-value-added", "crdify.yaml: enum additionPolicy: Allow"),
)


def _loosenings(profile: str) -> tuple[PolicyEntry, ...]:
    """A warning for every loosening (``when = "loosened"``): it breaks only old readers
    (see the module docstring)."""
    return tuple(
        PolicyEntry(rule, _W, f"built-in profile {profile}: {rule} (a loosening) = warn "
                    "(it breaks only old readers; --fail-on-impact reads or --policy "
                    "kubernetes-strict makes it fail)", when="loosened")
        for rule in sorted(LOOSENING_RULES))


PROFILES: Mapping[str, tuple[PolicyEntry, ...]] = {
    "kubernetes": _loosenings("kubernetes"),
    # the Kubernetes API conventions to the letter: loosenings fail too
    "kubernetes-strict": (),
    # a web API's clients are hurt by the same changes: each rule keeps its severity
    # (a rename Cadwyn migrates warns: _commands/_cadwynblame.py)
    "rest": (),
    "gateway-api": (
        # loosened validation is allowed in a minor release; the entries below name the
        # policy's own words where it has them, and win (the last match decides)
        *_loosenings("gateway-api"),
        *(PolicyEntry(rule, _W, f"built-in profile gateway-api: {rule} = warn "
                      f"(kubernetes-sigs/gateway-api {why})")
          for rule, why in _GATEWAY),
        # a CEL rule removed and none added loosens validation, as a relaxed bound does
        PolicyEntry("validations-changed", _W, "built-in profile gateway-api: "
                    "validations-changed (rules removed only) = warn (kubernetes-sigs/"
                    f'gateway-api {_VERSIONING}: "Loosened validation")', when="removed"),
    ),
}


def builtin_profile(name: str) -> Policy:
    """The built-in profile ``name`` (``kubernetes``, ``kubernetes-strict``, ``rest`` or
    ``gateway-api``).

    Raises:
        SchemaLoadError: no such profile (the message lists them).
    """
    if name not in PROFILES:
        close = difflib.get_close_matches(name, list(PROFILES), n=1)
        raise SchemaLoadError(
            f"{name!r} is neither a built-in profile nor a file", source="--policy",
            hint=(f"did you mean {close[0]!r}? " if close else "")
            + "use " + ", ".join(PROFILES) + ", crdify:FILE or a policy FILE")
    return Policy(entries=PROFILES[name], profile=name)


def _read(path: str | Path, what: str) -> str:
    from compatfuzz.schema._read import read_text

    try:
        return read_text(path)  # a regular file, bounded
    except UnicodeDecodeError as exc:
        raise SchemaLoadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                              source=str(path), hint=f"save the {what} as UTF-8") from None
    except OSError as exc:
        raise SchemaLoadError(f"cannot read {what}: {exc.strerror}", source=str(path),
                              hint="check the --policy path") from None


def _mapping(text: str, source: str, what: str) -> Mapping[str, Any]:
    """Parse TOML (``.toml``) or YAML/JSON through the bounded reader into one mapping."""
    if source.endswith(".toml"):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SchemaLoadError(f"not valid TOML: {exc}", source=source,
                                  hint="fix the TOML syntax") from None
    from compatfuzz.schema._read import parse_documents

    docs = parse_documents(text, source=source)
    if len(docs) > 1:
        raise SchemaLoadError(f"expected one YAML document, found {len(docs)}",
                              source=source, hint="remove the extra '---' separators")
    doc = docs[0] if docs else {}
    if not isinstance(doc, Mapping):
        raise SchemaLoadError(f"expected a mapping, found {type(doc).__name__}",
                              source=source, hint=f"see docs/compat.md for the {what} format")
    return doc


_KEY = re.compile(r"^([A-Za-z0-9-]+)(?:\[([A-Za-z$][A-Za-z0-9_.-]*)\])?$")


def load_profile(path: str | Path) -> Policy:
    """Read a policy file in our own format (TOML or YAML: ``extends`` and ``rules``).

    Raises:
        SchemaLoadError: unreadable file, unknown key, rule id (with a did-you-mean),
            severity or profile; the message names the file, the key and the fix.
    """
    source = str(path)
    text = _read(path, "policy file")
    doc = _mapping(text, source, "policy file")
    unknown = sorted(set(doc) - {"extends", "rules"})
    if unknown:
        close = difflib.get_close_matches(unknown[0], ["extends", "rules"], n=1)
        raise SchemaLoadError(
            f"unknown key {unknown[0]!r}", source=source, pointer=f"/{unknown[0]}",
            hint=(f"did you mean {close[0]!r}? " if close else "")
            + "a policy file has only 'extends' (a profile name) and 'rules' "
            "(rule id = error, warn or ignore)")
    base = doc.get("extends", "kubernetes")
    if not isinstance(base, str) or base not in PROFILES:
        close = difflib.get_close_matches(str(base), list(PROFILES), n=1)
        raise SchemaLoadError(
            f"unknown profile {base!r} in 'extends'", source=source, pointer="/extends",
            hint=(f"did you mean {close[0]!r}? " if close else "")
            + "extends one of: " + ", ".join(PROFILES))
    rules = doc.get("rules") or {}
    if not isinstance(rules, Mapping):
        raise SchemaLoadError("'rules' must map rule ids to error, warn or ignore",
                              source=source, pointer="/rules",
                              hint='write `[rules]` then `"enum-value-added" = "warn"`')
    entries = list(PROFILES[base])
    for key, value in rules.items():
        pointer = f"/rules/{key}"
        m = _KEY.match(str(key))
        rule = _rule_id(m.group(1) if m else key, source=source, pointer=pointer,
                        allow_star=False)
        keyword = (m.group(2) or "") if m else ""
        severity = _severity(value, source=source, pointer=pointer)
        if severity is Severity.INFO:
            raise SchemaLoadError(f"{key} = {value!r}: a policy says error, warn or ignore",
                                  source=source, pointer=pointer,
                                  hint="use warn to show it without failing, ignore to "
                                  "drop it")
        where = _where(source, text, rf"^\s*['\"]?{re.escape(str(key))}['\"]?\s*[:=]")
        entries.append(PolicyEntry(rule, severity, where, keyword))
    return Policy(entries=tuple(entries), profile=base)


# crdify's validations (kubernetes-sigs/crdify pkg/runner/registry.go and the
# Register* functions of pkg/validations/{crd,property}/*.go) onto our rule ids, each
# optionally narrowed to one keyword. A crdify check flags only the tightening direction
# of a bound (pkg/validations/property/max.go, min.go: "maximum decreased", "minimum
# increased"), a required field only when added (required.go), and no added field at all.
def _kw(rule: str, *keywords: str) -> tuple[tuple[str, str], ...]:
    return tuple((rule, k) for k in keywords)


CRDIFY_VALIDATIONS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "existingFieldRemoval": (("field-removed", ""), ("field-renamed", "")),
    "storedVersionRemoval": (("version-removed", ""),),
    "scope": (("scope-changed", ""),),
    "enum": (("enum-value-removed", ""), ("enum-introduced", ""), ("enum-dropped", ""),
             ("enum-value-added", "")),
    "default": (("default-added", ""), ("default-removed", ""), ("default-changed", ""),
                ("default-missing-in-version", "")),
    "required": (("required-added", ""),),
    "type": (("type-changed", ""), ("singular-to-plural", ""), ("plural-to-singular", "")),
    **{kw: _kw("bound-tightened", kw) for kw in (
        "maximum", "maxItems", "maxLength", "maxProperties", "minimum", "minItems",
        "minLength", "minProperties", "uniqueItems")},
    "exclusiveMaximum": (("bound-tightened", "exclusiveMaximum"),
                         ("bound-relaxed", "exclusiveMaximum")),
    "format": (("format-changed", ""),),
    "pattern": (("pattern-changed", ""),),
    "nullable": (("nullable-changed", ""),),
    "oneOf": (*_kw("union-branch-added", "oneOf"), *_kw("union-branch-removed", "oneOf"),
              *_kw("wrapped-in-union", "oneOf"), *_kw("unwrapped-from-union", "oneOf")),
    "anyOf": (*_kw("union-branch-added", "anyOf"), *_kw("union-branch-removed", "anyOf"),
              *_kw("wrapped-in-union", "anyOf"), *_kw("unwrapped-from-union", "anyOf")),
    "allOf": _kw("unhandled", "allOf"),
    "not": _kw("unhandled", "not"),
    "xvalidations": (("validations-changed", ""),),
    "description": (),  # compatfuzz reports no description changes
}

# configuration keys per validation (Allow/Disallow each), and the (rule, keyword, when)
# that "Allow" turns into a warning: enum.go (additionPolicy), nullable.go,
# exclusive_maximum.go and xvalidations.go (additionPolicy, removalPolicy), the
# example config examples/config.yaml (pattern removalPolicy, oneOf both)
_CRDIFY_OPTIONS: Mapping[str, Mapping[str, tuple[tuple[str, str, str], ...]]] = {
    "enum": {"additionPolicy": (("enum-value-added", "", ""),)},
    "nullable": {"additionPolicy": (("nullable-changed", "", "added"),),
                 "removalPolicy": (("nullable-changed", "", "removed"),)},
    "exclusiveMaximum": {"additionPolicy": (("bound-tightened", "exclusiveMaximum", ""),),
                         "removalPolicy": (("bound-relaxed", "exclusiveMaximum", ""),)},
    "pattern": {"removalPolicy": (("pattern-changed", "", "removed"),)},
    "oneOf": {"additionPolicy": (("union-branch-added", "oneOf", ""),),
              "removalPolicy": (("union-branch-removed", "oneOf", ""),)},
    "xvalidations": {"additionPolicy": (("validations-changed", "", "added"),),
                     "removalPolicy": (("validations-changed", "", "removed"),)},
}

# what crdify's own defaults do not flag (no check exists for the change, or the check
# passes it): a finding of ours there warns, so a project switching keeps its verdicts
_CRDIFY_PASSES: tuple[tuple[str, str, str, Severity, str], ...] = (
    ("field-added", "", "", _W, "crdify has no check for an added field"),
    ("required-removed", "", "", _W, "crdify's required check flags only new required fields"),
    ("bound-relaxed", "", "", _W, "crdify's min/max checks flag only tighter bounds"),
    ("pattern-changed", "", "removed", _W, "crdify's pattern check passes a removed pattern"),
)

# crdify's unhandled comparator: a keyword change no crdify validation handles
_CRDIFY_UNHANDLED = ("unhandled", "content-opened", "content-closed", "list-type-changed",
                     "list-map-keys-changed", "map-type-changed")

_ENFORCEMENT = {"Error": Severity.ERROR, "Warn": Severity.WARNING, "None": Severity.OFF}


def _crdify_defaults(source: str) -> list[PolicyEntry]:
    """What crdify does with a file that lists nothing: every validation and the
    unhandled comparator at ``Error`` (pkg/config/config.go: "Default behaviors of
    validations will be used"), and a warning where crdify passes the change."""
    out = [PolicyEntry(rule, Severity.ERROR, f"crdify defaults: unhandledEnforcement = Error "
                       f"(not set in {source})") for rule in _CRDIFY_UNHANDLED]
    out += [PolicyEntry(rule, Severity.ERROR,
                        f"crdify defaults: {name} = Error (not listed in {source})", keyword)
            for name, pairs in CRDIFY_VALIDATIONS.items() for rule, keyword in pairs]
    out += [PolicyEntry(rule, sev, f"crdify defaults: {rule} = {sev} ({why})", keyword, when)
            for rule, keyword, when, sev, why in _CRDIFY_PASSES]
    return out


def _by_specificity(entries: list[PolicyEntry]) -> tuple[PolicyEntry, ...]:
    """One entry per (rule, keyword, when), the file's last word on it, with narrower
    entries after broader ones so they win: ``unhandledEnforcement`` does not override
    crdify's ``allOf`` check, a listed ``pattern`` does not flag a removed pattern."""
    keyed = {(e.rule, e.keyword, e.when): e for e in entries}
    return tuple(sorted(keyed.values(), key=lambda e: bool(e.keyword) + bool(e.when)))


def _enforcement(value: Any, *, source: str, pointer: str) -> Severity:
    if value not in _ENFORCEMENT:
        raise SchemaLoadError(
            f"unknown enforcement {value!r}", source=source, pointer=pointer,
            hint="crdify's enforcement is Error, Warn or None (capitalised, as in "
            "sigs.k8s.io/crdify/pkg/config/config.go)")
    return _ENFORCEMENT[value]


def load_crdify(path: str | Path) -> Policy:
    """Read a crdify configuration file (``validations``, ``unhandledEnforcement``,
    ``conversion``) as the policy it states.

    The format is kubernetes-sigs/crdify ``pkg/config/config.go``: each validation has a
    ``name``, an ``enforcement`` (``Error``, ``Warn`` or ``None``) and an optional
    ``configuration``; validations not listed keep crdify's default (``Error``), and
    ``unhandledEnforcement`` (default ``Error``) covers changes no validation handles.
    ``Warn`` and an ``Allow`` option make a finding warn, ``None`` drops it.
    ``conversion`` is checked but changes nothing: every served version pair is compared
    either way.

    Raises:
        SchemaLoadError: unknown validation names, enforcement values, configuration
            keys or values; the message names the file, the YAML path and the fix.
    """
    source = str(path)
    text = _read(path, "crdify configuration")
    doc = _mapping(text, source, "crdify configuration")
    keys = ["validations", "unhandledEnforcement", "conversion"]
    for key in doc:
        if key not in keys:
            close = difflib.get_close_matches(str(key), keys, n=1)
            raise SchemaLoadError(
                f"unknown crdify configuration key {key!r}", source=source,
                pointer=f"/{key}", hint=(f"did you mean {close[0]!r}? " if close else "")
                + "crdify's configuration has " + ", ".join(keys))
    entries = _crdify_defaults(source)
    if "unhandledEnforcement" in doc:
        sev = _enforcement(doc["unhandledEnforcement"], source=source,
                           pointer="/unhandledEnforcement")
        where = _where(source, text, r"^\s*unhandledEnforcement\s*:")
        entries += [PolicyEntry(rule, sev, where) for rule in _CRDIFY_UNHANDLED]
    if doc.get("conversion", "None") not in ("None", "Ignore"):
        raise SchemaLoadError(f"unknown conversion policy {doc['conversion']!r}",
                              source=source, pointer="/conversion",
                              hint="crdify's conversion is None or Ignore")
    validations = doc.get("validations") or []
    if not isinstance(validations, list):
        raise SchemaLoadError("'validations' must be a list of {name, enforcement}",
                              source=source, pointer="/validations",
                              hint="write `validations:` then `  - name: enum`")
    seen: dict[str, int] = {}
    for i, item in enumerate(validations):
        ptr = f"/validations/{i}"
        if not isinstance(item, Mapping):
            raise SchemaLoadError("a validation must be a mapping", source=source,
                                  pointer=ptr, hint="write `- name: enum` and "
                                  "`enforcement: Error`")
        extra = sorted(set(item) - {"name", "enforcement", "configuration"})
        if extra:
            raise SchemaLoadError(f"unknown key {extra[0]!r}", source=source,
                                  pointer=f"{ptr}/{extra[0]}",
                                  hint="a validation has name, enforcement and "
                                  "configuration")
        name = item.get("name")
        if not isinstance(name, str) or name not in CRDIFY_VALIDATIONS:
            close = difflib.get_close_matches(str(name), list(CRDIFY_VALIDATIONS), n=1)
            raise SchemaLoadError(
                f"unknown crdify validation {name!r}", source=source, pointer=f"{ptr}/name",
                hint=(f"did you mean {close[0]!r}? " if close else "")
                + "crdify's validations: " + ", ".join(sorted(CRDIFY_VALIDATIONS)))
        if "enforcement" not in item:
            raise SchemaLoadError(f"validation {name!r} has no enforcement", source=source,
                                  pointer=f"{ptr}/enforcement",
                                  hint="add `enforcement: Error` (or Warn, None): crdify "
                                  "requires it")
        sev = _enforcement(item["enforcement"], source=source, pointer=f"{ptr}/enforcement")
        nth = seen.get(name, 0)
        seen[name] = nth + 1
        name_re = rf"^\s*-?\s*name\s*:\s*['\"]?{re.escape(name)}['\"]?\s*(#.*)?$"
        where = _where(source, text, name_re, nth)
        name_line = _line(text, name_re, nth)[0]
        where_text = f"{where} (enforcement: {item['enforcement']})"
        entries += [PolicyEntry(rule, sev, where_text, keyword)
                    for rule, keyword in CRDIFY_VALIDATIONS[name]]
        config = item.get("configuration") or {}
        options = _CRDIFY_OPTIONS.get(name, {})
        if not isinstance(config, Mapping):
            raise SchemaLoadError("'configuration' must be a mapping", source=source,
                                  pointer=f"{ptr}/configuration",
                                  hint="e.g. `configuration: {additionPolicy: Allow}`")
        for key, value in config.items():
            cptr = f"{ptr}/configuration/{key}"
            if key not in options:
                raise SchemaLoadError(
                    f"crdify validation {name!r} has no option {key!r}", source=source,
                    pointer=cptr, hint=(f"its options: {', '.join(options)}" if options
                                        else f"{name!r} takes no configuration: "
                                        "remove the key"))
            if value not in ("Allow", "Disallow"):
                raise SchemaLoadError(f"unknown {key} {value!r}", source=source,
                                      pointer=cptr, hint="use Allow or Disallow")
            if value == "Allow" and sev is not Severity.OFF:
                opt = _where(source, text, rf"^\s*{re.escape(str(key))}\s*:",
                             start=name_line)
                entries += [PolicyEntry(rule, _W, f"{opt} ({name} {key}: Allow)", kw, when)
                            for rule, kw, when in options[key]]
    return Policy(entries=_by_specificity(entries), profile="kubernetes")


def resolve_policy(spec: str) -> Policy:
    """``--policy``: a built-in profile name, ``crdify:FILE`` or a policy ``FILE``.

    Raises:
        SchemaLoadError: an unknown profile, or a file that cannot be read (see
            :func:`load_profile` and :func:`load_crdify`).
    """
    if spec.startswith("crdify:"):
        return load_crdify(spec[len("crdify:"):])
    if spec in PROFILES or not Path(spec).exists():
        return builtin_profile(spec)  # refuses an unknown name: not a profile, not a file
    return load_profile(spec)

