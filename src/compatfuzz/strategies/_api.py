"""``from_schema``: argument checking, options and the strategy's readable repr.

The work happens in ``_compile``; this module keeps the public call cheap (nothing is
compiled until the first draw) and validates options where the user made the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument
from compatfuzz.schema import Schema
from compatfuzz.strategies._compile import Compiler
from compatfuzz.strategies._compile_base import Example, Options, set_current_example
from compatfuzz.strategies._edges import density_index, swarm_mask
from compatfuzz.strategies._overrides import Overrides, global_overrides

__all__ = ["from_schema"]

_NULL_EXAMPLE = st.integers(min_value=0, max_value=7)


def _as_schema(schema: Schema | Mapping[str, Any]) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, Mapping):
        # The same reading as load_schema(mapping): draft detection, OpenAPI nullable, and
        # Kubernetes semantics (CEL rules, list types) when x-kubernetes-* is used.
        from compatfuzz.schema import load_schema

        return load_schema(schema)
    if isinstance(schema, bool):
        return Schema(root={} if schema else {"not": {}})
    raise InvalidArgument(
        f"Expected a compatfuzz.schema.Schema or a JSON Schema mapping but got "
        f"schema={schema!r} (type={type(schema).__name__}); load files with "
        "compatfuzz.schema.load_schema(path)"
    )


def _check_number(name: str, value: object, low: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
        raise InvalidArgument(
            f"Expected {name} >= {low} but got {name}={value!r} (type={type(value).__name__})"
        )


class _Plan:
    """Options of one call plus its compiler; its repr is the call's keyword arguments."""

    def __init__(self, schema: Schema, options: Options, text: str) -> None:
        self.schema = schema
        self.options = options
        self.text = text
        self.gen: Any = None
        self.wrapped: st.SearchStrategy[list[Any]] | None = None
        self.compiler: Compiler | None = None

    def generator(self) -> Any:
        if self.gen is None:
            self.compiler = Compiler(self.schema, self.options)
            self.gen = self.compiler.compile(self.schema.root)
        return self.gen

    def cel_filtered(self) -> dict[str, Any]:
        """The nodes whose CEL rules were not all met by construction, with how often
        the values drawn there passed the filter (``CelFilterStats``), so far."""
        return dict(self.compiler.cel_filtered) if self.compiler is not None else {}

    def __repr__(self) -> str:
        return self.text


    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text)


def _generate(draw: st.DrawFn, plan: _Plan) -> Any:
    gen = plan.generator()
    ex = Example(nulls=draw(_NULL_EXAMPLE) == 0, hot=draw(swarm_mask),
                 density=draw(density_index))
    set_current_example(ex)
    try:
        return gen(draw, ex)
    finally:
        set_current_example(None)


_generated = st.composite(_generate)


def _same(value: Any) -> int:
    return 0


def _draw(draw: st.DrawFn, schema: Schema, options: _Plan) -> Any:
    # The object is drawn as the one element of a unique list: Hypothesis's span mutator
    # skips spans inside unique collections. Left on, it spends five of every six
    # generated examples copying one span of a random example over another with the same
    # label (every presence coin and list length here shares one), which measured as 27%
    # distinct objects in 100 draws of a 26-field CRD, 42% of them bare; in the unique
    # list, 87% distinct and 5% bare. Duplication that finds bugs (equal list-map keys,
    # case-folded set items) is drawn on purpose instead, see ``_edges``.
    if options.wrapped is None:
        options.wrapped = st.lists(_generated(options), min_size=1, max_size=1,
                                   unique_by=_same)
    (value,) = draw(options.wrapped)
    return value


# Named like the public function so the strategy's repr reads like the user's call.
_draw.__name__ = _draw.__qualname__ = "from_schema"
_from_schema = st.composite(_draw)


def from_schema(
    schema: Schema | Mapping[str, Any],
    *,
    overrides: Overrides | None = None,
    kubernetes: bool | None = None,
    max_recursion: int = 2,
    max_list_extra: int = 3,
    extra_properties: bool = False,
) -> st.SearchStrategy[Any]:
    """Return a strategy for JSON values valid under ``schema``.

    ``schema`` is a loaded :class:`~compatfuzz.schema.Schema` (from ``load_schema``,
    ``load_crds`` or ``load_kubernetes``) or a JSON Schema 2020-12 mapping with local refs.

    ``overrides`` replaces or patches the generated value for a format, definition name or
    field path (see :class:`Overrides`; globally registered overrides apply too).
    ``kubernetes`` turns on Kubernetes semantics (defaults to ``schema.kubernetes``):
    well-known types by definition name, Go durations, realistic ObjectMeta, CEL rules,
    and no unknown fields unless ``x-kubernetes-preserve-unknown-fields``.
    ``max_recursion`` bounds how often one definition may repeat along a path
    (``$ref`` cycles such as JSONSchemaProps). Optional fields appear independently, the
    ones leading to large subtrees more often; lists get at most ``max_list_extra`` items
    beyond ``minItems``; strings without ``maxLength`` stay short. ``extra_properties``
    adds unknown keys where plain JSON Schema allows them.

    >>> from compatfuzz.schema import load_kubernetes
    >>> strategy = from_schema(load_kubernetes("v1", "ConfigMap"))

    Values shrink towards fewer optional fields, shorter lists, simpler scalars and
    explicit nulls where the schema allows them.

    Raises:
        InvalidArgument: an option has the wrong type or range (at call time).
        UnsupportedSchema: at first draw, when the schema admits no value at some path.

    .. versionadded:: 0.1.0
    """
    plan = _plan(schema, overrides=overrides, kubernetes=kubernetes,
                 max_recursion=max_recursion, max_list_extra=max_list_extra,
                 extra_properties=extra_properties)
    return _from_schema(plan.schema, plan)


def _plan(schema: Schema | Mapping[str, Any], *, overrides: Overrides | None = None,
          kubernetes: bool | None = None, max_recursion: int = 2, max_list_extra: int = 3,
          extra_properties: bool = False) -> _Plan:
    loaded = _as_schema(schema)
    if overrides is not None and not isinstance(overrides, Overrides):
        raise InvalidArgument(
            f"Expected overrides to be a compatfuzz.strategies.Overrides but got "
            f"overrides={overrides!r} (type={type(overrides).__name__})"
        )
    _check_number("max_recursion", max_recursion, 0)
    _check_number("max_list_extra", max_list_extra, 0)
    options = Options(
        overrides=(overrides or Overrides()).merged_over(global_overrides()),
        kubernetes=loaded.kubernetes if kubernetes is None else bool(kubernetes),
        max_recursion=int(max_recursion),
        max_list_extra=int(max_list_extra),
        extra_properties=bool(extra_properties),
        null_rate=8,
    )
    given = {
        "overrides": overrides, "kubernetes": kubernetes, "max_recursion": max_recursion,
        "max_list_extra": max_list_extra,
        "extra_properties": extra_properties,
    }
    defaults = {"overrides": None, "kubernetes": None, "max_recursion": 2,
                "max_list_extra": 3, "extra_properties": False}
    text = ", ".join(f"{k}={v!r}" for k, v in given.items() if v != defaults[k])
    return _Plan(loaded, options, f"Options({text})")


def sampling_strategy(schema: Schema) -> tuple[st.SearchStrategy[Any], _Plan]:
    """``from_schema(schema)`` and its plan, whose ``cel_filtered()`` tells afterwards
    which CEL rules were enforced by filtering (``compatfuzz sample`` reports them)."""
    plan = _plan(schema)
    return _from_schema(plan.schema, plan), plan
