"""``compatfuzz diff --apiserver real``: each witness tried on a real kube-apiserver
(issue 19, item 5).

The pair in ``data/confirm`` changes six fields one way each; the real server's answers
are what validation ratcheting (GA in 1.33; ``ratchetingValueValidator`` in
apiextensions-apiserver ``pkg/apiserver/validation/ratcheting.go``) makes of them: an
update that leaves the stored value alone is accepted, even for a new required field
(as tests/apiserver/test_ratcheting.py finds too), while an update that writes the
value and a create again are refused. The server-backed tests share the session's
control plane (``real_endpoint``) and skip without the binaries, as the other real-server
tests do; the CLI tests start their own, as a user's run does.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._backend import CRDRefused
from compatfuzz.apiserver._real._client import Client
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.cli import main
from compatfuzz.compat import Finding, Side, Status, Witness, diff, load_revision
from compatfuzz.compat._confirm import (
    CONFIRMED,
    INCONCLUSIVE,
    NOT_CONFIRMED,
    NOT_RUN,
    check_installable,
    confirm,
    place,
)
from compatfuzz.schema import load_crds
from tests.roundtrip.test_real_roundtrip import REFUSED_CRD

DATA = Path(__file__).parent / "data" / "confirm"
OLD, NEW = str(DATA / "old.yaml"), str(DATA / "new.yaml")


@pytest.fixture
def asset_env(assets: Assets, monkeypatch: pytest.MonkeyPatch) -> Assets:
    """The binaries where envtest users keep them, for the CLI in this process."""
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(assets.kube_apiserver))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(assets.etcd))
    return assets


@pytest.fixture(scope="module")
def client(real_endpoint: Endpoint) -> Iterator[Client]:
    c = Client(real_endpoint)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def confirmed(client: Client) -> dict[str, Finding]:
    """The pair's findings, each tried on the server once for the module (by rule)."""
    old, new = load_revision(OLD), load_revision(NEW)
    findings = confirm(old, new, diff(old, new).findings, client, version="test")
    return {f.rule: f for f in findings}


def _answers(f: Finding) -> dict[str, tuple[bool, str]]:
    assert f.server is not None
    return {a.step: (a.accepted, a.message) for a in f.server.answers}


def test_the_six_findings_are_all_tried(confirmed: dict[str, Finding]) -> None:
    assert sorted(confirmed) == sorted([
        "bound-tightened", "enum-value-removed", "enum-value-added", "required-added",
        "validations-changed", "field-removed"])
    for f in confirmed.values():
        assert f.witness is not None and f.server is not None, f.rule
        assert f.server.verdict == CONFIRMED, (f.rule, f.server)


def test_a_tightened_maximum_breaks_create_again_but_not_an_unchanged_update(
        confirmed: dict[str, Finding]) -> None:
    answers = _answers(confirmed["bound-tightened"])
    assert answers["create under OLD"] == (True, "")
    assert answers["update (label only)"] == (True, "")  # ratcheted: replicas unchanged
    for step in ("update the field", "create again"):
        accepted, message = answers[step]
        assert not accepted
        assert "spec.replicas" in message and "less than or equal to 5" in message


def test_a_narrowed_enum_and_an_added_cel_rule_are_ratcheted_the_same_way(
        confirmed: dict[str, Finding]) -> None:
    enum = _answers(confirmed["enum-value-removed"])
    cel = _answers(confirmed["validations-changed"])
    assert enum["update (label only)"][0] and cel["update (label only)"][0]
    assert not enum["create again"][0]
    assert 'Unsupported value: "Legacy"' in enum["create again"][1]
    for step in ("update the field", "create again"):
        assert not cel[step][0] and "min must not exceed max" in cel[step][1]


def test_a_new_required_field_is_ratcheted_on_an_unchanged_update(
        confirmed: dict[str, Finding]) -> None:
    # ratcheting excuses a missing required field when its object is unchanged: only an
    # update that touches spec.ref, or a create, is refused
    answers = _answers(confirmed["required-added"])
    assert answers["update (label only)"] == (True, "")
    for step in ("update the field", "create again"):
        assert not answers[step][0]
        assert "spec.ref.name: Required value" in answers[step][1]


