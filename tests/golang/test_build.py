"""Building the Go converter: in compatfuzz's cache (never the user's tree), rebuilt when a
source changes, and every way it can fail is exit 2 with the user's file:line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.golang import GoBuildError, GoMissing
from compatfuzz.golang._build import build, import_paths
from compatfuzz.golang._process import user_frames

from .conftest import TINY, need_go


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "tinymod"
    shutil.copytree(TINY, dest)
    return dest


def _tree(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")}


def test_the_build_is_cached_and_the_user_s_tree_is_left_alone(tmp_path: Path) -> None:
    need_go()
    mod = _copy(tmp_path)
    before = _tree(mod)
    first = build(mod, ["./api/v1", "./api/v2"])
    assert _tree(mod) == before  # nothing written into the module
    assert not first.binary.is_relative_to(mod)
    again = build(mod, ["./api/v1", "./api/v2"])
    assert again.binary == first.binary
    assert again.binary.stat().st_mtime == first.binary.stat().st_mtime
    # a changed source is a new build, in a folder of its own
    (mod / "api" / "v1" / "extra.go").write_text("package v1\n\nconst Extra = 1\n")
    changed = build(mod, ["./api/v1", "./api/v2"])
    assert changed.binary != first.binary and changed.binary.is_file()
    # the build it replaces is removed: one per edit would fill the disk
    assert not first.binary.parent.exists()


def test_a_package_without_add_to_scheme_is_named(tmp_path: Path) -> None:
    need_go()
    mod = _copy(tmp_path)
    (mod / "api" / "util").mkdir()
    (mod / "api" / "util" / "util.go").write_text("package util\n\nconst X = 1\n")
    with pytest.raises(GoBuildError) as info:
        build(mod, ["./api/v1", "./api/v2", "./api/util"])
    assert "example.com/tiny/api/util.AddToScheme (the package has none" in str(info.value)


def test_a_compile_error_names_the_user_s_file_and_line(tmp_path: Path) -> None:
    need_go()
    mod = _copy(tmp_path)
    conv = mod / "api" / "v1" / "conv.go"
    lines = conv.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "dst.Spec.Items = src.Spec.Items" in line)
    lines[at] = "\tdst.Spec.Items = src.Spec.Itemz"
    conv.write_text("\n".join(lines) + "\n")
    with pytest.raises(GoBuildError) as info:
        build(mod, ["./api/v1", "./api/v2"])
    # the user's files, relative to the module named once
    assert f"do not build (files relative to {mod}):" in str(info.value)
    assert f"\n  api/v1/conv.go:{at + 1}:" in str(info.value)
    assert "Itemz" in str(info.value)


def test_a_package_that_does_not_exist_is_named(tmp_path: Path) -> None:
    need_go()
    # a folder of the module that is not there: said before Go asks any proxy for it
    with pytest.raises(GoBuildError, match=r"packages: \./api/v9 is not a folder"):
        build(_copy(tmp_path), ["./api/v9", "./api/v2"])
    with pytest.raises(GoBuildError, match=r"example\.com/tiny/api/v9"):
        build(_copy(tmp_path / "b"), ["example.com/tiny/api/v9", "./api/v2"])


def test_no_go_mod_says_where_to_point(tmp_path: Path) -> None:
    need_go()
    with pytest.raises(GoBuildError, match=r"has no go\.mod; point module ="):
        build(tmp_path, ["./api/v1"])


def test_without_go_the_config_is_exit_2_with_how_to_get_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPATFUZZ_GO", str(tmp_path / "no-such-go"))
    with pytest.raises(GoMissing, match=r"go\.dev/dl"):
        build(TINY, ["./api/v1"])
    config = tmp_path / "compatfuzz.toml"
    config.write_text(f'[[api]]\nname = "things"\ncrd = "{TINY / "crd.yaml"}"\n'
                      f'go = {{ module = "{TINY}", packages = ["./api/v1", "./api/v2"] }}\n')
    done = subprocess.run([sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
                           str(config)], capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "api[0].go" in done.stderr or "/go" in done.stderr
    assert "go.dev/dl" in done.stderr and "Traceback" not in done.stderr


@given(st.lists(st.from_regex(r"\A(\./)?[a-z]{1,5}(/[a-z0-9]{1,4}){0,2}\Z"), max_size=4))
def test_relative_packages_are_under_the_module(packages: list[str]) -> None:
    out = import_paths("example.com/m", packages)
    assert len(out) == len(packages)
    for given_path, path in zip(packages, out, strict=True):
        if given_path.startswith("./"):
            assert path == "example.com/m/" + given_path[2:]
        else:
            assert path == given_path


STACK = """goroutine 7 [running]:
runtime/debug.Stack()
\t/usr/lib/go/src/runtime/debug/stack.go:26 +0x5e
main.record({0x1, 0x2}, {0x3, 0x4})
\t/cache/go/x/main.go:70 +0x1c5
panic({0x1b, 0x2c})
\t/usr/lib/go/src/runtime/panic.go:783 +0x132
example.com/tiny/api/v1.(*Thing).ConvertTo(0xc000, {0x1f, 0xc0})
\t/home/u/tiny/api/v1/conv.go:21 +0x2e5
sigs.k8s.io/controller-runtime/pkg/webhook/conversion.(*webhook).convertObject(0xc0, {0x1, 0x2})
\t/root/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.23.1/pkg/webhook/conversion/c.go:161 +0x3c4
example.com/tiny/api/v1.helper(...)
\t/home/u/tiny/api/v1/help.go:3
"""


def test_a_go_stack_is_cut_to_the_user_s_frames() -> None:
    assert user_frames(STACK, Path("/home/u/tiny")) == [
        "api/v1/conv.go:21 in (*Thing).ConvertTo", "api/v1/help.go:3 in helper"]
    assert user_frames(STACK, Path("/elsewhere")) == []
