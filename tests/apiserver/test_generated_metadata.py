"""The generator and the API-server model agree on ObjectMeta: every object
``from_schema`` draws decodes in ``compatfuzz.apiserver`` without ``Rejected``.

A disagreement is a compatfuzz bug that used to surface as the user's converter failing
(issue 17, item 3: a ``metadata.deletionTimestamp`` of ``2026-01-02t03:04:05z``, which
strfmt's date-time takes and Go's ``time.Parse(time.RFC3339, ...)`` in
``metav1.Time.UnmarshalJSON`` refuses). Kinds: built-in ones whose metadata is a full
``ObjectMeta`` (``$ref`` to ``metav1.Time``, ``OwnerReference``, ``ManagedFieldsEntry``),
a CRD with embedded resources from the tests' own data, and every CRD version in
``../shared/corpus`` when it is there.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from compatfuzz.apiserver import Rejected, decode
from compatfuzz.errors import UnsupportedRuleWarning
from compatfuzz.schema import Schema, load_crds, load_kubernetes
from compatfuzz.strategies import from_schema

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "crds"
DATA = Path(__file__).resolve().parents[1] / "schema" / "data"

BUILTIN = [("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("batch/v1", "CronJob"),
           ("v1", "Event")]


def _crd_schemas(paths: list[Path], limit: int) -> list[tuple[str, Schema]]:
    out = []
    for path in paths:
        for crd in load_crds(path):
            for version in crd.versions:
                if version.schema is not None:
                    out.append((f"{path.name}:{version.name}", version.schema))
    return out[:limit]


def _schemas() -> list[tuple[str, Schema]]:
    out = [(f"{a}/{k}", load_kubernetes(a, k)) for a, k in BUILTIN]
    out += _crd_schemas([DATA / "widgets.crd.yaml"], 4)
    if CORPUS.is_dir():
        out += _crd_schemas(sorted(CORPUS.rglob("*.yaml")), 4)
    return out


SCHEMAS = _schemas()


def _metadata_decodes(schema: Schema, examples: int) -> None:
    @settings(max_examples=examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(from_schema(schema))
    def check(obj: Any) -> None:
        try:
            decode(obj, schema)
        except Rejected as exc:
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            raise AssertionError(f"the model refuses a generated object: {exc}\n"
                                 f"metadata: {meta!r}") from exc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedRuleWarning)
        check()


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_generated_metadata_decodes_in_the_model(name: str, schema: Schema) -> None:
    _metadata_decodes(schema, 150 if name == "v1/ConfigMap" else 40)
