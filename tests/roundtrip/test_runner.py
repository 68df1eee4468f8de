"""The engine: event stream, interruption, shared example databases, workers, Redis."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase, InMemoryExampleDatabase

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip import (
    API,
    RunFinished,
    RunStarted,
    Status,
    StopReason,
    UnitFinished,
    UnitResult,
    UnitStarted,
    namespaced,
    run,
)

GROUP = "tiny.example.com"
SCHEMA = {"type": "object", "properties": {
    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
    "spec": {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 1000},
        "tags": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 3}},
    }}}}


def tiny(lossy: bool = False, on_call: Any = None) -> API:
    """Two-version API; the lossy converter drops ``n`` above 10 on the way to v2."""

    def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        if on_call is not None:
            on_call(obj)
        out = {**obj, "apiVersion": desired, "spec": dict(obj.get("spec") or {})}
        if "spec" not in obj:
            del out["spec"]
        elif lossy and desired.endswith("/v2") and out["spec"].get("n", 0) > 10:
            del out["spec"]["n"]
        return out

    return API.from_schemas("tiny", {"v1": SCHEMA, "v2": SCHEMA}, kind="Tiny", group=GROUP,
                            convert=convert)


def finished(events: Iterator[Any]) -> dict[str, UnitResult]:
    return {e.result.unit.id: e.result for e in events if isinstance(e, UnitFinished)}


def test_event_stream_is_well_formed() -> None:
    events = list(run(tiny(lossy=True), database="none", seed=3, max_examples=30))
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    started = [e.unit for e in events if isinstance(e, UnitStarted)]
    done = [e.result.unit for e in events if isinstance(e, UnitFinished)]
    assert started == done == list(events[0].units)
    for i, e in enumerate(events):  # every unit finishes right after it starts (serial)
        if isinstance(e, UnitStarted):
            assert isinstance(events[i + 1], UnitFinished) and events[i + 1].result.unit == e.unit
    final = events[-1]
    assert final.stop_reason is StopReason.COMPLETED
    assert final.status is Status.FAILED
    statuses = {r.unit.id: r.status for r in final.results}
    assert statuses["tiny::roundtrip[v1->v2]"] is Status.FAILED
    assert statuses["tiny::valid[v1->v2]"] is Status.PASSED
    assert all(r.examples <= 30 or r.status is Status.FAILED for r in final.results)


def test_seeded_runs_are_exact_replays() -> None:
    a, b = (finished(run(tiny(lossy=True), database="none", seed=11)) for _ in range(2))
    key = "tiny::roundtrip[v1->v2]"
    assert a[key].counterexample is not None and b[key].counterexample is not None
    assert a[key].counterexample.object == b[key].counterexample.object
    assert [r.examples for r in a.values()] == [r.examples for r in b.values()]
    assert a[key].counterexample.object["spec"] == {"n": 11}  # shrunk to the boundary


def test_stop_event_ends_the_run_and_keeps_what_was_found() -> None:
    stop = threading.Event()
    calls = {"n": 0}

    def on_call(obj: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 40:
            stop.set()

    events = list(run(tiny(on_call=on_call), database="none", seed=1, stop=stop))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.stop_reason is StopReason.INTERRUPTED
    assert final.results[-1].status is Status.INTERRUPTED
    assert len(final.results) < len(events[0].units)


def test_interrupt_while_shrinking_keeps_the_counterexample() -> None:
    stop = threading.Event()

    def on_call(obj: dict[str, Any]) -> None:
        if (obj.get("spec") or {}).get("n", 0) > 10:
            stop.set()  # a failure was just found: interrupt before shrinking ends

    results = finished(run(tiny(lossy=True, on_call=on_call), database="none", seed=5,
                           only=["tiny::roundtrip[v1->v2]"], stop=stop))
    result = results["tiny::roundtrip[v1->v2]"]
    assert result.status is Status.FAILED
    assert result.counterexample is not None and not result.counterexample.shrunk
    assert result.counterexample.object["spec"]["n"] > 10


def test_failures_are_replayed_from_a_shared_directory_database(tmp_path: Path) -> None:
    db = str(tmp_path / "db")
    key = "tiny::roundtrip[v1->v2]"
    first = finished(run(tiny(lossy=True), database=db, only=[key]))[key]
    second = finished(run(tiny(lossy=True), database=db, only=[key]))[key]
    assert first.status is second.status is Status.FAILED
    assert second.counterexample is not None and first.counterexample is not None
    assert second.counterexample.object == first.counterexample.object
    assert second.examples < first.examples  # replayed first, nothing left to shrink
    # Units keep separate keys in the one database.
    saved = list(namespaced(DirectoryBasedExampleDatabase(db), key).fetch(b"x"))
    assert saved == []


def test_namespaced_database_isolates_units() -> None:
    inner = InMemoryExampleDatabase()
    a, b = namespaced(inner, "api::p[a->b]"), namespaced(inner, "api::p[b->a]")
    a.save(b"k", b"1")
    assert list(a.fetch(b"k")) == [b"1"] and list(b.fetch(b"k")) == []
    a.move(b"k", b"k2", b"1")
    assert list(a.fetch(b"k2")) == [b"1"] and list(a.fetch(b"k")) == []
    a.delete(b"k2", b"1")
    assert list(a.fetch(b"k2")) == []


def test_workers_share_one_database(tmp_path: Path) -> None:
    db = str(tmp_path / "db")
    events = list(run(tiny(lossy=True), database=db, workers=2, max_examples=200))
    final = events[-1]
    assert isinstance(final, RunFinished) and final.stop_reason is StopReason.COMPLETED
    assert sorted(r.unit.id for r in final.results) == sorted(u.id for u in events[0].units)
    failed = {r.unit.id for r in final.results if r.status is Status.FAILED}
    assert "tiny::roundtrip[v1->v2]" in failed, [(r.unit.id, r.status) for r in final.results]
    again = finished(run(tiny(lossy=True), database=db, only=["tiny::roundtrip[v1->v2]"]))
    assert again["tiny::roundtrip[v1->v2]"].examples <= 5  # found by a worker, replayed


def test_duration_budget_ends_every_unit() -> None:
    events = list(run(tiny(), database="none", seed=4, duration=1.0))
    final = events[-1]
    assert final.stop_reason is StopReason.DURATION
    assert all(r.status is Status.PASSED and r.examples > 0 for r in final.results)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"workers": 0}, "workers >= 1"),
    ({"max_examples": 0}, "max_examples >= 1"),
    ({"duration": -1}, "positive duration"),
    ({"max_examples": 5, "duration": 5}, "not both"),
    ({"profile": "weekly"}, "Expected one of default, ci, nightly"),
])
def test_bad_run_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        list(run(tiny(), **kwargs))


# -- Redis -------------------------------------------------------------------------


@pytest.fixture
def redis_url(real_redis: tuple[str, subprocess.Popen[bytes]]) -> str:
    return real_redis[0]


def test_workers_share_failures_through_redis(redis_url: str) -> None:
    import redis

    key = "tiny::roundtrip[v1->v2]"
    first = finished(run(tiny(lossy=True), database=redis_url, workers=2, max_examples=200))
    assert first[key].status is Status.FAILED
    client = redis.Redis.from_url(redis_url)
    keys = [k.decode(errors="replace") for k in client.keys("*")]
    client.close()
    assert any(key in k for k in keys), keys
    again = finished(run(tiny(lossy=True), database=redis_url, only=[key]))[key]
    assert again.status is Status.FAILED and again.examples <= 5
    assert first[key].counterexample is not None and again.counterexample is not None
    assert again.counterexample.object == first[key].counterexample.object


# -- defaulters ----------------------------------------------------------------------


def _defaulted(v1: Any, v2: Any) -> API:
    def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        return {**obj, "apiVersion": desired}

    return API.from_schemas("tiny", {"v1": SCHEMA, "v2": SCHEMA}, kind="Tiny", group=GROUP,
                            convert=convert, defaulters={"v1": v1, "v2": v2})


def _default_n(obj: dict[str, Any]) -> None:
    obj.setdefault("spec", {}).setdefault("n", 1)  # in place: returning None is allowed


def _append_tag(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    spec["tags"] = [*spec.get("tags", []), "x"]  # not idempotent
    return obj


def test_consistent_defaulters_pass() -> None:
    results = finished(run(_defaulted(_default_n, _default_n), database="none", seed=1,
                           max_examples=30, properties=["default_idempotent",
                                                        "default_commutes"]))
    assert sorted(results) == ["tiny::default_commutes[v1->v2]",
                               "tiny::default_commutes[v2->v1]",
                               "tiny::default_idempotent[v1]", "tiny::default_idempotent[v2]"]
    assert {r.status for r in results.values()} == {Status.PASSED}


def test_default_in_one_version_only_does_not_commute() -> None:
    results = finished(run(_defaulted(lambda o: o, _default_n), database="none", seed=1,
                           properties=["default_commutes"]))
    result = results["tiny::default_commutes[v1->v2]"]
    assert result.status is Status.FAILED and result.counterexample is not None
    # minimal: no spec at all, which v2's defaulter creates
    assert result.counterexample.object.get("spec") is None
    assert [row["path"] for row in result.counterexample.diff] == ["spec"]


def test_non_idempotent_defaulter_is_caught() -> None:
    results = finished(run(_defaulted(_append_tag, lambda o: o), database="none", seed=1,
                           properties=["default_idempotent"]))
    assert results["tiny::default_idempotent[v1]"].status is Status.FAILED
    assert "tiny::default_idempotent[v2]" in results  # an identity defaulter still counts
    assert results["tiny::default_idempotent[v2]"].status is Status.PASSED


# -- path independence -----------------------------------------------------------------


def test_path_dependent_converters_are_caught() -> None:
    """v1 -> v3 directly rounds ``n`` to tens; through v2 it does not: A -> B -> C != A -> C."""

    def step(to: str, rounding: bool = False) -> Any:
        def convert(obj: dict[str, Any]) -> dict[str, Any]:
            out = {**obj, "apiVersion": f"{GROUP}/{to}"}
            if rounding and "n" in (obj.get("spec") or {}):
                out["spec"] = {**obj["spec"], "n": obj["spec"]["n"] // 10 * 10}
            return out
        return convert

    versions = ("v1", "v2", "v3")
    pairs = {(a, b): step(b) for a in versions for b in versions if a != b}
    pairs["v1", "v3"] = step("v3", rounding=True)
    api = API.from_schemas("paths", dict.fromkeys(versions, SCHEMA), kind="Tiny",
                           group=GROUP, converters=pairs)
    results = finished(run(api, database="none", seed=7, properties=["path_independent"]))
    failed = {k for k, r in results.items() if r.status is Status.FAILED}
    # Every triple whose two routes differ in whether they take the rounding v1 -> v3 step.
    assert failed == {"paths::path_independent[v1->v2->v3]",
                      "paths::path_independent[v1->v3->v2]",
                      "paths::path_independent[v2->v1->v3]"}, results
    cx = results["paths::path_independent[v1->v2->v3]"].counterexample
    assert cx is not None and cx.shrunk
    assert [row["path"] for row in cx.diff] == ["spec.n"]
    assert cx.object["spec"] == {"n": 1}  # the smallest n that rounding changes


def test_the_time_to_the_first_example_is_said_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a unit does before its first example (here a slow one-time set-up) is its
    ``setup_seconds``, part of its time and said apart, not taken for example time."""
    import time

    from compatfuzz.strategies import _warm

    warmed: list[bool] = []
    original = _warm.warm_up

    def slow_once() -> None:
        if not warmed:
            time.sleep(1.2)
        warmed.append(True)
        original()

    monkeypatch.setattr(_warm, "warm_up", slow_once)
    results = list(finished(run(tiny(), database="none", seed=3, max_examples=5)).values())
    first, rest = results[0], results[1:]
    assert 1.2 <= first.setup_seconds <= first.seconds
    assert first.time_text().endswith(f"after {first.setup_seconds:.1f}s set-up")
    assert first.to_json()["setup_seconds"] >= 1.2
    assert all(r.setup_seconds <= r.seconds for r in rest)


def test_a_short_set_up_is_not_mentioned() -> None:
    from compatfuzz.roundtrip import Property, Unit

    unit = Unit("tiny", "Tiny", Property.ROUNDTRIP, ("v1", "v2"))
    result = UnitResult(unit, Status.PASSED, 5, 2.46, setup_seconds=0.4)
    assert result.time_text() == "2.5s"
    assert UnitResult(result.unit, Status.PASSED, 5, 14.0,
                      setup_seconds=12.0).time_text() == "2.0s after 12.0s set-up"
