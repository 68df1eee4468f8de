"""Registering comparators and canonicalisers, and the path globs that select fields.

A registration attaches one pure function to the fields chosen by exactly one selector:
``format=`` (the schema's ``format``), ``definition=`` (the ``$defs`` name a field is reached
through), ``path=`` (a glob over Kubernetes-style field paths) or ``predicate=`` (a function
of the schema node). Every registration bumps a generation counter, so compiled schemas are
rebuilt on next use (STYLE.md 6). Precedence when several match: path, then predicate,
then definition, then format, then the built-in rules; among equals the newest wins.
"""

from __future__ import annotations

import inspect
import itertools
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

_TOKEN = re.compile(r"\*\*|\*|\[\*\]|\[[^\[\]]+\]|[^.\[\]]+")


@dataclass(frozen=True)
class PathGlob:
    """A compiled field-path glob such as ``spec.template.spec.containers[*].image``.

    Tokens: a field or map-key name; ``[key]`` for a name containing dots or slashes;
    ``*`` one name; ``[*]`` one list item (list-map items too); ``**`` any number of
    segments, including none.
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
            if token.startswith("["):
                inner = token[1:-1]
                if token != "[*]":
                    if inner.isdigit():
                        raise InvalidArgument(
                            f"path={text!r} selects list index {token}; rules apply to every "
                            "item, so write [*] (set and list-map items have no fixed index)"
                        )
                    token = inner  # [name.with.dots] is a literal name
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


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[Registration] = []
        self._order = itertools.count()
        self.generation = 0

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
    suffix), ``path`` (glob, see :class:`PathGlob`) or ``predicate(schema_node) -> bool``.

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
    return _REGISTRY
