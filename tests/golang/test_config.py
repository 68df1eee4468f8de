"""``go = { module, packages }`` in compatfuzz.toml: mistakes are exit-2 errors naming the
key and a fix; a correct table converts through the Go packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.golang import GoConverter
from compatfuzz.roundtrip import load_config, units

from .conftest import TINY, need_go


def _config(tmp_path: Path, go: str, extra: str = "") -> Path:
    path = tmp_path / "compatfuzz.toml"
    path.write_text(f'[[api]]\nname = "things"\ncrd = "{TINY / "crd.yaml"}"\n{extra}'
                    f"go = {go}\n")
    return path


@pytest.mark.parametrize(("go", "extra", "pointer", "fix"), [
    ('"./api"', "", "api[0].go", "write it as go = {"),
    ('{ module = "." }', "", "api[0].go.packages", "every API version's package"),
    ('{ packages = [] }', "", "api[0].go.packages", "every API version's package"),
    ('{ packages = ["./api/v1"], modul = "." }', "", "api[0].go.modul",
     "the keys are module and packages"),
    ('{ packages = ["./api/v1"] }', 'webhook = "https://127.0.0.1:1/convert"\n', "api[0]",
     "both convert"),
])
def test_a_wrong_go_table_names_the_key_and_the_fix(tmp_path: Path, go: str, extra: str,
                                                   pointer: str, fix: str) -> None:
    with pytest.raises(SchemaLoadError) as info:
        load_config(_config(tmp_path, go, extra))
    assert pointer in str(info.value) and fix in str(info.value)


def test_a_go_table_converts_through_the_packages_and_plans_no_no_mutation(
        tmp_path: Path) -> None:
    need_go()
    (api,) = load_config(_config(
        tmp_path, f'{{ module = "{TINY}", packages = ["./api/v1", "./api/v2"] }}'))
    assert isinstance(api.converter, GoConverter)
    planned = {str(u.property) for u in units(api)}
    assert "roundtrip" in planned and "no_mutation" not in planned


def test_a_version_no_package_registers_is_named(tmp_path: Path) -> None:
    need_go()
    with pytest.raises(Exception, match=r"no kind in the Go packages.*v2"):
        load_config(_config(tmp_path, f'{{ module = "{TINY}", packages = ["./api/v1"] }}'))
