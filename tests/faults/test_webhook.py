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
