"""The pytest plugin: collection from config and test modules, ids, options, replay."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
FROBBER = REPO / "examples" / "frobber"


def test_plugin_imports_only_stdlib_and_pytest() -> None:
    code = (
        "import sys, pytest\n"
        "before = set(sys.modules)\n"
        "import compatfuzz.pytest_plugin\n"
        "new = set(sys.modules) - before\n"
        "roots = {m.split('.')[0] for m in new}\n"
        "print(sorted(r for r in roots if r not in sys.stdlib_module_names))\n"
        "print(sorted(m for m in new if m.startswith('compatfuzz')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "['compatfuzz']"
    assert out[1] == "['compatfuzz', 'compatfuzz.errors', 'compatfuzz.pytest_plugin']"


def _frobber(pytester: pytest.Pytester, config: str = "compatfuzz.toml") -> Path:
    for name in ("crd.yaml", "conversion.py", "lossy.py"):
        shutil.copy(FROBBER / name, pytester.path / name)
    shutil.copy(FROBBER / config, pytester.path / "compatfuzz.toml")
    return pytester.path / "compatfuzz.toml"


def test_collects_one_test_per_property_and_pair(pytester: pytest.Pytester) -> None:
    _frobber(pytester)
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                           "--compatfuzz-seed=7", "--compatfuzz-profile=ci")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [
        f"compatfuzz.toml::frobber::{prop}[{pair}]"
        for prop in ("roundtrip", "valid", "no_mutation")
        for pair in ("v6->v7beta1", "v7beta1->v6")
    ]
    header = pytester.runpytest_subprocess("--co", "-p", "no:cacheprovider",
                                           "--compatfuzz-seed=7", "--compatfuzz-profile=ci")
    header.stdout.fnmatch_lines(["compatfuzz: profile=ci, seed=7*"])


def test_lossy_converter_fails_with_diff_counterexample_and_replay_line(
        pytester: pytest.Pytester) -> None:
    _frobber(pytester, "lossy.toml")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "roundtrip")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*frobber::roundtrip[[]v7beta1->v6[]]: NotEquivalent: *",
        "*spec.params[[]1[]]: lost: \"\" -> null*",
        "minimal counterexample: *",
        "*replay: pytest 'compatfuzz.toml::frobber::roundtrip[[]v7beta1->v6[]]'*",
    ])
    assert ('minimal counterexample: {"apiVersion": "frobber.example.com/v7beta1", '
            '"kind": "Frobber", "spec": {"params": ["", ""]}}') in result.stdout.str()


@pytest.mark.parametrize("flag", ["--lf", pytest.param("--ff", marks=pytest.mark.slow)])
def test_last_failed_reruns_only_the_failed_unit(pytester: pytest.Pytester,
                                                 flag: str) -> None:
    """``--lf`` runs the one failed unit again (pytest 9.2 re-ran all of them: the cached
    id parsed to ``roundtrip`` + params, the item's to ``roundtrip[...]`` without)."""
    _frobber(pytester, "lossy.toml")
    pytester.runpytest_subprocess("-k", "roundtrip").assert_outcomes(passed=1, failed=1)
    result = pytester.runpytest_subprocess(flag, "-k", "roundtrip", "-v")
    if flag == "--lf":  # 4 deselected by -k, 1 by --lf
        result.assert_outcomes(failed=1, deselected=5)
        result.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure"])
    else:  # the failure first, then the rest
        result.assert_outcomes(passed=1, failed=1, deselected=4)
        result.stdout.fnmatch_lines(["run-last-failure: rerun previous 1 failure first"])
        first = next(line for line in result.outlines if "::frobber::" in line)
        assert "roundtrip[v7beta1->v6]" in first and "FAILED" in first


def test_failures_found_by_the_cli_replay_in_pytest(pytester: pytest.Pytester) -> None:
    _frobber(pytester, "lossy.toml")
    narrow = ["-p", "no:cacheprovider", "--compatfuzz-max-examples=1",
              "compatfuzz.toml::frobber::roundtrip[v7beta1->v6]"]
    # (Whether one fresh example finds this bug is up to the generator: the swarm
    # generator's long lists often do, so only the replay is asserted.)
    shutil.rmtree(pytester.path / ".hypothesis", ignore_errors=True)
    # After the nightly CLI found it, the shared database replays it first.
    cli = subprocess.run(
        [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--property", "roundtrip", "-q"],
        cwd=pytester.path, capture_output=True, text=True, check=False,
    )
    assert cli.returncode == 1, cli.stderr
    pytester.runpytest_subprocess(*narrow).assert_outcomes(failed=1)


@pytest.mark.extended  # the conftest form below takes the same path by default
def test_api_declared_in_a_test_module(pytester: pytest.Pytester) -> None:
    for name in ("crd.yaml", "conversion.py"):
        shutil.copy(FROBBER / name, pytester.path / name)
    pytester.makepyfile(test_frobber=f"""
        import sys
        sys.path.insert(0, {str(pytester.path)!r})
        import conversion
        from compatfuzz.roundtrip import API

        test_frobber = API.from_crd("frobber", {str(pytester.path / "crd.yaml")!r},
                                    hub="internal", to_hub=conversion.to_hub,
                                    from_hub=conversion.from_hub)
        frobber_not_a_test = test_frobber  # only test* names are collected
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v",
                                           "--compatfuzz-max-examples=10")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*test_frobber.py::frobber::roundtrip[[]v6->v7beta1[]] PASSED*"])


def test_bad_seed_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--compatfuzz-seed=abc")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--compatfuzz-seed expects an integer or 'last'*"])


@pytest.mark.parametrize(("args", "ini", "message"), [
    (["--compatfuzz-max-examples=0"], "", "*--compatfuzz-max-examples expects a positive*"),
    (["--compatfuzz-max-examples=-5"], "", "*--compatfuzz-max-examples expects a positive*"),
    ([], "compatfuzz_profile = bogus", "*compatfuzz_profile*"),
    # pytest >= 9.2 types the key ("invalid literal for int()"); older ones leave it to us
    ([], "compatfuzz_max_examples = many", "*'many'*"),
])
def test_bad_settings_are_usage_errors_not_internal_errors(
        pytester: pytest.Pytester, args: list[str], ini: str, message: str) -> None:
    _frobber(pytester, "compatfuzz.toml")
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines([message])


def test_bad_profile_in_the_environment_is_a_usage_error(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _frobber(pytester, "compatfuzz.toml")
    monkeypatch.setenv("COMPATFUZZ_PROFILE", "bogus")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*profile must be one of default, ci, nightly*"])


def test_api_declared_in_conftest_is_collected(pytester: pytest.Pytester) -> None:
    for name in ("crd.yaml", "conversion.py"):
        shutil.copy(FROBBER / name, pytester.path / name)
    pytester.makeconftest(f"""
        import sys
        sys.path.insert(0, {str(pytester.path)!r})
        import conversion
        from compatfuzz.roundtrip import API

        test_frobber = API.from_crd("frobber", {str(pytester.path / "crd.yaml")!r},
                                    hub="internal", to_hub=conversion.to_hub,
                                    from_hub=conversion.from_hub)
    """)
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v",
                                           "--compatfuzz-max-examples=5")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*conftest.py::frobber::valid[[]v7beta1->v6[]] PASSED*"])
    # -k filters them like any other test
    narrowed = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                             "--compatfuzz-max-examples=5", "-k", "roundtrip")
    narrowed.assert_outcomes(passed=2)


def test_no_config_no_header(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not any("compatfuzz:" in line for line in result.outlines)


def test_rootdir_pyproject_config_is_collected_without_arguments(
        pytester: pytest.Pytester) -> None:
    for name in ("crd.yaml", "conversion.py"):
        shutil.copy(FROBBER / name, pytester.path / name)
    pytester.makepyprojecttoml("""
        [tool.pytest.ini_options]
        testpaths = ["tests"]

        [[tool.compatfuzz.api]]
        name = "frobber"
        crd = "crd.yaml"
        hub = "internal"
        to_hub = "conversion:to_hub"
        from_hub = "conversion:from_hub"
    """)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_plain.py").write_text("def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--co", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert ids[0] == "tests/test_plain.py::test_x"
    assert "pyproject.toml::frobber::roundtrip[v6->v7beta1]" in ids and len(ids) == 7


@pytest.mark.extended  # the replay line is checked by default (lossy converter test)
def test_replay_hint_with_a_seed_does_not_promise_the_database(
        pytester: pytest.Pytester) -> None:
    """Issue 10, items 5 and 8: an explicit seed bypasses the example database, so the
    replay line must not say the database replays it; no @reproduce_failure hint."""
    _frobber(pytester, "lossy.toml")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "roundtrip",
                                           "--compatfuzz-seed=3")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "replay: pytest 'compatfuzz.toml::frobber::roundtrip[v7beta1->v6]' " \
           "--compatfuzz-seed=3\n" in out
    assert "example database" not in out.split("replay: pytest", 1)[1].split("\n")[0]
    assert "@reproduce_failure" not in out


@pytest.mark.extended  # test_cli_fuzz.py runs from a subfolder by default; pytest's case in CI
def test_pytest_in_a_subfolder_finds_the_config_as_compatfuzz_fuzz_does(
        pytester: pytest.Pytester) -> None:
    """No ini file: pytest's rootdir is the subfolder; the config is found above it, as
    `compatfuzz fuzz` finds it (issue 17, item 7)."""
    _frobber(pytester)
    sub = pytester.path / "config" / "crd"
    sub.mkdir(parents=True)

    def collected() -> list[str]:
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                               "-p", "no:cacheprovider"], check=False, cwd=sub, capture_output=True,
                              text=True, timeout=120)
        return [line for line in done.stdout.splitlines() if "frobber::" in line]

    assert len(collected()) == 6
    shutil.copy(FROBBER / "lossy.toml", pytester.path / "compatfuzz.toml")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-k",
                           "roundtrip"], check=False, cwd=sub, capture_output=True, text=True,
                          timeout=300)
    assert "replay: pytest '../../compatfuzz.toml::frobber::roundtrip[" in done.stdout, (
        done.stdout)
    # the summary's node id is one pytest takes back, not "::compatfuzz.toml::..."
    assert "FAILED ../../compatfuzz.toml::frobber::roundtrip[" in done.stdout, done.stdout
    replay = done.stdout.split("replay: pytest '")[1].split("'")[0]
    again = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", replay],
                           check=False, cwd=sub, capture_output=True, text=True, timeout=300)
    assert "1 failed" in again.stdout, again.stdout  # the printed replay runs that one test
    # a pyproject.toml without compatfuzz in between is the project's root: no further
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert collected() == []


def test_accept_entries_in_the_config_apply_to_pytest_items(pytester: pytest.Pytester) -> None:
    _frobber(pytester, "lossy.toml")
    shutil.copy(FROBBER / "accepted.toml", pytester.path / "compatfuzz.toml")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "roundtrip",
                                           "--compatfuzz-max-examples=50")
    result.assert_outcomes(passed=2)  # roundtrip[v7beta1->v6] fails without the entry
