from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from referencing import Registry, Resource

from compatfuzz.errors import InvalidArgument, SchemaLoadError
from compatfuzz.schema import kubernetes_kinds, kubernetes_releases, load_kubernetes, load_schema
from tests.schema.strategies import json_values
from tests.schema.test_load import refs

pytest.importorskip("kubernetes_validate")
RELEASES = ["1.29", "1.37"]


def release_dir(release: str) -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    assert spec is not None and spec.submodule_search_locations
    base = Path(next(iter(spec.submodule_search_locations)))
    return base / "kubernetes-json-schema" / f"v{release}.0-local"


@pytest.mark.parametrize("release", RELEASES)
def test_every_kind_loads_self_contained(release: str) -> None:
    kinds = kubernetes_kinds(release)
    # oracle: every kind file (one carrying x-kubernetes-group-version-kind) appears once
    kind_files = [p for p in release_dir(release).glob("*.json")
                  if "x-kubernetes-group-version-kind" in json.loads(p.read_text())]
    assert len(kinds) == len(set(kinds)) == len(kind_files) > 100
    assert ("apps/v1", "Deployment") in kinds and ("v1", "ConfigMap") in kinds
    assert ("rbac.authorization.k8s.io/v1", "ClusterRole") in kinds
    combined: dict[str, Any] = {}
    for api_version, kind in kinds:
        s = load_kubernetes(api_version, kind, release=release)
        assert s.kubernetes and s.meta["kind"] == kind and s.meta["apiVersion"] == api_version
        defs = s.root.get("$defs", {})
        for ref in refs(s.root):
            assert ref == "#" or ref.startswith("#/$defs/"), (kind, ref)
            assert ref == "#" or ref[len("#/$defs/"):] in defs, (kind, ref)
        # A definition means the same in every kind that uses it, so meta-validating each
        # distinct definition once covers every kind (check_schema costs ~0.3 s per kind).
        for name, body in defs.items():
            assert combined.setdefault(name, body) == body, name
        combined[f"root:{api_version}:{kind}"] = {k: v for k, v in s.root.items()
                                                  if k not in ("$defs", "$schema")}
    jsonschema.Draft202012Validator.check_schema({"$defs": combined})


@pytest.mark.slow
@pytest.mark.parametrize("release", RELEASES)
def test_every_kind_passes_check_schema_alone(release: str) -> None:
    for api_version, kind in kubernetes_kinds(release):
        jsonschema.Draft202012Validator.check_schema(
            load_kubernetes(api_version, kind, release=release).root)


def test_names_and_group_mapping() -> None:
    d = load_kubernetes("apps/v1", "Deployment")
    assert d.name == "io.k8s.api.apps.v1.Deployment"
    assert d.meta == {"apiVersion": "apps/v1", "group": "apps", "version": "v1",
                      "kind": "Deployment", "release": "1.37", "strict": False,
                      "definition": "io.k8s.api.apps.v1.Deployment"}
    assert d.source.endswith("deployment-apps-v1.json")
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in d.root["$defs"]
    assert len(d.root["$defs"]) < 200  # only the reachable part of ~860 definitions
    assert load_kubernetes("rbac.authorization.k8s.io/v1", "ClusterRole").source.endswith(
        "clusterrole-rbac-v1.json")
    assert load_kubernetes("v1", "Pod", release="v1.29.3").name == "io.k8s.api.core.v1.Pod"
    # DeleteOptions is shared by every group: any group version finds it
    assert load_kubernetes("batch/v1", "DeleteOptions").name.endswith("meta.v1.DeleteOptions")


def test_recursion_is_kept() -> None:
    crd = load_kubernetes("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    props = crd.root["$defs"][
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]
    assert props["properties"]["not"] == {
        "$ref": "#/$defs/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"}
    # a property *named* $ref is data, not a reference
    assert props["properties"]["$ref"]["type"] == ["string", "null"]


def test_strict_rejects_unknown_fields() -> None:
    loose = load_kubernetes("v1", "ConfigMap")
    strict = load_kubernetes("v1", "ConfigMap", strict=True)
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}, "surprise": 1}
    assert loose.is_valid(doc) and not strict.is_valid(doc)


def test_load_schema_reads_a_kind_file_too() -> None:
    path = release_dir("1.37") / "configmap-v1.json"
    s = load_schema(path)
    assert s.kubernetes and s.root == load_kubernetes("v1", "ConfigMap").root


