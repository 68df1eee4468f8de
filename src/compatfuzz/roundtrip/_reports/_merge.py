"""Merge the ``--report`` files of a sharded job into the one report of the job.

N shards of a nightly job (``compatfuzz fuzz --shard K/N``, a CI matrix or a Kubernetes
Indexed Job) each write a report of their own units.  The job's reader wants one report,
in the same format, so the JUnit and HTML writers of ``_report`` and ``_html`` render it
unchanged, with:

* every unit of the job (the ``job_units`` each shard planned) exactly once.  A unit run
  on several shards (a copy when there are fewer units than shards, or a replay of another
  shard's failure from the shared example database) is failed if any run failed, its
  examples summed, and it keeps the minimal counterexample: the shortest canonical JSON,
  then the lexicographically first, as Hypothesis calls the shorter choice sequence, then
  the smaller one, "simpler" (shortlex: ``sort_key`` in
  ``hypothesis/internal/conjecture/shrinker.py``);
* every shard accounted for: a shard without a report, or whose report says it died
  (``"status": "running"`` after a SIGKILL, ``interrupted``, or units left ``running`` or
  ``not_run``) is a failure of the job, named with the units only it owned, never a
  silent gap;
* the exit code the job should have, with ``fuzz``'s codes.

Reports that are not of one job are refused (:class:`~compatfuzz.errors.SchemaLoadError`,
naming the file and the JSON path): another shard count, another ``config_digest`` or
``job_units``, one shard twice with different contents.  Everything here is a pure
function of the reports (no clock, no input order), so merging is order-independent and
merging a report twice changes nothing.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compatfuzz.errors import SchemaLoadError
from compatfuzz.roundtrip._check._accept import accept_summary
from compatfuzz.roundtrip._engine._shard import MAX_SHARDS
from compatfuzz.roundtrip._events import Counterexample, Property, Status, Unit, UnitResult

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Merged",
    "ShardReport",
    "ShardState",
    "canonical_json",
    "merge_reports",
    "parse_report",
    "read_report",
    "simpler_key",
]

#: the exit codes of ``compatfuzz fuzz`` (``_commands/fuzz.py``)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

REPORT_FORMAT = "compatfuzz-report/1"
#: the most examples one unit's row may report (``fuzz --max-examples`` allows 10**9)
MAX_UNIT_EXAMPLES = 1_000_000_000
_FIX = ("pass the --report files the shards of one job wrote (compatfuzz fuzz --shard K/N "
        "--report FILE)")
_RUN_STATUSES = {"running", "incomplete", *(str(s) for s in Status)}


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def simpler_key(value: Any) -> tuple[int, str]:
    """Sort key under which the simpler of two counterexamples is the smaller.

    Shortlex on the canonical JSON: shorter first, then lexicographic, the order Hypothesis
    shrinks towards on choice sequences (``sort_key`` in
    ``hypothesis/internal/conjecture/shrinker.py``).  Shards report objects, not choice
    sequences, so the object's canonical JSON stands in for the sequence.
    """
    text = canonical_json(value)
    return len(text), text


@dataclass(frozen=True)
class ShardReport:
    """One shard's ``--report`` file, checked.  A report without ``"shard"`` (an unsharded
    run) is shard 1/1 of a job whose units are the ones it lists."""

    path: str
    doc: Mapping[str, Any]
    number: int
    count: int
    night: str | None
    seed: int | None
    job_units: tuple[str, ...]
    units: tuple[str, ...]
    copies: Mapping[str, int]
    replayed: tuple[str, ...]
    config_digest: str | None
    sharded: bool
    #: unit id -> the shard that owns it (reports written before it was stored have none)
    owners: Mapping[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.number}/{self.count}"

    @property
    def rows(self) -> list[Mapping[str, Any]]:
        return list(self.doc.get("units") or [])

    @property
    def running(self) -> list[str]:
        return [r["id"] for r in self.doc.get("running") or []]

    @property
    def not_run(self) -> list[str]:
        return list(self.doc.get("not_run") or [])


def _bad(message: str, path: str, pointer: str, hint: str = _FIX) -> SchemaLoadError:
    return SchemaLoadError(message, source=path, pointer=pointer, hint=hint)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _strings(value: Any, path: str, pointer: str, *, unique: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _bad(f"expected a list of unit ids but got {_type(value)}", path, pointer)
    seen: set[str] = set()
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise _bad(f"expected a unit id (a string) but got {item!r:.80}", path,
                       f"{pointer}/{i}")
        if unique and item in seen:
            raise _bad(f"unit {item!r} is listed twice", path, f"{pointer}/{i}")
        seen.add(item)
    return tuple(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _one_of(value: Any, choices: set[str]) -> bool:
    return isinstance(value, str) and value in choices


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 \
        and value != float("inf")


def _check_fields(doc: Mapping[str, Any], path: str) -> None:
    """The run's settings and lists the merged report and its HTML page read."""
    for key in ("duration", "seconds"):
        if doc.get(key) is not None and not _number(doc[key]):
            raise _bad(f"expected a number of seconds or null but got {doc[key]!r:.80}", path,
                       f"/{key}")
    if doc.get("workers") is not None and not (_count(doc["workers"]) and doc["workers"]):
        raise _bad(f"expected a number of workers but got {doc['workers']!r:.80}", path,
                   "/workers")
    for key in ("started", "updated"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise _bad(f"expected a time (a string) but got {_type(doc[key])}", path, f"/{key}")
    for key in ("sampled", "notices", "accepted", "stale_accepts"):
        if doc.get(key) is not None and not isinstance(doc[key], list):
            raise _bad(f"expected a list but got {_type(doc[key])}", path, f"/{key}")
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._check._accept import Accept

    for key in ("accepted", "stale_accepts"):
        for i, entry in enumerate(doc.get(key) or []):
            where = f"/{key}/{i}"
            if not (isinstance(entry, dict) and isinstance(entry.get("api"), str)
                    and _count(entry.get("index"))
                    and all(isinstance(entry.get(k), str)
                            for k in ("path", "why", "property", "versions"))):
                raise _bad("expected an accept entry {api, index, path, why, property, "
                           "versions}", path, where)
            try:
                Accept(path=entry["path"], why=entry["why"], property=entry["property"],
                       versions=entry["versions"])
            except InvalidArgument as exc:
                raise _bad(f"not an accept entry: {exc}", path, where) from None


def _check_row(row: Any, path: str, where: str) -> None:
    """One unit result as ``UnitResult.to_json`` (and ``_report``) writes it."""
    if not isinstance(row, dict):
        raise _bad(f"expected a unit result (an object) but got {_type(row)}", path, where)
    for key in ("id", "api", "kind"):
        if not isinstance(row.get(key), str) or not row[key]:
            raise _bad(f"expected a string but got {row.get(key)!r:.80}", path,
                       f"{where}/{key}")
    if not _one_of(row.get("property"), {str(p) for p in Property}):
        raise _bad(f"unknown property {row.get('property')!r:.80}", path, f"{where}/property")
    versions = row.get("versions")
    if not (isinstance(versions, list) and versions
            and all(isinstance(v, str) and v for v in versions)):
        raise _bad(f"expected a list of versions but got {versions!r:.80}", path,
                   f"{where}/versions")
    if _unit_from_row(row).id != row["id"]:
        raise _bad(f"unit id {row['id']!r:.120} does not match its api, kind, property and "
                   "versions", path, f"{where}/id")
    if not _one_of(row.get("status"), {str(s) for s in Status}):
        raise _bad(f"unknown unit status {row.get('status')!r:.80}; expected one of "
                   f"{', '.join(str(s) for s in Status)}", path, f"{where}/status")
    if not (_count(row.get("examples")) and row["examples"] <= MAX_UNIT_EXAMPLES):
        raise _bad(f"expected a number of examples 0..{MAX_UNIT_EXAMPLES:,} but got "
                   f"{str(row.get('examples'))[:40]}", path, f"{where}/examples")
    if row.get("seed") is not None and not (_count(row["seed"]) and row["seed"] < 2 ** 128):
        raise _bad(f"expected a seed (an integer below 2**128) but got "
                   f"{str(row['seed'])[:40]}", path, f"{where}/seed")
    if row.get("seconds") is not None and not _number(row["seconds"]):
        raise _bad(f"expected a number of seconds but got {row['seconds']!r:.80}", path,
                   f"{where}/seconds")
    if row.get("message") is not None and not isinstance(row["message"], str):
        raise _bad(f"expected a message (a string) but got {_type(row['message'])}", path,
                   f"{where}/message")
    if row.get("counterexample_file") is not None and not isinstance(
            row["counterexample_file"], str):
        raise _bad(f"expected a file name but got {_type(row['counterexample_file'])}", path,
                   f"{where}/counterexample_file")
    accepted = row.get("accepted")
    if accepted is not None and not (isinstance(accepted, list) and all(
            isinstance(a, dict) and _count(a.get("index")) and _count(a.get("count"))
            for a in accepted)):
        raise _bad("expected a list of {\"index\": N, \"count\": N}", path,
                   f"{where}/accepted")
    cov = row.get("coverage")
    if cov is not None and not (
            isinstance(cov, dict) and _count(cov.get("leaf_paths")) and _number(cov.get("ratio"))
            and all(isinstance(cov.get(k), list) and all(isinstance(c, str) for c in cov[k])
                    for k in ("edge_classes", "missing_edge_classes"))):
        raise _bad("expected coverage {leaf_paths, ratio, edge_classes, "
                   "missing_edge_classes} or null", path, f"{where}/coverage")
    cx = row.get("counterexample")
    if cx is None:
        return
    if not isinstance(cx, dict):
        raise _bad(f"expected a counterexample object or null but got {_type(cx)}", path,
                   f"{where}/counterexample")
    for key in ("error", "error_type", "traceback", "output", "reproduce_failure", "config"):
        if cx.get(key) is not None and not isinstance(cx[key], str):
            raise _bad(f"expected a string or null but got {_type(cx[key])}", path,
                       f"{where}/counterexample/{key}")
    diff = cx.get("diff")
    if diff is not None and not (isinstance(diff, list) and all(isinstance(d, dict)
                                                                 for d in diff)):
        raise _bad("expected a list of changes ({path, kind, old, new})", path,
                   f"{where}/counterexample/diff")
    if cx.get("truncated") is not None and not isinstance(cx["truncated"], list):
        raise _bad("expected the list of fields cut", path, f"{where}/counterexample/truncated")


def parse_report(doc: Any, path: str) -> ShardReport:
    """Check one report document (``fuzz --report``'s format) and return it as a shard.

    Raises:
        SchemaLoadError: not a compatfuzz report, or a field of the wrong shape; the
            message names ``path`` and the JSON path.
    """
    if not isinstance(doc, dict):
        raise _bad(f"expected a compatfuzz report (a JSON object) but got {_type(doc)}",
                   path, "")
    if not _one_of(doc.get("format"), {REPORT_FORMAT}):
        raise _bad(f"not a compatfuzz report: format is {doc.get('format')!r:.80}, expected "
                   f"{REPORT_FORMAT!r}", path, "/format")
    status = doc.get("status")
    if not _one_of(status, _RUN_STATUSES):
        raise _bad(f"unknown run status {status!r:.80}; expected one of "
                   f"{', '.join(sorted(_RUN_STATUSES))}", path, "/status")
    _check_fields(doc, path)
    rows = doc.get("units")
    if not isinstance(rows, list):
        raise _bad(f"expected a list of unit results but got {_type(rows)}", path, "/units")
    ids: set[str] = set()
    for i, row in enumerate(rows):
        _check_row(row, path, f"/units/{i}")
        if row["id"] in ids:
            raise _bad(f"unit {row['id']!r} has two results", path, f"/units/{i}/id")
        ids.add(row["id"])
    running = doc.get("running") or []
    if not isinstance(running, list) or not all(
            isinstance(r, dict) and isinstance(r.get("id"), str) for r in running):
        raise _bad("expected a list of {\"id\": ...} objects", path, "/running")
    not_run = _strings(doc.get("not_run") or [], path, "/not_run")
    shard = doc.get("shard")
    if shard is None:
        every = tuple(sorted(ids | {r["id"] for r in running} | set(not_run)))
        return ShardReport(path, doc, 1, 1, None, doc.get("seed"), every, every, {}, (),
                           None, False)
    if not isinstance(shard, dict):
        raise _bad(f"expected the shard object of a sharded run but got {_type(shard)}",
                   path, "/shard")
    number: Any = shard.get("number")
    count: Any = shard.get("count")
    if not (_count(number) and _count(count) and 1 <= number <= count):
        raise _bad(f"expected a shard K/N with 1 <= K <= N but got {number!r:.20}/"
                   f"{count!r:.20}", path,
                   "/shard/count" if not (_count(count) and count >= 1) else "/shard/number")
    if count > MAX_SHARDS:
        digits = str(count)
        shown = digits if len(digits) <= 20 else f"{digits[:20]}... ({len(digits)} digits)"
        raise _bad(f"is shard {number}/{shown}, of more than {MAX_SHARDS:,} shards, the most "
                   "a job may have (fuzz --shard refuses more)", path, "/shard/count")
    night = shard.get("night")
    if night is not None and not isinstance(night, str):
        raise _bad(f"expected a night label (a string) but got {_type(night)}", path,
                   "/shard/night")
    seed = shard.get("seed")
    if seed is not None and not (_count(seed) and seed < 2 ** 128):
        raise _bad(f"expected a seed (an integer) but got {seed!r:.40}", path, "/shard/seed")
    job = _strings(shard.get("job_units"), path, "/shard/job_units")
    known = set(job)
    own = _strings(shard.get("units", []), path, "/shard/units")
    replayed = _strings(shard.get("replayed", []), path, "/shard/replayed")
    for pointer, listed in (("/shard/units", own), ("/shard/replayed", replayed),
                            ("/not_run", not_run)):
        for i, unit in enumerate(listed):
            if unit not in known:
                raise _bad(f"unit {unit!r} is not one of the job's units (job_units)", path,
                           f"{pointer}/{i}")
    for i, row in enumerate(rows):
        if row["id"] not in known:
            raise _bad(f"unit {row['id']!r} is not one of the job's units (job_units)", path,
                       f"/units/{i}/id")
    copies = shard.get("copies", {})
    if not isinstance(copies, dict) or not all(
            k in known and _count(v) for k, v in copies.items()):
        raise _bad("expected {unit id: copy number} for units of the job", path,
                   "/shard/copies")
    owners = shard.get("owners", {})
    if not isinstance(owners, dict) or not all(
            k in known and _count(v) and 1 <= v <= count for k, v in owners.items()):
        raise _bad(f"expected {{unit id: owning shard 1..{count}}} for units of the job",
                   path, "/shard/owners")
    digest = shard.get("config_digest")
    if not isinstance(digest, str) or not digest:
        raise _bad(f"expected the sha256 of the job's config but got {digest!r:.80}", path,
                   "/shard/config_digest")
    # the job's units in the order the shards planned them: the merged report lists them
    # as a single run's does
    return ShardReport(path, doc, number, count, night, seed, tuple(job),
                       tuple(sorted(own)), dict(copies), tuple(sorted(replayed)), digest,
                       True, dict(owners))


def read_report(path: str | os.PathLike[str]) -> ShardReport:
    """Read and check a report file.

    Raises:
        SchemaLoadError: unreadable, not JSON, or not a compatfuzz report (the message
            names the file, the line or JSON path, and the fix).
    """
    from compatfuzz.schema._read import read_text

    name = str(path)
    try:
        text = read_text(path)
    except IsADirectoryError:
        raise _bad("is a folder, not a report file", name, "",
                   f"name the report files in it, e.g. {Path(name) / 'shard-1.json'}") from None
    except FileNotFoundError:
        raise _bad("no such file", name, "", "check the path; a shard that never wrote "
                   "its report is named as missing when its siblings are merged") from None
    except UnicodeDecodeError as exc:
        raise _bad(f"not UTF-8 text (byte {exc.start}): not a report", name, "") from None
    except OSError as exc:
        raise _bad(f"cannot read it ({exc.strerror or exc})", name, "") from None
    def no_constant(word: str) -> Any:
        raise _bad(f"{word} is not JSON (fuzz never writes it): the file was edited after",
                   name, "")

    try:
        doc = json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise _bad(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                   "fuzz writes its report atomically, so the file was cut or edited after",
                   name, "") from None
    except ValueError as exc:  # an integer of over 4,300 digits (sys.int_info)
        raise _bad(f"holds a number too long to be a report's ({str(exc)[:80]})", name,
                   "") from None
    except RecursionError:
        raise _bad("nested too deeply to be a report", name, "") from None
    return parse_report(doc, name)


class ShardState:
    """How a shard ended, as the merged report and the text say it."""

    FINISHED = "finished"
    MISSING = "missing"
    #: the report still says ``running``: the process was killed (SIGKILL, OOM, node lost)
    DIED = "died"
    INTERRUPTED = "interrupted"
    #: finished, but left units without a result (a spent ``--duration``)
    INCOMPLETE = "incomplete"


@dataclass
class ShardLine:
    """One shard of the job in the merged report."""

    number: int
    count: int
    state: str
    file: str | None = None
    night: str | None = None
    seed: int | None = None
    units: list[str] = field(default_factory=list)
    summary: dict[str, int] = field(default_factory=dict)
    examples: int = 0
    running: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    updated: str | None = None
    #: what the shard's run said once (its report's ``notices``: Redis went away, ...)
    notices: list[str] = field(default_factory=list)
    #: a missing shard with nothing to say stands for the run ``number..last`` of them,
    #: so a merge holds a line per report given, not per shard of the job
    last: int | None = None

    @property
    def size(self) -> int:
        """How many shards the line stands for."""
        return 1 if self.last is None else self.last - self.number + 1

    @property
    def span(self) -> str:
        """``3/9``, or ``3-9/9`` for a run of missing shards."""
        if self.last is None or self.last == self.number:
            return f"{self.number}/{self.count}"
        return f"{self.number}-{self.last}/{self.count}"

    @property
    def label(self) -> str:
        """``shard 3/9``, or ``shards 3-9/9`` for a run of missing shards."""
        return ("shard " if self.size == 1 else "shards ") + self.span


    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, **({"last": self.last} if self.last else {}),
                "count": self.count, "state": self.state,
                "file": self.file, "night": self.night, "seed": self.seed,
                "units": self.units, "summary": self.summary, "examples": self.examples,
                "running": self.running, "not_run": self.not_run, "updated": self.updated,
                "notices": self.notices}


