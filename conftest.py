"""Hypothesis settings profiles for compatfuzz's own test-suite.

Select with ``COMPATFUZZ_TEST_PROFILE`` (default ``dev``; CI uses ``ci``; ``thorough``
for a long local run). Tests that need more or fewer examples say so with ``@settings``.
``ci`` draws as many examples as ``dev`` (the default run stays one length everywhere) but
never the same ones: CI runs the suite twice (newest and oldest dependencies), each with
its own random examples, and prints the blob that reproduces a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=50, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci", max_examples=50, deadline=None, derandomize=False, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_default = "ci" if os.environ.get("CI") else "dev"
settings.load_profile(os.environ.get("COMPATFUZZ_TEST_PROFILE", _default))

SHARED = Path(__file__).resolve().parent.parent / "shared"
CORPUS = SHARED / "corpus"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true",
                     help="run tests marked slow or extended (CI runs the extended ones: "
                     "--run-slow -m extended)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    for item in items:
        for name in ("slow", "extended"):
            if name in item.keywords:
                item.add_marker(pytest.mark.skip(reason=f"{name}: run with --run-slow"))
                break


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """``../shared/corpus``; tests using it skip cleanly in a user's clone that lacks it."""
    if not (CORPUS / "MANIFEST.md").is_file():
        pytest.skip("../shared/corpus is absent (only CI and developers have it)")
    return CORPUS
