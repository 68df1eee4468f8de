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

from compatfuzz.apiserver._structural import Node, structural
from compatfuzz.schema import Schema

__all__ = ["update_errors", "validation_errors"]

#: Where ratcheting never excuses an error, changed or not: under these keywords
#: (kubernetes/website content/en/docs/tasks/extend-kubernetes/custom-resources/
#: custom-resource-definitions.md, "Validation ratcheting"; apiextensions-apiserver
#: pkg/apiserver/validation/ratcheting.go)
_NOT_RATCHETED = ("allOf", "oneOf", "anyOf", "not")


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
        from compatfuzz.strategies._cel_cost import RUNTIME_BUDGET

        if self.any:
            yield from self._walk(self.root, obj, "", set(), [RUNTIME_BUDGET])

    def _walk(self, node: Any, value: Any, path: str, seen: set[int],
              budget: list[int]) -> Iterator[str]:
        if not isinstance(node, Mapping):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and self.resolve is not None:
            node = {**self.resolve(ref), **{k: v for k, v in node.items() if k != "$ref"}}
        if "x-kubernetes-validations" in node and value is not None:
            if budget[0] <= 0:
                return  # the budget ran out: no further rule runs
            rules = _compiled(node, path or "self", self.resolve)
            failed, spent = rules.outcome(value, budget=budget[0])
            budget[0] -= spent
            for rule, why in failed:
                message = f"{why} (rule: {rule})" if why else _message_for(node, rule)
                yield f"{path or '<root>'}: {message}"
        for key in ("anyOf", "allOf", "oneOf"):
            for branch in node.get(key) or ():
                if isinstance(branch, Mapping) and branch.get("type") == "null":
                    continue
                yield from self._walk(branch, value, path, seen, budget)
        if isinstance(value, dict):
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            for k, v in value.items():
                sub = props.get(k) if isinstance(props, Mapping) else None
                if sub is None and isinstance(extra, Mapping):
                    sub = extra
                if sub is not None:
                    yield from self._walk(sub, v, f"{path}.{k}" if path else k, seen, budget)
        elif isinstance(value, list):
            items = node.get("items")
            if isinstance(items, Mapping):
                for i, v in enumerate(value):
                    yield from self._walk(items, v, f"{path}[{i}]", seen, budget)


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


def update_errors(obj: Any, schema: Schema, limit: int = 20) -> list[str]:
    """What the server refuses on an update that writes ``obj`` back unchanged.

    Since validation ratcheting (beta on by default in Kubernetes 1.30, GA in 1.33) an
    error found in a part of the object equal to the stored one is dropped
    (apiextensions-apiserver pkg/apiserver/validation/ratcheting.go, by correlated
    subtrees). In an unchanged update only the root object and its ``metadata`` differ
    (resourceVersion, managedFields), so what stays is what is found there (a root
    ``required`` field such as ``spec``) and what ratcheting never excuses: anything
    under ``allOf``/``oneOf``/``anyOf``/``not``. A missing field required *inside*
    ``spec`` is ratcheted: the real kube-apiserver 1.37 takes that update (issue 18's
    benchmark: it refuses a missing root ``spec``, not a missing ``spec.clusterName``).
    """
    if not _composes(schema) and isinstance(obj, dict):
        # the usual CRD: only the root's required fields and metadata can block it, so
        # no need to validate the (ratcheted) rest on every round trip
        root = schema.root
        out = [f"<root>: {k!r} is a required property"
               for k in root.get("required") or () if k not in obj]
        meta = (root.get("properties") or {}).get("metadata")
        if isinstance(meta, Mapping) and "metadata" in obj:
            sub = schema.validator.evolve(schema={**meta, "$defs": root.get("$defs", {})})
            out += [f"{_path_text(['metadata', *e.absolute_path])}: {e.message}"
                    for e in sub.iter_errors(obj["metadata"])]
        return out[:limit]
    errors = sorted((e for e in schema.validator.iter_errors(obj)
                     if not e.absolute_path or e.absolute_path[0] == "metadata"
                     or any(p in _NOT_RATCHETED for p in e.schema_path)),
                    key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_path_text(e.absolute_path)}: {e.message}" for e in errors[:limit]]


def _composes(schema: Schema) -> bool:
    """Whether ``schema`` uses allOf/oneOf/anyOf/not anywhere (memoised per document)."""
    key = id(schema.root)
    hit = _COMPOSES.get(key)
    if hit is None or hit[0] is not schema.root:
        text = json.dumps(schema.root, sort_keys=True, default=str)
        hit = (schema.root, any(f'"{k}":' in text for k in _NOT_RATCHETED))
        _COMPOSES[key] = hit
    return hit[1]


_COMPOSES: dict[int, tuple[Any, bool]] = {}
