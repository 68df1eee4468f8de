"""Check two revisions of one API for breaking changes, each proven by a witness.

OLD and NEW are files (CRD, OpenAPI, JSON Schema), FILE@VERSION (one served version of a
CRD), FILE#NAME (one definition of a document, or one CRD of a file), or
kubernetes:RELEASE:API_VERSION:KIND (a built-in kind). Protobuf APIs (Envoy's versioning
policy): a .proto file or a folder of them, a descriptor set (.binpb/.pb/.desc/.protoset),
module:pkg.foo_pb2, or proto:PATH to force it. Pydantic models: pydantic:module:Model.
Cadwyn: cadwyn:module:bundle@VERSION (one version of a bundle; the same version of two
releases with --old-path/--new-path, docs/cadwyn.md). Exit status: 0 compatible,
1 breaking, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from compatfuzz._commands._args import parse_seed
from compatfuzz._commands._cadwyninput import cadwyn_events, is_cadwyn
from compatfuzz._commands._protoinput import is_protobuf, protobuf, split_message
from compatfuzz._commands._pydanticinput import is_pydantic, pydantic_events
from compatfuzz.compat import (
    RULES,
    Direction,
    Finding,
    Finished,
    Impact,
    Note,
    Policy,
    Severity,
    Started,
    Status,
    Witnessing,
    check,
    load_policy,
    load_revision,
    parse_severity,
)
from compatfuzz.compat._lines import finding_line

__all__ = ["add_arguments", "render_github", "render_sarif", "render_text", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", nargs="?", help="the previous revision")
    parser.add_argument("new", metavar="NEW", nargs="?", help="the new revision")
    parser.add_argument(
        "--direction", choices=[d.value for d in Direction], default="auto",
        help="which way values travel: request (clients send), response (server sends), "
        "both; auto = Kubernetes (status: response, everything else: both)",
    )
    parser.add_argument("--format", choices=["text", "json", "github", "sarif"],
                        default="text", dest="output_format",
                        help="text (default), json, github (workflow annotations with "
                        "file and line), sarif (SARIF 2.1.0 for code scanning)")
    parser.add_argument("--policy", metavar="PROFILE",
                        help="which changes fail: kubernetes (every rule at its own "
                        "severity, except that a loosening, which breaks only old readers, "
                        "warns), kubernetes-strict (loosenings fail too), rest (every rule "
                        "at its own severity, for web APIs: pydantic and Cadwyn "
                        "inputs), gateway-api, crdify:FILE (a crdify configuration) or "
                        "FILE (TOML/YAML: extends, [rules] rule = error|warn|ignore); "
                        "error findings fail, warn findings only print, ignored ones are "
                        "dropped (default: the config's [diff] policy, else rest for "
                        "pydantic and Cadwyn inputs, kubernetes for the rest)")
    parser.add_argument("--ignore", metavar="FILE",
                        help="YAML/JSON file: ignore entries (rule, path, reason) and "
                        "severity overrides (default: the config's [diff] ignore)")
    parser.add_argument("--config", metavar="FILE",
                        help="the compatfuzz.toml (or pyproject.toml) whose [diff] table "
                        "gives policy and ignore (default: found in this folder or a "
                        "parent, as fuzz finds it; 'none' for none)")
    parser.add_argument("--severity", metavar="RULE=LEVEL", action="append", default=[],
                        help="override a rule's severity (off, info, warning, error); "
                        "repeatable")
    parser.add_argument("--assume-ratcheting", action=argparse.BooleanOptionalAction,
                        default=None,
                        help="whether the API server ratchets CRD validation (an update "
                        "that leaves an invalid value unchanged is accepted); default: on, "
                        "or as --kubernetes-version says. Decides each finding's impact")
    parser.add_argument("--kubernetes-version", metavar="X.Y",
                        help="the Kubernetes release the CRD is served by: 1.30 or later "
                        "ratchets validation by default, 1.29 or older does not (every "
                        "validation tightening then breaks any update)")
    parser.add_argument("--fail-on-impact", metavar="LEVEL",
                        choices=[i.value for i in Impact],
                        help="fail only on breaking findings with at least this impact on "
                        "stored objects: none, reads, create, update-field, any-update "
                        "(e.g. any-update: only what breaks every update of an existing "
                        "object); findings below it still print. reads (or none) also "
                        "fails on loosenings, which the kubernetes profile lets pass with "
                        "a warning. Default: the config's [diff] fail_on_impact, else "
                        "every breaking error fails")
    parser.add_argument("--budget", type=int, default=200,
                        help="examples searched per finding for a witness (default 200)")
    parser.add_argument("--whole-budget", type=int, default=100,
                        help="examples per side for the whole-schema search, drawing only "
                        "the fields that differ (default 100)")
    parser.add_argument("--witness-budget", type=_cpu_budget("--witness-budget", "30s"),
                        default=8.0, metavar="8s",
                        help="CPU time the witness search may take in all (30s, 2m, "
                        "none for no limit; default 8s): a finding whose search is cut "
                        "short is reported unwitnessed, with its static verdict")
    parser.add_argument("--finding-budget", type=_cpu_budget("--finding-budget", "10s"),
                        default=3.0, metavar="3s",
                        help="CPU time one finding's witness search may take, out of "
                        "--witness-budget (none for no limit; default 3s)")
    parser.add_argument("--witness-examples", type=_examples, default=None, metavar="N",
                        help="examples the witness search may draw in all (default none: "
                        "no limit besides --budget per finding)")
    parser.add_argument("--no-witness", "--no-dynamic", action="store_true",
                        dest="no_dynamic",
                        help="the fast static mode: rules only, no witness search (every "
                        "breaking finding reads not-checked)")
    parser.add_argument("--seed", type=parse_seed, default=0, help="seed of the witness search")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show info-level findings")
    parser.add_argument("--list-rules", action="store_true",
                        help="list the rule ids and exit")
    parser.add_argument("--proto-path", "-I", metavar="DIR", action="append", default=[],
                        help="protobuf: an import folder for .proto inputs (protoc -I); "
                        "repeatable")
    parser.add_argument("--no-envoy-exceptions", action="store_true",
                        help="protobuf: also fail on vNalpha packages and work-in-progress "
                        "annotated elements (Envoy's policy exempts them)")
    parser.add_argument("--allow-ref-root", metavar="DIR", action="append", default=[],
                        help="also let a $ref read files under DIR (default: only the "
                        "schema file's folder); repeatable")
    cadwyn = parser.add_argument_group(
        "Cadwyn", "cadwyn:module:bundle@VERSION revisions (docs/cadwyn.md)")
    cadwyn.add_argument("--old-path", metavar="DIR", type=Path,
                        help="import OLD's module from DIR (e.g. a checkout of the previous "
                        "release), not from the working directory")
    cadwyn.add_argument("--new-path", metavar="DIR", type=Path,
                        help="import NEW's module from DIR")
    cadwyn.add_argument("--schema", metavar="NAME",
                        help="compare only this HEAD schema class (default: every schema "
                        "both bundles have)")
    from compatfuzz._commands.fuzz import parse_duration

    server = parser.add_argument_group(
        "API server", "try each witness on a real kube-apiserver (docs/compat.md)")
    server.add_argument("--apiserver", choices=("none", "real"), default="none",
                        help="real: start a kube-apiserver and etcd, create each witness "
                        "under OLD, replace the CRD with NEW, then update it (label only), "
                        "update the field and create it again, and report what the server "
                        "answered beside the finding (default: none)")
    server.add_argument("--confirm-on-server", action="store_const", const="real",
                        dest="apiserver", help="the same as --apiserver real")
    server.add_argument("--apiserver-assets", metavar="DIR", default=None,
                        help="folder with kube-apiserver and etcd, after TEST_ASSET_* and "
                        "KUBEBUILDER_ASSETS (what 'compatfuzz apiserver install' or "
                        "'setup-envtest use -p path' prints)")
    server.add_argument("--apiserver-start-timeout", type=parse_duration, default=90.0,
                        metavar="90s", help="how long etcd and kube-apiserver may take to "
                        "become ready (default 90s)")


_BUDGET = re.compile(r"(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def _cpu_budget(flag: str, example: str) -> Any:
    """The argparse type of a CPU-time option: seconds in ``30s``, ``2m``, ``1m30s``,
    ``45``, or ``None`` for ``none``; a bad value names the flag and a fix (exit 2)."""
    def parse(text: str) -> float | None:
        word = text.strip().lower()
        if word in ("none", "unlimited"):
            return None
        match = _BUDGET.fullmatch(word)
        if not word or match is None or not any(match.groups()):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a CPU-time budget\n  fix: give seconds or minutes, e.g. "
                f"{flag} {example} (or {flag} none for no limit)")
        return float(match[1] or 0) * 60 + float(match[2] or 0)

    parse.__name__ = "budget"
    return parse


def _examples(text: str) -> int | None:
    """The argparse type of ``--witness-examples``: a count, or ``None`` for ``none``."""
    if text.strip().lower() in ("none", "unlimited"):
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of examples\n  fix: give a count, e.g. "
            "--witness-examples 20000 (or --witness-examples none for no limit)")
    return value


class _WitnessProgress:
    """One live line on stderr while witnesses are searched, when stderr is a terminal and
    the search has run a few seconds: which finding, how many are done, examples and the
    budget left. Drawn with fuzz's :func:`~compatfuzz._commands.fuzz.live_line`, redrawn
    from a thread (the engine is busy in the search), cleared when the run's findings are
    final, so nothing of it is left above the report. Never on a pipe or a file."""

    def __init__(self, out: TextIO, *, after: float = 2.5, interval: float = 0.5) -> None:
        self.out = out
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.after = after
        self.interval = interval
        self.event: Witnessing | None = None
        self.began: float | None = None
        self.budget: float | None = None
        self.shown = False
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def line(self) -> str:
        from compatfuzz._commands.fuzz import live_line

        event = self.event
        assert event is not None
        clock = event.clock
        examples = clock.examples if clock is not None else event.examples
        seconds = clock.seconds if clock is not None else event.seconds
        what = (f"{event.rule} {event.location}" if event.rule else event.location)
        prefix = "compatfuzz diff: witnessing "
        return prefix + live_line(done=event.done, total=event.total, running=[what],
                                  examples=examples, elapsed=max(seconds, 1e-9),
                                  duration=self.budget, width=120 - len(prefix))

    def draw(self) -> None:
        """Redraw the line, once the search has run ``after`` seconds (terminals only)."""
        with self.lock:
            if (not self.tty or self.event is None or self.began is None
                    or time.monotonic() - self.began < self.after):
                return
            self.out.write(f"\r\x1b[K{self.line()}")
            self.out.flush()
            self.shown = True

    def clear(self) -> None:
        with self.lock:
            self.event = None
            if self.shown:
                self.out.write("\r\x1b[K")
                self.out.flush()
                self.shown = False

    def watch(self, events: Iterator[Any], budget: float | None) -> Iterator[Any]:
        """``events``, unchanged, shown as they pass: the line follows each
        ``Witnessing`` and is cleared at each ``Finished`` (and however the run ends), and
        before a warning is shown (a strategy's, during the search), so the two never
        share a line."""
        import warnings

        self.budget = budget
        shown = warnings.showwarning

        def show(*args: Any, **kwargs: Any) -> None:
            with self.lock:
                if self.shown:
                    self.out.write("\r\x1b[K")
                    self.shown = False
                shown(*args, **kwargs)

        if self.tty:
            warnings.showwarning = show
        try:
            for event in events:
                if isinstance(event, Witnessing):
                    with self.lock:
                        self.event = event
                        if self.began is None:
                            self.began = time.monotonic()
                    self._start()
                elif isinstance(event, Finished):
                    self.clear()
                    self.began = None
                yield event
        finally:
            if self.tty:
                warnings.showwarning = shown
            self._stop.set()
            self.clear()

    def _start(self) -> None:
        if self.tty and self._thread is None:
            self._thread = threading.Thread(target=self._tick, daemon=True,
                                            name="compatfuzz diff progress")
            self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.draw()


def _apply_config(args: argparse.Namespace, default: str = "kubernetes") -> str | None:
    """Fill ``--policy``/``--ignore``/``--fail-on-impact`` from the config's ``[diff]``
    table where the command line left them out, else ``--policy`` with the ``default``
    profile (``rest`` for a web API); return what the table set and where (for the
    note), if anything."""
    import os

    from compatfuzz._commands._diffconfig import diff_settings
    from compatfuzz.roundtrip import find_config

    found = None if args.config else find_config()
    path = None if args.config == "none" else (args.config or (
        found and os.path.relpath(found)))
    taken = []
    if path is not None:
        settings = diff_settings(path)
        if args.policy is None and settings.policy is not None:
            args.policy = settings.policy
            taken.append("policy")
        if args.ignore is None and settings.ignore is not None:
            args.ignore = settings.ignore
            taken.append("ignore file")
        if args.fail_on_impact is None and settings.fail_on_impact is not None:
            args.fail_on_impact = settings.fail_on_impact
            taken.append("fail_on_impact")
    args.policy = args.policy or default
    if taken:
        return f"{' and '.join(taken)} from {settings.source}"
    return None


def _policy(args: argparse.Namespace, rules: Any = RULES) -> Policy:
    """``--policy`` (the profile), then the ignore file, then ``--severity`` overrides."""
    from compatfuzz.compat._profiles import resolve_policy

    profile = resolve_policy(args.policy) if rules is RULES else Policy()
    if args.ignore:
        profile = profile.merged(load_policy(args.ignore, rules=rules))
    overrides = dict(parse_severity(s, rules=rules) for s in args.severity)
    if not overrides:
        return profile
    sources = {rule: f"--severity {rule}={sev}" for rule, sev in overrides.items()}
    return profile.merged(Policy((), overrides, sources=sources))


def _shown(f: Finding, verbose: bool) -> bool:
    if f.severity is Severity.OFF:
        return False
    return verbose or f.severity is not Severity.INFO


def _value(v: Any) -> str:
    text = json.dumps(v, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _impact_word(f: Finding, rest: bool) -> str:
    """``f``'s impact as the report names it: a web API's in requests and responses
    (``compat/_rest.py``), a CRD's or schema's as its :class:`Impact` value."""
    from compatfuzz.compat._rest import label

    assert f.impact is not None
    return label(f.impact) if rest else str(f.impact)


def render_text(started: Started, findings: tuple[Finding, ...], out: TextIO, *,
                verbose: bool = False, fail_on_impact: Impact | None = None,
                rest: bool = False) -> None:
    """Write the human report: one block per shown finding, then a summary line.

    ``rest``: the revisions are a web API's (pydantic, Cadwyn), whose impacts read as
    ``requests``/``responses``/``none`` (``compat/_rest.py``).

    Every line has its control characters escaped (``\\x1b``): a field name in a schema is
    anyone's text, and an escape sequence in it must not reach the terminal raw.
    """
    from compatfuzz.roundtrip._text import printable

    def line(text: str) -> None:
        out.write(printable(text, newlines=False) + "\n")

    line(f"compatfuzz diff {started.old} -> {started.new} (direction {started.direction})")
    gate = Finished(findings, fail_on_impact)
    for f in findings:
        if not _shown(f, verbose):
            continue
        tag = "IGNORED" if f.ignored else str(f.severity).upper()
        kw = f" [{f.keyword}]" if f.keyword else ""
        line(f"{tag:<8} {f.rule:<26} {f.location}{kw}")
        line(f"         {f.message}")
        if f.old is not None or f.new is not None:
            line(f"         old: {_value(f.old)}  new: {_value(f.new)}")
        if f.witness is not None:
            line(f"         witness ({f.witness.side}) at {f.witness.path or '$'}: "
                 f"{_value(f.witness.value)} -> {f.witness.reason}")
        elif f.status is Status.UNWITNESSED:
            line(f"         {f.status}: the witness search ran out of budget; the rule's "
                 "verdict stands")
        elif f.breaking:
            line(f"         {f.status}")
        if f.ignore_reason:
            line(f"         ignored: {f.ignore_reason}")
        if f.made_by:
            line(f"         made by: {f.made_by}")
        if f.policy:
            line(f"         policy: {f.policy}")
        if f.impact is not None and (f.breaking or f.impact > Impact.READS):
            below = (f" (below --fail-on-impact {fail_on_impact}: does not fail)"
                     if f.breaking and gate.below_gate(f) else "")
            line(f"         impact: {_impact_word(f, rest)}{below}: {f.impact_note}")
        if f.server is not None:
            for text in _server_lines(f):
                line(f"         {text}")
    fin = gate
    confirmed = sum(1 for f in fin.breaking if f.status is Status.CONFIRMED)
    ignored = sum(1 for f in findings if f.ignored)
    hidden = [f for f in findings if not _shown(f, verbose)]
    info = sum(1 for f in hidden if f.severity is Severity.INFO)
    off = len(hidden) - info
    notes = ([f"{info} info not shown (-v shows them)"] if info else []) + (
        [f"{off} turned off by the policy not shown"] if off else [])
    # breaks that the policy lets pass with a warning: shown, never failing
    warned = sum(1 for f in findings if f.breaking and f.severity is Severity.WARNING
                 and not f.ignored)
    gated = sum(1 for f in findings if f.breaking and f.severity is Severity.ERROR
                and not f.ignored and fin.below_gate(f))
    tried = [f.server.verdict for f in findings if f.server is not None]
    on_server = ("; on the server: " + ", ".join(
        f"{tried.count(v)} {v.replace('-', ' ')}" for v in ("confirmed", "not-confirmed",
                                                            "inconclusive", "not-run")
        if tried.count(v))
        if tried else "")
    unwitnessed = sum(1 for f in fin.breaking if f.status is Status.UNWITNESSED)
    line(f"{len(findings)} finding{'' if len(findings) == 1 else 's'}, "
         f"{len(fin.breaking)} breaking "
         f"({confirmed} with a witness"
         + (f", {unwitnessed} unwitnessed: out of budget" if unwitnessed else "")
         + f"), {ignored} ignored"
         + (f", {warned} allowed with a warning" if warned else "")
         + (f", {gated} below --fail-on-impact {fail_on_impact}" if gated else "")
         + on_server
         + "".join(f"; {n}" for n in notes))


def _server_lines(f: Finding) -> list[str]:
    """What the real server answered for ``f``'s witness: the verdict, then each step."""
    check = f.server
    assert check is not None
    request = f.witness is None or str(f.witness.side) == "request"
    way = "OLD -> NEW" if request else "NEW -> OLD, a rollback"
    head = {"confirmed": "confirmed",
            "not-confirmed": "NOT CONFIRMED",
            "inconclusive": "inconclusive",
            "not-run": "not run"}.get(check.verdict, check.verdict)
    out = [f"server ({check.server}, {way}): {head}"
           + (f": {_short(check.note)}" if check.note else "")]
    for a in check.answers:
        said = "accepted" if a.accepted else "refused"
        # the server's own note that CEL rules were skipped: one short remark instead
        # (the JSON and SARIF keep the whole message)
        message, skipped = _UNCHECKED.subn("", a.message)
        if skipped:
            message = message.replace("[", "", 1).rstrip("]") + " (CEL rules not checked)" \
                if message.count("[") == 1 else message + " (CEL rules not checked)"
        out.append(f"  {a.step}: {said}" + (f": {_short(message)}" if message else ""))
    return out


_UNCHECKED = re.compile(r',? ?<nil>: Invalid value: "?null"?: some validation rules were not '
                        r"checked because the object was invalid; correct the existing errors "
                        r"to complete validation")


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_github(started: Started, findings: tuple[Finding, ...], out: TextIO, *,
                  fail_on_impact: Impact | None = None, rest: bool = False) -> None:
    """Write GitHub Actions workflow commands (``::error file=...,title=...::message``);
    a finding below ``--fail-on-impact`` is a warning, as it does not fail the check.
    ``rest`` as for :func:`render_text`."""
    fin = Finished(findings, fail_on_impact)
    for f in findings:
        if f.ignored or f.severity in (Severity.OFF, Severity.INFO):
            continue
        level = ("error" if f.severity is Severity.ERROR and f.breaking
                 and not fin.below_gate(f) else "warning")
        msg = f"{f.location}: {f.message}"
        if f.old is not None or f.new is not None:
            msg += f" (old: {_value(f.old)}, new: {_value(f.new)})"
        if f.witness is not None:
            msg += f" (witness: {_value(f.witness.value)}: {f.witness.reason})"
        if f.made_by:
            msg += f" (made by: {f.made_by})"
        if f.policy:
            msg += f" (policy: {f.policy})"
        if f.impact is not None:
            msg += f" (impact: {_impact_word(f, rest)}: {f.impact_note})"
        if f.server is not None:
            msg += f" (real server: {' '.join(_server_lines(f)[:1])})"
        msg = msg.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        title = f"compatfuzz {f.rule}".replace(",", "%2C").replace("::", "%3A%3A")
        line = finding_line(started.new, f)
        where = f"file={_file_of(started.new)}" + (f",line={line}" if line else "")
        out.write(f"::{level} {where},title={title}::{msg}\n")


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note",
                Severity.OFF: "none"}


