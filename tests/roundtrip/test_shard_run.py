"""A sharded ``roundtrip.run`` (issue 21, items 1 and 2): the split, the seeds, the
example database kept under a seed, the replay of other shards' failures first."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from compatfuzz.errors import InvalidArgument, NotEquivalent
from compatfuzz.roundtrip import RunStarted, Status, Suite, Unit, UnitFinished, run
from compatfuzz.roundtrip._engine._database import (
    INDEX_KEY,
    _seal,
    namespaced,
    units_with_failures,
)
from compatfuzz.roundtrip._engine._given import build_test
from compatfuzz.roundtrip._engine._runner import config_digest, default_night, unit_cost
from compatfuzz.roundtrip._engine._shard import Shard
from tests.roundtrip.test_runner import GROUP, SCHEMA, tiny

LOSSY = "tiny::roundtrip[v1->v2]"


def _run(api: Any, **kwargs: Any) -> tuple[RunStarted, dict[str, Any]]:
    events = list(run(api, **kwargs))
    started = events[0]
    assert isinstance(started, RunStarted)
    return started, {e.result.unit.id: e.result for e in events
                     if isinstance(e, UnitFinished)}


def test_shards_together_run_the_unsharded_units_each_once() -> None:
    whole, _ = _run(tiny(), database="none", max_examples=1)
    job = [u.id for u in whole.units]  # in the order a single run plans them
    owned: list[str] = []
    for number in (1, 2, 3):
        started, results = _run(tiny(), database="none", max_examples=1,
                                shard=Shard(number, 3), night="n")
        assert started.shard is not None
        assert started.shard["job_units"] == job
        assert sorted(results) == started.shard["units"]
        owned += started.shard["units"]
    assert sorted(owned) == sorted(job)


def test_spare_shards_run_copies_with_other_seeds() -> None:
    whole, _ = _run(tiny(), database="none", max_examples=1)
    count = len(whole.units) * 2
    seeds: dict[str, set[int]] = {}
    for number in range(1, count + 1):
        started, results = _run(tiny(), database="none", max_examples=1,
                                shard=Shard(number, count), night="n")
        assert started.shard is not None
        (unit_id,) = results
        copy = started.shard["copies"].get(unit_id, 0)
        assert copy == (number - 1) // len(whole.units)
        seeds.setdefault(unit_id, set()).add(results[unit_id].seed)
    assert all(len(s) == 2 for s in seeds.values()), seeds  # copy 0 and copy 1 differ


def test_seeds_differ_by_shard_and_night_and_repeat_on_a_rerun() -> None:
    def seeds(number: int, night: str, seed: int | None = None) -> dict[str, int]:
        started, results = _run(tiny(), database="none", max_examples=1, seed=seed,
                                shard=Shard(number, 2), night=night)
        assert started.shard is not None and started.seed == started.shard["seed"]
        return {"run": started.seed, **{k: r.seed for k, r in results.items()}}

    first = seeds(1, "2026-11-25")
    assert seeds(1, "2026-11-25") == first  # --shard 1/2 --night L reruns it
    assert seeds(1, "2026-11-26")["run"] != first["run"]
    assert seeds(2, "2026-11-25")["run"] != first["run"]
    # --seed S: the night is ignored, each shard still its own
    assert seeds(1, "a", seed=7) == seeds(1, "b", seed=7)
    assert seeds(1, "a", seed=7)["run"] != seeds(2, "a", seed=7)["run"]


def test_a_sharded_run_reads_and_writes_the_database_despite_its_seed() -> None:
    # unsharded, --seed bypasses the database as Hypothesis's @seed does
    db = InMemoryExampleDatabase()
    _, results = _run(tiny(lossy=True), database=db, seed=3, max_examples=200,
                      properties=["roundtrip"])
    assert results[LOSSY].status is Status.FAILED and not db.data
    # sharded, the seed is always set and the database must still be written
    db = InMemoryExampleDatabase()
    _, results = _run(tiny(lossy=True), database=db, max_examples=200,
                      properties=["roundtrip"], shard=Shard(1, 1), night="n")
    assert results[LOSSY].status is Status.FAILED
    assert results[LOSSY].saved is True
    assert units_with_failures(db, [LOSSY]) == {LOSSY}


def test_build_test_with_a_seed_keeps_the_database() -> None:
    from hypothesis import settings as hsettings

    api = tiny(lossy=True)
    unit = next(u for u in _run(api, database="none", max_examples=1)[0].units
                if u.id == LOSSY)
    db = InMemoryExampleDatabase()
    test = build_test(api, unit, settings=hsettings(database=db, max_examples=200),
                      seed=11)
    with pytest.raises(NotEquivalent):  # the lossy converter's failure
        test()
    assert db.data


def test_every_shard_replays_other_shards_failures_first() -> None:
    db = InMemoryExampleDatabase()
    owners: dict[str, int] = {}
    for number in (1, 2):
        started, results = _run(tiny(lossy=True), database=db, max_examples=200,
                                shard=Shard(number, 2), night="1")
        assert started.shard is not None
        owners.update({k: number for k, r in results.items()
                       if r.status is Status.FAILED and k in started.shard["units"]})
    assert LOSSY in owners
    for number in (1, 2):
        events = list(run(tiny(lossy=True), database=db, max_examples=50,
                          shard=Shard(number, 2), night="2"))
        started = events[0]
        assert isinstance(started, RunStarted) and started.shard is not None
        rows = [e.result for e in events if isinstance(e, UnitFinished)]
        # first, before any unit generates: every unit that failed on night 1
        first = rows[:len(owners)]
        assert {r.unit.id for r in first} == set(owners)
        assert all(r.status is Status.FAILED for r in first)
        assert all("replayed the 1 failure" in r.replayed for r in first)
        others = sorted(k for k, n in owners.items() if n != number)
        assert started.shard["replayed"] == others
        assert not set(others) & set(started.shard["units"])
        for r in first:
            if r.unit.id in others:
                assert r.examples <= 2  # the saved failure, no generation


def test_a_fixed_failure_listed_for_replay_is_no_error() -> None:
    db = InMemoryExampleDatabase()
    for number in (1, 2):
        _run(tiny(lossy=True), database=db, max_examples=200, shard=Shard(number, 2),
             night="1")
    assert LOSSY in units_with_failures(db, [LOSSY])
    for night in ("2", "3"):  # the converter is fixed: its saved failures pass, then go
        for number in (1, 2):
            started, results = _run(tiny(), database=db, max_examples=20,
                                    shard=Shard(number, 2), night=night)
            assert started.shard is not None
            for unit_id in started.shard["replayed"]:
                assert results[unit_id].status in (Status.PASSED, Status.SKIPPED)
            assert all(r.status in (Status.PASSED, Status.SKIPPED)
                       for r in results.values()), results
    stale = {k: r for k, r in results.items() if r.status is Status.SKIPPED}
    assert all("nothing to replay" in r.message for r in stale.values())
    # a replay that found nothing drops the unit from the index: no skip night after night
    assert units_with_failures(db, [LOSSY]) == set()
    for number in (1, 2):
        started, results = _run(tiny(), database=db, max_examples=20,
                                shard=Shard(number, 2), night="4")
        assert started.shard is not None and started.shard["replayed"] == []
        assert all(r.status is Status.PASSED for r in results.values()), results


unit_ids = st.text("abcdef:[]>-", min_size=1, max_size=12)


@settings(max_examples=200)
@given(st.lists(st.one_of(st.binary(max_size=40),
                          unit_ids.map(lambda u: _seal(u.encode())),
                          unit_ids.map(lambda u: _seal(u.encode())[:-1]))),
       st.sets(unit_ids, max_size=6))
def test_the_failing_units_index_is_a_cache_never_a_crash(entries: list[bytes],
                                                          wanted: set[str]) -> None:
    db = InMemoryExampleDatabase()
    for entry in entries:
        db.save(INDEX_KEY, entry)
    valid = set()
    for unit_id in wanted:
        if unit_id.startswith("a"):
            namespaced(db, unit_id).save(b"k", b"\x00")  # what Hypothesis saves
            valid.add(unit_id)
    sealed = {e for e in entries}
    listed = {u for u in wanted if _seal(u.encode()) in sealed}
    assert units_with_failures(db, wanted) == valid | listed


def test_an_unreadable_database_lists_no_failing_unit() -> None:
    class Broken(InMemoryExampleDatabase):
        def fetch(self, key: bytes) -> Any:
            raise OSError("gone")

    assert units_with_failures(Broken(), [LOSSY]) == set()


def test_cost_grows_with_versions_and_schema_size() -> None:
    big = {"type": "object", "properties": {
        f"f{i}": {"type": "object", "properties": {"x": {"type": "array"}}}
        for i in range(20)}}
    small_api = tiny()
    big_api = type(small_api).from_schemas("big", {"v1": big, "v2": big, "v3": big},
                                           kind="Big", group=GROUP,
                                           convert=lambda o, v: {**o, "apiVersion": v})
    small = [unit_cost(small_api, u) for u in _run(small_api, database="none",
                                                   max_examples=1)[0].units]
    units = _run(big_api, database="none", max_examples=1, plan_limit=None)[0].units
    pairs = [unit_cost(big_api, u) for u in units if len(u.versions) == 2]
    triples = [unit_cost(big_api, u) for u in units if len(u.versions) == 3]
    assert min(pairs) > max(small)
    assert triples and min(triples) == pytest.approx(max(pairs) * 3 / 2)
    assert SCHEMA  # tiny's schema is the small one


class Weighted(Suite):
    """A suite whose first unit costs as much as all the others together."""

    name = "weighted"

    def units(self, properties: Any) -> list[Unit]:
        from compatfuzz.roundtrip import Property

        return [Unit("weighted", "W", Property.ROUNDTRIP, (f"v{i}", f"v{i + 1}"))
                for i in range(4)]

    def strategy(self, unit: Unit) -> Any:
        return st.just(0)

    def check(self, unit: Unit, example: Any) -> None:
        return None

    def unit_cost(self, unit: Unit) -> float:
        return 3.0 if unit.versions[0] == "v0" else 1.0


def test_a_suite_says_its_units_cost_and_the_split_follows() -> None:
    mine = {n: _run(Weighted(), database="none", max_examples=1, shard=Shard(n, 2),
                    night="n")[0].shard for n in (1, 2)}
    assert mine[1] is not None and mine[2] is not None
    heavy = "weighted::roundtrip[v0->v1]"
    alone = mine[1] if heavy in mine[1]["units"] else mine[2]
    assert alone["units"] == [heavy]  # 3.0 against 1.0 + 1.0 + 1.0


def test_config_digest_names_the_job() -> None:
    units = [u.id for u in _run(tiny(), database="none", max_examples=1)[0].units]
    digests = {n: _run(tiny(), database="none", max_examples=1, shard=Shard(n, 2),
                       night=str(n))[0].shard for n in (1, 2)}
    assert digests[1] is not None and digests[2] is not None
    assert digests[1]["config_digest"] == digests[2]["config_digest"]
    assert digests[1]["config_digest"] == config_digest([tiny()], units)
    assert config_digest([tiny()], units[:-1]) != config_digest([tiny()], units)
    other = type(tiny()).from_schemas("tiny", {"v1": SCHEMA, "v2": {**SCHEMA, "title": "x"}},
                                      kind="Tiny", group=GROUP,
                                      convert=lambda o, v: {**o, "apiVersion": v})
    assert config_digest([other], units) != config_digest([tiny()], units)


def test_the_night_defaults_to_the_ci_run_then_the_utc_date() -> None:
    assert default_night({"COMPATFUZZ_NIGHT": "n7", "GITHUB_RUN_ID": "42"}) == "n7"
    assert default_night({"GITHUB_RUN_ID": "42"}) == "42"
    import datetime

    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    assert default_night({}) in (today, datetime.datetime.now(
        datetime.timezone.utc).date().isoformat())


def test_a_shard_that_is_not_a_shard_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="Shard"):
        list(run(tiny(), database="none", shard="1/2"))  # type: ignore[arg-type]
