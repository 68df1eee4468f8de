"""``compatfuzz apiserver install|path``: kube-apiserver and etcd built from Go modules into
compatfuzz's cache, as envtest's ``setup-envtest use -p path`` gives released ones.

A fake ``go`` (``tests/_fakego.py``) stands in for the 5-minute build; the cache is a
temporary folder (``COMPATFUZZ_TESTENV_CACHE``), so the machine's built binaries are never
touched.
"""

from __future__ import annotations

import fcntl
import io
import os
import threading
import time
from pathlib import Path

import pytest

from compatfuzz.apiserver._real import _build
from compatfuzz.cli import main
from tests._fakego import calls, fake_go

ENVTEST = ("KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD")


class Recorded:
    """A build's progress, kept: what it said and its status lines."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.statuses: list[str] = []

    def say(self, line: str) -> None:
        self.said.append(line)

    def status(self, line: str) -> None:
        self.statuses.append(line)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, nothing where envtest looks, and a fake ``go``."""
    for name in ENVTEST:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("compatfuzz.apiserver._real._assets.DEFAULT_FOLDER",
                        tmp_path / "no-kubebuilder")
    monkeypatch.setenv("COMPATFUZZ_TESTENV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COMPATFUZZ_GO", str(fake_go(tmp_path / "go")))
    monkeypatch.delenv("FAKE_GO_FAIL", raising=False)
    return tmp_path / "cache"


def test_the_cache_folder_is_named_by_version_and_the_pinned_modules(cache: Path) -> None:
    folder = _build.cache_folder()
    assert folder.parent == cache and folder.name.startswith(f"{_build.KUBERNETES}-")
    # the pins ship with the package: go.mod names both binaries' packages
    gomod = _build._module_files()["go.mod"].decode()
    assert all(package in gomod for package in _build.PACKAGES.values())


def test_install_builds_once_says_what_it_does_and_prints_the_folder(
        cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    go = Path(os.environ["COMPATFUZZ_GO"])
    assert main(["apiserver", "path"]) == 1
    err = capsys.readouterr().err
    assert "compatfuzz apiserver install" in err and "setup-envtest" in err

    assert main(["apiserver", "install"]) == 0
    out, err = capsys.readouterr()
    folder = Path(out.strip())
    assert folder == _build.cache_folder()
    assert all(os.access(folder / name, os.X_OK) for name in ("kube-apiserver", "etcd"))
    assert (f"building kube-apiserver {_build.KUBERNETES} and etcd {_build.ETCD} from Go "
            f"modules with go1.26.0, {_build.ABOUT}, once; cached in {folder} (packages "
            "already in Go's build cache are not compiled again)") in err
    assert "built kube-apiserver and etcd in" in err
    # the module was built in a scratch folder, not beside the package, and is gone
    assert sorted(p.name for p in cache.iterdir()) == [".lock", folder.name]
    builds = [c for c in calls(go) if c.startswith("build")]
    assert len(builds) == 2 and all("-trimpath" in c and "-ldflags" in c for c in builds)

    # built: printed at once, without Go
    before = len(calls(go))
    assert main(["apiserver", "install"]) == 0
    assert capsys.readouterr() == (f"{folder}\n", "")
    assert main(["apiserver", "path"]) == 0
    assert capsys.readouterr().out == f"{folder}\n"
    assert len(calls(go)) == before


def test_the_build_s_progress_counts_packages_and_downloads(cache: Path) -> None:
    progress = Recorded()
    _build.install(progress)
    assert any(s.startswith("downloading Go modules: 1 (example.com/dep v1.0.0)")
               for s in progress.statuses)
    assert any(s.startswith("go build kube-apiserver: 1/4 packages compiled")
               for s in progress.statuses)
    assert any(s.startswith("linking etcd") for s in progress.statuses)


def test_path_prints_where_envtest_finds_them_first(
        cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "envtest"
    folder.mkdir()
    for name in ("kube-apiserver", "etcd"):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(folder))
    assert main(["apiserver", "path"]) == 0
    assert capsys.readouterr().out == f"{folder}\n"


def test_without_go_install_exits_2_naming_go_and_setup_envtest(
        cache: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("COMPATFUZZ_GO")
    monkeypatch.setenv("PATH", str(cache.parent / "nowhere"))
    assert main(["apiserver", "install"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "`go` is not on PATH" in err and "https://go.dev/dl/" in err
    assert "setup-envtest use -p path 1.37.x" in err
    monkeypatch.setenv("COMPATFUZZ_GO", "/nonexistent/go")
    assert main(["apiserver", "install"]) == 2
    assert "COMPATFUZZ_GO='/nonexistent/go' is not an executable" in capsys.readouterr().err


def test_a_failed_build_exits_2_with_go_s_lines_and_leaves_nothing_half_built(
        cache: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAKE_GO_FAIL", "1")
    assert main(["apiserver", "install"]) == 2
    err = capsys.readouterr().err
    assert "go build k8s.io/kubernetes/cmd/kube-apiserver failed (exit 1)" in err
    assert "main.go:3:2: undefined: oops" in err
    assert sorted(p.name for p in cache.iterdir()) == [".lock"]
    assert main(["apiserver", "path"]) == 1


def test_a_second_build_waits_for_the_lock_naming_the_holder(cache: Path) -> None:
    cache.mkdir(parents=True)
    holder = os.open(cache / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    os.write(holder, b"4242\n")
    progress = Recorded()
    result: list[Path] = []
    waiter = threading.Thread(target=lambda: result.append(_build.install(progress)))
    waiter.start()
    try:
        deadline = time.monotonic() + 30
        while not progress.said and time.monotonic() < deadline:
            time.sleep(0.05)
        assert progress.said and "held by pid 4242" in progress.said[0]
        assert not result
    finally:
        os.close(holder)  # releases the lock
        waiter.join(60)
    assert result == [_build.cache_folder()]
    # the lock now names the process that built
    assert (cache / ".lock").read_text().strip() == str(os.getpid())


def test_a_stream_shows_status_in_place_on_a_terminal_and_seldom_elsewhere() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    live = Terminal()
    shown = _build.StreamProgress(live, prefix="p: ")
    shown.status("one")
    shown.status("two")
    shown.say("done")
    assert live.getvalue() == "p: one\r\x1b[Kp: two\r\x1b[Kp: done\n"

    log = io.StringIO()
    quiet = _build.StreamProgress(log, prefix="p: ")
    quiet.status("one")
    quiet.status("two")  # within 30 s of the last: not printed
    quiet.say("done")
    assert log.getvalue() == "p: one\np: done\n"