def render_sarif(started: Started, findings: tuple[Finding, ...], out: TextIO, *,
                 ratcheting: bool | None = None, fail_on_impact: Impact | None = None
                 ) -> None:
    """Write a SARIF 2.1.0 log (GitHub code scanning's upload format): one result per shown
    finding, located at the NEW file's line for its field; the witness, the impact on
    stored objects and its note as properties. A breaking finding below
    ``fail_on_impact`` is a ``warning``: it does not fail the check."""
    fin = Finished(findings, fail_on_impact)
    from compatfuzz import __version__

    results = []
    used: dict[str, int] = {}
    for f in findings:
        used.setdefault(f.rule, len(used))
        text = f"{f.location}: {f.message}"
        if f.witness is not None:
            text += f" (witness: {_value(f.witness.value)}: {f.witness.reason})"
        location: dict[str, Any] = {"artifactLocation": {"uri": _uri(_file_of(started.new))}}
        line = finding_line(started.new, f)
        if line:
            location["region"] = {"startLine": line}
        result: dict[str, Any] = {
            "ruleId": f.rule, "ruleIndex": used[f.rule],
            "level": ("warning" if f.breaking and fin.below_gate(f)
                      and f.severity is Severity.ERROR
                      else _SARIF_LEVEL[f.severity] if f.breaking or f.severity is Severity.OFF
                      else "note"),
            "message": {"text": text},
            "locations": [{"physicalLocation": location,
                           "logicalLocations": [{"fullyQualifiedName": f.location}]}],
            "properties": {"breaking": f.breaking, "status": str(f.status),
                           "severity": str(f.severity), "policy": f.policy,
                           "impact": str(f.impact) if f.impact is not None else None,
                           "impact_note": f.impact_note,
                           **({"made_by": f.made_by} if f.made_by else {}),
                           "old": f.old, "new": f.new,
                           "witness": f.witness.to_json() if f.witness else None,
                           **({"server": f.server.to_json()} if f.server else {})},
        }
        if f.ignored:
            result["suppressions"] = [{"kind": "external",
                                       "justification": f.ignore_reason or "ignored"}]
        results.append(result)
    rules = [{"id": rule_id, "shortDescription": {"text": RULES[rule_id].summary},
              "defaultConfiguration": {"level": _SARIF_LEVEL.get(RULES[rule_id].severity,
                                                                  "warning")}}
             if rule_id in RULES else {"id": rule_id}
             for rule_id in used]
    json.dump({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "compatfuzz", "version": __version__,
                                "informationUri": "https://pypi.org/project/compatfuzz/",
                                "rules": rules}},
            "properties": {"old": started.old, "new": started.new,
                           "direction": str(started.direction),
                           **({"ratcheting": ratcheting} if ratcheting is not None else {}),
                           **({"fail_on_impact": str(fail_on_impact)}
                              if fail_on_impact is not None else {})},
            "results": results,
        }],
    }, out, indent=2, default=str)
    out.write("\n")


