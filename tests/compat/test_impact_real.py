"""The impact ``compatfuzz diff`` states per finding, against a real kube-apiserver.

For each case: install OLD, create an object valid under it, replace the CRD with NEW,
then try what the impact predicts: an update that changes only a label, updates that
change a field, and creating the stored object again. The impact must say exactly what
the server refuses (``create``: only the create; ``update-field``: updates that change
the named value; ``any-update``: every update). Skips without the binaries, like the
other real-server tests (``tests/conftest.py``).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._backend import install
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.compat import Impact, diff, load_revision

GROUP = "impact.compatfuzz.example"
STORED = {"replicas": 150, "name": "x", "ports": [2000, 80], "tags": ["t", "t"]}


def _crd(spec: dict[str, Any], root_required: list[str] | None = None) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object", "properties": {"spec": spec}}
    if root_required:
        root["required"] = root_required
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                               "listKind": "GadgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": root}}]}}


def _spec(*, maximum: int = 1000, ports_max: int = 65535, required: list[str] | None = None,
          rule: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": {
        "replicas": {"type": "integer", "maximum": maximum},
        "name": {"type": "string"}, "owner": {"type": "string"},
        "ports": {"type": "array", "x-kubernetes-list-type": "atomic",
                  "items": {"type": "integer", "maximum": ports_max}},
        "tags": {"type": "array", "items": {"type": "string"}}}}
    if required:
        out["required"] = required
    if rule:
        out["x-kubernetes-validations"] = [{"rule": rule}]
    return out


OLD = _crd(_spec())
#: name -> (NEW, the finding's rule, the impact compatfuzz must state)
CASES = {
    "maximum": (_crd(_spec(maximum=100)), "bound-tightened", Impact.CREATE),
    "required": (_crd(_spec(required=["owner"])), "required-added", Impact.UPDATE_FIELD),
    "atomic-items": (_crd(_spec(ports_max=1024)), "bound-tightened", Impact.UPDATE_FIELD),
    "cel": (_crd(_spec(rule="!has(self.replicas) || self.replicas <= 100")),
            "validations-changed",
            Impact.UPDATE_FIELD),
    "root-required": (_crd(_spec(), root_required=["spec"]), "required-added",
                      Impact.ANY_UPDATE),
}

#: updates of the stored object, by the value they change
CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "metadata": lambda o: o["metadata"].setdefault("labels", {}).update(touched="yes"),
    "spec.name": lambda o: o["spec"].update(name="y"),
    "spec.ports": lambda o: o["spec"].update(ports=[o["spec"]["ports"][0], 81]),
    "spec.tags": lambda o: o["spec"].update(tags=[*o["spec"]["tags"], "u"]),
}


@pytest.fixture
def client(real_endpoint: Endpoint) -> Iterator[Client]:
    c = Client(real_endpoint)
    try:
        yield c
    finally:
        c.close()


def _stated(tmp_path: Path, name: str, new: dict[str, Any], rule: str) -> tuple[Impact, str]:
    old_file, new_file = tmp_path / "old.json", tmp_path / f"{name}.json"
    old_file.write_text(json.dumps(OLD))
    new_file.write_text(json.dumps(new))
    report = diff(load_revision(old_file), load_revision(new_file), whole_budget=0,
                  dynamic=False)
    [f] = [f for f in report.findings if f.rule == rule]
    assert f.impact is not None
    return f.impact, f.impact_note


@pytest.mark.parametrize("case", list(CASES))
def test_the_real_server_refuses_what_the_impact_says(client: Client, tmp_path: Path,
                                                      case: str) -> None:
    new, rule, expected = CASES[case]
    impact, note = _stated(tmp_path, case, new, rule)
    assert impact is expected, note
    base = f"/apis/{GROUP}/v1/namespaces/{client.endpoint.namespace}/gadgets"
    stored_spec = None if case == "root-required" else STORED

    def store(name: str) -> None:
        install(client, OLD, source="OLD")
        body: dict[str, Any] = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget",
                                "metadata": {"name": name}}
        if stored_spec is not None:
            body["spec"] = copy.deepcopy(stored_spec)
        # the server serves a replaced CRD once its informer has seen it (apiextensions-
        # apiserver's crdHandler), a moment after the PUT returned: wait until the body
        # is judged by the schema just installed (OLD takes it, NEW refuses it), as
        # upstream's integration tests poll
        _in_force(client, base, body, taken=True)
        client.request("POST", base, body)
        install(client, new, source="NEW")
        _in_force(client, base, body, taken=False)

    def accepted(name: str, change: Callable[[dict[str, Any]], None]) -> bool:
        current = client.request("GET", f"{base}/{name}")
        change(current)
        try:
            client.request("PUT", f"{base}/{name}", current)
        except ServerError as exc:
            assert exc.code == 422, exc.describe()
            return False
        return True

    answers: dict[str, bool] = {}
    for i, (what, change) in enumerate(CHANGES.items()):
        if stored_spec is None and what != "metadata":
            continue
        name = f"{case}-{i}"
        store(name)
        answers[what] = accepted(name, change)
        client.request("DELETE", f"{base}/{name}")
    again = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget",
             "metadata": {"name": f"{case}-again"},
             **({"spec": copy.deepcopy(stored_spec)} if stored_spec is not None else {})}
    with pytest.raises(ServerError):  # every case breaks re-creating the stored object
        client.request("POST", base, again)

    if impact is Impact.CREATE:
        assert all(answers.values()), answers
    elif impact is Impact.ANY_UPDATE:
        assert not any(answers.values()), answers
    else:
        # the note names the value whose change the server refuses
        scope = note.split("an update that changes ", 1)[1].split(" fails", 1)[0]
        for what, ok in answers.items():
            touches = what == scope or what.startswith(scope + ".")
            assert ok is not touches, (what, scope, answers)


def _in_force(client: Client, base: str, body: dict[str, Any], *, taken: bool) -> None:
    """Wait (20 s at most) until a dry-run create of ``body`` is taken, or refused."""
    probe = {**body, "metadata": {"name": "probe"}}
    end = time.monotonic() + 20
    while True:
        try:
            client.request("POST", f"{base}?dryRun=All", probe)
            now = True
        except ServerError as exc:
            if exc.code != 422:
                raise
            now = False
        if now is taken:
            return
        assert time.monotonic() < end, f"the installed CRD is not in force after 20 s ({taken=})"
        time.sleep(0.2)


def test_a_removed_field_is_lost_to_any_update_as_the_impact_says(client: Client,
                                                                   tmp_path: Path) -> None:
    # pruning, not validation: the stored value is dropped when read, so even an update
    # that changes only a label writes the object back without it
    props = _spec()["properties"]
    old = _crd({"type": "object", "properties": {**props, "legacy": {"type": "string"}}})
    new = _crd(_spec())
    old_file, new_file = tmp_path / "old.json", tmp_path / "new.json"
    old_file.write_text(json.dumps(old))
    new_file.write_text(json.dumps(new))
    report = diff(load_revision(old_file), load_revision(new_file), whole_budget=0,
                  dynamic=False)
    [f] = [f for f in report.findings if f.rule == "field-removed"]
    assert f.impact is Impact.ANY_UPDATE, f.impact_note
    base = f"/apis/{GROUP}/v1/namespaces/{client.endpoint.namespace}/gadgets"
    install(client, old, source="OLD")
    client.request("POST", base, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget",
                                  "metadata": {"name": "pruned"},
                                  "spec": {"name": "a", "legacy": "kept?"}})
    install(client, new, source="NEW")
    read = client.request("GET", f"{base}/pruned")
    assert read["spec"] == {"name": "a"}  # dropped when read
    read["metadata"].setdefault("labels", {})["touched"] = "yes"
    client.request("PUT", f"{base}/pruned", read)
    install(client, old, source="OLD")
    assert client.request("GET", f"{base}/pruned")["spec"] == {"name": "a"}  # lost
    client.request("DELETE", f"{base}/pruned")
