"""pytest plugin for compatfuzz (registered through the ``pytest11`` entry point).

With a ``compatfuzz.toml`` (or ``[tool.compatfuzz]`` in ``pyproject.toml``), or with a
module-level ``test_* = API(...)`` (or any ``roundtrip.Suite``, e.g. a protobuf
``ProtoAPI``) in a test module, pytest collects one test per (api, property, version
pair), with ids like ``frobber::roundtrip[v7beta1->v6]``.
Each is the same Hypothesis ``@given`` test that ``compatfuzz fuzz`` runs, sharing its
example database, so a failure the nightly job found is replayed first here.

Imports only the standard library and pytest at load time (STYLE.md 14): compatfuzz,
Hypothesis and the schema stack are imported inside hooks, and only once a compatfuzz
test is actually collected, so installing compatfuzz costs nothing elsewhere.

Under pytest-xdist (``-n auto``) every worker is its own process with its own
collection, so the plugin keeps four things worker-independent:

* the example database: each worker opens the same folder (the config's, as without
  xdist), and each unit's examples sit under its own key (the unit id), so a failure is
  saved once, by the worker that ran the unit, and replayed by whichever worker runs that
  unit next;
* the seed: the controller resolves ``--compatfuzz-seed`` (``last`` included) once and
  hands it to every worker in ``workerinput`` (xdist's ``pytest_configure_node``, as
  pytest-randomly passes its seed); a unit's seed is derived from that seed and the unit
  id only (``roundtrip._engine._runner.unit_seed``), never from the worker or the order;
* under ``--compatfuzz-shard``, the other shards' units kept to replay: the first worker
  to read the example database's index publishes what it found and every worker keeps
  that (``_agreed``), so another job saving a failure meanwhile cannot make the workers'
  collections differ, which xdist refuses;
* the ``--compatfuzz-html`` rows: a worker attaches its unit's row to the test report
  (``report.__dict__``, which xdist serialises, as Hypothesis's plugin does with its
  statistics in ``_hypothesis_pytestplugin.py``) and the controller writes one page.

Hypothesis's own ``deadline`` is off in every compatfuzz profile (``_profiles``): a
wall-clock limit of 200 ms per example is what makes ``DeadlineExceeded``/``Flaky``
failures appear only on a loaded CI machine or a busy xdist worker.

``--compatfuzz-shard K/N`` keeps the compatfuzz items of shard K of N (the split of
``roundtrip._engine._shard.split`` keyed by unit id, as ``compatfuzz fuzz --shard``) and
deselects the others, so a CI matrix of N pytest jobs runs every unit once.  As
``fuzz --shard`` does (``roundtrip._engine._runner._shard_plan``), an item of another shard whose
unit saved a failure in the example database it uses (the index
``roundtrip._engine._database.units_with_failures`` reads) is kept, placed before the shard's own
items and run replay-only (Hypothesis's ``explicit`` and ``reuse`` phases: the saved
examples, no generation), so a failure one shard found fails every shard's next run.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

OPTION_PROFILE = "--compatfuzz-profile"
OPTION_MAX_EXAMPLES = "--compatfuzz-max-examples"
OPTION_SEED = "--compatfuzz-seed"
OPTION_CONFIG = "--compatfuzz-config"
OPTION_HTML = "--compatfuzz-html"
OPTION_APISERVER = "--compatfuzz-apiserver"
OPTION_APISERVER_ASSETS = "--compatfuzz-apiserver-assets"
OPTION_SHARD = "--compatfuzz-shard"
OPTION_EXAMPLE_DEADLINE = "--compatfuzz-example-deadline"
OPTION_DATABASE = "--compatfuzz-database"
INI_PROFILE = "compatfuzz_profile"
INI_MAX_EXAMPLES = "compatfuzz_max_examples"
ENV_PROFILE = "COMPATFUZZ_PROFILE"
PROFILES = ("default", "ci", "nightly")
CACHE_SEED = "compatfuzz/seed"
MARKER = "compatfuzz"
#: The ``workerinput`` key the xdist controller passes its resolved seed in.
WORKER_SEED = "compatfuzz_seed"
#: The ``workerinput`` key the xdist controller passes a folder in, where the first worker
#: publishes which other shards' units it keeps to replay and the others read it.
WORKER_AGREE = "compatfuzz_agree"
#: The ``workeroutput`` key a worker sends its databases' notices in (a shared database
#: that stopped answering), for the controller to print.
WORKER_NOTICES = "compatfuzz_notices"
#: The ``workeroutput`` key a worker sends its shard's (kept, deselected, replayed) counts
#: back in.
WORKER_SHARD = "compatfuzz_shard"
#: The test report attribute that carries a unit's ``--compatfuzz-html`` row.
REPORT_ROW = "compatfuzz_row"

_SEED = pytest.StashKey[int]()
_SEED_EXPLICIT = pytest.StashKey[bool]()
_COLLECTED = pytest.StashKey[set[str]]()
_SERVER = pytest.StashKey[dict[str, Any]]()
_SHARD = pytest.StashKey[Any]()
#: ``--compatfuzz-shard``: (own items, deselected items, other shards' items replayed)
_SHARD_COUNTS = pytest.StashKey[tuple[int, int, int]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("compatfuzz", "API compatibility")
    group.addoption(OPTION_PROFILE, choices=PROFILES, default=None,
                    help=f"settings profile for compatfuzz tests (env {ENV_PROFILE}; "
                    "default: default)")
    group.addoption(OPTION_MAX_EXAMPLES, type=int, default=None, metavar="N",
                    help="examples per compatfuzz property (overrides the profile)")
    group.addoption(OPTION_SEED, default=None, metavar="SEED|last",
                    help="seed for an exact replay of compatfuzz tests (bypasses the "
                    "example database); 'last' reuses the last seed given")
    group.addoption(OPTION_CONFIG, default=None, metavar="FILE",
                    help="compatfuzz.toml to collect (default: the one in the rootdir)")
    group.addoption(OPTION_HTML, default=None, metavar="FILE",
                    help="write the compatfuzz HTML report (version-pair matrix, "
                    "counterexamples, replay commands) of this run to FILE")
    group.addoption(OPTION_APISERVER, choices=("model", "real", "both"), default=None,
                    help="who judges CRD round trips: the API-server model (default, or "
                    "each API's apiserver = ...), a kube-apiserver and etcd started once "
                    "for the session, or both with every disagreement a failure")
    group.addoption(OPTION_APISERVER_ASSETS, default=None, metavar="DIR",
                    help="folder with kube-apiserver and etcd, after TEST_ASSET_* and "
                    "KUBEBUILDER_ASSETS")
    group.addoption(OPTION_EXAMPLE_DEADLINE, default="10s", metavar="SECONDS|none",
                    help="fail a compatfuzz property whose one example takes longer "
                    "(default 10s, as compatfuzz fuzz --example-deadline; time spent "
                    "waiting for a CPU on a loaded machine does not count)")
    group.addoption(OPTION_DATABASE, default=None, metavar="DIR|redis://HOST:PORT/DB",
                    help="the example database of compatfuzz tests, as compatfuzz fuzz "
                    "--database (default: the profile's, or .hypothesis/examples beside "
                    "the config); one Redis shared by the jobs of a CI matrix")
    group.addoption(OPTION_SHARD, default=None, metavar="K/N",
                    help="run only shard K of N of the compatfuzz items (the split "
                    "'compatfuzz fuzz --shard K/N' makes; other tests are not affected), "
                    "for a CI matrix of N pytest jobs")
    try:
        parser.addini(INI_PROFILE, help="default compatfuzz profile",
                      type=Literal["default", "ci", "nightly"],
                      default="default")
        parser.addini(INI_MAX_EXAMPLES, help="examples per compatfuzz property",
                      type=int, default=0)
    except (TypeError, ValueError, AssertionError):  # pytest < 9.2: untyped ini keys (8.3 asserts)
        parser.addini(INI_PROFILE, help="default compatfuzz profile", default="default")
        parser.addini(INI_MAX_EXAMPLES, help="examples per compatfuzz property", default="0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: a compatfuzz round-trip property (added automatically)"
    )
    raw = config.getoption(OPTION_SEED)
    explicit = raw is not None
    seed: int | None = None
    if raw == "last":
        cache = getattr(config, "cache", None)  # absent with -p no:cacheprovider
        cached = cache.get(CACHE_SEED, None) if cache is not None else None
        seed = int(cached) if cached is not None else None
    elif raw is not None:
        try:
            seed = int(raw)
        except ValueError:
            raise pytest.UsageError(
                f"{OPTION_SEED} expects an integer or 'last', got {raw!r}"
            ) from None
    if seed is None:
        # No seed: Hypothesis picks one per test and the example database replays
        # earlier failures (an explicit seed, like @seed, bypasses the database).
        explicit = False
        seed = 0
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and WORKER_SEED in workerinput:
        # an xdist worker: the controller's seed, resolved once ("last" read once)
        seed, explicit = workerinput[WORKER_SEED]
    elif workerinput is None and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config), "compatfuzz-xdist")
    config.stash[_SEED] = seed
    config.stash[_SEED_EXPLICIT] = explicit
    config.stash[_SHARD] = _shard_option(config)
    if config.getoption(OPTION_HTML) and workerinput is None:
        config.pluginmanager.register(_HtmlRows(config), "compatfuzz-html-rows")
    config.stash[_COLLECTED] = set()
    config.stash[_ROWS] = []
    # Check the other settings now: a bad value found inside a test's runtest would
    # surface as an INTERNALERROR instead of a usage error.
    _profile(config)
    _max_examples(config)
    _example_deadline(config)
    _check_config_option(config)
    _check_database_option(config)
    cache = getattr(config, "cache", None)
    if cache is not None and explicit and workerinput is None:
        cache.set(CACHE_SEED, seed)


class _XdistHooks:
    """Registered on the xdist controller only (STYLE.md 16: the hook spec exists only
    when xdist is installed)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.agree: str | None = None

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_SEED] = (self.config.stash[_SEED],
                                         self.config.stash[_SEED_EXPLICIT])
        if self.config.stash.get(_SHARD, None) is not None:
            if self.agree is None:
                import tempfile

                self.agree = tempfile.mkdtemp(prefix="compatfuzz-xdist-")
            node.workerinput[WORKER_AGREE] = self.agree

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.agree is not None:
            import shutil

            shutil.rmtree(self.agree, ignore_errors=True)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # every worker's (the same Redis, the same words): pytest_terminal_summary says
        # each once
        self.config.stash.setdefault(_NOTICES, []).extend(
            map(str, getattr(node, "workeroutput", {}).get(WORKER_NOTICES, ())))
        counts = getattr(node, "workeroutput", {}).get(WORKER_SHARD)
        if counts:  # every worker computed the same split: any one tells
            self.config.stash[_SHARD_COUNTS] = (int(counts[0]), int(counts[1]),
                                                int(counts[2]))


