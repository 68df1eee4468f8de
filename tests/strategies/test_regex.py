"""ECMA-262 pattern semantics for generation (JSON Schema `pattern` is ECMA, not Python)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs
from hypothesis import assume, find, given, settings
from hypothesis import strategies as st

from compatfuzz.errors import UnsupportedSchema
from compatfuzz.schema import load_schema
from compatfuzz.schema._pattern import PatternRefused, search
from compatfuzz.schema._re2 import (
    RE2SyntaxError,
    compile_python,
    compile_re2,
    go_error,
)
from compatfuzz.strategies import from_schema
from compatfuzz.strategies._regex import compile_ecma, compile_pattern, ecma_to_python


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


# --------------------------------------------------------------------------- Go RE2 dialect
# Kubernetes patterns are Go RE2 syntax (compatfuzz.schema._re2); conformance/regex checks
# the same against Go itself.

USER_REPORT = r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"
HOSTS_CRD = Path(__file__).resolve().parents[1] / "schema" / "data" / "hosts.crd.yaml"


@pytest.mark.parametrize(("pattern", "text", "matches"), [
    (USER_REPORT, "My-Host", True),
    (USER_REPORT, "my-host-", False),
    (USER_REPORT, "a\n", False),  # $ is the end of the text
    (r"a(?i)b", "aB", True),
    (r"a(?i)b", "AB", False),
    (r"(x(?i)y)z", "xYZ", False),  # (?i) ends with its group
    (r"(?i)k", "\u212a", True),  # Kelvin sign folds to k in Go
    (r"^(?i)[^k]$", "\u212a", False),
    (r"^\d$", "\u0661", False),  # Perl classes are ASCII
    (r"^\s$", "\x0b", False),  # Go's \s has no \v
    (r"^\p{greek}+$", "\u03b1\u03b2", True),  # Go's canonical property names
    (r"^[[:^digit:]]$", "x", True),
    (r"^\Q.*\E$", ".*", True),
    (r"^\x{10FFFF}$", "\U0010ffff", True),
    (r"^\101$", "A", True),
    (r"(?m)^b$", "a\nb\nc", True),
    (r"(?s)^.$", "\n", True),
    (r"^a\z", "a\n", False),
])
def test_re2_semantics(pattern: str, text: str, matches: bool) -> None:
    assert (compile_re2(pattern).search(text) is not None) is matches
    assert (compile_python(pattern).search(text) is not None) is matches


@pytest.mark.parametrize(("pattern", "error"), [
    (r"(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
    (r"(?!a)", "invalid or unsupported Perl syntax: `(?!`"),
    (r"(?<=a)b", "invalid named capture: `(?<=a)b`"),  # no ">": the rest of the pattern
    (r"(?>a)", "invalid or unsupported Perl syntax: `(?>`"),
    (r"(a)\1", "invalid escape sequence: `\\1`"),
    (r"a\Z", "invalid escape sequence: `\\Z`"),
    (r"\u0041", "invalid escape sequence: `\\u`"),
    (r"\C", "invalid escape sequence: `\\C`"),
    (r"a**", "invalid nested repetition operator: `**`"),
    (r"\p{Old_Italic}", "invalid character class range: `\\p{Old_Italic}`"),
    (r"a{1001}", "invalid repeat count: `{1001}`"),
    (r"[a-", "missing closing ]: `[a-`"),
])
def test_go_refusals_carry_go_error_text(pattern: str, error: str) -> None:
    assert go_error(pattern) == f"error parsing regexp: {error}"
    with pytest.raises(RE2SyntaxError, match=re.escape(error)):
        compile_python(pattern)
    with pytest.raises(PatternRefused, match=re.escape(error)):
        search(pattern, "x", kubernetes=True)


_RE2_PIECES = ["a", "K", "s", ".", "^", "$", "|", "(?i)", "(?-i)", "(?s)", "(?m)", "(?U)",
               "\\d", "\\W", "\\s", "\\pL", "\\p{Greek}", "\\PN", "[a-c]", "[^k]",
               "[[:alpha:]]", "\\Q.*\\E", "\\z", "\\b", "\\x{3b1}", "-", "\n"]


@st.composite
def _re2_patterns(draw: st.DrawFn) -> str:
    """Patterns Go accepts, made of RE2 pieces, groups and repeats."""
    parts = draw(st.lists(st.sampled_from(_RE2_PIECES), min_size=1, max_size=5))
    if draw(st.booleans()):
        parts = ["(", *parts, ")", draw(st.sampled_from(["*", "+", "?", "{1,3}", ""]))]
    pattern = "".join(parts)
    assume(go_error(pattern) is None)
    return pattern


@settings(deadline=None, max_examples=40)
@given(_re2_patterns(), st.data())
def test_every_string_drawn_from_an_re2_pattern_matches_under_re2(
        pattern: str, data: st.DataObject) -> None:
    value = data.draw(st.from_regex(compile_python(pattern), fullmatch=False,
                                    alphabet=st.characters(codec="utf-8")))
    assert re2.search(translate_re2(pattern), value) is not None
    assert compile_re2(pattern).search(value) is not None


def translate_re2(pattern: str) -> str:
    from compatfuzz.schema._re2 import translate

    return translate(pattern, "re2")


def test_the_dialect_follows_the_schema_origin() -> None:
    # Kubernetes: RE2, where (?i) may follow ^; JSON Schema: ECMA-262, which Python refuses
    assert compile_pattern(USER_REPORT, kubernetes=True).search("Ab")
    with pytest.raises(re.error):
        compile_pattern(USER_REPORT, kubernetes=False)
    # ECMA lookahead stays usable outside Kubernetes
    assert compile_pattern(r"^(?!kube-)[a-z-]+$", kubernetes=False).search("mine")
    with pytest.raises(RE2SyntaxError):
        compile_pattern(r"^(?!kube-)[a-z-]+$", kubernetes=True)


def test_user_report_crd_samples_valid_objects() -> None:
    """The CRD pattern ``^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$`` generates and validates."""
    schema = load_schema(HOSTS_CRD)
    names: list[str] = []

    @settings(max_examples=60, deadline=None)
    @given(from_schema(schema))
    def check(obj: dict[str, object]) -> None:
        assert schema.is_valid(obj), obj
        spec = obj.get("spec")
        if isinstance(spec, dict):
            names.append(str(spec["name"]))

    check()
    assert names
    assert all(re2.search(USER_REPORT, n) for n in names)


def test_a_refused_kubernetes_pattern_names_field_and_go_error() -> None:
    from compatfuzz.schema import Schema

    schema = Schema({"type": "object", "required": ["name"], "properties": {"name": {
        "type": "string", "pattern": r"^(?<!x)y$"}}}, name="Widget v1", kubernetes=True)
    with pytest.raises(UnsupportedSchema, match=r"Widget v1: cannot generate values at "
                       r"name: pattern .* error parsing regexp: invalid named capture"):
        find(from_schema(schema), lambda _: True)
