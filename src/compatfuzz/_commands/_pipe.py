"""stdout that goes quiet when its reader has gone (``compatfuzz sample | head -1``).

Python raises ``BrokenPipeError`` on the next write once the reader of a pipe exits, and
again when the interpreter flushes stdout at exit ("Exception ignored ..."). Python's own
advice (the note on SIGPIPE in the ``signal`` module's docs) is to point the descriptor at
``os.devnull``; doing that inside a wrapper, rather than dying of SIGPIPE, lets a command
finish what it must (``diff``'s exit code, ``fuzz``'s report and counterexample files)
while producers such as ``sample`` ask :func:`reader_gone` and stop early.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["PipeSafeStdout", "reader_gone"]


class PipeSafeStdout:
    """Wraps a text stream; after the first ``BrokenPipeError`` every write is dropped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self.gone = True
        try:  # the interpreter's final flush of the real stdout must not raise either
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def reader_gone() -> bool:
    """Whether stdout's reader has gone (a producer should stop)."""
    out = sys.stdout
    return isinstance(out, PipeSafeStdout) and out.gone
