"""The pytest plugin under pytest-xdist and ``--compatfuzz-shard`` (issue 21, item 4).

Every run here is a real pytest in a subprocess, with two xdist workers where it matters,
on the frobber example (``lossy.toml``: the seeded bug drops ``spec.params[1:]`` on the
way to v6, so ``roundtrip[v7beta1->v6]`` fails).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compatfuzz.roundtrip import load_config, units
from compatfuzz.roundtrip._deadline import run_queue_wait
from compatfuzz.roundtrip._engine import _runner
from compatfuzz.roundtrip._engine._database import _unseal
from compatfuzz.roundtrip._engine._profiles import PROFILES, get_profile
from compatfuzz.roundtrip._engine._runner import unit_seed
from compatfuzz.roundtrip._engine._shard import Shard, split

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
FROBBER = REPO / "examples" / "frobber"
FAILING = "frobber::roundtrip[v7beta1->v6]"
TIMEOUT = 300
NO_CACHE = ("-p", "no:cacheprovider")


def _frobber(pytester: pytest.Pytester, config: str = "lossy.toml") -> Path:
    for name in ("crd.yaml", "conversion.py", "lossy.py"):
        shutil.copy(FROBBER / name, pytester.path / name)
    shutil.copy(FROBBER / config, pytester.path / "compatfuzz.toml")
    return pytester.path / "compatfuzz.toml"


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*args, timeout=TIMEOUT)


def _counterexamples(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("minimal counterexample: ")]


def _known_failures(folder: Path) -> int:
    """How many counterexamples the example database keeps as compatfuzz's known failures
    (the entries a next run replays first)."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    from compatfuzz.roundtrip._engine._database import INDEX_KEY

    sealed = sum(_unseal(f.read_bytes()) is not None for f in folder.rglob("*") if f.is_file())
    # minus the index of units with failures (roundtrip/_engine/_database.py, for sharded replays)
    return sealed - len(list(DirectoryBasedExampleDatabase(folder).fetch(INDEX_KEY)))


@pytest.mark.extended  # roundtrip/test_html.py checks the page by default; this is its xdist case
def test_html_report_under_two_workers_lists_every_unit_once(pytester: pytest.Pytester) -> None:
    """Each worker used to write the page from its own units, the last one winning."""
    _frobber(pytester)
    result = _run(pytester, *NO_CACHE, "-n", "2", "--compatfuzz-max-examples=20",
                  "--compatfuzz-html=report.html")
    result.assert_outcomes(passed=5, failed=1)
    page = (pytester.path / "report.html").read_text()
    names = [unit.id for unit in units(load_config(pytester.path / "compatfuzz.toml")[0])]
    assert len(names) == 6
    cells = {unit: state for state, unit in re.findall(
        r'<td class="cell ([a-z-]+)" title="([^"]+)"', page)}
    assert cells == {name.replace(">", "&gt;"): "failed" if name == FAILING else "passed"
                     for name in names}


def test_a_failure_found_under_xdist_is_saved_once_and_replayed_by_any_worker(
        pytester: pytest.Pytester) -> None:
    _frobber(pytester)
    db = pytester.path / ".hypothesis" / "examples"
    first = _run(pytester, *NO_CACHE, "-n", "2", "-k", "roundtrip")
    first.assert_outcomes(passed=1, failed=1)
    assert _known_failures(db) == 1  # one database for both workers, one entry
    found = _counterexamples(first)
    # replayed first, with one example left to find it otherwise, by two workers and by one
    for workers in ("2", "0"):
        again = _run(pytester, *NO_CACHE, "-n", workers, "--compatfuzz-max-examples=1")
        again.assert_outcomes(passed=5, failed=1)
        assert _counterexamples(again) == found
        assert "(replays the failing example first from the example database)" in again.stdout.str()
        assert _known_failures(db) == 1  # replaying saved no duplicate


REVERSE = """
def pytest_collection_modifyitems(items):
    items.reverse()
"""


