"""Translate a schema's ``pattern`` to Python ``re``, in the dialect its origin reads.

Kubernetes sources (``Schema.kubernetes``: CRDs, built-in kinds) are Go RE2 syntax, as the
API server's ``regexp`` reads them: :func:`compile_pattern` hands those to
``compatfuzz.schema._re2``, a port of Go's ``regexp/syntax/parse.go`` that resolves every
flag and class into plain Python ``re``. Every other schema keeps ECMA-262, the dialect
JSON Schema and OpenAPI name, translated here.

JSON Schema says ``pattern`` is ECMA-262, but Python's ``re`` differs where it matters for
generation: ``$`` also matches before a trailing newline, ``\\d``/``\\w`` match Unicode
digits and letters, and named groups are spelled ``(?P<name>...)``. Generating with the
Python meaning would produce strings a JavaScript or Go validator rejects (e.g. ``"abc\\n"``
for ``^abc$``), so we translate once and compile with ``re.ASCII``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compatfuzz.schema._re2 import compile_python as compile_re2_python

__all__ = ["compile_ecma", "compile_pattern", "ecma_to_python", "refusal"]

# We generate strings that ECMA-262, Python's ``re`` (which jsonschema validates with)
# and Go's RE2 (Kubernetes', and compatfuzz.schema's) all accept. \s: the space all three
# agree on, Go's ``[\t\n\f\r ]`` (regexp/syntax ``perl_groups.go``): ECMA's and
# Python's also take NBSP, U+2028 and the other Unicode spaces, which a kube-apiserver
# refuses (Karpenter's NodePool ``schedule``). \S: neither ECMA's nor
# Python's space (Python adds U+001C-U+001F and U+0085).
_ECMA_SPACE = ("\\t\\n\\x0b\\x0c\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029"
               "\\u202f\\u205f\\u3000")
_ANY_SPACE = _ECMA_SPACE + "\\ufeff\\x1c-\\x1f\\x85"
_GO_SPACE = "\\t\\n\\x0c\\r "


def ecma_to_python(pattern: str) -> str:
    """Return a Python regex source that matches what ``pattern`` matches in ECMA-262,
    less what Python's Unicode ``re`` (jsonschema's) would refuse, so generated values pass
    both.

    Covers: ``$`` outside classes -> ``(?!\\n)\\Z``-equivalent ``\\Z``; ``(?<name>`` ->
    ``(?P<name>``; ``\\d \\w`` restricted to ASCII by the ``re.ASCII`` flag at compile
    time; ``\\D \\W``, and classes holding any of ``\\d \\D \\w \\W``, restricted to
    what Python's Unicode reading also accepts (``"¹"`` is ``\\W`` to ECMA, a word
    character to Python); ``\\s`` spelled out as the whitespace Go's RE2 also takes
    (``[\\t\\n\\f\\r ]``), ``\\S`` as what is space to none of ECMA and Python
    (``\\S`` inside a class keeps the ASCII meaning); ``\\cX`` control escapes;
    ``\\u{XXXX}`` is not ECMA without the ``u`` flag and is left alone.
    """
    out: list[str] = []
    i = 0
    in_class = False
    class_start, class_words, negated = 0, False, False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "Z" and not in_class:
                # ECMA has no \Z: it is an identity escape for "Z".
                out.append("Z")
            elif nxt == "A" and not in_class:
                out.append("A")
            elif nxt == "s":
                # ECMA's \s is Unicode whitespace (NBSP, BOM, Zs, LS, PS), Go's ASCII
                # (in a negated class, every space any of them knows stays out)
                out.append((_ANY_SPACE if negated else _GO_SPACE) if in_class
                           else f"[{_GO_SPACE}]")
            elif nxt == "S" and not in_class:
                out.append(f"[^{_ANY_SPACE}]")
            elif nxt in "WD" and not in_class:
                # ECMA's \W is any non-[A-Za-z0-9_], Python's also excludes Unicode letters
                # and digits ("¹", "é"): generate from Python's, the smaller of the two
                out.append(f"(?u:\\{nxt})")
            elif nxt == "c" and i + 2 < n and pattern[i + 2].isascii() \
                    and pattern[i + 2].isalpha():
                out.append(f"\\x{ord(pattern[i + 2]) % 32:02x}")  # \cJ: control-J
                i += 3
                continue
            else:
                out.append(pattern[i : i + 2])
                class_words |= in_class and nxt in "wWdD"
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
                if class_words:
                    # [\W], [^\w]: a character both readings accept (ECMA's ASCII
                    # classes, Python's Unicode ones), by a lookahead
                    cls = "".join(out[class_start:]) + "]"
                    out[class_start:] = [f"(?:(?={cls})(?u:{cls}))"]
                    i += 1
                    continue
            elif c == "[" or c in "&~|" or (c == "-" and out[-1] == "-"):
                # Literal in an ECMA class, but Python reserves "[", "&&", "~~", "||" and
                # "--" for future set operations (and warns): escape them.
                out.append("\\" + c)
                i += 1
                continue
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            class_start, class_words = len(out), False
            negated = pattern.startswith("^", i + 1)
            out.append(c)
            # "]" right after "[" or "[^" is a literal in Python but ends the class in ECMA
            # ("[]" matches nothing, "[^]" matches anything).
            if pattern.startswith("^]", i + 1):
                out.append("^\\]")  # placeholder, fixed below
                out[-2:] = ["(?s:.)"]
                in_class = False
                i += 3
                continue
            if pattern.startswith("]", i + 1):
                out[-1] = "(?!)"
                in_class = False
                i += 2
                continue
            i += 1
            continue
        if c == "$":
            out.append(r"\Z")
            i += 1
            continue
        lookbehind = pattern.startswith(("(?<=", "(?<!"), i)
        if c == "(" and pattern.startswith("(?<", i) and not lookbehind:
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_ecma(pattern: str) -> re.Pattern[str]:
    """Compile an ECMA-262 ``pattern`` as Python ``re`` with ECMA semantics (cached), for
    generation: what it matches, ECMA and Python's ``re`` both accept."""
    return re.compile(ecma_to_python(pattern), re.ASCII)


def compile_pattern(pattern: str, *, kubernetes: bool) -> re.Pattern[str]:
    """Compile a schema ``pattern`` for generation in the dialect of its schema: Go RE2 for
    Kubernetes sources, ECMA-262 otherwise (both cached).

    Raises:
        compatfuzz.schema._re2.RE2SyntaxError: Kubernetes, and Go refuses the pattern
            (``str()`` is Go's own error text).
        re.error: not Kubernetes, and the pattern is no regular expression.
    """
    return compile_re2_python(pattern) if kubernetes else compile_ecma(pattern)


def refusal(pattern: str, error: Exception, *, kubernetes: bool) -> str:
    """The message for a ``pattern`` its dialect refuses: the pattern, the reader's own
    error text (Go's for Kubernetes, as the API server answers) and a fix."""
    if kubernetes:
        return (f"pattern {pattern!r} is not Go RE2 syntax, which Kubernetes reads it as, "
                f"and the API server refuses the CRD: {error}; fix: rewrite it in RE2 "
                "syntax (no lookaround such as (?=...) or (?!...), no backreferences such "
                "as \\1, \\z instead of \\Z; https://github.com/google/re2/wiki/Syntax)")
    return f"pattern {pattern!r} is not a valid regular expression ({error})"
