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
the server (``prune`` and ``coerce`` of ``_structural``, ``_validate``), which its own
conformance suite holds to the upstream code.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from compatfuzz.apiserver._crd_decode import items_schema
from compatfuzz.apiserver._crd_problem import (
    INVALID,
    NOT_SUPPORTED,
    OMIT,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    CRDProblem,
    child,
    compile_detail,
    go_json,
    invalid,
    key,
    not_supported,
    problem,
    required,
)
from compatfuzz.apiserver._dns import is_dns1035_label
from compatfuzz.errors import CompatfuzzError

__all__ = ["validate_defaults"]

_META = ("metadata", "apiVersion", "kind")


def validate_defaults(path: str, schema: Mapping[str, Any]) -> list[CRDProblem]:
    """``ValidateDefaults(path, schema, isResourceRoot=true, requirePrunedDefaults=true)``."""
    root = dict(schema)
    root["x-kubernetes-embedded-resource"] = True
    errs: list[CRDProblem] = []
    _walk(path, root, root, (), inside_meta=False, errs=errs, passed=set())
    return errs


def _walk(path: str, s: Mapping[str, Any] | None, root: Mapping[str, Any],
          around: tuple[str | int, ...], *, inside_meta: bool, errs: list[CRDProblem],
          passed: set[str]) -> None:
    if s is None:
        return
    if s.get("x-kubernetes-embedded-resource"):
        inside_meta = False
        root = s
        around = ()
    default = s.get("default")
    if default is not None:
        # Outside embedded metadata a default's verdict depends only on its node and
        # itself, and big CRDs repeat the same few (Kyverno's ClusterPolicy: 79 defaults,
        # 5 distinct): a pair that passed once passes again, without building a
        # validator per node (most of the time validate_crd spent on such CRDs).
        memo = "" if inside_meta else _memo_key(s, default)
        if not memo or memo not in passed:
            before = len(errs)
            _check(path, s, default, root, around, inside_meta=inside_meta, errs=errs)
            if memo and len(errs) == before:
                passed.add(memo)
    items = items_schema(s)
    if items is not None:
        _walk(child(path, "items"), items, root, (*around, 0), inside_meta=inside_meta,
              errs=errs, passed=passed)
    for name, sub in (s.get("properties") or {}).items():
        sub_meta = inside_meta or (bool(s.get("x-kubernetes-embedded-resource"))
                                   and name in _META)
        _walk(key(child(path, "properties"), name), sub, root, (*around, name),
              inside_meta=sub_meta, errs=errs, passed=passed)


