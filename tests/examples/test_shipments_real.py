"""examples/shipments through a real kube-apiserver (issue 18, "Must show"): the correct
converter passes, and every seeded bug is caught, within the default 100 examples, in
``compatfuzz fuzz``, ``--replay`` and pytest, the server converting through compatfuzz's
webhook. The same expectations as the model-mode tests (``test_shipments``): a bug fails
only on the fields it touches, and with a counterexample shrunk to them."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._client import Client
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.cli import main
from compatfuzz.roundtrip import UnitFinished, run
from compatfuzz.roundtrip._check._real import attach, install_api
from tests.examples import test_shipments as model

pytest_plugins = ["pytester"]


@pytest.fixture
def served(real_endpoint: Endpoint) -> Iterator[Endpoint]:
    """The session's control plane, this process checking through it."""
    yield real_endpoint
    attach(None)


def _through(endpoint: Endpoint, config: Path) -> list[Any]:
    """``config``'s APIs in real mode, their CRD installed on ``endpoint``."""
    apis = model.load_apis(config)
    client = Client(endpoint)
    try:
        for api in apis:
            api.apiserver = "real"
            install_api(client, api, endpoint)
    finally:
        client.close()
    attach(endpoint)
    return apis


#: caught in a few seconds through the server; the others (10-30 s each on a loaded
#: 2-core machine) with --run-slow
QUICK = {"priority_defaulted_in_converter", "notes_stashed_for_v1alpha1_only",
         "join_without_brackets"}


@pytest.mark.parametrize("bug", [b if b in QUICK else pytest.param(b, marks=pytest.mark.slow)
                                 for b in model.BUGS])
def test_every_seeded_bug_is_caught_through_the_real_server(
        bug: str, served: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = model.EXPECTED[bug]
    if expect.error.endswith(": '"):  # the model's wording; the server names the field
        monkeypatch.setitem(model.EXPECTED, bug, dataclasses.replace(
            expect, error=expect.error.split(":")[0]))
    apis = _through(served, model.bug_config(bug))
    only = [f"shipments::{model.EXPECTED[bug].first}"]
    results = [e.result for e in run(apis, seed=model.SEED, database="none", only=only)
               if isinstance(e, UnitFinished)]
    units = [{"id": r.unit.id, "status": str(r.status), "message": r.message,
              "counterexample": r.counterexample and r.counterexample.to_json()}
             for r in results]
    (unit,) = model.check_caught(bug, units)
    cx = unit["counterexample"]
    assert cx["shrunk"] and len(cx["object"].get("spec", {})) <= 1, cx["object"]
    assert "Disagreement" not in cx["error_type"]


@pytest.mark.extended  # test_real_roundtrip.py passes a sound converter through the server
def test_the_correct_converter_passes_through_the_real_server(served: Endpoint) -> None:
    apis = _through(served, model.SOUND)
    results = [e.result for e in run(apis, seed=model.SEED, database="none",
                                     max_examples=10, properties=["roundtrip", "valid"])
               if isinstance(e, UnitFinished)]
    problems = {r.unit.id: r.message for r in results if str(r.status) != "passed"}
    assert len(results) == 12 and not problems, problems


@pytest.mark.slow  # ~15 s and 3 control planes: test_real_modes takes the Frobber so
def test_fuzz_and_replay_catch_a_bug_through_the_real_server(
        assets: Assets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(assets.kube_apiserver))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(assets.etcd))
    bug = model.CLI_BUG
    report = tmp_path / "report.json"
    rc = main([*model.fuzz_args(model.bug_config(bug)), "--apiserver", "real", "--seed",
               str(model.SEED), "--property", "roundtrip", "--max-examples", "30",
               "--report", str(report)])
    assert rc == 1
    units = json.loads(report.read_text())["units"]
    failed = model.check_caught(bug, units)
    err = capsys.readouterr().err
    assert "through the real API server" in err
    cx_file = failed[0]["counterexample_file"]
    replay = ["--replay", cx_file, "--apiserver", "real"]
    assert main([*model.fuzz_args(model.bug_config(bug)), *replay]) == 1
    assert "still failing" in capsys.readouterr().err
    assert main([*model.fuzz_args(model.SOUND), *replay]) == 0
    assert "passes now" in capsys.readouterr().err


@pytest.mark.extended  # the plugin and the server each have default tests; together in CI
def test_pytest_catches_a_bug_through_the_real_server(assets: Assets,
                                                       pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(assets.kube_apiserver))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(assets.etcd))
    for name in ("crd.yaml", "conversion.py", "bugs.py", "compatfuzz.toml",
                 "bug_critical_becomes_high.toml"):
        shutil.copy(model.SHIPMENTS / name, pytester.path / name)
    unit = "shipments::roundtrip[v1->v1alpha1]"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--compatfuzz-seed={model.SEED}",
        "--compatfuzz-apiserver", "real", "--compatfuzz-max-examples", "30",
        f"bug_critical_becomes_high.toml::{unit}", f"compatfuzz.toml::{unit}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*through the real API server*",
        "*spec.priority: changed: \"Critical\" -> \"High\"*",
        "replay: pytest *--compatfuzz-apiserver real*",  # replays through a server too
    ])