def _uri(path: str) -> str:
    """A SARIF artifact URI: relative to the working directory (the repository root in
    CI) when the file is under it, else a file: URI."""
    import os
    from pathlib import Path

    if path.startswith("kubernetes:") or path.startswith("k8s:"):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = ".."
    return Path(rel).as_posix() if not rel.startswith("..") else Path(path).resolve().as_uri()


def _file_of(spec: str) -> str:
    """The file part of a revision spec (``crd.yaml@v1``, ``api.yaml#Order``), for
    GitHub's ``file=``; a ``kubernetes:...`` built-in kind has no file."""
    from compatfuzz.compat._engine import split_spec

    return spec if spec.startswith(("kubernetes:", "k8s:")) else str(split_spec(spec)[0])


def _ratcheting(args: argparse.Namespace) -> bool | None:
    """Whether the server ratchets validation, from ``--assume-ratcheting`` and
    ``--kubernetes-version``; ``None`` after printing a usage error (exit 2).

    KEP-4008: alpha (off by default) in 1.28, CEL rules ratcheted from 1.29, beta and on by
    default from 1.30, GA in 1.33 (apiextensions-apiserver ``pkg/features``,
    ``CRDValidationRatcheting``).
    """
    from compatfuzz.compat._impact import FIRST_GATE, serves_ratcheting

    text = args.kubernetes_version
    if text is None:
        return True if args.assume_ratcheting is None else bool(args.assume_ratcheting)
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    if match is None or int(match[1]) != 1:
        print(f"compatfuzz diff: error: --kubernetes-version {text!r} is not a Kubernetes "
              "release\n  fix: give MAJOR.MINOR of the API server that serves the CRD, "
              "e.g. --kubernetes-version 1.33 (1.30 or later ratchets validation by "
              "default)", file=sys.stderr)
        return None
    version = (int(match[1]), int(match[2]))
    if args.assume_ratcheting is None:
        return serves_ratcheting(version)
    if args.assume_ratcheting and version < FIRST_GATE:
        print(f"compatfuzz diff: error: --assume-ratcheting with --kubernetes-version {text}:"
              " Kubernetes ratchets CRD validation (CEL rules included) from 1.29 behind the "
              "CRDValidationRatcheting feature gate, and by default from 1.30\n  fix: drop "
              "--assume-ratcheting, or give the release the cluster runs (1.29 or later)",
              file=sys.stderr)
        return None
    return bool(args.assume_ratcheting)


