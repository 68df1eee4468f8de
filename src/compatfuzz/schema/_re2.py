"""Go's RE2 regular expression dialect: Go's verdict on a pattern, and its meaning.

Kubernetes reads every CRD ``pattern`` and every CEL ``matches()``/``find()``/
``findAll()`` argument with Go's ``regexp`` (RE2 syntax), not ECMA-262: ``(?i)`` may stand
anywhere and applies to the rest of its group, ``$`` is the end of the text, ``\\pL``,
``[[:alpha:]]`` and ``\\Q...\\E`` exist, lookaround and backreferences do not. Python's
``re`` refuses some of these (``^(?i)[a-z]$``: "global flags not at the start of the
expression") and reads others differently (``$`` before a trailing newline, Unicode
``\\d``), and google-re2 (RE2's C++ engine) differs from Go in a few corners: it accepts
``\\C``, refuses Go's property aliases (``\\p{greek}``, ``\\p{Letter}``, ``\\p{Assigned}``)
and knows Unicode 15.1 where Go 1.26 knows 15.0.

So this module parses a pattern the way Go's ``regexp/syntax/parse.go`` does (its flags,
its escape, class, repeat and named-capture rules, and its error messages, e.g.
``error parsing regexp: invalid or unsupported Perl syntax: `(?=```), and writes an
equivalent regular expression with every flag resolved: case folding expanded into
explicit classes, anchors and ``.`` spelled out, every class a list of code point ranges
(Perl and POSIX classes from ``perl_groups.go``, Unicode tables and simple case folding
from RE2's own tables, which Go shares, by enumerating what google-re2 matches). Two
targets share the translation: ``"python"`` for Hypothesis's ``st.from_regex`` (Unicode
tables limited to characters Python's ``unicodedata`` also knows as assigned, so a
generated string matches under any Unicode 15.x reading) and ``"re2"`` for validation with
google-re2 (linear time).

Not modelled: Go's size limits (``expression too large``, ``expression nests too
deeply``: a pattern that large is refused by RE2 when validating) and invalid UTF-8 (a
Python string has none).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs

__all__ = ["RE2SyntaxError", "compile_python", "compile_re2", "go_error", "translate"]

Target = Literal["python", "re2"]
Ranges = tuple[tuple[int, int], ...]

MAX_RUNE = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)

# regexp/syntax perl_groups.go: the ASCII Perl and POSIX classes.
_DIGIT: Ranges = ((0x30, 0x39),)
_SPACE: Ranges = ((0x9, 0xA), (0xC, 0xD), (0x20, 0x20))
_WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_PERL = {"d": _DIGIT, "s": _SPACE, "w": _WORD}
_POSIX: dict[str, Ranges] = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    "alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    "ascii": ((0x0, 0x7F),),
    "blank": ((0x9, 0x9), (0x20, 0x20)),
    "cntrl": ((0x0, 0x1F), (0x7F, 0x7F)),
    "digit": _DIGIT,
    "graph": ((0x21, 0x7E),),
    "lower": ((0x61, 0x7A),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": ((0x9, 0xD), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),),
    "word": _WORD,
    "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}

# Go's unicode package (Unicode 15.0.0 in Go 1.26): the general categories, the scripts
# and unicode.CategoryAliases. Go looks a name up after its canonicalName (parse.go):
# first letter upper case, the rest lower case, "_", "-" and " " dropped, so scripts
# spelled with an underscore (Old_Italic) or inner capitals (SignWriting) are unknown.
_CATEGORIES = frozenset((
    "C", "Cc", "Cf", "Cn", "Co", "Cs", "L", "LC", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me",
    "Mn", "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk",
    "Sm", "So", "Z", "Zl", "Zp", "Zs",
))
_SCRIPTS = frozenset((
    "Adlam", "Ahom", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum", "Batak", "Bengali",
    "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese", "Buhid", "Carian", "Chakma",
    "Cham", "Cherokee", "Chorasmian", "Common", "Coptic", "Cuneiform", "Cypriot", "Cyrillic",
    "Deseret", "Devanagari", "Dogra", "Duployan", "Elbasan", "Elymaic", "Ethiopic", "Georgian",
    "Glagolitic", "Gothic", "Grantha", "Greek", "Gujarati", "Gurmukhi", "Han", "Hangul",
    "Hanunoo", "Hatran", "Hebrew", "Hiragana", "Inherited", "Javanese", "Kaithi", "Kannada",
    "Katakana", "Kawi", "Kharoshthi", "Khmer", "Khojki", "Khudawadi", "Lao", "Latin", "Lepcha",
    "Limbu", "Lisu", "Lycian", "Lydian", "Mahajani", "Makasar", "Malayalam", "Mandaic",
    "Manichaean", "Marchen", "Medefaidrin", "Miao", "Modi", "Mongolian", "Mro", "Multani",
    "Myanmar", "Nabataean", "Nandinagari", "Newa", "Nko", "Nushu", "Ogham", "Oriya", "Osage",
    "Osmanya", "Palmyrene", "Phoenician", "Rejang", "Runic", "Samaritan", "Saurashtra",
    "Sharada", "Shavian", "Siddham", "Sinhala", "Sogdian", "Soyombo", "Sundanese", "Syriac",
    "Tagalog", "Tagbanwa", "Takri", "Tamil", "Tangsa", "Tangut", "Telugu", "Thaana", "Thai",
    "Tibetan", "Tifinagh", "Tirhuta", "Toto", "Ugaritic", "Vai", "Vithkuqi", "Wancho", "Yezidi",
    "Yi",
))
_ALIASES = {
    "Cased_Letter": "LC", "Close_Punctuation": "Pe", "Combining_Mark": "M",
    "Connector_Punctuation": "Pc", "Control": "Cc", "Currency_Symbol": "Sc",
    "Dash_Punctuation": "Pd", "Decimal_Number": "Nd", "Enclosing_Mark": "Me",
    "Final_Punctuation": "Pf", "Format": "Cf", "Initial_Punctuation": "Pi", "Letter": "L",
    "Letter_Number": "Nl", "Line_Separator": "Zl", "Lowercase_Letter": "Ll", "Mark": "M",
    "Math_Symbol": "Sm", "Modifier_Letter": "Lm", "Modifier_Symbol": "Sk",
    "Nonspacing_Mark": "Mn", "Number": "N", "Open_Punctuation": "Ps", "Other": "C",
    "Other_Letter": "Lo", "Other_Number": "No", "Other_Punctuation": "Po",
    "Other_Symbol": "So", "Paragraph_Separator": "Zp", "Private_Use": "Co",
    "Punctuation": "P", "Separator": "Z", "Space_Separator": "Zs", "Spacing_Mark": "Mc",
    "Surrogate": "Cs", "Symbol": "S", "Titlecase_Letter": "Lt", "Unassigned": "Cn",
    "Uppercase_Letter": "Lu", "cntrl": "Cc", "digit": "Nd", "punct": "P",
}

# Go's ASCII \b and \B: Python's ASCII \b, and \B spelled with lookarounds, since
# Hypothesis's from_regex cannot draw for Python's \B at all.
_PY_W = "[0-9A-Za-z_]"
_PY_WORD_BOUNDARY = "(?a:\\b)"
_PY_NOT_WORD_BOUNDARY = f"(?:(?<={_PY_W})(?={_PY_W})|(?<!{_PY_W})(?!{_PY_W}))"

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class RE2SyntaxError(ValueError):
    """Go's ``regexp.Compile`` refuses the pattern; ``str()`` is Go's error text."""

    def __init__(self, code: str, expr: str, pattern: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expr}`")
        self.code = code
        self.expr = expr
        self.pattern = pattern


# ------------------------------------------------------------------ code point sets


def _clean(ranges: Iterable[tuple[int, int]]) -> Ranges:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def _negate(ranges: Ranges) -> Ranges:
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_RUNE:
        out.append((nxt, MAX_RUNE))
    return tuple(out)


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    return _negate(_clean(_negate(a) + _negate(b)))


@lru_cache(maxsize=1)
def _universe() -> str:
    """Every Unicode scalar value, in order (google-re2 takes no surrogates)."""
    return "".join(chr(c) for c in range(MAX_RUNE + 1)
                   if not _SURROGATES[0] <= c <= _SURROGATES[1])


def _scan(re2_class: str) -> Ranges:
    """The code points google-re2's ``re2_class`` (one character) matches, as ranges."""
    text = _universe()
    compiled = re2.compile(f"(?:{re2_class})+", _RE2_OPTIONS)
    out = []
    for match in compiled.finditer(text):
        lo, hi = ord(text[match.start()]), ord(text[match.end() - 1])
        out.append((lo, hi))
    return _clean(out)


