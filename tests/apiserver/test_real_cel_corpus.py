"""Objects drawn for the CEL-heavy CRDs of ../shared/corpus are created on a real
kube-apiserver without a 422: construction (``strategies._cel_construct``) and the model's
CEL checks draw what the API server accepts, not only what the model accepts."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, seed, settings

from compatfuzz.apiserver import validation_errors
from compatfuzz.apiserver._real._backend import RealKind, install
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.errors import UnsupportedRuleWarning
from compatfuzz.schema import load_crds
from compatfuzz.strategies import from_schema

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FILES = sorted((CORPUS / "crds-cel").glob("*/*.yaml"))
PER_VERSION = 3


def _draw(schema: Any, n: int) -> list[Any]:
    out: list[Any] = []

    @seed(20261128)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def run(value: Any) -> None:
        out.append(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedRuleWarning)
        run()
    return out


#: one CRD of each project, and the ones with the most rules, run by default (~30 s);
#: --run-slow creates objects of every crds-cel CRD (~2 min)
DEFAULT = {"jobset.x-k8s.io_jobsets", "trainer.kubeflow.org_optimizationjobs",
           "trainer.kubeflow.org_trainingruntimes", "gateway.kgateway.dev_httplistenerpolicies",
           "gateway.kgateway.dev_upstreams", "protection.crossplane.io_usages",
           "apiextensions.crossplane.io_compositeresourcedefinitions"}


@pytest.mark.skipif(not FILES, reason="../shared/corpus/crds-cel is absent")
@pytest.mark.parametrize("path", [
    pytest.param(p, marks=() if p.stem in DEFAULT else pytest.mark.slow) for p in FILES],
    ids=[p.stem for p in FILES])
def test_objects_drawn_for_a_cel_crd_are_created_without_a_422(
        real_endpoint: Endpoint, path: Path) -> None:
    client = Client(real_endpoint)
    try:
        failures = _create_all(client, path)
    finally:
        client.close()
    assert not failures, "\n".join(failures)


def _create_all(client: Client, path: Path) -> list[str]:
    failures: list[str] = []
    for original, crd in zip(yaml.safe_load_all(path.read_text()), load_crds(path),
                             strict=True):
        document = copy.deepcopy(original)
        document["spec"]["conversion"] = {"strategy": "None"}  # no webhook here
        document["metadata"] = {"name": document["metadata"]["name"]}
        install(client, document, source=str(path))
        spec = document["spec"]
        served = {v["name"] for v in spec["versions"] if v.get("served", True)}
        storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
        kind = RealKind(client, group=spec["group"], plural=spec["names"]["plural"],
                        namespaced=spec.get("scope") == "Namespaced", storage=storage)
        for version in crd.versions:
            if version.name not in served or version.schema is None:
                continue
            for obj in _draw(version.schema, PER_VERSION):
                assert validation_errors(obj, version.schema) == [], obj
                body = kind.prepare(obj, kind.new_name())
                try:
                    kind.create(body, version.name)
                except ServerError as exc:
                    if exc.code == 422:
                        failures.append(f"{crd.name}@{version.name}: {exc.message[:300]}")
                    else:
                        raise
    return failures