@pytest.mark.extended  # 4 pytest runs, ~65 s; CI runs it
def test_seeds_do_not_depend_on_the_worker_or_the_order(pytester: pytest.Pytester) -> None:
    """``--compatfuzz-seed S``: a unit's seed is ``unit_seed(S, unit)`` on one worker or two,
    in collection order or reversed, and ``last`` is resolved once, by the controller."""
    _frobber(pytester)
    unit = next(u for u in units(load_config(pytester.path / "compatfuzz.toml")[0])
                if u.id == FAILING)
    wanted = unit_seed(41, unit)

    def seeds(result: pytest.RunResult) -> list[int]:
        return [int(s) for s in re.findall(r'"seed": (\d+), "unit": "' + re.escape(FAILING),
                                             result.stdout.str())]

    runs = [_run(pytester, "-n", "0", "--compatfuzz-seed=41")]
    runs.append(_run(pytester, "-n", "2", "--compatfuzz-seed=41"))
    (pytester.path / "conftest.py").write_text(REVERSE)
    runs.append(_run(pytester, "-n", "2", "--compatfuzz-seed=last"))
    runs.append(_run(pytester, "-n", "2", "--compatfuzz-seed=last", "--dist", "loadfile"))
    for result in runs:
        result.assert_outcomes(passed=5, failed=1)
        assert seeds(result) == [wanted]
        assert _counterexamples(result) == _counterexamples(runs[0])
    runs[2].stdout.fnmatch_lines(["compatfuzz: profile=default, seed=41 *"])


def _ids(result: pytest.RunResult) -> list[str]:
    return [line.split("::", 1)[1] for line in result.outlines if "::frobber::" in line]


# 7 shards for 6 units covers the split and the spare shard; 2 and 3 (~35 s) run in CI
@pytest.mark.parametrize("count", [pytest.param(2, marks=pytest.mark.extended),
                                   pytest.param(3, marks=pytest.mark.extended), 7])
def test_shards_of_a_pytest_matrix_run_every_unit_once(pytester: pytest.Pytester,
                                                       count: int) -> None:
    """The split is ``compatfuzz fuzz --shard``'s (``split`` keyed by unit id); seven
    shards for six units: the seventh re-runs one (a copy), none idles."""
    _frobber(pytester, "compatfuzz.toml")
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    api = load_config(pytester.path / "compatfuzz.toml")[0]
    everything = units(api)
    cost = getattr(_runner, "unit_cost", None)  # what fuzz --shard balances, once it has it
    ran: list[str] = []
    for number in range(1, count + 1):
        result = _run(pytester, *NO_CACHE, "--co", "-q", "-n", "0",
                      f"--compatfuzz-shard={number}/{count}", "compatfuzz.toml",
                      "test_plain.py")
        mine = _ids(result)
        expected = split(everything, Shard(number, count), key=lambda u: u.id,
                         cost=None if cost is None else lambda u: cost(api, u))
        assert mine == [unit.id for unit, _ in expected]
        assert "test_plain.py::test_x" in result.stdout.str()  # not compatfuzz's to split
        result.stdout.fnmatch_lines([f"*{len(mine) + 1}/7 tests collected "
                                     f"({6 - len(mine)} deselected)*"])
        ran.extend(mine)
    ids = [unit.id for unit in everything]
    if count <= len(everything):
        assert sorted(ran) == sorted(ids)
    else:
        assert set(ran) == set(ids) and len(ran) == count


@pytest.mark.extended  # the matrix test above takes the same split by default
def test_pytest_shards_run_the_units_of_fuzz_shards(pytester: pytest.Pytester) -> None:
    """``pytest --compatfuzz-shard K/N`` and ``compatfuzz fuzz --shard K/N`` split the same
    way, so one matrix may mix them."""
    _frobber(pytester, "compatfuzz.toml")
    for number in (1, 2, 3):
        fuzz = subprocess.run(
            [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--shard", f"{number}/3",
             "--max-examples", "2", "--database", "none", "--report", "r.json", "-q"],
            cwd=pytester.path, capture_output=True, text=True, check=False, timeout=TIMEOUT)
        assert fuzz.returncode == 0, fuzz.stderr
        owned = json.loads((pytester.path / "r.json").read_text())["shard"]["units"]
        result = _run(pytester, *NO_CACHE, "--co", "-q", f"--compatfuzz-shard={number}/3")
        assert sorted(_ids(result)) == sorted(owned)


