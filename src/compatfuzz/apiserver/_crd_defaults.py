"""Whether a CRD schema's defaults are what the API server requires of them.

A port of ``ValidateDefaults`` (k8s.io/apiextensions-apiserver v0.37.2
``pkg/apiserver/schema/defaulting/validation.go``) with ``requirePrunedDefaults``, as the
create path calls it. Every ``default`` reachable through ``properties`` and ``items`` (not
``additionalProperties``: upstream does not look there) must

* have no field the schema would prune (``must not have unknown fields``),
* carry well-formed ObjectMeta where it holds an embedded resource,
* validate against its node (OpenAPI with kube-openapi formats), and then against the
  node's CEL rules, with ``oldSelf`` the default itself.

A default inside the ``metadata``/``apiVersion``/``kind`` of an embedded resource is judged
as part of a whole object (``apiVersion: validation/v1, kind: Validation``) built around it
(``surroundingobject.go``): it must make valid metadata. The checks use the project's model of
the server (``_prune``, ``_objectmeta``, ``_validate``), which its own conformance suite
holds to the upstream code.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from compatfuzz.apiserver._crd_decode import items_schema
from compatfuzz.apiserver._crd_problem import (
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    CRDProblem,
    child,
    invalid,
    key,
    problem,
)

__all__ = ["validate_defaults"]

_META = ("metadata", "apiVersion", "kind")


def validate_defaults(path: str, schema: Mapping[str, Any]) -> list[CRDProblem]:
    """``ValidateDefaults(path, schema, isResourceRoot=true, requirePrunedDefaults=true)``."""
    root = dict(schema)
    root["x-kubernetes-embedded-resource"] = True
    errs: list[CRDProblem] = []
    _walk(path, root, root, (), inside_meta=False, errs=errs)
    return errs


def _walk(path: str, s: Mapping[str, Any] | None, root: Mapping[str, Any],
          around: tuple[str | int, ...], *, inside_meta: bool, errs: list[CRDProblem]
          ) -> None:
    if s is None:
        return
    if s.get("x-kubernetes-embedded-resource"):
        inside_meta = False
        root = s
        around = ()
    default = s.get("default")
    if default is not None:
        _check(path, s, default, root, around, inside_meta=inside_meta, errs=errs)
    items = items_schema(s)
    if items is not None:
        _walk(child(path, "items"), items, root, (*around, 0), inside_meta=inside_meta,
              errs=errs)
    for name, sub in (s.get("properties") or {}).items():
        sub_meta = inside_meta or (bool(s.get("x-kubernetes-embedded-resource"))
                                   and name in _META)
        _walk(key(child(path, "properties"), name), sub, root, (*around, name),
              inside_meta=sub_meta, errs=errs)


def _surrounding(around: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """``SurroundingObjectFunc``: the whole object a value sits in."""
    for step in reversed(around):
        value = [value] if isinstance(step, int) else {step: value}
    obj = value if isinstance(value, dict) else {}
    return {"apiVersion": "validation/v1", "kind": "Validation", **obj}


def _check(path: str, s: Mapping[str, Any], default: Any, root: Mapping[str, Any],
           around: tuple[str | int, ...], *, inside_meta: bool, errs: list[CRDProblem]
           ) -> None:
    from compatfuzz.apiserver._objectmeta import Rejected, coerce
    from compatfuzz.apiserver._prune import prune

    at = child(path, "default")
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if inside_meta:
        try:
            coerce(_surrounding(around, copy.deepcopy(default)), root, root=True)
        except Rejected as exc:
            errs.append(invalid(at, default, f"must result in valid metadata: {exc}"))
            return
    else:
        _, pruned = prune(default, s, root=embedded)
        if pruned:
            errs.append(invalid(at, default, "must not have unknown fields"))
        try:
            coerce(default, s, root=embedded)
        except Rejected as exc:
            where = child(at, exc.path) if exc.path else at
            errs.append(invalid(where, default, str(exc).split(": ", 1)[-1]))
            return
    openapi = _openapi_errors(at, s, default)
    if openapi:
        errs.extend(openapi)
        return
    errs.extend(_cel_errors(at, s, default, embedded))


def _schema(s: Mapping[str, Any]) -> Any:
    from compatfuzz.schema import Schema, normalize

    node = {k: v for k, v in s.items() if k != "x-kubernetes-validations"}
    return Schema(normalize(node, dialect="openapi-3.0"), name="default", kubernetes=True,
                  meta={"openapi": node})


def _sub_path(at: str, parts: Any) -> str:
    """kube-openapi names a value ``a.0.b`` below the default; the server adds that name
    as one child (``kubeOpenAPIResultToFieldErrors``)."""
    name = ".".join(str(p) for p in parts)
    return child(at, name) if name else at


_KINDS = {"required": REQUIRED, "enum": NOT_SUPPORTED, "maxLength": TOO_LONG,
          "maxItems": TOO_MANY, "maxProperties": TOO_MANY}


def _kube_type_excuses(e: Any) -> bool:
    """kube-openapi's type validator lets a string or an array through a node with a
    ``format`` unless the node is numeric (``validate/type.go``: "if !(number or integer)
    && format != "" && (kind == String || kind == Slice) return"): a quirk the JSON Schema
    validator does not have."""
    if e.validator != "type" or not isinstance(e.schema, Mapping):
        return False
    types = e.schema.get("type")
    types = set(types) if isinstance(types, list) else {types}
    return (bool(e.schema.get("format")) and not types & {"number", "integer"}
            and isinstance(e.instance, str | list))


def _openapi_errors(at: str, s: Mapping[str, Any], default: Any) -> list[CRDProblem]:
    """kube-openapi's verdict on ``default`` against the node (without its CEL rules)."""
    schema = _schema(s)
    out: list[CRDProblem] = []
    for e in sorted(schema.validator.iter_errors(default),
                    key=lambda e: [str(p) for p in e.absolute_path]):
        if _kube_type_excuses(e):
            continue
        where = _sub_path(at, e.absolute_path)
        kind = _KINDS.get(str(e.validator), INVALID)
        if kind == REQUIRED:
            missing = e.message.split("'")[1] if "'" in e.message else ""
            where = child(where, missing) if missing else where
            out.append(problem(REQUIRED, where))
        else:
            out.append(problem(kind, where, e.instance, e.message))
    return out


def _cel_errors(at: str, s: Mapping[str, Any], default: Any, root: bool) -> list[CRDProblem]:
    """The node's CEL rules (and those below it) on ``default``."""
    from compatfuzz.apiserver._validate import _Rules
    from compatfuzz.schema import Schema

    node = dict(s)
    schema = Schema(node, name="default", kubernetes=True, meta={"openapi": node})
    rules = _Rules(schema)
    out: list[CRDProblem] = []
    for parts, message, _ in rules.located(default):
        where = _sub_path(at, parts)
        text = message.split(": ", 1)[-1] if ": " in message else message
        out.append(problem(INVALID, where, _value_at(default, parts), text))
    return out


def _value_at(value: Any, parts: Any) -> Any:
    for part in parts:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value
