"""Start and stop a throw-away etcd and kube-apiserver on 127.0.0.1, as envtest does.

The flags are envtest's defaults (controller-runtime
``pkg/internal/testing/controlplane/apiserver.go`` ``defaultArgs`` and ``etcd.go``):
free ports on 127.0.0.1, a fresh data folder, ``--unsafe-no-fsync`` for etcd, RBAC with
an admin client certificate of ``system:masters``, the ``ServiceAccount`` admission
plugin off (no controller makes default service accounts), certificates minted at start.

No orphans: both processes are started with ``PR_SET_PDEATHSIG`` = SIGKILL (Linux), so
they die with the process that started them even when it is killed with SIGKILL, and in
a session of their own, so a terminal's Ctrl-C reaches only compatfuzz, which stops them
in order (kube-apiserver first, then etcd: SIGTERM, then SIGKILL after a grace period).
``PR_SET_PDEATHSIG`` follows the *thread* that started the child, so start a control
plane from the main thread (the CLI and the pytest plugin do).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._pki import mint
from compatfuzz.errors import CompatfuzzError

__all__ = ["ControlPlane", "Endpoint", "StartError"]

#: seconds each process gets to stop after SIGTERM before it is killed
STOP_GRACE = 10.0
#: how often kube-apiserver compacts etcd's history (``--etcd-compaction-interval``)
COMPACTION_INTERVAL = "1m"
#: what the log says when a port someone else holds was asked for
_PORT_IN_USE = ("address already in use", "bind: address already in use")


class StartError(CompatfuzzError):
    """etcd or kube-apiserver did not start; the message ends with the tail of its log."""


@dataclass(frozen=True)
class Endpoint:
    """What a process needs to use a running control plane (paths and ports only, so it
    crosses into worker processes as JSON)."""

    url: str  # https://127.0.0.1:PORT of kube-apiserver
    ca: str  # the CA file: trusts the server, and is the webhook's caBundle
    client_cert: str
    client_key: str
    webhook_port: int  # where compatfuzz serves its conversion webhook
    webhook_cert: str
    webhook_key: str
    namespace: str = "compatfuzz"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Endpoint:
        return cls(**json.loads(text))

    def ssl_context(self) -> ssl.SSLContext:
        return client_context(self.ca, self.client_cert, self.client_key)


def client_context(ca: str | Path, cert: str | Path, key: str | Path) -> ssl.SSLContext:
    """TLS that trusts the control plane's CA and logs in with the admin certificate."""
    ctx = ssl.create_default_context(cafile=str(ca))
    ctx.load_cert_chain(str(cert), str(key))
    return ctx


def free_port() -> int:
    """A port nobody listens on now (the kernel's pick; envtest's ``addr.Suggest``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join("    " + line[:400] for line in text[-lines:]) or "    (empty log)"


class _Proc:
    def __init__(self, name: str, argv: list[str], log: Path) -> None:
        self.name = name
        self.log = log
        self.argv = argv
        with open(log, "wb") as out:
            self.popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True,
                preexec_fn=_die_with_parent)  # noqa: PLW1509 - see the module docstring

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self) -> None:
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.popen.terminate()
        try:
            self.popen.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                self.popen.kill()
            self.popen.wait()

    def port_in_use(self) -> bool:
        try:
            text = self.log.read_text(errors="replace").lower()
        except OSError:
            return False
        return any(p in text for p in _PORT_IN_USE)


#: in a control plane's folder: which process made it (pid and start time), so that a
#: later run can tell a folder a killed run left from one a live run uses
OWNER_FILE = "owner.json"
_PREFIX = "compatfuzz-apiserver-"


def _start_time(pid: int) -> str | None:
    """The process's start time (``/proc/<pid>/stat`` field 22), which a reused pid lacks."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def _owner_alive(owner: dict[str, Any]) -> bool:
    pid = int(owner["pid"])
    if not alive(pid):
        return False
    started = _start_time(pid)
    return started is None or started == owner.get("started")


def sweep_stale(base: Path) -> list[Path]:
    """Remove the control-plane folders under ``base`` that runs killed with SIGKILL left:
    ours (this user's, named ``compatfuzz-apiserver-*``, with an owner file) whose owner
    process is gone. They hold etcd's data and the ``system:masters`` client key. A folder
    without an owner file, or another user's, is left alone."""
    removed = []
    for folder in sorted(base.glob(_PREFIX + "*")):
        try:
            info = folder.lstat()
            if not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid():
                continue
            owner = json.loads((folder / OWNER_FILE).read_text())
            if _owner_alive(owner):
                continue
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue  # not ours to judge
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


