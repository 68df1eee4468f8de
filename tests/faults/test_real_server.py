"""The real kube-apiserver and etcd as an unlucky user meets them: a converter that hangs
while the server waits on it, two runs started side by side on one machine.

These start real binaries (``assets``/``real_endpoint`` in tests/conftest.py skip where
they cannot be found or built)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.roundtrip import API
from compatfuzz.roundtrip._events import Property, Status, Unit
from compatfuzz.roundtrip._real import attach, backend_for, install_api
from compatfuzz.roundtrip._runner import run_unit
from tests.roundtrip import gadgets

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"


def _clear(endpoint: Endpoint) -> None:
    """Delete every Gadget, in v1, the storage version (no conversion, so no converter
    runs): a Gadget another test left would be converted, by a hanging converter, when
    the CRD is installed and its versions listed."""
    client = Client(endpoint)
    try:
        client.request("DELETE", f"/apis/example.com/v1/namespaces/{endpoint.namespace}"
                                 "/gadgets")
    except ServerError as exc:
        if exc.code != 404:  # no Gadget CRD yet
            raise
    finally:
        client.close()


@pytest.fixture
def release(real_endpoint: Endpoint) -> Iterator[threading.Event]:
    """Set at the end of a test: a converter left waiting on it returns then."""
    event = threading.Event()
    _clear(real_endpoint)
    yield event
    event.set()
    _clear(real_endpoint)
    attach(None)  # close the webhook the in-process run opened


def _hanging(release: threading.Event, endpoint: Endpoint) -> API:
    """The Gadget API whose converter to v1beta1 waits until ``release`` (or 120 s),
    installed on ``endpoint`` and checked through it by this process."""
    def from_hub(hub: dict[str, Any], version: str) -> dict[str, Any]:
        if version == "v1beta1":
            release.wait(120)  # hangs here
        return gadgets.from_hub(hub, version)

    api = API.from_crd("gadgets", gadgets.CRD, to_hub=gadgets.to_hub, from_hub=from_hub,
                       apiserver="real")
    attach(endpoint)
    backend_for(api)  # serves the converter before the CRD points at it
    client = Client(endpoint)
    try:
        install_api(client, api, endpoint)
    finally:
        client.close()
    return api


def test_a_converter_that_outlives_the_server_s_timeout_fails_naming_it(
        real_endpoint: Endpoint, release: threading.Event) -> None:
    """Without a per-example deadline the server's own (30 s for a conversion webhook)
    ends the example: the unit fails naming that timeout and the converter's line, after
    one example (each shrink step would wait 30 s again). Before, the hung calls kept
    their handler threads, and once eight were stuck every later conversion, of innocent
    objects too, failed with 'TLS handshake timeout' while the run went on for minutes."""
    unit = Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1"))
    result = run_unit(_hanging(release, real_endpoint), unit, max_examples=5,
                      example_deadline=None)
    assert result.status is Status.FAILED, result.message
    assert "did not answer the API server within the 30s" in result.message
    assert "stuck in test_real_server.py:" in result.message
    assert "in from_hub()" in result.message
    assert "shrinking stopped" in result.message
    assert result.examples == 1
    assert result.counterexample is not None


def test_the_example_deadline_names_the_converter_the_server_waits_on(
        real_endpoint: Endpoint, release: threading.Event) -> None:
    """The example's own thread waits in a socket read; where it is stuck is the
    converter the server called, not ``ssl.py``."""
    unit = Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1"))
    result = run_unit(_hanging(release, real_endpoint), unit, max_examples=5,
                      example_deadline=3.0)
    assert result.status is Status.FAILED, result.message
    assert "3s per-example deadline" in result.message
    assert "stuck in test_real_server.py:" in result.message
    assert "in the converter the API server called" in result.message
    assert "ssl.py" not in result.message


def test_two_runs_started_together_each_get_their_own_ports(assets: Assets,
                                                            tmp_path: Path) -> None:
    """Two nightly jobs on one runner, each ``compatfuzz fuzz --apiserver real``: each
    control plane picks free ports (and picks again when another process took one between
    the pick and the listen), so both pass, each on its own server."""
    env = {**os.environ, "TEST_ASSET_KUBE_APISERVER": str(assets.kube_apiserver),
           "TEST_ASSET_ETCD": str(assets.etcd), "TMPDIR": str(tmp_path)}
    runs = [subprocess.Popen(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
         str(FROBBER / "compatfuzz.toml"), "--apiserver", "real", "--max-examples", "3",
         "--database", "none", "--report", str(tmp_path / f"r{i}.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for i in range(2)]
    outs = [run.communicate(timeout=300) for run in runs]
    for run, (_, err) in zip(runs, outs, strict=True):
        assert run.returncode == 0, err
    urls = [re.search(r"started at (https://127\.0\.0\.1:\d+)", err) for _, err in outs]
    assert all(urls), outs
    assert urls[0] and urls[1] and urls[0].group(1) != urls[1].group(1)
    assert not list(tmp_path.glob("compatfuzz-apiserver-*")), "a run left its folder behind"