def shard_names(lines: Sequence[ShardLine]) -> str:
    """``shard 3/9``, ``shards 3/9, 5-9/9``: the shards ``lines`` stand for."""
    if len(lines) == 1:
        return lines[0].label
    return "shards " + ", ".join(line.span for line in lines)


@dataclass
class Merged:
    """The job's report (:attr:`doc`, ``fuzz --report``'s format plus ``"merge"``), the
    units and results the JUnit and HTML writers take, and the job's exit code."""

    doc: dict[str, Any]
    planned: list[Unit]
    results: list[UnitResult]
    accept: list[dict[str, Any]]
    files: dict[str, str]
    #: unit id -> why it has no result (which shard lost it), for JUnit's ``skipped``
    not_run: dict[str, str]
    shards: list[ShardLine]
    failures: list[dict[str, Any]]
    exit_code: int
    #: (file, why) for every report given but not merged: another night's, a duplicate
    set_aside: list[tuple[str, str]] = field(default_factory=list)


def _unit_from_id(unit_id: str, kinds: Mapping[str, str]) -> Unit | None:
    """``api::[kind::]property[v1->v2]`` back to a :class:`Unit` (``Unit.id``'s format)."""
    head, sep, rest = unit_id.partition("[")
    if not sep or not rest.endswith("]"):
        return None
    parts = head.split("::")
    if len(parts) not in (2, 3):
        return None
    try:
        prop = Property(parts[-1])
    except ValueError:
        return None
    versions = tuple(rest[:-1].split("->"))
    if len(parts) == 3:
        return Unit(parts[0], parts[1], prop, versions, show_kind=True)
    return Unit(parts[0], kinds.get(parts[0], parts[0]), prop, versions)


