"""Paths as the benchmarks record them: relative to the repository, never absolute.

Why: result files are committed, and a path of the machine that ran a benchmark
(a scratch folder, the checkout's own folder) means nothing in a user's clone
(``tests/test_repository_paths.py`` refuses them). A path inside the checkout is written
relative to its root, one in the sibling ``shared/`` folder as ``../shared/...``, and any
other only by its name, marked as outside.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = (ROOT.parent / "shared").resolve()  # a symlinked ../shared too
OUTSIDE = "<outside the checkout>"


def rel(path: str | os.PathLike[str]) -> str:
    """``path`` as recorded: ``src/x``, ``../shared/x``, or ``<outside the checkout>/NAME``."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    p = p.resolve()
    if p.is_relative_to(ROOT):
        return p.relative_to(ROOT).as_posix() or "."
    if p.is_relative_to(SHARED):
        return "../shared/" + p.relative_to(SHARED).as_posix()
    return f"{OUTSIDE}/{p.name}"


def rel_args(args: Sequence[str]) -> list[str]:
    """Command-line arguments with every absolute path (also ``--opt=/path``) made
    :func:`rel`."""
    out = []
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key.startswith("-") and value.startswith("/"):
            out.append(f"{key}={rel(value)}")
        else:
            out.append(rel(arg) if arg.startswith("/") else arg)
    return out
