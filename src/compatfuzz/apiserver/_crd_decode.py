"""Decode a CRD's ``openAPIV3Schema`` as the API server decodes it into its Go types.

The server reads a CRD body into ``apiextensions/v1.JSONSchemaProps``
(k8s.io/apiextensions-apiserver ``pkg/apis/apiextensions/v1/types_jsonschema.go`` and
``marshal.go``) and converts it to the internal type before validating. What that does to a
schema, and what this module reproduces on the JSON:

* a keyword the type does not have (``const``, ``if``, ``propertyNames``) is dropped, with
  the warning the strict decoder gives (``unknown field "..."``): the server validates as if
  it were not there. Below ``items``, ``additionalProperties``, ``additionalItems`` and
  ``dependencies`` the drop is silent: those types unmarshal themselves with the
  non-strict ``encoding/json``;
* ``null`` leaves a field unset, and so do ``""`` and ``false`` for fields that are not
  pointers (``description``, ``nullable``): the validation code cannot tell them apart;
* ``items`` is a schema, an array of schemas, or (anything else) an empty value;
  ``additionalProperties`` / ``additionalItems`` are a boolean or a schema;
* a value of the wrong JSON type (``type: 5``, ``maxLength: 1.5``) makes the whole body
  undecodable: a 400 before any validation, reported here as a ``Decode error``.

The decoded schema is a plain ``dict`` keyed as in the document, so the rest of the port
(and the project's pruning/validation model) reads it like any CRD schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compatfuzz.apiserver._crd_problem import DECODE, CRDProblem

__all__ = ["DecodeError", "decode_schema", "go_type_name", "semantic", "semantic_equal"]


class DecodeError(Exception):
    """The body does not decode (``json: cannot unmarshal ...``)."""

    def __init__(self, problem: CRDProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def go_type_name(value: Any) -> str:
    """encoding/json's name of a JSON value's kind (``UnmarshalTypeError.Value``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _fail(path: str, value: Any, go_type: str) -> DecodeError:
    text = (f"json: cannot unmarshal {go_type_name(value)} into Go struct field "
            f"{path} of type {go_type}")
    return DecodeError(CRDProblem(path, DECODE, text))


# field kinds: s string, p *string, b bool, pb *bool, i *int64, f *float64, sl []string,
# j *JSON, jl []JSON, S *schema, SL []schema, SM map[string]schema, I items, B orBool,
# D dependencies, X externalDocs, V validations
_FIELDS: dict[str, str] = {
    "id": "s", "$schema": "s", "$ref": "p", "description": "s", "type": "s",
    "nullable": "b", "format": "s", "title": "s", "default": "j", "maximum": "f",
    "exclusiveMaximum": "b", "minimum": "f", "exclusiveMinimum": "b", "maxLength": "i",
    "minLength": "i", "pattern": "s", "maxItems": "i", "minItems": "i", "uniqueItems": "b",
    "multipleOf": "f", "enum": "jl", "maxProperties": "i", "minProperties": "i",
    "required": "sl", "items": "I", "allOf": "SL", "oneOf": "SL", "anyOf": "SL", "not": "S",
    "properties": "SM", "additionalProperties": "B", "patternProperties": "SM",
    "dependencies": "D", "additionalItems": "B", "definitions": "SM", "externalDocs": "X",
    "example": "j", "x-kubernetes-preserve-unknown-fields": "pb",
    "x-kubernetes-embedded-resource": "b", "x-kubernetes-int-or-string": "b",
    "x-kubernetes-list-map-keys": "sl", "x-kubernetes-list-type": "p",
    "x-kubernetes-map-type": "p", "x-kubernetes-validations": "V",
}
_RULE_FIELDS = {"rule": "s", "message": "s", "messageExpression": "s", "reason": "p",
                "fieldPath": "s", "optionalOldSelf": "pb"}
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _scalar(kind: str, value: Any, path: str) -> tuple[bool, Any]:
    """(keep it, decoded value) for a scalar field."""
    if value is None:
        return False, None
    if kind in ("s", "p"):
        if not isinstance(value, str):
            raise _fail(path, value, "string")
        return kind == "p" or value != "", value
    if kind in ("b", "pb"):
        if not isinstance(value, bool):
            raise _fail(path, value, "bool")
        return kind == "pb" or value, value
    if kind == "i":
        if isinstance(value, bool) or not isinstance(value, int) or not (
                _INT64[0] <= value <= _INT64[1]):
            raise _fail(path, value, "int64")
        return True, value
    if kind == "f":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(path, value, "float64")
        return True, value
    if kind == "sl":
        if not isinstance(value, list):
            raise _fail(path, value, "[]string")
        out = []
        for item in value:
            if item is None:
                out.append("")
            elif not isinstance(item, str):
                raise _fail(path, item, "string")
            else:
                out.append(item)
        return True, out
    if kind == "j":
        return True, value
    if kind == "jl":
        if not isinstance(value, list):
            raise _fail(path, value, "[]v1.JSON")
        return True, list(value)
    raise AssertionError(kind)  # pragma: no cover


def _silent(text: str) -> None:
    """The warning sink below a type with its own ``UnmarshalJSON``."""


def decode_schema(raw: Any, path: str, warn: Callable[[str], None], *,
                  notice: Callable[[dict[str, Any]], None] | None = None
                  ) -> dict[str, Any] | None:
    """The schema node as the server's Go value holds it (``None`` for ``null``).

    ``path`` is the field path of ``raw`` (for messages); ``warn`` receives the strict
    decoder's text for each unknown field; ``notice`` receives each decoded node with a
    ``format`` or an ``x-kubernetes-list-type`` (what the create warnings read), so that
    they need no walk of their own.

    Raises:
        DecodeError: a value of the wrong JSON type.
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail(path, raw, "v1.JSONSchemaProps")
    out: dict[str, Any] = {}
    for k, v in raw.items():
        kind = _FIELDS.get(k)
        # the commonest fields first, without a path (most of a big CRD's keys)
        if kind == "s" and isinstance(v, str):
            if v:
                out[k] = v
            continue
        if kind == "j" and v is not None:
            out[k] = v
            continue
        sub = f"{path}.{k}"
        if kind is None:
            warn(f'unknown field "{sub}"')
            continue
        if kind == "S":
            node = decode_schema(v, sub, warn, notice=notice)
            if node is not None:
                out[k] = node
        elif kind == "SL":
            if v is None:
                continue
            if not isinstance(v, list):
                raise _fail(sub, v, "[]v1.JSONSchemaProps")
            out[k] = [decode_schema(x, f"{sub}[{i}]", warn, notice=notice) or {}
                      for i, x in enumerate(v)]
        elif kind == "SM":
            if v is None:
                continue
            if not isinstance(v, dict):
                raise _fail(sub, v, "map[string]v1.JSONSchemaProps")
            out[k] = {name: decode_schema(x, f"{sub}.{name}", warn, notice=notice) or {}
                      for name, x in v.items()}
        elif kind == "I":
            if isinstance(v, dict):
                out[k] = decode_schema(v, sub, _silent, notice=notice)
            elif isinstance(v, list):
                out[k] = [decode_schema(x, f"{sub}[{i}]", _silent, notice=notice) or {}
                          for i, x in enumerate(v)]
            elif v is not None:
                out[k] = _EMPTY_ITEMS
        elif kind == "B":
            if v is None:
                continue
            if isinstance(v, bool):
                out[k] = v
            elif isinstance(v, dict):
                out[k] = decode_schema(v, sub, _silent, notice=notice)
            else:
                raise DecodeError(CRDProblem(sub, DECODE, "boolean or JSON schema expected"))
        elif kind == "D":
            if v is None:
                continue
            if not isinstance(v, dict):
                raise _fail(sub, v, "v1.JSONSchemaDependencies")
            deps: dict[str, Any] = {}
            for name, x in v.items():
                if isinstance(x, dict):
                    deps[name] = decode_schema(x, f"{sub}.{name}", _silent, notice=notice)
                elif isinstance(x, list):
                    deps[name] = _scalar("sl", x, f"{sub}.{name}")[1]
                elif x is not None:
                    raise DecodeError(CRDProblem(sub, DECODE,
                                                 "JSON schema or string array expected"))
                else:
                    deps[name] = []
            out[k] = deps
        elif kind == "X":
            if v is None:
                continue
            if not isinstance(v, dict):
                raise _fail(sub, v, "v1.ExternalDocumentation")
            docs = {}
            for dk, dv in v.items():
                if dk not in ("description", "url"):
                    warn(f'unknown field "{sub}.{dk}"')
                    continue
                keep, value = _scalar("s", dv, f"{sub}.{dk}")
                if keep:
                    docs[dk] = value
            out[k] = docs
        elif kind == "V":
            if v is None:
                continue
            if not isinstance(v, list):
                raise _fail(sub, v, "v1.ValidationRules")
            rules: list[dict[str, Any]] = []
            for i, entry in enumerate(v):
                at = f"{sub}[{i}]"
                if entry is None:
                    rules.append({})
                    continue
                if not isinstance(entry, dict):
                    raise _fail(at, entry, "v1.ValidationRule")
                rule: dict[str, Any] = {}
                for rk, rv in entry.items():
                    rkind = _RULE_FIELDS.get(rk)
                    if rkind is None:
                        warn(f'unknown field "{at}.{rk}"')
                        continue
                    keep, value = _scalar(rkind, rv, f"{at}.{rk}")
                    if keep:
                        rule[rk] = value
                rules.append(rule)
            out[k] = rules
        else:
            keep, value = _scalar(kind, v, sub)
            if keep:
                out[k] = value
    if notice is not None and ("format" in out or "x-kubernetes-list-type" in out):
        notice(out)
    return out


class _EmptyItems(dict[str, Any]):
    """``items`` that is neither a schema nor an array: a non-nil, empty Go value."""


_EMPTY_ITEMS = _EmptyItems()


def items_schema(node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``Items.Schema``: the items schema, ``None`` for an array of schemas or none."""
    items = node.get("items")
    if isinstance(items, _EmptyItems) or not isinstance(items, dict):
        return None
    return items


#: keywords holding JSON values, not Go structs: compared as they are
_VALUES = frozenset({"default", "example", "enum"})


def semantic(value: Any) -> Any:
    """A value with empty lists and maps dropped, for ``apiequality.Semantic.DeepEqual``
    (which holds a nil and an empty slice or map equal); JSON values (``default``,
    ``example``, ``enum``) are kept as they are."""
    if isinstance(value, dict):
        return {k: v if k in _VALUES else semantic(v) for k, v in value.items()
                if not (isinstance(v, list | dict) and not v
                        and (k not in _VALUES or k == "enum"))}
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value


def _kept(k: str, v: Any) -> bool:
    return not (isinstance(v, list | dict) and not v and (k not in _VALUES or k == "enum"))


def semantic_equal(a: Any, b: Any) -> bool:
    """``semantic(a) == semantic(b)``, without building either: it stops at the first
    difference (two versions' schemas of a big CRD differ early, and one version is
    compared with itself)."""
    if a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k, v in a.items() if _kept(k, v)]
        if len(keys) != sum(1 for k, v in b.items() if _kept(k, v)):
            return False
        return all(k in b and (a[k] == b[k] if k in _VALUES else semantic_equal(a[k], b[k]))
                   for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return bool(semantic(a) == semantic(b))
    return bool(a == b)
