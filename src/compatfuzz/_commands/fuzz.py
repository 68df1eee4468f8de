"""Round-trip every version pair of every API through its converters (the nightly job).

Runs each property (roundtrip, valid, no_mutation, path_independent, default_*, encodings
for protobuf APIs, migrations for Cadwyn APIs) for each version pair, shows progress on
stderr, writes a JSON report and one replayable JSON file per counterexample. Ctrl-C or
SIGTERM stops at the next example and still writes the report and every counterexample
found; a failure is written the moment it is found, so even SIGKILL keeps it. Output paths
are checked before any unit runs: a folder, the config itself, two outputs on one path or
a folder that cannot be written is a usage error; a write that fails later (disk full) is
said once and the run goes on, but cannot end in exit 0. What user code wrote reaches the
terminal cut to 8,000 characters (the report keeps 64,000), with control characters
escaped.
Exit status: 0 every planned property ran and holds, 1 a property failed, 2 usage or
config error, 130 interrupted with no failure.
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from compatfuzz._commands._args import parse_seed

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def parse_duration(text: str) -> float:
    """Seconds in ``30m``, ``1h30m``, ``90s`` or ``90``."""
    match = _DURATION.match(text.strip())
    if not text.strip() or match is None or not any(match.groups()):
        raise argparse.ArgumentTypeError(
            f"expected a duration like 30m, 1h30m or 90s but got {text!r}"
        )
    h, m, s = (float(g) if g else 0.0 for g in match.groups())
    seconds = h * 3600 + m * 60 + s
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive, got {text!r}")
    return seconds


def parse_deadline(text: str) -> float | None:
    """Seconds in ``10s``/``2m``/``10``, or ``None`` for ``none``."""
    if text.strip().lower() in ("none", "off", "0"):
        return None
    return parse_duration(text)


def _positive(text: str) -> int:
    shown = repr(text[:40]) + ("..." if len(text) > 40 else "")
    try:
        value = int(text)  # over 4,300 digits is a ValueError too (sys.int_info)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {shown}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {shown}")
    return value


#: the most examples one unit may be asked for (``--max-examples``; a report's row)
MAX_EXAMPLES = 1_000_000_000
#: After the first Ctrl-C or SIGTERM, the seconds running units get to reach their next
#: example before the run ends them itself: an example stuck with ``--example-deadline
#: none`` would otherwise hold the run until SIGKILL, which Kubernetes sends 30 s after
#: SIGTERM (``terminationGracePeriodSeconds``), with the report still ``running``.
STOP_GRACE = 10.0


def _max_examples(text: str) -> int:
    value = _positive(text)
    if value > MAX_EXAMPLES:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_EXAMPLES:,} examples per unit, got {text[:40]!r}; for "
            "a long run give a time budget instead (--duration 8h)")
    return value


def _shard_count(text: str) -> int:
    """``--shards N``: 1 <= N <= ``MAX_SHARDS``."""
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._engine._shard import check_count

    value = _positive(text)
    try:
        check_count(value, "--shards N")
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _plan_limit(text: str) -> int | str:
    """A positive int, or ``"none"`` (no limit)."""
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._check._limits import plan_limit_arg

    try:
        value = plan_limit_arg(text, "--plan-limit")
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return "none" if value is None else value


def _shard(text: str) -> Any:
    """``K/N`` as a ``Shard``."""
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._engine._shard import parse_shard

    try:
        return parse_shard(text)
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="compatfuzz.toml or pyproject.toml (default: found from the "
                        "working directory upwards)")
    parser.add_argument("--api", metavar="NAME", help="only this API")
    parser.add_argument("--property", metavar="NAME", action="append", dest="properties",
                        help="only this property (repeatable): roundtrip, valid, "
                        "no_mutation, path_independent, default_idempotent, default_commutes, "
                        "encodings (protobuf), migrations (Cadwyn)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--max-examples", type=_max_examples, metavar="N",
                        help="examples per property and pair (default: the profile's)")
    budget.add_argument("--duration", type=parse_duration, metavar="30m",
                        help="the whole run's time budget, shared between the units "
                        "instead (units it leaves no time for do not run)")
    parser.add_argument("--plan-limit", type=_plan_limit, metavar="N|none",
                        help="version pairs (triples) planned per kind and property; a "
                        "fixed sample beyond (default: the config's plan_limit, 300; "
                        "'none' plans all)")
    parser.add_argument("--profile", choices=("default", "ci", "nightly"), default="default",
                        help="Hypothesis settings profile (default: %(default)s)")
    parser.add_argument("--seed", type=parse_seed, metavar="S",
                        help="seed for an exact replay of a run (default: random). "
                        "Unsharded it bypasses the example database, like Hypothesis's "
                        "@seed; with --shard/--shards the database is still read and "
                        "written (shards share failures through it) and each shard's "
                        "seed is derived from S")
    sharding = parser.add_argument_group(
        "sharding", "one job split across N machines: a CI matrix, a Kubernetes Indexed "
        "Job (docs/roundtrip.md, Sharding)")
    which = sharding.add_mutually_exclusive_group()
    which.add_argument("--shard", type=_shard, metavar="K/N",
                       help="run shard K of N (1-based, like 2/4; N <= 10,000): the same "
                       "split of the job's units on every shard, balanced by their expected "
                       "cost")
    which.add_argument("--shards", type=_shard_count, metavar="N",
                       help="run one of N shards (N <= 10,000), K from JOB_COMPLETION_INDEX "
                       "(0-based, as a Kubernetes Indexed Job sets it)")
    sharding.add_argument("--night", metavar="LABEL",
                          help="the job's label, which with K/N gives each shard its seed "
                          "(default: $COMPATFUZZ_NIGHT, else $GITHUB_RUN_ID, else today's "
                          "UTC date)")
    parser.add_argument("--workers", type=_positive, default=1, metavar="N",
                        help="processes sharing one example database (default: 1)")
    parser.add_argument("--database", metavar="DIR|redis://HOST:PORT/DB",
                        help="example database (default: .hypothesis/examples next to the "
                        "config file, shared with pytest; 'none' for none)")
    parser.add_argument("--report", metavar="report.json", type=Path,
                        help="write a JSON report (kept up to date while running)")
    parser.add_argument("--junit", metavar="junit.xml", type=Path, help="write JUnit XML")
    parser.add_argument("--html", metavar="report.html", type=Path,
                        help="write a self-contained HTML page: the version-pair matrix, "
                        "each failure with its counterexample, diff and replay command")
    parser.add_argument("--counterexamples", metavar="DIR", type=Path,
                        help="folder for counterexample files (default: "
                        "compatfuzz-counterexamples next to the report, or next to the "
                        "config file)")
    parser.add_argument("--replay", metavar="FILE", type=Path,
                        help="re-check one saved counterexample file and exit")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print only failures and the summary")
    parser.add_argument("--example-deadline", type=parse_deadline, default=10.0,
                        metavar="10s",
                        help="fail a unit when one example runs longer than this "
                        "(default: 10s; 'none' to disable)")
    server = parser.add_argument_group(
        "API server", "who judges roundtrip, valid and path_independent for CRDs "
        "(docs/apiserver.md)")
    server.add_argument("--apiserver", choices=("model", "real", "both"), default=None,
                        help="model: compatfuzz's API-server model (default, or each API's "
                        "apiserver = ...); real: a kube-apiserver and etcd started for the "
                        "run; both: every example through both, each disagreement a failure")
    server.add_argument("--apiserver-assets", metavar="DIR", default=None,
                        help="folder with kube-apiserver and etcd, after TEST_ASSET_* and "
                        "KUBEBUILDER_ASSETS (what 'compatfuzz apiserver install' or "
                        "'setup-envtest use -p path' prints)")
    server.add_argument("--apiserver-start-timeout", type=parse_duration, default=90.0,
                        metavar="90s", help="how long etcd and kube-apiserver may take to "
                        "become ready (default 90s)")
    parser.add_argument("--allow-ref-root", metavar="DIR", action="append", default=[],
                        help="also let a schema's $ref read files under DIR (default: the "
                        "schema's and the config's folders; config key allow_ref_roots); "
                        "repeatable")


def _load(args: argparse.Namespace, config: str | None = None) -> list[Any]:
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.roundtrip import find_config, load_config

    path = config or args.config
    if path is None:
        found = find_config()
        if found is None:
            raise SchemaLoadError(
                "no compatfuzz.toml, and no [tool.compatfuzz] in pyproject.toml",
                source=str(Path.cwd()),
                hint="pass --config PATH, or write one for your CRD or schema file with "
                     "'compatfuzz init FILE' (it asks nothing, then edit the convert line)",
            )
        path = str(found)
    return load_config(path, api=args.api, ref_roots=args.allow_ref_root)


def _json(value: Any, limit: int = 2000) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit] + " ...(truncated)"


def _shown(text: str, full: str | None = None) -> str:
    """User text as the terminal shows it: cut to ``TERMINAL_TEXT_LIMIT`` characters (with
    where the rest is) and with control characters escaped."""
    from compatfuzz.roundtrip._text import TERMINAL_TEXT_LIMIT, clip, printable

    return printable(clip(text, TERMINAL_TEXT_LIMIT, full))


_FALLBACK = " (the local fallback)"


def _describe_failure(result: Any, cx_file: str | None, run_seed: int | None,
                      out: TextIO, saved_in: str | None, *,
                      apiserver: str | None = None, database: str | None = None) -> None:
    cx = result.counterexample
    if cx is None:
        print(f"\n  {result.unit.id} FAILED: {_shown(result.message)}", file=out)
        return
    print(f"\n  {result.unit.id} FAILED", file=out)
    shrunk = "minimal counterexample" if cx.shrunk else "counterexample (not yet minimal)"
    print(f"  {shrunk}: {printable_json(cx.object)}", file=out)
    for line in _shown(cx.error, cx_file).splitlines():
        print(f"    {line}", file=out)
    _user_details(cx.traceback, cx.output, out, cx_file)
    saved = getattr(result, "saved", None)
    if run_seed is not None:
        print(f"  seed: {run_seed} (rerun with --seed {run_seed} for the same examples)",
              file=out)
    elif saved_in is not None and cx.error_type != "TimeoutError" and saved is False:
        # Hypothesis swallows the OSError of a database it cannot write
        print(f"  NOT saved in the example database {saved_in}: writing to it failed (a "
              "file, a read-only folder or a full disk?); fix it, or replay the "
              "counterexample file", file=out)
    elif saved_in is not None and cx.error_type != "TimeoutError" and saved_in.endswith(
            _FALLBACK):
        # the shared database went away: a run that uses it again will not see this one
        local = saved_in[:-len(_FALLBACK)]
        print(f"  saved only in the local fallback {local}, not in the shared example "
              f"database: a run with --database {local} replays it; the replay file "
              "below works anywhere", file=out)
    elif saved_in is not None and cx.error_type != "TimeoutError":
        # only what Hypothesis really saved: not with --database none, not a timed-out
        # example (it never failed, Hypothesis was stopped), not a failed write
        print(f"  saved in the example database {saved_in}: the next run (or pytest) "
              "replays it first", file=out)
    if cx_file:
        # the same judge as the run: --apiserver is the command line's, not the config's
        server = f" --apiserver {apiserver}" if apiserver else ""
        print(_command(f"  replay: compatfuzz fuzz --replay {shlex.quote(cx_file)}"
                       f"{_config_flag(cx.config)}{server}"), file=out)
    node = pytest_node(cx)
    if node is not None:
        # not @reproduce_failure: a config-declared API has no test function to decorate
        server = f" --compatfuzz-apiserver {apiserver}" if apiserver else ""
        if (database and database.lower() != "none"  # pytest's own default is the folder
                and not (saved_in or "").endswith(_FALLBACK)):  # saved there, not in Redis
            from compatfuzz.roundtrip._engine._database import redact

            server += f" --compatfuzz-database {shlex.quote(redact(database))}"
        if run_seed is not None:
            print(_command(f"  or: pytest {shlex.quote(node)} --compatfuzz-seed={run_seed}"
                           f"{server}"), file=out)
        elif saved_in is not None and cx.error_type != "TimeoutError" and saved is not False:
            print(_command(f"  or: pytest {shlex.quote(node)}{server}  (replays it from the "
                           "example database)"), file=out)
    print("", file=out)


def _command(line: str) -> str:
    """A printed command line, its words already ``shlex.quote``-d: control characters in
    a path or label are shown escaped, never sent to the terminal."""
    from compatfuzz.roundtrip._text import printable

    return printable(line, newlines=False)


def _config_flag(config: str | None) -> str:
    """`` --config PATH`` for a replay command, unless running it here finds that config
    anyway: a replay never loads the config its file names."""
    from compatfuzz.roundtrip import find_config

    if not config:
        return ""
    found = find_config()
    if found is not None and found.resolve() == Path(config).resolve():
        return ""
    try:
        where = os.path.relpath(config)
    except ValueError:  # another drive on Windows
        where = config
    return f" --config {shlex.quote(where)}"


def pytest_node(cx: Any) -> str | None:
    """The pytest node id of ``cx``'s unit, relative to the working directory, when its API
    comes from a config file (pytest collects the config file itself)."""
    if not cx.config:
        return None
    path = Path(cx.config)
    try:
        where = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        where = str(path)
    unit = cx.unit
    kind = f"{unit.kind}::" if unit.show_kind else ""
    return f"{where}::{unit.api}::{kind}{unit.name}"


def printable_json(value: Any) -> str:
    """``value`` as one line of JSON for the terminal (2,000 characters at most)."""
    from compatfuzz.roundtrip._text import printable

    return printable(_json(value))


def _user_details(traceback: str, output: str, out: TextIO, full: str | None = None) -> None:
    """The user's frames of a converter's traceback and what it printed."""
    if traceback:
        print("", file=out)
        for line in _shown(traceback.rstrip("\n"), full).splitlines():
            print(f"    {line}", file=out)
    if output:
        print("  captured output of the converters on this example:", file=out)
        for line in _shown(output.rstrip("\n"), full).splitlines():
            print(f"    | {line}", file=out)


def _clock(seconds: float) -> str:
    """``45s``, ``12m05s``, ``2h03m``."""
    seconds = max(0, int(seconds + 0.5))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def live_line(*, done: int, total: int, running: list[str], examples: int, elapsed: float,
              duration: float | None = None, planned_examples: int | None = None,
              width: int = 120) -> str:
    """The live progress line: units done, examples so far, their rate and the time left.

    With ``duration`` the time left is the budget's; otherwise it is estimated from the
    rate and ``planned_examples`` (units x examples per unit), marked ``~``.
    """
    rate = examples / elapsed if elapsed > 0 else 0.0
    parts = [f"[{done}/{total}]", f"{examples:,} examples", f"{rate:,.0f}/s"]
    if duration is not None:
        parts.append(f"{_clock(duration - elapsed)} left")
    elif planned_examples and rate > 0:
        parts.append(f"~{_clock(max(0, planned_examples - examples) / rate)} left")
    text = ", ".join(parts)
    if running:
        text += f"; running {', '.join(sorted(running))}"
    return text if len(text) <= width else text[: width - 3] + "..."


class _Progress:
    """Progress on stderr: one line per finished unit; on terminals a live line, redrawn
    every second, with examples so far, rate and time left."""

    def __init__(self, out: TextIO, quiet: bool, live: Any = None,
                 interval: float = 1.0) -> None:
        self.out = out
        self.quiet = quiet
        self.tty = out.isatty()
        self.total = 0
        self.done = 0
        self.running: set[str] = set()
        self.seed: int | None = None
        self.database: str | None = None
        self.live = live
        self.started = time.monotonic()
        self.duration: float | None = None
        self.per_unit: int | None = None
        self.lock = threading.RLock()
        self.accept: tuple[dict[str, Any], ...] = ()
        self.migrations: tuple[dict[str, Any], ...] = ()
        self.shard: dict[str, Any] | None = None
        self._ticking = threading.Event()
        self._interval = interval

    def line(self) -> str:
        examples = self.live.examples if self.live is not None else 0
        planned = self.per_unit * self.total if self.per_unit else None
        return live_line(done=self.done, total=self.total, running=sorted(self.running),
                         examples=examples, elapsed=time.monotonic() - self.started,
                         duration=self.duration, planned_examples=planned)

    def _live(self) -> None:
        with self.lock:
            if self.tty and self.running and not self.quiet:
                self.out.write(f"\r\x1b[K{self.line()}")
                self.out.flush()

    def _tick(self) -> None:
        while not self._ticking.wait(self._interval):
            self._live()

    def start_ticking(self) -> None:
        """Redraw the live line every second from a thread (terminals only)."""
        if self.tty and not self.quiet:
            threading.Thread(target=self._tick, name="compatfuzz progress",
                             daemon=True).start()

    def stop_ticking(self) -> None:
        self._ticking.set()

    def _clear(self) -> None:
        if self.tty:
            self.out.write("\r\x1b[K")

    def handle(self, event: Any, files: dict[str, str], args: argparse.Namespace) -> None:
        with self.lock:
            self._handle(event, files, args)

    def _handle(self, event: Any, files: dict[str, str], args: argparse.Namespace) -> None:
        from compatfuzz.roundtrip import (
            Notice,
            RunFinished,
            RunStarted,
            Status,
            UnitFinished,
            UnitStarted,
        )

        if isinstance(event, Notice):
            self._clear()
            print(f"compatfuzz fuzz: note: {_shown(event.message)}", file=self.out)
            if event.database is not None:
                self.database = f"{event.database}{_FALLBACK}"
            self._live()
        elif isinstance(event, RunStarted):
            self.total = len(event.units)
            self.accept = event.accept
            self.migrations = event.migrations
            self.seed = event.seed
            self.started = time.monotonic()
            self.duration = event.duration
            if event.duration is None:
                from compatfuzz.roundtrip import get_profile

                self.per_unit = event.max_examples or get_profile(event.profile).max_examples
            self.database = None if event.database == "none" else event.database
            budget = (f"{event.duration:.0f}s" if event.duration else
                      f"max_examples={event.max_examples or 'profile'}")
            shard = event.shard
            self.shard = shard
            if shard is not None:
                self.seed = None  # the database is kept: failures are replayed from it
            database = event.database
            if event.seed is not None and shard is None and database != "none":
                # Hypothesis's @seed sets database=None (hypothesis/core.py::seed)
                database = f"none (--seed bypasses {database})"
            replays = len(shard["replayed"]) if shard is not None else 0
            own = self.total - replays
            what = (f"{own} propert{'y' if own == 1 else 'ies'}"
                    + (f" + {replays} replay{'s' if replays > 1 else ''}" if replays else ""))
            print(f"compatfuzz fuzz: {self._who()}{what}, "
                  f"profile={event.profile}, "
                  f"{budget}, seed={event.seed if event.seed is not None else 'random'}, "
                  f"workers={event.workers}, "
                  f"database={database}", file=self.out)
            if shard is not None:
                self._shard_header(shard, args)
            for row in event.sampled:
                from compatfuzz.roundtrip._check._plan import Sampled

                print(f"compatfuzz fuzz: {Sampled(**row).describe()} (a fixed sample; "
                      "--plan-limit none or plan_limit = \"none\" plans all)",
                      file=self.out)
        elif isinstance(event, UnitStarted):
            self.running.add(event.unit.id)
            self._live()
        elif isinstance(event, UnitFinished):
            r = event.result
            self.running.discard(r.unit.id)
            self.done += 1
            self._clear()
            label = {Status.PASSED: "ok", Status.FAILED: "FAIL", Status.ERROR: "ERROR",
                     Status.SKIPPED: "skip", Status.INTERRUPTED: "stopped"}[r.status]
            if not self.quiet or r.status is not Status.PASSED:
                print(f"[{self.done:>{len(str(self.total))}}/{self.total}] {label:<7} "
                      f"{r.unit.id}  ({r.examples_text()}, {r.time_text()}"
                      + (f", {r.coverage_summary()})" if r.coverage else ")"),
                      file=self.out)
                if r.replayed:
                    print(f"  example database: {r.replayed}", file=self.out)
            if r.status is Status.FAILED:
                _describe_failure(r, files.get(r.unit.id), self.seed, self.out,
                                  self.database, apiserver=getattr(args, "apiserver", None),
                                  database=getattr(args, "database", None))
            elif r.status is Status.ERROR:
                print(f"  {_shown(r.message)}", file=self.out)
            self._live()
        elif isinstance(event, RunFinished):
            self._clear()
            counts: dict[str, int] = {}
            for res in event.results:
                counts[str(res.status)] = counts.get(str(res.status), 0) + 1
            parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            if len(event.results) < self.total:
                parts += f"{', ' if parts else ''}{self.total - len(event.results)} not run"
            examples = sum(res.examples for res in event.results)
            self._accepts(event.results)
            self._migrations(event.results)
            print(f"compatfuzz fuzz: {self._who()}{parts or 'nothing run'}; {examples} "
                  f"examples in {event.seconds:.1f}s ({event.stop_reason})", file=self.out)
        self.out.flush()


    def _who(self) -> str:
        """``shard 2/4: `` in a sharded run's header and final line."""
        shard = self.shard
        return "" if shard is None else f"shard {shard['number']}/{shard['count']}: "

    def _shard_header(self, shard: dict[str, Any], args: argparse.Namespace) -> None:
        """Which units of the job this shard runs, how to rerun it, what it replays."""
        from compatfuzz.roundtrip._engine._database import redact
        from compatfuzz.roundtrip._text import printable

        seeded = getattr(args, "seed", None) is not None
        night = printable(str(shard["night"]), newlines=False)
        rerun = f"--seed {args.seed}" if seeded else f"--night {shlex.quote(shard['night'])}"
        copies = shard["copies"]
        again = (f" (again, as copy {', '.join(map(str, sorted(set(copies.values()))))}: "
                 "fewer units than shards)" if copies else "")
        # the whole command: a shard is rerun by hand, away from the job that started it
        database = getattr(args, "database", None)
        command = (f"compatfuzz fuzz{_config_flag(getattr(args, 'config', None))} "
                   f"--shard {shard['number']}/{shard['count']} {rerun}"
                   + (f" --database {shlex.quote(redact(database))}" if database else ""))
        print(f"compatfuzz fuzz: shard {shard['number']}/{shard['count']} "
              + (f"(seeds from --seed {args.seed})" if seeded else f"of night {night}")
              + f": {len(shard['units'])} of the job's {len(shard['job_units'])} "
              f"units{again}, seed {shard['seed']}; rerun this shard with: "
              f"{_command(command)}", file=self.out)
        if shard["replayed"]:
            n = len(shard["replayed"])
            print(f"compatfuzz fuzz: first replaying the saved failures of {n} unit"
                  f"{'s' if n > 1 else ''} other shards own: "
                  f"{', '.join(shard['replayed'][:10])}"
                  + (", ..." if len(shard["replayed"]) > 10 else ""), file=self.out)

    def _migrations(self, results: Any) -> None:
        """What the APIs' migration code ran (per migration: calls, and where), and a
        warning per migration no example reached."""
        from compatfuzz.roundtrip._reports._migrations import (
            migration_summary,
            never_ran,
            text_lines,
        )

        if not self.migrations:
            return
        rows = migration_summary(self.migrations, results)
        lines = text_lines(rows)
        if lines:
            print("compatfuzz fuzz: migrations run:", file=self.out)
            for line in lines:
                print(f"  {line}", file=self.out)
        # an API whose run had no unit that draws examples (--property migrations) ran
        # no migration on purpose
        drew = {r.unit.api for r in results if str(r.unit.property) != "migrations"}
        for row in never_ran(rows):
            if row["api"] not in drew:
                continue
            print(f"compatfuzz fuzz: warning: {row['api']}: {row['migration']} never ran: no "
                  "example reached it (its route or schema had no unit in this run, or no "
                  "body took the way to it)", file=self.out)

    def _accepts(self, results: Any) -> None:
        """One line per accept entry that accepted a difference, and a warning per stale
        one (it accepted nothing in units it covers that ran: the difference is gone)."""
        from compatfuzz.roundtrip._check._accept import accept_summary, describe

        accepted, stale = accept_summary(self.accept, results)
        for row in accepted:
            units = len(row["units"])
            print(f"compatfuzz fuzz: accepted: {describe(row)}: {row['count']} examples in "
                  f"{units} unit{'s' if units > 1 else ''}; why: {row['why']}",
                  file=self.out)
        for row in stale:
            units = len(row["units"])
            print(f"compatfuzz fuzz: warning: stale accept entry {describe(row)}: it "
                  f"accepted nothing in the {units} unit{'s' if units > 1 else ''} it "
                  f"covers; remove it if the difference is gone (why: {row['why']})",
                  file=self.out)


