"""Tests of benchmarks/compat_releases.py, the table of compatfuzz's verdict on each corpus
release pair beside the project's documented verdict (issue 19).

The consistency rule (every pair documented, every disagreement explained, no stale
explanation) is tested on made-up rows with Hypothesis; the hand-written yaml is checked
against the corpus's release pairs (fast, no engine), and a slow test runs ``diff
--no-witness`` on every pair and requires every disagreement to be explained. The corpus
tests skip cleanly where ../shared is absent (``corpus_dir`` fixture).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _load() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_compat_releases", ROOT / "benchmarks" / "compat_releases.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_compat_releases"] = module
    spec.loader.exec_module(module)
    return module


releases = _load()

rows_st = st.dictionaries(
    st.text("abcxyz/ ->.", min_size=1, max_size=8),
    st.tuples(st.booleans(), st.booleans()),  # (agree, explained)
    max_size=12,
)


@given(rows_st)
def test_every_unexplained_disagreement_and_every_stale_explanation_is_a_problem(
        spec: dict[str, tuple[bool, bool]]) -> None:
    doc = {
        "pairs": {label: {"verdict": "compatible", "what": "", "cite": ""} for label in spec},
        "explanations": {label: "why" for label, (_, explained) in spec.items() if explained},
    }
    rows = [{"pair": label, "agree": agree, "verdict": "breaking",
             "documented": "compatible"} for label, (agree, _) in spec.items()]
    problems = releases.consistency(doc, list(spec), rows)
    unexplained = [label for label, (agree, expl) in spec.items() if not agree and not expl]
    stale = [label for label, (agree, expl) in spec.items() if agree and expl]
    assert len(problems) == len(unexplained) + len(stale)
    for label in unexplained:
        assert any(p.startswith(f"{label}: ") and "add an explanation" in p for p in problems)
    for label in stale:
        assert any(p.startswith(f"{label}: ") and "delete it" in p for p in problems)


def test_a_pair_without_an_entry_and_an_entry_without_a_pair_are_problems() -> None:
    doc = {"pairs": {"p/c v1->v2": {"verdict": "breaking", "what": "", "cite": ""}},
           "explanations": {"gone v0->v1": "why"}}
    problems = releases.consistency(doc, ["p/c v2->v3"])
    assert "p/c v2->v3: no documented entry under pairs" in problems
    assert "p/c v1->v2: documented, but no such release pair in the corpus" in problems
    assert "gone v0->v1: explanation for no release pair" in problems


@pytest.mark.parametrize("verdict, breaking", [
    ("breaking", True), ("compatible", False), ("not-stated", False)])
def test_not_stated_reads_as_compatible(verdict: str, breaking: bool) -> None:
    assert releases.documented_breaking({"verdict": verdict}) is breaking


@pytest.mark.parametrize("entry, where, fix", [
    ({"verdict": "maybe", "what": "", "cite": ""}, "$.pairs['p/c v1->v2'].verdict",
     "not one of ['compatible', 'breaking', 'not-stated']"),
    ({"verdict": "breaking", "what": ""}, "$.pairs['p/c v1->v2']", "needs the keys"),
    ({"verdict": "breaking", "what": "", "cite": "", "extra": 1}, "$.pairs['p/c v1->v2']",
     "may have ['note']"),
])
def test_a_bad_entry_names_the_file_its_key_and_the_fix(
        tmp_path: Path, entry: dict[str, Any], where: str, fix: str) -> None:
    path = tmp_path / "documented.yaml"
    path.write_text(yaml.safe_dump({"projects": {"p": {"policy": "x"}},
                                    "pairs": {"p/c v1->v2": entry}}))
    with pytest.raises(releases.DocumentedError) as e:
        releases.load_documented(path)
    assert "documented.yaml" in str(e.value)
    assert where in str(e.value)
    assert fix in str(e.value)


@pytest.mark.parametrize("entry, fix", [
    ("why", "needs kinds (a list) and text"),
    ({"kinds": ["upgrade-only"], "text": "why"}, "['upgrade-only'] is not a list of"),
    ({"kinds": [], "text": "why"}, "is not a list of"),
])
def test_an_explanation_names_its_kinds(tmp_path: Path, entry: Any, fix: str) -> None:
    path = tmp_path / "documented.yaml"
    path.write_text(yaml.safe_dump({"projects": {}, "explanations": {"p/c v1->v2": entry}}))
    with pytest.raises(releases.DocumentedError) as e:
        releases.load_documented(path)
    assert "$.explanations['p/c v1->v2']" in str(e.value)
    assert fix in str(e.value)


def test_a_pair_of_a_project_without_its_policy_entry_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "documented.yaml"
    path.write_text(yaml.safe_dump({
        "projects": {}, "pairs": {"p/c v1->v2": {"verdict": "breaking", "what": "",
                                                 "cite": ""}}}))
    with pytest.raises(releases.DocumentedError, match=r"project 'p' has no entry"):
        releases.load_documented(path)


def test_the_documented_verdicts_cover_every_release_pair(corpus_dir: Path) -> None:
    """Fast: no engine. A new tag in the corpus needs its documented verdict."""
    doc = releases.load_documented()
    labels = [label for label, _, _ in releases.pairs()]
    assert len(labels) >= 49
    assert releases.consistency(doc, labels) == []


@pytest.mark.slow
def test_every_disagreement_on_the_corpus_is_explained(corpus_dir: Path) -> None:
    """Static mode (the verdicts equal the witness run's, results/compat_speed*.json)."""
    doc = releases.load_documented()
    todo = releases.pairs()
    rows = [releases.run_pair(label, old, new, doc, dynamic=False, policy="kubernetes")
            for label, old, new in todo]
    assert releases.consistency(doc, [label for label, _, _ in todo], rows) == []
    assert any(not r["agree"] for r in rows)  # the table has something to explain