_NOTICES = pytest.StashKey[list[str]]()


def _database_notices(config: pytest.Config) -> list[str]:
    """What this process's example databases have to say: a shared database that
    stopped answering mid-run (``roundtrip._engine._database.FallbackDatabase``), an entry that
    was skipped (``GuardedDirectoryDatabase``)."""
    return [db.notice for db in config.stash.get(_DATABASES, {}).values()
            if getattr(db, "notice", None)]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """A shared example database that stopped answering (as ``compatfuzz fuzz`` says it),
    and under ``--compatfuzz-shard``: how many compatfuzz items this shard ran, left to
    the others and replayed from the others' saved failures (under xdist pytest's own
    "deselected" count stays in the workers)."""
    if hasattr(config, "workerinput"):
        return
    for notice in dict.fromkeys([*_database_notices(config),
                                 *config.stash.get(_NOTICES, [])]):
        terminalreporter.write_line(f"compatfuzz: note: {notice}")
    shard = config.stash.get(_SHARD, None)
    counts = config.stash.get(_SHARD_COUNTS, None)
    if shard is None or counts is None:
        return
    mine, deselected, replayed = counts
    line = (f"compatfuzz: shard {shard}: {mine} compatfuzz item{'' if mine == 1 else 's'} "
            f"here, {deselected} deselected (the other shards' units)")
    if replayed:
        line += f", {replayed} replayed from other shards' saved failures"
    terminalreporter.write_line(line)


