"""Links and files planted where compatfuzz reads or writes its own files.

``compatfuzz init --force`` over a ``compatfuzz.toml`` that is a symbolic link replaces
the link, never its target; an example-database entry that is a link (to ``/dev/zero``,
say) or a huge file is skipped with one warning instead of being read into memory.
"""

from __future__ import annotations

import os
import resource
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase

from compatfuzz.cli import main
from compatfuzz.roundtrip._engine._database import open_database
from tests.faults._project import LOSSY, command, project

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


KEY = b"k" * 48


def _key_folder(db: Path, saved: bytes) -> Path:
    (folder,) = [p for p in db.iterdir()
                 if p.is_dir() and (p / os.listdir(p)[0]).read_bytes() == saved]
    return folder


def test_a_database_entry_that_is_a_link_a_folder_or_huge_is_skipped(
        tmp_path: Path) -> None:
    """(Links to /dev/zero and FIFOs, which exhausted memory or blocked the read, are in
    the run below: a subprocess with a memory limit and a timeout.)"""
    db = open_database(str(tmp_path / "db"))
    assert isinstance(db, DirectoryBasedExampleDatabase)
    db.save(KEY, b"saved")
    folder = _key_folder(tmp_path / "db", b"saved")
    (tmp_path / "secret").write_bytes(b"not an example")
    (folder / "link").symlink_to(tmp_path / "secret")
    (folder / "dir").mkdir()
    (folder / "big").write_bytes(b"x" * (2 << 20))  # 2 MiB: no entry is that big
    assert list(db.fetch(KEY)) == [b"saved"]
    notice = getattr(db, "notice", None)
    assert notice is not None and str(folder) in notice and "delete it" in notice


def test_a_key_folder_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    db = open_database(str(tmp_path / "db"))
    assert db is not None
    db.save(KEY, b"saved")
    folder = _key_folder(tmp_path / "db", b"saved")
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    assert list(db.fetch(KEY)) == []
    assert "symbolic link" in (getattr(db, "notice", None) or "")


def _limited() -> None:
    """In the child: at most 1 GiB of address space (the /dev/zero read took 3.8 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_a_run_with_a_dev_zero_entry_replays_its_failure_and_warns_once(
        tmp_path: Path) -> None:
    """Every key folder gets a link to /dev/zero and a FIFO: the run used to die with
    MemoryError after reading 3.8 GB (or block on the FIFO for good)."""
    config = project(tmp_path, LOSSY)
    argv = command(config, "--property", "roundtrip", "--max-examples", "50")
    argv[argv.index("--database") + 1] = str(tmp_path / "db")
    first = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           check=False)
    assert first.returncode == 1, first.stderr
    for folder in (tmp_path / "db").iterdir():
        if folder.is_dir():
            (folder / "zero").symlink_to("/dev/zero")
            os.mkfifo(folder / "fifo")
    second = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path,
                            preexec_fn=_limited,
                            check=False)
    assert second.returncode == 1, second.stderr
    assert "MemoryError" not in second.stderr and "Traceback" not in second.stderr
    assert second.stderr.count("skipped the example-database entry") == 1
    assert "replayed the 1 failure compatfuzz saved for this unit first" in second.stderr
