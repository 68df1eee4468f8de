"""Issue 11, item 10: report files honour the umask; misspelt keywords are reported.

(``webhook_insecure = "yes"`` and webhook transport errors are in
``tests/faults/test_webhook.py``; the Python-tag YAML hint in ``test_hostile_files.py``.)
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from compatfuzz.cli import main
from compatfuzz.errors import UnknownKeywordWarning
from compatfuzz.schema import load_crds, load_schema

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_report_files_get_the_umask_not_0600(tmp_path: Path, umask_022: None) -> None:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    rc = main(["fuzz", "--config", str(FROBBER / "lossy.toml"), "--database", "none",
               "--property", "roundtrip", "--seed", "5", "--report", str(report),
               "--junit", str(junit)])
    assert rc == 1
    units = json.loads(report.read_text())["units"]
    cx = Path(next(u["counterexample_file"] for u in units if "counterexample_file" in u))
    for path in (report, junit, cx):
        assert _mode(path) == 0o644, path


def test_a_misspelt_keyword_warns_with_did_you_mean() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLenght": 3}}}
    with pytest.warns(UnknownKeywordWarning, match=r"at \$\.properties\.s\.maxLenght: "
                      r"unknown keyword 'maxLenght' \(did you mean 'maxLength'\?\)"):
        load_schema(schema)


def test_annotations_of_ones_own_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_schema({"type": "string", "markdownDescription": "x", "javaType": "String",
                     "x-anything": 1, "properties": {"maxLenght": {"type": "string"}}})


def test_crd_schemas_are_a_closed_set(tmp_path: Path) -> None:
    text = (FROBBER / "crd.yaml").read_text()
    marker = "openAPIV3Schema:\n"
    at = text.index(marker) + len(marker)
    indent = " " * (len(text[at:]) - len(text[at:].lstrip(" ")))
    crd = tmp_path / "crd.yaml"
    crd.write_text(text[:at] + f"{indent}x-kubernetes-preserve-unknown-field: true\n"
                   f"{indent}ownerTeam: storage\n" + text[at:])
    with pytest.warns(UnknownKeywordWarning) as caught:
        load_crds(crd)
    messages = [str(w.message) for w in caught]
    assert any("'x-kubernetes-preserve-unknown-field' (did you mean "
               "'x-kubernetes-preserve-unknown-fields'?)" in m for m in messages)
    assert any("'ownerTeam': Kubernetes' JSONSchemaProps has no such field" in m
               for m in messages)
    assert all(".schema.openAPIV3Schema." in m for m in messages)


def test_the_cli_prints_one_plain_warning_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "typo.json"
    path.write_text('{"type": "object", "properties": {"n": {"type": "integer", '
                    '"minimun": 0}}}')
    assert main(["sample", str(path), "-n", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("compatfuzz sample: warning:") == 1
    assert "'minimun' (did you mean 'minimum'?)" in err and "Warning:" not in err
