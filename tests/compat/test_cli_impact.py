"""``compatfuzz diff``: the impact of each finding on stored objects in every output
format, ``--assume-ratcheting``/``--kubernetes-version`` and the ``--fail-on-impact``
gate (issue 19, item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.cli import main

FAST = ["--no-witness", "--whole-budget", "0"]


def _crd(spec: dict[str, Any], root_required: list[str] | None = None) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object", "properties": {"spec": spec}}
    if root_required:
        root["required"] = root_required
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": root}}]}}


def _spec(maximum: int, required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": {
        "replicas": {"type": "integer", "maximum": maximum},
        "owner": {"type": "string"}}}
    if required:
        out["required"] = required
    return out


@pytest.fixture
def crds(tmp_path: Path) -> dict[str, str]:
    """OLD, NEW with only a tighter maximum (create), NEW that also requires ``spec``
    at the root (any update)."""
    out = {}
    for name, doc in (("old", _crd(_spec(1000))), ("max", _crd(_spec(100))),
                      ("root", _crd(_spec(100), root_required=["spec"]))):
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps(doc))
        out[name] = str(p)
    return out


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_text_names_the_impact_of_each_finding(crds: dict[str, str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["root"], *FAST]) == 1
    out = capsys.readouterr().out
    assert ("impact: create: re-creating a stored object fails; updates pass while "
            "spec.replicas is unchanged (validation ratcheting)") in out
    assert "impact: any-update: the error sits on the object's root" in out


def test_json_carries_the_impact_per_finding_and_the_assumption(
        crds: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["root"], "--format", "json", *FAST]) == 1
    doc = _json(capsys)
    assert doc["ratcheting"] is True and doc["fail_on_impact"] is None
    impacts = {(f["rule"], f["path"]): f["impact"] for f in doc["findings"]}
    assert impacts == {("bound-tightened", "spec.replicas"): "create",
                       ("required-added", "spec"): "any-update"}


@pytest.mark.parametrize(("flags", "ratcheting"), [
    ([], True),
    (["--kubernetes-version", "1.30"], True),
    (["--kubernetes-version", "v1.33.2"], True),
    (["--kubernetes-version", "1.29"], False),
    (["--no-assume-ratcheting"], False),
    (["--kubernetes-version", "1.29", "--assume-ratcheting"], True),  # the alpha gate on
    (["--kubernetes-version", "1.33", "--no-assume-ratcheting"], False),
])
def test_ratcheting_follows_the_flags(crds: dict[str, str], flags: list[str],
                                      ratcheting: bool,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["max"], "--format", "json", *FAST, *flags]) == 1
    doc = _json(capsys)
    assert doc["ratcheting"] is ratcheting
    [f] = doc["findings"]
    assert f["impact"] == ("create" if ratcheting else "any-update"), f["impact_note"]


@pytest.mark.parametrize("version", ["1.x", "2.0", "latest", "1", ""])
def test_a_bad_kubernetes_version_is_a_usage_error_naming_the_option(
        crds: dict[str, str], version: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["max"], "--kubernetes-version", version]) == 2
    err = capsys.readouterr().err
    assert f"--kubernetes-version {version!r} is not a Kubernetes release" in err
    assert "fix: give MAJOR.MINOR" in err and "Traceback" not in err


def test_assuming_ratcheting_on_a_release_without_it_is_a_usage_error(
        crds: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["max"], "--kubernetes-version", "1.27",
                 "--assume-ratcheting"]) == 2
    err = capsys.readouterr().err
    assert "--assume-ratcheting with --kubernetes-version 1.27" in err and "fix:" in err


def test_the_gate_fails_only_at_its_level_and_still_prints_the_rest(
        crds: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    # a tighter maximum alone breaks re-creating, not updates: below any-update
    assert main(["diff", crds["old"], crds["max"], *FAST,
                 "--fail-on-impact", "any-update"]) == 0
    out = capsys.readouterr().out
    assert "bound-tightened" in out
    assert "impact: create (below --fail-on-impact any-update: does not fail): " in out
    assert "0 breaking" in out and "1 below --fail-on-impact any-update" in out
    assert main(["diff", crds["old"], crds["max"], *FAST, "--fail-on-impact", "create"]) == 1
    capsys.readouterr()
    # a new required root field breaks every update: the gate lets it fail
    assert main(["diff", crds["old"], crds["root"], *FAST, "--format", "json",
                 "--fail-on-impact", "any-update"]) == 1
    doc = _json(capsys)
    assert doc["breaking"] == 1 and doc["fail_on_impact"] == "any-update"
    # without ratcheting, the tighter maximum breaks every update too
    assert main(["diff", crds["old"], crds["max"], *FAST, "--fail-on-impact", "any-update",
                 "--kubernetes-version", "1.29"]) == 1


def test_an_unknown_gate_level_is_a_usage_error(crds: dict[str, str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["diff", crds["old"], crds["max"], "--fail-on-impact", "updates"])
    assert info.value.code == 2
    assert "--fail-on-impact: invalid choice: 'updates'" in capsys.readouterr().err


def test_sarif_carries_the_impact_and_a_gated_finding_is_a_warning(
        crds: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["root"], *FAST, "--format", "sarif",
                 "--fail-on-impact", "any-update"]) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["properties"]["ratcheting"] is True
    assert run["properties"]["fail_on_impact"] == "any-update"
    by_rule = {r["ruleId"]: r for r in run["results"]}
    bound, required = by_rule["bound-tightened"], by_rule["required-added"]
    assert bound["properties"]["impact"] == "create" and bound["level"] == "warning"
    assert "re-creating" in bound["properties"]["impact_note"]
    assert required["properties"]["impact"] == "any-update" and required["level"] == "error"


def test_github_annotations_carry_the_impact(crds: dict[str, str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", crds["old"], crds["root"], *FAST, "--format", "github",
                 "--fail-on-impact", "any-update"]) == 1
    lines = capsys.readouterr().out.splitlines()
    [bound] = [x for x in lines if "bound-tightened" in x]
    [required] = [x for x in lines if "required-added" in x]
    assert bound.startswith("::warning ") and "(impact: create: re-creating" in bound
    assert required.startswith("::error ") and "(impact: any-update:" in required
