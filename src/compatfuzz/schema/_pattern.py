"""``pattern`` checks that cannot backtrack catastrophically.

``jsonschema`` checks ``pattern`` and ``patternProperties`` with Python's backtracking
``re``: one ``valid`` example against ``^(a+)+$`` took ~130 s, and ``compatfuzz diff``'s
witness search never finished. Patterns are checked here with RE2
(``google-re2``, already installed for CEL), whose run time is linear in the input. RE2 is
also what Kubernetes itself uses (Go's ``regexp``), and like ECMA-262 its ``$`` does not
match before a trailing newline, so the verdicts are the API server's.

A pattern RE2 cannot compile (lookaround, backreferences, ``\\Z``, ``\\uXXXX``) falls back
to ``re`` under a CPU-time bound (``SIGPROF``, main thread only: elsewhere no signal can be
delivered and ``re`` runs unbounded). A search that exceeds it raises
:class:`~compatfuzz.errors.UnsupportedSchema` naming the pattern, and the pattern stays
refused for the rest of the process, so a shrinker cannot pay the bound again and again.

Kubernetes schemas (``kubernetes=True``) are read in Go's RE2 dialect instead
(``_re2``: Go's ``regexp/syntax/parse.go`` verdict and meaning, ``(?i)`` anywhere,
``\\p{greek}``, ...), matched by google-re2 only: a pattern Go refuses raises
:class:`PatternRefused` with Go's error text, as the API server refuses the CRD.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterator, Mapping
from functools import lru_cache, partial
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs

from compatfuzz.errors import UnsupportedSchema
from compatfuzz.schema._re2 import RE2SyntaxError, compile_re2

__all__ = ["PATTERN_CPU_LIMIT", "PatternRefused", "PatternUnsupported", "locate_pattern",
           "pattern_keywords", "search"]

#: CPU seconds one backtracking (non-RE2) search may take before the pattern is refused.
PATTERN_CPU_LIMIT = 1.0

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 logs every pattern it rejects to stderr otherwise
_REFUSED: dict[str, str] = {}


class _PatternTimeout(Exception):
    pass


class PatternUnsupported(UnsupportedSchema):
    """A pattern only a backtracking engine can run, and that backtracked too long.

    ``setup_error``: retrying other examples cannot help, the runner stops the unit.
    """

    setup_error = True

    def __init__(self, message: str, pattern: str) -> None:
        super().__init__(message)
        self.pattern = pattern


class PatternRefused(UnsupportedSchema):
    """A Kubernetes pattern Go's ``regexp`` refuses (the API server refuses the CRD).

    ``setup_error``: no example can help, the runner stops the unit.
    """

    setup_error = True

    def __init__(self, pattern: str, go_error: str) -> None:
        super().__init__(
            f"pattern {pattern!r} is not Go RE2 syntax, which Kubernetes reads it as, and the "
            f"API server refuses the CRD: {go_error}\n  fix: rewrite it in RE2 syntax (no "
            "lookaround, no backreferences, \\z instead of \\Z)")
        self.pattern = pattern
        self.go_error = go_error


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> tuple[bool, Any]:
    """(is RE2, compiled pattern); ``re.error`` if neither engine accepts it."""
    try:
        return True, re2.compile(pattern, _OPTIONS)
    except Exception:  # re2.error: lookaround, backreference, Python-only syntax
        return False, re.compile(pattern)


def _refuse(pattern: str, length: int) -> PatternUnsupported:
    why = _REFUSED.setdefault(pattern, (
        f"pattern {pattern!r} needs a backtracking regex engine (RE2, the engine "
        "Kubernetes uses, rejects it) and took more than "
        f"{PATTERN_CPU_LIMIT:g}s of CPU on a {length}-character string: it backtracks "
        "catastrophically, so compatfuzz cannot check it"))
    return PatternUnsupported(
        f"{why}\n  fix: rewrite it without lookaround or backreferences and without "
        "nested quantifiers such as (a+)+, so that RE2 accepts it", pattern)


def locate_pattern(root: Any, pattern: str) -> list[str]:
    """JSON pointers of every ``pattern`` (or ``patternProperties`` key) equal to
    ``pattern`` in ``root``, for error messages."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack and len(found) < 5:
        node, where = stack.pop()
        if isinstance(node, Mapping):
            if node.get("pattern") == pattern:
                found.append(where + "/pattern")
            props = node.get("patternProperties")
            if isinstance(props, Mapping) and pattern in props:
                found.append(where + "/patternProperties/"
                             + pattern.replace("~", "~0").replace("/", "~1"))
            stack.extend((v, f"{where}/{str(k).replace('~', '~0').replace('/', '~1')}")
                         for k, v in node.items() if k not in ("enum", "const", "default"))
        elif isinstance(node, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(node))
    return sorted(found)


