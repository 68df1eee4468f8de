"""Issue 11, item 9: a Redis outage mid-run keeps the run going on a local database.

Units used to end with a one-line ``ConnectionError`` and 0 examples. Now the run goes on
with the local directory database, says so once, and never claims a failure was "saved in
the example database" when it was not (``--database none`` included). A fake Redis that
answers the start-up ``PING`` and then goes away runs everywhere; the same check against
a real ``redis-server`` is skipped where none is installed.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.roundtrip import Notice, Status, UnitFinished, run
from tests.faults._project import LOSSY, command, project

redis = pytest.importorskip("redis")


def _vanishing_redis() -> tuple[str, socket.socket]:
    """A Redis that answers the client's handshake and one PING, then is gone for good."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(30)

    def serve() -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            buf = b""
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while buf.startswith(b"*") and b"\r\n" in buf:
                    parts = buf.split(b"\r\n")
                    n = int(parts[0][1:])
                    if len(parts) < 2 * n + 2:
                        break
                    cmd = parts[2].upper()
                    buf = b"\r\n".join(parts[2 * n + 1:])
                    if cmd == b"PING":
                        conn.sendall(b"+PONG\r\n")
                        server.close()  # the outage: nothing listens any more
                        return
                    conn.sendall(b"%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n"
                                 if cmd == b"HELLO" else b"+OK\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return f"redis://127.0.0.1:{server.getsockname()[1]}/0", server


def test_an_outage_falls_back_to_a_local_database(tmp_path: Path) -> None:
    url, server = _vanishing_redis()
    config = project(tmp_path, LOSSY)
    argv = command(config, "--property", "roundtrip", "--max-examples", "50")
    argv[argv.index("--database") + 1] = url
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                              cwd=tmp_path, check=False)
    finally:
        server.close()
    err = done.stderr
    assert done.returncode == 1, err  # the lossy pair fails; nothing is an ERROR
    assert err.count(f"note: the example database {url} stopped answering") == 1
    doc = json.loads((tmp_path / "report.json").read_text())
    assert [u["status"] for u in doc["units"]] == ["failed", "failed"]  # not ERROR
    assert all(u["examples"] > 0 for u in doc["units"])
    assert "ConnectionError" not in "".join(u["message"] for u in doc["units"])
    assert ("saved only in the local fallback .hypothesis/examples, not in the shared "
            "example database: a run with --database .hypothesis/examples replays it") in err
    assert (tmp_path / ".hypothesis" / "examples").is_dir()  # really saved there


def test_a_workers_fallback_is_beside_the_config_not_in_cwd(tmp_path: Path) -> None:
    """With --workers 2, each unit's process opens the database itself; its fallback is
    the config's folder, as the parent's is (it used to be the worker's cwd)."""
    url, server = _vanishing_redis()
    (tmp_path / "proj").mkdir()
    config = project(tmp_path / "proj", LOSSY)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    argv = command(config, "--property", "roundtrip", "--max-examples", "50",
                   "--workers", "2")
    argv[argv.index("--database") + 1] = url
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd,
                              check=False)
    finally:
        server.close()
    assert done.returncode == 1, done.stderr
    assert "stopped answering" in done.stderr
    saved = tmp_path / "proj" / ".hypothesis" / "examples"
    assert saved.is_dir() and any(saved.iterdir()), done.stderr
    assert not (cwd / ".hypothesis").exists()
    assert f"saved only in the local fallback {saved}, not in the shared" in done.stderr


def test_no_database_no_claim_it_was_saved(tmp_path: Path) -> None:
    config = project(tmp_path, LOSSY)
    done = subprocess.run(command(config, "--property", "roundtrip", "--max-examples",
                                  "50"),
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          check=False)
    assert done.returncode == 1, done.stderr
    assert "FAILED" in done.stderr and "saved in the example database" not in done.stderr


