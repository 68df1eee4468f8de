"""Mutations of a CRD, one class of API-server refusal (or acceptance) each (issue 30).

Each mutation takes a CRD document and a ``random.Random`` and returns a changed copy, or
``None`` when the document has no place for it. The classes follow the issue's list: a
schema node without ``type``; ``properties`` with ``additionalProperties``; map lists with
missing, unknown, non-scalar, optional or duplicate keys; ``set`` lists of objects; keywords a
structural schema forbids; ``nullable``/non-object ``type`` at the root; defaults of the
wrong type, with unknown fields, or failing the schema or its CEL rules; rule entries
(empty, ``reason``, ``fieldPath``, ``messageExpression``, ``optionalOldSelf``, ``oldSelf``
where it cannot be correlated); CEL compile errors; the CRD's own fields (names, group,
versions, conversion, columns, subresources); and value validations the server *accepts*
(negative lengths, ``minLength > maxLength``, an unsatisfiable ``enum``). A few are
harmless (identity, a ``description``, an unknown keyword) to keep the accepting side
honest.

:func:`synthetic_crd` builds a small CRD from a seed, so that the mutations also run on
schemas no project wrote.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from typing import Any

Doc = dict[str, Any]
Mutation = Callable[[Doc, random.Random], Doc | None]

__all__ = ["MUTATIONS", "synthetic_crd"]


# --- locating nodes --------------------------------------------------------------------

def _versions(doc: Doc) -> list[Doc]:
    return [v for v in doc.get("spec", {}).get("versions", []) if isinstance(v, dict)]


def _roots(doc: Doc) -> list[Doc]:
    out = []
    for v in _versions(doc):
        s = v.get("schema", {}).get("openAPIV3Schema")
        if isinstance(s, dict):
            out.append(s)
    return out


def _walk(node: Any, depth: int = 0) -> Iterator[tuple[Doc, int]]:
    if not isinstance(node, dict):
        return
    yield node, depth
    for sub in (node.get("properties") or {}).values():
        yield from _walk(sub, depth + 1)
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], depth + 1)
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], depth + 1)


def _nodes(doc: Doc, pred: Callable[[Doc], bool] = lambda n: True,
           *, skip_root: bool = False) -> list[Doc]:
    out = []
    for root in _roots(doc):
        for node, depth in _walk(root):
            if skip_root and depth == 0:
                continue
            if pred(node):
                out.append(node)
    return out


def _pick(rnd: random.Random, nodes: list[Doc]) -> Doc | None:
    return rnd.choice(nodes) if nodes else None


def _mutate(fn: Callable[[Doc, random.Random], bool]) -> Mutation:
    def run(doc: Doc, rnd: random.Random) -> Doc | None:
        out = copy.deepcopy(doc)
        return out if fn(out, rnd) else None
    run.__name__ = fn.__name__
    return run


def _is_object(n: Doc) -> bool:
    return n.get("type") == "object" and bool(n.get("properties"))


def _is_array_of_objects(n: Doc) -> bool:
    return (n.get("type") == "array" and isinstance(n.get("items"), dict)
            and n["items"].get("type") == "object" and bool(n["items"].get("properties")))


def _scalar(n: Doc) -> bool:
    return n.get("type") in ("string", "integer", "number", "boolean")


# --- schema-node classes ---------------------------------------------------------------

@_mutate
def no_type(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: "type" in n and not n.get(
        "x-kubernetes-preserve-unknown-fields") and not n.get("x-kubernetes-int-or-string")))
    if node is None:
        return False
    del node["type"]
    return True


@_mutate
def properties_with_additional(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, _is_object, skip_root=True))
    if node is None:
        return False
    node["additionalProperties"] = rnd.choice([{"type": "string"}, False, True])
    return True


@_mutate
def additional_at_root(doc: Doc, rnd: random.Random) -> bool:
    roots = _roots(doc)
    if not roots:
        return False
    rnd.choice(roots)["additionalProperties"] = {"type": "string"}
    return True


@_mutate
def map_list_keys(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, _is_array_of_objects))
    if node is None:
        return False
    items = node["items"]
    props = items["properties"]
    scalars = [k for k, v in props.items() if isinstance(v, dict) and _scalar(v)]
    nonscalars = [k for k, v in props.items() if isinstance(v, dict) and not _scalar(v)]
    choice = rnd.randrange(7)
    node["x-kubernetes-list-type"] = "map"
    node.pop("x-kubernetes-list-map-keys", None)
    if choice == 0:
        pass  # no keys
    elif choice == 1:
        node["x-kubernetes-list-map-keys"] = ["noSuchKey"]
    elif choice == 2 and nonscalars:
        k = rnd.choice(nonscalars)
        node["x-kubernetes-list-map-keys"] = [k]
        items.setdefault("required", [])
        if k not in items["required"]:
            items["required"].append(k)
    elif choice == 3 and scalars:
        k = rnd.choice(scalars)  # optional, no default
        node["x-kubernetes-list-map-keys"] = [k]
        items["required"] = [r for r in items.get("required", []) if r != k] or None
        if items["required"] is None:
            del items["required"]
        props[k].pop("default", None)
    elif choice == 4 and scalars:
        k = rnd.choice(scalars)  # a proper key: the server accepts it
        node["x-kubernetes-list-map-keys"] = [k]
        items["required"] = sorted(set(items.get("required", [])) | {k})
        props[k].pop("nullable", None)
        items.pop("nullable", None)
    elif choice == 5 and scalars:
        k = rnd.choice(scalars)
        node["x-kubernetes-list-map-keys"] = [k, k]
        items["required"] = sorted(set(items.get("required", [])) | {k})
    elif scalars:
        k = rnd.choice(scalars)  # nullable key, or keys without the map type
        node["x-kubernetes-list-map-keys"] = [k]
        items["required"] = sorted(set(items.get("required", [])) | {k})
        if rnd.random() < 0.5:
            props[k]["nullable"] = True
        else:
            node["x-kubernetes-list-type"] = rnd.choice(["atomic", "set", None])
            if node["x-kubernetes-list-type"] is None:
                del node["x-kubernetes-list-type"]
    else:
        return False
    return True


@_mutate
def set_of_objects(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, _is_array_of_objects))
    if node is None:
        return False
    node["x-kubernetes-list-type"] = "set"
    node.pop("x-kubernetes-list-map-keys", None)
    if rnd.random() < 0.3:
        node["items"]["x-kubernetes-map-type"] = "atomic"  # allowed
    else:
        node["items"].pop("x-kubernetes-map-type", None)
    return True


_FORBIDDEN_KEYWORDS: list[tuple[str, Any]] = [
    ("$ref", "#/definitions/x"), ("patternProperties", {"^a": {"type": "string"}}),
    ("definitions", {"x": {"type": "string"}}), ("dependencies", {"a": ["b"]}),
    ("additionalItems", False), ("id", "x"), ("$schema", "http://json-schema.org/schema#"),
    ("uniqueItems", True), ("type", "null"), ("type", "file"),
    ("items", [{"type": "string"}]), ("x-kubernetes-preserve-unknown-fields", False),
    ("x-kubernetes-map-type", "bogus"), ("x-kubernetes-list-type", "bogus"),
    ("x-kubernetes-map-type", "atomic"), ("x-kubernetes-list-type", "atomic"),
    ("x-kubernetes-embedded-resource", True), ("x-kubernetes-int-or-string", True),
    ("x-kubernetes-list-map-keys", ["name"]),
]


@_mutate
def forbidden_keyword(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc))
    if node is None:
        return False
    k, v = rnd.choice(_FORBIDDEN_KEYWORDS)
    node[k] = copy.deepcopy(v)
    return True


_JUNCTOR_CONTENT: list[dict[str, Any]] = [
    {"type": "string"}, {"description": "x"}, {"title": "x"}, {"default": "x"},
    {"nullable": True}, {"additionalProperties": {"type": "string"}},
    {"x-kubernetes-preserve-unknown-fields": True}, {"x-kubernetes-list-type": "atomic"},
    {"x-kubernetes-validations": [{"rule": "true"}]}, {"required": ["x"]},
    {"properties": {"noSuchField": {"minLength": 1}}}, {"properties": {"metadata": {}}},
    {"maxLength": 3}, {"pattern": "("}, {"x-kubernetes-int-or-string": True},
]


@_mutate
def junctor(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc))
    if node is None:
        return False
    name = rnd.choice(["allOf", "anyOf", "oneOf", "not"])
    content = copy.deepcopy(rnd.choice(_JUNCTOR_CONTENT))
    if "properties" in content and node.get("properties") and rnd.random() < 0.5:
        content = {"properties": {rnd.choice(sorted(node["properties"])): {"minLength": 1}}}
    if name == "not":
        node["not"] = content
    else:
        node.setdefault(name, []).append(content)
    return True


@_mutate
def int_or_string_pattern(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: bool(n.get("x-kubernetes-int-or-string"))))
    if node is None:
        node = _pick(rnd, _nodes(doc, _scalar, skip_root=True))
        if node is None:
            return False
        node.pop("type", None)
        node.pop("format", None)
        node["x-kubernetes-int-or-string"] = True
    pattern = [{"type": "integer"}, {"type": "string"}]
    if rnd.random() < 0.5:
        node["anyOf"] = pattern
    else:
        node["allOf"] = [{"anyOf": pattern}]
    if rnd.random() < 0.3:
        node["anyOf" if "anyOf" in node else "allOf"].append({"type": "boolean"})
    return True


@_mutate
def bad_pattern(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") == "string"))
    if node is None:
        return False
    node["pattern"] = rnd.choice(["(", "a{2,1}", "(?=x)", "[z-a]", "\\8", "x**", "^[a-z]+$"])
    return True


@_mutate
def metadata_at_root(doc: Doc, rnd: random.Random) -> bool:
    roots = _roots(doc)
    if not roots:
        return False
    root = rnd.choice(roots)
    root.setdefault("properties", {})
    meta = rnd.choice([
        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
        {"type": "object", "properties": {"labels": {"type": "object"}}},
        {"type": "object", "description": "x"}, {"type": "string"},
        {"type": "object", "properties": {"name": {"type": "string"},
                                          "generateName": {"type": "string"}}},
        {"type": "object", "default": {"name": "x"}},
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    ])
    root["properties"]["metadata"] = copy.deepcopy(meta)
    return True


@_mutate
def kind_api_version(doc: Doc, rnd: random.Random) -> bool:
    roots = _roots(doc)
    if not roots:
        return False
    root = rnd.choice(roots)
    root.setdefault("properties", {})[rnd.choice(["kind", "apiVersion"])] = {
        "type": rnd.choice(["integer", "string", "object"])}
    return True


@_mutate
def embedded_resource(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") in ("object", "string"),
                             skip_root=True))
    if node is None:
        return False
    node["x-kubernetes-embedded-resource"] = True
    choice = rnd.randrange(4)
    if choice == 0:
        node["x-kubernetes-preserve-unknown-fields"] = True
    elif choice == 1:
        node["properties"] = {"metadata": {"type": "object", "properties": {
            "name": {"type": "string", "default": rnd.choice(["ok", "Not_OK", 5])}}}}
        node["type"] = "object"
    elif choice == 2:
        node["additionalProperties"] = {"type": "string"}
    return True


# --- the root ----------------------------------------------------------------------------

@_mutate
def root_shape(doc: Doc, rnd: random.Random) -> bool:
    roots = _roots(doc)
    if not roots:
        return False
    root = rnd.choice(roots)
    choice = rnd.randrange(5)
    if choice == 0:
        root["nullable"] = True
    elif choice == 1:
        root["type"] = rnd.choice(["string", "array", "integer"])
    elif choice == 2:
        root["enum"] = [{}]
    elif choice == 3:
        root["x-kubernetes-map-type"] = "atomic"
    else:
        root["description"] = "changed"
    return True


# --- defaults ----------------------------------------------------------------------------

def _wrong_type(node: Doc, rnd: random.Random) -> Any:
    t = node.get("type")
    return rnd.choice([v for v in ("x", 3, 1.5, True, [1], {"a": 1})
                       if not _fits(t, v)] or ["x"])


def _fits(t: Any, v: Any) -> bool:
    return {"string": isinstance(v, str), "integer": isinstance(v, int)
            and not isinstance(v, bool), "number": isinstance(v, int | float)
            and not isinstance(v, bool), "boolean": isinstance(v, bool),
            "array": isinstance(v, list), "object": isinstance(v, dict)}.get(str(t), True)


@_mutate
def default_value(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: "type" in n, skip_root=True))
    if node is None:
        return False
    t = node.get("type")
    choice = rnd.randrange(6)
    if choice == 0:
        node["default"] = _wrong_type(node, rnd)
    elif choice == 1 and t == "object":
        node["default"] = {"surelyUnknownField": 1}
    elif choice == 2 and t == "string":
        if node.get("enum"):
            node["default"] = "not-in-the-enum"
        elif node.get("maxLength") is not None:
            node["default"] = "x" * (int(node["maxLength"]) + 1)
        elif node.get("pattern"):
            node["default"] = "\u0000?\u0000 unlikely"
        else:
            node["default"] = "ok"
    elif choice == 3 and t == "integer":
        if node.get("maximum") is not None:
            node["default"] = int(node["maximum"]) + 1
        elif node.get("minimum") is not None:
            node["default"] = int(node["minimum"]) - 1
        else:
            node["default"] = 7
    elif choice == 4:
        node["default"] = None
    elif t == "object":
        props = node.get("properties") or {}
        node["default"] = {k: _sample(v) for k, v in list(props.items())[:2]
                           if isinstance(v, dict)}
    elif t == "array":
        node["default"] = []
    else:
        node["default"] = _sample(node)
    return True


def _sample(node: Doc) -> Any:
    if node.get("enum"):
        return node["enum"][0]
    return {"string": "a", "integer": 1, "number": 1.5, "boolean": False, "array": [],
            "object": {}}.get(str(node.get("type")), "a")


@_mutate
def default_with_rule(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") in ("string", "integer"),
                             skip_root=True))
    if node is None:
        return False
    if node["type"] == "string":
        node["x-kubernetes-validations"] = [{"rule": "self.size() > 3",
                                             "message": "too short"}]
        node["default"] = rnd.choice(["ab", "abcdef"])
    else:
        node["x-kubernetes-validations"] = [{"rule": "self > 10"}]
        node["default"] = rnd.choice([3, 30])
    for k in ("enum", "pattern", "maxLength", "minLength", "minimum", "maximum", "format"):
        node.pop(k, None)
    return True


# --- rule entries ----------------------------------------------------------------------

@_mutate
def rule_entry(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") == "object"))
    if node is None:
        return False
    props = sorted(node.get("properties") or {})
    field = rnd.choice(props) if props else None
    entries: list[dict[str, Any]] = [
        {"rule": ""}, {"rule": "   "}, {"rule": "true", "message": "  "},
        {"rule": "true", "message": "a\nb"}, {"rule": "true &&\ntrue"},
        {"rule": "true &&\ntrue", "message": "m"},
        {"rule": "true", "reason": rnd.choice(["FieldValueInvalid", "Bogus",
                                               "FieldValueRequired", ""])},
        {"rule": "true", "fieldPath": rnd.choice(
            [".noSuchField", "noDot", " ", ".a\n", f".{field}" if field else ".x",
             f"['{field}']" if field else "['x']", "[0]", f".{field}.x" if field else ".",
             "['unterminated", f".{field}[" if field else "["])},
        {"rule": "true", "messageExpression": "  "},
        {"rule": "true", "optionalOldSelf": rnd.choice([True, False])},
        {"rule": "self == oldSelf", "message": "immutable"},
        {"rule": "oldSelf.hasValue()", "optionalOldSelf": True},
    ]
    node.setdefault("x-kubernetes-validations", []).append(rnd.choice(entries))
    return True


@_mutate
def old_self_uncorrelatable(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") == "array"
                             and isinstance(n.get("items"), dict)))
    if node is None:
        return False
    node.pop("x-kubernetes-list-type", None)
    if rnd.random() < 0.5:
        node["x-kubernetes-list-type"] = rnd.choice(["atomic", "set"])
        if node["x-kubernetes-list-type"] == "set" and node["items"].get("type") == "object":
            node["items"]["x-kubernetes-map-type"] = "atomic"
    node.pop("x-kubernetes-list-map-keys", None)
    node["items"].setdefault("x-kubernetes-validations", []).append(
        {"rule": "self == oldSelf", "message": "immutable"})
    return True


@_mutate
def cel_compile(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") == "object"
                             and bool(n.get("properties"))))
    if node is None:
        return False
    field = rnd.choice(sorted(node["properties"]))
    rule = rnd.choice([f"self.{field} ==", "self.noSuchField == 1", "1 + ", "self.size()",
                       f"has(self.{field})", "'a' + 1 == 2", "self.x.y.z == 1"])
    node.setdefault("x-kubernetes-validations", []).append({"rule": rule})
    return True


# --- the value validations the server accepts ----------------------------------------

@_mutate
def value_validation(doc: Doc, rnd: random.Random) -> bool:
    node = _pick(rnd, _nodes(doc, lambda n: n.get("type") in ("string", "integer", "array"),
                             skip_root=True))
    if node is None:
        return False
    t = node["type"]
    choice = rnd.randrange(4)
    if t == "string":
        if choice == 0:
            node["maxLength"] = -1
        elif choice == 1:
            node["minLength"] = -5
        elif choice == 2:
            node["minLength"], node["maxLength"] = 5, 2
        else:
            node["enum"] = [1, 2]
    elif t == "integer":
        node["minimum"], node["maximum"] = 10, 1
    else:
        node["minItems"], node["maxItems"] = (3, 1) if choice < 2 else (-1, -1)
    return True


@_mutate
def unknown_keyword(doc: Doc, rnd: random.Random) -> bool:
    if rnd.random() < 0.25:  # a field the CRD types do not have, outside the schema
        versions = _versions(doc)
        target = rnd.choice([doc, doc.setdefault("spec", {}),
                             doc["spec"].setdefault("names", {}),
                             *(versions[:1]), *([versions[0]["schema"]]
                                                if versions and "schema" in versions[0]
                                                else [])])
        target[rnd.choice(["extra", "validation", "x-note"])] = 1
        return True
    node = _pick(rnd, _nodes(doc))
    if node is None:
        return False
    node[rnd.choice(["const", "if", "propertyNames", "examples", "x-kubernetes-foo"])] = "x"
    return True


@_mutate
def identity(doc: Doc, rnd: random.Random) -> bool:
    return True


# --- the CRD's own fields --------------------------------------------------------------

@_mutate
def crd_fields(doc: Doc, rnd: random.Random) -> bool:
    spec = doc.setdefault("spec", {})
    names = spec.setdefault("names", {})
    versions = _versions(doc)
    choice = rnd.randrange(24)
    if choice == 0:
        doc["metadata"]["name"] = "wrong.example.com"
    elif choice == 1:
        spec["group"] = rnd.choice(["nodot", "UPPER.example.com", "", "a_b.example.com"])
    elif choice == 2:
        spec["scope"] = rnd.choice(["Global", ""])
    elif choice == 3 and versions:
        rnd.choice(versions)["name"] = rnd.choice(["V1", "1", "v1.0", ""])
    elif choice == 4 and versions:
        versions.append(copy.deepcopy(versions[0]))
        versions[-1]["storage"] = False
    elif choice == 5 and versions:
        for v in versions:
            v["storage"] = rnd.random() < 0.5
    elif choice == 6:
        names["plural"] = rnd.choice(["Widgets", "", "wid_gets"])
    elif choice == 7:
        names["listKind"] = names.get("kind", "X")
    elif choice == 8:
        names["shortNames"] = [rnd.choice(["ok", "Bad", "a.b"])]
    elif choice == 9:
        names["categories"] = [rnd.choice(["all", "Bad", ""])]
    elif choice == 10:
        names["kind"] = rnd.choice(["", "My Kind", "my-kind"])
    elif choice == 11:
        spec["conversion"] = {"strategy": "Webhook"}
    elif choice == 12:
        spec["conversion"] = {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": rnd.choice(["http://x/y", "https://h/p", "https:///p",
                                                 "https://u@h/p", "https://h/p?q=1",
                                                 "https://h/p#f"])},
            "conversionReviewVersions": rnd.choice([["v1"], ["v2"], [], ["v1", "v1"],
                                                    ["V1", "v1"]])}}
    elif choice == 13:
        spec["conversion"] = {"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": rnd.choice(["svc", ""]),
                                         "namespace": rnd.choice(["ns", ""]),
                                         "path": rnd.choice(["/ok", "bad", "//", "/a//b",
                                                             "/Up"]),
                                         "port": rnd.choice([443, 0, 70000])}},
            "conversionReviewVersions": ["v1"]}}
    elif choice == 14:
        spec["conversion"] = {"strategy": rnd.choice(["None", "Bogus"]),
                              "webhook": {"conversionReviewVersions": ["v1"]}}
    elif choice == 15:
        spec["preserveUnknownFields"] = True
    elif choice == 16 and versions:
        v = rnd.choice(versions)
        v["additionalPrinterColumns"] = [{"name": rnd.choice(["Age", ""]),
                                          "type": rnd.choice(["string", "date", "bogus", ""]),
                                          "format": rnd.choice(["", "int32", "bogus"]),
                                          "jsonPath": rnd.choice([".spec.x", "spec.x", ""])}]
    elif choice == 17 and versions:
        v = rnd.choice(versions)
        v["subresources"] = {"status": {}, "scale": {
            "specReplicasPath": rnd.choice([".spec.replicas", ".status.replicas", "spec", ""]),
            "statusReplicasPath": rnd.choice([".status.replicas", ".spec.r", ""]),
            "labelSelectorPath": rnd.choice([".status.selector", ".metadata.x", None])}}
        if v["subresources"]["scale"]["labelSelectorPath"] is None:
            del v["subresources"]["scale"]["labelSelectorPath"]
    elif choice == 18 and versions:
        v = rnd.choice(versions)
        v["deprecationWarning"] = rnd.choice(["use v2", "", "tab\there"])
        v["deprecated"] = rnd.random() < 0.5
    elif choice == 19:
        spec["group"] = rnd.choice(["foo.k8s.io", "x.kubernetes.io"])
        doc["metadata"]["name"] = f"{names.get('plural', '')}.{spec['group']}"
        ann = rnd.choice([None, "unapproved, testing", "https://github.com/x/y/pull/1",
                          "not a url"])
        if ann is not None:
            doc["metadata"].setdefault("annotations", {})["api-approved.kubernetes.io"] = ann
    elif choice == 20 and versions:
        v = rnd.choice(versions)
        root = v.get("schema", {}).get("openAPIV3Schema") or {}
        props = sorted(root.get("properties") or {})
        paths = [".spec", ".metadata.name", ".nope", "spec", ".spec[0]"] + [
            f".{p}" for p in props]
        v["selectableFields"] = [{"jsonPath": rnd.choice(paths)}
                                 for _ in range(rnd.choice([1, 2, 9]))]
    elif choice == 21 and versions:
        rnd.choice(versions)["served"] = False
    elif choice == 22:
        doc["metadata"]["namespace"] = "default"
    elif choice == 23 and versions:
        del rnd.choice(versions)["schema"]
    else:
        return False
    return True


@_mutate
def status_root(doc: Doc, rnd: random.Random) -> bool:
    versions = _versions(doc)
    if not versions:
        return False
    v = rnd.choice(versions)
    v["subresources"] = {"status": {}}
    root = v.get("schema", {}).get("openAPIV3Schema")
    if not isinstance(root, dict):
        return False
    k, val = rnd.choice([("x-kubernetes-preserve-unknown-fields", True), ("nullable", True),
                         ("type", "string"), ("enum", [{}]), ("description", "d"),
                         ("x-kubernetes-validations", [{"rule": "true"}]),
                         ("x-kubernetes-embedded-resource", True)])
    root[k] = val
    return True


MUTATIONS: dict[str, Mutation] = {m.__name__: m for m in (
    no_type, properties_with_additional, additional_at_root, map_list_keys, set_of_objects,
    forbidden_keyword, junctor, int_or_string_pattern, bad_pattern, metadata_at_root,
    kind_api_version, embedded_resource, root_shape, default_value, default_with_rule,
    rule_entry, old_self_uncorrelatable, cel_compile, value_validation, unknown_keyword,
    identity, crd_fields, status_root)}


# --- generated CRDs ----------------------------------------------------------------------

def _gen_schema(rnd: random.Random, depth: int) -> Doc:
    kind = rnd.choice(["string", "integer", "number", "boolean"]
                      + (["object", "array", "map"] if depth < 3 else []))
    if kind == "object":
        props = {f"f{i}": _gen_schema(rnd, depth + 1) for i in range(rnd.randint(1, 4))}
        node: Doc = {"type": "object", "properties": props}
        if rnd.random() < 0.4:
            node["required"] = [rnd.choice(sorted(props))]
        return node
    if kind == "array":
        node = {"type": "array", "items": _gen_schema(rnd, depth + 1)}
        if rnd.random() < 0.3:
            node["maxItems"] = rnd.randint(1, 10)
        return node
    if kind == "map":
        return {"type": "object", "additionalProperties": _gen_schema(rnd, depth + 1)}
    node = {"type": kind}
    if kind == "string" and rnd.random() < 0.3:
        node["maxLength"] = rnd.randint(1, 20)
    if kind == "string" and rnd.random() < 0.2:
        node["enum"] = ["a", "b"]
    if kind == "integer" and rnd.random() < 0.3:
        node["minimum"] = 0
    return node


def synthetic_crd(seed: int) -> Doc:
    """A small valid CRD (one or two versions) drawn from ``seed``."""
    rnd = random.Random(seed)
    spec = _gen_schema(rnd, 1)
    if spec["type"] != "object" or "properties" not in spec:
        spec = {"type": "object", "properties": {"value": spec}}
    root = {"type": "object", "properties": {"spec": spec,
                                             "status": {"type": "object", "properties": {
                                                 "ready": {"type": "boolean"}}}}}
    versions = [{"name": "v1", "served": True, "storage": True,
                 "schema": {"openAPIV3Schema": root}}]
    if rnd.random() < 0.4:
        other = copy.deepcopy(root)
        other["properties"]["spec"]["description"] = "older"
        versions.insert(0, {"name": "v1beta1", "served": True, "storage": False,
                            "schema": {"openAPIV3Schema": other}})
    if rnd.random() < 0.5:
        for v in versions:
            v["subresources"] = {"status": {}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": rnd.choice(["Namespaced", "Cluster"]),
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                               "listKind": "WidgetList"},
                     "versions": versions}}
