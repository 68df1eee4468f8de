"""Event consumers that write files: the JSON report, counterexample files, JUnit XML and
the HTML page (rendered by ``_html`` from the same document as the JSON report).

The report and the JUnit file are rewritten atomically (temp file + rename) when a unit
starts or ends, so a run killed at any point, even by SIGKILL, leaves complete, parseable
files saying how far it got: finished units, units still running, and units that never
ran (JUnit lists those as skipped).  Each rewrite costs time in the units finished so
far, so routine events (a unit started or passed) rewrite at most once per
``min_interval`` second, a timer catching up the last one; the start, a failure or error,
a notice and the end rewrite at once (3,360 units were quadratic).
A counterexample is on disk the moment it is found, before shrinking (``"shrunk": false``),
and is replaced by the minimal one when its unit ends. Files get the usual
permissions (``0666`` less the umask), not the ``0600`` of a bare ``mkstemp``.

What they hold is bounded and safe: a text field or a value
longer than the limits of ``_text`` is cut, with a note naming the counterexample file,
which alone keeps the full text; the JUnit file escapes every character XML 1.0 forbids,
so it is always well-formed; and a write that fails mid-run (disk full, folder removed)
is reported once through ``on_error`` and never ends the run.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import shlex
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from compatfuzz.roundtrip._check._accept import accept_summary, describe
from compatfuzz.roundtrip._events import (
    Counterexample,
    Event,
    Notice,
    RunFinished,
    RunStarted,
    Status,
    Unit,
    UnitFinished,
    UnitResult,
    UnitStarted,
)
from compatfuzz.roundtrip._reports._bounds import _bounded_value, bounded_counterexample
from compatfuzz.roundtrip._reports._migrations import migration_summary
from compatfuzz.roundtrip._text import (
    REPORT_TEXT_LIMIT,
    clip,
    human_size,
    xml_safe,
)

__all__ = [
    "ReportWriter",
    "atomic_write",
    "bounded_counterexample",
    "counterexample_filename",
    "write_junit",
]


def _umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no way to read it but to set it: put it straight back
    os.umask(mask)
    return mask


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old or the new file, never half.

    The file gets ``0666`` less the umask, as ``open()`` would create it (``mkstemp``
    alone makes it ``0600``, unreadable to the CI user that collects reports).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        # backslashreplace: a lone surrogate from user code must not lose the whole file
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def counterexample_filename(cx: Counterexample) -> str:
    raw = f"{cx.unit.api}__{cx.unit.kind}__{cx.unit.property}__{'_'.join(cx.unit.versions)}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw) + ".json"


def _finite(value: Any) -> Any:
    """``value`` with each NaN or infinity as its name (``"NaN"``, ``"Infinity"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def strict_json(doc: Any, **kw: Any) -> str:
    """``doc`` as standard JSON: a NaN or infinity (a converter's or a user model's float)
    is written as a string, never as the bare ``NaN`` that JSON parsers refuse."""
    try:
        return json.dumps(doc, allow_nan=False, **kw)
    except ValueError:
        return json.dumps(_finite(doc), allow_nan=False, default=str, **kw)


def _bounded_row(result: UnitResult, full: str | None) -> dict[str, Any]:
    """``result.to_json()`` cut to the report limits (the counterexample file keeps all)."""
    row = result.to_json()
    if len(row["message"]) > REPORT_TEXT_LIMIT:
        row["message"] = clip(row["message"], REPORT_TEXT_LIMIT, full)
    if row["counterexample"] is not None:
        row["counterexample"] = bounded_counterexample(row["counterexample"], full)
    return row


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


class ReportWriter:
    """Consumes events; keeps ``report`` (JSON), ``junit`` (XML) and the counterexample
    folder up to date.  :meth:`found` takes the runner's ``on_failure`` callbacks."""

    def __init__(self, report: Path | None, counterexamples: Path,
                 junit: Path | None = None, html: Path | None = None, *,
                 on_error: Callable[[Path, OSError], None] | None = None,
                 min_interval: float = 1.0, clock: Any = time.monotonic) -> None:
        self.report = report
        self.junit = junit
        self.html = html
        self.counterexamples = counterexamples
        self.doc: dict[str, Any] = {}
        self.results: list[UnitResult] = []
        self.files: dict[str, str] = {}
        self.planned: list[Unit] = []
        self.running: dict[str, dict[str, Any]] = {}
        self.notices: list[str] = []
        self.accept: tuple[dict[str, Any], ...] = ()
        self.migrations: tuple[dict[str, Any], ...] = ()
        #: called once per file that could not be written (disk full, read-only)
        self.on_error = on_error
        #: path -> the error of its last failed write; cleared when a write succeeds
        self.failed_writes: dict[str, str] = {}
        self._rows: dict[str, dict[str, Any]] = {}
        self.min_interval = min_interval
        self._clock = clock
        self._written = float("-inf")
        self._timer: threading.Timer | None = None
        self._lock = threading.RLock()

    def _write(self, path: Path, text: Callable[[], str]) -> bool:
        """Write ``text()`` to ``path``; on ``OSError`` note it (once) and go on: a full
        disk must not end a run that is finding failures."""
        try:
            atomic_write(path, text())
        except OSError as exc:
            if str(path) not in self.failed_writes and self.on_error is not None:
                self.on_error(path, exc)
            self.failed_writes[str(path)] = f"{type(exc).__name__}: {exc}"
            return False
        self.failed_writes.pop(str(path), None)
        return True

    def _soon(self) -> None:
        """Rewrite now if the last rewrite is ``min_interval`` old, else once it is."""
        with self._lock:
            wait = self._written + self.min_interval - self._clock()
            if wait <= 0:
                self.flush()
            elif self._timer is None:
                self._timer = threading.Timer(wait, self._catch_up)
                self._timer.daemon = True
                self._timer.start()

    def _catch_up(self) -> None:
        with self._lock:
            if self._timer is not None:
                self.flush()

    def handle(self, event: Event) -> None:
        with self._lock:
            self._handle(event)

    def _handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            from compatfuzz import __version__

            self.planned = list(event.units)
            self.accept = event.accept
            self.migrations = event.migrations
            self.doc = {
                "format": "compatfuzz-report/1",
                "compatfuzz": __version__,
                "started": _now(),
                "pid": os.getpid(),
                "seed": event.seed,
                "profile": event.profile,
                "max_examples": event.max_examples,
                "duration": event.duration,
                "workers": event.workers,
                "database": event.database,
                "sampled": list(event.sampled),
                "status": "running",
                "stop_reason": None,
            }
            if event.shard is not None:  # the contract `report merge` reads
                self.doc["shard"] = event.shard
            self.flush()
        elif isinstance(event, UnitStarted):
            self.running[event.unit.id] = {"id": event.unit.id, "started": _now()}
            self._soon()
        elif isinstance(event, UnitFinished):
            result = event.result
            self.running.pop(result.unit.id, None)
            self.results.append(result)
            if result.counterexample is not None:
                self._write_counterexample(result.counterexample)
            elif result.unit.id in self.files:
                # a failure found and then not confirmed (flaky): drop the provisional file
                Path(self.files.pop(result.unit.id)).unlink(missing_ok=True)
            if result.status in (Status.PASSED, Status.SKIPPED):
                self._soon()
            else:
                self.flush()
        elif isinstance(event, Notice):
            self.notices.append(event.message)
            self.flush()
        elif isinstance(event, RunFinished):
            self.doc["stop_reason"] = str(event.stop_reason)
            self.doc["seconds"] = round(event.seconds, 3)
            # the run's verdict, as the exit code gives it: "passed" only when every
            # planned unit ran and held (a --duration run that left units, or an
            # interrupted one, said "passed" before)
            status = str(event.status)
            ran = {r.unit.id for r in event.results}
            if status == "passed" and str(event.stop_reason) == "interrupted":
                status = "interrupted"
            elif status == "passed" and any(u.id not in ran for u in self.planned):
                status = "incomplete"
            self.doc["status"] = status
            self.flush()

    def found(self, cx: Counterexample) -> None:
        """A failure found mid-unit: on disk now (not yet minimal), noted in the report."""
        with self._lock:
            path = self._write_counterexample(cx)
            entry = self.running.setdefault(cx.unit.id, {"id": cx.unit.id, "started": None})
            entry.update({"status": "failing, shrinking", "counterexample_file": path})
            self.flush()

    def _write_counterexample(self, cx: Counterexample) -> str | None:
        path = self.counterexamples / counterexample_filename(cx)
        doc = cx.to_json()
        # with its config: a replay never loads the config its file names
        doc["replay"] = (f"compatfuzz fuzz --replay {shlex.quote(str(path))}"
                         + (f" --config {shlex.quote(cx.config)}" if cx.config else ""))
        if not self._write(path, lambda: strict_json(doc, indent=2) + "\n"):
            return None
        self.files[cx.unit.id] = str(path)
        return str(path)

    def interrupted(self) -> None:
        """Mark the report as cut short (the run ended without ``RunFinished``)."""
        with self._lock:
            self.doc["status"] = "interrupted"
            self.doc["stop_reason"] = "interrupted"
            self.flush()

    def flush(self) -> None:
        """Rewrite the report, JUnit and HTML files now."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._written = self._clock()
            self._flush()

    def _flush(self) -> None:
        self.doc["updated"] = _now()
        units = []
        for r in self.results:
            row = self._rows.get(r.unit.id)
            if row is None:  # bounded once: a result never changes
                row = self._rows[r.unit.id] = _bounded_row(r, self.files.get(r.unit.id))
                if r.unit.id in self.files:
                    row["counterexample_file"] = self.files[r.unit.id]
            units.append(row)
        done = {r.unit.id for r in self.results}
        summary: dict[str, int] = {str(s): 0 for s in Status}
        for r in self.results:
            summary[str(r.status)] += 1
        accepted, stale = accept_summary(self.accept, self.results)
        doc = {**self.doc, "summary": summary, "units": units,
               "running": list(self.running.values()),
               "not_run": [u.id for u in self.planned
                           if u.id not in done and u.id not in self.running],
               "notices": self.notices, "accepted": accepted, "stale_accepts": stale}
        if self.migrations:
            doc["migrations"] = migration_summary(self.migrations, self.results)
        if self.report is not None:
            self._write(self.report, lambda: strict_json(doc, indent=2) + "\n")
        if self.html is not None and self.doc:
            from compatfuzz.roundtrip._reports._html import render_html

            html = self.html
            self._write(html, lambda: render_html(doc, self.planned))
        if self.junit is not None and self.doc:
            self._write(self.junit, lambda: junit_xml(
                self.results, planned=self.planned, running=set(self.running),
                accept=self.accept, files=self.files))


def write_junit(path: Path, results: list[UnitResult], *,
                planned: Sequence[Unit] = (), running: Iterable[str] = (),
                accept: Sequence[dict[str, Any]] = (),
                files: dict[str, str] | None = None,
                not_run: Mapping[str, str] | None = None) -> None:
    """Write :func:`junit_xml` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, junit_xml(results, planned=planned, running=running, accept=accept,
                                 files=files, not_run=not_run))


