"""Differential tests: the static rules against a direct witness search.

For generated schema pairs (a schema and a revision with one or two seed-rule mutations),
a witness found by searching directly (valid under the writer's schema, rejected by the
reader's) must be explained by a static finding claiming that side at that path: a rule
that says "compatible" while a witness exists is a failure. Conversely every witness the
engine reports must really be valid on one side and rejected on the other.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from compatfuzz.compat import Side, Status, diff
from compatfuzz.compat._engine import _segments
from compatfuzz.compat._static import walk
from compatfuzz.compat._witness import Judge, Rejection, _error_path, explains, open_up
from compatfuzz.errors import UnsupportedSchema
from compatfuzz.schema import Schema
from compatfuzz.strategies import from_schema
from tests.compat._gen import AUDITED, mutated_pairs

NESTED = settings(suppress_health_check=[HealthCheck.nested_given, HealthCheck.too_slow,
                                         HealthCheck.filter_too_much])


@NESTED
@given(mutated_pairs(), st.data())
def test_no_witness_without_a_static_finding(pair: tuple[Any, Any, str],
                                             data: st.DataObject) -> None:
    _no_witness_without_a_static_finding(pair, data)


@pytest.mark.slow  # ~15 s; the default run keeps test_no_witness_without_a_static_finding
@settings(NESTED, max_examples=150)
@given(mutated_pairs(AUDITED), st.data())
def test_no_witness_without_a_static_finding_for_audited_changes(
        pair: tuple[Any, Any, str], data: st.DataObject) -> None:
    # unknown fields (open, closed, preserved), null enum values, defaults: the changes
    # whose missing rules the fifth audit found; drawn often enough to fail without them
    _no_witness_without_a_static_finding(pair, data)


@pytest.mark.slow
@settings(NESTED, max_examples=3000)
@given(mutated_pairs(), st.data())
def test_no_witness_without_a_static_finding_thorough(pair: tuple[Any, Any, str],
                                                      data: st.DataObject) -> None:
    _no_witness_without_a_static_finding(pair, data)


def _no_witness_without_a_static_finding(pair: tuple[Any, Any, str],
                                         data: st.DataObject) -> None:
    old, new, kinds = pair
    o, n = Schema(root=old), Schema(root=new)
    pruning = data.draw(st.booleans(), label="pruning (Kubernetes semantics)")
    static = list(walk(o, n, pruning=pruning))
    judge = Judge(o, n, pruning=pruning)
    for side in (Side.REQUEST, Side.RESPONSE):
        writer, reader = (o, n) if side is Side.REQUEST else (n, o)
        # the reader's field names where the writer keeps unknown fields (open objects,
        # preserve-unknown-fields), plus random unknown keys
        gen = open_up(writer, reader, pruning=pruning)
        for _ in range(4):
            try:
                value = data.draw(
                    from_schema(gen, extra_properties=data.draw(st.booleans())),
                    label=f"{side} candidate")
            except UnsupportedSchema:
                reject()  # the revision accepts no value at all: nothing to witness
            verdict = judge.check(side, value)
            if verdict is None:
                continue
            # matched by rule keyword and path, not by path only: a finding explains a
            # witness only if the rejecting keyword is the one it is about
            claims = [f for f in static if side in f.breaks]
            assert any(explains(f, r) for f in claims for r in verdict.rejections), (
                f"{kinds}: {side} witness {value!r} "
                f"({[(r.keyword, r.path, r.message) for r in verdict.rejections]}) but "
                f"static rules claim only {[(f.rule, f.keyword, f.path) for f in claims]}")


def _sub(root: dict[str, Any], path: str) -> dict[str, Any]:
    node: Any = root
    for seg in _segments(path if path != "$" else ""):
        if not isinstance(node, dict):
            return {}
        if seg == "[*]":
            node = node.get("items", node.get("additionalProperties", {}))
        else:
            node = (node.get("properties") or {}).get(seg.strip('[]"'), {})
    return node if isinstance(node, dict) else {}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.nested_given, HealthCheck.too_slow])
@given(mutated_pairs())
def test_every_reported_witness_is_real(pair: tuple[Any, Any, str]) -> None:
    old, new, kinds = pair
    report = diff(old, new, budget=40, whole_budget=40, direction="both")
    for f in report.findings:
        if f.rule.startswith("default-"):  # behaviour: no (fake) witness
            assert (f.status, f.witness) == (Status.NOT_CHECKED, None), f.to_json()
        if f.witness is None:
            continue
        assert f.status is Status.CONFIRMED
        w = f.witness
        writer, reader = (old, new) if w.side is Side.REQUEST else (new, old)
        wsub = Schema(root=_sub(writer, w.path))
        rsub = Schema(root=_sub(reader, w.path))
        assert wsub.is_valid(w.value), (kinds, f.to_json())
        assert not rsub.is_valid(w.value), (kinds, f.to_json())
        assert w.side in f.breaks
        # credited by keyword: the reader rejects it with this finding's keyword here
        errors = list(rsub.validator.iter_errors(w.value))
        errors += [c for e in errors for c in e.context or []]
        rejections = [Rejection(str(e.validator), _error_path(e.absolute_path), e.message)
                      for e in errors]
        assert any(explains(f, r, at=w.path) for r in rejections), (kinds, f.to_json())
    # with the static rules complete, the whole-schema search has nothing left to explain
    assert [f.to_json() for f in report.findings if f.rule == "witness-only"] == [], kinds