def _unit_from_row(row: Mapping[str, Any]) -> Unit:
    unit = Unit(row["api"], row["kind"], Property(row["property"]), tuple(row["versions"]))
    return unit if unit.id == row["id"] else Unit(unit.api, unit.kind, unit.property,
                                                  unit.versions, show_kind=True)


def _counterexample(unit: Unit, cx: Mapping[str, Any]) -> Counterexample:
    return Counterexample(
        unit=unit, object=cx.get("object"), error=str(cx.get("error") or ""),
        error_type=str(cx.get("error_type") or ""), diff=list(cx.get("diff") or []),
        seed=cx.get("seed"), reproduce=str(cx.get("reproduce_failure") or ""),
        shrunk=bool(cx.get("shrunk", True)), config=cx.get("config"),
        traceback=str(cx.get("traceback") or ""), output=str(cx.get("output") or ""),
        history=tuple(h for h in cx.get("history") or () if isinstance(h, dict)))


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a symlink loop
        return False


def _cx_file(recorded: Any, report: str) -> tuple[str | None, str | None]:
    """Where a counterexample file is now, and the recorded path when it was refused.

    As recorded when that is in the report's folder (or below it), else by its name
    beside the report (the shard's files moved together: a CI artifact).  A path outside
    the report's folder is refused: the report is someone else's file, and the merge
    prints a replay command with the path for the user to run."""
    if not isinstance(recorded, str) or not recorded:
        return None, None
    base = Path(report).parent
    if _inside(Path(recorded), base):
        return recorded, None
    name = Path(recorded).name
    if name not in ("", ".", ".."):
        for candidate in (base / "compatfuzz-counterexamples" / name, base / name):
            if candidate.is_file() and _inside(candidate, base):
                return str(candidate), None
    return None, recorded


