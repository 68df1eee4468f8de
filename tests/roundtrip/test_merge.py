"""Merging shard reports (roundtrip/_reports/_merge.py, issue 21, item 3) as properties.

The shard reports are written by the real report writer (``_report.ReportWriter``) from
the runner's events, each shard running its part of the job as ``_shard.split`` gives it,
then given the ``"shard"`` object of the contract; some shards die (no ``RunFinished``:
their report still says ``running``), some are missing, some units run on two shards.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.roundtrip import (
    Counterexample,
    Property,
    RunFinished,
    RunStarted,
    Status,
    StopReason,
    Unit,
    UnitFinished,
    UnitResult,
    UnitStarted,
)
from compatfuzz.roundtrip._engine._shard import Shard, split
from compatfuzz.roundtrip._reports._merge import (
    EXIT_FAILED,
    EXIT_OK,
    canonical_json,
    merge_reports,
    parse_report,
    simpler_key,
)
from compatfuzz.roundtrip._reports._report import ReportWriter
from tests.roundtrip._shards import as_shard

UNITS = [Unit("t", "T", p, vs) for p, vs in itertools.product(
    (Property.ROUNDTRIP, Property.VALID), (("v1", "v2"), ("v2", "v1"), ("v1", "v3")))]
OBJECTS = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text("ab", max_size=3),
                       lambda kids: st.lists(kids, max_size=2)
                       | st.dictionaries(st.text("ab", max_size=2), kids, max_size=2),
                       max_leaves=4)


@st.composite
def runs(draw: Any, unit: Unit) -> UnitResult:
    """One run of ``unit`` on one shard, as the runner reports it."""
    status = draw(st.sampled_from([Status.PASSED, Status.PASSED, Status.FAILED,
                                   Status.FAILED, Status.ERROR, Status.SKIPPED]))
    cx = None
    if status is Status.FAILED:
        cx = Counterexample(unit, draw(OBJECTS), "lost a field", "AssertionError",
                            seed=draw(st.integers(0, 9)))
    return UnitResult(unit, status, draw(st.integers(0, 500)),
                      draw(st.floats(0, 10, allow_nan=False)), counterexample=cx,
                      message="boom" if status is Status.ERROR else "")


def shard_doc(folder: Path, shard: Shard, mine: list[Unit], results: list[UnitResult],
              *, dies: bool) -> dict[str, Any]:
    """The report the real writer leaves for a shard that ran ``results`` of ``mine``
    (and died after them, leaving the rest running or unstarted, when ``dies``)."""
    report = folder / f"shard-{shard.number}.json"
    writer = ReportWriter(report, folder / f"cx-{shard.number}", min_interval=0)
    writer.handle(RunStarted(tuple(mine), None, "default", 100, None, 1, "none"))
    for result in results:
        writer.handle(UnitStarted(result.unit))
        writer.handle(UnitFinished(result))
    left = [u for u in mine if u not in {r.unit for r in results}]
    if dies and left:
        writer.handle(UnitStarted(left[0]))
    elif not dies:
        writer.handle(RunFinished(StopReason.COMPLETED, tuple(results), 1.0))
    return json.loads(report.read_text())  # type: ignore[no-any-return]


@st.composite
def jobs(draw: Any) -> list[dict[str, Any]]:
    """The reports of one job's shards: some missing, some dead, some units run twice."""
    units = draw(st.lists(st.sampled_from(UNITS), min_size=1, unique=True))
    count = draw(st.integers(1, 4))
    job = [u.id for u in units]  # the order the job planned them in
    docs = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(1, count + 1):
            shard = Shard(number, count)
            owned = split(units, shard, key=lambda u: u.id)
            mine = [u for u, _ in owned]
            replays = draw(st.lists(st.sampled_from(units), unique=True, max_size=3))
            replays = [u for u in replays if u not in mine]
            if count > 1 and draw(st.integers(0, 3)) == 0:
                continue  # missing
            dies = draw(st.integers(0, 4)) == 0
            ran = mine[:draw(st.integers(0, len(mine)))] if dies else mine
            results = [draw(runs(u)) for u in [*ran, *replays]]
            doc = shard_doc(Path(tmp), shard, [*mine, *replays], results, dies=dies)
            docs.append(as_shard(doc, number, count, job, units=[u.id for u in mine],
                                 copies={u.id: c for u, c in owned if c},
                                 replayed=[u.id for u in replays]))
    if not docs:
        docs.append(as_shard(shard_doc(Path(tempfile.gettempdir()), Shard(1, count), [], [],
                                       dies=False), 1, count, job, units=[]))
    return docs


