"""The real kube-apiserver and etcd as an unlucky user meets them: a converter that hangs
while the server waits on it, two runs started side by side on one machine.

These start real binaries (``assets``/``real_endpoint`` in tests/conftest.py skip where
they cannot be found or built)."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real import _backend
from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._pki import mint
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.errors import ConverterError, ExampleRejected
from compatfuzz.roundtrip import API
from compatfuzz.roundtrip._check._properties import served
from compatfuzz.roundtrip._check._real import RealBackend, attach, backend_for, install_api
from compatfuzz.roundtrip._engine._unit import run_unit
from compatfuzz.roundtrip._events import Property, Status, Unit
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


@pytest.mark.extended  # waits the server's own 30 s; the deadline test below is the quick case
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


@pytest.mark.extended  # two control planes at once; one run's ports are the quick case everywhere
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


#: what a broken webhook of the user's answers a ConversionReview with
GARBAGE: dict[str, Any] = {
    "not-json": lambda review: b"<html>502 Bad Gateway</html>",
    "wrong-uid": lambda review: json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": "not-" + review["request"]["uid"],
                     "result": {"status": "Success"},
                     "convertedObjects": review["request"]["objects"]}}).encode(),
    "no-objects": lambda review: json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": review["request"]["uid"], "result": {"status": "Success"},
                     "convertedObjects": []}}).encode(),
}


@contextlib.contextmanager
def _garbage_webhook(folder: Path, answer: Any) -> Iterator[tuple[str, Path, list[int]]]:
    """A user's conversion webhook over HTTPS that answers with ``answer(review)``:
    its URL, its CA file and a list that counts its calls."""
    pki = mint(folder / "user-pki")
    calls: list[int] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            calls.append(1)
            data = answer(json.loads(body))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(pki.webhook.cert), str(pki.webhook.key))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/convert", pki.ca, calls
    finally:
        server.shutdown()
        server.server_close()


# not-json in the default run; the other answers through the same path in CI (extended)
@pytest.mark.parametrize("garbage", [
    g if g == "not-json" else pytest.param(g, marks=pytest.mark.extended) for g in GARBAGE])
def test_garbage_from_the_user_s_webhook_fails_with_the_server_s_words(
        assets: Assets, tmp_path: Path, garbage: str) -> None:
    """``webhook = URL`` pointing at a webhook that answers garbage: the unit fails
    (exit 1) with what the API server made of the answer, and the run ends."""
    with _garbage_webhook(tmp_path, GARBAGE[garbage]) as (url, ca, calls):
        config = tmp_path / "compatfuzz.toml"
        config.write_text(
            f'[[api]]\nname = "frobber"\ncrd = {json.dumps(str(FROBBER / "crd.yaml"))}\n'
            f'webhook = "{url}"\nwebhook_ca = {json.dumps(str(ca))}\n')
        env = {**os.environ, "TEST_ASSET_KUBE_APISERVER": str(assets.kube_apiserver),
               "TEST_ASSET_ETCD": str(assets.etcd)}
        done = subprocess.run(
            [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", str(config),
             "--apiserver", "real", "--property", "roundtrip", "--max-examples", "5",
             "--database", "none", "--seed", "1", "--report", str(tmp_path / "r.json")],
            capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    assert calls, "the real server called the user's webhook"
    assert "conversion webhook for frobber.example.com" in done.stderr, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert {u["status"] for u in report["units"]} == {"failed"}
    assert "Traceback" not in done.stderr


#: one unbounded string in two versions, v1 stored
BLOB_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "blobs.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "blobs", "singular": "blob", "kind": "Blob"},
             "versions": [{"name": v, "served": True, "storage": v == "v1", "schema": {
                 "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                     "type": "object", "properties": {"data": {"type": "string"}}}}}}}
                 for v in ("v1", "v2")]}}


def _blobs(tmp_path: Path, endpoint: Endpoint, *, grow: bool) -> RealBackend:
    """A Blob API (one unbounded string) through ``endpoint``; with ``grow`` its converter
    doubles ``spec.data`` on the way into storage (v1)."""
    crd = tmp_path / "blobs.yaml"
    crd.write_text(json.dumps(BLOB_CRD))  # JSON is YAML

    def to_hub(obj: dict[str, Any]) -> dict[str, Any]:
        out = {**obj, "apiVersion": "example.com/v1"}
        if grow and obj["apiVersion"] == "example.com/v2":
            out["spec"] = {"data": obj["spec"]["data"] * 2}
        return out

    def from_hub(hub: dict[str, Any], version: str) -> dict[str, Any]:
        return {**hub, "apiVersion": f"example.com/{version}"}

    api = API.from_crd("blobs", crd, to_hub=to_hub, from_hub=from_hub, apiserver="real")
    return RealBackend(api, endpoint)


def _blob(size: int) -> dict[str, Any]:
    return {"apiVersion": "example.com/v2", "kind": "Blob", "spec": {"data": "x" * size}}


UNIT = Unit("blobs", "Blob", Property.ROUNDTRIP, ("v2", "v1"))


@pytest.mark.parametrize("mib", [1.6, 2.5, 3.2], ids=["etcd", "grpc", "apiserver"])
def test_an_object_larger_than_the_server_stores_is_discarded_not_failed(
        real_endpoint: Endpoint, tmp_path: Path, mib: float) -> None:
    """etcd refuses an object over 1.5 MiB, kube-apiserver's gRPC client one over 2 MiB,
    kube-apiserver a request over 3 MiB: each was a ConverterError blaming an identity
    converter. No cluster can hold such an object: the example is discarded."""
    backend = _blobs(tmp_path, real_endpoint, grow=False)
    try:
        served(backend, UNIT, _blob(1024 * 1024))  # a 1 MiB object goes through
        with pytest.raises(ExampleRejected, match="more than etcd stores"):
            served(backend, UNIT, _blob(int(mib * 1024 * 1024)))
    finally:
        backend.close()


def test_a_converter_that_grows_an_object_past_etcd_s_limit_fails_naming_it(
        real_endpoint: Endpoint, tmp_path: Path) -> None:
    backend = _blobs(tmp_path, real_endpoint, grow=True)
    try:
        with pytest.raises(ConverterError, match="too large for the API server once "
                                                 "converted") as caught:
            served(backend, UNIT, _blob(1024 * 1024))
    finally:
        backend.close()
    assert "the conversion made it larger" in str(caught.value)


def test_a_long_run_does_not_keep_every_object_it_created(
        real_endpoint: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example left its objects on the server, so a night of examples filled etcd
    and kube-apiserver's watch cache. A kind's objects are deleted every SWEEP_EVERY
    creates (benchmarks/bench_etcd_disk.py measures etcd's file over a long run)."""
    monkeypatch.setattr(_backend, "SWEEP_EVERY", 3)
    backend = _blobs(tmp_path, real_endpoint, grow=False)
    path = f"/apis/example.com/v1/namespaces/{real_endpoint.namespace}/blobs"
    try:
        backend.client.request("DELETE", path)
        stored = []
        for n in range(10):
            served(backend, UNIT, _blob(n))
            stored.append(len(backend.client.request("GET", path)["items"]))
    finally:
        backend.close()
    assert max(stored) <= 3, stored
    assert stored[:4] == [1, 2, 3, 1], stored  # swept before the fourth example's create
