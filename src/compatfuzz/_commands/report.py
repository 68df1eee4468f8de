"""Work with run reports.  'compatfuzz report merge out/shard-*.json' turns the reports of
the N shards of one job ('compatfuzz fuzz --shard K/N --report FILE') into the job's one
report: every unit once, each failure once with its minimal counterexample, every missing or
dead shard named with the units it left, and the exit code the job should have (0 every
unit ran and holds, 1 a property failed, also when a shard is missing or dead, 2 an error,
a missing or dead shard or units that did not run, 130 interrupted).  Reports of different
jobs are refused (exit 2), and so are reports of several nights unless --night picks one:
the others are set aside, each printed, and their shards are missing (a report labelled
with a later night must never turn the real shards' failure into a pass).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

EXIT_USAGE = 2

#: lines of a failure's message the merged text shows (a header with its field lines: the
#: first three cut "what the API server did to these fields:" from what it did)
_MESSAGE_LINES = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    merge = sub.add_parser(
        "merge", help="merge the --report files of a sharded job into one report",
        description=("Merge the --report files of the shards of one job (compatfuzz fuzz "
                     "--shard K/N) into one report, with every unit once, each failure "
                     "once, every missing or dead shard named, and the job's exit code "
                     "(0 every unit ran and holds; 1 a property failed, also when a shard "
                     "is missing or dead; 2 an error, or a missing or dead shard; 130 "
                     "interrupted). A report without a \"shard\" object is shard 1/1."))
    merge.add_argument("files", nargs="+", type=Path, metavar="FILE",
                       help="the shards' report files (out/shard-*.json)")
    merge.add_argument("--report", metavar="report.json", type=Path,
                       help="write the merged JSON report (the format of fuzz --report)")
    merge.add_argument("--junit", metavar="junit.xml", type=Path,
                       help="write JUnit XML for the whole job")
    merge.add_argument("--html", metavar="report.html", type=Path,
                       help="write the HTML page for the whole job")
    merge.add_argument("--night", metavar="LABEL",
                       default=os.environ.get("COMPATFUZZ_NIGHT") or None,
                       help="merge the reports of this night (the shards' --night) and set "
                       "the others aside, each named; reports of several nights are refused "
                       "without it (default: $COMPATFUZZ_NIGHT)")
    merge.add_argument("-q", "--quiet", action="store_true",
                       help="print only failures, missing or dead shards and the summary")
    parser.set_defaults(action_parser=parser)


def _check_outputs(args: argparse.Namespace) -> str | None:
    """Why an output path is unusable, or None: above all, never write over a shard's
    report (the only copy of what that shard found)."""
    from compatfuzz._commands._outputs import output_file_problem

    inputs = {}
    for p in args.files:
        try:
            inputs[p.resolve()] = ("one of the reports being merged; writing it would "
                                   "destroy that shard's report")
        except (OSError, RuntimeError):
            continue
    seen: dict[Path, str] = {}
    for flag, path in (("--report", args.report), ("--junit", args.junit),
                       ("--html", args.html)):
        if path is not None:
            why = output_file_problem(flag, path, seen=seen, inputs=inputs,
                                      example="merged")
            if why is not None:
                return why
    return None


def _line(text: object) -> str:
    """A string from a report (a night, a file name) on one terminal line: a newline in it
    is shown escaped, so a report cannot print a line of its own (a fake verdict)."""
    from compatfuzz.roundtrip._text import printable

    return printable(str(text), newlines=False)


def _units(ids: list[str], limit: int = 8) -> str:
    shown = ", ".join(_line(i) for i in ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def _counts(summary: dict[str, int]) -> str:
    return ", ".join(f"{n} {s}" for s, n in sorted(summary.items()) if n) or "no result"


def _orphans(missing: list[Any], out: TextIO) -> None:
    """The units only the missing shards owned, together: reports written before they
    named every unit's owner (``shard.owners``) cannot say which missing shard had which."""
    from compatfuzz.roundtrip._reports._merge import shard_names

    orphans: list[str] = next((m.not_run for m in missing if m.not_run), [])
    owners = shard_names(missing)
    if orphans:
        print(f"  {len(orphans)} units only {owners} owned did not run: {_units(orphans)}",
              file=out)
    else:
        print(f"  every unit {owners} owned was run by another shard (a copy)", file=out)