def _re2_class_text(ranges: Ranges) -> str:
    return "[" + "".join(f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}"
                         for lo, hi in ranges) + "]"


@lru_cache(maxsize=4096)
def _fold(ranges: Ranges) -> Ranges:
    """``ranges`` closed under Unicode simple case folding (Go's ``appendFoldedRange``)."""
    if not ranges:
        return ranges
    if all(hi < 0x41 or (lo >= 0x5B and hi < 0x61) or 0x7B <= lo <= hi < 0xB5
           for lo, hi in ranges):
        return ranges  # no cased character here: skip the scan
    return _clean(ranges + _scan("(?i)" + _re2_class_text(ranges)))


@lru_cache(maxsize=1)
def _python_assigned() -> Ranges:
    """Code points Python's ``unicodedata`` knows as assigned (Unicode 14 on 3.11)."""
    out = []
    for c in range(MAX_RUNE + 1):
        if unicodedata.category(chr(c)) not in ("Cn", "Cs"):
            out.append((c, c))
    return _clean(out)


@lru_cache(maxsize=256)
def _table(name: str) -> Ranges:
    """The code points of a Go table name (already canonical and looked up), as
    google-re2 (Unicode 15.1) has them."""
    if name == "Any":
        return ((0, MAX_RUNE),)
    if name == "LC":
        return _clean(_scan(r"\p{Lu}") + _scan(r"\p{Ll}") + _scan(r"\p{Lt}"))
    if name == "Cn":
        assigned = _clean(r for cat in _CATEGORIES if len(cat) == 2 and cat not in ("Cn", "LC")
                          for r in _scan(f"\\p{{{cat}}}"))
        return _negate(_clean((*assigned, _SURROGATES)))
    return _scan(f"\\p{{{name}}}")