def _on_server(args: argparse.Namespace, old: Any, new: Any, events: Any) -> Any:
    """``events`` with each witness tried on a real kube-apiserver (``--apiserver real``):
    one control plane for the run, stopped (its files removed) however the run ends."""
    from compatfuzz.compat import _confirm

    _confirm.check_revisions(old, new)  # not CRDs: exit 2 before anything starts
    with _confirm.control_plane(assets_dir=args.apiserver_assets,
                                start_timeout=args.apiserver_start_timeout) as client:
        try:
            version = _confirm.server_version(client)
            print(f"compatfuzz diff: kube-apiserver {version} started at "
                  f"{client.endpoint.url}", file=sys.stderr)
            _confirm.check_installable(client, old, new)
        except OSError as exc:
            raise _lost(client, exc) from None
        for event in events:
            if not isinstance(event, Finished):
                yield event
                continue
            began = time.monotonic()
            try:
                findings = _confirm.confirm(old, new, event.findings, client,
                                            seed=args.seed, version=version)
            except OSError as exc:
                raise _lost(client, exc) from None
            tried = sum(1 for f in findings if f.server is not None)
            print(f"compatfuzz diff: tried {tried} finding{'' if tried == 1 else 's'} on "
                  f"the server in {time.monotonic() - began:.1f} s", file=sys.stderr)
            yield Finished(findings, event.fail_on_impact)


