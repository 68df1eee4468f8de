"""Tests of benchmarks/bench_apiserver.py: its quick mode's functions on a tiny input
through a real kube-apiserver (so the script cannot rot), and its arithmetic and report
on hand-made rounds.

The real-server tests use the ``assets`` and ``real_endpoint`` fixtures of
tests/conftest.py: they skip without Go and fail under ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.roundtrip import Property, Unit
from compatfuzz.roundtrip._check._real import RealBackend

ROOT = Path(__file__).resolve().parent.parent
FROBBER = ROOT / "examples" / "frobber"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("_bench_apiserver",
                                                  ROOT / "benchmarks" / "bench_apiserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_bench_apiserver"] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


# -- through a real kube-apiserver ---------------------------------------------------


@pytest.mark.extended  # a control plane of its own, for the benchmark's timing columns
def test_start_up_and_stop_are_timed(assets: Assets) -> None:
    lines: list[str] = []
    startups = bench.time_startups(assets, 1, lines.append)
    assert len(startups) == 1
    assert startups[0]["start_s"] > 0 and startups[0]["stop_s"] > 0
    assert lines[0].startswith("start-up 1/1: start ")
    table = bench.startup_table(startups)
    assert f"| {startups[0]['start_s']:.2f} | {startups[0]['start_s']:.2f} |" in table


def test_the_quick_run_checks_the_same_objects_in_both_backends(
        real_endpoint: Endpoint) -> None:
    case = bench.frobber_case()
    assert [(str(u.property), u.versions) for u in case.units] == [
        ("roundtrip", ("v7beta1", "v6")), ("valid", ("v7beta1", "v6")),
        ("roundtrip", ("v6", "v7beta1")), ("valid", ("v6", "v7beta1"))]
    lines: list[str] = []
    result = bench.run_case(case, real_endpoint, 3, 2, lines.append)
    assert result["source"] == "examples/frobber/compatfuzz.toml"
    assert len(lines) == 4 * 2  # one line per unit and round
    for row in result["units"]:
        assert 1 <= row["objects"] <= 3
        assert len(row["rounds"]) == 2
        assert row["model_rate"] > 0 and row["real_rate"] > 0
        # the sound converter passes in both: nothing to disagree on
        assert (row["model_fails"], row["real_fails"], row["disagreements"]) == (0, 0, 0)
    text = bench.report([{"start_s": 3.0, "stop_s": 1.0}], [result])
    assert "| Frobber (compatfuzz.toml) | `roundtrip[v7beta1->v6]` |" in text
    assert "no disagreement" in text


def test_a_lossy_converter_fails_the_same_objects_in_both_backends(
        real_endpoint: Endpoint) -> None:
    case = bench.frobber_case(FROBBER / "lossy.toml")
    unit = Unit(case.api.name, "Frobber", Property.ROUNDTRIP, ("v7beta1", "v6"))
    case.units = [unit]
    api_version = case.api.kinds[0].api_version("v7beta1")
    objects = {"v7beta1": [
        {"apiVersion": api_version, "kind": "Frobber", "spec": {"params": ["a"]}},
        {"apiVersion": api_version, "kind": "Frobber", "spec": {"params": ["a", "b"]}},
    ]}
    backend = RealBackend(case.api, real_endpoint)
    try:
        (row,) = bench.compare(case, backend, objects, 1, log=lambda _: None)
    finally:
        backend.close()
    assert (row["model_fails"], row["real_fails"], row["disagreements"]) == (1, 1, 0)
    assert row["first_disagreement"] is None


def test_a_missing_corpus_crd_is_skipped_with_a_note(tmp_path: Path) -> None:
    notes: list[str] = []
    assert bench.corpus_cases(tmp_path, ("absent.yaml",), notes.append) == []
    assert len(notes) == 1
    assert "absent.yaml: not there" in notes[0]


# -- arithmetic and report, on hand-made rounds -----------------------------------------

UNIT = Unit("bench", "Widget", Property.ROUNDTRIP, ("v1", "v2"))
LOST = "NotEquivalent: through the real API server: spec.x lost"


def _side(seconds: float, results: list[str | None]) -> dict[str, Any]:
    return {"seconds": seconds, "rate": len(results) / seconds, "results": results}


def test_the_ratio_is_the_median_of_per_round_ratios() -> None:
    objs = [{"n": 1}, {"n": 2}]
    # round 2 ran while the machine was busy: both sides slowed down 10x
    rounds = [{"model": _side(0.01, [None, None]), "real": _side(1.0, [None, None])},
              {"model": _side(0.1, [None, None]), "real": _side(10.0, [None, None])},
              {"model": _side(0.01, [None, None]), "real": _side(0.5, [None, None])}]
    row = bench.summarise_unit(UNIT, objs, rounds)
    assert row["ratio"] == pytest.approx(0.01)  # 0.01, 0.01, 0.02
    assert row["model_rate"] == pytest.approx(200.0)
    assert row["real_rate"] == pytest.approx(2.0)
    assert row["unit"] == "roundtrip[v1->v2]"
    assert (row["disagreements"], row["unstable"]) == (0, 0)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_disagreements_are_objects_failing_on_one_side_only(
        fails: list[tuple[bool, bool]]) -> None:
    objs = [{"n": i} for i in range(len(fails))]
    model = [LOST if m else None for m, _ in fails]
    real = [f"ConverterError: PUT /apis/x/cf-1-{i} 422" if r else None
            for i, (_, r) in enumerate(fails)]
    row = bench.summarise_unit(UNIT, objs, [{"model": _side(1, model),
                                             "real": _side(1, real)}])
    differ = [i for i, (m, r) in enumerate(fails) if m != r]
    assert row["disagreements"] == len(differ)
    assert (row["model_fails"], row["real_fails"]) == (sum(m for m, _ in fails),
                                                       sum(r for _, r in fails))
    assert sum(n for _, n in row["disagreement_kinds"]) == len(differ)
    if differ:
        first = row["first_disagreement"]
        assert first["object"] == objs[differ[0]]
        assert (first["model"], first["real"]) == (model[differ[0]], real[differ[0]])
        # one cause, one signature: the object's name and path are left out
        assert all("cf-1-" not in text for text, _ in row["disagreement_kinds"])
    else:
        assert row["first_disagreement"] is None


def test_an_outcome_that_changes_between_rounds_is_unstable_and_shown() -> None:
    objs = [{"spec": {"x": 1}}]
    rounds = [{"model": _side(1, [None]), "real": _side(1, [None])},
              {"model": _side(1, [None]), "real": _side(1, [LOST])}]
    row = bench.summarise_unit(UNIT, objs, rounds)
    assert row["unstable"] == 1
    assert row["disagreements"] == 0  # counted on the first round
    case = {"case": "Widget", "install_s": 0.1, "units": [bench.summarise_unit(
        UNIT, objs, [{"model": _side(1, [None]), "real": _side(1, [LOST])}])]}
    text = bench.report([{"start_s": 3.0, "stop_s": 1.0}], [case])
    assert "disagreements: 1; outcomes that changed between rounds: 0" in text
    assert "first disagreement of Widget: `roundtrip[v1->v2]`" in text
    assert 'object: {"spec": {"x": 1}}' in text
    assert "model:  passes" in text
    assert f"real:   {LOST}" in text
    assert f"1 x only real fails: {LOST}" in text
