"""Registering comparators and canonicalisers, and the path globs that select fields.

A registration attaches one pure function to the fields chosen by exactly one selector:
``format=`` (the schema's ``format``), ``definition=`` (the ``$defs`` name a field is reached
through, or the ``Schema``'s name for the root), ``path=`` (a glob over Kubernetes-style
field paths) or ``predicate=`` (a function of the schema node). Every registration bumps a
generation counter, so compiled schemas are rebuilt on next use (STYLE.md 6). Installed
packages register rules through the ``compatfuzz.semantic`` entry-point group, loaded on
first use. Precedence when several match: path, then predicate,
then definition, then format, then the built-in rules; among equals the newest wins.
"""

from __future__ import annotations

import inspect
import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from compatfuzz.errors import InvalidArgument

__all__ = [
    "PathGlob",
    "Registration",
    "register_canonicaliser",
    "register_comparator",
    "unregister",
]

Kind = Literal["comparator", "canonicaliser"]
Selector = Literal["path", "predicate", "definition", "format"]
SELECTOR_ORDER: tuple[Selector, ...] = ("path", "predicate", "definition", "format")

_TOKEN = re.compile(r'\*\*|\*|\[\*\]|\["(?:[^"\\]|\\.)*"\]|\[[^\[\]]+\]|[^.\[\]]+')
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_$-]+")
_SYNTAX = ("field-path globs are names separated by dots (spec.replicas), [key] for a name "
           "with dots or slashes (metadata.labels[app.kubernetes.io/name]), [\"key\"] for one "
           "with brackets or quotes, * for one name, [*] for every list item and ** for any "
           "depth")
_JSONPATH_TOKEN = re.compile(
    r"""\.\.([^.\[\]]*)|\.([^.\[\]]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]"""
    r"""|\[\s*(\d+|\*)\s*\]|\[\s*\?[^\]]*\]"""
)


def _glob_text(segments: list[str]) -> str:
    """Spell parsed segments as a glob (``[*]`` for indices and filters)."""
    out = ""
    for seg in segments:
        if seg == "[*]" or seg.isdigit():
            out += "[*]"
            continue
        if seg in ("*", "**") or _PLAIN_NAME.fullmatch(seg):
            part = seg
        elif seg and not any(c in seg for c in '[]"') and seg.strip() == seg:
            out += f"[{seg}]"
            continue
        else:
            out += "[" + json.dumps(seg) + "]"
            continue
        out += ("." if out else "") + part
    return out or "**"


def _from_pointer(text: str) -> str:
    body = text[1:] if text.startswith("#") else text
    segments = [p.replace("~1", "/").replace("~0", "~") for p in body.split("/") if p]
    return _glob_text(segments)


def _from_jsonpath(text: str) -> str | None:
    pos, segments = 1, []
    while pos < len(text):
        m = _JSONPATH_TOKEN.match(text, pos)
        if m is None:
            return None
        name, single, double = m.group(2), m.group(3), m.group(4)
        if m.group().startswith(".."):
            segments.append("**")
            if m.group(1):
                segments.append(m.group(1))
        elif name is not None:
            segments.append(name)
        elif single is not None or double is not None:
            segments.append(single if single is not None else double)
        else:
            segments.append("[*]")  # an index, [*] or a filter
        pos = m.end()
    return _glob_text(segments)


def _reject(text: str, problem: str, fix: str | None) -> InvalidArgument:
    hint = f"write path={fix!r}" if fix is not None else "rewrite it"
    return InvalidArgument(f"path={text!r} {problem}; {hint} ({_SYNTAX})")


