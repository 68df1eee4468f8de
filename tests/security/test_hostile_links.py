"""Links and files planted where compatfuzz reads or writes its own files.

``compatfuzz init --force`` over a ``compatfuzz.toml`` that is a symbolic link replaces
the link, never its target; an example-database entry that is a link (to ``/dev/zero``,
say) or a huge file is skipped with one warning instead of being read into memory.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from compatfuzz.cli import main

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"


def test_init_force_replaces_a_linked_config_not_its_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    target = tmp_path / "elsewhere" / "bashrc"
    target.parent.mkdir()
    target.write_text("export KEEP=me\n")
    (tmp_path / "compatfuzz.toml").symlink_to(target)
    monkeypatch.chdir(tmp_path)
    assert main(["init", "crd.yaml", "--force"]) == 0
    assert target.read_text() == "export KEEP=me\n"
    config = tmp_path / "compatfuzz.toml"
    assert not config.is_symlink() and 'crd = "crd.yaml"' in config.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_init_does_not_write_a_stub_through_a_dangling_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    target = tmp_path / "elsewhere" / "planted.py"
    target.parent.mkdir()
    (tmp_path / "frobbers_conversion.py").symlink_to(target)
    monkeypatch.chdir(tmp_path)
    main(["init", "crd.yaml"])  # the config is written; its converter does not load
    assert not target.exists()


def test_init_files_get_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(FROBBER / "crd.yaml", tmp_path / "crd.yaml")
    monkeypatch.chdir(tmp_path)
    old = os.umask(0o022)
    try:
        assert main(["init", "crd.yaml"]) == 0
    finally:
        os.umask(old)
    for name in ("compatfuzz.toml", "frobbers_conversion.py"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
