"""Zero crashes and zero invalid objects on real schemas: every built-in Kubernetes kind of
releases 1.29 and 1.37 (kubernetes-validate) and every CRD version in ../shared/corpus."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from compatfuzz.errors import UnsupportedRuleWarning
from compatfuzz.schema import Schema, kubernetes_kinds, load_crds, load_kubernetes
from compatfuzz.strategies import from_schema
from tests.strategies.invariants import kubernetes_violations

EXAMPLES = 5
FAST = settings(max_examples=EXAMPLES, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))


def _check(schema: Schema, examples: int = EXAMPLES) -> int:
    seen: list[Any] = []

    @settings(FAST, max_examples=examples)
    @given(from_schema(schema))
    def check(value: Any) -> None:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in
                  schema.validator.iter_errors(value)]
        assert not errors, errors[:3]
        assert kubernetes_violations(schema, value) == []
        seen.append(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsupportedRuleWarning)
        check()
    return len(seen)


# ~16 s each: the default run keeps every corpus CRD version (below) and test_from_schema's
# Deployment; --run-slow generates every built-in kind of both releases
@pytest.mark.parametrize("release", [pytest.param("1.29", marks=pytest.mark.slow),
                                     pytest.param("1.37", marks=pytest.mark.slow)])
def test_every_builtin_kind_generates_valid_objects(release: str) -> None:
    kinds = kubernetes_kinds(release)
    assert len(kinds) > 100
    failures = []
    for api_version, kind in kinds:
        schema = load_kubernetes(api_version, kind, release=release)
        try:
            assert _check(schema, examples=3) > 0
        except Exception as exc:  # collect all, report together
            failures.append(f"{api_version}/{kind}: {type(exc).__name__}: {exc}"[:400])
    assert not failures, "\n".join(failures)


def _corpus_versions(corpus: Path, folders: tuple[str, ...] = ("crds", "crds-cel")
                     ) -> list[tuple[str, str, Schema]]:
    out = []
    for path in sorted(p for folder in folders for p in (corpus / folder).rglob("*.yaml")):
        for crd in load_crds(path):
            for version in crd.versions:
                assert version.schema is not None
                out.append((crd.name, version.name, version.schema))
    return out


@pytest.mark.parametrize(("folder", "least"), [("crds", 19), ("crds-cel", 30)])
def test_every_corpus_crd_version_generates_valid_objects(corpus_dir: Path, folder: str,
                                                          least: int) -> None:
    versions = _corpus_versions(corpus_dir, (folder,))
    if not versions and folder == "crds-cel":
        pytest.skip("../shared/corpus/crds-cel is absent")
    assert len(versions) >= least
    failures = []
    for name, version, schema in versions:
        try:
            assert _check(schema, examples=6) > 0
        except Exception as exc:
            failures.append(f"{name} {version}: {type(exc).__name__}: {exc}"[:400])
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_corpus_long_run(corpus_dir: Path) -> None:
    for _, _, schema in _corpus_versions(corpus_dir):
        _check(schema, examples=200)
