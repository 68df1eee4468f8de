"""Text from user code made safe to show: bounded in size, no control characters.

A converter's exception message, its printed output or a diff value can be any size and
hold any character.  Shown raw, a 50 MB message became 104 MB
on stderr and a MemoryError in the report writer, and an ANSI escape sequence made the
JUnit file ill-formed XML, which CI then reads as no result at all.  Everything written
for people or CI therefore goes through :func:`clip` (with a note saying how much was cut
and where the full text is: the counterexample file keeps it all), and through
:func:`printable` (terminals) or :func:`xml_safe` (JUnit).  The limits are documented in
``docs/security.md``.

Before any of that, a message is cut where it is captured (:func:`captured`), in the
process that ran the converter, at :data:`CAPTURE_TEXT_LIMIT`: a 50 MB message was copied
into the error, its traceback, each failure update piped to the parent and each rewrite of
the counterexample file, so every failing example cost seconds and the run answered
SIGTERM late or not at all.  The counterexample file keeps the cut
text, which says how much was dropped.
"""

from __future__ import annotations

import re

__all__ = [
    "CAPTURE_TEXT_LIMIT",
    "MESSAGE_VALUE_LIMIT",
    "REPORT_DIFF_ROWS",
    "REPORT_TEXT_LIMIT",
    "REPORT_VALUE_LIMIT",
    "TERMINAL_TEXT_LIMIT",
    "captured",
    "clip",
    "human_size",
    "printable",
    "xml_safe",
]

#: characters of one exception message or traceback kept where it is captured (what the
#: counterexample file holds at most)
CAPTURE_TEXT_LIMIT = 1_000_000
#: characters a captured text may exceed the limit by (the wording around a cut message)
_CAPTURE_SLACK = 4_000
#: characters of one text (message, traceback, output) shown on the terminal
TERMINAL_TEXT_LIMIT = 8_000
#: characters of one text field in report.json, the JUnit file and the HTML page
REPORT_TEXT_LIMIT = 64_000
#: characters of one JSON value (the object, a diff's old or new value) in a report or an
#: error message; longer values are replaced by their clipped JSON text
REPORT_VALUE_LIMIT = 4_000
#: characters of one JSON value quoted in an error message (a diff's old or new value)
MESSAGE_VALUE_LIMIT = 1_000
#: rows of a diff kept in report.json (the counterexample file keeps every row)
REPORT_DIFF_ROWS = 50

# C0 and C1 controls and DEL, but not tab and newline: what a terminal acts on
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_AND_NEWLINES = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# what XML 1.0 forbids (https://www.w3.org/TR/xml/#charsets): C0 controls but tab, LF and
# CR; lone surrogates; U+FFFE and U+FFFF.  DEL and C1 are allowed but escaped too, as
# they are terminal controls in CI logs.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def human_size(chars: int) -> str:
    """``49.9 MB``, ``12.0 KB`` or ``300 characters`` (one character counted as a byte)."""
    if chars >= 1_000_000:
        return f"{chars / 1_000_000:.1f} MB"
    if chars >= 1_000:
        return f"{chars / 1_000:.1f} KB"
    return f"{chars} characters"


def clip(text: str, limit: int, full: str | None = None) -> str:
    """``text``, or its first ``limit`` characters and a note saying how much more there is
    and where the full text is (``full``, e.g. the counterexample file)."""
    if len(text) <= limit:
        return text
    where = f"; the full text is in {full}" if full else ""
    return f"{text[:limit]}\n... {human_size(len(text) - limit)} more{where}"


def captured(text: str, limit: int = CAPTURE_TEXT_LIMIT) -> str:
    """``text`` as kept where user code's message or traceback is captured: whole, or its
    first ``limit`` characters and a note saying how much was dropped there.  A text up
    to :data:`_CAPTURE_SLACK` over ``limit`` stays whole: it wraps one cut already
    (``convert() raised ValueError: <cut message>``), whose note must survive."""
    if len(text) <= limit + _CAPTURE_SLACK:
        return text
    return (f"{text[:limit]}\n... {human_size(len(text) - limit)} more, cut where it was "
            f"captured (compatfuzz keeps {human_size(limit)} of one message)")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` with control characters shown as ``\\x1b`` etc., so an escape sequence in
    a converter's message or a field name cannot move the cursor, recolour or retitle the
    user's terminal.  Tabs stay, and newlines unless ``newlines=False``."""
    pattern = _CONTROL if newlines else _CONTROL_AND_NEWLINES
    return pattern.sub(_escape, text)


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids (and DEL and C1 controls) written as
    ``\\x1b`` / ``\\udc80``, so the JUnit file is always well-formed."""
    return _NOT_XML.sub(_escape, text)