def _check_one_job(shards: Sequence[ShardReport]
                   ) -> tuple[list[ShardReport], list[tuple[ShardReport, str]]]:
    """The shards with exact duplicates dropped, sorted by number, and the duplicates
    (with the report each repeats); refuses reports that are not of one job."""
    first = min(shards, key=lambda s: (s.number, s.path))
    by_number: dict[int, ShardReport] = {}
    dupes: list[tuple[ShardReport, str]] = []
    unsharded = next((s.path for s in shards if not s.sharded), None)
    alone = ("" if unsharded is None or len(shards) == 1 else
             f"; {unsharded} has no \"shard\" object, so it is shard 1/1 of a job of its "
             "own: run each shard with --shard K/N")
    for s in sorted(shards, key=lambda s: (s.number, s.path)):
        if s.count != first.count:
            raise _bad(f"is shard {s.label}, but {first.path} is shard {first.label}: "
                       "reports of jobs with different shard counts", s.path, "/shard/count",
                       "merge the reports of one job only (every --shard K/N of one N)"
                       + alone)
        if s.config_digest != first.config_digest:
            raise _bad(f"was planned from another config than {first.path} (config_digest "
                       f"{s.config_digest or 'none'} vs {first.config_digest or 'none'}): "
                       "reports of two different jobs", s.path, "/shard/config_digest",
                       "merge the reports of one job only; rerun the shards whose config "
                       "changed" + alone)
        if set(s.job_units) != set(first.job_units):
            extra = sorted(set(s.job_units) - set(first.job_units))
            lacking = sorted(set(first.job_units) - set(s.job_units))
            detail = "; ".join(p for p in (
                f"{len(extra)} units {first.path} does not plan (" + ", ".join(extra[:3])
                + (", ..." if len(extra) > 3 else "") + ")" if extra else "",
                f"{len(lacking)} units it lacks (" + ", ".join(lacking[:3])
                + (", ..." if len(lacking) > 3 else "") + ")" if lacking else "") if p)
            raise _bad(f"plans other units than {first.path}: {detail}", s.path,
                       "/shard/job_units",
                       "merge the reports of one job only (same config, --api, --property "
                       "and --plan-limit on every shard)" + alone)
        seen = by_number.get(s.number)
        if seen is None:
            by_number[s.number] = s
        elif canonical_json(seen.doc) == canonical_json(s.doc):
            if s.path != seen.path:
                dupes.append((s, f"the same report as {seen.path}: counted once"))
        elif canonical_json(seen.doc) != canonical_json(s.doc):
            raise _bad(f"is shard {s.label}, and so is {seen.path}, with other contents",
                       s.path, "/shard/number",
                       "pass each shard's report once (a rerun of a shard replaces its old "
                       "report: merge the newer one)" + alone)
    return [by_number[n] for n in sorted(by_number)], dupes


