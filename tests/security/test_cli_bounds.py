"""Counts and seeds from the command line are bounded where they are read: a usage error
(exit 2) in a line or two, never a stream that runs until killed nor 5,000 digits echoed
back (``compatfuzz fuzz``'s own bounds: tests/security/test_report_merge.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz._commands._args import SEED_DIGITS, parse_seed
from compatfuzz.cli import main
from compatfuzz.roundtrip._reports._report import strict_json

FROBBER_CRD = Path(__file__).resolve().parents[2] / "examples" / "frobber" / "crd.yaml"


@pytest.mark.parametrize(("argv", "words"), [
    (["sample", "-n", "99999999999999999999"], "at most 1,000,000"),
    (["sample", "-n", "0"], "must be at least 1"),
    (["sample", "-n", "9" * 5000], "at most 1,000,000"),
    (["sample", "--seed", "9" * 5000], "at most 39 digits"),
    (["diff", "--seed", "9" * 5000, f"{FROBBER_CRD}@v6"], "at most 39 digits"),
])
def test_sample_and_diff_refuse_absurd_counts_and_seeds(
        argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``sample -n 10**20`` streamed until killed; a 5,000-digit seed printed all its
    digits back. Both are usage errors, in a line or two."""
    with pytest.raises(SystemExit) as exit_:
        main([*argv, f"{FROBBER_CRD}@v7beta1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and words in err and len(err) < 600, err


@settings(max_examples=50, deadline=None)
@given(st.one_of(st.integers(), st.text(max_size=60)))
def test_a_seed_is_taken_exactly_when_it_is_an_integer_of_39_digits_at_most(
        value: int | str) -> None:
    text = str(value)
    try:
        got = parse_seed(text)
    except argparse.ArgumentTypeError as exc:
        assert len(str(exc)) < 200
        stripped = text.strip().lstrip("+-")
        assert len(stripped) > SEED_DIGITS or not _is_int(text)
    else:
        assert got == int(text) and len(text.strip().lstrip("+-")) <= SEED_DIGITS


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


JSONISH = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=12)


@settings(max_examples=100, deadline=None)
@given(JSONISH)
def test_reports_are_standard_json_whatever_floats_they_hold(value: object) -> None:
    """A report or counterexample file holding a NaN (a converter's float) was written
    as bare ``NaN``, which strict JSON parsers (jq, Go, JavaScript) refuse."""
    text = strict_json({"object": value}, indent=2)
    back = json.loads(text, parse_constant=_no_constants)
    if "NaN" not in text and "Infinity" not in text:
        assert back == {"object": value} or value != value  # noqa: PLR0124 - NaN check