def _message(text: str) -> str:
    """A JUnit ``message`` attribute: the first line, at most 1,000 characters."""
    first = text.split("\n", 1)[0]
    return first if len(first) <= 1000 else (
        f"{first[:1000]} ... {human_size(len(first) - 1000)} more")


def junit_xml(results: Sequence[UnitResult], *,
              planned: Sequence[Unit] = (), running: Iterable[str] = (),
              accept: Sequence[dict[str, Any]] = (),
              files: dict[str, str] | None = None,
              not_run: Mapping[str, str] | None = None) -> str:
    """JUnit XML: one testsuite per API, one testcase per unit.

    Units of ``planned`` without a result are listed as skipped, saying whether they were
    running or had not started when the file was written (so a killed run's file still
    accounts for every unit), or what ``not_run`` says for them (``report merge``: the
    shard that lost them). A unit in which accept entries accepted differences has an
    ``accepted`` property per entry; a stale entry is a ``stale_accept`` property of its
    API's testsuite.  A failure's text is cut to ``REPORT_TEXT_LIMIT`` characters with a
    note naming its counterexample file (in ``files``, by unit id), and every character
    XML 1.0 forbids is escaped (``\x1b``), so the file is always well-formed.
    """
    files = files or {}
    _, stale = accept_summary(accept, results)
    by_entry = {(a["api"], a["index"]): a for a in accept}
    root = ET.Element("testsuites", name="compatfuzz")
    suites: dict[str, ET.Element] = {}

    def suite_for(api: str) -> ET.Element:
        if api not in suites:
            suites[api] = ET.SubElement(root, "testsuite", name=api)
        return suites[api]

    for unit in planned:  # file order = plan order, whatever order units finished in
        suite_for(unit.api)
    for r in results:
        suite = suite_for(r.unit.api)
        case = ET.SubElement(suite, "testcase", classname=r.unit.api, name=r.unit.name,
                             time=f"{r.seconds:.3f}")
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="examples", value=str(r.examples))
        if r.coverage:
            c = r.coverage
            for name, value in (("leaf_paths", c["leaf_paths"]),
                                ("leaf_path_coverage", f"{c['ratio']:.4f}"),
                                ("edge_classes", " ".join(c["edge_classes"])),
                                ("edge_classes_missing", " ".join(c["missing_edge_classes"]))):
                ET.SubElement(props, "property", name=name, value=str(value))
        for index, count in r.accepted:
            entry = by_entry.get((r.unit.api, index))
            if entry is not None:
                ET.SubElement(props, "property", name="accepted",
                              value=f"{entry['path']}: {count} examples; why: {entry['why']}")
        if r.status is Status.FAILED:
            cx = r.counterexample
            full = files.get(r.unit.id)
            body = clip(r.message, REPORT_TEXT_LIMIT, full)
            if cx is not None:
                obj, clipped = _bounded_value(cx.object, full)
                body = (f"{clip(cx.error, REPORT_TEXT_LIMIT, full)}\n\ncounterexample: "
                        + (obj if clipped else json.dumps(cx.object, default=str)))
                if cx.seed is not None:
                    body += f"\nseed: {cx.seed}"
            ET.SubElement(case, "failure", message=_message(cx.error if cx else
                                                             r.message)).text = body
        elif r.status is Status.ERROR:
            ET.SubElement(case, "error", message=_message(r.message)).text = clip(
                r.message, REPORT_TEXT_LIMIT)
        elif r.status in (Status.SKIPPED, Status.INTERRUPTED):
            ET.SubElement(case, "skipped", message=r.message or str(r.status))
    done = {r.unit.id for r in results}
    busy = set(running)
    for unit in planned:
        if unit.id in done:
            continue
        case = ET.SubElement(suite_for(unit.api), "testcase", classname=unit.api,
                             name=unit.name, time="0.000")
        ET.SubElement(case, "skipped", message=(not_run or {}).get(unit.id) or (
            "was still running when this file was written" if unit.id in busy else
            "did not run: the run ended (or this file was written) before it started"))
    for row in stale:
        suite = suite_for(row["api"])
        found = suite.find("properties")
        if found is None:
            found = ET.Element("properties")
            suite.insert(0, found)
        ET.SubElement(found, "property", name="stale_accept", value=(
            f"{describe(row)} accepted nothing in {len(row['units'])} units; why: "
            f"{row['why']}"))
    for suite in suites.values():
        cases = [c for c in suite if c.tag == "testcase"]
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    for element in root.iter():  # ANSI colours in an exception must not break the file
        if element.text:
            element.text = xml_safe(element.text)
        for key, value in element.attrib.items():
            element.set(key, xml_safe(value))
    return ET.tostring(root, encoding="unicode") + "\n"
