"""Issue 11, item 8: a broken or missing compatfuzz config is a pytest usage error (exit
4), as the docs promise, never an INTERNALERROR (exit 3)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


@pytest.mark.parametrize(("files", "option", "needle"), [
    ({}, "missing.toml", "file not found"),
    ({"broken.toml": "[[api]\n"}, "broken.toml", "invalid TOML"),
    ({"folder/x.txt": ""}, "folder", "is a folder"),
])
def test_a_bad_config_option_is_a_usage_error(pytester: pytest.Pytester,
                                              files: dict[str, str], option: str,
                                              needle: str) -> None:
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           f"--compatfuzz-config={option}")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output
    assert "--compatfuzz-config" in output and needle in output


def test_a_broken_rootdir_config_outside_testpaths_is_a_usage_error(
        pytester: pytest.Pytester) -> None:
    """The rootdir's config is added in a collection hook, where an exception used to be
    an INTERNALERROR."""
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    (pytester.path / "compatfuzz.toml").write_text("[[api]\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_plain.py").write_text("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output and "invalid TOML" in output


def test_a_broken_collected_config_shows_the_message_without_compatfuzz_frames(
        pytester: pytest.Pytester) -> None:
    """Issue 10, item 7: the collection error is the message (file, key, fix) alone."""
    (pytester.path / "compatfuzz.toml").write_text(
        '[[api]]\nname = "a"\nschemas = { v1 = "v1.json", v2 = "v2.json" }\n'
        'convert = "conv:convert"\n')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    assert "at $.api[0].convert: cannot import 'conv'" in output and "fix: " in output
    assert "_config.py" not in output and "raise " not in output