def test_unknown_kind_suggests() -> None:
    with pytest.raises(SchemaLoadError, match=r"did you mean: apps/v1 Deployment"):
        load_kubernetes("apps/v1", "Deploymnt")
    with pytest.raises(SchemaLoadError, match=r"served as: apps/v1 Deployment"):
        load_kubernetes("v1", "Deployment")


def test_bad_release_and_arguments() -> None:
    assert "1.29" in kubernetes_releases() and "1.37" in kubernetes_releases()
    with pytest.raises(InvalidArgument, match=r"no schemas for release='1\.99'.*1\.25"):
        load_kubernetes("v1", "Pod", release="1.99")
    with pytest.raises(InvalidArgument, match="release='latest'"):
        kubernetes_kinds("latest")
    with pytest.raises(InvalidArgument, match="kind=None"):
        load_kubernetes("v1", None)  # type: ignore[arg-type]


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "kubernetes_validate" else real(name))
    with pytest.raises(SchemaLoadError, match="not installed") as info:
        load_kubernetes("v1", "Pod")
    assert "pip install kubernetes-validate" in info.value.hint


# --- bundling preserves validation -------------------------------------------------

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{
                "name": "web", "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
                "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            }]},
        },
    },
}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
             "data": {"k": "v"}, "binaryData": {"b": "aGk="}, "immutable": False}
HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
       "metadata": {"name": "h"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 5,
                "metrics": [{"type": "Resource", "resource": {
                    "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}}
SAMPLES = {("apps/v1", "Deployment"): DEPLOYMENT, ("v1", "ConfigMap"): CONFIGMAP,
           ("autoscaling/v2", "HorizontalPodAutoscaler"): HPA}
_VALIDATORS: dict[tuple[str, str], tuple[Any, Any]] = {}


def validators(key: tuple[str, str]) -> tuple[Any, Any]:
    """(original kind file + a referencing Registry for _definitions.json, bundled)."""
    if key not in _VALIDATORS:
        bundled = load_kubernetes(*key)
        original = json.loads(Path(bundled.source).read_text())
        defs = json.loads((Path(bundled.source).parent / "_definitions.json").read_text())
        registry: Registry[Any] = Registry().with_resource(
            defs["$id"], Resource.from_contents(defs))
        _VALIDATORS[key] = (
            jsonschema.Draft202012Validator(original, registry=registry),
            jsonschema.Draft202012Validator(bundled.root),
        )
    return _VALIDATORS[key]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> Any:
    """``base`` with a few subtrees replaced, removed or given an extra key."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(paths(doc)))
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.sampled_from(["x", "name", "type"]))] = draw(json_values)
    return doc


@given(st.sampled_from(sorted(SAMPLES)).flatmap(
    lambda key: st.tuples(st.just(key), mutated(SAMPLES[key]) | json_values)))
def test_bundled_schema_agrees_with_original_and_registry(case: tuple[Any, Any]) -> None:
    key, instance = case
    original, bundled = validators(key)
    assert original.is_valid(instance) == bundled.is_valid(instance)


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_handwritten_samples_are_valid(key: tuple[str, str]) -> None:
    original, bundled = validators(key)
    assert original.is_valid(SAMPLES[key]) and bundled.is_valid(SAMPLES[key])


@pytest.fixture(scope="module")
def kubernetes_openapi_v2() -> dict[str, Any]:
    """A Kubernetes OpenAPI v2 (swagger) document rebuilt from kubernetes-validate's
    definitions: ``definitions`` + ``#/definitions/...`` refs, as the apiserver serves."""
    text = (release_dir("1.37") / "_definitions.json").read_text()
    defs = json.loads(text.replace('"#/$defs/', '"#/definitions/'))["$defs"]
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.37.0"},
            "paths": {}, "definitions": defs}


def test_kubernetes_openapi_v2_document(kubernetes_openapi_v2: dict[str, Any]) -> None:
    s = load_schema(kubernetes_openapi_v2, definition="Deployment")
    k = load_kubernetes("apps/v1", "Deployment")
    assert s.name == k.name == "io.k8s.api.apps.v1.Deployment"
    assert s.kubernetes and s.meta["dialect"] == "swagger-2.0"
    assert s.root["$defs"] == k.root["$defs"]  # same reachable definitions, same bodies
    with pytest.raises(SchemaLoadError, match=r"did you mean: .*Deployment"):
        load_schema(kubernetes_openapi_v2, definition="io.k8s.api.apps.v1.Deploymnt")
