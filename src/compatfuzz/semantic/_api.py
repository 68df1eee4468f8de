"""``equal``, ``diff``, ``canonicalise``: the public entry points, and the compile cache.

A compiled tree is cached per (schema object, ``go_durations``) and rebuilt when a rule is
registered or removed, so calling ``equal()`` in a loop costs one walk per call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from compatfuzz.errors import InvalidArgument, NotEquivalent
from compatfuzz.schema import Schema
from compatfuzz.semantic._diff import Change, Diff
from compatfuzz.semantic._engine import Compiler
from compatfuzz.semantic._node import Node
from compatfuzz.semantic._registry import PathGlob, Registration, registry
from compatfuzz.semantic._values import canonical_go_duration

__all__ = ["assert_equal", "canonicalise", "diff", "equal"]

SchemaLike = Schema | Mapping[str, Any] | None

_CACHE_SIZE = 64
_cache: OrderedDict[tuple[int, tuple[str, ...], bool], tuple[Any, int, Node]] = OrderedDict()
_lock = threading.Lock()


def _as_schema(schema: object) -> Schema | None:
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, Mapping):
        return Schema(root=schema)
    raise InvalidArgument(
        f"Expected a compatfuzz.schema.Schema, a JSON Schema mapping or None but got "
        f"schema={schema!r} (type={type(schema).__name__}); load one with "
        "compatfuzz.schema.load_schema(path)"
    )


def _durations(go_durations: object) -> tuple[str, ...]:
    if isinstance(go_durations, str) or not isinstance(go_durations, Iterable):
        raise InvalidArgument(
            f"Expected an iterable of field-path globs but got go_durations={go_durations!r} "
            f"(type={type(go_durations).__name__}); write go_durations=[{go_durations!r}]"
        )
    paths = tuple(go_durations)
    for p in paths:
        PathGlob.parse(p)  # validates, with a message naming the bad glob
    return paths


def compiled(schema: SchemaLike = None, go_durations: Iterable[str] = (),
             empty_struct_is_absent: bool = False) -> Node:
    """The comparator tree for ``schema``, from the cache when still valid."""
    paths = _durations(go_durations)
    anchor: Any = schema
    key = (id(anchor), paths, bool(empty_struct_is_absent))
    generation = registry().generation
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is anchor and hit[1] == generation:
            _cache.move_to_end(key)
            return hit[2]
    local = [Registration("canonicaliser", canonical_go_duration, "path", PathGlob.parse(p))
             for p in paths]
    root = Compiler(_as_schema(schema), registry().snapshot(), local,
                    bool(empty_struct_is_absent)).root()
    with _lock:
        _cache[key] = (anchor, generation, root)  # keeps the schema alive: ids stay unique
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return root


def equal(a: Any, b: Any, *, schema: SchemaLike = None,
          go_durations: Iterable[str] = (), empty_struct_is_absent: bool = False) -> bool:
    """Return whether ``a`` and ``b`` mean the same object under ``schema``.

    Like Kubernetes' ``apiequality.Semantic.DeepEqual``, but driven by the schema: quantities
    by value (``"1Gi" == "1024Mi"``), date-times as instants, ISO 8601 durations after exact
    unit conversion (a Kubernetes ``format: duration`` is ISO or Go as its own ``pattern``
    and values say, see docs/semantic.md), ``list-type: set`` ignoring order,
    ``list-type: map`` matching items by their keys, ``null``/absent/empty the same for
    lists and maps, ``1 == 1.0`` only where the schema says ``number``; everything else
    exactly (``1 != "1"``, ``True != 1``).
    Registered comparators and canonicalisers apply first. ``schema`` is a
    :class:`~compatfuzz.schema.Schema`, a plain JSON Schema mapping, or ``None`` for plain
    structural equality (scalars exact; null, ``[]`` and ``{}`` all mean absent).
    ``go_durations`` lists field-path globs holding Go duration strings (``"90m" == "1h30m"``).
    ``empty_struct_is_absent`` makes ``{}`` equal absent for objects with ``properties`` too
    (Go non-pointer struct fields are always emitted, so a round trip through Go adds
    ``"resources": {}``); by default, as in Kubernetes, a pointer to a zero struct is not nil.

    >>> equal({"replicas": 3, "labels": {}}, {"replicas": 3})
    True
    >>> equal({"n": 1}, {"n": 1.0}, schema={"properties": {"n": {"type": "number"}}})
    True
    >>> equal({"n": 1}, {"n": "1"})
    False

    Raises:
        InvalidArgument: ``schema`` or ``go_durations`` cannot be used.

    .. versionadded:: 0.1.0
    """
    return compiled(schema, go_durations, empty_struct_is_absent).eq(a, b)


def diff(a: Any, b: Any, *, schema: SchemaLike = None,
         go_durations: Iterable[str] = (), empty_struct_is_absent: bool = False) -> Diff:
    """Return the changes from ``a`` (old) to ``b`` (new), empty iff :func:`equal`.

    Each :class:`Change` has a Kubernetes field path
    (``spec.template.spec.containers[name="app"].resources.limits.cpu``), a kind
    (lost, added, changed, type-changed) and the old and new raw values. Options as for
    :func:`equal`. Costs one :func:`equal` walk when the objects are equal.

    Raises:
        InvalidArgument: as for :func:`equal`.

    .. versionadded:: 0.1.0
    """
    root = compiled(schema, go_durations, empty_struct_is_absent)
    if root.eq(a, b):
        return Diff()
    out: list[Change] = []
    root.diff(a, b, "", out)
    return Diff(out)


def canonicalise(value: Any, *, schema: SchemaLike = None,
                 go_durations: Iterable[str] = (), empty_struct_is_absent: bool = False) -> Any:
    """Return one canonical spelling of ``value``: equal objects, equal meaning, idempotent.

    One spelling per meaning: ``equal(a, b)`` iff ``canonicalise(a) == canonicalise(b)``
    (except under registered comparators, which are opaque: their fields are left as they
    are). Quantities by value whatever their format (the shorter of apimachinery's
    canonical DecimalSI and BinarySI strings: ``"1073741824"`` and ``"1024Mi"`` -> ``"1Gi"``,
    ``"1e3"`` -> ``"1k"``), date-times in UTC (or the smallest offset that can spell an
    instant outside UTC years 0000-9999), durations normalised, sets and list-maps sorted,
    absent-equivalent fields dropped, integral numbers as ``int`` where the schema says
    ``number``. ``equal(canonicalise(x), x)`` holds.

    .. versionadded:: 0.1.0
    """
    return compiled(schema, go_durations, empty_struct_is_absent).canon(value)


def assert_equal(a: Any, b: Any, *, schema: SchemaLike = None,
                 go_durations: Iterable[str] = (), empty_struct_is_absent: bool = False,
                 message: str = "") -> None:
    """Raise :class:`~compatfuzz.errors.NotEquivalent` with the diff unless ``equal(a, b)``.

    Raises:
        NotEquivalent: the objects differ; ``.diff`` holds the :class:`Diff`.
    """
    changes = diff(a, b, schema=schema, go_durations=go_durations,
                   empty_struct_is_absent=empty_struct_is_absent)
    if changes:
        head = f"{message}: " if message else ""
        raise NotEquivalent(f"{head}objects differ in {len(changes)} place(s):\n{changes}",
                            diff=changes)
