"""Shard reports for the merge tests (issue 21), until ``fuzz --shard`` writes them itself:
a real ``compatfuzz fuzz --report`` document with the ``"shard"`` object of the contract
added (``number``, ``count``, ``night``, ``seed``, ``job_units``, ``units``, ``copies``,
``replayed``, ``config_digest``)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def digest(job_units: Iterable[str], sources: Mapping[str, str] | None = None) -> str:
    """The ``config_digest`` of a job: sha256 of the canonical JSON of its unit ids and
    its API sources' content digests (the contract's definition)."""
    doc = {"units": sorted(job_units), "sources": dict(sorted((sources or {}).items()))}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def as_shard(report: Mapping[str, Any], number: int, count: int, job_units: Iterable[str],
             *, units: Iterable[str] | None = None, night: str = "2026-11-26",
             seed: int | None = None, copies: Mapping[str, int] | None = None,
             replayed: Iterable[str] = (), config_digest: str | None = None
             ) -> dict[str, Any]:
    """``report`` with its ``"shard"`` object: shard ``number``/``count`` of a job that
    planned ``job_units``, owning ``units`` (default: every unit the report lists)."""
    doc = copy.deepcopy(dict(report))
    job = list(job_units)  # in the order the job planned them, as the runner writes them
    if units is None:
        units = ([r["id"] for r in doc.get("units", [])]
                 + [r["id"] for r in doc.get("running", [])] + list(doc.get("not_run", [])))
    doc["shard"] = {"number": number, "count": count, "night": night,
                    "seed": seed if seed is not None else 1000 + number,
                    "job_units": job, "units": sorted(set(units) - set(replayed)),
                    "copies": dict(copies or {}), "replayed": sorted(replayed),
                    "config_digest": config_digest or digest(job)}
    return doc


def write(path: Path, doc: Mapping[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path
