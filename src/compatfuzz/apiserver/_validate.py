"""Validation of an object as the API server validates a custom resource of one version.

The OpenAPI part (with kube-openapi's format meanings for Kubernetes sources) is the
schema's own ``jsonschema`` validator (``compatfuzz.schema``); list-type ``set`` and
``map`` lists must not repeat an item or a key (apiextensions-apiserver
``pkg/apiserver/schema/listtype/validation.go``, ``ValidateListSetsAndMaps``);
``x-kubernetes-validations``
CEL rules are evaluated where they stand, with ``self`` bound to the value at that node, as
apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go`` does. Rules on update
only (``oldSelf``) are skipped: a round trip writes each object as if created. Rules that
cannot be evaluated here are reported once as ``UnsupportedRuleWarning`` by the CEL module
rather than ignored. The server's runtime CEL cost bounds apply: one evaluation stops past
``PerCallLimit`` and all rules of one object past ``RuntimeCELCostBudget``
(k8s.io/apiserver/pkg/apis/cel/config.go), rejecting the object with "cost budget
exceeded" (counted in cel-python's units; see ``compatfuzz.strategies._cel_cost``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from compatfuzz.apiserver._structural import structural
from compatfuzz.apiserver._structural_node import Node
from compatfuzz.schema import Schema

__all__ = ["update_errors", "validation_errors"]

def _path_text(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


class _Rules:
    """The CEL rule sites of one schema: (node, compiled rules) along the structure."""

    def __init__(self, schema: Schema) -> None:
        raw = schema.meta.get("openapi")
        self.resolve = None if isinstance(raw, Mapping) else schema.resolve
        self.root: Mapping[str, Any] = raw if isinstance(raw, Mapping) else schema.root
        self.any = _has_rules(self.root, self.resolve, set())

    def errors(self, obj: Any) -> Iterator[str]:
        for _, message, _ in self.located(obj):
            yield message

    def located(self, obj: Any, *, update: bool = False
                ) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
        """Each failed rule as (the path of the value it stands on, its message, whether
        it is a false rule: not an evaluation error, which ratcheting never excuses).
        With ``update``, a value not of its declared type fails every rule on it, as an
        evaluation error (on create its type error keeps CEL from running at all)."""
        from compatfuzz.strategies._cel_cost import RUNTIME_BUDGET

        if self.any:
            yield from self._walk(self.root, obj, "", (), [RUNTIME_BUDGET], update=update)

    def _walk(self, node: Any, value: Any, path: str, parts: tuple[str | int, ...],
              budget: list[int], *, update: bool = False,
              ) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
        if not isinstance(node, Mapping):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and self.resolve is not None:
            node = {**self.resolve(ref), **{k: v for k, v in node.items() if k != "$ref"}}
        if "x-kubernetes-validations" in node and value is not None:
            if budget[0] <= 0:
                return  # the budget ran out: no further rule runs
            typed = _typed_as_declared(node, value)
            if update and not typed:
                for entry in node.get("x-kubernetes-validations") or ():
                    rule = entry.get("rule") if isinstance(entry, Mapping) else None
                    yield parts, (f"{path or '<root>'}: invalid data, expected "
                                  f"{node.get('type')} (rule: {rule})"), False
                return
            rules = _compiled(node, path or "self", self.resolve)
            failed, spent = rules.outcome(value, budget=budget[0])
            budget[0] -= spent
            for rule, why in failed:
                message = f"{why} (rule: {rule})" if why else _message_for(node, rule)
                yield parts, f"{path or '<root>'}: {message}", typed and not why
        for key in ("anyOf", "allOf", "oneOf"):
            for branch in node.get(key) or ():
                if isinstance(branch, Mapping) and branch.get("type") == "null":
                    continue
                yield from self._walk(branch, value, path, parts, budget, update=update)
        if isinstance(value, dict):
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            for k, v in value.items():
                sub = props.get(k) if isinstance(props, Mapping) else None
                if sub is None and isinstance(extra, Mapping):
                    sub = extra
                if sub is not None:
                    yield from self._walk(sub, v, f"{path}.{k}" if path else k, (*parts, k),
                                          budget, update=update)
        elif isinstance(value, list):
            items = node.get("items")
            if isinstance(items, Mapping):
                for i, v in enumerate(value):
                    yield from self._walk(items, v, f"{path}[{i}]", (*parts, i), budget,
                                          update=update)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float)}


def _typed_as_declared(node: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value`` has its node's declared type. One that has not (an unchanged
    update brings it back, its type error ratcheted) makes a rule fail to evaluate
    ("invalid data, expected an array for the provided schema with type=array"): an
    evaluation error, appended to the errors before any ratcheting
    (apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``,
    ``validateExpressions``)."""
    kinds = _JSON_TYPES.get(str(node.get("type")))
    if kinds is None or node.get("x-kubernetes-int-or-string"):
        return True
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


