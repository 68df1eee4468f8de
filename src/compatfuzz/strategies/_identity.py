"""When two items of a list are the same item, for the lists that forbid repeats.

Why a module of its own: the list drawer (``_compile_array``) keeps items apart as it draws them,
and a CEL repair (``_cel_construct``) that replaces an item after the draw, or sets a field
deep inside one, must keep them apart too; both ask here. The API server's rules:
``x-kubernetes-list-type: map`` items are the same when their ``x-kubernetes-list-map-keys``
are, compared after defaulting (``k8s.io/apiextensions-apiserver/pkg/apiserver/schema/
listtype/validation.go`` runs on the defaulted object, so ``{port: 53}`` and ``{port: 53,
protocol: TCP}`` collide where ``protocol`` defaults to ``TCP``); ``set`` lists and
``uniqueItems`` compare whole items, with ``1`` and ``1.0`` the same (JSON Schema equality).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compatfuzz.strategies._cel_shapes import Resolver, deref

__all__ = ["UNIQUE_BY", "canonical_key", "item_key", "key_defaults", "repeated"]

#: a list whose items a CEL rule keeps apart (``self.all(x, self.exists_one(y, x.name ==
#: y.name))``): the fields compared, or ``[]`` for whole items (``_cel_construct.refine``)
UNIQUE_BY = "x-compatfuzz-unique-by"


def _json_equal_form(value: Any) -> Any:
    """``value`` with integral floats as ints: JSON Schema's uniqueItems (and Kubernetes'
    set lists) count ``1`` and ``1.0`` as the same item, but ``true`` and ``1`` not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_json_equal_form(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_equal_form(v) for k, v in value.items()}
    return value


def canonical_key(value: Any) -> str:
    return json.dumps(_json_equal_form(value), sort_keys=True, separators=(",", ":"))


def key_defaults(items: Any, map_keys: Sequence[str], resolve: Resolver | None
                 ) -> dict[str, Any]:
    """The ``default`` of each list-map key field of ``items`` that declares one."""
    node = deref(items, resolve)
    props = node.get("properties") if isinstance(node, Mapping) else None
    if not isinstance(props, Mapping):
        return {}
    out = {}
    for key in map_keys:
        sub = deref(props.get(key), resolve)
        if isinstance(sub, Mapping) and "default" in sub:
            out[key] = sub["default"]
    return out


def item_key(node: Any, resolve: Resolver | None = None
             ) -> Callable[[Any], tuple[str, ...]] | None:
    """For a list node that forbids repeats, the identities of an item (two items are the
    same when they share any one); ``None`` for a list that allows them."""
    node = deref(node, resolve)
    if not isinstance(node, Mapping):
        return None
    list_type = node.get("x-kubernetes-list-type")
    map_keys = [k for k in node.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
    base: Callable[[Any], str] | None = None
    if list_type == "map" and map_keys:
        defaults = key_defaults(node.get("items"), map_keys, resolve)

        def base(v: Any) -> str:
            if isinstance(v, Mapping):
                return canonical_key([v.get(k, defaults.get(k)) for k in map_keys])
            return canonical_key(v)
    elif list_type == "set" or node.get("uniqueItems") is True:
        base = canonical_key
    by_rule = node.get(UNIQUE_BY)
    if not isinstance(by_rule, list):
        return None if base is None else (lambda v: (base(v),))
    by = [k for k in by_rule if isinstance(k, str)]

    def key(v: Any) -> tuple[str, ...]:
        mine = canonical_key([v.get(k) for k in by] if by and isinstance(v, Mapping) else v)
        return (mine,) if base is None else (mine, base(v))

    return key


def repeated(key: Callable[[Any], tuple[str, ...]], items: Sequence[Any]) -> bool:
    """Whether two of ``items`` are the same item under ``key``."""
    seen: set[tuple[int, str]] = set()
    for item in items:
        parts = set(enumerate(key(item)))
        if parts & seen:
            return True
        seen |= parts
    return False