def _night_name(night: str | None) -> str:
    from compatfuzz.roundtrip._text import printable

    return "no night" if night is None else f"night {printable(night, newlines=False)!r}"


def _failed_units(s: ShardReport) -> int:
    return sum(1 for row in s.rows if row.get("status") == "failed")


def _pick_night(reports: Sequence[ShardReport], night: str | None
                ) -> tuple[list[ShardReport], list[tuple[ShardReport, str]]]:
    """The reports of one night, and the reports set aside with why.

    Reports of several nights are never merged, and the night is never guessed: a report
    labelled with a later night (a rerun, a copy, an attacker's file) used to make the
    real shards "stale", so one file could turn a failed job into a pass.  Without
    ``night`` a mix of nights is refused; with it, the other nights' reports are set
    aside and each is named (a shard that did not run tonight is then missing, never
    passed on last night's verdict).

    Raises:
        SchemaLoadError: reports of several nights and no ``night``, or no report of
            ``night``.
    """
    sharded = [s for s in reports if s.sharded]
    nights: dict[str | None, list[ShardReport]] = {}
    for s in sorted(sharded, key=lambda s: (s.number, s.path)):
        nights.setdefault(s.night, []).append(s)
    if night is None:
        if len(nights) < 2:
            return list(reports), []
        listed = "; ".join(
            f"{_night_name(n)}: " + ", ".join(s.path for s in group[:5])
            + (f", ... ({len(group) - 5} more)" if len(group) > 5 else "")
            for n, group in sorted(nights.items(), key=lambda kv: str(kv[0])))
        from compatfuzz.roundtrip._text import printable

        # each as the shell reads it: the hint is a command to paste
        choices = " or ".join(shlex.quote(printable(n, newlines=False))
                              for n in sorted(str(n) for n in nights if n))
        raise SchemaLoadError(
            f"the reports are of {len(nights)} nights, and a job is one night: {listed}",
            source="<command line>",
            hint=f"merge one night's reports: pass --night LABEL ({choices}); the reports "
                 "of other nights are then set aside and listed, and a shard without a "
                 "report of that night is missing")
    if night not in nights:
        have = ", ".join(_night_name(n) for n in sorted(nights, key=str)) or "none sharded"
        raise SchemaLoadError(
            f"no report is of {_night_name(night)} (--night); the reports are of: {have}",
            source="<command line>",
            hint="pass the label the shards ran with (fuzz --night, $COMPATFUZZ_NIGHT, "
                 "else $GITHUB_RUN_ID), as their reports' shard.night says")
    kept = [s for s in reports if not s.sharded or s.night == night]
    aside = []
    for s in sharded:
        if s.night == night:
            continue
        failed = _failed_units(s)
        aside.append((s, f"shard {s.label} of {_night_name(s.night)}, not of "
                         f"{_night_name(night)} (--night)"
                      + (f"; it reports {failed} failed unit{'s' if failed > 1 else ''}, "
                         "not merged" if failed else "")))
    return kept, aside


