"""Per-example state, the options of one call, and what every part of the strategy compiler shares.

Why a module of its own: the compiler (``_compile``) is split by the kind of value it draws
(objects, arrays, scalars, junctors, Kubernetes types), and each part needs the same
helpers (lazy compilation, filtering, the ``$ref`` recursion bound, a subtree's size, small
arbitrary JSON) and the same per-example state (``Example``); they live here, below all of
them, in ``CompilerBase``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from compatfuzz.errors import UnsupportedSchema
from compatfuzz.schema import Schema
from compatfuzz.strategies import _edges
from compatfuzz.strategies._compile_cel import (
    RETRIES,
    CelCompiling,
    CelFilterStats,
    Gen,
    path_text,
)
from compatfuzz.strategies._overrides import Overrides

_JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

# Swarm details: half of a hot list's items (and a hot map's keys)
# is a near-duplicate of an earlier one.
_NEAR_COIN = st.integers(min_value=0, max_value=1)
_PICK = st.integers(min_value=0, max_value=255)
_VARIANT = st.integers(min_value=0, max_value=_edges.VARIANTS - 1)


class Example:
    """Per-example state: explicit nulls or not, and the swarm (``_edges``): which value
    families are hot and how densely optional fields appear."""

    __slots__ = ("density", "hot", "nulls", "spent")

    def __init__(self, nulls: bool, hot: int = 0, density: int = 2) -> None:
        self.nulls = nulls
        self.hot = hot
        self.density = density
        self.spent = 0  # optional fields chosen so far: past its _BUDGET, objects get sparse


_state = threading.local()


def current_example() -> Example:
    """The example being drawn on this thread (nested composite draws cannot take it)."""
    ex: Example | None = getattr(_state, "example", None)
    return ex if ex is not None else Example(False)


def set_current_example(ex: Example | None) -> None:
    _state.example = ex


@dataclass(frozen=True)
class Options:
    """Options of one ``from_schema`` call (see its docstring)."""

    overrides: Overrides
    kubernetes: bool
    max_recursion: int
    max_list_extra: int
    extra_properties: bool
    null_rate: int


class CompilerBase(CelCompiling):
    """Holds one schema; the helpers every part of ``Compiler`` uses."""

    def __init__(self, schema: Schema, options: Options) -> None:
        self.schema = schema
        self.options = options
        self.kubernetes = options.kubernetes
        self._validator: Any = None
        self._warned: set[tuple[str, str]] = set()
        self._weights: dict[int, int] = {}
        #: nodes whose CEL rules are not all recognised (so still filter values), by path
        self.cel_filtered: dict[str, CelFilterStats] = {}
        self._below: dict[int, tuple[Any, Any]] = {}

    # ----------------------------------------------------------------- helpers
    def validator_for(self, node: Mapping[str, Any]) -> Any:
        """A jsonschema validator for ``node`` resolving refs against the whole document."""
        if self._validator is None:
            self._validator = self.schema.validator
        return self._validator.evolve(schema=node)

    def fail(self, path: tuple[str | int, ...], message: str) -> UnsupportedSchema:
        where = path_text(path) or "<root>"
        return UnsupportedSchema(
            f"{self.schema.name or self.schema.source}: cannot generate values at {where}: "
            f"{message}"
        )

    def lazy(self, make: Callable[[], Gen]) -> Gen:
        """Compile on first use: building a strategy stays O(1) in the schema's size."""
        compiled: list[Gen] = []

        def gen(draw: st.DrawFn, ex: Example) -> Any:
            if not compiled:
                compiled.append(make())
            return compiled[0](draw, ex)

        return gen

    def filtered(self, gen: Gen, ok: Callable[[Any], bool]) -> Gen:
        def checked(draw: st.DrawFn, ex: Example) -> Any:
            for _ in range(RETRIES):
                value = gen(draw, ex)
                if ok(value):
                    return value
            assume(False)
            return None  # pragma: no cover - assume() raised

        return checked

    @staticmethod
    def strategy_gen(strategy: st.SearchStrategy[Any]) -> Gen:
        return lambda draw, ex: draw(strategy)

    def too_deep(self, node: Any, stack: tuple[str, ...]) -> bool:
        """Would expanding ``node`` repeat a definition more than ``max_recursion`` times?"""
        if not isinstance(node, Mapping):
            return False
        ref = node.get("$ref")
        if isinstance(ref, str):
            return stack.count(ref) >= self.options.max_recursion
        items = node.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("$ref"), str):
            return stack.count(items["$ref"]) >= self.options.max_recursion
        additional = node.get("additionalProperties")
        if isinstance(additional, Mapping) and isinstance(additional.get("$ref"), str):
            return stack.count(additional["$ref"]) >= self.options.max_recursion
        return False

    def choice(self, gens: list[Gen]) -> Gen:
        index = st.integers(min_value=0, max_value=len(gens) - 1)

        def choose(draw: st.DrawFn, ex: Example) -> Any:
            return gens[draw(index)](draw, ex)

        return choose

    def leaf_weight(self, node: Any, visiting: frozenset[str] = frozenset()) -> int:
        """How many leaves lie below ``node`` (``$ref`` cycles cut): a field's share of the API."""
        if not isinstance(node, Mapping):
            return 1
        key = id(node)
        cached = self._weights.get(key)
        if cached is not None:
            return cached
        ref = node.get("$ref")
        if isinstance(ref, str):
            weight = 1 if ref in visiting else self.leaf_weight(
                self.schema.resolve(ref), visiting | {ref}
            )
        else:
            weight = 0
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                weight += sum(self.leaf_weight(sub, visiting) for sub in properties.values())
            for word in ("items", "additionalProperties"):
                if isinstance(node.get(word), Mapping):
                    weight += self.leaf_weight(node[word], visiting)
            for word in ("allOf", "anyOf", "oneOf"):
                for branch in node.get(word) or ():
                    weight += self.leaf_weight(branch, visiting)
            weight = max(weight, 1)
        weight = min(weight, 100_000)
        self._weights[key] = weight
        return weight

    # ------------------------------------------------------------ any JSON
    def any_json(self, path: tuple[str | int, ...], depth: int = 2) -> Gen:
        """Small arbitrary JSON values, nested at most ``depth`` levels."""
        scalars = st.one_of(
            st.none(), st.booleans(), st.integers(min_value=-(2**53), max_value=2**53),
            st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
        )
        if depth == 0:
            return self.strategy_gen(scalars)
        inner = self.any_json(path, depth - 1)
        kind = st.integers(min_value=0, max_value=5)
        length = st.integers(min_value=0, max_value=3)
        keys = st.text(min_size=1, max_size=8)

        def gen_any(draw: st.DrawFn, ex: Example) -> Any:
            k = draw(kind)
            if k < 4:
                return draw(scalars)
            n = draw(length)
            if k == 4:
                return [inner(draw, ex) for _ in range(n)]
            return {draw(keys): inner(draw, ex) for _ in range(n)}

        return gen_any

    def any_object(self, path: tuple[str | int, ...]) -> Gen:
        inner = self.any_json(path, 1)
        length = st.integers(min_value=0, max_value=3)
        keys = st.text(min_size=1, max_size=8)

        def gen_obj(draw: st.DrawFn, ex: Example) -> dict[str, Any]:
            return {draw(keys): inner(draw, ex) for _ in range(draw(length))}

        return gen_obj
