"""``[[api.accept]]`` and ``convert(doc, source, target)`` for a pydantic API: the escape
hatch and the converter form CRD users have, on the shop example's seeded loss."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from compatfuzz.cli import main
from compatfuzz.errors import InvalidArgument
from compatfuzz.pydantic import PydanticAPI
from compatfuzz.roundtrip import Accept, UnitFinished, run, units

from ._shop import EXAMPLE, copy_example

ACCEPTED = EXAMPLE / "accepted.toml"  # lossy.toml and one accept entry


def _fuzz(project: Path, config: str, capsys: pytest.CaptureFixture[str]
          ) -> tuple[int, str, dict[str, Any]]:
    (project / "accept.toml").write_text(config)
    report = project / "report.json"
    rc = main(["fuzz", "--config", str(project / "accept.toml"), "--database", "none",
               "--seed", "3", "--property", "roundtrip", "--report", str(report)])
    captured = capsys.readouterr()
    return rc, captured.out + captured.err, json.loads(report.read_text())


def test_an_accepted_loss_passes_and_is_counted(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    copy_example(tmp_path)
    accepted = ACCEPTED.read_text()
    # without the entry the seeded loss fails the unit
    rc, out, _ = _fuzz(tmp_path, accepted.partition("[[api.accept]]")[0], capsys)
    assert rc == 1 and "FAIL    orders::roundtrip[v2->v3]" in out
    rc, out, doc = _fuzz(tmp_path, accepted, capsys)
    assert rc == 0, out
    assert "accepted: orders: gift_note (roundtrip, *->v3)" in out
    (row,) = doc["accepted"]
    assert sorted(row["units"]) == ["orders::roundtrip[v1->v3]", "orders::roundtrip[v2->v3]"]
    assert row["count"] > 0


@pytest.mark.extended  # roundtrip/test_accept.py counts stale entries by default
def test_an_entry_for_another_pair_accepts_nothing_and_is_stale(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_example(tmp_path)
    rc, out, doc = _fuzz(tmp_path, ACCEPTED.read_text().replace('"*->v3"', '"v1->v2"'),
                         capsys)
    assert rc == 1 and "FAIL    orders::roundtrip[v2->v3]" in out
    assert "warning: stale accept entry orders: gift_note (roundtrip, v1->v2)" in out
    assert [r["path"] for r in doc["stale_accepts"]] == ["gift_note"]


def test_an_entry_naming_a_version_the_api_lacks_names_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_example(tmp_path)
    (tmp_path / "accept.toml").write_text(ACCEPTED.read_text().replace('"*->v3"', '"v2->v4"'))
    assert main(["fuzz", "--config", str(tmp_path / "accept.toml")]) == 2
    err = capsys.readouterr().err
    assert "at $.api[0].accept[0].versions" in err
    assert "'v4', which is not a version of API 'orders'" in err


class V1(BaseModel):
    name: str


class V2(BaseModel):
    title: str


class V3(BaseModel):
    label: str


FIELD = {"v1": "name", "v2": "title", "v3": "label"}


def _convert(doc: dict[str, Any], source: str, target: str) -> dict[str, Any]:
    # only right if it is told where the document comes from: the three versions name
    # the one field three ways
    return {FIELD[target]: doc[FIELD[source]]}


def test_a_three_parameter_convert_is_told_the_source_version() -> None:
    api = PydanticAPI("labels", {"v1": V1, "v2": V2, "v3": V3}, convert=_convert)
    results = [e.result for e in run(api, seed=1, database="none", max_examples=20)
               if isinstance(e, UnitFinished)]
    assert len(results) == len(units(api)) == 3 + 6 + 6 + 6 + 6
    assert {str(r.status) for r in results} == {"passed"}, [r.message for r in results]


@settings(max_examples=30, deadline=None)
@given(source=st.sampled_from(sorted(FIELD)), target=st.sampled_from(sorted(FIELD)),
       value=st.text(max_size=5))
def test_each_call_gets_the_version_its_document_is_in(source: str, target: str,
                                                       value: str) -> None:
    seen: list[tuple[str, str]] = []

    def convert(doc: dict[str, Any], a: str, b: str) -> dict[str, Any]:
        assert set(doc) == {FIELD[a]}
        seen.append((a, b))
        return _convert(doc, a, b)

    api = PydanticAPI("labels", {"v1": V1, "v2": V2, "v3": V3}, convert=convert)
    assert api.convert({FIELD[source]: value}, source, target) == {FIELD[target]: value}
    assert seen == ([] if source == target else [(source, target)])


def test_a_two_parameter_convert_still_gets_only_the_target() -> None:
    calls: list[tuple[Any, ...]] = []

    def convert(doc: dict[str, Any], target: str, note: str = "") -> dict[str, Any]:
        calls.append((target, note))
        return {FIELD[target]: next(iter(doc.values()))}

    api = PydanticAPI("labels", {"v1": V1, "v2": V2}, convert=convert)
    assert api.convert({"name": "x"}, "v1", "v2") == {"title": "x"}
    assert calls == [("v2", "")]


def test_accept_in_python_names_a_bad_version() -> None:
    with pytest.raises(InvalidArgument, match="'v9', which is not a version of API"):
        PydanticAPI("labels", {"v1": V1, "v2": V2}, convert=_convert,
                    accept=[Accept(path="name", versions="v1->v9", why="x")])