@lru_cache(maxsize=1)
def _certain() -> Ranges:
    """Code points whose Unicode properties Go 1.26 (Unicode 15.0), google-re2 (15.1) and
    Python's ``unicodedata`` agree on: assigned in Python's, or unassigned in all. A class
    built from Unicode tables draws only from these (a character new in 15.0 or 15.1 may
    be a letter to one and unassigned to another)."""
    return _clean(_python_assigned() + _table("Cn"))


def _canonical_name(name: str) -> str:
    """Go's ``canonicalName`` (regexp/syntax/parse.go)."""
    out, first = [], True
    for c in name:
        if c in "_- ":
            continue
        if first:
            out.append(c.upper() if "a" <= c <= "z" else c)
            first = False
        else:
            out.append(c.lower() if "A" <= c <= "Z" else c)
    return "".join(out)


_CANONICAL_ALIASES = {_canonical_name(k): v for k, v in _ALIASES.items()}


def _unicode_table(name: str) -> tuple[str, int] | None:
    """Go's ``unicodeTable``: (table name, sign), or None for an unknown name."""
    canon = _canonical_name(name)
    special = {"Any": ("Any", 1), "Assigned": ("Cn", -1), "Ascii": ("ASCII", 1),
               "Lc": ("LC", 1)}
    if canon in special:
        return special[canon]
    if canon in _CATEGORIES or canon in _SCRIPTS:
        return canon, 1
    if canon in _CANONICAL_ALIASES:
        return _CANONICAL_ALIASES[canon], 1
    return None


# ------------------------------------------------------------------ parsing


@dataclass
class _Piece:
    """One parsed item: its translation and, for Go's repeat checks, its repeat tree."""

    text: str
    pseudo: bool = False  # an empty-width op may repeat; only "(" and "|" may not
    repeats: tuple[tuple[int, Any], ...] = ()  # (count, inner repeats) per OpRepeat


@dataclass
class _Frame:
    flags: frozenset[str]
    alternatives: list[list[_Piece]] = field(default_factory=lambda: [[]])


