"""``--apiserver model|real|both`` (issue 18): the run's control plane in ``compatfuzz
fuzz``, ``--replay`` and the pytest plugin, ``path_independent`` through the server,
``both`` reporting the step where the model and the server part, and exit 2 with a
reason for each bad start."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.cli import main
from compatfuzz.errors import ConverterError, Disagreement, InvalidArgument, NotEquivalent
from compatfuzz.roundtrip import API
from compatfuzz.roundtrip._check._both import BothBackend
from compatfuzz.roundtrip._check._properties import served, strategy_for
from compatfuzz.roundtrip._check._real import RealBackend, ServerUnavailable, attach
from compatfuzz.roundtrip._engine._unit import run_unit
from compatfuzz.roundtrip._events import Property, Status, Unit
from tests.roundtrip import gadgets
from tests.roundtrip.test_real_roundtrip import REFUSED_CRD

REPO = Path(__file__).resolve().parents[2]
FROBBER = REPO / "examples" / "frobber"

pytest_plugins = ["pytester"]


@pytest.fixture
def asset_env(assets: Assets, monkeypatch: pytest.MonkeyPatch) -> Assets:
    """The binaries where envtest users keep them, for the CLI in this process."""
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(assets.kube_apiserver))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(assets.etcd))
    return assets


@pytest.fixture
def no_attached() -> Iterator[None]:
    yield
    attach(None)  # close any webhook a test's in-process check opened


def _failing(backend: RealBackend, unit: Unit, examples: int) -> list[Any]:
    """The minimal failing object and its error for ``unit`` through ``backend``, or []."""
    api, kind = backend.api, backend.api.kind(unit.kind)
    found: list[Any] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck), phases=list(Phase))
    @given(strategy_for(api, kind, unit.versions[0]))
    def run(obj: Any) -> None:
        try:
            served(BothBackend(backend), unit, obj)
        except (NotEquivalent, ConverterError):
            found[:] = [obj]
            raise

    try:
        run()
    except (NotEquivalent, ConverterError) as exc:
        found.append(exc)
    return found


def test_path_independent_and_roundtrip_of_three_versions_through_the_server(
        real_endpoint: Endpoint) -> None:
    # gadgets: v1alpha1, v1beta1, v1 (hub and storage); each step also through the
    # model (BothBackend): they must agree on every answer
    backend = RealBackend(gadgets.api(), real_endpoint)
    try:
        for unit in (Unit("gadgets", "Gadget", Property.PATH_INDEPENDENT,
                          ("v1alpha1", "v1beta1", "v1")),
                     Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1alpha1"))):
            assert _failing(backend, unit, 12) == [], unit.id
    finally:
        backend.close()


def test_a_converter_that_leaves_a_field_for_the_server_to_prune_is_caught(
        real_endpoint: Endpoint) -> None:
    # UNSTASHED leaves v1's note in its v1beta1 output: v1beta1's schema prunes it on the
    # server (as in the model): note is lost writing v1, reading v1beta1, updating it
    backend = RealBackend(gadgets.api("unstashed"), real_endpoint)
    try:
        found = _failing(backend, Unit("gadgets", "Gadget", Property.ROUNDTRIP,
                                       ("v1", "v1beta1")), 25)
    finally:
        backend.close()
    assert found, "the server prunes the unstashed note"
    obj, exc = found
    assert not isinstance(exc, Disagreement), exc  # the model agrees with the server
    assert "spec.note" in str(exc) and obj["spec"].get("note") is not None


def test_both_names_the_step_where_the_model_and_the_server_part(
        real_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    api = gadgets.api()
    backend = RealBackend(api, real_endpoint)
    server = api.server(api.kind("Gadget"))
    read = server.read

    def forgetful(stored: dict[str, Any], version: str, *a: Any, **k: Any) -> Any:
        out = read(stored, version, *a, **k)
        if version == "v1beta1":
            out.get("spec", {}).pop("params", None)  # a model bug: loses spec.params
        return out

    monkeypatch.setattr(server, "read", forgetful)
    obj = {"apiVersion": "example.com/v1", "kind": "Gadget", "spec": {"params": ["x"]}}
    try:
        with pytest.raises(Disagreement) as info:
            served(BothBackend(backend),
                   Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1")), obj)
        served(backend, Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1")),
               obj)  # the server alone: the round trip holds
    finally:
        backend.close()
    exc = info.value
    assert exc.step == "get in v1beta1"
    assert exc.server["spec"]["params"] == ["x"] and "params" not in exc.model.get("spec", {})
    assert "spec.params" in str(exc) and "not your converter's" in str(exc)


def test_real_mode_without_a_server_is_a_setup_error_not_a_failure(no_attached: None) -> None:
    api = gadgets.api(apiserver="real")
    unit = Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1"))
    result = run_unit(api, unit, max_examples=3)
    assert result.status is Status.ERROR and result.counterexample is None
    assert "no kube-apiserver runs for this process" in result.message
    assert ServerUnavailable.setup_error


def test_apiserver_modes_are_checked_where_they_are_written(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            ) -> None:
    with pytest.raises(InvalidArgument, match="apiserver must be"):
        gadgets.api(apiserver="kind")
    with pytest.raises(InvalidArgument, match="needs CRDs judged by the API-server"):
        API.from_schemas("plain", {"v1": {"type": "object"}, "v2": {"type": "object"}},
                         convert=lambda o, v: o, apiserver="real")
    config = tmp_path / "compatfuzz.toml"
    config.write_text((FROBBER / "compatfuzz.toml").read_text().replace(
        'name = "frobber"', 'name = "frobber"\napiserver = "reel"').replace(
        '"crd.yaml"', json.dumps(str(FROBBER / "crd.yaml"))))
    (tmp_path / "conversion.py").write_text((FROBBER / "conversion.py").read_text())
    assert main(["fuzz", "--config", str(config), "--max-examples", "1"]) == 2
    err = capsys.readouterr().err
    assert "apiserver must be" in err and "$.api[0].apiserver" in err and "'reel'" in err


@pytest.mark.extended  # two control planes through the CLI; the model path and --apiserver real's
# set-up errors are default tests (test_bad_starts_exit_2_with_the_reason)
def test_fuzz_replay_and_exit_codes_through_the_real_server(
        asset_env: Assets, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--apiserver", "real",
               "--property", "roundtrip", "--max-examples", "15", "--database", "none",
               "--seed", "3", "--workers", "2", "--report", str(out / "report.json")])
    err = capsys.readouterr().err
    assert rc == 1, err
    # two workers at once, each serving its own conversions (tests/roundtrip/
    # test_real_workers.py); nothing said about it
    assert "workers=2" in err and "one at a time" not in err
    assert "kube-apiserver and etcd started at https://127.0.0.1:" in err
    # the printed replay commands use the same judge as the run
    assert re.search(r"replay: compatfuzz fuzz --replay \S+ --config \S+ --apiserver real",
                     err), err
    assert "--compatfuzz-seed=3 --compatfuzz-apiserver real" in err
    doc = json.loads((out / "report.json").read_text())
    failed = [u for u in doc["units"] if u["status"] == "failed"]
    assert [u["id"] for u in failed] == ["frobber::roundtrip[v7beta1->v6]"]
    cx_file = Path(failed[0]["counterexample_file"])
    cx = json.loads(cx_file.read_text())
    assert cx["object"]["spec"] == {"params": ["", ""]}
    assert "through the real API server (stored as v6)" in cx["error"]
    # --replay goes through a real server too: still failing with the lossy converter,
    # passing with the sound one
    replay = ["fuzz", "--replay", str(cx_file), "--apiserver", "real", "--config"]
    assert main([*replay, str(FROBBER / "lossy.toml")]) == 1
    err = capsys.readouterr().err
    assert "still failing" in err and "through the real API server" in err
    # (passing with the sound converter through a server: test_shipments_real, slow)


def test_bad_starts_exit_2_with_the_reason(assets: Assets, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fuzz", "--config", str(FROBBER / "compatfuzz.toml"), "--apiserver", "real",
            "--max-examples", "1", "--database", "none", "--report",
            str(tmp_path / "r.json")]
    for name in ("KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    # no binaries: where it looked, and how to get them
    assert main([*args, "--apiserver-assets", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "setup-envtest" in err and str(empty) in err
    # a start that outlives its timeout: the log's tail, nothing left running
    folder = str(Path(assets.kube_apiserver).parent)
    assert main([*args, "--apiserver-assets", folder, "--apiserver-start-timeout",
                 "0.01s"]) == 2
    err = capsys.readouterr().err
    assert "did not become ready within" in err and "--apiserver-start-timeout" in err


def test_a_refused_crd_exits_2_with_the_server_s_message(
        asset_env: Assets, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(REFUSED_CRD + """\
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object}
""")
    (tmp_path / "conv.py").write_text("def convert(obj, version):\n    return obj\n")
    (tmp_path / "compatfuzz.toml").write_text(
        '[[api]]\nname = "gadgets"\ncrd = "crd.yaml"\nconvert = "conv:convert"\n'
        'apiserver = "real"\n')
    rc = main(["fuzz", "--config", str(tmp_path / "compatfuzz.toml"), "--max-examples",
               "1", "--database", "none"])
    err = capsys.readouterr().err
    assert rc == 2, err
    # refused at the door with the server's words, before any server is started
    assert 'The CustomResourceDefinition "gadgets.example.com" is invalid' in err
    assert "properties[size].default: Invalid value" in err and "fix:" in err


@pytest.mark.slow  # tests/examples/test_shipments_real.py takes the plugin through a server
def test_the_pytest_plugin_shares_one_server_per_session(
        asset_env: Assets, pytester: pytest.Pytester) -> None:
    for name in ("crd.yaml", "conversion.py", "lossy.py", "lossy.toml"):
        (pytester.path / name).write_text((FROBBER / name).read_text())
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "lossy.toml", "-k", "roundtrip",
        "--compatfuzz-apiserver", "real", "--compatfuzz-max-examples", "25")
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    assert "through the real API server (stored as v6)" in text
    assert "spec.params[1]" in text


@pytest.mark.extended  # faults/test_real_server.py sends a user webhook's answers by default
def test_webhook_url_points_the_crd_at_the_user_s_own_webhook(
        asset_env: Assets, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the user's webhook: the lossy Frobber served over HTTPS with the user's own CA
    import importlib.util

    # lossy.py imports its sibling conversion.py, as the config loader lets it: on a
    # worker where no earlier test loaded the Frobber config it was not importable
    monkeypatch.syspath_prepend(str(FROBBER))

    from compatfuzz.apiserver._real._pki import mint
    from compatfuzz.apiserver._real._webhook import ConversionWebhook
    from tests._net import free_port

    spec = importlib.util.spec_from_file_location("lossy_frobber", FROBBER / "lossy.py")
    assert spec is not None and spec.loader is not None
    lossy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lossy)
    pki = mint(tmp_path / "user-pki")
    crd = "frobbers.frobber.example.com"
    user = ConversionWebhook(free_port(), str(pki.webhook.cert), str(pki.webhook.key), {
        crd: lambda obj, a, b: lossy.from_hub(lossy.to_hub(obj), b)})
    config = tmp_path / "compatfuzz.toml"
    config.write_text(
        f'[[api]]\nname = "frobber"\ncrd = {json.dumps(str(FROBBER / "crd.yaml"))}\n'
        f'webhook = "{user.url(crd)}"\nwebhook_ca = {json.dumps(str(pki.ca))}\n')
    try:
        rc = main(["fuzz", "--config", str(config), "--apiserver", "real", "--property",
                   "roundtrip", "--max-examples", "15", "--database", "none", "--seed", "3"])
    finally:
        user.close()
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "frobber::roundtrip[v7beta1->v6] FAILED" in err and "spec.params[1]" in err
    assert user.calls > 0  # the real server converted through the user's webhook


def test_a_run_wide_real_mode_leaves_plain_apis_with_the_model_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"):
        monkeypatch.delenv(name, raising=False)
    for v in ("v1", "v2"):
        (tmp_path / f"{v}.json").write_text('{"type": "object", "properties": '
                                             '{"a": {"type": "integer"}}}')
    (tmp_path / "conv.py").write_text("def convert(obj, version):\n    return obj\n")
    (tmp_path / "compatfuzz.toml").write_text(
        '[[api]]\nname = "plain"\nconvert = "conv:convert"\n'
        '[api.schemas]\nv1 = "v1.json"\nv2 = "v2.json"\n')
    rc = main(["fuzz", "--config", str(tmp_path / "compatfuzz.toml"), "--apiserver", "real",
               "--max-examples", "5", "--database", "none"])
    err = capsys.readouterr().err
    assert rc == 0, err  # no binaries needed: nothing goes through a server
    assert "--apiserver real judges CRDs only; plain stays with the model" in err