def _state(s: ShardReport) -> str:
    status = str(s.doc.get("status"))
    if status == "running":
        return ShardState.DIED
    if status == "interrupted":
        return ShardState.INTERRUPTED
    ran = {r["id"] for r in s.rows}
    if status == "incomplete" or s.running or s.not_run or any(u not in ran for u in s.units):
        return ShardState.INCOMPLETE
    return ShardState.FINISHED


def _merge_rows(unit: Unit, found: list[tuple[ShardReport, Mapping[str, Any]]]
                ) -> tuple[dict[str, Any], UnitResult, dict[str, Any] | None]:
    """One row for ``unit`` from every shard's run of it, its result, and its failure
    (the minimal counterexample and every shard that found one) or None."""
    statuses = [Status(row["status"]) for _, row in found]
    # a replay that found nothing to replay (skipped: the failure was fixed) says nothing
    # about the unit beside its owner's real run
    ran = [st for st in statuses if st is not Status.SKIPPED] or statuses
    status = Status.FAILED if Status.FAILED in statuses else max(ran)
    failing = [(s, row) for s, row in found if row["status"] == "failed"]
    with_cx = [(s, row) for s, row in failing if row.get("counterexample")]
    if with_cx:
        rep_shard, rep = min(with_cx, key=lambda p: (
            simpler_key(p[1]["counterexample"].get("object")), p[0].number))
    elif failing:
        rep_shard, rep = failing[0]
    else:
        rep_shard, rep = max(found, key=lambda p: (Status(p[1]["status"]).severity,
                                                    -p[0].number))
    accepted: dict[int, int] = {}
    for _, row in found:
        for entry in row.get("accepted") or []:
            if isinstance(entry, dict) and _count(entry.get("index")) and _count(
                    entry.get("count")):
                accepted[entry["index"]] = accepted.get(entry["index"], 0) + entry["count"]
    examples = sum(row["examples"] for _, row in found)
    seconds = round(sum(float(row.get("seconds") or 0) for _, row in found), 3)
    merged = {**rep, "status": str(status), "examples": examples, "seconds": seconds,
              "accepted": [{"index": i, "count": n} for i, n in sorted(accepted.items())],
              "shards": [s.number for s, _ in found]}
    cx_file, refused = _cx_file(rep.get("counterexample_file"), rep_shard.path)
    merged["counterexample_file"] = cx_file
    if cx_file is None:
        merged.pop("counterexample_file")
    cx = rep.get("counterexample") if status is Status.FAILED else None
    if status is not Status.FAILED:
        merged["counterexample"] = None
        merged.pop("counterexample_file", None)
    result = UnitResult(
        unit=unit, status=status, examples=examples, seconds=seconds, seed=rep.get("seed"),
        counterexample=_counterexample(unit, cx) if cx else None,
        message=str(rep.get("message") or ""), coverage=rep.get("coverage"),
        accepted=tuple(sorted(accepted.items())))
    if status is not Status.FAILED:
        return merged, result, None
    same = sorted(s.number for s, row in with_cx
                  if cx and canonical_json(row["counterexample"].get("object"))
                  == canonical_json(cx.get("object")))
    distinct = {canonical_json(row["counterexample"].get("object")) for _, row in with_cx}
    failure = {"id": unit.id,
               "object": cx.get("object") if cx else None,
               "error": (cx.get("error") if cx else rep.get("message")) or "",
               "counterexample_file": cx_file,
               "counterexample_file_refused": refused,
               "config": cx.get("config") if cx else None,
               "found_by": same or [s.number for s, _ in failing],
               "failed_on": sorted(s.number for s, _ in failing),
               "other_counterexamples": max(0, len(distinct) - 1)}
    return merged, result, failure


