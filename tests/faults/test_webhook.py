"""Issue 11, items 4 and 10: a conversion webhook that drips, hangs or cannot be reached.

``webhook_timeout`` bounds the whole request (it used to apply per socket read, so a
server dripping one byte a second never timed out); transport and TLS problems are setup
errors (exit 2), not property failures; ``webhook_insecure`` must be a boolean.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compatfuzz.cli import main
from compatfuzz.roundtrip import (
    API,
    Status,
    UnitFinished,
    WebhookUnavailable,
    run,
    webhook_converter,
)
from tests._net import free_port
from tests.faults._project import SCHEMA

GROUP = "g.example.com"


@pytest.fixture
def dripping() -> Iterator[str]:
    """A server that reads the request, then drips an HTTP answer one byte per 0.1 s
    (each read succeeds well within any per-read timeout); it stops after 10 s."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    done = threading.Event()

    stop_at = time.monotonic() + 10  # bounded on old code too: then it refuses

    def serve() -> None:
        while not done.is_set() and time.monotonic() < stop_at:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    conn.recv(65536)
                    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n" + b" " * 40:
                        if done.is_set():
                            break
                        conn.sendall(bytes([byte]))
                        time.sleep(0.1)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/convert"
    done.set()
    thread.join(5)
    server.close()


def test_the_timeout_bounds_the_whole_request(dripping: str) -> None:
    convert = webhook_converter(dripping, timeout=1)
    started = time.monotonic()
    with pytest.raises(WebhookUnavailable, match="did not answer within 1s"):
        convert({"apiVersion": f"{GROUP}/v1", "kind": "T"}, f"{GROUP}/v2")
    assert time.monotonic() - started < 3


def _results(api: API) -> list[UnitFinished]:
    return [e for e in run(api, database="none", seed=2, max_examples=20,
                           properties=["roundtrip"]) if isinstance(e, UnitFinished)]


def test_an_unreachable_webhook_is_a_setup_error_not_a_failure() -> None:
    url = f"http://127.0.0.1:{free_port()}/convert"
    api = API.from_schemas("t", {"v1": SCHEMA, "v2": SCHEMA}, kind="T", group=GROUP,
                           convert=webhook_converter(url, timeout=2))
    results = [e.result for e in _results(api)]
    assert [r.status for r in results] == [Status.ERROR, Status.ERROR]
    for r in results:
        assert r.counterexample is None  # no object is to blame
        assert "cannot reach the conversion webhook" in r.message
        assert r.examples <= 2  # stopped at once, not shrunk


def test_a_dripping_webhook_ends_the_unit_quickly(dripping: str) -> None:
    api = API.from_schemas("t", {"v1": SCHEMA, "v2": SCHEMA}, kind="T", group=GROUP,
                           convert=webhook_converter(dripping, timeout=0.5))
    started = time.monotonic()
    results = [e.result for e in _results(api)]
    assert time.monotonic() - started < 6
    assert {r.status for r in results} == {Status.ERROR}
    assert all("did not answer within 0.5s" in r.message for r in results)


