"""The CLI imports only the command it runs, and parses it exactly as the full parser
does (``cli._parser``)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz import cli


def _options(parser: argparse.ArgumentParser, command: str) -> dict[str, str | None]:
    """The option strings of ``command``'s subparser, with their help texts."""
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {opt: action.help for action in sub.choices[command]._actions
            for opt in action.option_strings}


def test_fuzz_does_not_import_the_compatibility_engine() -> None:
    code = ("import sys; from compatfuzz.cli import _parser; _parser(['fuzz', '--help']); "
            "print(sorted(m for m in sys.modules if m.startswith('compatfuzz.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = done.stdout
    assert "compatfuzz._commands.fuzz" in loaded
    for heavy in ("compatfuzz.compat", "compatfuzz._commands.diff",
                  "compatfuzz._commands.sample"):
        assert f"'{heavy}'" not in loaded, loaded


@given(command=st.sampled_from(sorted(cli.COMMANDS)),
       rest=st.lists(st.sampled_from(["--help", "-h", "x", "--config"]), max_size=2))
def test_the_command_run_is_parsed_as_the_full_parser_parses_it(command: str,
                                                                 rest: list[str]) -> None:
    full, _ = cli._parser(["--help"])
    narrow, modules = cli._parser([command, *rest])
    assert list(modules) == [command]
    assert _options(narrow, command) == _options(full, command)


def test_help_lists_every_command_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for name, (_, line) in cli.COMMANDS.items():
        assert name in out and line.split()[0] in out


def test_a_misspelt_command_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["fuz"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'fuz'" in err and "'fuzz'" in err and "'diff'" in err


def test_an_option_of_another_command_is_named_by_the_command_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``fuzz`` knows nothing of ``diff``'s ``--policy``: the error is fuzz's."""
    with pytest.raises(SystemExit) as exit_:
        cli.main(["fuzz", "--policy", "kubernetes"])
    assert exit_.value.code == 2
    assert "compatfuzz fuzz: error: unrecognized arguments: --policy" in capsys.readouterr().err