def _lost(client: Any, exc: OSError) -> Exception:
    from compatfuzz.compat._confirm import ServerLost

    return ServerLost(f"lost the connection to kube-apiserver at {client.endpoint.url}: "
                      f"{type(exc).__name__}: {exc}\n  fix: run again; a machine short of "
                      "memory may have killed it (see the kernel log)")


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """``check``'s budget options from ``--witness-budget``, ``--finding-budget`` and
    ``--witness-examples``."""
    return {"witness_seconds": args.witness_budget, "finding_seconds": args.finding_budget,
            "witness_examples": args.witness_examples}


def run(args: argparse.Namespace) -> int:
    if args.list_rules:
        for rule in RULES.values():
            print(f"{rule.id:<28} {rule.severity!s:<8} {rule.summary}")
        try:
            from compatfuzz.protobuf import PROTO_RULES
        except ImportError:  # the protobuf extra is not installed
            return 0
        for rule in PROTO_RULES.values():
            print(f"{rule.id:<28} {rule.severity!s:<8} {rule.summary}")
        return 0
    if args.old is None or args.new is None:
        print("compatfuzz diff: error: OLD and NEW are required", file=sys.stderr)
        return 2
    ratcheting = _ratcheting(args)
    if ratcheting is None:
        return 2
    gate = Impact(args.fail_on_impact) if args.fail_on_impact else None
    started: Started | None = None
    findings: tuple[Finding, ...] = ()
    notes: list[Note] = []
    proto_inputs = [is_protobuf(spec) for spec in (args.old, args.new)]
    pydantic_inputs = [is_pydantic(spec) for spec in (args.old, args.new)]
    cadwyn_inputs = [is_cadwyn(spec) for spec in (args.old, args.new)]
    cadwyn_flags = [flag for flag, value in (("--old-path", args.old_path),
                                             ("--new-path", args.new_path),
                                             ("--schema", args.schema)) if value is not None]
    if cadwyn_flags and not all(cadwyn_inputs):
        print(f"compatfuzz diff: error: {cadwyn_flags[0]} applies to Cadwyn revisions "
              "(cadwyn:module:bundle@VERSION)\n  fix: drop it, or compare two Cadwyn "
              "versions, e.g. compatfuzz diff --old-path release-1.4 "
              "cadwyn:shop.versions:version_bundle@2023-01-01 "
              "cadwyn:shop.versions:version_bundle@2023-01-01", file=sys.stderr)
        return 2
    if any(cadwyn_inputs):
        if not all(cadwyn_inputs):
            print("compatfuzz diff: error: one revision is a Cadwyn version, the other is "
                  "not\n  fix: compare two versions, e.g. compatfuzz diff "
                  "cadwyn:shop.versions:version_bundle@2023-01-01 "
                  "cadwyn:shop.versions:version_bundle@2023-06-01", file=sys.stderr)
            return 2
        if args.apiserver != "none":
            print("compatfuzz diff: error: --apiserver real tries CRD witnesses on a "
                  "kube-apiserver; a Cadwyn API has none\n  fix: drop --apiserver",
                  file=sys.stderr)
            return 2
        configured = _apply_config(args, default="rest")
        gate = Impact(args.fail_on_impact) if args.fail_on_impact else None
        if configured is not None:
            print(f"compatfuzz diff: policy and ignore from {configured}", file=sys.stderr)
        policy = _policy(args)
        events: Any = cadwyn_events(
            args.old, args.new, args.direction, old_path=args.old_path,
            new_path=args.new_path, schema=args.schema, policy=policy, budget=args.budget,
            whole_budget=args.whole_budget, dynamic=not args.no_dynamic, seed=args.seed,
            ratcheting=ratcheting, fail_on_impact=gate, **_limits(args))
        events = _WitnessProgress(sys.stderr).watch(events, args.witness_budget)
    elif any(pydantic_inputs):
        if not all(pydantic_inputs):
            print("compatfuzz diff: error: one revision is a pydantic model, the other is "
                  "not\n  fix: compare two models, e.g. compatfuzz diff "
                  "pydantic:shop.models.v1:Order pydantic:shop.models.v2:Order",
                  file=sys.stderr)
            return 2
        configured = _apply_config(args, default="rest")
        gate = Impact(args.fail_on_impact) if args.fail_on_impact else None
        if configured is not None:
            print(f"compatfuzz diff: policy and ignore from {configured}", file=sys.stderr)
        policy = _policy(args)
        events = pydantic_events(
            args.old, args.new, args.direction, policy=policy, budget=args.budget,
            whole_budget=args.whole_budget, dynamic=not args.no_dynamic, seed=args.seed,
            ratcheting=ratcheting, fail_on_impact=gate, **_limits(args))
        events = _WitnessProgress(sys.stderr).watch(events, args.witness_budget)
    elif any(proto_inputs):
        if not all(proto_inputs):
            print("compatfuzz diff: error: one revision is protobuf, the other is not\n"
                  "  fix: compare two .proto trees / descriptor sets (or prefix both with "
                  "proto:)", file=sys.stderr)
            return 2
        named = [spec for spec in (args.old, args.new) if split_message(spec)[1]]
        if named:
            print(f"compatfuzz diff: error: {named[0]}: a protobuf revision is compared "
                  "whole, package by package (Envoy's policy), not one message against "
                  "another\n  fix: give the two trees, e.g. compatfuzz diff old/protos "
                  "new/protos (a new major version is a new package, which the policy "
                  "allows); FILE#MESSAGE names a message for compatfuzz sample",
                  file=sys.stderr)
            return 2
        if args.apiserver != "none":
            print("compatfuzz diff: error: --apiserver real tries CRD witnesses on a "
                  "kube-apiserver; a protobuf API has none\n  fix: drop --apiserver",
                  file=sys.stderr)
            return 2
        if args.policy not in (None, "kubernetes"):
            print("compatfuzz diff: error: --policy applies to CRDs and schemas; a protobuf "
                  "diff follows Envoy's versioning policy\n  fix: drop --policy, and use "
                  "--severity RULE=LEVEL or --ignore FILE for protobuf rules",
                  file=sys.stderr)
            return 2
        if gate is not None:
            print("compatfuzz diff: error: --fail-on-impact applies to CRDs and schemas "
                  "(what a change breaks for stored objects); a protobuf diff has no stored "
                  "objects to judge\n  fix: drop --fail-on-impact, and use --severity "
                  "RULE=LEVEL for protobuf rules", file=sys.stderr)
            return 2
        args.policy = "kubernetes"  # a config's [diff] table is for CRDs and schemas
        proto = protobuf(args.old)
        policy = _policy(args, proto.PROTO_RULES)
        events = proto.check_protos(
            args.old, args.new, policy=policy, budget=args.budget,
            dynamic=not args.no_dynamic, seed=args.seed,
            envoy_exceptions=not args.no_envoy_exceptions, include=args.proto_path)
    else:
        configured = _apply_config(args)
        gate = Impact(args.fail_on_impact) if args.fail_on_impact else None
        if configured is not None:
            print(f"compatfuzz diff: {configured}", file=sys.stderr)
        policy = _policy(args)
        old, new = (load_revision(spec, ref_roots=args.allow_ref_root)
                    for spec in (args.old, args.new))
        events = check(old, new, direction=args.direction, policy=policy,
                       budget=args.budget, whole_budget=args.whole_budget,
                       dynamic=not args.no_dynamic, seed=args.seed,
                       ratcheting=ratcheting, fail_on_impact=gate, **_limits(args))
        events = _WitnessProgress(sys.stderr).watch(events, args.witness_budget)
        if args.apiserver == "real":
            events = _on_server(args, old, new, events)
    for event in events:
        if isinstance(event, Started):
            both = started is not None and started.direction != event.direction
            # both: a pydantic model's request shape, then its response shape
            started = Started(event.old, event.new, Direction.BOTH) if both else event
        elif isinstance(event, Note):
            notes.append(event)
        elif isinstance(event, Finished):  # two for a pydantic model's two shapes
            findings += event.findings
    assert started is not None
    for note in notes:
        where = f" ({note.version})" if note.version else ""
        print(f"compatfuzz diff: note{where}: {note.message}", file=sys.stderr)
    # an ignore entry that matched nothing is a typo or a change since gone: say so, as
    # `fuzz` reports a stale [[api.accept]] entry (a warning, never a failure)
    stale = [(i, e) for i, e in enumerate(policy.ignores)
             if not any(e.matches(f) for f in findings)]
    for i, entry in stale:
        print(f"compatfuzz diff: warning: {args.ignore} ignore[{i}] (rule {entry.rule}, path "
              f"{entry.path}) matched no finding: a typo in its rule or path, or a change "
              "that is gone? (delete it when it no longer applies)", file=sys.stderr)
    fin = Finished(findings, gate)
    rest = any(cadwyn_inputs) or any(pydantic_inputs)  # a web API: compat/_rest.py
    if args.output_format == "json":
        json.dump({
            "old": started.old, "new": started.new, "direction": str(started.direction),
            "breaking": len(fin.breaking), "exit_code": fin.exit_code,
            "policy": args.policy, "ratcheting": ratcheting,
            "fail_on_impact": str(gate) if gate is not None else None,
            "turned_off": sum(1 for f in findings if f.severity is Severity.OFF),
            "findings": [f.to_json() for f in findings],
            "stale_ignores": [{"index": i, "rule": e.rule, "path": e.path,
                               "reason": e.reason} for i, e in stale],
        }, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif args.output_format == "github":
        render_github(started, findings, sys.stdout, fail_on_impact=gate, rest=rest)
    elif args.output_format == "sarif":
        render_sarif(started, findings, sys.stdout, ratcheting=ratcheting,
                     fail_on_impact=gate)
    else:
        render_text(started, findings, sys.stdout, verbose=args.verbose,
                    fail_on_impact=gate, rest=rest)
    return fin.exit_code
