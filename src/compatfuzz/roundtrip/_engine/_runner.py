"""The round-trip engine: run every unit's property and yield events.

``run()`` is a generator of :mod:`~compatfuzz.roundtrip._events` events and never prints
(STYLE.md 20).  Units run one after another in this process, or each in its own worker
process (``workers`` at a time, ``multiprocessing``) sharing one example database, so a
failure one worker finds is replayed first by every later run.

Stopping: set the ``stop`` event (the CLI does so on SIGINT/SIGTERM) or interrupt the
process.  Each running unit then ends at its next example and reports what it has,
including a not-yet-shrunk counterexample (Hypothesis has already saved it to the
database), and the run ends with ``StopReason.INTERRUPTED``.  Time budgets
(``duration``) work the same way, per unit, but never cut a shrink short.

Faults in user code end the unit, never the run and never silently:

* any ``BaseException`` a converter raises is a failure (``SystemExit(0)`` included; the
  model wraps it in ``ConverterError``); anything else escaping a unit is an error;
* each example has a deadline (``example_deadline``, 10 s by default, see ``_deadline``)
  that fails the unit with where it was stuck;
* a worker runs one unit and is watched (see ``_workers``): if it dies its unit fails and
  the run goes on, and every worker dies with its parent;
* the first failure of a unit is handed to ``on_failure`` the moment it is found, before
  shrinking, so a run killed mid-shrink still leaves it on disk.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip._check._model import API
from compatfuzz.roundtrip._check._plan import Sampled, plan
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._engine._shard import Shard, assign, shard_seed, split
from compatfuzz.roundtrip._engine._unit import (
    DEFAULT_EXAMPLE_DEADLINE,
    FailureCallback,
    notice_of,
    run_unit,
)
from compatfuzz.roundtrip._events import (
    Event,
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

__all__ = ["Count", "LiveCounts", "config_digest", "default_night", "run", "unit_cost",
           "unit_seed"]


def unit_seed(run_seed: int, unit: Unit, copy: int = 0) -> int:
    """The seed a unit runs with: derived from the run's seed and the unit id, so
    ``--seed S`` replays every unit, and units do not all explore the same choices.
    ``copy`` (> 0 for a sharded job's re-run of a unit on a spare shard, see
    ``_shard.split``) is mixed in, so two copies never draw the same examples."""
    salt = f":copy{copy}" if copy else ""
    digest = hashlib.sha256(f"{run_seed}:{unit.id}{salt}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _schema_nodes(node: Any, limit: int = 100_000) -> int:
    """How many objects and arrays ``node`` holds (at most ``limit``), iteratively."""
    count, stack = 0, [node]
    while stack and count < limit:
        item = stack.pop()
        if isinstance(item, dict):
            count += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            count += 1
            stack.extend(item)
    return count


def unit_cost(api: API | Suite, unit: Unit) -> float:
    """A unit's expected cost, relative to other units: what a sharded job balances.

    One example of a unit is generated from the schema of ``unit.versions[0]`` and goes
    through a converter (and the API-server model's pruning, defaulting and validation)
    once per further version, each a walk of the object; objects grow with their schema.
    So the cost of an example is about ``len(unit.versions) * nodes(schema)``, the nodes
    being the schema's objects and arrays (a measure every schema has, unlike leaf paths,
    which need a walk with ``$ref`` cycles cut).  With ``--max-examples`` units run the
    same number of examples, so that is the cost of a unit; with ``--duration`` every
    unit of a shard gets an equal share of its budget, and balancing by cost then gives
    large schemas more time, in proportion to what one of their examples costs.
    A :class:`Suite` says its own (:meth:`Suite.unit_cost`, default 1.0); a unit whose
    schema cannot be read costs 1.0 (its run fails fast, as an error).
    """
    if isinstance(api, Suite):
        return float(api.unit_cost(unit))
    try:
        schema = api.kind(unit.kind).schema(unit.versions[0])
    except Exception:  # reported by the unit's own run
        return 1.0
    return float(len(unit.versions) * max(1, _schema_nodes(schema.root)))


def default_night(environ: Mapping[str, str] | None = None) -> str:
    """The label of tonight's job: ``COMPATFUZZ_NIGHT``, else ``GITHUB_RUN_ID`` (every
    shard of one workflow run shares it, a rerun of a failed job too), else today's UTC
    date (every pod of an Indexed Job started the same day)."""
    env = os.environ if environ is None else environ
    for name in ("COMPATFUZZ_NIGHT", "GITHUB_RUN_ID"):
        value = env.get(name, "").strip()
        if value:
            return value
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _api_digest(api: API | Suite) -> str:
    """The sha256 of what an API's units check: its config file's bytes, and for a
    schema API each version's schema (read from files the config names)."""
    h = hashlib.sha256(f"api:{api.name}".encode())
    if api.source:
        try:
            h.update(Path(api.source).read_bytes())
        except OSError:
            h.update(b"<unreadable config>")
    if isinstance(api, API):
        for kind in api.kinds:
            for version, schema in kind.versions.items():
                h.update(json.dumps([kind.name, version, schema.root], sort_keys=True,
                                    default=repr).encode())
    return h.hexdigest()


