"""Event consumers that write files: the JSON report, counterexample files, JUnit XML.

The report is rewritten atomically (temp file + rename) after every finished unit, so a
run killed at any point leaves a complete, parseable report of what it finished, and
each counterexample is on disk the moment its unit ends.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from compatfuzz.roundtrip._events import (
    Counterexample,
    Event,
    RunFinished,
    RunStarted,
    Status,
    UnitFinished,
    UnitResult,
)

__all__ = ["ReportWriter", "atomic_write", "counterexample_filename", "write_junit"]


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def counterexample_filename(cx: Counterexample) -> str:
    raw = f"{cx.unit.api}__{cx.unit.kind}__{cx.unit.property}__{'_'.join(cx.unit.versions)}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw) + ".json"


class ReportWriter:
    """Consumes events; keeps ``report`` (JSON) and the counterexample folder up to date."""

    def __init__(self, report: Path | None, counterexamples: Path) -> None:
        self.report = report
        self.counterexamples = counterexamples
        self.doc: dict[str, Any] = {}
        self.results: list[UnitResult] = []
        self.files: dict[str, str] = {}

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            from compatfuzz import __version__

            self.doc = {
                "format": "compatfuzz-report/1",
                "compatfuzz": __version__,
                "started": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "seed": event.seed,
                "profile": event.profile,
                "max_examples": event.max_examples,
                "duration": event.duration,
                "workers": event.workers,
                "database": event.database,
                "status": "running",
                "stop_reason": None,
                "planned": [u.id for u in event.units],
            }
            self.flush()
        elif isinstance(event, UnitFinished):
            result = event.result
            self.results.append(result)
            if result.counterexample is not None:
                path = self.counterexamples / counterexample_filename(result.counterexample)
                doc = result.counterexample.to_json()
                doc["replay"] = f"compatfuzz fuzz --replay {path}"
                atomic_write(path, json.dumps(doc, indent=2, sort_keys=False) + "\n")
                self.files[result.unit.id] = str(path)
            self.flush()
        elif isinstance(event, RunFinished):
            self.doc["stop_reason"] = str(event.stop_reason)
            self.doc["seconds"] = round(event.seconds, 3)
            self.doc["status"] = str(event.status)
            self.flush()

    def interrupted(self) -> None:
        """Mark the report as cut short (the run ended without ``RunFinished``)."""
        self.doc["status"] = "interrupted"
        self.doc["stop_reason"] = "interrupted"
        self.flush()

    def flush(self) -> None:
        units = []
        for r in self.results:
            row = r.to_json()
            if r.unit.id in self.files:
                row["counterexample_file"] = self.files[r.unit.id]
            units.append(row)
        done = {r.unit.id for r in self.results}
        summary: dict[str, int] = {str(s): 0 for s in Status}
        for r in self.results:
            summary[str(r.status)] += 1
        doc = {**self.doc, "summary": summary, "units": units,
               "not_run": [u for u in self.doc.get("planned", []) if u not in done]}
        doc.pop("planned", None)
        if self.report is not None:
            atomic_write(self.report, json.dumps(doc, indent=2) + "\n")


def write_junit(path: Path, results: list[UnitResult]) -> None:
    """Write JUnit XML: one testsuite per API, one testcase per unit."""
    root = ET.Element("testsuites", name="compatfuzz")
    suites: dict[str, ET.Element] = {}
    for r in results:
        suite = suites.get(r.unit.api)
        if suite is None:
            suite = suites[r.unit.api] = ET.SubElement(root, "testsuite", name=r.unit.api)
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
        if r.status is Status.FAILED:
            cx = r.counterexample
            body = r.message
            if cx is not None:
                body = f"{cx.error}\n\ncounterexample: {json.dumps(cx.object)}"
                if cx.seed is not None:
                    body += f"\nseed: {cx.seed}"
            ET.SubElement(case, "failure", message=(cx.error.split("\n")[0] if cx else
                                                    r.message)).text = body
        elif r.status is Status.ERROR:
            ET.SubElement(case, "error", message=r.message.split("\n")[0]).text = r.message
        elif r.status in (Status.SKIPPED, Status.INTERRUPTED):
            ET.SubElement(case, "skipped", message=r.message or str(r.status))
    for suite in suites.values():
        cases = list(suite)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, ET.tostring(root, encoding="unicode") + "\n")
