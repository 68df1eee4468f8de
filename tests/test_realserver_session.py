"""The test session's real-server preparation (``tests/_realserver.py``): said once on the
terminal, with and without xdist, building only when a selected test needs the binaries,
and ``-m "not real_apiserver"`` skipping those tests without building anything.

Each run is a pytest in a subprocess on a two-test project whose conftest uses the same
hooks as ``tests/conftest.py``, with a fake ``go`` (``tests/_fakego.py``) and an empty
cache, so no real build happens.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests._fakego import calls, fake_go

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
CONFTEST = '''
import pytest
from tests._realserver import (
    pytest_collection_finish, pytest_collection_modifyitems, pytest_configure)


@pytest.fixture(scope="session")
def assets():
    from compatfuzz.apiserver._real._build import built
    folder = built()
    if folder is None:
        pytest.skip("not built")
    return folder
'''
TESTS = '''
def test_real(assets):
    assert (assets / "kube-apiserver").is_file()


def test_plain():
    pass
'''


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> Path:
    """The two-test project; returns the fake ``go``."""
    for name in ("KUBEBUILDER_ASSETS", "TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD", "CI",
                 "FAKE_GO_FAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("COMPATFUZZ_TESTENV_CACHE", str(tmp_path / "cache"))
    go = fake_go(tmp_path / "go")
    monkeypatch.setenv("COMPATFUZZ_GO", str(go))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_it=TESTS)
    return go


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)


@pytest.mark.parametrize("workers", ["0", pytest.param("2", marks=pytest.mark.extended)])
def test_the_binaries_are_built_once_and_said_once(
        pytester: pytest.Pytester, project: Path, workers: str) -> None:
    result = _run(pytester, "-n", workers)
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert out.count("building kube-apiserver v1.37.2 and etcd v3.7.0 from Go modules") == 1
    assert ("1 real API server test (skip them with -m 'not real_apiserver'): kube-apiserver "
            "and etcd are not where envtest looks nor built yet") in out
    assert "about 5 minutes on 2 cores, once; cached in" in out
    assert out.count("built kube-apiserver and etcd in") == 1
    assert len([c for c in calls(project) if c.startswith("build")]) == 2

    # built: said where they are, and nothing is built again
    again = _run(pytester, "-n", workers)
    again.assert_outcomes(passed=2)
    assert "1 real API server test: kube-apiserver and etcd in" in again.stdout.str()
    assert len([c for c in calls(project) if c.startswith("build")]) == 2


def test_deselected_real_server_tests_build_nothing(
        pytester: pytest.Pytester, project: Path) -> None:
    result = _run(pytester, "-n", "2", "-m", "not real_apiserver")
    result.assert_outcomes(passed=1)  # (xdist's controller does not count deselected)
    assert "real API server" not in result.stdout.str()
    assert calls(project) == []
    # nor does a run that selects only other tests
    result = _run(pytester, "-n", "2", "test_it.py::test_plain")
    result.assert_outcomes(passed=1)
    assert calls(project) == []


def test_a_failed_build_says_why_the_tests_skip(
        pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GO_FAIL", "1")
    result = _run(pytester, "-n", "2")
    result.assert_outcomes(passed=1, skipped=1)
    out = result.stdout.str()
    assert "the 1 real API server test will skip: go build" in out
    assert "undefined: oops" in out
