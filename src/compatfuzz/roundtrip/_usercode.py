"""The user's side of a failure: their frames of a converter's traceback, and what it printed.

A converter that raises used to be reported as one line (``convert() raised IndexError:
list index out of range``) with no file or line (issue 10, item 1).  :func:`user_traceback`
keeps only the frames of the user's own code (not compatfuzz's, Hypothesis's or pytest's),
rendered as Python renders a traceback, and stores it as a string so it survives the trip
from a worker process into the report, the counterexample file and ``--replay``.
:class:`Capture` collects what a converter writes to stdout and stderr during one example,
so the failing example's output is shown with its failure, as pytest shows a test's, instead
of every passing example's output scrolling past.
"""

from __future__ import annotations

import contextlib
import io
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from compatfuzz.roundtrip._text import CAPTURE_TEXT_LIMIT, captured

__all__ = ["Capture", "find_user_traceback", "user_traceback"]


def _library_roots() -> tuple[str, ...]:
    roots = [str(Path(__file__).resolve().parents[1])]  # compatfuzz itself
    for name in ("hypothesis", "_pytest", "pluggy", "pytest"):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            roots.append(str(Path(file).resolve().parent))
    return tuple(root.rstrip("/\\") + ("/" if "/" in root else "\\") for root in roots)


def _is_library(filename: str, roots: tuple[str, ...]) -> bool:
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return resolved.startswith(roots)


def user_traceback(exc: BaseException, *, full: bool = False) -> str:
    """Return ``exc``'s traceback with only the user's frames (all frames if ``full``).

    The result reads like Python's own (``File "conv.py", line 5, in convert``), ending in
    the exception line; ``""`` when no frame of the user's is left (the error came from
    compatfuzz itself).
    """
    frames = traceback.extract_tb(exc.__traceback__)
    if not full:
        roots = _library_roots()
        frames = traceback.StackSummary.from_list(
            [f for f in frames if not _is_library(f.filename, roots)])
        if not frames:
            return ""
    head = "Traceback (most recent call last" + ("" if full else "; your code only") + "):\n"
    return captured(head + "".join(traceback.format_list(frames)) + _last_line(exc))


def _last_line(exc: BaseException) -> str:
    """``ValueError: message``, as Python ends a traceback, with a message too long to
    keep cut before it is copied (``safe_str``): formatted whole, a 50 MB message was
    copied into every traceback piped to the parent."""
    from compatfuzz.roundtrip._converters import safe_str

    try:
        long = len(str(exc)) > CAPTURE_TEXT_LIMIT
    except Exception:  # the user's __str__ raised: Python's formatting says so
        long = False
    if not long:
        return "".join(traceback.format_exception_only(type(exc), exc))
    name = type(exc).__qualname__
    module = type(exc).__module__
    if module not in ("builtins", "__main__"):
        name = f"{module}.{name}"
    return f"{name}: {safe_str(exc)}\n"


def find_user_traceback(exc: BaseException | None) -> str:
    """The ``user_traceback`` attached to ``exc`` or to an exception in its chain."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = getattr(exc, "user_traceback", "")
        if text:
            return str(text)
        exc = exc.__cause__ or exc.__context__
    return ""


#: At most this much of one example's output is kept (a chatty converter must not eat memory).
LIMIT = 64 * 1024


class Capture(contextlib.AbstractContextManager["Capture"]):
    """Collect ``sys.stdout`` and ``sys.stderr`` writes inside the ``with`` block.

    ``text`` holds both streams interleaved in the order written, each stderr line marked
    ``[stderr]``, so the output reads as it would have on a terminal.
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.at_line_start = True
        self._saved: tuple[Any, Any] | None = None

    @property
    def text(self) -> str:
        text = "".join(self.parts)
        return text + "\n... (output cut)" if self.size > LIMIT else text

    def add(self, text: str, mark: str) -> None:
        if self.size > LIMIT:
            return
        out = []
        for line in text.splitlines(keepends=True):
            if self.at_line_start and mark:
                out.append(mark)
            out.append(line)
            self.at_line_start = line.endswith("\n")
        chunk = "".join(out)
        self.size += len(chunk)
        self.parts.append(chunk[: max(0, LIMIT - self.size + len(chunk))])

    def __enter__(self) -> Capture:
        self._saved = (sys.stdout, sys.stderr)
        sys.stdout = _Stream(self, "")
        sys.stderr = _Stream(self, "[stderr] ")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self._saved is not None
        sys.stdout, sys.stderr = self._saved


class _Stream(io.TextIOBase):
    """A text stream that hands what is written to its :class:`Capture`."""

    encoding = "utf-8"  # some code reads sys.stdout.encoding before printing

    def __init__(self, capture: Capture, mark: str) -> None:
        super().__init__()
        self._capture = capture
        self._mark = mark

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        self._capture.add(text, self._mark)
        return len(text)