def merged(docs: list[dict[str, Any]]) -> dict[str, Any]:
    shards = [parse_report(d, f"shard-{d['shard']['number']}.json") for d in docs]
    return merge_reports(shards).doc


@settings(max_examples=60, deadline=None)
@given(jobs(), st.randoms())
def test_merge_is_order_independent_and_idempotent(docs: list[dict[str, Any]], rnd: Any) -> None:
    once = merged(docs)
    shuffled = docs[:]
    rnd.shuffle(shuffled)
    assert merged(shuffled) == once
    # a report passed twice (a glob that matched a copy) counts once
    assert merged([*docs, rnd.choice(docs)]) == once


@settings(max_examples=80, deadline=None)
@given(jobs())
def test_every_unit_once_verdicts_and_exit_code(docs: list[dict[str, Any]]) -> None:
    doc = merged(docs)
    job = docs[0]["shard"]["job_units"]
    count = docs[0]["shard"]["count"]
    ids = [row["id"] for row in doc["units"]]
    assert sorted(ids + doc["not_run"]) == sorted(job)  # every unit exactly once
    assert ids == [u for u in job if u in set(ids)]  # in the job's order, as a run lists them
    runs_of: dict[str, list[dict[str, Any]]] = {}
    for d in docs:
        for row in d["units"]:
            runs_of.setdefault(row["id"], []).append(row)
    assert set(runs_of) == set(ids)
    for row in doc["units"]:
        rows = runs_of[row["id"]]
        assert row["examples"] == sum(r["examples"] for r in rows)
        failed = [r for r in rows if r["status"] == "failed"]
        assert (row["status"] == "failed") == bool(failed)
        if failed:  # the simplest counterexample of any shard is kept
            best = min(simpler_key(r["counterexample"]["object"]) for r in failed)
            assert simpler_key(row["counterexample"]["object"]) == best
        else:  # a skipped run (a replay with nothing left) never outranks a real one
            ran = [Status(r["status"]) for r in rows if r["status"] != "skipped"]
            assert row["status"] == (max(ran) if ran else "skipped")
    numbers = {d["shard"]["number"] for d in docs}
    finished = all(d["status"] not in ("running", "interrupted") and not d["not_run"]
                   and not d["running"] for d in docs)
    code = doc["merge"]["exit_code"]
    assert (code == EXIT_FAILED) == any(r["status"] == "failed" for r in doc["units"])
    # 0 only when every shard reported, finished, and every unit ran and held
    assert (code == EXIT_OK) == (len(numbers) == count and finished and not doc["not_run"]
                                 and all(r["status"] in ("passed", "skipped")
                                         for r in doc["units"]))
    # a line per shard, or per run of missing shards with nothing to say ("last")
    states = {n: s["state"] for s in doc["merge"]["shards"]
              for n in range(s["number"], (s.get("last") or s["number"]) + 1)}
    assert sorted(states) == list(range(1, count + 1))
    assert {n for n, s in states.items() if s == "missing"} == set(range(1, count + 1)) - numbers
    for d in docs:
        if d["status"] == "running":
            assert states[d["shard"]["number"]] == "died"
    # failures: one per failed unit, each naming the shards whose counterexample it is
    failures = doc["merge"]["failures"]
    assert [f["id"] for f in failures] == [r["id"] for r in doc["units"] if r["status"] == "failed"]
    for f in failures:
        same = {d["shard"]["number"] for d in docs for r in d["units"]
                if r["id"] == f["id"] and r["status"] == "failed"
                and canonical_json(r["counterexample"]["object"]) == canonical_json(f["object"])}
        assert set(f["found_by"]) == same


