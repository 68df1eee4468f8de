"""The real API server tests of this suite: which they are, and where their binaries come from.

Every test that uses the ``assets`` fixture (``real_endpoint`` uses it) is marked
``real_apiserver``, so ``-m "not real_apiserver"`` deselects them, under pytest-xdist too.
Before the first of them runs, the session says once, on the terminal, where kube-apiserver
and etcd come from: found where envtest looks (``TEST_ASSET_*``, ``KUBEBUILDER_ASSETS``,
``/usr/local/kubebuilder/bin``) or in the folder ``compatfuzz apiserver install`` builds
into; or built now by that command's code, with its progress (about 5 minutes, once), after
waiting for another build's lock if one holds it; or why they cannot be (no Go, a failed
build). Then the tests skip, except under ``CI=true`` where ``tests/conftest.py``'s
``assets`` fails them.

Without xdist (``-n 0``) this happens when collection finishes. Under xdist the controller
collects nothing, so it cannot tell which tests were selected; each worker writes how many
real-server tests it selected into a folder the controller names in ``workerinput``
(``pytest_configure_node``, xdist's channel from the controller to its workers), and the
controller reads the first worker's count when it reports its collection
(``pytest_xdist_node_collection_finished``), before any test is scheduled. The workers then
find the binaries in the cache. The xdist hooks are registered only when xdist is loaded.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real import _build
from compatfuzz.apiserver._real._assets import MissingAssets, find_assets

MARK = "real_apiserver"
FIXTURE = "assets"
_FOLDER_KEY = "compatfuzz_real_apiserver_counts"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARK}: starts a real kube-apiserver and etcd (every test using the "
        f"{FIXTURE} fixture); deselect with -m 'not {MARK}'")
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(XdistController(), "compatfuzz-real-apiserver")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(MARK)


def selected(items: list[pytest.Item]) -> int:
    """How many of ``items`` are real-server tests that will run (not skipped by a mark)."""
    return sum(1 for item in items
               if item.get_closest_marker(MARK) and not item.get_closest_marker("skip"))


@pytest.hookimpl(tryfirst=True)  # on a worker, before xdist sends the collection
def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    count = selected(session.items)
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        folder = workerinput.get(_FOLDER_KEY)
        if folder:
            (Path(folder) / str(workerinput["workerid"])).write_text(str(count))
        return
    if count and not config.option.collectonly:
        prepare(config, count)


class XdistController:
    """The controller's side under xdist: names the folder for the workers' counts, and
    prepares the binaries when the first worker has collected."""

    def __init__(self) -> None:
        self.folder: str | None = None
        self.done = False

    def pytest_configure_node(self, node: Any) -> None:
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="compatfuzz-tests-")
        node.workerinput[_FOLDER_KEY] = self.folder

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.done or self.folder is None:
            return
        self.done = True
        counted = Path(self.folder) / str(node.workerinput["workerid"])
        count = int(counted.read_text()) if counted.is_file() else 0
        if count and not node.config.option.collectonly:
            prepare(node.config, count)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


class TerminalProgress:
    """A build's progress through pytest's terminal reporter (never captured): on a
    terminal the status line is rewritten; elsewhere a changed status is printed at most
    every 30 seconds."""

    def __init__(self, reporter: pytest.TerminalReporter) -> None:
        self.reporter = reporter
        self.live = bool(reporter.isatty)
        self._shown = False
        self._last = -30.0

    def say(self, line: str) -> None:
        text = f"compatfuzz tests: {line}"
        if self._shown:
            self.reporter.rewrite(text, erase=True)
            self.reporter.write("\n")
            self._shown = False
        else:
            self.reporter.write_line(text)

    def status(self, line: str) -> None:
        text = f"compatfuzz tests: {line}"
        if self.live:  # one screen line, or "\r" leaves the wrapped part behind
            text = text[:shutil.get_terminal_size().columns - 1]
            self.reporter.rewrite(text, erase=True)
            self.reporter.flush()
            self._shown = True
        elif time.monotonic() - self._last >= 30.0:
            self._last = time.monotonic()
            self.reporter.write_line(text)


def prepare(config: pytest.Config, count: int) -> None:
    """Say where the binaries of ``count`` selected real-server tests come from, building
    them first when they are nowhere (``compatfuzz apiserver install``'s build)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    progress: _build.Progress = (TerminalProgress(reporter) if reporter is not None
                                 else _build.StreamProgress(sys.stderr,
                                                            prefix="compatfuzz tests: "))
    if reporter is not None:
        reporter.ensure_newline()
    tests = f"{count} real API server test{'s' if count != 1 else ''}"
    skip = f"(skip them with -m 'not {MARK}')"
    try:
        found = find_assets()
    except MissingAssets:
        pass
    else:
        progress.say(f"{tests}: kube-apiserver {found.kube_apiserver} and etcd "
                     f"{found.etcd} (from {found.found_by})")
        return
    folder = _build.built()
    if folder is not None:
        progress.say(f"{tests}: kube-apiserver and etcd in {folder} (built by compatfuzz "
                     "apiserver install)")
        return
    progress.say(f"{tests} {skip}: kube-apiserver and etcd are not where envtest looks "
                 "nor built yet; building them now, as compatfuzz apiserver install does")
    try:
        _build.install(progress)
    except _build.BuildError as exc:
        then = "fail (CI=true)" if os.environ.get("CI") == "true" else "skip"
        progress.say(f"the {tests} will {then}: {exc}")
