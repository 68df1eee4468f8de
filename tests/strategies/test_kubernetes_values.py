"""Well-known Kubernetes types: values the API server accepts, and their edge cases."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from compatfuzz.schema import Schema, load_kubernetes
from compatfuzz.strategies import Overrides, from_schema
from compatfuzz.strategies import _kubernetes as k8s

QUANTITY = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
    r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?\Z"
)
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED = re.compile(rf"({DNS_SUBDOMAIN.pattern[:-2]}/)?{NAME}\Z")
CRD_QUANTITY = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": QUANTITY.pattern.replace("\\Z", "$"),
    "x-kubernetes-int-or-string": True,
}
QUICK = settings(database=None, max_examples=2000, suppress_health_check=list(HealthCheck))


@given(k8s.quantity_strings)
def test_quantity_strings_match_the_apimachinery_pattern(value: str) -> None:
    assert QUANTITY.match(value), value


@pytest.mark.parametrize(
    "edge",
    [
        lambda v: v.endswith("Ki") and v.lstrip("+-") in ("1023Ki", "1024Ki", "1025Ki"),
        lambda v: v.endswith("m"),
        lambda v: "e" in v.lower() and v[-1].isdigit(),
        lambda v: v.startswith("-"),
        lambda v: v.lstrip("+-").startswith("9223372036854775807"),
        lambda v: v.endswith("Gi") and "." in v,
    ],
    ids=["1024Ki-boundary", "milli", "exponent", "negative", "int64-max", "fractional-Gi"],
)
def test_quantity_edge_cases_are_reachable(edge: Any) -> None:
    value = find(from_schema(Schema(root=CRD_QUANTITY, kubernetes=True)),
                 lambda v: isinstance(v, str) and edge(v), settings=QUICK)
    assert QUANTITY.match(value)


def test_int_or_string_yields_both_types_and_1_vs_str_1() -> None:
    strategy = from_schema(load_kubernetes("apps/v1", "Deployment"), overrides=Overrides())
    del strategy
    ios = Schema(root={"x-kubernetes-int-or-string": True,
                       "anyOf": [{"type": "integer"}, {"type": "string"}]}, kubernetes=True)
    assert isinstance(find(from_schema(ios), lambda v: isinstance(v, int), settings=QUICK), int)
    assert find(from_schema(ios), lambda v: isinstance(v, str) and v.isdigit(),
                settings=QUICK) == "0"
    assert find(from_schema(ios), lambda v: isinstance(v, str) and v.endswith("%"),
                settings=QUICK) == "0%"


@given(st.one_of(k8s.times, k8s.micro_times))
def test_times_are_rfc3339(value: str) -> None:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None


def test_time_edge_forms_are_reachable() -> None:
    assert find(k8s.times, lambda v: "+" in v[10:], settings=QUICK)
    assert find(k8s.times, lambda v: "." in v, settings=QUICK)
    assert find(k8s.micro_times, lambda v: re.search(r"\.\d{6}", v) is not None, settings=QUICK)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_object_meta_is_realistic(data: st.DataObject) -> None:
    schema = load_kubernetes("v1", "ConfigMap")
    value = data.draw(from_schema(schema))
    meta = value.get("metadata") or {}
    if meta.get("name") is not None:
        assert DNS_SUBDOMAIN.match(meta["name"]) and len(meta["name"]) <= 253
    if meta.get("namespace") is not None:
        assert DNS_LABEL.match(meta["namespace"]) and len(meta["namespace"]) <= 63
    for key, label in (meta.get("labels") or {}).items():
        assert QUALIFIED.match(key), key
        assert label == "" or re.match(NAME + r"\Z", label), label
    for key in meta.get("annotations") or {}:
        assert QUALIFIED.match(key), key


def test_crd_root_gets_api_version_kind_and_object_meta(corpus_dir: Any) -> None:
    from compatfuzz.schema import load_crds

    crd = load_crds(corpus_dir / "crds/cluster-api/cluster.x-k8s.io_machines.yaml")[0]
    version = crd.version("v1beta1")
    assert version.schema is not None
    value = find(from_schema(version.schema), lambda v: "metadata" in v, settings=QUICK)
    assert value["apiVersion"] == "cluster.x-k8s.io/v1beta1"
    assert value["kind"] == "Machine"
    assert DNS_SUBDOMAIN.match(value["metadata"]["name"])


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("spec.replicas", "spec.replicas", True),
        ("spec.*", "spec.replicas", True),
        ("spec.*", "spec.template.spec", False),
        ("**.image", "spec.template.spec.containers[*].image", True),
        ("spec.template.spec.containers[*].image", "spec.template.spec.containers[3].image",
         True),
        ("spec.template.spec.containers[0].image", "spec.template.spec.containers[*].image",
         True),
        ("metadata.labels", "metadata.labelsX", False),
    ],
)
def test_path_globs(glob: str, path: str, matches: bool) -> None:
    marker = object()
    overrides = Overrides().path(glob, st.just(marker))
    found = overrides.for_path(path)
    assert (found is not None and found.strategy is not None) is matches


def test_embedded_resources_carry_api_version_kind_and_object_meta() -> None:
    schema = Schema(
        root={"type": "object", "properties": {"template": {
            "type": "object", "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        }}, "required": ["template"]},
        kubernetes=True,
    )

    @settings(max_examples=50, database=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(value: dict[str, Any]) -> None:
        template = value["template"]
        assert isinstance(template["apiVersion"], str) and template["apiVersion"]
        assert isinstance(template["kind"], str) and template["kind"][0].isupper()
        if "metadata" in template:
            assert DNS_SUBDOMAIN.match(template["metadata"]["name"])

    check()