def test_a_spare_shard_reruns_a_unit_with_its_own_seed_and_says_how_to_replay(
        pytester: pytest.Pytester) -> None:
    """Ten shards, six units: shard 10 runs the fourth unit (the seeded bug) again, as
    copy 1, on a run seed of its own, which its replay line gives (running the node alone
    with it reproduces that seed, with no shard)."""
    _frobber(pytester)
    unit = next(u for u in units(load_config(pytester.path / "compatfuzz.toml")[0])
                if u.id == FAILING)
    result = _run(pytester, *NO_CACHE, "-n", "0", "--compatfuzz-seed=3",
                  "--compatfuzz-shard=10/10")
    result.assert_outcomes(failed=1, deselected=5)
    seeds = re.findall(r'"seed": (\d+), "unit": "' + re.escape(FAILING), result.stdout.str())
    assert len(seeds) == 1 and int(seeds[0]) != unit_seed(3, unit)
    replay = re.findall(r"replay: pytest '(\S+)' --compatfuzz-seed=(\d+)\n",
                        result.stdout.str())
    assert replay and replay[0][0] == f"compatfuzz.toml::{FAILING}" and replay[0][1] != "3"
    assert int(seeds[0]) == unit_seed(int(replay[0][1]), unit)
    again = _run(pytester, *NO_CACHE, "-n", "0", replay[0][0],
                 f"--compatfuzz-seed={replay[0][1]}")
    assert re.findall(r'"seed": (\d+)', again.stdout.str()) == seeds


@pytest.mark.extended  # shards and xdist each have their default tests; both at once in CI
def test_shard_under_xdist_runs_its_units_and_says_what_it_left(
        pytester: pytest.Pytester) -> None:
    _frobber(pytester, "compatfuzz.toml")
    collected = _ids(_run(pytester, *NO_CACHE, "--co", "-q", "--compatfuzz-shard=2/3"))
    result = _run(pytester, *NO_CACHE, "-n", "2", "-v", "--compatfuzz-max-examples=5",
                  "--compatfuzz-shard=2/3")
    result.assert_outcomes(passed=len(collected))
    ran = sorted(re.findall(r"PASSED compatfuzz\.toml::(\S+)", result.stdout.str()))
    assert ran == sorted(collected)
    # xdist shows no worker's deselections; the plugin says it
    result.stdout.fnmatch_lines([f"compatfuzz: shard 2/3: {len(collected)} compatfuzz items "
                                 f"here, {6 - len(collected)} deselected (the other shards' "
                                 "units)"])


@pytest.mark.parametrize("value", ["0/2", "3/2", "two"])
def test_bad_shard_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    """The message names the option the user typed, never ``compatfuzz fuzz``'s
    ``--shard``."""
    _frobber(pytester, "compatfuzz.toml")
    result = _run(pytester, *NO_CACHE, f"--compatfuzz-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Expected --compatfuzz-shard K/N*"])
    assert not re.search(r"(?<![\w-])--shard", result.stderr.str()), result.stderr.str()


def _glob(text: str) -> str:
    """``text`` as an ``fnmatch`` pattern matching itself (``[`` opens a class there)."""
    return text.replace("[", "[[]")


def _owner(pytester: pytest.Pytester, unit_id: str, count: int) -> int:
    """The shard (1-based) of ``count`` that owns ``unit_id`` (fuzz's and pytest's split)."""
    api = load_config(pytester.path / "compatfuzz.toml")[0]
    cost = getattr(_runner, "unit_cost", None)
    for number in range(1, count + 1):
        mine = split(units(api), Shard(number, count), key=lambda u: u.id,
                     cost=None if cost is None else lambda u: cost(api, u))
        if any(unit.id == unit_id for unit, _ in mine):
            return number
    raise AssertionError(f"no shard of {count} owns {unit_id}")