def config_digest(apis: Sequence[API | Suite], unit_ids: Iterable[str]) -> str:
    """The sha256 of the canonical JSON of a planned job: its unit ids (sorted) and its
    APIs' content digests.  Shards of one job agree on it; ``compatfuzz report merge``
    refuses to merge shards of different jobs (a config changed between two shards)."""
    doc = {"units": sorted(unit_ids),
           "apis": sorted([a.name, _api_digest(a)] for a in apis)}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# -- watching one unit ---------------------------------------------------------------


class Count:
    """A number another thread may read while a unit runs (``.value``, like a
    ``multiprocessing.Value``, which workers use instead)."""

    def __init__(self) -> None:
        self.value = 0


class LiveCounts:
    """Examples run so far across the units of a :func:`run`, readable from another thread
    while the run is busy inside a unit: the CLI's live line shows them with a rate and the
    time left."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, Any] = {}
        self.finished = 0

    def start(self, unit: Unit, counter: Any) -> None:
        with self._lock:
            self._running[unit.id] = counter

    def finish(self, unit: Unit, examples: int) -> None:
        with self._lock:
            self._running.pop(unit.id, None)
            self.finished += examples

    @property
    def examples(self) -> int:
        """Examples run by finished units plus the running units' so far."""
        with self._lock:
            return self.finished + sum(int(c.value) for c in self._running.values())


def _select(apis: Sequence[API | Suite], properties: Iterable[Property | str] | None,
            only: Iterable[str] | None, limit: int | str | None = "api",
            ) -> tuple[list[tuple[API | Suite, Unit]], list[Sampled]]:
    selected: list[tuple[API | Suite, Unit]] = []
    sampled: list[Sampled] = []
    for api in apis:
        planned, some = plan(api, properties, limit=limit)
        selected.extend((api, unit) for unit in planned)
        sampled.extend(some)
    if only is not None:
        wanted = set(only)
        selected = [(a, u) for a, u in selected if u.id in wanted]
    return selected, sampled


def _shard_plan(api_list: Sequence[API | Suite], job: list[tuple[API | Suite, Unit]], *,
                shard: Shard, night: str | None, seed: int | None, db: Any,
                ) -> tuple[list[tuple[API | Suite, Unit]], dict[str, int], set[str],
                           dict[str, Any]]:
    """What shard ``shard`` of ``job`` runs: the other shards' units with saved failures
    (replayed first), then its own share, those with saved failures first; the copy
    number of each unit run again on a spare shard; the replayed ids; the report's
    ``"shard"`` key."""
    from compatfuzz.roundtrip._engine._database import units_with_failures

    costs = {unit.id: unit_cost(api, unit) for api, unit in job}  # one schema walk each

    def cost(pair: tuple[API | Suite, Unit]) -> float:
        return costs[pair[1].id]

    def key(pair: tuple[API | Suite, Unit]) -> str:
        return pair[1].id

    mine = split(job, shard, key=key, cost=cost)
    # every unit's owning shard, so a merge can say which lost units a missing shard owned
    owners = assign(job, shard.count, key=key, cost=cost)
    copies = {unit.id: copy for (_, unit), copy in mine if copy}
    owned = {unit.id for (_, unit), _ in mine}
    job_ids = [unit.id for _, unit in job]
    failing = units_with_failures(db, job_ids)
    replay = [(a, u) for a, u in job if u.id in failing and u.id not in owned]
    own = [pair for pair, _ in mine]
    own.sort(key=lambda pair: pair[1].id not in failing)  # stable: saved failures first
    label = night if night is not None else default_night()
    run_seed = shard_seed(label, shard, seed)
    doc = {"number": shard.number, "count": shard.count, "night": label, "seed": run_seed,
           "job_units": job_ids, "units": sorted(owned), "copies": copies,
           "replayed": sorted(u.id for _, u in replay),
           "owners": dict(sorted(owners.items())),
           "config_digest": config_digest(api_list, job_ids)}
    return replay + own, copies, {u.id for _, u in replay}, doc


