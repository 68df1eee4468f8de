"""Misspelt names in a config or on the command line get a did-you-mean (issue 17, item 7).

A misspelt ``hub`` was worse than an error: a hub that is no version means an internal
hub, so ``hub = "v1beta"`` silently changed what the converters were asked to do.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compatfuzz.cli import main

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"


def _project(tmp_path: Path, **replace: str) -> Path:
    for name in ("crd.yaml", "conversion.py"):
        shutil.copy(FROBBER / name, tmp_path / name)
    text = (FROBBER / "compatfuzz.toml").read_text()
    for old, new in replace.items():
        assert old.replace("_", " ") in text
        text = text.replace(old.replace("_", " "), new)
    config = tmp_path / "compatfuzz.toml"
    config.write_text(text)
    return config


@pytest.mark.parametrize(("replace", "expected"), [
    ({'crd_=_"crd.yaml"': 'crd = "crds.yaml"'},
     "CRD file 'crds.yaml' not found (looked in {dir}); did you mean 'crd.yaml'?"),
    ({'hub_=_"internal"': 'hub = "v7beta"'},
     "hub 'v7beta' is not a version; did you mean 'v7beta1'?"),
])
def test_misspelt_config_values(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                replace: dict[str, str], expected: str) -> None:
    config = _project(tmp_path, **replace)
    assert main(["fuzz", "--config", str(config), "--max-examples", "1"]) == 2
    err = capsys.readouterr().err
    assert expected.format(dir=tmp_path) in err, err
    assert "Traceback" not in err


def test_an_internal_hub_unlike_any_version_is_still_allowed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, **{'hub_=_"internal"': 'hub = "storage"'})
    assert main(["fuzz", "--config", str(config), "--max-examples", "2",
                 "--property", "roundtrip"]) == 0, capsys.readouterr().err


def test_misspelt_property(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path)
    assert main(["fuzz", "--config", str(config), "--property", "roundtrp"]) == 2
    err = capsys.readouterr().err
    assert "'roundtrp' (did you mean 'roundtrip'?)" in err, err


def test_a_top_level_key_inside_an_api_table_says_where_it_belongs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _project(tmp_path, **{'name_=_"frobber"': 'name = "frobber"\n'
                                                       'allow_ref_roots = ["."]'})
    assert main(["fuzz", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "allow_ref_roots belongs at the top of the file, before the first [[api]]" in err


def test_a_version_of_a_plain_schema_is_refused_in_command_line_terms(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "object"}')
    assert main(["sample", str(schema), "--version", "v1"]) == 2
    err = capsys.readouterr().err
    assert "applies to CustomResourceDefinition files only" in err
    assert "drop --version/@v1" in err and "definition=" not in err, err