def _common(values: Iterable[Any]) -> Any:
    """The one value all shards agree on, else None."""
    distinct = {canonical_json(v): v for v in values}
    return next(iter(distinct.values())) if len(distinct) == 1 else None


def _why_not_run(lines: Sequence[ShardLine], not_run: Sequence[str], *,
                 attributed: bool = False) -> tuple[dict[str, str], list[str]]:
    """Per unit without a result, the shard that lost it (JUnit's ``skipped`` message),
    and a notice per shard that did not finish (the HTML page's notices).

    ``attributed``: each missing shard's ``not_run`` is its own units (the reports name
    every unit's owner); otherwise the missing shards share one list."""
    why: dict[str, str] = {}
    notices: list[str] = []
    left = set(not_run)
    missing = [line for line in lines if line.state == ShardState.MISSING]
    if len(missing) > 1 and attributed:
        for m in missing:
            notices.append(f"{m.label}: no report; the "
                           f"{len(m.not_run)} units {'it' if m.size == 1 else 'they'} "
                           "owned did not run")
    owners = shard_names(missing)
    for line in lines:
        label = line.label
        if line.state == ShardState.MISSING:
            for unit in line.not_run:
                if unit in left:
                    why[unit] = (f"did not run: {label} wrote no report" if attributed
                                 else f"did not run: {owners} wrote no report")
            continue
        if line.state == ShardState.FINISHED:
            continue
        verb = {ShardState.DIED: "died", ShardState.INTERRUPTED: "was interrupted",
                ShardState.INCOMPLETE: "ended"}[line.state]
        for unit in line.running:
            if unit in left:
                why[unit] = f"did not finish: {label} {verb} while running it"
        for unit in line.not_run:
            if unit in left:
                why[unit] = f"did not run: {label} {verb} before it started"
        running = len(line.running)
        notices.append(f"{label} {verb} ({line.state}): {running} "
                       f"unit{' was' if running == 1 else 's were'} running, "
                       f"{len(line.not_run)} never started")
    if missing and not (len(missing) > 1 and attributed):
        orphans = [u for u in missing[0].not_run if u in left]
        notices.insert(0, f"{owners}: no report; {len(orphans)} units only "
                       f"{'it' if owners.startswith('shard ') else 'they'} owned did not "
                       "run")
    return why, notices