class ControlPlane:
    """One etcd and one kube-apiserver, started by :meth:`start`, stopped by :meth:`stop`
    (or the ``with`` block): one per run, shared by every unit.

    Example::

        with ControlPlane(find_assets()) as endpoint:
            ...  # endpoint.url, endpoint.ssl_context()

    Raises:
        StartError: a process exited or did not become ready within ``start_timeout``
            seconds (the message holds the tail of its log), or its ports stayed taken.
    """

    def __init__(self, assets: Assets, *, start_timeout: float = 90.0,
                 workdir: str | Path | None = None) -> None:
        self.assets = assets
        self.start_timeout = start_timeout
        self._workdir = Path(workdir) if workdir is not None else None
        self._own_dir = workdir is None
        self._procs: list[_Proc] = []
        self.endpoint: Endpoint | None = None
        self.started_in: float | None = None
        self.dir: Path | None = None
        #: folders of killed runs that :meth:`start` removed
        self.swept: list[Path] = []

    # -- life cycle --------------------------------------------------------------

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self, ports: tuple[int, int, int, int] | None = None) -> Endpoint:
        """Start etcd and kube-apiserver; return how to reach them.

        ``ports`` (etcd client, etcd peer, kube-apiserver, webhook) is for tests; by
        default free ports are picked, and picked again (three tries) when another process
        takes one between the pick and the bind.
        """
        began = time.monotonic()
        base = self._workdir if self._workdir is not None else Path(tempfile.gettempdir())
        self.swept = sweep_stale(base)
        self.dir = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=base))
        (self.dir / OWNER_FILE).write_text(json.dumps(
            {"pid": os.getpid(), "started": _start_time(os.getpid())}))
        atexit.register(self.stop)
        try:
            pki = mint(self.dir / "pki")
            for attempt in range(3):
                chosen = ports or (free_port(), free_port(), free_port(), free_port())
                try:
                    self._start_processes(chosen, pki)
                except _PortTaken as exc:
                    self._stop_processes()
                    if ports is not None or attempt == 2:
                        raise StartError(
                            f"{exc.proc.name} could not listen on 127.0.0.1: a port it was "
                            f"given ({', '.join(map(str, chosen[:3]))}) is in use by "
                            "another process; free the port or let compatfuzz pick one. Its "
                            f"log ({exc.proc.log}) ends:\n{_tail(exc.proc.log)}") from None
                    continue
                break
            self.endpoint = Endpoint(
                url=f"https://127.0.0.1:{chosen[2]}", ca=str(pki.ca),
                client_cert=str(pki.client.cert), client_key=str(pki.client.key),
                webhook_port=chosen[3], webhook_cert=str(pki.webhook.cert),
                webhook_key=str(pki.webhook.key))
            self._make_namespace(self.endpoint)
        except BaseException as exc:
            # a failed start keeps its logs to read; an interrupted one, or one that
            # failed before any process started (no logs: say, no 'cryptography' for the
            # certificates), leaves nothing
            logged = self.dir is not None and any(self.dir.glob("*.log"))
            self.stop(keep_logs=logged and not isinstance(exc, KeyboardInterrupt))
            raise
        self.started_in = time.monotonic() - began
        return self.endpoint

    def _start_processes(self, ports: tuple[int, int, int, int], pki: Any) -> None:
        assert self.dir is not None
        # etcd speaks TLS only and asks for a client certificate of its own CA, which only
        # kube-apiserver holds: on plain HTTP any local process could rewrite the stored
        # objects, and so a verdict (etcd's --client-cert-auth, --peer-client-cert-auth;
        # kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile)
        etcd_url = f"https://127.0.0.1:{ports[0]}"
        peer_url = f"https://127.0.0.1:{ports[1]}"
        etcd = _Proc("etcd", [
            str(self.assets.etcd),
            f"--data-dir={self.dir / 'etcd'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            f"--cert-file={pki.etcd.cert}",
            f"--key-file={pki.etcd.key}",
            f"--trusted-ca-file={pki.etcd_ca}",
            "--client-cert-auth=true",
            f"--peer-cert-file={pki.etcd.cert}",
            f"--peer-key-file={pki.etcd.key}",
            f"--peer-trusted-ca-file={pki.etcd_ca}",
            "--peer-client-cert-auth=true",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ], self.dir / "etcd.log")
        self._procs.append(etcd)
        etcd_ctx = client_context(pki.etcd_ca, pki.etcd_client.cert, pki.etcd_client.key)
        self._wait(etcd, lambda: _http_ok(f"{etcd_url}/health", etcd_ctx))
        secure = ports[2]
        server = _Proc("kube-apiserver", [
            str(self.assets.kube_apiserver),
            f"--etcd-servers={etcd_url}",
            f"--etcd-cafile={pki.etcd_ca}",
            f"--etcd-certfile={pki.etcd_client.cert}",
            f"--etcd-keyfile={pki.etcd_client.key}",
            f"--cert-dir={self.dir / 'pki'}",
            f"--tls-cert-file={pki.serving.cert}",
            f"--tls-private-key-file={pki.serving.key}",
            f"--client-ca-file={pki.ca}",
            f"--secure-port={secure}",
            # old revisions of the objects a run writes are dropped each minute (5 by
            # default): with the run's own deletes (``RealKind.sweep``) etcd's file stays
            # near a minute of writes over a night (benchmarks/bench_etcd_disk.py)
            f"--etcd-compaction-interval={COMPACTION_INTERVAL}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # no kubernetes Service endpoints: 127.0.0.1 may not be advertised with them
            "--endpoint-reconciler-type=none",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--disable-admission-plugins=ServiceAccount",
            "--authorization-mode=RBAC",
            f"--service-account-issuer=https://127.0.0.1:{secure}/",
            f"--service-account-key-file={pki.sa_pub}",
            f"--service-account-signing-key-file={pki.sa_key}",
        ], self.dir / "kube-apiserver.log")
        self._procs.append(server)
        ctx = client_context(pki.ca, pki.client.cert, pki.client.key)
        self._wait(server, lambda: _http_ok(f"https://127.0.0.1:{secure}/readyz", ctx))

    def _wait(self, proc: _Proc, ready: Any) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            if not proc.alive():
                if proc.port_in_use():
                    raise _PortTaken(proc)
                raise StartError(
                    f"{proc.name} ({proc.argv[0]}) exited with status "
                    f"{proc.popen.returncode} while starting; its log ({proc.log}) ends:\n"
                    f"{_tail(proc.log)}")
            if ready():
                return
            if time.monotonic() > deadline:
                if proc.port_in_use():
                    raise _PortTaken(proc)
                raise StartError(
                    f"{proc.name} did not become ready within {self.start_timeout:g} s "
                    f"(--apiserver-start-timeout); its log ({proc.log}) ends:\n"
                    f"{_tail(proc.log)}\n  fix: a loaded machine may need longer: raise "
                    "--apiserver-start-timeout (90s by default); an error in the log above "
                    "is the binaries'")
            time.sleep(0.1)

    def _make_namespace(self, endpoint: Endpoint) -> None:
        body = json.dumps({"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": endpoint.namespace}}).encode()
        request = urllib.request.Request(f"{endpoint.url}/api/v1/namespaces", data=body,
                                         method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, context=endpoint.ssl_context(), timeout=30).close()
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                raise StartError(f"kube-apiserver refused namespace {endpoint.namespace}: "
                                 f"{exc.code} {exc.read()[:500]!r}") from None

    def pids(self) -> list[int]:
        """The process ids of etcd and kube-apiserver (for tests of the no-orphans rule)."""
        return [p.popen.pid for p in self._procs]

    def logs(self) -> dict[str, Path]:
        return {p.name: p.log for p in self._procs}

    def _stop_processes(self) -> None:
        for proc in reversed(self._procs):  # kube-apiserver before etcd
            proc.stop()
        self._procs.clear()

    def stop(self, keep_logs: bool = False) -> None:
        """Stop kube-apiserver, then etcd, and remove their folder (idempotent)."""
        self._stop_processes()
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if self.dir is not None and self._own_dir and not keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


class _PortTaken(Exception):
    def __init__(self, proc: _Proc) -> None:
        super().__init__(proc.name)
        self.proc = proc


def _http_ok(url: str, ctx: ssl.SSLContext | None) -> bool:
    try:
        with urllib.request.urlopen(url, context=ctx, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError, ssl.SSLError):
        return False


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return status != "Z"
    return True