def test_a_real_redis_dying_mid_run(real_redis: tuple[str, subprocess.Popen[bytes]],
                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.roundtrip.test_runner import tiny

    monkeypatch.chdir(tmp_path)  # the local fallback is .hypothesis/examples here
    url, proc = real_redis
    events: list[Any] = []
    for event in run(tiny(), database=url, max_examples=20):
        events.append(event)
        if isinstance(event, UnitFinished) and proc.poll() is None:
            proc.kill()  # the outage, after the first unit
            proc.wait(10)
    results = [e.result for e in events if isinstance(e, UnitFinished)]
    assert [r.status for r in results] == [Status.PASSED] * len(results)
    assert all(r.examples > 0 for r in results)
    assert len([e for e in events if isinstance(e, Notice)]) == 1


def test_the_fallback_switches_once_and_for_good() -> None:
    from hypothesis.database import InMemoryExampleDatabase

    from compatfuzz.roundtrip._engine._database import FallbackDatabase

    class Down(InMemoryExampleDatabase):
        calls = 0

        def fetch(self, key: bytes) -> Iterator[bytes]:
            Down.calls += 1
            raise redis.ConnectionError("gone")
            yield b""  # a generator, like RedisExampleDatabase.fetch

    local = InMemoryExampleDatabase()
    db = FallbackDatabase(Down(), local, label="redis://x", local_label="local",
                          errors=(redis.RedisError,))
    assert list(db.fetch(b"k")) == [] and db.notice is not None
    db.save(b"k", b"v")
    assert list(db.fetch(b"k")) == [b"v"] == list(local.fetch(b"k"))
    assert Down.calls == 1
    assert sys.modules["redis"] is redis


# -- issue 22, item 4: junk under a unit's key must not hide its saved failure ----------

UNIT = "t::roundtrip[v1->v2]"


def _api(bug: Any) -> Any:
    """The test project's API; ``bug(n)`` says whether the v1 -> v2 conversion loses
    ``spec.n``."""
    from compatfuzz.roundtrip import API
    from tests.faults._project import SCHEMA

    def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        out = {**obj, "apiVersion": desired}
        spec = obj.get("spec") or {}
        if desired.endswith("/v2") and "n" in spec and bug(spec["n"]):
            out["spec"] = {k: v for k, v in spec.items() if k != "n"}
        return out

    return API.from_schemas("t", {"v1": SCHEMA, "v2": SCHEMA}, kind="T",
                            group="g.example.com", convert=convert)


def _junk(count: int) -> list[bytes]:
    """``count`` distinct short entries that decode as choice sequences (booleans and
    one-byte integers): Hypothesis replays a key's entries shortest first, so these all
    come before a real failure (about 18 bytes here)."""
    import random

    rnd = random.Random(22)
    junk: set[bytes] = set()
    while len(junk) < count:
        junk.add(b"".join(rnd.choice([b"\x00", b"\x01", b"A" + bytes([rnd.randrange(256)])])
                          for _ in range(rnd.randint(1, 6))))
    return sorted(junk)


def _unit_result(url: str, bug: Any, max_examples: int) -> Any:
    from tests.roundtrip.test_runner import finished

    return finished(run(_api(bug), database=url, only=[UNIT],
                        max_examples=max_examples))[UNIT]


def test_junk_under_a_units_key_does_not_hide_its_saved_failure(
        real_redis: tuple[str, subprocess.Popen[bytes]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 junk entries under the unit's key used the whole example budget before the
    saved failure came up, so a still-present bug passed."""
    monkeypatch.chdir(tmp_path)
    url, _ = real_redis
    first = _unit_result(url, lambda n: n >= 500, 300)  # found and shrunk to n == 500
    assert first.status is Status.FAILED and first.counterexample is not None
    assert first.counterexample.object["spec"] == {"n": 500}
    client = redis.Redis.from_url(url)
    prefix = b"compatfuzz:compatfuzz:" + UNIT.encode() + b":"
    keys = [k for k in client.scan_iter() if k.startswith(prefix)
            and not k.endswith((b".secondary", b".pareto"))]
    assert len(keys) == 1  # Hypothesis's own key for the unit: junk it
    client.sadd(keys[0], *_junk(2000))
    # the same bug, narrowed: random generation alone almost never hits n == 500
    again = _unit_result(url, lambda n: n == 500, 20)
    assert again.status is Status.FAILED, again.message
    assert again.counterexample is not None
    assert again.counterexample.object["spec"] == {"n": 500}
    assert "replayed the 1 failure compatfuzz saved for this unit first" in again.replayed
    assert "ignored 2,000 other entries under this unit's key" in again.replayed
    assert client.scard(keys[0]) >= 2000  # somebody else's entries are left alone
    client.close()