# one process and two workers: the same replay, the first ~50 s; CI runs both
# ~25 s of pytest runs; roundtrip/test_shard_cli.py replays across fuzz shards by default
@pytest.mark.extended
@pytest.mark.parametrize("workers", ["0", "2"])
def test_every_shard_replays_a_failure_another_shard_found(pytester: pytest.Pytester,
                                                           workers: str) -> None:
    """As ``compatfuzz fuzz --shard``: the shard that does not own the failing unit keeps
    it, first, and fails on the failure the first run saved; under xdist too."""
    _frobber(pytester)
    first = _run(pytester, *NO_CACHE, "-n", "0")
    first.assert_outcomes(passed=5, failed=1)
    found = _counterexamples(first)
    owner = _owner(pytester, FAILING, 2)
    for number in (1, 2):
        shard = f"--compatfuzz-shard={number}/2"
        listed = _ids(_run(pytester, *NO_CACHE, "--co", "-q", "-n", "0", shard))
        result = _run(pytester, *NO_CACHE, "-n", workers, "--compatfuzz-max-examples=5",
                      shard)
        assert _counterexamples(result) == found
        result.stdout.fnmatch_lines([f"FAILED compatfuzz.toml::{_glob(FAILING)}*"])
        if number == owner:
            result.assert_outcomes(passed=2, failed=1, deselected=3 if workers == "0" else 0)
            result.stdout.fnmatch_lines([f"compatfuzz: shard {number}/2: 3 compatfuzz items "
                                         "here, 3 deselected (the other shards' units)"])
            continue
        assert listed[0] == FAILING and len(listed) == 4  # the replay first, then its own 3
        result.assert_outcomes(passed=3, failed=1, deselected=2 if workers == "0" else 0)
        result.stdout.fnmatch_lines([
            f"replay: pytest 'compatfuzz.toml::{_glob(FAILING)}'  (another shard's unit, *",
            f"compatfuzz: shard {number}/2: 3 compatfuzz items here, 2 deselected (the other "
            "shards' units), 1 replayed from other shards' saved failures"])


@pytest.mark.extended  # 5 pytest runs, ~70 s; CI runs it
def test_a_fixed_failure_replays_its_saved_examples_only_and_passes(
        pytester: pytest.Pytester) -> None:
    """The converter fixed, the same database: the other shard replays the saved examples
    (not one generated, with a budget of 500) and passes; the replay that passed deleted
    them, so the next run has nothing to replay, says so and drops the unit from the index
    of failing units: the run after that does not keep it."""
    _frobber(pytester)
    db = pytester.path / ".hypothesis" / "examples"
    _run(pytester, *NO_CACHE, "-n", "0").assert_outcomes(passed=5, failed=1)
    entries = sum(1 for f in db.rglob("*") if f.is_file())
    assert _known_failures(db) == 1
    shutil.copy(FROBBER / "compatfuzz.toml", pytester.path / "compatfuzz.toml")  # fixed
    number = 3 - _owner(pytester, FAILING, 2)
    args = (*NO_CACHE, "-n", "0", "-rs", "--compatfuzz-max-examples=500",
            f"--compatfuzz-shard={number}/2", "--compatfuzz-html=report.html")

    def examples(page: str) -> int:
        cell = re.search(r'title="' + re.escape(FAILING.replace(">", "&gt;")) +
                         r'">[^<]*<br>(\d+) examples', page)
        assert cell is not None, page
        return int(cell.group(1))

    fixed = _run(pytester, *args)
    fixed.assert_outcomes(passed=4, deselected=2)
    ran = examples((pytester.path / "report.html").read_text())
    assert 0 < ran < entries  # the saved failure (and the shrinker's), nothing generated
    assert _known_failures(db) == 0
    again = _run(pytester, *args)
    again.assert_outcomes(passed=3, skipped=1, deselected=2)
    # named by the config, not by the plugin's line that skipped
    again.stdout.fnmatch_lines([f"SKIPPED [[]1[]] compatfuzz.toml: {_glob(FAILING)}: *nothing "
                                "to replay; dropped from the list of failing units"])
    assert examples((pytester.path / "report.html").read_text()) == 0
    # dropped from the index: the run after that keeps the shard's own items only
    _run(pytester, *args).assert_outcomes(passed=3, deselected=3)


def test_a_shard_of_one_item_says_item(pytester: pytest.Pytester) -> None:
    _frobber(pytester, "compatfuzz.toml")
    result = _run(pytester, *NO_CACHE, "--co", "-q", "--compatfuzz-shard=1/6")
    result.stdout.fnmatch_lines(["compatfuzz: shard 1/6: 1 compatfuzz item here, 5 "
                                 "deselected (the other shards' units)"])


