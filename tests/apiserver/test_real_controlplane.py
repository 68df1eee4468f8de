"""The real API server's control plane: it starts, answers, stops, leaves no orphans
(``PR_SET_PDEATHSIG``), and says clearly why it could not start.

Where the binaries are found follows controller-runtime's
``pkg/internal/testing/process/bin_path_finder.go`` (``BinPathFinder``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.apiserver._real._assets import Assets, MissingAssets, find_assets
from compatfuzz.apiserver._real._client import Client
from compatfuzz.apiserver._real._process import (
    ControlPlane,
    Endpoint,
    StartError,
    alive,
    free_port,
)

SRC = Path(__file__).resolve().parents[2] / "src"
GONE_WITHIN = 15.0  # seconds for the kernel to reap what a dead parent leaves


def _get(endpoint: Endpoint, path: str) -> dict[str, Any]:
    client = Client(endpoint)
    try:
        answer: dict[str, Any] = client.request("GET", path)
        return answer
    finally:
        client.close()


def _wait_gone(pids: list[int]) -> list[int]:
    """The pids still alive after ``GONE_WITHIN`` seconds (empty when all died)."""
    deadline = time.monotonic() + GONE_WITHIN
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if alive(p)]


def _processes_naming(text: str) -> list[int]:
    """Live processes whose command line names ``text`` (a test's own folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


# -- start and stop ----------------------------------------------------------------


@pytest.fixture(scope="module")
def started(assets: Assets) -> Iterator[tuple[ControlPlane, Endpoint, list[int], Path]]:
    plane = ControlPlane(assets)
    endpoint = plane.start()
    pids = plane.pids()
    assert plane.dir is not None
    folder = plane.dir
    yield plane, endpoint, pids, folder
    plane.stop()


def test_the_server_answers_version(
        started: tuple[ControlPlane, Endpoint, list[int], Path]) -> None:
    _, endpoint, pids, folder = started
    version = _get(endpoint, "/version")
    major, minor = version["major"], version["minor"]
    assert (major, minor) == ("1", "37")
    assert version["gitVersion"].startswith(f"v{major}.{minor}.")
    assert len(pids) == 2 and all(alive(p) for p in pids)
    assert folder.is_dir()


def test_the_namespace_exists(started: tuple[ControlPlane, Endpoint, list[int], Path]) -> None:
    _, endpoint, _, _ = started
    ns = _get(endpoint, f"/api/v1/namespaces/{endpoint.namespace}")
    assert ns["metadata"]["name"] == endpoint.namespace


def test_etcd_answers_only_the_api_servers_certificate(
        started: tuple[ControlPlane, Endpoint, list[int], Path]) -> None:
    """etcd listened on plain HTTP without auth: any local process could rewrite what the
    server stored, and so a verdict. Now TLS with a client certificate of etcd's own CA."""
    import ssl
    import urllib.error
    import urllib.request

    plane, _, _, folder = started
    [url] = [a.split("=", 1)[1] for a in plane._procs[0].argv
             if a.startswith("--listen-client-urls=")]
    assert url.startswith("https://127.0.0.1:")
    pki = folder / "pki"

    def health(ctx: ssl.SSLContext | None, scheme_url: str = url) -> bool:
        try:
            with urllib.request.urlopen(f"{scheme_url}/health", context=ctx,
                                        timeout=5) as answer:
                return bool(answer.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def ctx(cert: str | None) -> ssl.SSLContext:
        c = ssl.create_default_context(cafile=str(pki / "etcd-ca.crt"))
        if cert is not None:
            c.load_cert_chain(str(pki / f"{cert}.crt"), str(pki / f"{cert}.key"))
        return c

    assert health(ctx("apiserver-etcd-client"))  # kube-apiserver's certificate
    assert not health(ctx(None))  # no certificate
    assert not health(ctx("admin"))  # system:masters of the other CA: not etcd's
    assert not health(None, url.replace("https://", "http://"))  # plain HTTP


def test_a_killed_runs_folder_is_swept_at_the_next_start(tmp_path: Path) -> None:
    from compatfuzz.apiserver._real._process import OWNER_FILE, sweep_stale

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folders = {}
    for name, owner in (("dead", {"pid": dead.pid, "started": "1"}),
                        ("live", {"pid": os.getpid(),
                                  "started": _stat_start(os.getpid())}),
                        ("reused", {"pid": os.getpid(), "started": "not-its-start"}),
                        ("unknown", None)):
        folder = tmp_path / f"compatfuzz-apiserver-{name}"
        (folder / "pki").mkdir(parents=True)
        (folder / "pki" / "admin.key").write_text("secret")
        if owner is not None:
            (folder / OWNER_FILE).write_text(json.dumps(owner))
        folders[name] = folder
    other = tmp_path / "someone-elses"
    other.mkdir()
    removed = sweep_stale(tmp_path)
    assert sorted(removed) == sorted([folders["dead"], folders["reused"]])
    assert folders["live"].is_dir() and folders["unknown"].is_dir() and other.is_dir()
    assert not folders["dead"].exists() and not folders["reused"].exists()


def test_a_start_that_fails_before_any_process_leaves_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the 'cryptography' package the certificates cannot be made: the run exits
    2 saying so, and left a folder holding only its owner file each time (the next start
    then swept it as a killed run's)."""
    from compatfuzz.apiserver._real import _process

    def no_pki(folder: Path) -> Any:
        raise _process.StartError("needs the 'cryptography' package")

    monkeypatch.setattr(_process, "mint", no_pki)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a run's folder goes
    plane = ControlPlane(Assets(tmp_path / "kube-apiserver", tmp_path / "etcd", "test"))
    with pytest.raises(_process.StartError, match="cryptography"):
        plane.start()
    assert not list(tmp_path.glob("compatfuzz-apiserver-*"))


def _stat_start(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[19]


def test_stop_ends_both_processes_and_removes_the_folder(
        started: tuple[ControlPlane, Endpoint, list[int], Path]) -> None:
    plane, endpoint, pids, folder = started
    assert Endpoint.from_json(endpoint.to_json()) == endpoint
    plane.stop()
    assert [p for p in pids if alive(p)] == []
    assert not folder.exists()
    assert plane.pids() == []
    plane.stop()  # idempotent


# -- no orphans --------------------------------------------------------------------

CHILD = """
import json, signal, sys
from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._process import ControlPlane
# as a Python started from a shell has it: a SIG_IGN inherited from the test process (an
# xdist worker of this suite had SIGINT ignored) would make the SIGINT case a no-op
signal.signal(signal.SIGINT, signal.default_int_handler)
plane = ControlPlane(Assets(kube_apiserver=sys.argv[1], etcd=sys.argv[2], found_by="test"),
                     workdir=sys.argv[3])
plane.start()
print(json.dumps(plane.pids()), flush=True)
signal.pause()
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, *(pytest.param(s, marks=pytest.mark.extended)
                                                for s in (signal.SIGTERM, signal.SIGINT))],
                         ids=lambda s: signal.Signals(s).name)
def test_no_orphans_when_the_parent_dies(assets: Assets, tmp_path: Path,
                                         sig: signal.Signals) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(assets.kube_apiserver), str(assets.etcd),
         str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout is not None and child.stderr is not None
        line = child.stdout.readline()
        assert line, f"the child did not start a control plane: {child.stderr.read()}"
        pids = json.loads(line)
        assert len(pids) == 2 and all(alive(p) for p in pids)
        child.send_signal(sig)
        # SIGINT/SIGTERM stop the plane gracefully first: on a loaded CI machine (xdist,
        # 2 cores) that took longer than 15 s once
        child.wait(timeout=4 * GONE_WITHIN)
        assert _wait_gone(pids) == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.communicate()
    assert _processes_naming(str(tmp_path)) == []


# -- missing assets ----------------------------------------------------------------


def _stub(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return path


def test_nothing_anywhere_says_how_to_get_the_binaries(tmp_path: Path) -> None:
    with pytest.raises(MissingAssets) as info:
        find_assets(tmp_path / "empty", environ={})
    message = str(info.value)
    for needed in ("KUBEBUILDER_ASSETS", "setup-envtest", "compatfuzz apiserver install",
                   "kube-apiserver", "etcd", "TEST_ASSET_ETCD", str(tmp_path / "empty")):
        assert needed in message


@pytest.mark.parametrize("mode", [0o644, None], ids=["not-executable", "absent"])
def test_a_test_asset_that_is_no_executable_is_named(tmp_path: Path, mode: int | None) -> None:
    etcd = tmp_path / "etcd"
    if mode is not None:
        _stub(etcd, mode)
    folder = tmp_path / "assets"
    _stub(folder / "etcd")
    _stub(folder / "kube-apiserver")
    with pytest.raises(MissingAssets) as info:
        find_assets(environ={"TEST_ASSET_ETCD": str(etcd), "KUBEBUILDER_ASSETS": str(folder)})
    assert f"TEST_ASSET_ETCD={etcd} is not an executable file" in str(info.value)


PLACES = ("TEST_ASSET", "KUBEBUILDER_ASSETS", "folder")


@given(where=st.fixed_dictionaries({
    "kube-apiserver": st.sets(st.sampled_from(PLACES)),
    "etcd": st.sets(st.sampled_from(PLACES)),
}), kubebuilder_set=st.booleans(), folder_given=st.booleans())
def test_the_first_place_in_envtests_order_wins(where: dict[str, set[str]],
                                                kubebuilder_set: bool,
                                                folder_given: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env: dict[str, str] = {}
        if kubebuilder_set:
            env["KUBEBUILDER_ASSETS"] = str(root / "kubebuilder")
        folder = root / "folder" if folder_given else None
        expected: dict[str, Path | None] = {}
        for name, places in where.items():
            var = "TEST_ASSET_" + name.upper().replace("-", "_")
            if "TEST_ASSET" in places:
                env[var] = str(_stub(root / "asset" / name))
            if "KUBEBUILDER_ASSETS" in places:
                _stub(root / "kubebuilder" / name)
            if "folder" in places:
                _stub(root / "folder" / name)
            candidates = [
                ("TEST_ASSET" in places, root / "asset" / name),
                ("KUBEBUILDER_ASSETS" in places and kubebuilder_set, root / "kubebuilder" / name),
                ("folder" in places and folder_given, root / "folder" / name),
            ]
            expected[name] = next((path for ok, path in candidates if ok), None)
        if None in expected.values():
            with pytest.raises(MissingAssets) as info:
                find_assets(folder, environ=env)
            for name, path in expected.items():
                assert (f"{name}: TEST_ASSET_" in str(info.value)) == (path is None)
        else:
            found = find_assets(folder, environ=env)
            assert (found.kube_apiserver, found.etcd) == (expected["kube-apiserver"],
                                                          expected["etcd"])


# -- a server that will not start --------------------------------------------------


def test_a_server_that_exits_is_reported_with_its_log(assets: Assets, tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "kube-apiserver"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'fake kube-apiserver: no flags for you' >&2\nexit 3\n")
    fake.chmod(0o755)
    plane = ControlPlane(Assets(kube_apiserver=fake, etcd=assets.etcd, found_by="test"),
                         workdir=tmp_path / "work")
    (tmp_path / "work").mkdir()
    with pytest.raises(StartError) as info:
        plane.start()
    message = str(info.value)
    assert "kube-apiserver" in message and "exited with status 3" in message
    assert "fake kube-apiserver: no flags for you" in message
    assert _processes_naming(str(tmp_path)) == []  # etcd was stopped too


def test_a_port_in_use_is_named(assets: Assets, tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    plane = ControlPlane(assets, workdir=tmp_path / "work")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        with pytest.raises(StartError) as info:
            plane.start(ports=(busy, free_port(), free_port(), free_port()))
    message = str(info.value)
    assert "etcd could not listen on 127.0.0.1" in message
    assert f"({busy}, " in message and "is in use by another process" in message
    assert "address already in use" in message  # the tail of etcd's log
    assert plane.pids() == []
    assert _processes_naming(str(tmp_path)) == []
