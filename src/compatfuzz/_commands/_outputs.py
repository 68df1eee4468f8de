"""Output files a command is about to write, checked before it spends any time:
``fuzz --report/--junit/--html`` and ``report merge``'s.  A report written over
an input destroys it, and a folder given as a file, or one that cannot be written, used to
end in a traceback after the run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ours", "output_file_problem", "path_suffix", "writable_folder"]


def writable_folder(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (made if missing), or None.

    Probes the nearest folder that exists with a real temporary file, as root too (where
    permission bits stop nothing but a read-only mount or ``/proc`` still does); creates
    nothing that stays.
    """
    import tempfile

    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    try:
        fd, probe = tempfile.mkstemp(prefix=".compatfuzz-probe.", dir=existing)
    except OSError as exc:
        return f"cannot create files in {existing} ({exc.strerror or exc})"
    os.close(fd)
    os.unlink(probe)
    return None


def ours(path: Path) -> bool:
    """Whether ``path`` looks like a file compatfuzz wrote (a report, JUnit or HTML page
    of an earlier run, which a run may overwrite): it names compatfuzz near its start."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"compatfuzz" in head


def path_suffix(flag: str) -> str:
    return {"--report": ".json", "--junit": ".xml", "--html": ".html"}[flag]



def output_file_problem(flag: str, path: Path, *, seen: dict[Path, str],
                        inputs: Mapping[Path, str], example: str) -> str | None:
    """Why ``flag path`` cannot be written, with the fix, or None; records it in ``seen``.

    ``inputs`` maps each resolved input path to what writing over it would destroy (said
    in the message); ``example`` is the file name the fix suggests inside a folder.
    """
    where = path.resolve()
    if where.exists() and not where.is_dir() and not where.is_file():
        # a device or FIFO (/dev/null, /dev/stdout): the atomic rename would replace
        # it with a regular file, as root the machine's own /dev/null
        return (f"{flag} {path} is not a regular file (a device or a pipe); a report "
                f"is written beside it and renamed over it\n  fix: leave {flag} out to "
                "write no such file, or name a regular file")
    if where in inputs:
        return (f"{flag} {path} is {inputs[where]}\n  fix: name another file for {flag}, "
                f"e.g. {flag} {example}{path_suffix(flag)}")
    if where.is_file() and where.stat().st_size and not ours(where):
        return (f"{flag} {path} exists and is not a compatfuzz report (a schema, a "
                f"converter, a document?); writing it would replace it\n  fix: name "
                f"another file for {flag}, or delete this one first if it is yours to "
                "lose")
    if where.is_dir():
        return (f"{flag} {path} is a folder\n  fix: name a file in it, e.g. "
                f"{flag} {path / (example + path_suffix(flag))}")
    if where in seen:
        return (f"{flag} {path} is also the {seen[where]} file; one would overwrite "
                f"the other\n  fix: give {flag} and {seen[where]} different files")
    seen[where] = flag
    why = writable_folder(where.parent)
    if why is not None:
        return (f"{flag} {path} cannot be written: {why}\n  fix: name a file in a "
                "folder you can write")
    return None