def _replay(args: argparse.Namespace) -> int:
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.roundtrip import Property, Unit, find_config, units
    from compatfuzz.schema._read import read_text

    path: Path = args.replay
    try:
        doc = json.loads(read_text(path))  # a regular file, bounded
        unit = Unit(doc["api"], doc["kind"], Property(doc["property"]),
                    tuple(doc["versions"]))
        # the id the file records says whether it showed the kind (an API of several)
        shown = Unit(unit.api, unit.kind, unit.property, unit.versions, show_kind=True)
        if doc.get("id") == shown.id:
            unit = shown
        obj = doc["object"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise SchemaLoadError(
            f"not a compatfuzz counterexample file ({type(exc).__name__}: {str(exc)[:200]})",
            source=str(path), hint="pass a file from the compatfuzz-counterexamples folder",
        ) from None
    # The config is the one the user names, or the one `compatfuzz fuzz` finds here;
    # never the path the file records: a config imports modules, so a replay file from
    # an untrusted place would run code of its choosing.
    recorded = doc.get("config")
    used = args.config or find_config()
    if used is None:
        raise SchemaLoadError(
            "no config to replay against: no --config, and no compatfuzz.toml (or "
            "[tool.compatfuzz] in pyproject.toml) here or above", source=str(path),
            hint=(f"pass --config with the config the file came from (it says "
                  f"{_recorded_path(recorded)}; a replay never loads the config a file names)"
                  if isinstance(recorded, str) and recorded else
                  "pass --config with the config the file came from"),
        )
    if isinstance(recorded, str) and recorded and not _same_file(recorded, used):
        print(f"compatfuzz fuzz: note: {path} was recorded with the config "
              f"{_recorded_path(recorded)}; replaying with {used} (a replay never loads the "
              "config a file names: pass --config to choose one)", file=sys.stderr)
    apis = {a.name: a for a in _load(args, str(used))}
    if unit.api not in apis:
        raise SchemaLoadError(f"the config has no API {unit.api!r}", source=str(path),
                              hint="pass --config with the config the file came from")
    from compatfuzz.roundtrip._check._plan import is_unit

    if not is_unit(apis[unit.api], unit):  # sampled or not: it need not be planned now
        known = {u.id for u in units(apis[unit.api])}
        raise SchemaLoadError(
            f"{unit.id} is not a unit of API {unit.api!r} in this config "
            "(unknown kind or version, or the wrong number of versions for the property)",
            source=str(path), pointer="/versions",
            hint="pass --config with the config the file came from; its units are: "
                 + ", ".join(sorted(known)[:50]) + (", ..." if len(known) > 50 else ""),
        )
    from compatfuzz.roundtrip._check._properties import example_from_json

    try:
        example = example_from_json(apis[unit.api], unit, obj)
    except ValueError as exc:
        raise SchemaLoadError(f"the object is not an example of {unit.id}: {exc}",
                              source=str(path), pointer="/object",
                              hint="pass --config with the config the file came from") from None
    print(f"replaying {unit.id} on {printable_json(obj)}", file=sys.stderr)
    from compatfuzz.roundtrip._engine._workers import replay_in_child

    history = doc.get("history") or []
    if history and hasattr(apis[unit.api], "replay_history"):
        # the failure needed earlier requests: sent first, in the child that replays
        print(f"  sending the {len(history)} earlier request{'s' if len(history) != 1 else ''}"
              " the failure needed first", file=sys.stderr)
        apis[unit.api].prelude = history
    with _server(args, [apis[unit.api]]):
        # in a child process, as fuzz runs units: os._exit(0) must not read as a pass
        outcome, message, traceback, output = replay_in_child(apis[unit.api], unit, example)
    if outcome != "passed":
        recorded = str(doc.get("error_type") or "")
        now = message.partition(":")[0]
        if recorded and now and now != recorded:  # another failure than the one saved
            print(f"fails differently: the file recorded {recorded}, the replay: "
                  f"{_shown(message)}", file=sys.stderr)
        else:
            print(f"still failing: {_shown(message)}", file=sys.stderr)
        _user_details(traceback, output, sys.stderr)
        return EXIT_FAILED
    print("passes now: the property holds for this counterexample", file=sys.stderr)
    return EXIT_OK


def _server(args: argparse.Namespace, apis: list[Any]) -> Any:
    """The run's kube-apiserver and etcd when an API asks for one (``--apiserver``), or
    nothing; stopped, with their files removed, however the run ends."""
    from compatfuzz.roundtrip import API
    from compatfuzz.roundtrip._check._real import real_capable, serving

    def started(text: str) -> None:
        if not args.quiet:
            print(f"compatfuzz fuzz: {text}", file=sys.stderr)

    mode = getattr(args, "apiserver", None)
    left = [a.name for a in apis if isinstance(a, API) and not real_capable(a)]
    if mode in ("real", "both") and left:
        print(f"compatfuzz fuzz: note: --apiserver {mode} judges CRDs only; "
              f"{', '.join(left)} stay{'s' if len(left) == 1 else ''} with the model "
              "(not CRDs)", file=sys.stderr)

    return serving(apis, mode=getattr(args, "apiserver", None),
                   assets_dir=getattr(args, "apiserver_assets", None),
                   start_timeout=getattr(args, "apiserver_start_timeout", 90.0),
                   on_start=started, workers=getattr(args, "workers", 1))


def _recorded_path(recorded: str) -> str:
    """A path a replay file records, quoted as JSON (it is untrusted text: no escape
    sequence reaches the terminal), relative to here when it is under here."""
    try:
        relative = os.path.relpath(recorded)
    except ValueError:  # another drive on Windows, a NUL byte
        relative = recorded
    return _json(recorded if relative.startswith("..") else relative, 200)


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a symlink loop
        return False


_NEEDS = {
    "path_independent": "three or more versions",
    "default_idempotent": "defaulters (defaulters = { v1 = \"mod:f\" })",
    "default_commutes": "defaulters (defaulters = { v1 = \"mod:f\" })",
    "encodings": "a protobuf API (proto = ...)",
    "migrations": "a Cadwyn API (cadwyn = ...) with two or more versions",
    "write_then_read": "a Cadwyn app (cadwyn = \"shop.app:app\") with a POST and a GET route",
    "cross_version": "a Cadwyn app (cadwyn = \"shop.app:app\") with a POST and a GET route",
}


def _nothing_planned(apis: list[Any], properties: list[str] | None,
                     limit: int | str | None = "api") -> str | None:
    """Why a run would test nothing, or None: exit 0 must never mean "nothing checked"
    (pytest too exits 5, not 0, when it collects no test)."""
    from compatfuzz.roundtrip import units

    if any(units(api, properties, limit=limit) for api in apis):
        return None
    asked = ", ".join(properties or ["every property"])
    needs = "; ".join(f"{p} needs {_NEEDS[p]}" for p in (properties or []) if p in _NEEDS)
    return (f"nothing to run: {asked} plans no unit for {', '.join(a.name for a in apis)}"
            + (f" ({needs})" if needs else "") + "\n  fix: name another --property, or "
            "leave --property out to run every property that applies")


def _check_outputs(args: argparse.Namespace, apis: list[Any], cx_dir: Path) -> str | None:
    """Why an output path of this run is unusable, or None.

    Checked before any unit runs: a report written over the config (or another output)
    destroys it, a folder given as a file, or a folder that cannot be written, ended in a
    traceback after the run had spent its time.
    """
    from compatfuzz._commands._outputs import output_file_problem, writable_folder

    outputs = [(flag, path) for flag, path in (("--report", args.report),
                                                ("--junit", args.junit),
                                                ("--html", args.html)) if path is not None]
    inputs = {Path(p).resolve() for p in [args.config, *(a.source for a in apis)] if p}
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        why = output_file_problem(
            flag, path, seen=seen, example="report",
            inputs=dict.fromkeys(inputs, "the config this run reads; writing it would "
                                         "destroy the config"))
        if why is not None:
            return why
    flag = "--counterexamples" if args.counterexamples is not None else "the counterexample folder"
    if cx_dir.exists() and not cx_dir.is_dir():
        return (f"{flag} {cx_dir} is a file, not a folder\n  fix: pass --counterexamples "
                "with a folder")
    if cx_dir.resolve() in seen:
        return (f"{flag} {cx_dir} is also the {seen[cx_dir.resolve()]} file\n  fix: pass "
                "--counterexamples with another folder")
    why = writable_folder(cx_dir)
    if why is not None:
        return (f"{flag} {cx_dir} cannot be written: {why}\n  fix: pass "
                "--counterexamples with a folder you can write")
    return None


def _which_shard(args: argparse.Namespace) -> Any:
    """The run's ``Shard`` (``--shard K/N``, or ``--shards N`` and
    ``JOB_COMPLETION_INDEX``), or ``None`` for an unsharded run.

    Raises:
        InvalidArgument: ``--shards N`` without a usable ``JOB_COMPLETION_INDEX``, or
            ``--night`` without either (it only labels a sharded job).
    """
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._engine._shard import shard_from_env

    if getattr(args, "shards", None) is not None:
        return shard_from_env(args.shards)
    shard = getattr(args, "shard", None)
    if shard is None and getattr(args, "night", None) is not None:
        raise InvalidArgument(
            f"--night {args.night!r} labels the shards of a job, and this run is not "
            "sharded\n  fix: add --shard K/N (or --shards N in an Indexed Job), or leave "
            "--night out")
    return shard


def run(args: argparse.Namespace) -> int:
    from compatfuzz.roundtrip import RunFinished, Status
    from compatfuzz.roundtrip import run as run_engine
    from compatfuzz.roundtrip._reports._report import ReportWriter, write_junit

    shard_flag = ("--shard" if getattr(args, "shard", None) is not None else
                  "--shards" if getattr(args, "shards", None) is not None else None)
    if args.replay is not None:
        if shard_flag is not None:
            print(f"compatfuzz fuzz: error: --replay re-checks one counterexample file; "
                  f"{shard_flag} splits a whole run\n  fix: leave {shard_flag} out to "
                  "replay the file", file=sys.stderr)
            return EXIT_USAGE
        return _replay(args)
    shard = _which_shard(args)
    from compatfuzz.roundtrip._engine._database import project_home

    limit = "api" if getattr(args, "plan_limit", None) is None else args.plan_limit
    planning = {"now": True}

    def while_planning(signum: int, frame: Any) -> None:
        # nothing has run and nothing is written yet: stop at once
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, while_planning) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        apis = _load(args)
        nothing = _nothing_planned(apis, args.properties, limit)
    except KeyboardInterrupt:
        print("compatfuzz fuzz: interrupted while loading and planning; nothing ran",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if nothing:
        print(f"compatfuzz fuzz: error: {nothing}", file=sys.stderr)
        return EXIT_USAGE
    # beside the config (or the report), never wherever the command happened to run
    home = project_home(next((a.source for a in apis if a.source), None))
    beside = args.report or args.html
    cx_dir = args.counterexamples or (
        (beside.parent if beside else home) / "compatfuzz-counterexamples"
    )
    bad = _check_outputs(args, apis, cx_dir)
    if bad:
        print(f"compatfuzz fuzz: error: {bad}", file=sys.stderr)
        return EXIT_USAGE

    def on_write_error(path: Path, exc: OSError) -> None:
        # one line per file, and the run goes on: the failures it finds still count
        print(f"compatfuzz fuzz: error: cannot write {path} ({type(exc).__name__}: "
              f"{exc.strerror or exc}); the run goes on without it", file=sys.stderr)

    writer = ReportWriter(args.report, cx_dir, junit=args.junit, html=args.html,
                          on_error=on_write_error)
    from compatfuzz.roundtrip._engine._runner import LiveCounts

    live = LiveCounts()
    progress = _Progress(sys.stderr, args.quiet, live)
    stop = threading.Event()
    signals = {"count": 0}

    grace: list[threading.Timer] = []

    def out_of_grace(name: str) -> None:
        print(f"compatfuzz fuzz: the running units did not stop within {STOP_GRACE:g}s of "
              f"{name}; ending them", file=sys.stderr)
        _thread.interrupt_main(signal.SIGTERM)  # the handler's second count: it aborts

    def on_signal(signum: int, frame: Any) -> None:
        signals["count"] += 1
        stop.set()
        if signals["count"] > 1 or planning["now"]:
            raise KeyboardInterrupt
        name = signal.Signals(signum).name
        print(f"\ncompatfuzz fuzz: {name}, finishing the running examples (at most "
              f"{STOP_GRACE:g}s; send again to abort)", file=sys.stderr)
        timer = threading.Timer(STOP_GRACE, out_of_grace, args=(name,))
        timer.daemon = True
        timer.start()
        grace.append(timer)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    finished: RunFinished | None = None
    started = time.monotonic()
    progress.start_ticking()
    server = contextlib.ExitStack()
    try:
        server.enter_context(_server(args, apis))
        for event in run_engine(
            apis, profile=args.profile, max_examples=args.max_examples,
            duration=args.duration, seed=args.seed, workers=args.workers,
            database="" if args.database is None else args.database,
            properties=args.properties, stop=stop, example_deadline=args.example_deadline,
            on_failure=writer.found, live=live, isolate=True, plan_limit=limit,
            shard=shard, night=getattr(args, "night", None),
        ):
            planning["now"] = False
            writer.handle(event)
            progress.handle(event, writer.files, args)
            if isinstance(event, RunFinished):
                finished = event
    except KeyboardInterrupt:
        writer.interrupted()
        print(f"compatfuzz fuzz: aborted after {time.monotonic() - started:.1f}s; "
              "report written", file=sys.stderr)
    finally:
        for timer in grace:
            timer.cancel()
        server.close()
        progress.stop_ticking()
        for s, handler in previous.items():
            signal.signal(s, handler)
        if args.junit is not None and not writer.doc:
            try:
                write_junit(args.junit, writer.results)  # the run never started
            except OSError as exc:
                on_write_error(args.junit, exc)
                writer.failed_writes[str(args.junit)] = str(exc)
    results = writer.results
    if writer.failed_writes:
        # the outcome below stands, but never as exit 0: CI would read a stale file
        print("compatfuzz fuzz: error: not written (or out of date): "
              + ", ".join(sorted(writer.failed_writes)), file=sys.stderr)
    if any(r.status is Status.FAILED for r in results):
        if writer.files:
            print(f"counterexamples saved in {cx_dir}", file=sys.stderr)
        return EXIT_FAILED
    if any(r.status is Status.ERROR for r in results) or writer.failed_writes:
        return EXIT_USAGE
    if finished is None or stop.is_set():
        return EXIT_INTERRUPTED
    # 0 only when every planned unit ran and held
    if len(results) != len(writer.planned) or any(
            r.status not in (Status.PASSED, Status.SKIPPED) for r in results):
        missing = len(writer.planned) - len(results)
        if str(finished.stop_reason) == "duration" and missing > 0:
            print(f"compatfuzz fuzz: error: {missing} of {len(writer.planned)} units did "
                  f"not run: the --duration budget ({args.duration:g}s) was spent; give a "
                  "longer --duration, or fewer units (--property, --api, --plan-limit)",
                  file=sys.stderr)
        else:
            print(f"compatfuzz fuzz: error: {missing} of {len(writer.planned)} units did "
                  "not report a result", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