def test_simpler_is_shortlex_on_canonical_json() -> None:
    objects = [{"b": 1, "a": [1, 2]}, {"a": 0}, {"a": 1}, {"aa": 0}, [], {"z": None}]
    ranked = sorted(objects, key=simpler_key)
    assert ranked[:3] == [[], {"a": 0}, {"a": 1}]  # shorter first, then lexicographic
    assert simpler_key({"b": 1, "a": 2}) == simpler_key({"a": 2, "b": 1})  # key order is no size


def _interrupted(folder: Path, shard: Shard, mine: list[Unit], done: list[UnitResult]
                 ) -> dict[str, Any]:
    """The report of a shard stopped by SIGTERM after ``done``: what ``fuzz`` writes."""
    writer = ReportWriter(folder / f"shard-{shard.number}.json", folder / "cx", min_interval=0)
    writer.handle(RunStarted(tuple(mine), None, "default", 100, None, 1, "none"))
    for result in done:
        writer.handle(UnitFinished(result))
    writer.interrupted()
    return json.loads((folder / f"shard-{shard.number}.json").read_text())  # type: ignore[no-any-return]


def test_interrupted_shard_exits_130_unless_a_shard_is_missing(tmp_path: Path) -> None:
    units = UNITS[:4]
    job = sorted(u.id for u in units)
    docs = []
    for number in (1, 2):
        shard = Shard(number, 2)
        mine = [u for u, _ in split(units, shard, key=lambda u: u.id)]
        passed = [UnitResult(u, Status.PASSED, 10, 0.1) for u in mine]
        doc = (shard_doc(tmp_path, shard, mine, passed, dies=False) if number == 1 else
               _interrupted(tmp_path, shard, mine, passed[:1]))
        docs.append(as_shard(doc, number, 2, job, units=[u.id for u in mine]))
    both = merged(docs)
    assert both["merge"]["exit_code"] == 130 and both["status"] == "interrupted"
    assert [s["state"] for s in both["merge"]["shards"]] == ["finished", "interrupted"]
    assert both["not_run"] == docs[1]["not_run"] != []
    alone = merged(docs[1:])  # shard 1/2 lost as well: the job is incomplete, not stopped
    assert alone["merge"]["exit_code"] == 2 and alone["status"] == "incomplete"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=3)
                    | st.dictionaries(st.text(max_size=5), kids, max_size=3), max_leaves=6)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


@settings(max_examples=150, deadline=None)
@given(jobs(), st.data())
def test_a_corrupted_report_is_an_error_naming_it_never_a_traceback(
        docs: list[dict[str, Any]], data: Any) -> None:
    """Any one value of any report replaced by any JSON: either a SchemaLoadError naming
    the file, or a merged report the JUnit and HTML writers render."""
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.roundtrip._reports._html import render_html
    from compatfuzz.roundtrip._reports._report import junit_xml

    index = data.draw(st.integers(0, len(docs) - 1))
    target = data.draw(st.sampled_from(_paths(docs[index])))
    value = data.draw(JSON)
    if target:
        parent = docs[index]
        for step in target[:-1]:
            parent = parent[step]
        parent[target[-1]] = value
    else:
        docs[index] = value
    try:
        shards = [parse_report(d, f"shard-{i}.json") for i, d in enumerate(docs)]
        result = merge_reports(shards)
    except SchemaLoadError as exc:
        assert "shard-" in str(exc) or "<command line>" in str(exc)
        return
    render_html(result.doc, result.planned)
    junit_xml(result.results, planned=result.planned, accept=result.accept, files=result.files)
    json.dumps(result.doc)