def test_a_unit_collected_twice_cannot_be_sharded(pytester: pytest.Pytester) -> None:
    _frobber(pytester, "compatfuzz.toml")
    pytester.makepyfile(test_frobber=f"""
        import sys
        sys.path.insert(0, {str(pytester.path)!r})
        import conversion
        from compatfuzz.roundtrip import API

        test_frobber = API.from_crd("frobber", {str(pytester.path / "crd.yaml")!r},
                                    hub="internal", to_hub=conversion.to_hub,
                                    from_hub=conversion.from_hub)
    """)
    result = _run(pytester, *NO_CACHE, "--co", "--compatfuzz-config=compatfuzz.toml",
                  "--compatfuzz-shard=1/2", "test_frobber.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(["*--compatfuzz-shard 1/2: two units have the same id *"
                                 "declare each API once*"])


def test_hypothesis_deadline_is_off_in_every_profile() -> None:
    """Hypothesis's wall-clock ``deadline`` (200 ms) is what flakes under xdist on a busy
    machine; compatfuzz's items bound an example with their own deadline instead."""
    assert [get_profile(name).deadline for name in PROFILES] == [None] * len(PROFILES)


SLOW = '''
"""The frobber's correct converters, made slow: a sleep, or CPU work on a crowded CPU."""
import atexit, os, subprocess, sys, time
import conversion

MODE = os.environ.get("SLOW_MODE", "")
HOG = ("import os, time\\nos.nice(19)\\np = os.getppid()\\nt = time.monotonic()\\n"
       "while os.getppid() == p and time.monotonic() - t < 120:\\n    pass\\n")

if MODE == "cpu" and os.environ.get("PYTEST_XDIST_WORKER"):
    # this worker shares one CPU with eight busy processes (and the other worker), at the
    # same low priority: it waits for the CPU most of the time; done at import, before
    # any example, so starting them is not an example's time
    os.sched_setaffinity(0, {int(os.environ["SLOW_CPU"])})
    os.nice(19)
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(8)]
    atexit.register(lambda: [h.kill() for h in hogs])


def _work():
    if MODE == "sleep":
        time.sleep(5)
    elif MODE == "cpu":  # 160 ms of CPU per call, whatever the wall clock says
        start, end = time.monotonic(), time.thread_time() + 0.16
        while time.thread_time() < end:
            pass
        # the wall-clock time it took, which the test shows is over the deadline
        with open(f"work-{os.getpid()}.log", "a") as log:
            log.write(f"{time.monotonic() - start}\\n")


def to_hub(obj):
    _work()
    return conversion.to_hub(obj)


def from_hub(obj, version):
    return conversion.from_hub(obj, version)
'''


def _slow(pytester: pytest.Pytester) -> None:
    _frobber(pytester, "compatfuzz.toml")
    (pytester.path / "slow.py").write_text(SLOW)
    toml = (pytester.path / "compatfuzz.toml").read_text()
    (pytester.path / "compatfuzz.toml").write_text(toml.replace('"conversion:', '"slow:'))


@pytest.mark.extended  # 80 s of 8 busy processes; CI runs it
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or run_queue_wait(
    __import__("threading").get_native_id()) is None,
    reason="needs Linux's sched_setaffinity and /proc/<pid>/task/<tid>/schedstat")