@dataclass(frozen=True)
class PathGlob:
    """A compiled field-path glob such as ``spec.template.spec.containers[*].image``.

    Tokens: a field or map-key name; ``[key]`` for a name containing dots or slashes
    (``["key"]``, a JSON string, for one containing brackets or quotes, as diff paths
    print it); ``*`` one name; ``[*]`` one list item (list-map and set items too); ``**``
    any number of segments, including none. JSON Pointers, JSONPath, list indices,
    filters and list-map selectors (``[name="app"]``) are rejected with the glob to write.
    """

    text: str
    tokens: tuple[str, ...]

    @classmethod
    def parse(cls, text: object) -> PathGlob:
        if not isinstance(text, str):
            raise InvalidArgument(
                f"Expected a field-path glob string but got path={text!r} "
                f"(type={type(text).__name__}); for example path=\"spec.containers[*].image\""
            )
        if not text or text.strip() != text:
            raise InvalidArgument(
                f"path={text!r} is empty or has surrounding spaces; write a field path such "
                "as \"spec.replicas\" (use \"**\" to match every field)"
            )
        if text.startswith(("/", "#")):
            raise _reject(text, "is a JSON Pointer, not a field-path glob", _from_pointer(text))
        if text.startswith("$"):
            raise _reject(text, "is a JSONPath expression, not a field-path glob",
                          _from_jsonpath(text))
        tokens: list[str] = []
        pos = 0
        expect_name = True
        while pos < len(text):
            if text[pos] == ".":
                if expect_name:
                    raise InvalidArgument(
                        f"path={text!r} has an empty segment at offset {pos}; separate "
                        "names with single dots, e.g. \"spec.template\""
                    )
                pos += 1
                expect_name = True
                continue
            m = _TOKEN.match(text, pos)
            if m is None or (not m.group().startswith("[") and not expect_name):
                raise InvalidArgument(
                    f"path={text!r} cannot be parsed at offset {pos}; names are separated "
                    "by dots and list items are written [*]"
                )
            token = m.group()
            fixed = text[:pos] + "[*]" + text[m.end():]
            if token.startswith('["'):
                token = json.loads(token[1:-1])
            elif token.startswith("["):
                inner = token[1:-1]
                if token == "[*]":
                    pass
                elif inner.strip().isdigit():
                    raise InvalidArgument(
                        f"path={text!r} selects list index {token}; rules apply to every "
                        f"item, so write [*]: path={fixed!r} (set and list-map items have no "
                        "fixed index)"
                    )
                elif inner.startswith("?"):
                    raise _reject(text, f"has a JSONPath filter {token}; globs select every "
                                  "list item with [*]", fixed)
                elif re.match(r"\s*[^=\s\"']+\s*=", inner):
                    raise _reject(
                        text, f"selects a list-map item by its keys, {token}, as diff paths "
                        "print it; rules apply to every item, so use [*] (a map key that "
                        "contains '=' is quoted: [\"a=b\"])", fixed)
                elif inner[0] in "'\"" or inner[-1] in "'\"":
                    unquoted = inner.strip("'\"")
                    raise _reject(text, f"quotes a name with {token}; write [key] unquoted, or "
                                  "[\"key\"] as a JSON string",
                                  text[:pos] + f"[{unquoted}]" + text[m.end():])
                else:
                    token = inner  # [name.with.dots] is a literal name
            elif token not in ("*", "**"):
                if "/" in token:
                    fix = text.replace("/", ".") if "." not in text and "[" not in text \
                        else None  # where a dotted map key starts is anyone's guess
                    raise _reject(text, f"has a '/' in the name {token!r}; step into fields "
                                  "with dots, and bracket a whole map key that contains '/' "
                                  "(metadata.labels[example.com/owner])", fix)
                if "*" in token:
                    raise _reject(text, f"has a partial wildcard {token!r}; * matches one "
                                  "whole name", None)
            tokens.append(token)
            pos = m.end()
            expect_name = False
        if expect_name:
            raise InvalidArgument(f"path={text!r} ends with a dot; remove it")
        return cls(text, tuple(tokens))


class _Counter:
    def __init__(self) -> None:
        self.value = 0


@dataclass(eq=False)
class Registration:
    """A registered comparator or canonicaliser; also a context manager that removes it.

    ``with register_comparator(f, path="spec.x"): ...`` keeps the rule for the block only,
    which is what tests want.
    """

    kind: Kind
    function: Callable[..., Any]
    selector: Selector
    value: Any
    order: int = field(default=0)

    def unregister(self) -> None:
        """Remove this rule (idempotent) and invalidate compiled schemas."""
        _REGISTRY.remove(self)

    def __enter__(self) -> Registration:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unregister()

    def matches_node(self, node: Mapping[str, Any], ref_name: str | None) -> bool:
        if self.selector == "format":
            return bool(node.get("format") == self.value)
        if self.selector == "definition":
            return ref_name is not None and (
                ref_name == self.value or ref_name.endswith("." + self.value)
            )
        if self.selector == "predicate":
            return bool(self.value(node))
        return False

    def __repr__(self) -> str:
        name = getattr(self.function, "__qualname__", repr(self.function))
        shown = self.value.text if isinstance(self.value, PathGlob) else self.value
        return f"<{self.kind} {name} {self.selector}={shown!r}>"


