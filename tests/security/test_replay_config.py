"""Issue 22, item 6: a ``--replay`` file never chooses the config, so never the code run.

A counterexample file records the config it came from. Replay used to load that config
when no ``--config`` was given, and a config imports its converter modules: a replay
file from an untrusted place (a CI artifact, an issue attachment) ran code of its
choosing. Replay now uses ``--config`` or the config ``compatfuzz fuzz`` finds from the
working directory, and only notes a different recorded one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.faults._project import LOSSY, project

GOOD = """
    def convert(obj, desired):
        return {**obj, "apiVersion": desired}
"""
#: what the attacker's config imports: it leaves a mark, the proof it ran
EVIL = """
    import pathlib
    pathlib.Path(__file__).with_name("PWNED").write_text("ran")

    def convert(obj, desired):
        return {**obj, "apiVersion": desired}
"""


def _replay_file(where: Path, config: Path) -> Path:
    cx = {"api": "t", "kind": "T", "property": "roundtrip", "versions": ["v1", "v2"],
          "object": {"apiVersion": "g.example.com/v1", "kind": "T", "spec": {"n": 1}},
          "config": str(config)}
    path = where / "cx.json"
    path.write_text(json.dumps(cx))
    return path


def _replay(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", "fuzz", "--replay",
                           *args], capture_output=True, text=True, timeout=60, cwd=cwd,
                          check=False)


def _projects(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "evil").mkdir()
    (tmp_path / "mine").mkdir()
    evil = project(tmp_path / "evil", EVIL)
    mine = project(tmp_path / "mine", GOOD)
    return evil, mine


def test_replay_uses_the_config_found_here_not_the_files(tmp_path: Path) -> None:
    evil, mine = _projects(tmp_path)
    cx = _replay_file(tmp_path, evil)
    done = _replay(mine.parent, str(cx))
    assert not (evil.parent / "PWNED").exists()  # the file's config was never loaded
    assert done.returncode == 0, done.stderr  # checked against the good converter
    assert "passes now" in done.stderr
    assert f"note: {cx} was recorded with the config {json.dumps(str(evil))}" in done.stderr
    assert f"replaying with {mine}" in done.stderr


def test_the_recorded_config_is_shown_escaped(tmp_path: Path) -> None:
    _, mine = _projects(tmp_path)
    cx = _replay_file(tmp_path, Path("/nowhere/\x1b]0;title\x07\x1b[31mevil.toml"))
    done = _replay(mine.parent, str(cx))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert '"/nowhere/\\u001b]0;title\\u0007\\u001b[31mevil.toml"' in done.stderr


def test_replay_without_any_config_here_asks_for_one(tmp_path: Path) -> None:
    evil, _ = _projects(tmp_path)
    cx = _replay_file(tmp_path, evil)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    done = _replay(tmp_path / "empty", str(cx))
    assert not (evil.parent / "PWNED").exists()
    assert done.returncode == 2, done.stderr
    assert "no config to replay against" in done.stderr
    assert "pass --config with the config the file came from" in done.stderr
    assert "Traceback" not in done.stderr


def test_replay_with_config_uses_that_one_and_says_nothing_when_they_agree(
        tmp_path: Path) -> None:
    evil, mine = _projects(tmp_path)
    cx = _replay_file(tmp_path, mine)
    done = _replay(evil.parent, str(cx), "--config", str(mine))  # run in evil's folder
    assert not (evil.parent / "PWNED").exists()
    assert done.returncode == 0, done.stderr
    assert "note:" not in done.stderr




def test_the_printed_replay_command_works_where_it_was_printed(tmp_path: Path) -> None:
    """It names --config when the config would not be found from there."""
    import shlex

    (tmp_path / "proj").mkdir()
    config = project(tmp_path / "proj", LOSSY)
    for cwd, flag in ((tmp_path, " --config proj/compatfuzz.toml"), (config.parent, "")):
        done = subprocess.run([sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
                               str(config), "--database", "none", "--property", "roundtrip",
                               "--max-examples", "50"],
                              capture_output=True, text=True, timeout=60, cwd=cwd,
                              check=False)
        assert done.returncode == 1, done.stderr
        lines = [ln.strip() for ln in done.stderr.splitlines()
                 if ln.strip().startswith("replay: compatfuzz fuzz --replay")]
        assert lines and all(ln.endswith(".json" + flag) for ln in lines), lines
        argv = shlex.split(lines[0].removeprefix("replay: compatfuzz "))
        again = subprocess.run([sys.executable, "-m", "compatfuzz.cli", *argv],
                               capture_output=True, text=True, timeout=60, cwd=cwd,
                               check=False)
        assert again.returncode == 1 and "still failing" in again.stderr, again.stderr