def test_a_worker_made_slow_by_load_does_not_fail_the_example_deadline(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers squeezed onto one CPU with eight busy processes: an example that needs
    ~0.6 s of CPU takes several seconds of wall-clock time there, over the 3 s deadline.
    Waiting for the CPU is not the example's time, so nothing fails (a wall-clock deadline
    failed both items, as Hypothesis's own deadline does under xdist).  The deadline is
    five times the CPU time an example needs here: a shared CI machine once took 2.5."""
    _slow(pytester)
    deadline = 3
    args = ("-n", "2", "-k", "roundtrip", f"--compatfuzz-example-deadline={deadline}",
            "--compatfuzz-max-examples=2")
    # unloaded first: Hypothesis's first run of a project parses the sources it harvests
    # constants from (an editable compatfuzz's too) into the .hypothesis/constants cache,
    # a second of CPU that would count against an example; it does so at its first draw
    # of a constant (one draw in twenty), so twenty examples, not two
    _run(pytester, *NO_CACHE, *args[:-2], "--compatfuzz-example-deadline=none",
         "--compatfuzz-max-examples=20").assert_outcomes(passed=2)
    assert any((pytester.path / ".hypothesis" / "constants").iterdir())
    monkeypatch.setenv("SLOW_MODE", "cpu")
    monkeypatch.setenv("SLOW_CPU", str(min(os.sched_getaffinity(0))))
    result = _run(pytester, *NO_CACHE, *args)
    assert "per-example deadline" not in result.stdout.str()
    result.assert_outcomes(passed=2)
    # the load did its part: some worker's converters took longer than two deadlines of
    # wall-clock time over its two examples, so one example did outlive the deadline
    walls = [sum(map(float, log.read_text().split()))
             for log in pytester.path.glob("work-*.log")]
    assert len(walls) == 2 and max(walls) > 2 * deadline, walls


@pytest.mark.extended  # faults/test_user_code.py takes the deadline by default
def test_a_sleeping_converter_fails_the_example_deadline_naming_where(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The deadline still counts sleeping (and blocking) time: only waiting for a CPU is
    left out.  One failing item, the session goes on (``ExampleDeadline`` is a
    ``KeyboardInterrupt``, which would otherwise end it)."""
    _slow(pytester)
    monkeypatch.setenv("SLOW_MODE", "sleep")
    result = _run(pytester, *NO_CACHE, "-n", "2", "-k", "roundtrip",
                  "--compatfuzz-example-deadline=1", "--compatfuzz-max-examples=2")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*: TimeoutError: an example took longer than the 1s per-example deadline "
        "(stuck in slow.py:* in _work()); *(raise it with --compatfuzz-example-deadline="
        "SECONDS, or 'none' to disable it)"])
    # Hypothesis stopped at once and saved nothing: the replay line promises no database
    assert "replays the failing example first" not in result.stdout.str()


@pytest.mark.parametrize("value", ["abc", "-1", "inf"])
def test_bad_example_deadline_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    _frobber(pytester, "compatfuzz.toml")
    result = _run(pytester, *NO_CACHE, f"--compatfuzz-example-deadline={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--compatfuzz-example-deadline expects seconds (like 10 or "
                                 "10s) or 'none'*"])


def test_no_deadline_with_none(pytester: pytest.Pytester) -> None:
    _frobber(pytester, "compatfuzz.toml")
    result = _run(pytester, *NO_CACHE, "--compatfuzz-example-deadline=none", "-k",
                  "valid", "--compatfuzz-max-examples=3", "-n", "0")
    result.assert_outcomes(passed=2, deselected=4)


RACE = '''
"""Another job saves a failure in the shared database after gw0 read the index, before
gw1 does (the marker file orders them)."""
import os, pathlib, time
import pytest
from hypothesis.database import DirectoryBasedExampleDatabase
from compatfuzz.roundtrip._engine._database import namespaced

MARK = pathlib.Path("gw0-has-read")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker == "gw1":
        end = time.monotonic() + 60
        while not MARK.exists() and time.monotonic() < end:
            time.sleep(0.05)
        db = DirectoryBasedExampleDatabase(".hypothesis/examples")
        namespaced(db, os.environ["RACE_UNIT"]).save(b"k", b"v")
    result = yield
    if worker == "gw0":
        MARK.touch()
    return result
'''