def search(pattern: str, text: str, *, kubernetes: bool = False) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (``re.search`` semantics); read as
    Go's RE2 with ``kubernetes``.

    Raises:
        PatternRefused: ``kubernetes``, and Go refuses the pattern.
        PatternUnsupported: a non-RE2 pattern exceeded :data:`PATTERN_CPU_LIMIT`.
        re.error: the pattern is not a regular expression at all.
    """
    if kubernetes:
        try:
            compiled = compile_re2(pattern)
        except RE2SyntaxError as exc:
            raise PatternRefused(pattern, str(exc)) from None
        return compiled.search(text) is not None
    if pattern not in _REFUSED:
        found = _bounded_search(pattern, text)
        if found is not None:
            return found
    # one raise site: Hypothesis replays a failure and calls it flaky if it moves
    raise _refuse(pattern, len(text))


def _bounded_search(pattern: str, text: str) -> bool | None:
    """The search result, or ``None`` (and the pattern refused) when it ran too long."""
    linear, compiled = _compile(pattern)
    if linear:
        return compiled.search(text) is not None
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "setitimer"):
        return compiled.search(text) is not None
    previous = signal.getsignal(signal.SIGPROF)
    if previous not in (signal.SIG_DFL, signal.SIG_IGN, None):  # a profiler owns it
        return compiled.search(text) is not None

    def on_timeout(signum: int, frame: Any) -> None:
        raise _PatternTimeout

    signal.signal(signal.SIGPROF, on_timeout)
    signal.setitimer(signal.ITIMER_PROF, PATTERN_CPU_LIMIT)
    try:
        return compiled.search(text) is not None
    except _PatternTimeout:
        _refuse(pattern, len(text))
        return None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


# -- jsonschema keyword implementations (same messages as jsonschema's own) ----------


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any, *,
             kubernetes: bool = False) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not search(patrn, instance,
                                                            kubernetes=kubernetes):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any,
                        schema: Any, *, kubernetes: bool = False) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in patterns.items():
        for k, v in instance.items():
            if search(patrn, k, kubernetes=kubernetes):
                yield from validator.descend(v, subschema, path=k, schema_path=patrn)


def _additional_properties(validator: Any, additional: Any, instance: Any,
                           schema: Any, *, kubernetes: bool = False) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [k for k in instance
              if k not in properties and not any(search(p, k, kubernetes=kubernetes)
                                                  for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            shown = sorted(extras, key=str)
            verb = "was" if len(shown) == 1 else "were"
            yield ValidationError(
                "Additional properties are not allowed "
                f"({', '.join(repr(e) for e in shown)} {verb} unexpected)")


def pattern_keywords(*, kubernetes: bool = False) -> dict[str, Any]:
    """The keyword implementations to ``jsonschema.validators.extend`` a validator with;
    patterns in Go's RE2 dialect with ``kubernetes``, else ECMA-262 read by RE2 (or
    ``re`` under a bound)."""
    if not kubernetes:
        return {"pattern": _pattern, "patternProperties": _pattern_properties,
                "additionalProperties": _additional_properties}
    return {"pattern": partial(_pattern, kubernetes=True),
            "patternProperties": partial(_pattern_properties, kubernetes=True),
            "additionalProperties": partial(_additional_properties, kubernetes=True)}