def _shard_option(config: pytest.Config) -> Any:
    """``--compatfuzz-shard K/N`` as a ``Shard`` (``None`` without the option)."""
    raw = config.getoption(OPTION_SHARD)
    if raw is None:
        return None
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._engine._shard import parse_shard

    try:
        return parse_shard(raw, option=OPTION_SHARD)
    except InvalidArgument as exc:  # the message names the option and the fix
        raise pytest.UsageError(str(exc)) from None


_LOADED = pytest.StashKey[dict[str, Any]]()
_ROWS = pytest.StashKey[list[tuple[Any, dict[str, Any]]]]()


_DATABASES = pytest.StashKey[dict[str, Any]]()


def _check_database_option(config: pytest.Config) -> None:
    """Open ``--compatfuzz-database`` now: a Redis that does not answer or a bad URL is
    one usage error (exit 4), not an error per item."""
    config.stash[_DATABASES] = {}
    spec = config.getoption(OPTION_DATABASE)
    if not spec:
        return
    if spec.lower() != "none" and spec != ":memory:" and "://" not in spec:
        # a folder (made if missing): Hypothesis would ignore every failed write to a file
        path = Path(spec)
        blocker = next((p for p in (path, *path.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise pytest.UsageError(
                f"{OPTION_DATABASE} {spec}: {blocker} is a file, not a folder; pass a "
                "folder (made if missing), redis://HOST:PORT/DB or none")
    _database_option(config, Path(config.rootpath))


def _database_option(config: pytest.Config, home: Path) -> Any:
    """The database ``--compatfuzz-database`` names, opened once per project folder (a
    Redis database's local fallback is that folder's, as ``compatfuzz fuzz``'s is)."""
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._engine._database import open_database

    opened = config.stash[_DATABASES]
    key = str(home)
    if key not in opened:
        spec = config.getoption(OPTION_DATABASE)
        try:
            opened[key] = open_database(spec, home=home)
        except InvalidArgument as exc:
            raise pytest.UsageError(
                f"{OPTION_DATABASE}: {str(exc).replace('--database ', '')}") from None
    return opened[key]


def _check_config_option(config: pytest.Config) -> None:
    """Load ``--compatfuzz-config`` now: a missing or broken file is a usage error (exit
    4), not an INTERNALERROR from inside collection."""
    config.stash[_LOADED] = {}
    explicit = config.getoption(OPTION_CONFIG)
    if not explicit:
        return
    path = Path(explicit).resolve()
    if not path.is_file():
        raise pytest.UsageError(
            f"{OPTION_CONFIG} {explicit}: "
            + ("is a folder, not a config file" if path.is_dir() else "file not found")
            + "; pass the path of a compatfuzz.toml (or a pyproject.toml with "
            "[tool.compatfuzz])"
        )
    config.stash[_LOADED][str(path)] = _load(path)


def _load(path: Path) -> Any:
    """``load_config(path)`` with compatfuzz's errors turned into pytest usage errors."""
    from compatfuzz.errors import CompatfuzzError
    from compatfuzz.roundtrip import load_config

    try:
        return load_config(path)
    except CompatfuzzError as exc:
        raise pytest.UsageError(f"{OPTION_CONFIG}: {exc}") from None


def _profile(config: pytest.Config) -> str:
    value = (config.getoption(OPTION_PROFILE) or os.environ.get(ENV_PROFILE)
             or config.getini(INI_PROFILE) or "default")
    if value not in PROFILES:
        raise pytest.UsageError(
            f"compatfuzz profile must be one of {', '.join(PROFILES)}, got {value!r} (from "
            f"{OPTION_PROFILE}, ${ENV_PROFILE} or the ini key {INI_PROFILE}, in that order)"
        )
    return str(value)


def _max_examples(config: pytest.Config) -> int | None:
    value = config.getoption(OPTION_MAX_EXAMPLES)
    if value is not None:
        if value < 1:
            raise pytest.UsageError(
                f"{OPTION_MAX_EXAMPLES} expects a positive integer, got {value}; "
                f"leave it out to use the profile's budget"
            )
        return int(value)
    raw = config.getini(INI_MAX_EXAMPLES) or 0  # 0: unset, use the profile's
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise pytest.UsageError(
            f"ini {INI_MAX_EXAMPLES} expects a positive integer (0 for the profile's "
            f"budget), got {raw!r}"
        )
    return value or None


def _example_deadline(config: pytest.Config) -> float | None:
    """``--compatfuzz-example-deadline``: seconds (``10``, ``10s``, ``1.5``) or ``None``."""
    raw = str(config.getoption(OPTION_EXAMPLE_DEADLINE)).strip().lower()
    if raw in ("none", "off", "0"):
        return None
    try:
        value = float(raw.removesuffix("s"))
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise pytest.UsageError(
            f"{OPTION_EXAMPLE_DEADLINE} expects seconds (like 10 or 10s) or 'none', got "
            f"{raw!r}")
    return value


def _root_config(config: pytest.Config) -> Path | None:
    explicit = config.getoption(OPTION_CONFIG)
    if explicit:
        return Path(explicit).resolve()
    # The search `compatfuzz fuzz` makes (roundtrip.find_config), from the rootdir up, so
    # `pytest` in a subfolder of the project finds the config too; stdlib only (STYLE 14).
    root = Path(config.rootpath).resolve()
    for folder in (root, *root.parents):
        candidate = folder / "compatfuzz.toml"
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():  # the project's root: the search stops here
            return pyproject if _declares_compatfuzz(pyproject) else None
    return None


def _declares_compatfuzz(path: Path) -> bool:
    if path.name == "compatfuzz.toml":
        return path.is_file()
    if path.name != "pyproject.toml" or not path.is_file():
        return False
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return "[tool.compatfuzz" in text or "[[tool.compatfuzz" in text


def _real_server(config: pytest.Config, api: Any) -> None:
    """One kube-apiserver and etcd for the whole session, started by the first item that
    needs one (``--compatfuzz-apiserver``, or the API's ``apiserver =``); each API's CRDs
    installed once. A start that failed fails every such item with the same message."""
    from compatfuzz.roundtrip import API

    if not isinstance(api, API):
        return
    from compatfuzz.roundtrip._check._real import RunServer, set_mode

    if not set_mode([api], config.getoption(OPTION_APISERVER)):
        return
    state = config.stash.setdefault(_SERVER, {})
    if "error" in state:
        pytest.fail(state["error"], pytrace=False)
    if "server" not in state:
        state["server"] = RunServer(assets_dir=config.getoption(OPTION_APISERVER_ASSETS))
    from compatfuzz.errors import CompatfuzzError

    try:
        state["server"].ensure(api)
    except CompatfuzzError as exc:
        if state["server"].endpoint is None:
            state["error"] = f"compatfuzz: the real API server did not start: {exc}"
            pytest.fail(state["error"], pytrace=False)
        pytest.fail(f"compatfuzz: {exc}", pytrace=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_SERVER, {})
    if "server" in state:
        state.pop("server").stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None],
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if (report.skipped and getattr(item, "replay_only", False)
            and isinstance(report.longrepr, tuple)):
        # "SKIPPED lossy.toml: ...", not the plugin's line that called pytest.skip; a
        # config has no line to name, and pytest's terminal (show_skipped) prints none
        # for None, which its annotation leaves out
        report.longrepr = (str(item.path), None, report.longrepr[2])  # type: ignore[assignment]
    row = getattr(item, "html_row", None)
    if row is not None and call.when == "call":
        # in the report's __dict__, which xdist sends to the controller as it is
        report.__dict__[REPORT_ROW] = row
    return report


class _HtmlRows:
    """Collects ``--compatfuzz-html`` rows where the reports meet: in the xdist controller
    (a worker's own list would hold only its units), in the one process without xdist."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = getattr(report, REPORT_ROW, None)
        if row is not None:
            self.config.stash[_ROWS].append((_unit_of(row), row))


def _unit_of(row: dict[str, Any]) -> Any:
    """The ``Unit`` a report row describes (rows cross the xdist channel as JSON)."""
    from compatfuzz.roundtrip._events import Property, Unit

    bare = f"{row['api']}::{row['property']}[{'->'.join(row['versions'])}]"
    return Unit(row["api"], row["kind"], Property(row["property"]), tuple(row["versions"]),
                show_kind=row["id"] != bare)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """``--compatfuzz-html FILE``: the same page as ``compatfuzz fuzz --html``."""
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # the controller prints them (pytest_terminal_summary)
        workeroutput[WORKER_NOTICES] = _database_notices(config)
    target = config.getoption(OPTION_HTML)
    rows = config.stash.get(_ROWS, [])
    if not target or not rows or hasattr(config, "workerinput"):
        return  # an xdist worker's rows went to the controller, which writes the page
    import datetime

    from compatfuzz import __version__
    from compatfuzz.roundtrip._reports._html import render_html
    from compatfuzz.roundtrip._reports._report import atomic_write

    summary: dict[str, int] = {}
    for _, row in rows:
        summary[row["status"]] = summary.get(row["status"], 0) + 1
    seed = config.stash[_SEED] if config.stash[_SEED_EXPLICIT] else None
    doc = {"compatfuzz": __version__, "profile": _profile(config), "seed": seed,
           "max_examples": _max_examples(config), "workers": 1, "database": "pytest",
           "status": "failed" if summary.get("failed") else "passed",
           "stop_reason": "completed", "summary": summary, "units": [r for _, r in rows],
           "updated": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    path = Path(config.invocation_params.dir) / target
    atomic_write(path, render_html(doc, [unit for unit, _ in rows]))


def pytest_report_header(config: pytest.Config) -> str | None:
    if _root_config(config) is None and "compatfuzz.roundtrip" not in sys.modules:
        return None
    if config.stash[_SEED_EXPLICIT]:
        seed = config.stash[_SEED]
        return (f"compatfuzz: profile={_profile(config)}, seed={seed} "
                f"(reproduce with {OPTION_SEED}={seed})")
    return (f"compatfuzz: profile={_profile(config)}, seed=random (failures replay from "
            f"the example database; {OPTION_SEED}=N for an exact replay)")


def _named_on_command_line(config: pytest.Config, path: Path) -> bool:
    """``pytest lossy.toml``: any TOML file the user names explicitly may be a config."""
    if path.suffix != ".toml" or config.args_source is not pytest.Config.ArgsSource.ARGS:
        return False
    wanted = path.resolve()
    return any(arg == wanted for arg in _arg_paths(config))


def _arg_paths(config: pytest.Config) -> list[Path]:
    """The files and folders named on the command line (node ids cut at ``::``)."""
    base = Path(config.invocation_params.dir)
    return [(base / arg.split("::")[0]).resolve() for arg in config.args]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    explicit = _named_on_command_line(parent.config, file_path)
    if (file_path.name in ("compatfuzz.toml", "pyproject.toml") or explicit) and (
            explicit or _declares_compatfuzz(file_path)):
        return ConfigFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str,
                              obj: object) -> pytest.Collector | None:
    if "compatfuzz.roundtrip" not in sys.modules or not name.startswith("test"):
        return None
    from compatfuzz.roundtrip import API, Suite

    if isinstance(obj, (API, Suite)):
        return APINode.from_parent(collector, name=obj.name, api=obj)
    return None


@pytest.hookimpl(tryfirst=True)  # before -k/-m and other plugins filter the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Add APIs declared in conftest.py files, and the rootdir's config when the run was
    not narrowed to explicit paths."""
    items.extend(_conftest_items(session))
    path = _root_config(config)
    if path is None or str(path) in config.stash[_COLLECTED]:
        return
    if config.args_source is pytest.Config.ArgsSource.ARGS and not config.getoption(
            OPTION_CONFIG):
        return
    from compatfuzz.errors import CompatfuzzError

    try:
        node: dict[str, Any] = {}
        root = Path(config.rootpath).resolve()
        if not path.is_relative_to(root):
            # found above the rootdir (pytest run in a subfolder): name it as a path from
            # the rootdir, which pytest takes back as an argument (`../../compatfuzz.toml`),
            # not pytest's default "::compatfuzz.toml", which it refuses
            node["nodeid"] = os.path.relpath(path, root).replace(os.sep, "/")
        _extend(items, ConfigFile.from_parent(session, path=path, **node))
    except CompatfuzzError as exc:  # raised in a hook, it would be an INTERNALERROR
        raise pytest.UsageError(f"compatfuzz config {path}: {exc}") from None
    except pytest.Collector.CollectError as exc:
        raise pytest.UsageError(str(exc.args[0] if exc.args else exc)) from None


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--compatfuzz-shard K/N``: deselect the compatfuzz items of the other shards.

    After ``-k``/``-m``/``--lf`` (trylast), so the N jobs of a matrix split what they
    would all run; every job computes the same split from the same items, and xdist's
    workers each compute it too, so no coordinator is needed.  Other tests stay.
    """
    shard = config.stash.get(_SHARD, None)
    if shard is None:
        return
    from compatfuzz.errors import InvalidArgument
    from compatfuzz.roundtrip._engine._shard import split

    ours = [item for item in items if isinstance(item, PropertyItem)]
    try:
        mine = split(ours, shard, key=lambda item: item.unit.id, cost=_unit_cost())
    except InvalidArgument as exc:  # one unit collected twice (config and test module)
        twice = sorted({i.nodeid for i in ours
                        if sum(j.unit.id == i.unit.id for j in ours) > 1})
        raise pytest.UsageError(
            f"{OPTION_SHARD} {shard}: {exc}: {', '.join(twice)}; declare each API once "
            "(in the config or in a test module) or narrow the run to one of them"
        ) from None
    kept: set[int] = set()
    for item, copy in mine:
        item.copy = copy
        kept.add(id(item))
    replay = _with_saved_failures(config, [item for item in ours if id(item) not in kept])
    agreed = set(_agreed(config, "replay", sorted(item.unit.id for item in replay)))
    replay = [item for item in ours if id(item) not in kept and item.unit.id in agreed]
    for item in replay:
        item.replay_only = True
        kept.add(id(item))
    deselected = [item for item in ours if id(item) not in kept]
    config.stash[_SHARD_COUNTS] = (len(mine), len(deselected), len(replay))
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # xdist reports no worker's deselections: say it ourselves
        workeroutput[WORKER_SHARD] = [len(mine), len(deselected), len(replay)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    # The replays first, where the first compatfuzz item was: every xdist worker computes
    # this same order (its collections must agree), and xdist hands items out from the
    # front of it.
    ordered: list[pytest.Item] = []
    for node in items:
        if isinstance(node, PropertyItem):
            if id(node) not in kept:
                continue
            if replay:
                ordered.extend(replay)
                replay = []
            if node.replay_only:
                continue  # placed above
        ordered.append(node)
    items[:] = ordered


def _agreed(config: pytest.Config, name: str, mine: list[str]) -> list[str]:
    """``mine``, or under xdist what the first worker to get here found.

    xdist refuses a run whose workers collected different items, and the other shards'
    units a shard keeps to replay come from the example database, which another job that
    shares it (one Redis for a CI matrix) can change between two workers' reads.  So the
    first worker publishes its answer with a hard link (the whole file or nothing; refused
    when one is there) in the folder the controller made for the run, and every worker
    keeps that answer.  Where no link can be made, each keeps its own, as before."""
    import json

    folder = getattr(config, "workerinput", {}).get(WORKER_AGREE)
    if not folder:
        return mine
    final = Path(folder) / name
    draft = Path(folder) / f"{name}.{os.getpid()}"
    try:
        draft.write_text(json.dumps(mine), encoding="utf-8")
        try:
            os.link(draft, final)
        except FileExistsError:
            pass  # another worker was first
        finally:
            draft.unlink(missing_ok=True)
        answer = json.loads(final.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return mine
    if not isinstance(answer, list) or not all(isinstance(u, str) for u in answer):
        return mine
    return answer


def _with_saved_failures(config: pytest.Config, items: list[Any]) -> list[Any]:
    """The ``items`` whose unit saved a failure in the example database that item runs
    with (``roundtrip._engine._database.units_with_failures``: one index read per database, not
    one test built per unit), in ``items``' order."""
    from compatfuzz.roundtrip import get_profile
    from compatfuzz.roundtrip._engine._database import units_with_failures

    base = get_profile(_profile(config))
    groups: list[tuple[Any, list[Any]]] = []  # (database, its items): usually one group
    for item in items:
        db = _item_database(item, base)
        if db is None:
            continue
        for known, members in groups:
            if known == db:
                members.append(item)
                break
        else:
            groups.append((db, [item]))
    found: set[int] = set()
    for db, members in groups:
        failing = units_with_failures(db, [item.unit.id for item in members])
        found.update(id(item) for item in members if item.unit.id in failing)
    return [item for item in items if id(item) in found]


def _unit_cost() -> Any:
    """The expected cost of an item's unit, as ``compatfuzz fuzz --shard`` balances it
    (``roundtrip._engine._runner.unit_cost``), so that pytest's shard K runs the
    units fuzz's shard K runs; every unit costs the same where that function is absent."""
    import importlib

    runner = importlib.import_module("compatfuzz.roundtrip._engine._runner")
    unit_cost = getattr(runner, "unit_cost", None)
    if unit_cost is None:
        return None
    return lambda item: float(unit_cost(item.api, item.unit))


def _extend(items: list[pytest.Item], node: pytest.Collector) -> None:
    for child in node.collect():
        if isinstance(child, pytest.Collector):
            items.extend(i for i in child.collect() if isinstance(i, pytest.Item))
        elif isinstance(child, pytest.Item):
            items.append(child)


def _conftest_items(session: pytest.Session) -> list[pytest.Item]:
    """``test* = API(...)`` declared in conftest.py files, which pytest never collects as
    test modules; only for conftests inside the folders the run covers."""
    if "compatfuzz.roundtrip" not in sys.modules:
        return []
    config = session.config
    narrowed = config.args_source is pytest.Config.ArgsSource.ARGS
    roots = _arg_paths(config)
    items: list[pytest.Item] = []
    for plugin in config.pluginmanager.get_plugins():
        file = getattr(plugin, "__file__", None)
        if not file or Path(file).name != "conftest.py":
            continue
        path = Path(file).resolve()
        if narrowed and not any(path.parent.is_relative_to(r) for r in roots if r.is_dir()):
            continue
        if str(path) not in config.stash[_COLLECTED]:
            config.stash[_COLLECTED].add(str(path))
            _extend(items, ConftestAPIs.from_parent(session, path=path, module=plugin))
    return items


class ConfigFile(pytest.File):
    """A compatfuzz config: one child per declared API."""

    def collect(self) -> Iterator[pytest.Collector]:
        from compatfuzz.roundtrip import load_config

        # Marked here, not in pytest_collect_file: pytest also creates nodes for files
        # next to a testpaths folder and then drops them.
        self.config.stash[_COLLECTED].add(str(self.path.resolve()))
        from compatfuzz.errors import CompatfuzzError

        loaded = self.config.stash[_LOADED].get(str(self.path.resolve()))
        if loaded is None:
            try:
                loaded = load_config(self.path)
            except CompatfuzzError as exc:
                # the message names file, key and fix: no compatfuzz frames before it
                raise self.CollectError(f"compatfuzz config: {exc}") from None
        for api in loaded:
            yield APINode.from_parent(self, name=api.name, api=api)


class ConftestAPIs(pytest.File):
    """A conftest.py that declares ``test* = API(...)``: one child per API."""

    def __init__(self, *, module: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.module = module

    def collect(self) -> Iterator[pytest.Collector]:
        from compatfuzz.roundtrip import API, Suite

        for name, obj in vars(self.module).items():
            if name.startswith("test") and isinstance(obj, (API, Suite)):
                yield APINode.from_parent(self, name=obj.name, api=obj)


class APINode(pytest.Collector):
    """One API: one item per unit (property and version pair)."""

    def __init__(self, *, api: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api = api

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        from compatfuzz.roundtrip import units

        kinds: dict[str, list[Any]] = {}
        for unit in units(self.api):
            if unit.show_kind:  # a node per kind: "api::kind::property[...]" resolves
                if unit.kind not in kinds:
                    kinds[unit.kind] = []
                    yield KindNode.from_parent(self, name=unit.kind,
                                               nodeid=f"{self.nodeid}::{unit.kind}",
                                               api=self.api, units=kinds[unit.kind])
                kinds[unit.kind].append(unit)
                continue
            yield _item(self, unit, self.api)


class KindNode(pytest.Collector):
    """The units of one kind of an API that shows kinds in its unit ids (a Cadwyn route or
    resource, one schema of several): its own node, so that the id compatfuzz prints,
    ``compatfuzz.toml::shop::customers::write_then_read[2023-01-01]``, is one pytest can
    resolve (an item named ``customers::write_then_read[...]`` matched no node)."""

    def __init__(self, *, api: Any, units: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api = api
        self.units = units

    def collect(self) -> Iterator[pytest.Item]:
        for unit in self.units:
            yield _item(self, unit, self.api)


def _item(parent: pytest.Collector, unit: Any, api: Any) -> pytest.Item:
    # The id as a string, which pytest parses as it parses the ids it caches: from pytest
    # 9.2 a node's id is structured (names, then "[params]"), and one built from the name
    # "roundtrip[v1->v2]" never equalled the cached id that string parses to, so --lf/--ff
    # re-ran every item.
    item: pytest.Item = PropertyItem.from_parent(
        parent, name=unit.name, nodeid=f"{parent.nodeid}::{unit.name}", api=api, unit=unit)
    item.add_marker(MARKER)
    return item


def _arming_recorder(alarm: Any) -> Any:
    """A ``Recorder`` that also arms the per-example deadline (``roundtrip._deadline``)
    before each example, as the runner's does for ``compatfuzz fuzz``."""
    from compatfuzz.roundtrip._engine._given import Recorder

    class ArmingRecorder(Recorder):
        current: Any = None

        def before(self, obj: Any) -> None:
            alarm.arm()  # first: it raises the last example's deadline if that fired unseen
            self.current = obj
            super().before(obj)

    return ArmingRecorder()


def _deadline_failure(alarm: Any, recorder: Any, exc: BaseException) -> BaseException:
    """The failure of an item whose example outlived the per-example deadline."""
    if getattr(exc, "unavailable", None) is not None:  # waiting on a webhook: setup error
        return exc.unavailable  # type: ignore[attr-defined, no-any-return]
    where, checking = alarm.fired_at or ("", True)
    where = getattr(exc, "where", None) or where  # a converter the API server waits on
    stuck = f" (stuck in {where})" if where else ""
    knob = f"raise it with {OPTION_EXAMPLE_DEADLINE}=SECONDS, or 'none' to disable it"
    reason = getattr(exc, "reason", None)  # the API server gave up on a converter
    if checking or reason is not None:
        message = reason or (
            f"an example took longer than the {alarm.seconds:g}s per-example "
            f"deadline{stuck}; a converter that sleeps, loops or waits on a slow "
            f"server fails the property ({knob})")
        if recorder.failure is None:
            if recorder.current is not None:  # the example it was stuck on
                recorder.failure = (recorder.current, TimeoutError(message))
        else:
            message = f"shrinking stopped: {message}; counterexample not minimal"
    else:
        message = (f"generating one example took longer than the {alarm.seconds:g}s "
                   f"per-example deadline{stuck}: the schema asks for very large values "
                   f"or deep nesting ({knob})")
    return TimeoutError(message)


def _database_of(settings: Any) -> Any:
    """The example database ``settings`` use (``None`` when there is none)."""
    return getattr(settings, "database", None)


def _item_database(item: PropertyItem, base: Any) -> Any:
    """The example database ``item`` runs with under the profile settings ``base``:
    ``--compatfuzz-database``'s, the profile's own, or for Hypothesis's default the
    folder ``compatfuzz fuzz`` uses,
    beside the config, or the rootdir for APIs declared in Python; not the working
    directory."""
    from compatfuzz.roundtrip._engine._database import (
        default_database_path,
        is_hypothesis_default,
        project_home,
    )

    home = project_home(item.api.source) if item.api.source else Path(item.config.rootpath)
    if item.config.getoption(OPTION_DATABASE):
        return _database_option(item.config, home)
    db = _database_of(base)
    if not is_hypothesis_default(db):
        return db
    from compatfuzz.roundtrip._engine._database import GuardedDirectoryDatabase

    # one per folder, kept with the option's so its notice (a skipped entry) is told once
    opened = item.config.stash.setdefault(_DATABASES, {})
    key = f"default:{home}"
    if key not in opened:
        opened[key] = GuardedDirectoryDatabase(default_database_path(home))
    return opened[key]


class PropertyItem(pytest.Item):
    """One property of one version pair, run as a Hypothesis test."""

    def __init__(self, *, api: Any, unit: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api = api
        self.unit = unit
        self.counterexample: Any = None
        self.seed: int | None = None
        self.run_seed: int | None = None  # the run seed self.seed derives from
        self.html_row: dict[str, Any] | None = None
        #: ``c > 0``: under ``--compatfuzz-shard``, a spare shard's re-run of this unit
        self.copy = 0
        #: the example database it ran with
        self.database: Any = None
        #: under ``--compatfuzz-shard``, another shard's unit kept to replay its saved
        #: failures only (as ``compatfuzz fuzz --shard``: ``run_unit(replay_only=True)``)
        self.replay_only = False

    def runtest(self) -> None:
        import unittest

        from hypothesis import Phase, settings
        from hypothesis import seed as hseed

        from compatfuzz.roundtrip import build_test, get_profile
        from compatfuzz.roundtrip._engine._runner import unit_seed

        config = self.config
        from compatfuzz.roundtrip._check._properties import SERVED_PROPERTIES

        if self.unit.property in SERVED_PROPERTIES:
            _real_server(config, self.api)
        base = get_profile(_profile(config))
        max_examples = _max_examples(config)
        overrides: dict[str, Any] = {"print_blob": True}
        if max_examples:
            overrides["max_examples"] = max_examples
        overrides["database"] = self.database = _item_database(self, base)
        if self.replay_only:  # the saved failures only: no generation, no shrinking
            overrides["phases"] = (Phase.explicit, Phase.reuse)
        from compatfuzz.roundtrip._deadline import Alarm, ExampleDeadline, run_armed
        from compatfuzz.strategies._warm import warm_up

        warm_up()  # Hypothesis's one-time set-up is not the first example's time
        alarm = Alarm(_example_deadline(config))
        recorder = _arming_recorder(alarm)
        test = build_test(self.api, self.unit, settings=settings(base, **overrides),
                          recorder=recorder)
        if config.stash[_SEED_EXPLICIT] and not self.replay_only:
            # (a replay reads the database, which a seed bypasses, as fuzz --shard's does)
            # the run seed and the unit id only: the same on every xdist worker, in any
            # order, and in an unsharded run (a copy, below, is the one exception)
            self.run_seed = config.stash[_SEED]
            if self.copy:  # a spare shard's re-run: a run seed of its own, printed to replay
                import hashlib

                digest = hashlib.sha256(f"{self.run_seed}:copy:{self.copy}".encode()).digest()
                self.run_seed = int.from_bytes(digest[:4], "big")
            self.seed = unit_seed(self.run_seed, self.unit)
            test = hseed(self.seed)(test)
        self.replays_from_database = overrides["database"] is not None and (
            self.replay_only or not config.stash[_SEED_EXPLICIT])
        started = time.monotonic()
        failure: BaseException | None = None
        nothing_saved = False
        try:
            run_armed(alarm, test)  # as compatfuzz fuzz's runner does
        except ExampleDeadline as exc:
            # a KeyboardInterrupt, which would end the pytest session: fail this item
            failure = _deadline_failure(alarm, recorder, exc)
            # Hypothesis stopped at once: nothing was saved for the database to replay
            self.replays_from_database = False
            raise failure from None
        except unittest.SkipTest as exc:
            # Hypothesis skips a test that ran no example (hypothesis/core.py, "told to run
            # no test cases"): in a replay, the failure the index lists was fixed (a replay
            # that passes deletes it) or deleted: drop it from the index
            if not self.replay_only:
                failure = exc
                raise
            nothing_saved = True
            from compatfuzz.roundtrip._engine._database import forget_failing_unit

            forget_failing_unit(overrides["database"], self.unit.id)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            self._record(recorder, failure, time.monotonic() - started)
            if nothing_saved and self.html_row is not None:
                self.html_row["status"] = "skipped"
            if recorder.failure is not None and recorder.failure[0] is not None:
                import json

                from compatfuzz.roundtrip._check._properties import example_to_json

                self.counterexample = example_to_json(self.api, self.unit,
                                                      recorder.failure[0])
                # Machine-readable finding for report consumers (STYLE.md 17).
                self.add_report_section("call", "compatfuzz", json.dumps(
                    {"unit": self.unit.id, "counterexample": self.counterexample,
                     "seed": self.seed}, sort_keys=True))
                if recorder.output:
                    # what the converters printed on the failing example, as pytest shows
                    # a test's captured output
                    self.add_report_section("call", "compatfuzz converter output",
                                            recorder.output)
        if nothing_saved:
            pytest.skip(f"{self.unit.id}: another shard's unit, kept to replay its saved "
                        "failures, has none left in the example database (fixed, or "
                        "deleted): nothing to replay; dropped from the list of failing "
                        "units")

    def _record(self, recorder: Any, failure: BaseException | None, seconds: float) -> None:
        """Keep this unit's outcome for ``--compatfuzz-html``."""
        if not self.config.getoption(OPTION_HTML):
            return
        from compatfuzz.roundtrip._check._properties import example_to_json
        from compatfuzz.roundtrip._check._usercode import find_user_traceback
        from compatfuzz.roundtrip._check._verdict import diff_to_json

        row: dict[str, Any] = {**self.unit.to_json(), "examples": recorder.calls,
                               "seconds": round(seconds, 3), "status": "passed",
                               "message": "", "counterexample": None}
        if failure is not None:
            row["status"] = "failed" if recorder.failure is not None else "error"
            row["message"] = f"{type(failure).__name__}: {failure}"
            if recorder.failure is not None:
                obj, exc = recorder.failure
                row["counterexample"] = {
                    "object": example_to_json(self.api, self.unit, obj), "error": str(exc),
                    "diff": diff_to_json(getattr(exc, "diff", None)),
                    "traceback": find_user_traceback(exc),
                    "output": recorder.output, "config": self.api.source, "seed": self.seed}
        self.html_row = row  # sent with the report (pytest_runtest_makereport)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        import json

        from compatfuzz.roundtrip._check._usercode import find_user_traceback

        exc = excinfo.value
        if self.config.getoption("fulltrace", False):
            return super().repr_failure(excinfo)  # every frame, compatfuzz's too
        lines = [f"{self.unit.id}: {type(exc).__name__}: {exc}"]
        user = find_user_traceback(exc)
        if user:  # the user's frames only: where in *their* converter it raised
            lines.extend(["", user.rstrip("\n"), ""])
        if self.counterexample is not None:
            lines.append("minimal counterexample: " + json.dumps(self.counterexample,
                                                                 sort_keys=True))
        seed_arg = f" {OPTION_SEED}={self.run_seed}" if self.seed else ""
        here = Path(self.config.invocation_params.dir)
        # the names below the file node, not the node id's tail: a config above the rootdir
        # (pytest run in a subfolder) has a node id that starts "::compatfuzz.toml::"
        chain = self.listchain()
        files = [i for i, n in enumerate(chain) if isinstance(n, pytest.File)]
        below = "::".join(n.name for n in chain[files[-1] + 1:]) if files else (
            self.nodeid.split("::", 1)[1])
        node = os.path.relpath(self.path, here) + "::" + below
        # No @reproduce_failure hint: a declared API has no test function to decorate.
        why = ("  (replays the failing example first from the example database)"
               if getattr(self, "replays_from_database", False) else "")
        if self.replay_only:
            why = ("  (another shard's unit, run here only to replay the failure saved "
                   "in the example database; this command replays it first)")
        mode = self.config.getoption(OPTION_APISERVER)
        server = f" {OPTION_APISERVER} {mode}" if mode else ""
        database = self.config.getoption(OPTION_DATABASE)
        if getattr(self, "replays_from_database", False):
            if getattr(self.database, "failed_over", False):
                # saved in the local fallback: the config's folder, pytest's default
                why = (f"  (the shared example database stopped answering: saved only "
                       f"in {self.database.local_label}, which this command replays first)")
            elif database:
                from compatfuzz.roundtrip._engine._database import redact

                server += f" {OPTION_DATABASE}={redact(database)}"
        lines.append(f"replay: pytest '{node}'{seed_arg}{server}{why}")
        return "\n".join(lines)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.unit.id