def _memo_key(s: Mapping[str, Any], default: Any) -> str:
    """The node (without descriptions, which no check reads) and its default, as text;
    ``""`` when they do not serialise."""
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: v if k in ("default", "example", "enum") else strip(v)
                    for k, v in node.items() if k != "description" or not isinstance(v, str)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    try:
        return json.dumps([strip(s), default], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return ""


def _surrounding(around: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """``SurroundingObjectFunc``: the whole object a value sits in."""
    for step in reversed(around):
        value = [value] if isinstance(step, int) else {step: value}
    obj = value if isinstance(value, dict) else {}
    return {"apiVersion": "validation/v1", "kind": "Validation", **obj}


def _check(path: str, s: Mapping[str, Any], default: Any, root: Mapping[str, Any],
           around: tuple[str | int, ...], *, inside_meta: bool, errs: list[CRDProblem]
           ) -> None:
    from compatfuzz.apiserver._objectmeta import Rejected
    from compatfuzz.apiserver._structural import coerce, prune

    at = child(path, "default")
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if inside_meta:
        whole = _surrounding(around, copy.deepcopy(default))
        try:
            coerce(whole, root, root=True)
        except Rejected as exc:
            errs.append(invalid(at, default, f"must result in valid metadata: {exc}"))
            return
        bad = _meta_errors("", whole, {**root, "x-kubernetes-embedded-resource": True})
        if bad:
            text = bad[0].message if len(bad) == 1 else (
                "[" + ", ".join(p.message for p in bad) + "]")
            errs.append(invalid(at, default, f"must result in valid metadata: {text}"))
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
        bad = _meta_errors(at, default, s)
        if bad:
            errs.extend(bad)
            return
    openapi = _openapi_errors(at, s, default)
    if openapi:
        errs.extend(openapi)
        return
    errs.extend(_cel_errors(at, s, default, embedded))


def _meta_errors(path: str, x: Any, s: Mapping[str, Any] | None) -> list[CRDProblem]:
    """``objectmeta.Validate``: each embedded resource in ``x`` has a well-formed
    ``apiVersion`` and ``kind`` (``pkg/apiserver/schema/objectmeta/validation.go``; the
    ObjectMeta name rules are not ported)."""
    if s is None:
        return []
    out: list[CRDProblem] = []
    if isinstance(x, dict):
        if s.get("x-kubernetes-embedded-resource"):
            out.extend(_embedded_errors(path, x))
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for k, v in x.items():
            if k in props:
                out.extend(_meta_errors(child(path, k), v, props[k]))
            elif isinstance(extra, dict):
                out.extend(_meta_errors(key(path, k), v, extra))
    elif isinstance(x, list):
        items = items_schema(s)
        for i, v in enumerate(x):
            out.extend(_meta_errors(f"{path}[{i}]", v, items))
    return out


def _embedded_errors(path: str, x: Mapping[str, Any]) -> list[CRDProblem]:
    out: list[CRDProblem] = []
    for name in ("apiVersion", "kind"):
        if name not in x:
            out.append(required(child(path, name)))
    for name, v in x.items():
        at = child(path, name)
        if name not in ("apiVersion", "kind"):
            continue
        if not isinstance(v, str):
            out.append(invalid(at, v, "must be a string"))
        elif not v:
            out.append(invalid(at, v, "must not be empty"))
        elif name == "apiVersion" and v.count("/") > 1:
            out.append(invalid(at, v, f"unexpected GroupVersion string: {v}"))
        elif name == "kind" and (dns := is_dns1035_label(v.lower())):
            out.append(invalid(at, v, "may have mixed case, but should otherwise match: "
                               + ",".join(dns)))
    return out


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


_OPENAPI_TYPES = frozenset({"array", "boolean", "integer", "number", "object", "string"})
_KINDS = {"required": REQUIRED, "enum": NOT_SUPPORTED, "maxLength": TOO_LONG,
          "maxItems": TOO_MANY, "maxProperties": TOO_MANY}


def _kube_type_excuses(e: Any) -> bool:
    """kube-openapi's type validator lets a string or an array through a node with a
    ``format`` unless the node is numeric (``validate/type.go``: "if !(number or integer)
    && format != "" && (kind == String || kind == Slice) return"): a quirk the JSON Schema
    validator does not have."""
    if e.validator != "type" or not isinstance(e.schema, dict):
        return False
    types = e.schema.get("type")
    types = set(types) if isinstance(types, list) else {types}
    return (bool(e.schema.get("format")) and not types & {"number", "integer"}
            and isinstance(e.instance, str | list))


def _openapi_errors(at: str, s: Mapping[str, Any], default: Any) -> list[CRDProblem]:
    """kube-openapi's verdict on ``default`` against the node (without its CEL rules)."""
    out: list[CRDProblem] = []
    declared = s.get("type")
    if declared and declared not in _OPENAPI_TYPES and default is not None:
        # a type no value has (``file``): kube-openapi's type validator refuses every value
        actual = _kube_type(default)
        return [problem(INVALID, at, actual, f' in body must be of type {declared}: "{actual}"')]
    try:
        schema = _schema(s)
        found = sorted(schema.validator.iter_errors(default),
                       key=lambda e: [str(p) for p in e.absolute_path])
    except CompatfuzzError:  # a schema the project's validator cannot build: no verdict
        return out
    for e in found:
        if _kube_type_excuses(e):
            continue
        where = _sub_path(at, e.absolute_path)
        kind = _KINDS.get(str(e.validator), INVALID)
        if e.validator == "type":
            name = ".".join(str(p) for p in e.absolute_path)
            actual = _kube_type(e.instance)
            wanted = e.schema.get("type") if isinstance(e.schema, dict) else None
            wanted = ",".join(t for t in wanted if t != "null") if isinstance(
                wanted, list) else wanted
            fmt = e.schema.get("format") if isinstance(e.schema, dict) else None
            if fmt and wanted not in ("integer", "number"):
                # a format-bearing node names the format, and the value's Go format
                wanted, actual = fmt, {"integer": "int64", "number": "float64"}.get(
                    actual, actual)
            out.append(problem(INVALID, where, actual,
                               f'{name} in body must be of type {wanted}: "{actual}"'))
        elif kind == REQUIRED:
            missing = e.message.split("'")[1] if "'" in e.message else ""
            where = child(where, missing) if missing else where
            out.append(problem(REQUIRED, where))
        elif kind == NOT_SUPPORTED:
            values = [v if isinstance(v, str) else go_json(v) for v in e.validator_value]
            out.append(not_supported(where, e.instance, values))
        elif kind == TOO_LONG:  # field.TooLong: the bound when it is known (not negative)
            bound = e.validator_value
            out.append(problem(TOO_LONG, where, detail=(
                f"may not be more than {bound} bytes" if bound >= 0 else "value is too long")))
        elif kind == TOO_MANY:
            out.append(problem(TOO_MANY, where, detail="has too many items"))
        else:
            name = ".".join(str(p) for p in e.absolute_path)
            value = e.instance
            if e.validator in ("minItems", "minProperties"):
                value = len(value)  # go-openapi reports the count
            out.append(problem(kind, where, value, _go_openapi_message(e, name)))
    return out


def _go_openapi_message(e: Any, name: str) -> str:
    """go-openapi's text for a failed value validation (``errors/schema.go``)."""
    v, want = e.instance, e.validator_value
    texts = {
        "format": f'{name} in body must be of type {want}: "{v}"',
        "pattern": f"{name} in body should match '{want}'",
        "minLength": f"{name} in body should be at least {want} chars long",
        "minItems": f"{name} in body should have at least {want} items",
        "minProperties": f"{name} in body should have at least {want} properties",
        "minimum": f"{name} in body should be greater than or equal to {want}",
        "maximum": f"{name} in body should be less than or equal to {want}",
        "exclusiveMinimum": f"{name} in body should be greater than {want}",
        "exclusiveMaximum": f"{name} in body should be less than {want}",
        "multipleOf": f"{name} in body should be a multiple of {want}",
    }
    return texts.get(str(e.validator), str(e.message))


def _kube_type(value: Any) -> str:
    """kube-openapi's name of a value's type (``validate/type.go``, ``schemaInfoForType``)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _cel_errors(at: str, s: Mapping[str, Any], default: Any, root: bool) -> list[CRDProblem]:
    """The node's CEL rules (and those below it) on ``default``: a rule that does not
    compile fails the default (``rule compile error``), a false rule gives its message."""
    from compatfuzz.apiserver._validate import _Rules
    from compatfuzz.schema import Schema

    out = _compile_errors(at, s, default)
    if out:
        return out
    node = _with_programs(s)
    schema = Schema(node, name="default", kubernetes=True, meta={"openapi": node})
    rules = _Rules(schema)
    try:
        located = list(rules.located(default))
    except CompatfuzzError:  # a rule the evaluator cannot take: no verdict from it
        located = []
    for parts, message, _ in located:
        where = at
        for part in parts:
            where = f"{where}[{part}]" if isinstance(part, int) else child(where, str(part))
        text = message.split(": ", 1)[1] if ": " in message else message
        if text.endswith(")") and " (rule: " in text and not text.startswith("failed rule"):
            text = text[:text.rindex(" (rule: ")]
        value = _value_at(default, parts)  # objects and arrays are not printed
        out.append(problem(INVALID, where, OMIT if isinstance(value, dict | list) else value,
                           text))
    return out


def _with_programs(s: Any) -> Any:
    """``s`` without the rules that have no program (an empty ``rule``: ``compileRule``
    skips it; the schema check refuses it later)."""
    if isinstance(s, list):
        return [_with_programs(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {k: _with_programs(v) for k, v in s.items() if k != "x-kubernetes-validations"}
    rules = [r for r in s.get("x-kubernetes-validations") or ()
             if str(r.get("rule", "")).strip()]
    if rules:
        out["x-kubernetes-validations"] = rules
    return out


def _compile_errors(at: str, s: Mapping[str, Any] | None, value: Any) -> list[CRDProblem]:
    """A rule that does not compile, on a node the default reaches (as ``cel.Validator``
    reports it: ``rule compile error: compilation failed: ...``)."""
    if s is None or value is None:
        return []
    out: list[CRDProblem] = []
    if s.get("x-kubernetes-validations"):
        from compatfuzz.strategies._cel_check import compile_errors

        for entry in s["x-kubernetes-validations"]:
            text = entry.get("rule", "")
            if not text.strip():
                continue  # compileRule: no program and no error (the schema check refuses it)
            problems = compile_errors(text, s, old_self=bool(entry.get("optionalOldSelf")))
            if problems:
                out.append(problem(INVALID, at, _kube_type(value),
                                   f"rule compile error: {compile_detail(problems)}"))
    if isinstance(value, dict):
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k, extra if isinstance(extra, dict) else None)
            out.extend(_compile_errors(child(at, k), sub, v))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_compile_errors(f"{at}[{i}]", items_schema(s), v))
    return out


def _value_at(value: Any, parts: Any) -> Any:
    for part in parts:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value