def _deadline_arg(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InvalidArgument(
            f"Expected a positive number of seconds or None but got "
            f"example_deadline={value!r}; None turns the per-example deadline off"
        )
    return float(value)


def run(
    apis: API | Suite | Sequence[API | Suite],
    *,
    profile: str = "default",
    max_examples: int | None = None,
    duration: float | None = None,
    seed: int | None = None,
    workers: int = 1,
    database: Any = "",
    properties: Iterable[Property | str] | None = None,
    only: Iterable[str] | None = None,
    stop: threading.Event | None = None,
    example_deadline: float | None = DEFAULT_EXAMPLE_DEADLINE,
    on_failure: FailureCallback | None = None,
    live: LiveCounts | None = None,
    isolate: bool = False,
    plan_limit: int | str | None = "api",
    shard: Shard | None = None,
    night: str | None = None,
) -> Iterator[Event]:
    """Run every property for every version pair of ``apis``; yield events as they happen.

    ``max_examples`` overrides the profile's; ``duration`` (seconds) instead is the whole
    run's time budget: each unit gets an equal share of what is left (and at least one
    example), no unit starts once it is spent, and those never started get no result
    (``RunFinished.results`` is shorter than ``RunStarted.units``).  ``plan_limit`` caps the
    version tuples planned per kind and property (``"api"``: each API's ``plan_limit``;
    ``None`` for none); ``RunStarted.sampled`` says which were sampled.
    ``seed`` makes the run an exact replay; like Hypothesis's ``@seed`` it then bypasses the
    example database, so leave it unset for nightly runs (where failures are shared through
    the database instead). ``database`` is a path, a ``redis://`` URL, ``":memory:"``,
    ``"none"``, or an ``ExampleDatabase``; the default ``""`` means
    ``.hypothesis/examples``.
    ``properties`` and ``only`` (unit ids) narrow the run.  ``stop`` ends it early.
    ``example_deadline`` (seconds; ``None`` for none) fails a unit whose example runs
    longer.  ``on_failure(counterexample)`` is called, in this process, the moment a unit
    finds its first failure (unshrunk, ``shrunk=False``) and then at most every 2 s while
    it shrinks: a generator cannot yield from inside a running Hypothesis test, and a
    failure must reach the disk before a kill can lose it.  ``live`` (a
    :class:`LiveCounts`) counts examples as they run, for a progress display.
    ``isolate`` runs each unit in a child process even with ``workers=1``, as the CLI
    does: a converter's ``os._exit``, self-sent signal or leftover thread then fails its
    unit instead of ending or holding the run.

    ``shard`` runs one shard of a job split across machines: the whole job is
    planned as without it (the same ``properties``, ``only``, ``plan_limit``), then this
    shard keeps its share (``_shard.split``, balanced by :func:`unit_cost`); a unit run
    again on a spare shard (fewer units than shards) mixes its copy number into its seed.
    Without ``seed`` the shard's run seed is ``shard_seed(night, shard)`` (``night``
    default: :func:`default_night`), with it ``shard_seed(night, shard, seed)``, so
    every shard and night explores other examples and a rerun of one shard with the
    same night (or seed) repeats it.  The seed then does not bypass the database: the
    shards share failures through it.  Before its own units, a shard replays (saved
    failures only, no generation) every other unit of the job that saved a failure in
    the database; those units' results are ordinary results (a still-failing one fails
    this shard too) and ``RunStarted.shard["replayed"]`` lists them.  ``duration`` is
    the shard's budget, replays included.

    Example::

        for event in run(api, max_examples=200):
            if isinstance(event, UnitFinished):
                print(event.result.unit.id, event.result.status)

    Raises:
        InvalidArgument: bad ``workers``, ``max_examples``, ``duration``,
            ``example_deadline`` or ``shard``.

    .. versionadded:: 0.1
    .. versionchanged:: 0.3 ``shard`` and ``night``.
    """
    from compatfuzz.roundtrip._engine._database import (
        database_label,
        default_database_path,
        open_database,
        project_home,
        redact,
    )
    from compatfuzz.roundtrip._engine._profiles import profile_name

    profile_name(profile)
    api_list = [apis] if isinstance(apis, (API, Suite)) else list(apis)
    if not isinstance(workers, int) or workers < 1:
        raise InvalidArgument(f"Expected workers >= 1 but got workers={workers!r}")
    if max_examples is not None and (not isinstance(max_examples, int) or max_examples < 1):
        raise InvalidArgument(
            f"Expected max_examples >= 1 but got max_examples={max_examples!r}"
        )
    if duration is not None and duration <= 0:
        raise InvalidArgument(f"Expected a positive duration but got duration={duration!r}")
    if max_examples is not None and duration is not None:
        raise InvalidArgument("pass max_examples or duration, not both")
    deadline = _deadline_arg(example_deadline)
    if shard is not None and not isinstance(shard, Shard):
        raise InvalidArgument(f"Expected a Shard (like Shard(2, 4)) but got shard={shard!r}")
    run_seed = seed
    selected, sampled = _select(api_list, properties, only, plan_limit)
    # beside the (first) config, not in the working directory
    source = next((a.source for a in api_list if a.source), None)
    home = project_home(source) if source is not None else None
    if database == "" and home is not None:
        db_label = database_label("", home=home)
        database = str(default_database_path(home))  # workers open the same folder
        db_obj = open_database(database)
    elif isinstance(database, str):
        db_obj = open_database(database, home=home)
        db_label = database_label(database, home=home)
    elif database is None:
        db_obj, db_label = None, "none"
    else:
        db_obj, db_label = database, redact(repr(database))
    copies: dict[str, int] = {}
    replays: set[str] = set()
    shard_doc: dict[str, Any] | None = None
    if shard is not None:
        selected, copies, replays, shard_doc = _shard_plan(
            api_list, selected, shard=shard, night=night, seed=seed, db=db_obj)
        run_seed = shard_doc["seed"]
    started = time.monotonic()
    accept = tuple({"api": a.name, "index": i, **entry.to_json()}
                   for a in api_list for i, entry in enumerate(a.accept))
    code = tuple({"api": a.name, "migration": m} for a in api_list
                 if isinstance(a, Suite) for m in a.migration_code())
    yield RunStarted(tuple(u for _, u in selected), run_seed, profile, max_examples,
                     duration, workers, db_label, accept,
                     tuple(s.to_json() for s in sampled), shard_doc, code)
    stop = stop if stop is not None else threading.Event()
    results: list[UnitResult] = []

    def spent() -> bool:
        """The whole run's ``duration`` is used up: start no further unit."""
        return duration is not None and time.monotonic() - started >= duration

    def options(unit: Unit, remaining_units: int) -> dict[str, Any]:
        if unit.id in replays:  # another shard's saved failures, and nothing else
            return {"profile": profile, "max_examples": None, "seed": None,
                    "budget": None, "example_deadline": deadline, "replay_only": True}
        budget = None
        if duration is not None:
            # no floor: a floor per unit made 1,140 units of a 10 s run take 10 minutes
            left = duration - (time.monotonic() - started)
            budget = max(0.0, left * workers / max(1, remaining_units))
        opts: dict[str, Any] = {
            "profile": profile, "max_examples": max_examples,
            "seed": (None if run_seed is None else
                     unit_seed(run_seed, unit, copies.get(unit.id, 0))),
            "budget": budget, "example_deadline": deadline}
        if shard is not None:
            opts["seed_keeps_database"] = True
        return opts

    if workers == 1 and not isolate:
        queue = deque(selected)
        told = False
        while queue and not stop.is_set() and not spent():
            api, unit = queue.popleft()
            yield UnitStarted(unit)
            counter = Count()
            if live is not None:
                live.start(unit, counter)
            try:
                result = run_unit(api, unit, database=db_obj, stop=stop,
                                  on_failure=on_failure, counter=counter,
                                  **options(unit, len(queue) + 1))
            except KeyboardInterrupt:  # pragma: no cover - outside the test body
                stop.set()
                result = UnitResult(unit, Status.INTERRUPTED, 0, 0.0, None, None,
                                    "interrupted")
            notice = notice_of(db_obj)
            if notice is not None and not told:
                told = True
                yield notice
            results.append(result)
            if live is not None:
                live.finish(unit, result.examples)
            yield UnitFinished(result)
            if result.status is Status.INTERRUPTED:
                stop.set()
    else:
        from compatfuzz.roundtrip._engine._workers import run_pool

        yield from run_pool(api_list, selected, workers=workers, database=database,
                             db_obj=db_obj, stop=stop, options=options, results=results,
                             on_failure=on_failure, deadline=deadline, live=live,
                             spent=spent, home=home)
    reason = StopReason.INTERRUPTED if stop.is_set() else StopReason.COMPLETED
    if reason is StopReason.COMPLETED and duration is not None:
        reason = StopReason.DURATION
    yield RunFinished(reason, tuple(results), time.monotonic() - started)