def _message_for(node: Mapping[str, Any], rule: str) -> str:
    for entry in node.get("x-kubernetes-validations") or ():
        if isinstance(entry, Mapping) and entry.get("rule") == rule:
            msg = entry.get("message")
            if isinstance(msg, str) and msg:
                return f"{msg} (rule: {rule})"
    return f"failed rule: {rule}"


_COMPILED: dict[int, Any] = {}


def _compiled(node: Mapping[str, Any], path: str, resolve: Any) -> Any:
    from compatfuzz.strategies._cel import compile_rules

    key = id(node)
    hit = _COMPILED.get(key)
    if hit is None or hit[0] is not node:
        hit = (node, compile_rules(node, path=path, resolve=resolve))
        _COMPILED[key] = hit
    return hit[1]


def _has_rules(node: Any, resolve: Any, seen: set[int]) -> bool:
    if isinstance(node, Mapping):
        if id(node) in seen:
            return False
        seen.add(id(node))
        if "x-kubernetes-validations" in node:
            return True
        ref = node.get("$ref")
        if isinstance(ref, str) and resolve is not None and _has_rules(resolve(ref), resolve,
                                                                        seen):
            return True
        return any(_has_rules(v, resolve, seen) for v in node.values())
    if isinstance(node, list):
        return any(_has_rules(v, resolve, seen) for v in node)
    return False


@lru_cache(maxsize=256)
def _rules(schema: Schema) -> _Rules:
    return _Rules(schema)


def _scalar_key(x: Any) -> Any:
    if isinstance(x, dict | list):
        return json.dumps(x, sort_keys=True, separators=(",", ":"))
    # unstructured JSON: an integer is an int64, anything else with a point a float64
    return (type(x).__name__, x)


def _list_types(node: Node | None, value: Any, path: str, out: list[str]) -> None:
    """``ValidateListSetsAndMaps``: duplicates in list-type set and map lists."""
    if node is None:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            sub = node.properties.get(k)
            if sub is None and node.has_additional:
                sub = node.additional
            _list_types(sub, v, f"{path}.{k}" if path else k, out)
    elif isinstance(value, list):
        if node.list_type in ("set", "map") and len(value) > 1:
            seen: set[Any] = set()
            for i, item in enumerate(value):
                if node.list_type == "set":
                    key = _scalar_key(item)
                elif isinstance(item, dict):
                    key = tuple(_scalar_key(item.get(k)) for k in node.map_keys)
                else:
                    continue
                if key in seen:
                    out.append(f"{path}[{i}]: Duplicate value: {json.dumps(item)}")
                seen.add(key)
        for i, item in enumerate(value):
            _list_types(node.items, item, f"{path}[{i}]", out)


def validation_errors(obj: Any, schema: Schema, limit: int = 20) -> list[str]:
    """Return up to ``limit`` messages (``path: reason``) for what the server would reject."""
    errors = sorted(schema.validator.iter_errors(obj),
                    key=lambda e: [str(p) for p in e.absolute_path])
    out = [f"{_path_text(e.absolute_path)}: {e.message}" for e in errors[:limit]]
    duplicates: list[str] = []
    _list_types(structural(schema), obj, "", duplicates)
    out.extend(duplicates[:max(0, limit - len(out))])
    if len(out) < limit:
        for message in _rules(schema).errors(obj):
            out.append(message)
            if len(out) >= limit:
                break
    return out


def beyond_json_schema(obj: Any, schema: Schema) -> str | None:
    """The first error the server finds in ``obj`` that a JSON Schema validator does not:
    a duplicate in a list-type set or map, or a failed CEL rule; ``None`` when there is
    none. What a value must also pass to stand for "valid" in a witness."""
    duplicates: list[str] = []
    _list_types(structural(schema), obj, "", duplicates)
    if duplicates:
        return duplicates[0]
    return next(_rules(schema).errors(obj), None)


def update_errors(obj: Any, schema: Schema, limit: int = 20, *, old: Any = None
                  ) -> list[str]:
    """What the server refuses on an update that writes ``obj`` back unchanged.

    ``obj`` is the request as decoded (pruned, defaulted by its version's schema);
    ``old`` what the client read (default: ``obj``). The two differ by the defaults the
    request's version adds, which the stored object, defaulted in the storage version
    only, lacks: the value holding them is then not unchanged (Cluster API's v1beta1
    ``rolloutStrategy`` default under KubeadmControlPlaneTemplate's
    ``spec.template.spec``).

    Validation ratcheting (on by default since Kubernetes 1.30, GA in 1.33) turns the
    errors of a value into warnings when the value is the old one's, DeepEqual, *and*
    can be correlated with it: kube-openapi's errors and CEL rules alike
    (apiextensions-apiserver ``pkg/apiserver/validation/ratcheting.go``,
    ``ratchetingValueValidator.Validate``; ``pkg/registry/customresource/strategy.go``,
    ``ValidateUpdate``, which also skips the list-type duplicates check when the old
    object has them). So an unchanged update is refused only for an error (``required``,
    ``allOf``, a false CEL rule, ...) whose nearest correlated value holds a field no
    schema declares (:func:`_ratcheted`), such as the root (its ``metadata``) or
    ``x-kubernetes-preserve-unknown-fields`` content, and for a CEL rule that fails to
    evaluate (:func:`_typed_as_declared`) or runs out of cost. Found by the real server
   : it took back ``spec.poolRef`` without B's required ``apiGroup``, but not
    Cluster API's v1beta1 ``extraArgs`` map under v1beta2's list rule.
    """
    root = structural(schema)
    before = obj if old is None else old
    errors = sorted((e for e in schema.validator.iter_errors(obj)
                     if not _ratcheted(obj, before, root, tuple(e.absolute_path))),
                    key=lambda e: [str(p) for p in e.absolute_path])
    out = [f"{_path_text(e.absolute_path)}: {e.message}" for e in errors[:limit]]
    if len(out) < limit:
        for parts, message, false_rule in _rules(schema).located(obj, update=True):
            if not (false_rule and _ratcheted(obj, before, root, parts)):
                out.append(message)
                if len(out) >= limit:
                    break
    return out


