"""The user's side of a failure: their frames of a converter's traceback, and what it printed.

A converter that raises used to be reported as one line (``convert() raised IndexError:
list index out of range``) with no file or line.  :func:`user_traceback`
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

__all__ = ["Capture", "describe", "find_user_traceback", "interrupts_are_faults", "our_signal",
           "safe_str",
           "user_traceback"]


def safe_str(exc: BaseException) -> str:
    """``str(exc)``, cut to ``CAPTURE_TEXT_LIMIT`` characters, or what went wrong making
    it: an exception whose ``__str__`` raises must still fail its unit with a message, not
    end it as an error, and a 50 MB message must not be copied into
    every error, traceback and pipe message after it."""
    try:
        text = str(exc)
    except BaseException as inner:  # anything the user's __str__ does
        if our_signal(inner):
            raise
        return f"<its __str__ raised {type(inner).__name__}>"
    return captured(text)


def describe(exc: BaseException) -> str:
    """``ValueError: msg``; ``SystemExit(0)`` and ``KeyboardInterrupt`` say why they count
    as a failure."""
    if isinstance(exc, SystemExit):
        try:
            code = repr(exc.code)
        except BaseException as inner:  # the user's __repr__
            if our_signal(inner):
                raise
            code = "..."
        return (f"SystemExit({code}) (a converter must return the converted object; "
                "exiting, even with status 0, fails the property)")
    text = safe_str(exc)
    named = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if isinstance(exc, KeyboardInterrupt):
        return (f"{named} (raised by the converter, or a SIGINT it sent its own process: "
                "that fails the property; only Ctrl-C or SIGTERM from outside stops the run)")
    return named


#: Set in a worker process (see ``_workers``): Ctrl-C cannot reach it there, so a
#: ``KeyboardInterrupt`` out of a converter is the converter's own doing.
_INTERRUPTS_ARE_FAULTS = [False]


def interrupts_are_faults(value: bool = True) -> None:
    """Treat a converter's ``KeyboardInterrupt`` as its failure from now on.

    Only a process that Ctrl-C cannot reach may do so (a worker in its own process group,
    or ignoring SIGINT).  Everywhere else (the Python API in-process, the pytest plugin) a
    ``KeyboardInterrupt`` may be the user's Ctrl-C and stops the run, as pytest stops a
    session when a test raises one.
    """
    _INTERRUPTS_ARE_FAULTS[0] = value


def our_signal(exc: BaseException) -> bool:
    """Whether ``exc`` is compatfuzz's own stop signal raised into user code (the
    per-example deadline, a stop request, the time budget), never the user's fault."""
    return isinstance(exc, KeyboardInterrupt) and (
        type(exc).__module__.startswith("compatfuzz.")
        or not _INTERRUPTS_ARE_FAULTS[0])


def _library_roots() -> tuple[str, ...]:
    roots = [str(Path(__file__).resolve().parents[2])]  # compatfuzz itself
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