class _Printable:
    """``out`` with every control character escaped (``printable``): nights, file names,
    unit ids and notices come from reports and the command line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, text: str) -> int:
        from compatfuzz.roundtrip._text import printable

        return self.out.write(printable(text))

    def flush(self) -> None:
        self.out.flush()


def print_summary(merged: Any, out: Any, *, quiet: bool = False) -> None:
    """The merged job in a few lines: a line per shard, each failure once, the verdict."""
    from compatfuzz._commands.fuzz import _config_flag, _shown, printable_json
    from compatfuzz.roundtrip._reports._merge import ShardState

    out = _Printable(out)  # every string here is from a report, a file name or a flag
    doc = merged.doc
    info = doc["merge"]
    count = info["count"]
    nights = ", ".join(_line(n) for n in info["nights"]) or "not given"
    print(f"compatfuzz report merge: {count} shard{'s' if count > 1 else ''} "
          f"(night {nights}), {len(info['job_units'])} units", file=out)
    for file, why in merged.set_aside:
        print(f"set aside: {_line(file)}: {why}", file=out)
    missing = [line for line in merged.shards if line.state == ShardState.MISSING]
    for line in merged.shards:
        label = line.label
        if line.state == ShardState.MISSING:
            stale = (f" of night {nights} ({_line(line.file)} is of night "
                     f"{_line(line.night)}: another "
                     "night's, set aside)" if line.file else "")
            print(f"{label}: no report{stale}", file=out)
            if info.get("owners") and len(missing) > 1:
                they = "it" if line.size == 1 else "they"
                print(f"  the {len(line.not_run)} units {they} owned did not run: "
                      f"{_units(line.not_run)}" if line.not_run else
                      f"  every unit {they} owned was run by another shard (a copy)",
                      file=out)
            elif line is missing[-1]:
                _orphans(missing, out)
            continue
        head = (f"{label}: {line.state}, {len(line.units)} units: {_counts(line.summary)}; "
                f"{line.examples} examples"
                + (f", seed {line.seed}" if line.seed is not None else "")
                + f" ({line.file})")
        notes = "".join(f"\n  note: {_shown(n)}" for n in line.notices)
        if line.state == ShardState.FINISHED:
            if not quiet or notes:
                print(head + notes, file=out)
            continue
        why = {ShardState.DIED: "DIED: its report still says running (killed: SIGKILL, "
                                "out of memory, node lost?, or still running: merge after "
                                "every shard ended), last written "
                                f"{line.updated or 'never'}",
               ShardState.INTERRUPTED: "INTERRUPTED (SIGTERM or Ctrl-C) before its units "
                                       "were done",
               ShardState.INCOMPLETE: "INCOMPLETE: it left units without a result "
                                      "(a spent --duration?)"}[line.state]
        print(f"{head}\n  {why}{notes}", file=out)
        if line.running:
            print(f"  was running: {_units(line.running)}", file=out)
        if line.not_run:
            print(f"  never started: {_units(line.not_run)}", file=out)
    for failure in merged.failures:
        found = ", ".join(f"{n}/{count}" for n in failure["found_by"])
        print(f"FAIL {failure['id']}  (shard{'s' if len(failure['found_by']) > 1 else ''} "
              f"{found})", file=out)
        if failure["object"] is not None:
            print(f"  minimal counterexample: {printable_json(failure['object'])}", file=out)
        lines = _shown(str(failure["error"])).splitlines()
        for text in lines[:_MESSAGE_LINES]:  # whole, as the shard's own log has it
            print(f"    {text}", file=out)
        if len(lines) > _MESSAGE_LINES:
            print(f"    ... {len(lines) - _MESSAGE_LINES} more lines in the merged report",
                  file=out)
        if failure["other_counterexamples"]:
            print(f"  ({failure['other_counterexamples']} other, larger counterexamples of "
                  "this unit from other shards left out)", file=out)
        if failure["counterexample_file"]:
            print(f"  replay: compatfuzz fuzz --replay "
                  f"{shlex.quote(_line(failure['counterexample_file']))}"
                  f"{_config_flag(failure['config'])}", file=out)
        elif failure.get("counterexample_file_refused"):
            print(f"  replay: refused: the report names a counterexample file outside its "
                  f"folder ({_line(failure['counterexample_file_refused'])}); copy that "
                  "file into the report's folder and merge again", file=out)
    for row in doc["units"]:
        if row["status"] == "error":
            print(f"ERROR {row['id']}: {_shown(str(row.get('message') or ''))}", file=out)
    counts = _counts(doc["summary"]) if doc["units"] else "nothing ran"
    if doc["not_run"]:
        counts += f", {len(doc['not_run'])} not run"
    dead = [line for line in merged.shards if line.state in (ShardState.DIED,
                                                               ShardState.INTERRUPTED,
                                                               ShardState.INCOMPLETE)]
    problems = []
    if missing:
        gone = sum(m.size for m in missing)
        problems.append(f"{gone} shard{'s' if gone > 1 else ''} missing")
    if dead:
        problems.append(", ".join(f"shard {d.number}/{d.count} {d.state}" for d in dead))
    examples = sum(row["examples"] for row in doc["units"])
    print(f"compatfuzz report merge: {counts}; {examples} examples"
          + (f"; {'; '.join(problems)}" if problems else "")
          + f" -> {doc['status']} (exit {merged.exit_code})", file=out)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) != "merge":
        args.action_parser.print_help(sys.stderr)
        return EXIT_USAGE
    from compatfuzz.roundtrip._reports._merge import merge_reports, read_report
    from compatfuzz.roundtrip._reports._report import atomic_write, write_junit

    bad = _check_outputs(args)
    if bad:
        print(f"compatfuzz report: error: {bad}", file=sys.stderr)
        return EXIT_USAGE
    merged = merge_reports([read_report(path) for path in args.files], night=args.night)
    import json

    try:
        if args.report is not None:
            # NaN and Infinity are not JSON: refused in the reports, never written here
            atomic_write(args.report, json.dumps(merged.doc, indent=2, allow_nan=False)
                         + "\n")
        if args.junit is not None:
            write_junit(args.junit, merged.results, planned=merged.planned,
                        accept=merged.accept, files=merged.files, not_run=merged.not_run)
        if args.html is not None:
            from compatfuzz.roundtrip._reports._html import render_html

            atomic_write(args.html, render_html(merged.doc, merged.planned))
    except OSError as exc:
        print(f"compatfuzz report: error: cannot write {exc.filename or ''} "
              f"({exc.strerror or exc})", file=sys.stderr)
        return EXIT_USAGE
    print_summary(merged, sys.stdout, quiet=args.quiet)
    return int(merged.exit_code)