def test_a_response_side_witness_is_tried_as_a_rollback(
        confirmed: dict[str, Finding]) -> None:
    f = confirmed["enum-value-added"]
    assert f.witness is not None and f.witness.side is Side.RESPONSE
    answers = _answers(f)
    assert answers["create under NEW"] == (True, "")
    assert answers["update (label only)"][0]
    assert not answers["create again"][0]
    assert 'Unsupported value: "Silver"' in answers["create again"][1]


def test_a_removed_field_is_accepted_and_dropped_by_the_server(
        confirmed: dict[str, Finding]) -> None:
    answers = _answers(confirmed["field-removed"])
    for step in ("update (label only)", "update the field", "create again"):
        assert answers[step] == (True, "dropped spec.legacy"), step


def test_the_answers_are_in_json_sarif_and_text(confirmed: dict[str, Finding]) -> None:
    from compatfuzz._commands.diff import render_github, render_sarif, render_text
    from compatfuzz.compat import Direction, Started

    f = confirmed["bound-tightened"]
    data = f.to_json()["server"]
    assert data["verdict"] == "confirmed" and data["server"] == "test"
    assert [a["step"] for a in data["answers"]] == [
        "create under OLD", "update (label only)", "update the field", "create again"]
    started = Started(OLD, NEW, Direction.AUTO)
    out = io.StringIO()
    render_sarif(started, (f,), out)
    result = json.loads(out.getvalue())["runs"][0]["results"][0]
    assert result["properties"]["server"] == data
    out = io.StringIO()
    render_text(started, tuple(confirmed.values()), out)
    text = out.getvalue()
    assert "server (test, OLD -> NEW): confirmed" in text
    assert "server (test, NEW -> OLD, a rollback): confirmed" in text
    assert "  update (label only): accepted\n" in text
    assert "on the server: 6 confirmed" in text
    # the server's "some validation rules were not checked" cause, said shortly
    assert 'supported values: "Fast", "Safe" (CEL rules not checked)' in text
    assert "<nil>" not in text
    out = io.StringIO()
    render_github(started, (f,), out)
    assert "(real server: server (test, OLD -> NEW): confirmed)" in out.getvalue()


def test_a_witness_the_server_takes_is_reported_not_confirmed(client: Client) -> None:
    old, new = load_revision(OLD), load_revision(NEW)
    wrong = [
        # 3 is within both maxima: the server takes it, so this "finding" is wrong
        Finding("bound-tightened", "spec.replicas", 10, 5, "made up", frozenset(
            {Side.REQUEST}), breaking=True, status=Status.CONFIRMED, version="v1",
            witness=Witness(Side.REQUEST, "spec.replicas", 3, "made up")),
        # 11 is over OLD's maximum already: OLD's server refuses it
        Finding("bound-tightened", "spec.replicas", 10, 5, "made up", frozenset(
            {Side.REQUEST}), breaking=True, status=Status.CONFIRMED, version="v1",
            witness=Witness(Side.REQUEST, "spec.replicas", 11, "made up")),
        # refused by NEW, but for spec.mode: nothing shows replicas: 3 breaks
        Finding("bound-tightened", "spec.replicas", 10, 5, "made up", frozenset(
            {Side.REQUEST}), breaking=True, status=Status.CONFIRMED, version="v1",
            witness=Witness(Side.REQUEST, "spec", {"replicas": 3, "mode": "Legacy"},
                            "made up")),
    ]
    taken, refused, other = confirm(old, new, wrong, client)
    assert taken.server is not None and refused.server is not None
    assert other.server is not None and other.server.verdict == INCONCLUSIVE
    assert "but for spec.mode, not spec.replicas" in other.server.note
    assert taken.server.verdict == NOT_CONFIRMED
    assert "accepted the witness on create again" in taken.server.note
    assert [a.accepted for a in taken.server.answers] == [True, True, True, True]
    assert refused.server.verdict == NOT_CONFIRMED
    assert "refuses the witness under OLD already" in refused.server.note
    assert "less than or equal to 10" in refused.server.answers[0].message
    assert refused.server.answers[0].fields == ("spec.replicas",)


