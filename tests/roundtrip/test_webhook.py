"""A real conversion webhook as the converter: a ConversionReview server on loopback
(plain HTTP, and HTTPS with a throw-away CA when openssl is installed)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.cli import main
from compatfuzz.errors import ConverterError, InvalidArgument
from compatfuzz.roundtrip import API, Status, UnitFinished, run, webhook_converter
from tests._net import free_port

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"
GROUP = "frobber.example.com"


def _module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"webhook_{name}", FROBBER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # lossy.py imports its sibling conversion.py by name: give it that one, whatever other
    # tests left under the name "conversion" in sys.modules.
    saved = sys.modules.get("conversion")
    if name != "conversion":
        sys.modules["conversion"] = _module("conversion")
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop("conversion", None)
        else:
            sys.modules["conversion"] = saved
    return module


def _hub_convert(module: Any) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        return module.from_hub(module.to_hub(obj), desired.rsplit("/", 1)[-1])
    return convert


Reply = Callable[[dict[str, Any]], dict[str, Any]]


def _reviewer(convert: Callable[[dict[str, Any], str], dict[str, Any]]) -> Reply:
    """What a correct webhook answers: the converted objects, same uid, Success."""
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        objects = [convert(o, request["desiredAPIVersion"]) for o in request["objects"]]
        return {"uid": request["uid"], "result": {"status": "Success"},
                "convertedObjects": objects}
    return reply


@pytest.fixture
def serve(request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(reply: Reply, context: ssl.SSLContext | None = None) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                assert review["kind"] == "ConversionReview"
                body = json.dumps({"apiVersion": review["apiVersion"],
                                   "kind": "ConversionReview",
                                   "response": reply(review["request"])}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if context is not None:
            server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        scheme = "https" if context is not None else "http"
        return f"{scheme}://127.0.0.1:{server.server_address[1]}/convert"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _results(api: API, **kwargs: Any) -> dict[str, Any]:
    return {e.result.unit.id: e.result for e in run(api, database="none", seed=3, **kwargs)
            if isinstance(e, UnitFinished)}


def test_a_correct_webhook_passes_and_a_lossy_one_is_caught(serve: Callable[..., str]) -> None:
    good = serve(_reviewer(_hub_convert(_module("conversion"))))
    api = API.from_crd("frobber", FROBBER / "crd.yaml", convert=webhook_converter(good))
    results = _results(api, properties=["roundtrip", "valid"])
    assert results and all(r.status is Status.PASSED for r in results.values()), results

    lossy = serve(_reviewer(_hub_convert(_module("lossy"))))
    api = API.from_crd("frobber", FROBBER / "crd.yaml", convert=webhook_converter(lossy))
    failed = _results(api, only=["frobber::roundtrip[v7beta1->v6]"])
    result = failed["frobber::roundtrip[v7beta1->v6]"]
    assert result.status is Status.FAILED
    assert result.counterexample.object["spec"] == {"params": ["", ""]}
    assert [row["path"] for row in result.counterexample.diff] == ["spec.params[1]"]


@pytest.mark.parametrize(("reply", "message"), [
    (lambda r: {"uid": r["uid"], "result": {"status": "Failure", "message": "no v9 here"}},
     "refused the conversion to frobber.example.com/v7beta1: no v9 here"),
    (lambda r: {"uid": "someone-else", "result": {"status": "Success"},
                "convertedObjects": r["objects"]}, "answered uid 'someone-else'"),
    (lambda r: {"uid": r["uid"], "result": {"status": "Success"}, "convertedObjects": []},
     "expected a list of exactly the one object sent"),
])
def test_a_misbehaving_webhook_is_a_converter_error(serve: Callable[..., str], reply: Reply,
                                                    message: str) -> None:
    api = API.from_crd("frobber", FROBBER / "crd.yaml",
                       convert=webhook_converter(serve(reply)))
    obj = {"apiVersion": f"{GROUP}/v6", "kind": "Frobber", "spec": {"param": "a"}}
    with pytest.raises(ConverterError, match="convert\\(\\) raised WebhookError") as info:
        api.convert("Frobber", obj, "v6", "v7beta1")
    assert message in str(info.value)


def test_an_unreachable_webhook_says_so() -> None:
    convert = webhook_converter(f"http://127.0.0.1:{free_port()}/convert", timeout=2)
    with pytest.raises(ConverterError, match="cannot reach the conversion webhook"):
        convert({"apiVersion": f"{GROUP}/v6", "kind": "Frobber"}, f"{GROUP}/v7beta1")


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"url": "127.0.0.1:9443/convert"}, "http(s) URL"),
    ({"url": "https://x/convert", "timeout": 0}, "positive number of seconds"),
    ({"url": "https://x/convert", "ca_file": "/nonexistent/ca.crt"}, "is not a file"),
])
def test_bad_arguments_name_the_argument(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(InvalidArgument, match=needle.replace("(", r"\(").replace(")", r"\)")):
        webhook_converter(**kwargs)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_https_webhook_with_a_ca_bundle_from_the_config(
        serve: Callable[..., str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The usual local set-up: a self-signed webhook certificate, its CA in the config."""
    key, cert = tmp_path / "tls.key", tmp_path / "tls.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    url = serve(_reviewer(_hub_convert(_module("conversion"))), context)
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    config = tmp_path / "compatfuzz.toml"
    config.write_text(f'[[api]]\nname = "frobber"\ncrd = "crd.yaml"\nhub = "v6"\n'
                      f'webhook = "{url}"\nwebhook_ca = "tls.crt"\n')
    argv = ["fuzz", "--config", str(config), "--database", "none", "--max-examples", "20",
            "--property", "roundtrip", "-q"]
    assert main(argv) == 0, capsys.readouterr().err
    # Without the CA the certificate is not trusted: every unit ends as a setup error
    # (exit 2, not a property failure: no object is to blame), naming the fix.
    config.write_text(config.read_text().replace('webhook_ca = "tls.crt"\n', ""))
    assert main(argv) == 2
    assert "a certificate we do not trust" in capsys.readouterr().err
    config.write_text(config.read_text() + "webhook_insecure = true\n")
    assert main(argv) == 0


def test_config_errors_for_the_webhook_keys(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    config = tmp_path / "compatfuzz.toml"
    for extra, needle in [('webhook = "https://x/c"\nconvert = "m:f"\n', "webhook and convert"),
                          ('webhook = "ftp://x"\n', "http(s) URL"),
                          ('webhook = "https://x/c"\nwebhook_ca = "no.crt"\n', "no.crt")]:
        config.write_text(f'[[api]]\nname = "frobber"\ncrd = "crd.yaml"\n{extra}')
        assert main(["fuzz", "--config", str(config)]) == 2
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err, err