def _repeat_valid(repeats: tuple[tuple[int, Any], ...], n: int) -> bool:
    """Go's ``repeatIsValid`` over the repeats below a node."""
    for count, inner in repeats:
        if count == 0:
            continue
        if count > n:
            return False
        if not _repeat_valid(inner, n // count if count > 0 else n):
            return False
    return True


class _Parser:
    def __init__(self, pattern: str, target: Target) -> None:
        self.s = pattern
        self.target = target
        self.pos = 0
        self.uses_tables = False  # the class being parsed holds a Unicode table

    def error(self, code: str, expr: str) -> RE2SyntaxError:
        return RE2SyntaxError(code, expr, self.s)

    # --- emission
    def char_class(self, ranges: Ranges) -> str:
        ranges = _clean(ranges)
        if self.target == "python":
            ranges = _intersect(ranges, _negate((_SURROGATES,)))
            if self.uses_tables:
                ranges = _intersect(ranges, _certain())
        self.uses_tables = False
        if not ranges:
            # matches nothing (Hypothesis cannot draw an optional "(?!)")
            return "[^\\x00-\\x{10ffff}]" if self.target == "re2" else "[^\\x00-\\U0010ffff]"
        listed = _clean((*ranges, _SURROGATES)) if self.target == "python" else ranges
        size = sum(hi - lo + 1 for lo, hi in listed)
        negate = size > (MAX_RUNE + 1) // 2  # Hypothesis lists a class's characters:
        if negate:  # the complement is the shorter list
            listed = _negate(listed)
            if not listed:
                return "(?s:.)"
        return ("[^" if negate else "[") + "".join(
            self.char(lo) if lo == hi else f"{self.char(lo)}-{self.char(hi)}"
            for lo, hi in (listed if negate else ranges)) + "]"

    def char(self, c: int) -> str:
        if self.target == "re2":
            return f"\\x{{{c:x}}}"
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"

    def literal(self, c: int, flags: frozenset[str]) -> _Piece:
        if "i" in flags:
            return _Piece(self.char_class(_fold(((c, c),))))
        if self.target == "python" and _SURROGATES[0] <= c <= _SURROGATES[1]:
            return _Piece("[^\\x00-\\U0010ffff]")
        return _Piece(self.char(c))

    def group_class(self, ranges: Ranges, sign: int, flags: frozenset[str]) -> Ranges:
        """Go's ``appendGroup``: fold first (under ``i``), then negate."""
        if "i" in flags:
            ranges = _fold(ranges)
        return _negate(ranges) if sign < 0 else ranges

    # --- the parse loop (parse.go ``parse``)
    def parse(self) -> str:
        s = self.s
        flags: frozenset[str] = frozenset()
        stack = [_Frame(flags)]
        last_repeat: int | None = None
        while self.pos < len(s):
            start = self.pos
            c = s[start]
            repeat: int | None = None
            cur = stack[-1].alternatives[-1]
            if c == "(":
                if s.startswith("(?", start):
                    new_flags, opens = self.perl_flags(flags)
                    if opens:
                        stack.append(_Frame(flags))
                    flags = new_flags
                else:
                    stack.append(_Frame(flags))
                    self.pos += 1
            elif c == "|":
                stack[-1].alternatives.append([])
                self.pos += 1
            elif c == ")":
                if len(stack) < 2:
                    raise self.error("unexpected )", s)
                frame = stack.pop()
                flags = frame.flags
                stack[-1].alternatives[-1].append(self.group(frame))
                self.pos += 1
            elif c == "^":
                cur.append(_Piece("(?m:^)" if "m" in flags else "\\A"))
                self.pos += 1
            elif c == "$":
                end = "\\Z" if self.target == "python" else "\\z"
                cur.append(_Piece("(?m:$)" if "m" in flags else end))
                self.pos += 1
            elif c == ".":
                dot = ((0, MAX_RUNE),) if "s" in flags else ((0, 9), (11, MAX_RUNE))
                cur.append(_Piece(self.char_class(dot)))
                self.pos += 1
            elif c == "[":
                cur.append(_Piece(self.char_class(self.parse_class(flags))))
            elif c in "*+?":
                self.pos += 1
                lo, hi = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[c]
                self.repeat(cur, flags, start, lo=lo, hi=hi, last_repeat=last_repeat,
                            counted=False)
                repeat = start
            elif c == "{":
                parsed = self.parse_repeat(start)
                if parsed is None:
                    cur.append(self.literal(ord("{"), flags))
                    self.pos += 1
                else:
                    lo, hi, after = parsed
                    if lo < 0 or lo > 1000 or hi > 1000 or (hi >= 0 and lo > hi):
                        raise self.error("invalid repeat count", s[start:after])
                    self.pos = after
                    self.repeat(cur, flags, start, lo=lo, hi=hi, last_repeat=last_repeat,
                                counted=True)
                    repeat = start
            elif c == "\\":
                cur.extend(self.backslash(flags))
            else:
                cur.append(self.literal(ord(c), flags))
                self.pos += 1
            last_repeat = repeat
        if len(stack) != 1:
            raise self.error("missing closing )", s)
        return self.group(stack[0]).text

    def group(self, frame: _Frame) -> _Piece:
        alts = ["".join(p.text for p in alt) for alt in frame.alternatives]
        repeats = tuple(r for alt in frame.alternatives for p in alt for r in p.repeats)
        return _Piece("(?:" + "|".join(alts) + ")", repeats=repeats)

    def repeat(self, cur: list[_Piece], flags: frozenset[str], start: int, *, lo: int,
               hi: int, last_repeat: int | None, counted: bool) -> None:
        lazy = "U" in flags
        if self.s.startswith("?", self.pos):
            self.pos += 1
            lazy = not lazy
        if last_repeat is not None:
            raise self.error("invalid nested repetition operator", self.s[last_repeat:self.pos])
        if not cur or cur[-1].pseudo:
            raise self.error("missing argument to repetition operator", self.s[start:self.pos])
        sub = cur.pop()
        op = {(0, -1): "*", (1, -1): "+", (0, 1): "?"}.get((lo, hi)) if not counted else None
        if op is None:
            op = f"{{{lo}}}" if lo == hi else f"{{{lo},}}" if hi < 0 else f"{{{lo},{hi}}}"
        repeats = sub.repeats
        if counted:
            repeats = ((hi if hi >= 0 else lo, sub.repeats),)
            if (lo >= 2 or hi >= 2) and not _repeat_valid(repeats, 1000):
                raise self.error("invalid repeat count", self.s[start:self.pos])
        cur.append(_Piece(f"(?:{sub.text}){op}{'?' if lazy else ''}", repeats=repeats))

    def parse_int(self, i: int) -> tuple[int, int] | None:
        s = self.s
        if i >= len(s) or not "0" <= s[i] <= "9":
            return None
        if i + 1 < len(s) and s[i] == "0" and "0" <= s[i + 1] <= "9":
            return None  # no leading zeros
        j = i
        while j < len(s) and "0" <= s[j] <= "9":
            j += 1
        digits = s[i:j]
        return (-1 if len(digits) > 8 else int(digits)), j

    def parse_repeat(self, i: int) -> tuple[int, int, int] | None:
        """parse.go ``parseRepeat``: (min, max (-1: none), end) or None (a literal ``{``)."""
        s = self.s
        first = self.parse_int(i + 1)
        if first is None:
            return None
        lo, j = first
        if j >= len(s):
            return None
        if s[j] != ",":
            hi = lo
        else:
            j += 1
            if j >= len(s):
                return None
            if s[j] == "}":
                hi = -1
            else:
                second = self.parse_int(j)
                if second is None:
                    return None
                hi, j = second
                if hi < 0:
                    lo = -1
        if j >= len(s) or s[j] != "}":
            return None
        return lo, hi, j + 1

    def perl_flags(self, flags: frozenset[str]) -> tuple[frozenset[str], bool]:
        """parse.go ``parsePerlFlags``: (new flags, whether a group opens)."""
        s, start = self.s, self.pos
        t = s[start:]
        with_p = len(t) > 4 and t[2] == "P" and t[3] == "<"
        if with_p or (len(t) > 3 and t[2] == "<"):
            end = t.find(">")
            if end < 0:
                raise self.error("invalid named capture", t)
            name = t[4 if with_p else 3:end]
            if not name or not all(ch == "_" or (ch.isascii() and ch.isalnum()) for ch in name):
                raise self.error("invalid named capture", t[:end + 1])
            self.pos = start + end + 1
            return flags, True
        i = start + 2
        new = set(flags)
        sign, saw = 1, False
        while i < len(s):
            c = s[i]
            i += 1
            if c in "imsU":
                if sign > 0:
                    new.add(c)
                else:
                    new.discard(c)
                saw = True
            elif c == "-":
                if sign < 0:
                    break
                sign, saw = -1, False
            elif c in ":)":
                if sign < 0 and not saw:
                    break
                self.pos = i
                return frozenset(new), c == ":"
            else:
                break
        raise self.error("invalid or unsupported Perl syntax", s[start:i])

    def backslash(self, flags: frozenset[str]) -> list[_Piece]:
        s, i = self.s, self.pos
        nxt = s[i + 1] if i + 1 < len(s) else ""
        simple = {"A": "\\A", "z": "\\Z" if self.target == "python" else "\\z",
                  "b": _PY_WORD_BOUNDARY if self.target == "python" else "\\b",
                  "B": _PY_NOT_WORD_BOUNDARY if self.target == "python" else "\\B"}
        if nxt in simple:
            self.pos += 2
            return [_Piece(simple[nxt])]
        if nxt == "C":
            raise self.error("invalid escape sequence", "\\C")
        if nxt == "Q":
            end = s.find("\\E", i + 2)
            text = s[i + 2:] if end < 0 else s[i + 2:end]
            self.pos = len(s) if end < 0 else end + 2
            return [self.literal(ord(ch), flags) for ch in text]
        ranges = self.class_escape(flags)
        if ranges is not None:
            return [_Piece(self.char_class(ranges))]
        return [self.literal(self.escape(), flags)]

    def class_escape(self, flags: frozenset[str]) -> Ranges | None:
        """``\\p``/``\\P`` Unicode classes and Perl classes at ``pos``, or None."""
        s, i = self.s, self.pos
        nxt = s[i + 1] if i + 1 < len(s) else ""
        if nxt in ("p", "P"):
            return self.unicode_class(flags)
        if nxt.lower() in _PERL:
            self.pos += 2
            return self.group_class(_PERL[nxt.lower()], -1 if nxt.isupper() else 1, flags)
        return None

    def unicode_class(self, flags: frozenset[str]) -> Ranges:
        """parse.go ``parseUnicodeClass``."""
        s, i = self.s, self.pos
        sign = -1 if s[i + 1] == "P" else 1
        if i + 2 < len(s) and s[i + 2] == "{":
            end = s.find("}", i)
            if end < 0:
                raise self.error("invalid character class range", s[i:])
            seq, name, after = s[i:end + 1], s[i + 3:end], end + 1
        else:
            after = min(i + 3, len(s))
            seq, name = s[i:after], s[i + 2:after]
        if name.startswith("^"):
            sign, name = -sign, name[1:]
        found = _unicode_table(name) if name else None
        if found is None:
            raise self.error("invalid character class range", seq)
        table_name, table_sign = found
        sign *= table_sign
        if table_name == "ASCII":
            table: Ranges = ((0, 0x7F),)
        else:
            table = _table(table_name)
            self.uses_tables = True
        if "i" in flags:
            table = _fold(table)
        self.pos = after
        return _negate(table) if sign < 0 else table

    def escape(self) -> int:
        """parse.go ``parseEscape``: the code point of a single-character escape."""
        s, i = self.s, self.pos
        if i + 1 >= len(s):
            raise self.error("trailing backslash at end of expression", "")
        c = s[i + 1]
        j = i + 2
        if c.isascii() and not c.isalnum():
            self.pos = j
            return ord(c)
        if c in "01234567":
            if c != "0" and (j >= len(s) or s[j] not in "01234567"):
                raise self.error("invalid escape sequence", s[i:j])
            value = int(c)
            for _ in range(2):
                if j < len(s) and s[j] in "01234567":
                    value = value * 8 + int(s[j])
                    j += 1
            self.pos = j
            return value
        if c == "x" and j < len(s):
            if s[j] == "{":
                k, value, digits = j + 1, 0, 0
                while k < len(s) and s[k] != "}":
                    if s[k] not in "0123456789abcdefABCDEF":
                        raise self.error("invalid escape sequence", s[i:k + 1])
                    value = value * 16 + int(s[k], 16)
                    digits += 1
                    k += 1
                    if value > MAX_RUNE:
                        raise self.error("invalid escape sequence", s[i:k])
                if k >= len(s) or digits == 0:
                    raise self.error("invalid escape sequence", s[i:k + 1 if k < len(s) else k])
                self.pos = k + 1
                return value
            two = s[j:j + 2]
            if len(two) == 2 and all(ch in "0123456789abcdefABCDEF" for ch in two):
                self.pos = j + 2
                return int(two, 16)
            raise self.error("invalid escape sequence", s[i:min(j + 2, len(s))])
        controls = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
        if c in controls:
            self.pos = j
            return controls[c]
        raise self.error("invalid escape sequence", s[i:j])

    def parse_class(self, flags: frozenset[str]) -> Ranges:
        """parse.go ``parseClass``: the class at ``pos`` as ranges (negation applied)."""
        s, start = self.s, self.pos
        whole = s[start:]
        i = start + 1
        sign = 1
        if i < len(s) and s[i] == "^":
            sign, i = -1, i + 1
        ranges: list[tuple[int, int]] = []
        first = True
        while i >= len(s) or s[i] != "]" or first:
            first = False
            if i + 2 < len(s) and s[i] == "[" and s[i + 1] == ":":
                close = s.find(":]", i + 2)
                if close >= 0:
                    name = s[i:close + 2]
                    key = name[2:-2]
                    negated = key.startswith("^")
                    if key.lstrip("^") not in _POSIX or key.count("^") > 1 or (
                            key.startswith("^^")):
                        raise self.error("invalid character class range", name)
                    ranges.extend(self.group_class(_POSIX[key.lstrip("^")],
                                                   -1 if negated else 1, flags))
                    i = close + 2
                    continue
            if i + 1 < len(s) and s[i] == "\\":
                self.pos = i
                found = self.class_escape(flags)
                if found is not None:
                    ranges.extend(found)
                    i = self.pos
                    continue
            rng_start = i
            lo, i = self.class_char(i, whole)
            hi = lo
            if i + 1 < len(s) and s[i] == "-" and s[i + 1] != "]":
                hi, i = self.class_char(i + 1, whole)
                if hi < lo:
                    raise self.error("invalid character class range", s[rng_start:i])
            ranges.extend(_fold(((lo, hi),)) if "i" in flags else ((lo, hi),))
        self.pos = i + 1
        cleaned = _clean(ranges)
        return _negate(cleaned) if sign < 0 else cleaned

    def class_char(self, i: int, whole: str) -> tuple[int, int]:
        if i >= len(self.s):
            raise self.error("missing closing ]", whole)
        if self.s[i] == "\\":
            self.pos = i
            value = self.escape()
            return value, self.pos
        return ord(self.s[i]), i + 1


# ------------------------------------------------------------------ API


@lru_cache(maxsize=2048)
def _translate(pattern: str, target: Target) -> str | RE2SyntaxError:
    try:
        return _Parser(pattern, target).parse()
    except RE2SyntaxError as exc:
        return exc


def translate(pattern: str, target: Target = "python") -> str:
    """Return a regular expression for ``target`` (``"python"``: Python's ``re``;
    ``"re2"``: google-re2) that matches what Go's ``regexp`` matches with ``pattern``.

    Raises:
        RE2SyntaxError: Go refuses the pattern; the message is Go's.
    """
    found = _translate(pattern, target)
    if isinstance(found, RE2SyntaxError):
        raise RE2SyntaxError(found.code, found.expr, pattern)
    return found


def go_error(pattern: str) -> str | None:
    """Go's ``regexp.Compile`` error text for ``pattern``, or None if Go accepts it."""
    found = _translate(pattern, "re2")
    return str(found) if isinstance(found, RE2SyntaxError) else None


@lru_cache(maxsize=1024)
def compile_python(pattern: str) -> re.Pattern[str]:
    """``pattern`` (Go RE2 syntax) as a Python ``re`` pattern, for ``st.from_regex``: what
    it matches, Go matches (cached).

    Raises:
        RE2SyntaxError: Go refuses the pattern.
    """
    return re.compile(translate(pattern, "python"))


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> Any:
    """``pattern`` (Go RE2 syntax) compiled with google-re2, Go's meaning (cached).

    Raises:
        RE2SyntaxError: Go refuses the pattern.
    """
    return re2.compile(translate(pattern, "re2"), _RE2_OPTIONS)
