"""Talk to the compiled upstream oracle and compare its answers with compatfuzz's.

The oracle (``apiserver/main.go``, built by ``build.py``) is one long-lived process fed
JSON lines; batches are pipelined through it, so tens of thousands of cases take
seconds. Values are compared as the API server would put them on the wire: Go writes a
float64 holding an integer below 1e21 as an integer, so ``1.0`` and ``1`` are the same
answer, while ``true`` and ``1`` are not.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

_INT64 = (-(2**63), 2**63 - 1)
_SURROGATE = re.compile("[\ud800-\udfff]")


def server_value(x: Any) -> Any:
    """``x`` as the API server holds it after decoding its JSON (util/json).

    Integers beyond int64 become float64 and lone surrogates U+FFFD, so both sides are
    judged on the value the server really sees.
    """
    if isinstance(x, dict):
        return {server_value(k): server_value(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [server_value(v) for v in x]
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int):
        return x if _INT64[0] <= x <= _INT64[1] else float(x)
    if isinstance(x, str):
        return _SURROGATE.sub("\ufffd", x)
    return x


def wire(x: Any) -> Any:
    """``x`` as Go's encoding/json writes it and Python reads it back."""
    if isinstance(x, dict):
        return {k: wire(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [wire(v) for v in x]
    if isinstance(x, float) and math.isfinite(x) and x.is_integer() and abs(x) < 1e21:
        # Go prints the shortest round-tripping digits, padded with zeros (6.4e+16 is
        # 64000000000000000, not the float's exact binary value)
        return int(Decimal(repr(x)))
    return x


def same(a: Any, b: Any) -> bool:
    """Structural equality that tells ``True`` from ``1`` (after :func:`wire`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    return bool(a == b)


def dumps(x: Any) -> str:
    # UTF-8 as clients send it: only what JSON must escape is escaped
    return json.dumps(x, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False)


def schema_key(schema: Any) -> str:
    return hashlib.sha1(dumps(schema).encode()).hexdigest()[:16]


class OracleError(RuntimeError):
    """The oracle process died or answered out of protocol."""


class Oracle:
    """One running oracle; :meth:`ask` pipelines a batch and returns the answers in order."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self.proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.schemas: dict[str, dict[str, Any]] = {}  # key -> the schema op's answer

    def close(self) -> None:
        """End the process (it exits on end of input) and release its pipes."""
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def ask(self, requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        payload = "".join(dumps(r) + "\n" for r in requests).encode()
        failure: list[BaseException] = []

        def write() -> None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(payload)
                self.proc.stdin.flush()
            except BaseException as exc:  # reported by the reader below
                failure.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers = []
        for _ in requests:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise OracleError(f"the oracle exited: {err[-2000:]} {failure}")
            answers.append(json.loads(line))
        writer.join()
        return answers

    def schema(self, schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Register ``schema`` (once); returns its key and the oracle's verdict on it."""
        key = schema_key(schema)
        if key not in self.schemas:
            self.schemas[key] = self.ask([{"op": "schema", "key": key, "schema": schema}])[0]
        return key, self.schemas[key]

    def schemas_batch(self, schemas: Iterable[dict[str, Any]]) -> None:
        todo = {schema_key(s): s for s in schemas}
        todo = {k: s for k, s in todo.items() if k not in self.schemas}
        answers = self.ask([{"op": "schema", "key": k, "schema": s} for k, s in todo.items()])
        self.schemas.update(zip(todo, answers, strict=True))


# --- one case: an op on (schema, object), judged by both sides ----------------------------

@dataclass
class Case:
    """``op`` applied to ``obj`` under ``schema`` (the raw openAPIV3Schema)."""

    op: str
    schema: dict[str, Any]
    obj: Any
    root: bool = True
    drop_invalid: bool = False
    origin: str = ""

    def request(self, key: str) -> dict[str, Any]:
        return {"op": self.op, "key": key, "object": self.obj, "root": self.root,
                "drop_invalid": self.drop_invalid}

    def label(self) -> str:
        if self.op == "prune":
            return f"prune(root={self.root})"
        if self.op == "coerce":
            return f"coerce(root={self.root}, drop_invalid={self.drop_invalid})"
        return self.op


@dataclass
class Verdict:
    """What one side said: an object (and unknown-field paths) or a rejection."""

    obj: Any = None
    paths: list[str] | None = None
    error: str | None = None
    crash: str | None = None


@dataclass
class Disagreement:
    case: Case
    ours: Verdict
    upstream: Verdict
    why: str
    schema_verdict: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        lines = [
            f"{self.case.label()} [{self.case.origin}]: {self.why}",
            f"  schema:   {dumps(self.case.schema)}",
            f"  object:   {dumps(self.case.obj)}",
            f"  upstream: {_show(self.upstream)}",
            f"  ours:     {_show(self.ours)}",
        ]
        notes = self.schema_verdict.get("structural_errors")
        if notes:
            lines.append(f"  (the API server would refuse this schema in a CRD: {notes[:2]})")
        if self.schema_verdict.get("defaults_pruned"):
            lines.append("  (a default of this schema carries pruned fields: CRD validation "
                         "would refuse it)")
        return "\n".join(lines)


def _show(v: Verdict) -> str:
    if v.crash:
        return f"CRASH {v.crash}"
    if v.error is not None:
        return f"rejected: {v.error}"
    out = dumps(v.obj)
    return out + (f"  paths={v.paths}" if v.paths else "")


def upstream_verdict(answer: dict[str, Any]) -> Verdict:
    if answer.get("panic"):
        return Verdict(crash=answer["panic"].splitlines()[0])
    if answer.get("error"):
        return Verdict(error=answer["error"])
    return Verdict(obj=answer.get("object"), paths=answer.get("paths", []))


def our_verdict(case: Case, schema_obj: Any, api: Any, rejected: type[Exception]) -> Verdict:
    """Run compatfuzz's model of ``case.op``; ``schema_obj`` is what it is given."""
    try:
        if case.op == "prune":
            obj, paths = api.prune(case.obj, schema_obj, root=case.root)
            return Verdict(obj=wire(obj), paths=list(paths))
        if case.op == "prune_nulls":
            return Verdict(obj=wire(api.prune_nulls(case.obj, schema_obj)))
        if case.op == "default":
            return Verdict(obj=wire(api.default(case.obj, schema_obj)))
        if case.op == "coerce":
            return Verdict(obj=wire(api.coerce(case.obj, schema_obj, root=case.root,
                                               drop_invalid=case.drop_invalid)))
        if case.op == "decode":
            return Verdict(obj=wire(api.decode(case.obj, schema_obj)))
    except rejected as exc:
        return Verdict(error=str(exc))
    except Exception as exc:
        return Verdict(crash=f"{type(exc).__name__}: {exc}")
    raise ValueError(f"unknown op {case.op}")


def compare(case: Case, ours: Verdict, upstream: Verdict) -> str | None:
    """Why the two verdicts differ, or None when they agree."""
    if upstream.crash:
        return f"the oracle panicked: {upstream.crash}"
    if ours.crash:
        return f"compatfuzz crashed: {ours.crash}"
    if (ours.error is None) != (upstream.error is None):
        return ("upstream rejects, compatfuzz accepts" if upstream.error is not None
                else "compatfuzz rejects, upstream accepts")
    if upstream.error is not None:
        return None
    if not same(ours.obj, upstream.obj):
        return "different objects"
    if case.op == "prune" and ours.paths != (upstream.paths or []):
        return "different unknown-field paths"
    return None


def _diff_paths(a: Any, b: Any, path: str, out: set[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            if k not in a or k not in b:
                out.add(f"{path}.{k}")
            else:
                _diff_paths(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for x, y in zip(a, b, strict=True):
            _diff_paths(x, y, path + "[]", out)
    elif not same(a, b):
        out.add(path or ".")


_NOISE = re.compile(r"\{.*\}|'[^']*'|\"[^\"]*\"|\S*\d\S*|^\S+ is of the type")


def signature(why: str, ours: Verdict, upstream: Verdict) -> str:
    """A short name for the cause of a disagreement, to group and minimise by."""
    if why == "different objects":
        paths: set[str] = set()
        _diff_paths(ours.obj, upstream.obj, "", paths)
        tails = sorted({".".join(p.split(".")[-2:]) for p in paths})
        return f"{why} at {', '.join(tails[:3])}"
    if ours.error is not None or upstream.error is not None:
        text = (ours.error if ours.error is not None else upstream.error) or ""
        if " accessor error: " in text:  # unstructured.NestedString: the value varies
            return f"{why}: {text.split(' accessor error')[0]} is not a string"
        parts = text.split(": ")
        return f"{why}: {parts[0]}: {_NOISE.sub('_', parts[-1])[:50]}"
    return why


# --- minimisation ---------------------------------------------------------------------------

def _smaller(x: Any) -> Iterator[Any]:
    """Candidates one step simpler than the JSON value ``x``."""
    if isinstance(x, dict):
        for k in list(x):
            yield {kk: v for kk, v in x.items() if kk != k}
        for k, v in x.items():
            for s in _smaller(v):
                yield {**x, k: s}
    elif isinstance(x, list):
        for i in range(len(x)):
            yield x[:i] + x[i + 1:]
        for i, v in enumerate(x):
            for s in _smaller(v):
                yield [*x[:i], s, *x[i + 1:]]
    elif isinstance(x, str) and x:
        yield ""
        if len(x) > 1:
            yield x[: len(x) // 2]
    elif isinstance(x, bool):
        pass
    elif isinstance(x, int | float) and x not in (0, 1):
        yield 0
        yield 1
        if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
            yield int(x)


def shrink(case: Case, still_fails: Callable[[Case], bool], budget: int = 1500) -> Case:
    """Greedy delta-debugging of the object, then the schema, while ``still_fails``."""
    best = case
    improved = True
    while improved and budget > 0:
        improved = False
        for part in ("obj", "schema"):
            value = getattr(best, part)
            for candidate in _smaller(value):
                budget -= 1
                if budget <= 0:
                    break
                trial = Case(**{**best.__dict__, part: candidate})
                if part == "schema" and not isinstance(candidate, dict):
                    continue
                try:
                    ok = still_fails(trial)
                except Exception:
                    ok = False
                if ok:
                    best, improved = trial, True
                    break
            if improved:
                break
    return best
