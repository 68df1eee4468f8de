"""No tracked file names a path of one machine: a user's clone has none of them.

Absolute folders of the machines the project is developed on (the folder that holds the
checkouts, the scratch folder, Debian's Go sources, snapshots of other repositories in a
mirror folder: ``FORBIDDEN`` spells them) may appear in no tracked text file;
``../shared`` relative to the checkout is the one outside path allowed. ``conformance/``
is checked too: its Go oracles are Go modules built from pinned versions (issue 18).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_bench_repo", ROOT / "benchmarks" / "_repo.py")
assert _spec is not None and _spec.loader is not None
repo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(repo)
# spelled in pieces so this file does not name them itself
FORBIDDEN = re.compile("|".join([r"/" + "work/", r"/" + "tmp/", r"/usr/share/" + "gocode",
                                 r"\." + r"mirror\b"]))


def tracked_files() -> list[str]:
    try:
        proc = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"],
                              capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (or no git): nothing to list")
    return [name for name in proc.stdout.decode().split("\0") if name]


def offending_lines(files: list[str]) -> list[str]:
    """``FILE:LINE: text`` for every forbidden path in the text files among ``files``."""
    out = []
    for name in files:
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or deleted in the work tree
        for number, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                out.append(f"{name}:{number}: {line.strip()[:120]}")
    return out


def test_no_tracked_file_names_a_machine_path() -> None:
    found = offending_lines(tracked_files())
    assert not found, ("these lines name a path that a user's clone does not have; write it "
                       "relative to the repository root (or ../shared/...):\n"
                       + "\n".join(found))


@pytest.mark.parametrize("line", [
    'GIT = Path("/' 'work/.' 'mirror/envoyproxy+data-plane-api/repo")',
    '"definition": "/' 'tmp/cf-envoy-x/1.31/envoy/a.proto:3"',
    "GOPATH=/usr/share/" "gocode go build",
    "see the ." "mirror folder",
])
def test_the_check_sees_each_kind_of_path(line: str) -> None:
    assert FORBIDDEN.search(line)


@pytest.mark.parametrize("line", [
    "../shared/corpus/crds/cluster-api/x.yaml",
    "benchmarks/results/protobuf_envoy.json",
    "<outside the checkout>/seeded_after4.json",
    "mirrored by the registry",
])
def test_relative_paths_pass(line: str) -> None:
    assert not FORBIDDEN.search(line)


# -- what the benchmarks write (benchmarks/_repo.py) ------------------------------------

_parts = st.lists(st.text(st.characters(whitelist_categories=["Ll", "Nd"]) | st.just("-"),
                          min_size=1, max_size=8), min_size=1, max_size=4)


@given(_parts)
def test_recorded_paths_are_relative(parts: list[str]) -> None:
    """Whatever the benchmarks record passes the check above."""
    inside = ROOT.joinpath(*parts)
    shared = repo.SHARED.joinpath(*parts)
    outside = Path(tempfile.gettempdir()).joinpath(*parts)
    assert repo.rel(inside) == "/".join(parts)
    assert repo.rel(shared) == "../shared/" + "/".join(parts)
    assert repo.rel(outside) == f"{repo.OUTSIDE}/{parts[-1]}"
    for recorded in (repo.rel(inside), repo.rel(shared), repo.rel(outside),
                     *repo.rel_args(["--json", str(outside), f"--out={outside}", "-x"])):
        assert not recorded.startswith("/") and not FORBIDDEN.search(recorded)


def test_arguments_keep_their_options() -> None:
    out = Path(tempfile.gettempdir()) / "q" / "strategies2.json"
    assert repo.rel_args(["--rounds", "2", "--json", str(out), f"--corpus={ROOT / 'a.yaml'}"]) \
        == ["--rounds", "2", "--json", f"{repo.OUTSIDE}/strategies2.json", "--corpus=a.yaml"]