ENTRY_POINT_GROUP = "compatfuzz.semantic"


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[Registration] = []
        self._order = itertools.count()
        self.generation = 0
        self._plugins_loaded = False
        self._plugin_lock = threading.RLock()

    def load_plugins(self) -> None:
        """Run every ``compatfuzz.semantic`` entry point once, on first use (STYLE.md 6).

        Each entry point names a function of no arguments that registers its rules with
        :func:`register_comparator` / :func:`register_canonicaliser`. A plugin that fails
        to load is skipped with a :class:`~compatfuzz.errors.CompatfuzzWarning` naming it.
        """
        if self._plugins_loaded:
            return
        with self._plugin_lock:
            if self._plugins_loaded:
                return
            self._plugins_loaded = True  # before running hooks: they may call equal()
            import importlib.metadata

            try:
                hooks = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
            except Exception as exc:  # a broken installation must not break equal()
                _warn_plugin(f"entry points of group {ENTRY_POINT_GROUP!r}", exc)
                return
            for hook in sorted(hooks, key=lambda h: h.name):
                try:
                    setup = hook.load()
                    if not callable(setup):
                        raise TypeError(f"{hook.value} is {setup!r}, not a function of no "
                                        "arguments that registers rules")
                    setup()
                except Exception as exc:
                    _warn_plugin(f"entry point {hook.name}={hook.value} "
                                 f"(group {ENTRY_POINT_GROUP!r})", exc)

    def add(self, reg: Registration) -> Registration:
        with self._lock:
            reg.order = next(self._order)
            self._rules.append(reg)
            self.generation += 1
        return reg

    def remove(self, reg: Registration) -> None:
        with self._lock:
            if reg in self._rules:
                self._rules.remove(reg)
                self.generation += 1

    def snapshot(self) -> tuple[Registration, ...]:
        with self._lock:
            return tuple(self._rules)

    def __iter__(self) -> Iterator[Registration]:
        return iter(self.snapshot())


def _warn_plugin(what: str, exc: BaseException) -> None:
    import warnings

    from compatfuzz.errors import CompatfuzzWarning

    warnings.warn(f"compatfuzz.semantic skipped {what}: {type(exc).__name__}: {exc}; fix or "
                  "uninstall the package that provides it", CompatfuzzWarning, stacklevel=4)


_REGISTRY = _Registry()


def _check_callable(function: object, kind: Kind, arity: int) -> None:
    usage = "comparator(a, b) -> bool" if kind == "comparator" else "canonicaliser(value) -> value"
    if isinstance(function, Registration):
        raise InvalidArgument(
            f"{kind}={function!r} is already a registration; pass the function itself"
        )
    if not callable(function):
        raise InvalidArgument(
            f"Expected a callable {usage} but got {kind}={function!r} "
            f"(type={type(function).__name__})"
        )
    try:
        inspect.signature(function).bind(*([None] * arity))
    except TypeError:
        raise InvalidArgument(
            f"{kind}={function!r} cannot be called with {arity} positional argument"
            f"{'s' if arity > 1 else ''}; a {kind} has the signature {usage}"
        ) from None
    except ValueError:  # builtins without a signature: accept, they fail loudly when called
        pass


