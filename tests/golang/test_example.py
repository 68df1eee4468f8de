"""examples/go-operator: a kubebuilder API module of our own (v1alpha1, v1beta1 spokes,
v1 Hub) whose sound conversion passes every unit, through the model and through a real
kube-apiserver calling the Go program as its webhook, and whose seeded bugs
(``SHIPYARD_BUG=<name>``, examples/go-operator/README.md) are each caught with a
minimal counterexample. The default run checks each bug on seed 1 with the unit that
shows it first; ``benchmarks/bench_go_seeded.py`` checks 20 seeds."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._client import Client
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.cli import main
from compatfuzz.roundtrip import UnitFinished, load_config, run
from compatfuzz.roundtrip._check._real import attach, install_api

from .conftest import EXAMPLE, need_go

CONFIG = EXAMPLE / "compatfuzz.toml"

#: bug -> (the unit that shows it first on seed 1, what its failure says)
EXPECTED: dict[str, tuple[str, str]] = {
    "nil-pointer-zero-struct": ("roundtrip[v1->v1alpha1]", "spec.insurance: added"),
    "empty-slice-vs-nil": ("valid[v1beta1->v1]", "a vessel that allows no cargo"),
    "convertfrom-drops-field": ("roundtrip[v1->v1beta1]", "observedGeneration"),
    "annotation-not-cleaned": ("roundtrip[v1->v1alpha1]",
                               "annotations it did not write"),
    "wrong-unit": ("roundtrip[v1->v1alpha1]", "spec.speed.deciKnots: changed"),
    "map-keys-lost": ("roundtrip[v1->v1beta1]", "spec.tags."),
    "split-not-joined": ("roundtrip[v1->v1alpha1]", "spec.homePort.country: changed"),
    "rename-lost-on-way-back": ("roundtrip[v1->v1alpha1]", "spec.master: changed"),
    "panic-on-empty-list": ("roundtrip[v1->v1beta1]",
                            "at api/v1beta1/vessel_conversion.go:"),
    "quantity-format": ("roundtrip[v1->v1alpha1]", "spec.cargoCapacity: changed"),
    "hub-field-not-restored": ("roundtrip[v1->v1beta1]", "spec."),
}


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    need_go()
    monkeypatch.delenv("SHIPYARD_BUG", raising=False)
    yield


def _results(apis: list[Any], **kwargs: Any) -> list[Any]:
    return [e.result for e in run(apis, seed=1, database="none", **kwargs)
            if isinstance(e, UnitFinished)]


def test_the_sound_conversion_passes_every_unit_through_the_model(example: None) -> None:
    # 25 examples a unit (not the profile's 100: 90 s of Go round trips on 2 cores); the
    # seeded bugs below are each caught within them
    results = _results(load_config(CONFIG), max_examples=25)
    assert len(results) == 18  # roundtrip, valid: 6 pairs; path_independent: 6 paths
    failed = [(r.unit.id, r.message) for r in results if str(r.status) != "passed"]
    assert failed == []


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_a_seeded_bug_is_caught_with_a_minimal_counterexample(
        example: None, bug: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIPYARD_BUG", bug)  # read by the Go process started below
    unit, says = EXPECTED[bug]
    (result,) = _results(load_config(CONFIG), only=[f"vessels::{unit}"])
    assert str(result.status) == "failed", (bug, result.message)
    assert result.counterexample is not None
    assert says in result.message + result.counterexample.error, result.message


def test_init_writes_this_config_for_the_kubebuilder_project(example: None,
                                                             tmp_path: Path) -> None:
    project = tmp_path / "shipyard"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(
        "compatfuzz.toml", ".hypothesis", "compatfuzz-counterexamples"))
    assert main(["init", str(project), "--config", str(project / "compatfuzz.toml")]) == 0
    written = (project / "compatfuzz.toml").read_text()
    assert 'go = { module = ".", packages = ["./api/v1alpha1", "./api/v1beta1", ' \
           '"./api/v1"] }' in written
    assert 'crd = "config/crd/bases/fleet.example.com_vessels.yaml"' in written
    (api,) = load_config(project / "compatfuzz.toml")
    assert [k.name for k in api.kinds] == ["Vessel"]


def test_a_project_without_two_versions_is_told_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "PROJECT").write_text(
        "domain: example.com\nrepo: example.com/x\nresources:\n- group: a\n  kind: K\n"
        "  version: v1\n  path: example.com/x/api/v1\n")
    assert main(["init", str(tmp_path), "--config", str(tmp_path / "c.toml")]) == 2
    err = capsys.readouterr().err
    assert "PROJECT at $.resources: no kind of this project is served in two versions" in err
    assert "fix: add a version: kubebuilder create api" in err and "Traceback" not in err
    assert not (tmp_path / "c.toml").exists()


# --- through a real kube-apiserver: the Go program serves the CRD's webhook -----------

@pytest.fixture
def served(real_endpoint: Endpoint, example: None) -> Iterator[Endpoint]:
    yield real_endpoint
    attach(None)


def _through(endpoint: Endpoint) -> list[Any]:
    apis = load_config(CONFIG)
    client = Client(endpoint)
    try:
        for api in apis:
            api.apiserver = "real"
            install_api(client, api, endpoint)
    finally:
        client.close()
    attach(endpoint)
    return apis


@pytest.mark.extended  # the seeded bugs go through the real server by default
def test_the_sound_conversion_passes_through_the_real_server(served: Endpoint) -> None:
    apis = _through(served)
    assert apis[0].converter.webhook().url.startswith("https://127.0.0.1:")
    results = _results(apis, properties=["roundtrip", "valid"], max_examples=25)
    assert len(results) == 12
    assert [(r.unit.id, r.message) for r in results if str(r.status) != "passed"] == []


def test_a_seeded_bug_is_caught_through_the_real_server(
        served: Endpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHIPYARD_BUG", "rename-lost-on-way-back")
    apis = _through(served)
    (result,) = _results(apis, only=["vessels::roundtrip[v1->v1alpha1]"])
    assert str(result.status) == "failed"
    assert result.counterexample is not None
    said = result.message + result.counterexample.error
    assert "through the real API server" in said and "spec.master: changed" in said
    assert '"master"' in json.dumps(result.counterexample.object)