@pytest.mark.extended  # a race kept out by design; the saved-once test covers the replay
def test_a_failure_saved_while_workers_collect_does_not_split_their_collections(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two xdist workers of shard 1/2 read the shared database's index of failing units
    while another job saves one between their reads: each kept what it read, their
    collections differed and xdist refused the run. The workers now keep what the first
    one read: the run goes on, and the next one replays the new failure."""
    _frobber(pytester, "compatfuzz.toml")
    other = 3 - _owner(pytester, FAILING, 2)
    (pytester.path / "conftest.py").write_text(RACE)
    monkeypatch.setenv("RACE_UNIT", FAILING)
    shard = f"--compatfuzz-shard={other}/2"
    result = _run(pytester, *NO_CACHE, "-n", "2", "--compatfuzz-max-examples=2", shard)
    assert "Different tests were collected" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([f"compatfuzz: shard {other}/2: 3 compatfuzz items here, "
                                 "3 deselected (the other shards' units)"])
    (pytester.path / "conftest.py").unlink()
    again = _run(pytester, *NO_CACHE, "-n", "2", "--compatfuzz-max-examples=2", "-rs", shard)
    again.stdout.fnmatch_lines([f"compatfuzz: shard {other}/2: 3 compatfuzz items here, "
                                "2 deselected (the other shards' units), 1 replayed from "
                                "other shards' saved failures"])


@pytest.mark.extended  # ~40 s; CI runs it
def test_a_matrix_of_pytest_jobs_shares_one_redis_database(
        pytester: pytest.Pytester, real_redis: tuple[str, subprocess.Popen[bytes]]) -> None:
    """``--compatfuzz-database redis://...``, as ``compatfuzz fuzz --database``: the failure
    one job saves is replayed first by a job on another machine (nothing on disk: the
    folder database is deleted between the runs), under xdist too; a Redis that does not
    answer is one usage error."""
    url, _ = real_redis
    _frobber(pytester)
    database = f"--compatfuzz-database={url}"
    _run(pytester, *NO_CACHE, "-n", "0", database).assert_outcomes(passed=5, failed=1)
    shutil.rmtree(pytester.path / ".hypothesis", ignore_errors=True)
    other = 3 - _owner(pytester, FAILING, 2)
    result = _run(pytester, *NO_CACHE, "-n", "2", "--compatfuzz-max-examples=5",
                  f"--compatfuzz-shard={other}/2", database)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([f"compatfuzz: shard {other}/2: 3 compatfuzz items here, "
                                 "2 deselected (the other shards' units), 1 replayed from "
                                 "other shards' saved failures"])
    # the replay command names the database that holds the example
    result.stdout.fnmatch_lines([f"replay: pytest '*' {database}  (another shard's unit*"])
    (pytester.path / "plain").write_text("not a folder\n")
    not_dir = _run(pytester, *NO_CACHE, "-n", "0", "--compatfuzz-database=plain/db")
    assert not_dir.ret == pytest.ExitCode.USAGE_ERROR
    not_dir.stderr.fnmatch_lines(["*--compatfuzz-database plain/db: plain is a file, not a "
                                  "folder; pass a folder (made if missing), *"])
    gone = _run(pytester, *NO_CACHE, "-n", "0", "--compatfuzz-database=redis://127.0.0.1:1/0")
    assert gone.ret == pytest.ExitCode.USAGE_ERROR
    gone.stderr.fnmatch_lines(["*--compatfuzz-database: cannot reach the Redis example "
                               "database 'redis://127.0.0.1:1/0' (*); start redis-server "
                               "there, or pass a directory"])


KILL_REDIS = '''
import os, signal
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    pid = int(os.environ["REDIS_PID"])
    try:
        os.kill(pid, signal.SIGKILL)  # gone before the first item runs
    except ProcessLookupError:
        pass
'''


# faults/test_redis.py takes a Redis outage by default
@pytest.mark.extended
@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_redis_that_stops_answering_is_said_and_the_replay_line_follows(
        pytester: pytest.Pytester, real_redis: tuple[str, subprocess.Popen[bytes]],
        monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    """Redis answers at the start, then dies: the run goes on with the config's folder
    (as ``compatfuzz fuzz``), says so once, and the failure's replay line says the example
    is only there, not in Redis (it said "from the example database")."""
    url, proc = real_redis
    _frobber(pytester)
    (pytester.path / "conftest.py").write_text(KILL_REDIS)
    monkeypatch.setenv("REDIS_PID", str(proc.pid))
    result = _run(pytester, *NO_CACHE, "-n", workers, f"--compatfuzz-database={url}")
    result.assert_outcomes(passed=5, failed=1)
    out = result.stdout.str()
    assert out.count(f"compatfuzz: note: the example database {url} stopped answering") == 1
    result.stdout.fnmatch_lines([f"replay: pytest '*{_glob(FAILING)}'  (the shared example "
                                 "database stopped answering: saved only in *.hypothesis"
                                 "/examples, which this command replays first)"])
    assert "--compatfuzz-database=" not in out.split("replay: pytest", 1)[1].splitlines()[0]