def _ratcheted(obj: Any, before: Any, root: Node, parts: tuple[str | int, ...]) -> bool:
    """Whether an unchanged update's error at ``parts`` is excused: the nearest value on
    the way there that has a correlated old value (``CorrelatedObject.Key``/``Index``:
    a declared field; an item of a list that is not ``set`` or ``atomic``, in a ``map``
    list the first old item with its keys, ``MakeMapList``) compares equal to it
    (``CachedDeepEqual``, k8s.io/apiserver ``pkg/cel/common/equality.go``).
    An item that cannot be correlated is validated without ratcheting and its errors
    rise to that nearest value, which turns them into warnings when equal
    (``ratchetingValueValidator.Validate``; CEL's ``nearestParentCorrelation``).
    ``before`` is the old object: what was read, ``obj`` without the request's defaults."""
    if not parts:
        return False  # the root holds metadata's uid, resourceVersion...: no schema's
    node: Node = root
    value, old = obj, before
    for part in parts:
        if isinstance(part, int):
            if (node.list_type in ("set", "atomic") or node.items is None
                    or not isinstance(value, list)):
                break  # correlateOldValueForChildAtNewIndex: not correlatable
            twin = (_map_twin(old, value[part], node.map_keys) if node.list_type == "map"
                    else old[part] if isinstance(old, list) and part < len(old)
                    else _UNCORRELATED)
            if twin is _UNCORRELATED:
                break
            node, value, old = node.items, value[part], twin
        else:
            sub = _field(node, part) if isinstance(value, dict) else None
            if sub is None or not isinstance(old, dict):
                break
            node, value, old = sub, value.get(part), old.get(part)
    return node is not root and _equal_to_old(value, old, node)


_UNCORRELATED = object()


def _map_twin(old: Any, item: Any, keys: tuple[str, ...]) -> Any:
    """The old item a ``map`` list item is correlated with: the first one with its keys
    (``mapListImpl.Get``, ``pkg/cel/common/maplist.go``), or none."""
    if not isinstance(item, dict) or not isinstance(old, list) or not keys \
            or any(k not in item for k in keys):
        return _UNCORRELATED
    key = tuple(_scalar_key(item[k]) for k in keys)
    for candidate in old:
        if isinstance(candidate, dict) and all(k in candidate for k in keys) and \
                tuple(_scalar_key(candidate[k]) for k in keys) == key:
            return candidate
    return _UNCORRELATED


def _field(node: Node, key: str) -> Node | None:
    """The schema ``CorrelatedObject.Key`` correlates ``key`` by: a property, else
    ``additionalProperties``' schema; none for an undeclared field."""
    sub = node.properties.get(key)
    if sub is None and node.has_additional:
        sub = node.additional
    return sub


def _equal_to_old(value: Any, old: Any, node: Node) -> bool:
    """``CachedDeepEqual``: false where a map holds a field no schema declares (its
    ``Key`` is nil) or a ``map`` list item is not correlated, or correlated with another
    item (a duplicate key). A ``set``/``atomic`` list, or one without ``items``,
    compares as a whole (``reflect.DeepEqual``)."""
    if isinstance(value, dict):
        if not isinstance(old, dict) or len(old) != len(value):
            return False
        for k, v in value.items():
            sub = _field(node, k)
            if sub is None or k not in old or not _equal_to_old(v, old[k], sub):
                return False
        return True
    if isinstance(value, list):
        if not isinstance(old, list) or len(old) != len(value):
            return False
        if node.list_type in ("set", "atomic") or node.items is None:
            return bool(_scalar_key(value) == _scalar_key(old))
        for i, v in enumerate(value):
            twin = _map_twin(old, v, node.map_keys) if node.list_type == "map" else old[i]
            if twin is _UNCORRELATED or not _equal_to_old(v, twin, node.items):
                return False
        return True
    return bool(_scalar_key(value) == _scalar_key(old))