def merge_reports(reports: Sequence[ShardReport], *, night: str | None = None) -> Merged:
    """The report of the whole job from its shards' reports (in any order; one report
    given twice counts once).  ``night`` picks the night to merge when the reports are of
    several; the others are set aside (:attr:`Merged.set_aside` says which and why).

    Raises:
        SchemaLoadError: no reports, reports of several nights and no ``night`` (or none
            of ``night``), or reports that are not of one job (another shard count,
            config digest or unit set; one shard twice with different contents).
    """
    if not reports:
        raise SchemaLoadError("no report to merge", source="<command line>",
                              hint="pass the shards' report files: out/shard-*.json")
    tonight, aside = _pick_night(reports, night)
    earlier = [s for s, _ in aside]
    shards, dupes = _check_one_job(tonight)
    aside = [*aside, *dupes]
    count = shards[0].count
    job_units = shards[0].job_units
    present = {s.number: s for s in shards}
    # the units a present shard owned; the others were only the missing shards'
    owned = {u for s in shards for u in s.units}
    orphans = [u for u in job_units if u not in owned]
    owners = next((s.owners for s in shards if s.owners), {})
    rows: dict[str, list[tuple[ShardReport, Mapping[str, Any]]]] = {}
    for s in shards:
        for row in s.rows:
            rows.setdefault(row["id"], []).append((s, row))
    kinds = {row["api"]: row["kind"] for s in shards for row in s.rows
             if _unit_from_row(row).id == row["id"] and not _unit_from_row(row).show_kind}
    planned: list[Unit] = []
    for unit_id in job_units:
        found = rows.get(unit_id)
        unit = _unit_from_row(found[0][1]) if found else _unit_from_id(unit_id, kinds)
        if unit is None:
            raise _bad(f"unit id {unit_id!r} is not of the form api::property[v1->v2]",
                       shards[0].path, f"/shard/job_units/{job_units.index(unit_id)}")
        planned.append(unit)
    units_json: list[dict[str, Any]] = []
    results: list[UnitResult] = []
    failures: list[dict[str, Any]] = []
    files: dict[str, str] = {}
    for unit in planned:
        found = rows.get(unit.id)
        if not found:
            continue
        row, result, failure = _merge_rows(unit, found)
        units_json.append(row)
        results.append(result)
        if row.get("counterexample_file"):
            files[unit.id] = row["counterexample_file"]
        if failure is not None:
            failures.append(failure)
    done = {r.unit.id for r in results}
    lines: list[ShardLine] = []
    # Only the shards a report names, or that own a unit without a result, get a line of
    # their own: the others missing are one line per run of them, so the work and the
    # memory are the reports' and the units', never the shard count's.
    left = [u for u in orphans if u not in done]
    by_owner: dict[int, list[str]] = {}
    for u in left:
        by_owner.setdefault(owners.get(u, 0), []).append(u)
    left_over = {s.number: s for s in sorted(earlier, key=lambda s: s.path, reverse=True)
                 if s.count == count}
    noted = sorted({*present, *left_over, *(n for n in by_owner if n)})
    if 0 in by_owner:  # no owners recorded: the orphans go with the first missing shard
        first = next((n for n in range(1, count + 1) if n not in present), None)
        if first is not None:
            noted = sorted({*noted, first})
            by_owner.setdefault(first, []).extend(by_owner.pop(0))
    edges = [0, *noted, count + 1]
    numbers: list[tuple[int, int | None]] = []
    for a, b in itertools.pairwise(edges):
        if b - a > 1:  # the shards between two noted ones: missing, nothing to say
            numbers.append((a + 1, b - 1 if b - 1 > a + 1 else None))
        if b <= count:
            numbers.append((b, None))
    for number, last in numbers:
        got = present.get(number)
        if got is None:
            old = left_over.get(number) if last is None else None
            lines.append(ShardLine(number, count, ShardState.MISSING,
                                   file=None if old is None else old.path,
                                   night=None if old is None else old.night,
                                   not_run=sorted(by_owner.get(number, [])) if last is None
                                   else [], last=last))
            continue
        s = got
        ran = {r["id"]: r for r in s.rows}
        summary: dict[str, int] = {}
        for r in s.rows:
            summary[r["status"]] = summary.get(r["status"], 0) + 1
        lines.append(ShardLine(
            number, count, _state(s), file=s.path, night=s.night, seed=s.seed,
            units=list(s.units), summary=dict(sorted(summary.items())),
            examples=sum(r["examples"] for r in s.rows),
            running=sorted(s.running),
            not_run=sorted(u for u in s.units if u not in ran and u not in s.running),
            updated=s.doc.get("updated"),
            notices=[str(n) for n in s.doc.get("notices") or []]))
    # the accept entries of every shard, recounted over the whole job
    entries: dict[tuple[str, int], dict[str, Any]] = {}
    for s in shards:
        for row in [*(s.doc.get("accepted") or []), *(s.doc.get("stale_accepts") or [])]:
            if isinstance(row, dict) and {"api", "index", "path", "why"} <= set(row):
                entry = {k: v for k, v in row.items() if k not in ("count", "units")}
                entries[(str(row["api"]), int(row["index"]))] = entry
    accept = [entries[k] for k in sorted(entries)]
    accepted, stale = accept_summary(accept, results)
    summary_all: dict[str, int] = {str(status): 0 for status in Status}
    for result in results:
        summary_all[str(result.status)] += 1
    not_run = [u.id for u in planned if u.id not in done]
    why, lost = _why_not_run(lines, not_run, attributed=bool(owners))
    for s, reason in aside:
        lost.append(f"{s.path} set aside: {reason}")
    states = {line.state for line in lines}
    broken = states & {ShardState.MISSING, ShardState.DIED, ShardState.INCOMPLETE}
    if any(r.status is Status.FAILED for r in results):
        code, status = EXIT_FAILED, "failed"
    elif any(r.status is Status.ERROR for r in results):
        code, status = EXIT_USAGE, "error"
    elif broken or (not_run and ShardState.INTERRUPTED not in states):
        code, status = EXIT_USAGE, "incomplete"
    elif ShardState.INTERRUPTED in states:
        code, status = EXIT_INTERRUPTED, "interrupted"
    else:
        code, status = EXIT_OK, "passed"
    docs = [s.doc for s in shards]
    reasons = {str(d.get("stop_reason")) for d in docs}
    stop = ("interrupted" if "interrupted" in reasons or ShardState.INTERRUPTED in states
            else None if broken & {ShardState.MISSING, ShardState.DIED}
            else "duration" if "duration" in reasons else "completed")
    nights = sorted({s.night for s in shards if s.night is not None})
    sampled = {canonical_json(x): x for d in docs for x in d.get("sampled") or []}
    from compatfuzz import __version__

    doc: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "compatfuzz": __version__,
        "started": min((str(d["started"]) for d in docs if d.get("started")), default=None),
        "updated": max((str(d["updated"]) for d in docs if d.get("updated")), default=None),
        "seed": None,
        "profile": _common(d.get("profile") for d in docs),
        "max_examples": _common(d.get("max_examples") for d in docs),
        "duration": _common(d.get("duration") for d in docs),
        "workers": sum(int(d.get("workers") or 1) for d in docs),
        "database": _common(d.get("database") for d in docs),
        "sampled": [sampled[k] for k in sorted(sampled)],
        "status": status,
        "stop_reason": stop,
        "seconds": max((float(d.get("seconds") or 0) for d in docs), default=0.0),
        "summary": summary_all,
        "units": units_json,
        "running": [],
        "not_run": not_run,
        "notices": [*lost, *(f"shard {s.label}: {n}" for s in shards
                             for n in s.doc.get("notices") or [])],
        "accepted": accepted,
        "stale_accepts": stale,
        "merge": {
            "count": count,
            "nights": nights,
            "config_digest": shards[0].config_digest,
            "job_units": list(job_units),
            "owners": dict(owners),
            "exit_code": code,
            "shards": [line.to_json() for line in lines],
            "failures": failures,
            "set_aside": [{"file": s.path, "why": reason} for s, reason in aside],
        },
    }
    return Merged(doc, planned, results, accept, files, why, lines, failures, code,
                  [(s.path, reason) for s, reason in aside])
