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
        (r"^\S+$", "a\u00a0b", False),  # NBSP is whitespace in ECMA (re.ASCII says no)
        (r"^\S$", "\x1c", False),  # not space in ECMA, but space to Python's re
        # \s: only the space Go's RE2 (Kubernetes') also takes, [\t\n\f\r ]
        (r"^\s$", "\u00a0", False),
        (r"^\s$", "\u2028", False),
        (r"^[\s,]$", "\u3000", False),
        (r"^\s$", "\x0c", True),
        (r"^[^\s]$", "\u00a0", False),  # space to ECMA and Python: not generated
        (r"^a\cJ$", "a\n", True),  # control escape
    ],
)
def test_ecma_semantics(pattern: str, text: str, matches: bool) -> None:
    assert (compile_ecma(pattern).search(text) is not None) is matches


_WORDS = ("\u00b9", "\u00e9", "\u0661")  # superscript one, e acute, Arabic-Indic one
_DIGITS = ("\u0661", "\u0969")  # Arabic-Indic and Devanagari digits


@pytest.mark.parametrize(("pattern", "texts"), [
    (r"^\W$", _WORDS), (r"^[\W]$", _WORDS), (r"^[^\w]$", _WORDS),
    (r"^\D$", _DIGITS), (r"^[x\D]$", _DIGITS),
])
def test_non_word_classes_take_only_what_python_also_takes(
        pattern: str, texts: tuple[str, ...]) -> None:
    """ECMA's ASCII non-word and non-digit classes take Unicode letters and digits;
    Python's Unicode ones (jsonschema's) do not, so generating from ECMA's would make
    values our own validator refuses."""
    ours, python = compile_ecma(pattern), re.compile(pattern)
    for text in texts:
        assert ours.search(text) is None and python.search(text) is None, text
    assert ours.search("-") is not None and python.search("-") is not None


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


#: Karpenter NodePool's spec.disruption.budgets[].schedule (karpenter.sh_nodepools.yaml)
_CRON = (r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|"
         r"((.+)\s(.+)\s(.+)\s(.+)\s(.+))$")


@given(st.sampled_from([r"^\S+$", r"^\s+$", r"^a\s?\S*b$", r"^[\s,]+$", r"^[^\s]+$",
                        _CRON]), st.data())
def test_generated_space_classes_pass_ecma_and_python(pattern: str, data: st.DataObject) -> None:
    """jsonschema validates ``pattern`` with Python's Unicode ``re``; ECMA validators with
    ECMA's whitespace; a kube-apiserver with Go's RE2, whose ``\\s`` is ASCII: what we
    generate must pass all three."""
    import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs

    value = data.draw(st.from_regex(compile_ecma(pattern), fullmatch=True))
    assert re.search(pattern, value)  # Python's own (Unicode) reading
    assert re2.search(pattern, value), value  # Go's (the server's) reading
    # ECMA's reading: U+FEFF is whitespace there (and not to Python), so neither \s nor
    # \S may produce it.
    assert "\ufeff" not in value
