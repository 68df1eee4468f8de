"""The Go converter as a long-lived process: ConversionReviews as JSON lines.

Requests go to the program's stdin, answers come back on a pipe of their own
(``-reply-fd``), so a converter that prints to stdout cannot corrupt them; the program's
stdout and stderr go to a log file, which is where a fatal Go error (a stack overflow,
``os.Exit``, a concurrent map write: nothing controller-runtime can recover) leaves its
trace.  Reads wait in ``select`` with a short timeout, so the per-example deadline
(``roundtrip._deadline``) interrupts a conversion that never returns; the process is then
killed and the next conversion starts a new one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from compatfuzz.errors import ConverterError
from compatfuzz.golang._build import Driver

__all__ = ["GoCrash", "GoPanic", "GoProcess", "user_frames"]

_POLL = 0.05


class GoPanic(ConverterError):
    """The user's Go code panicked during a conversion (controller-runtime's handler
    recovered it and answered "internal error occurred during conversion")."""


class GoCrash(ConverterError):
    """The converter process died during a conversion (a fatal Go error, ``os.Exit``)."""


_FRAME = re.compile(r"^(?P<func>\S.*)\n\t(?P<file>[^\n]+?):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$",
                    re.M)


def user_frames(stack: str, root: Path, *, limit: int = 8) -> list[str]:
    """The frames of ``stack`` (a Go traceback) in the user's module, innermost first,
    as ``api/v1alpha1/vessel_conversion.go:40 in (*Vessel).ConvertTo``; the runtime's,
    controller-runtime's and compatfuzz's own frames are cut."""
    prefix = f"{root}/"
    # frames below the last panic() are the code that panicked
    start = stack.rfind("\npanic(")
    tail = stack[start:] if start >= 0 else stack
    out = []
    for m in _FRAME.finditer(tail):
        file = m.group("file")
        if not file.startswith(prefix):
            continue
        func = m.group("func").rsplit("(", 1)[0] if m.group("func").endswith(")") else (
            m.group("func"))
        func = func.rsplit("/", 1)[-1]
        func = func.split(".", 1)[1] if "." in func else func
        out.append(f"{file[len(prefix):]}:{m.group('line')} in {func}")
        if len(out) == limit:
            break
    return out


class GoProcess:
    """One running converter program (``driver stdio``), started on first use and again
    after a crash or a deadline."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self._proc: subprocess.Popen[bytes] | None = None
        self._reply = -1
        self._buffer = b""
        self._log: Any = None
        self._pid = -1
        self._lock = threading.Lock()

    def _start(self) -> None:
        self.close()
        if not self.driver.binary.is_file():
            # another run rebuilt after an edit and removed this build (``_build._prune``)
            raise GoCrash(f"the Go converter {self.driver.binary} is gone: its module's "
                          "sources changed and another run rebuilt it; run again")
        read, write = os.pipe()
        # kept open for the process's life, read after a crash; closed by close()
        self._log = tempfile.TemporaryFile(prefix="compatfuzz-go-")  # noqa: SIM115
        env = dict(os.environ, GOTRACEBACK="all")
        # each conversion allocates a few decoded copies of the object: collecting less
        # often is ~30% more conversions a second (benchmarks/bench_go_converter.py)
        env.setdefault("GOGC", "400")
        try:
            self._proc = subprocess.Popen(
                [str(self.driver.binary), "stdio", "-reply-fd", str(write)],
                stdin=subprocess.PIPE, stdout=self._log, stderr=self._log,
                pass_fds=(write,), env=env, start_new_session=True)
        finally:
            os.close(write)
        self._reply = read
        self._buffer = b""
        self._pid = os.getpid()

    def close(self) -> None:
        """Stop the program (closing stdin ends it; a stuck one is killed)."""
        proc, self._proc = self._proc, None
        if proc is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
        if self._reply >= 0:
            with contextlib.suppress(OSError):
                os.close(self._reply)
            self._reply = -1
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` of what the program wrote to stdout and stderr."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return "\n".join(self._log.read().decode(errors="replace").splitlines()[-lines:])

    def ask(self, review: dict[str, Any]) -> dict[str, Any]:
        """Send one ConversionReview; the program's reply: ``status``, ``body`` (the
        handler's answer, bytes), and ``panic``/``stack`` when the user's code panicked.

        Raises:
            GoCrash: the program exited before answering.
        """
        with self._lock:
            if self._proc is None or self._pid != os.getpid() or self._proc.poll() is not None:
                self._start()
            assert self._proc is not None and self._proc.stdin is not None
            line = json.dumps(review, separators=(",", ":")).encode() + b"\n"
            try:
                self._proc.stdin.write(line)
                self._proc.stdin.flush()
                answer = self._read_line()
                body = self._read_line() if answer is not None else None
            except BrokenPipeError:
                answer = None
            except BaseException:
                # the example's deadline (or ^C) came during a conversion: the program
                # is mid-call and cannot be trusted; the next ask starts a new one
                self.close()
                raise
            if answer is None or body is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=2)
                code = self._proc.returncode
                tail = self.log_tail()
                self.close()
                raise GoCrash(_crash_message(code, tail, self.driver.root))
            reply: dict[str, Any] = json.loads(answer)
            reply["body"] = body
            return reply

    def _read_line(self) -> bytes | None:
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._reply], [], [], _POLL)
            if not ready:
                if self._proc is not None and self._proc.poll() is not None:
                    ready = [self._reply]  # drain what it wrote before exiting
                else:
                    continue
            chunk = os.read(self._reply, 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line


def _crash_message(code: int | None, tail: str, root: Path) -> str:
    frames = user_frames(tail, root)
    first = next((line for line in tail.splitlines()
                  if line.startswith(("fatal error:", "panic:", "runtime:"))), "")
    where = "".join(f"\n  at {f}" for f in frames)
    return (f"the Go converter process exited (status {code}) during the conversion"
            + (f": {first}" if first else "") + where
            + ("" if frames else "\n  its last output:\n    "
               + "\n    ".join(tail.splitlines()[-10:])))