@pytest.mark.parametrize("value", ['"yes"', '"false"', "1"])
def test_webhook_insecure_must_be_a_boolean(tmp_path: Path, value: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    crd = Path(__file__).resolve().parents[2] / "examples" / "frobber" / "crd.yaml"
    config = tmp_path / "compatfuzz.toml"
    config.write_text(f'[[api]]\nname = "f"\ncrd = "{crd}"\n'
                      f'webhook = "https://127.0.0.1:1/c"\nwebhook_insecure = {value}\n')
    assert main(["fuzz", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "webhook_insecure must be true or false" in err and "$.api[0].webhook_insecure" in err


@pytest.mark.parametrize("content", ["root:x:0:0:root:/root:/bin/bash\n", "\x00\x01DER?",
                                     "", "-----BEGIN CERTIFICATE-----\nnot base64\n"])
def test_a_webhook_ca_that_is_not_pem_is_exit_2_naming_key_and_file(
        tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``webhook_ca = "/etc/passwd"`` (or any file without a PEM certificate) used to be an
    ``ssl.SSLError`` traceback and exit 1."""
    crd = Path(__file__).resolve().parents[2] / "examples" / "frobber" / "crd.yaml"
    (tmp_path / "passwd").write_text(content)
    config = tmp_path / "compatfuzz.toml"
    config.write_text(f'[[api]]\nname = "f"\ncrd = "{crd}"\n'
                      'webhook = "https://127.0.0.1:1/c"\nwebhook_ca = "passwd"\n')
    assert main(["fuzz", "--config", str(config), "--database", "none"]) == 2
    err = capsys.readouterr().err
    assert "webhook_ca" in err and "$.api[0].webhook_ca" in err
    assert str(tmp_path / "passwd") in err and "is not a PEM CA bundle" in err
    assert "Traceback" not in err and "root:x" not in err


# -- issue 22, item 3: an answer that closes the connection and drips its body ----------

#: Headers a webhook might answer with that make http.client drop ``conn.sock`` (the
#: response reads through its own file object): the watchdog used to find nothing to
#: shut, so the body was read byte by byte to its end.
CLOSING = {
    "http/1.0": b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n",
    "connection-close": b"HTTP/1.1 200 OK\r\nConnection: close\r\n"
                        b"Content-Length: 10000\r\n\r\n",
}


@dataclass
class Dripping:
    """The dripping server's address, and for each connection it served, how long the
    client stayed before hanging up (the whole drip, 15 s, if it never did)."""

    url: str
    held: list[float] = field(default_factory=list)
    serving: threading.Event = field(default_factory=threading.Event)

    def settled(self) -> list[float]:
        """``held``, once the connection being served (if any) has ended."""
        deadline = time.monotonic() + 20
        while self.serving.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.held


# connection-close in the default run; HTTP/1.0's end-of-body-at-close in CI (extended)
@pytest.fixture(params=[pytest.param(k, marks=pytest.mark.extended) if k == "http/1.0" else k
                        for k in sorted(CLOSING)])
def closing(request: pytest.FixtureRequest) -> Iterator[Dripping]:
    """A server that answers its headers at once, then drips the body one byte per 0.1 s
    for at most 15 s a connection (past the default 10 s example deadline), one
    connection at a time; it stops after 60 s whatever happens."""
    head = CLOSING[request.param]
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    done = threading.Event()
    stop_at = time.monotonic() + 60
    drip = Dripping("")

    def serve() -> None:
        while not done.is_set() and time.monotonic() < stop_at:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            drip.serving.set()
            with conn:
                conn.settimeout(1)
                started = time.monotonic()
                try:
                    conn.recv(65536)
                    conn.sendall(head)
                    for _ in range(150):
                        if done.is_set():
                            break
                        conn.sendall(b" ")
                        time.sleep(0.1)
                except OSError:
                    pass
                drip.held.append(time.monotonic() - started)
            drip.serving.clear()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    drip.url = f"http://127.0.0.1:{server.getsockname()[1]}/convert"
    yield drip
    done.set()
    thread.join(5)
    server.close()


def test_the_timeout_bounds_a_closing_dripping_answer(closing: Dripping) -> None:
    convert = webhook_converter(closing.url, timeout=1)
    started = time.monotonic()
    with pytest.raises(WebhookUnavailable, match="did not answer within 1s"):
        convert({"apiVersion": f"{GROUP}/v1", "kind": "T"}, f"{GROUP}/v2")
    assert time.monotonic() - started < 3  # was the whole drip: 15 s


def _webhook_project(tmp_path: Path, url: str, timeout: float) -> Path:
    import json

    for v in ("v1", "v2"):
        (tmp_path / f"{v}.json").write_text(json.dumps(SCHEMA))
    config = tmp_path / "compatfuzz.toml"
    config.write_text('[[api]]\nname = "t"\nkind = "T"\ngroup = "g.example.com"\n'
                      'schemas = { v1 = "v1.json", v2 = "v2.json" }\n'
                      f'webhook = "{url}"\nwebhook_timeout = {timeout}\n')
    return config


@pytest.mark.parametrize("deadline", [[], pytest.param(["--example-deadline", "none"],
                                                     marks=pytest.mark.extended)],
                         ids=["default-deadline", "no-deadline"])
def test_a_closing_dripping_webhook_is_a_setup_error(closing: Dripping, tmp_path: Path,
                                                     deadline: list[str]) -> None:
    """It hung the run with no example deadline, and with the default one (10 s) it was a
    property failure with a counterexample (exit 1) instead of a setup error (exit 2)."""
    from tests.faults._project import fuzz

    config = _webhook_project(tmp_path, closing.url, 1)
    done = fuzz(config, "--property", "roundtrip", "--max-examples", "5", *deadline,
                timeout=45)
    assert done.returncode == 2, done.stderr
    assert [u["status"] for u in done.report["units"]] == ["error", "error"]
    assert all("did not answer within 1s" in u["message"] for u in done.report["units"])
    assert all(u.get("counterexample") is None for u in done.report["units"])
    # the client hung up after its 1 s timeout, not at the end of the 15 s drip (judged
    # by what the server saw, not by the wall clock of a whole process on a shared machine)
    held = closing.settled()
    assert held and max(held) < 7.5, held


def test_an_example_deadline_before_the_webhook_timeout_is_a_setup_error(
        closing: Dripping, tmp_path: Path) -> None:
    """A webhook slower than the per-example deadline (webhook_timeout above it) is still
    the webhook's fault, not the object's: exit 2, no counterexample."""
    from tests.faults._project import fuzz

    config = _webhook_project(tmp_path, closing.url, 30)
    done = fuzz(config, "--property", "roundtrip", "--max-examples", "5",
                "--example-deadline", "1", timeout=45)
    assert done.returncode == 2, done.stderr
    assert [u["status"] for u in done.report["units"]] == ["error", "error"]
    for u in done.report["units"]:
        assert "did not answer within the per-example deadline" in u["message"]
        assert u.get("counterexample") is None