def _selector(format: object, definition: object, path: object,
              predicate: object) -> tuple[Selector, Any]:
    given = {name: value for name, value in (
        ("format", format), ("definition", definition), ("path", path), ("predicate", predicate),
    ) if value is not None}
    if len(given) != 1:
        shown = ", ".join(f"{k}={v!r}" for k, v in given.items()) or "none"
        raise InvalidArgument(
            f"pass exactly one of format=, definition=, path= or predicate= (got {shown}); "
            "register the function once per selector if it applies to several"
        )
    (name, value), = given.items()
    if name in ("format", "definition"):
        if not isinstance(value, str) or not value.strip():
            raise InvalidArgument(
                f"Expected a non-empty string but got {name}={value!r} "
                f"(type={type(value).__name__}); e.g. format=\"date-time\" or "
                "definition=\"io.k8s.apimachinery.pkg.api.resource.Quantity\""
            )
        if name == "definition" and value.startswith("#"):
            raise InvalidArgument(
                f"definition={value!r} looks like a $ref; pass the definition name only, "
                f"e.g. definition={value.rsplit('/', 1)[-1]!r}"
            )
        return name, value  # type: ignore[return-value]
    if name == "path":
        return "path", PathGlob.parse(value)
    if not callable(value):
        raise InvalidArgument(
            f"Expected a callable predicate(schema_node) -> bool but got predicate={value!r} "
            f"(type={type(value).__name__})"
        )
    try:
        inspect.signature(value).bind(None)
    except TypeError:
        raise InvalidArgument(
            f"predicate={value!r} must accept one argument, the schema node (a Mapping)"
        ) from None
    except ValueError:
        pass
    return "predicate", value


def register_comparator(
    comparator: Callable[[Any, Any], Any],
    *,
    format: str | None = None,
    definition: str | None = None,
    path: str | None = None,
    predicate: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Registration:
    """Compare the selected fields with ``comparator(a, b) -> bool``.

    The comparator must be pure and an equivalence relation (reflexive, symmetric,
    transitive): it is re-run while Hypothesis shrinks. It receives the raw JSON values;
    ``None`` stands for an absent field (it is never called when both are absent). Return
    ``NotImplemented`` to defer to the next matching rule. A comparator is opaque: lists of
    such fields that are order-insensitive fall back to pairwise matching, and
    :func:`~compatfuzz.semantic.canonicalise` leaves these fields as they are; prefer
    :func:`register_canonicaliser` when a canonical form exists.

    Exactly one selector: ``format``, ``definition`` (``$defs`` name, or its dotted
    suffix; the root schema goes by the ``Schema``'s name), ``path`` (glob, see
    :class:`PathGlob`) or ``predicate(schema_node) -> bool``.

    >>> reg = register_comparator(lambda a, b: str(a).lower() == str(b).lower(),
    ...                           path="metadata.labels.team")
    >>> reg.unregister()

    Raises:
        InvalidArgument: a selector is missing, doubled or malformed, or the function has the
            wrong signature.

    .. versionadded:: 0.1.0
    """
    _check_callable(comparator, "comparator", 2)
    selector, value = _selector(format, definition, path, predicate)
    return _REGISTRY.add(Registration("comparator", comparator, selector, value))


def register_canonicaliser(
    canonicaliser: Callable[[Any], Any],
    *,
    format: str | None = None,
    definition: str | None = None,
    path: str | None = None,
    predicate: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Registration:
    """Compare the selected fields by ``canonicaliser(value)``: equal outputs, equal fields.

    The canonicaliser must be pure and idempotent (``c(c(x)) == c(x)``); equality defined
    through it is then an equivalence automatically. It is called for present, non-null
    values and returns a JSON value, compared exactly; return ``NotImplemented`` to leave
    a value to the next matching rule (e.g. a string that does not parse).
    Selectors as for :func:`register_comparator`.

    >>> reg = register_canonicaliser(str.lower, format="hostname")
    >>> reg.unregister()

    Raises:
        InvalidArgument: as for :func:`register_comparator`.

    .. versionadded:: 0.1.0
    """
    _check_callable(canonicaliser, "canonicaliser", 1)
    selector, value = _selector(format, definition, path, predicate)
    return _REGISTRY.add(Registration("canonicaliser", canonicaliser, selector, value))


def unregister(registration: Registration) -> None:
    """Remove a rule returned by a ``register_*`` function (same as ``.unregister()``).

    Raises:
        InvalidArgument: ``registration`` is not a :class:`Registration`.
    """
    if not isinstance(registration, Registration):
        raise InvalidArgument(
            f"Expected the Registration returned by register_comparator/register_canonicaliser "
            f"but got registration={registration!r} (type={type(registration).__name__})"
        )
    registration.unregister()


def registry() -> _Registry:
    """The global registry, with the installed plugins' rules loaded."""
    _REGISTRY.load_plugins()
    return _REGISTRY