def test_a_crd_change_the_server_refuses_as_an_update_is_not_run(
        client: Client, tmp_path: Path) -> None:
    text = Path(OLD).read_text()
    (tmp_path / "old.yaml").write_text(text)
    (tmp_path / "new.yaml").write_text(text.replace("scope: Namespaced", "scope: Cluster")
                                       .replace("maximum: 10", "maximum: 5"))
    old, new = load_revision(tmp_path / "old.yaml"), load_revision(tmp_path / "new.yaml")
    findings = confirm(old, new, diff(old, new).findings, client)
    tight = next(f for f in findings if f.rule == "bound-tightened")
    assert tight.server is not None and tight.server.verdict == NOT_RUN
    assert "refuses NEW as an update of OLD" in tight.server.note
    assert "immutable" in tight.server.note


def test_a_crd_the_server_refuses_names_it(client: Client, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(REFUSED_CRD)
    bad = load_revision(tmp_path / "bad.yaml")
    with pytest.raises(CRDRefused, match="the API server refuses the CRD"):
        check_installable(client, bad, bad)


_TWO_VERSIONS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  scope: Namespaced
  versions:
  - {name: v1beta1, served: true, storage: STORE_BETA, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1, served: true, storage: STORE_V1, schema: {openAPIV3Schema: {type: object}}}
"""


@pytest.mark.parametrize("stored_in", ["v1", "v1beta1"])
def test_a_removed_version_is_tried_too(client: Client, tmp_path: Path,
                                        stored_in: str) -> None:
    old_text = (_TWO_VERSIONS.replace("STORE_BETA", str(stored_in == "v1beta1").lower())
                .replace("STORE_V1", str(stored_in == "v1").lower()))
    new_text = "\n".join(line for line in old_text.splitlines()
                         if "v1beta1" not in line).replace("STORE_V1", "true")
    new_text = new_text.replace("storage: false", "storage: true")
    (tmp_path / "old.yaml").write_text(old_text)
    (tmp_path / "new.yaml").write_text(new_text + "\n")
    old, new = load_revision(tmp_path / "old.yaml"), load_revision(tmp_path / "new.yaml")
    findings = confirm(old, new, diff(old, new).findings, client)
    gone = next(f for f in findings if f.rule == "version-removed")
    assert gone.server is not None
    if stored_in == "v1":
        # served only: NEW drops it, the object stays readable in v1
        assert gone.server.verdict == CONFIRMED, gone.server
        answers = _answers(gone)
        assert answers["read as v1"] == (True, "")
        assert not answers["read as v1beta1"][0]
        assert not answers["create again as v1beta1"][0]
    else:
        # the storage version: the server refuses NEW until the stored objects migrate
        assert gone.server.verdict == NOT_RUN, gone.server
        assert "status.storedVersions" in gone.server.note



def test_a_version_new_stops_serving_is_not_served_on_the_server(
        client: Client, tmp_path: Path) -> None:
    """``served: false`` in NEW (external-secrets v0.17.0's v1beta1): the CRD installed
    for NEW must not serve it either, or the removal reads NOT CONFIRMED."""
    old_text = _TWO_VERSIONS.replace("STORE_BETA", "false").replace("STORE_V1", "true")
    new_text = old_text.replace("{name: v1beta1, served: true", "{name: v1beta1, served: false")
    (tmp_path / "old.yaml").write_text(old_text)
    (tmp_path / "new.yaml").write_text(new_text)
    old, new = load_revision(tmp_path / "old.yaml"), load_revision(tmp_path / "new.yaml")
    findings = confirm(old, new, diff(old, new).findings, client)
    gone = next(f for f in findings if f.rule == "version-removed")
    assert gone.server is not None and gone.server.verdict == CONFIRMED, gone.server
    answers = _answers(gone)
    assert answers["read as v1"] == (True, "")
    assert not answers["read as v1beta1"][0]


# -- placing a witness (no server) -------------------------------------------------------

_NESTED = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nests.example.com}
spec:
  group: example.com
  names: {plural: nests, singular: nest, kind: Nest}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [items]
            properties:
              items:
                type: array
                minItems: 1
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string, minLength: 1}
                    size: {type: integer}
              provider:
                type: object
                maxProperties: 1
                properties:
                  aws: {type: object, properties: {region: {type: string}}}
                  vault: {type: object, properties: {path: {type: string}}}
              labels:
                type: object
                additionalProperties:
                  type: object
                  required: [value]
                  properties:
                    value: {type: string}
                    weight: {type: integer}
"""


@pytest.fixture(scope="module")
def nested(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("nested") / "crd.yaml"
    path.write_text(_NESTED)
    schema = load_crds(path)[0].version("v1").schema
    assert schema is not None
    return schema


# not @given: place() draws the smallest value of a container with Hypothesis' find(),
# which cannot run inside another Hypothesis test
@pytest.mark.parametrize("path", ["spec.items[*].size", "spec.labels[*].weight",
                                  'spec["labels"][*].weight'])
@pytest.mark.parametrize("value", [-1, 0, 2**40])
def test_a_witness_placed_deep_in_an_empty_object_keeps_it_valid(
        nested: Any, path: str, value: int) -> None:
    from compatfuzz.compat._confirm import _get, _segments

    obj = place(nested, nested.root, {}, _segments(path), value)
    assert _get(obj, _segments(path)) == value
    # the containers on the way hold their required fields, so the object is valid
    assert nested.is_valid(obj), obj


def test_a_witness_in_a_one_of_n_object_replaces_the_sibling_the_base_chose(
        nested: Any) -> None:
    # external-secrets' SecretStore: spec.provider holds one provider (maxProperties: 1)
    from compatfuzz.compat._confirm import _segments

    base = {"spec": {"items": [{"name": "a"}], "provider": {"aws": {"region": "x"}}}}
    obj = place(nested, nested.root, base, _segments("spec.provider.vault.path"), "p")
    assert obj["spec"]["provider"] == {"vault": {"path": "p"}}
    assert nested.is_valid(obj), obj


# -- the command line (a control plane of its own) -----------------------------------------

@pytest.mark.extended  # a control plane of its own; the refused-CRD test below takes the CLI path
def test_the_cli_records_the_server_s_answers(asset_env: Assets,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["diff", OLD, NEW, "--apiserver", "real", "--format", "json"])
    captured = capsys.readouterr()
    assert rc == 1, captured.err
    data = json.loads(captured.out)
    verdicts = {f["rule"]: f["server"]["verdict"] for f in data["findings"]}
    assert set(verdicts.values()) == {"confirmed"} and len(verdicts) == 6
    assert "kube-apiserver v1." in captured.err
    assert "tried 6 findings on the server" in captured.err


def test_bad_starts_and_inputs_exit_2_with_the_reason(
        assets: Assets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    args = ["diff", OLD, NEW, "--confirm-on-server"]
    # no binaries: where it looked, and how to get them
    assert main([*args, "--apiserver-assets", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "setup-envtest" in err and str(empty) in err
    # a start that outlives its timeout
    folder = str(Path(assets.kube_apiserver).parent)
    assert main([*args, "--apiserver-assets", folder, "--apiserver-start-timeout",
                 "0.01s"]) == 2
    err = capsys.readouterr().err
    assert "did not become ready within" in err and "--apiserver-start-timeout" in err
    # one served version is not a CRD a server can install: said before anything starts
    assert main(["diff", f"{OLD}@v1", f"{NEW}@v1", "--apiserver", "real"]) == 2
    err = capsys.readouterr().err
    assert "serves whole CRDs" in err and "fix:" in err


def test_a_refused_crd_exits_2_with_the_server_s_message(
        asset_env: Assets, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text(REFUSED_CRD)
    rc = main(["diff", OLD, str(tmp_path / "bad.yaml"), "--apiserver", "real"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "the API server refuses the CRD gadgets.example.com" in err and "fix:" in err
