"""ECMA-262 pattern semantics for generation (JSON Schema `pattern` is ECMA, not Python)."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.strategies._regex import compile_ecma, ecma_to_python


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^abc$", "abc", True),
        ("^abc$", "abc\n", False),  # Python's `$` would accept this
        (r"^\d+$", "123", True),
        (r"^\d+$", "\u0661\u0662", False),  # Arabic-Indic digits: \d is ASCII in ECMA
        (r"^\w+$", "\u00e9", False),
        ("(?<year>[0-9]{4})-", "2024-", True),  # ECMA named group
        ("^[]$", "", False),  # [] matches nothing in ECMA
        ("a[[]b", "a[b", True),
        ("(?<=a)b", "ab", True),  # lookbehind is not a named group
        ("^[0||]$", "|", True),  # "||" is literal in ECMA, a future set union in Python
        ("^[!--]$", ",", True),  # range "!" to "-", not a set difference
        ("^[a&&b]$", "&", True),
    ],
)
def test_ecma_semantics(pattern: str, text: str, matches: bool) -> None:
    assert (compile_ecma(pattern).search(text) is not None) is matches


@given(st.text(alphabet="ab\n$^()[]\\d.*+?|{}0-9wW", max_size=12), st.text(max_size=6))
def test_ecma_matches_are_also_python_matches(pattern: str, text: str) -> None:
    """What we generate for ECMA must also pass jsonschema, which uses Python's ``re``."""
    try:
        with warnings.catch_warnings():
            # Python's own reading of the raw pattern is the reference; its FutureWarnings
            # about set operations are not ours. Our translation must compile silently.
            warnings.simplefilter("ignore", FutureWarning)
            python = re.compile(pattern)
        ecma = re.compile(ecma_to_python(pattern), re.ASCII)
    except re.error:
        return
    if ecma.search(text) is not None:
        assert python.search(text) is not None
