"""Strategies for the compat tests' own inputs: small schemas and mutated revisions.

Schemas stay small and ref-free so a witness search over them is fast and exhaustive
enough that "no witness" is meaningful; mutations are the seed rules' change kinds.
Objects are open, closed or preserve unknown fields; enums may hold null; leaves may
carry defaults (behaviour, never witnessed).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

WORDS = st.sampled_from(["a", "b", "c", "dd", "e1"])


@st.composite
def leaf_schemas(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["integer", "number", "string", "boolean", "array",
                                 "enum", "nullable", "enum-null"]))
    if kind in {"integer", "number"}:
        node: dict[str, Any] = {"type": kind}
        if draw(st.booleans()):
            node["minimum"] = draw(st.integers(-5, 5))
        if draw(st.booleans()):
            node["maximum"] = node.get("minimum", -5) + draw(st.integers(0, 10))
        return node
    if kind == "string":
        node = {"type": "string"}
        if draw(st.booleans()):
            node["maxLength"] = draw(st.integers(1, 6))
        if draw(st.booleans()):
            node["pattern"] = draw(st.sampled_from(["^[a-z]*$", "^[a-c]+$", "^x"]))
        return node
    if kind == "enum":
        return {"type": "string", "enum": draw(st.lists(WORDS, min_size=1, max_size=3,
                                                        unique=True))}
    if kind == "array":
        return {"type": "array", "items": {"type": draw(st.sampled_from(
            ["string", "integer"]))}, **({"maxItems": draw(st.integers(1, 3))}
                                         if draw(st.booleans()) else {})}
    if kind == "nullable":
        return {"type": [draw(st.sampled_from(["string", "integer"])), "null"]}
    if kind == "enum-null":  # no type: only the enum decides whether null is accepted
        values = draw(st.lists(WORDS, min_size=1, max_size=2, unique=True))
        return {"enum": [*values, None] if draw(st.booleans()) else values}
    node = {"type": "boolean"}
    if draw(st.booleans()):
        node["default"] = draw(st.booleans())
    return node


@st.composite
def object_schemas(draw: st.DrawFn, depth: int = 1) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=1, max_size=3,
                          unique=True))
    props: dict[str, Any] = {}
    for n in names:
        if depth > 0 and draw(st.integers(0, 4)) == 0:
            props[n] = draw(object_schemas(depth=depth - 1))
        else:
            props[n] = draw(leaf_schemas())
    node: dict[str, Any] = {"type": "object", "properties": props}
    req = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
    if req:
        node["required"] = req
    openness = draw(st.sampled_from(["open", "closed", "preserve"]))
    if openness == "closed":
        node["additionalProperties"] = False
    elif openness == "preserve":
        node["x-kubernetes-preserve-unknown-fields"] = True
    return node


def _leaves(node: dict[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for k, v in node.get("properties", {}).items():
        out.append((*path, k))
        if v.get("type") == "object":
            out += _leaves(v, (*path, k))
    return out


def _at(node: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for k in path:
        node = node["properties"][k]
    return node


MUTATIONS = ["add-required", "drop-required", "tighten", "relax", "enum-add", "enum-drop",
             "type", "rename", "remove", "add-field", "nullable", "wrap", "plural",
             "pattern", "close", "open", "replace-leaf", "enum-null-add", "enum-null-drop",
             "preserve", "unpreserve", "default"]


#: Mutations behind the fifth audit's bugs (unknown fields, null enum values, bounds next
#: to other keywords); a focused default run draws only these.
AUDITED = ["add-field", "remove", "rename", "close", "open", "preserve", "unpreserve",
           "enum-null-add", "enum-null-drop", "tighten", "relax", "default"]


@st.composite
def mutated_pairs(draw: st.DrawFn, mutations: list[str] | None = None,
                  ) -> tuple[dict[str, Any], dict[str, Any], str]:
    """A schema, a revision with one or two seed-rule mutations, and the mutation names."""
    old = draw(object_schemas())
    new = copy.deepcopy(old)
    applied = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(mutations or MUTATIONS))
        path = draw(st.sampled_from(_leaves(new)))
        parent, name = _at(new, path[:-1]), path[-1]
        node = parent["properties"][name]
        if kind == "add-required":
            parent["required"] = sorted({*parent.get("required", []), name})
        elif kind == "drop-required":
            parent["required"] = [r for r in parent.get("required", []) if r != name]
        elif kind in ("tighten", "relax") and node.get("type") in (
                "integer", "number", "string", "array"):
            key = draw(st.sampled_from(["maximum", "minimum", "maxLength", "maxItems"]))
            delta = draw(st.integers(1, 3)) * (-1 if kind == "tighten" else 1)
            if key.startswith("min"):
                delta = -delta
            before = dict(node)
            node[key] = max(0, node.get(key, 3) + delta)
            if node.get("minimum", -1e9) > node.get("maximum", 1e9):
                node.clear()  # keep the revision satisfiable: an empty range is not a bound
                node.update(before)
                continue
        elif kind == "enum-add" and node.get("type") == "string":
            extra = draw(WORDS)
            node.pop("pattern", None)  # keep the revision satisfiable
            node.pop("maxLength", None)
            node["enum"] = [*node.get("enum", ["a"])]
            if extra not in node["enum"]:
                node["enum"].append(extra)
        elif kind == "enum-drop" and len(node.get("enum", [])) > 1:
            node["enum"] = node["enum"][1:]
        elif kind == "type":
            parent["properties"][name] = {"type": draw(st.sampled_from(
                ["string", "integer", "number", "boolean"]))}
        elif kind == "rename":
            parent["properties"]["z"] = parent["properties"].pop(name)
            parent["required"] = [("z" if r == name else r)
                                  for r in parent.get("required", [])]
        elif kind == "remove" and len(parent["properties"]) > 1:
            del parent["properties"][name]
            parent["required"] = [r for r in parent.get("required", []) if r != name]
        elif kind == "add-field":
            parent["properties"]["y"] = draw(leaf_schemas())
        elif kind == "nullable":
            t = node.get("type")
            if isinstance(t, str):
                node["type"] = [t, "null"]
        elif kind == "wrap":
            parent["properties"][name] = {"oneOf": [node, draw(leaf_schemas())]}
        elif kind == "plural":
            parent["properties"][name] = {"type": "array", "items": node}
        elif kind == "pattern" and node.get("type") == "string":
            node["pattern"] = draw(st.sampled_from(["^[a-z]*$", "^[a-d]*$", "^a", "b"]))
        elif kind == "close":
            parent["additionalProperties"] = False
            parent.pop("x-kubernetes-preserve-unknown-fields", None)
        elif kind == "open":
            parent.pop("additionalProperties", None)
        elif kind == "enum-null-add" and "enum" in node and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        elif kind == "enum-null-drop" and None in node.get("enum", []) and len(
                node["enum"]) > 1:
            node["enum"] = [v for v in node["enum"] if v is not None]
        elif kind == "preserve" and parent.get("additionalProperties") is not False:
            parent["x-kubernetes-preserve-unknown-fields"] = True
        elif kind == "unpreserve" and parent.get("x-kubernetes-preserve-unknown-fields"):
            del parent["x-kubernetes-preserve-unknown-fields"]
        elif kind == "default":
            node["default"] = draw(st.sampled_from([0, "a", True, None]))
        elif kind == "replace-leaf":
            parent["properties"][name] = draw(leaf_schemas())
        else:
            continue
        if not parent.get("required"):
            parent.pop("required", None)
        applied.append(kind)
    return old, new, "+".join(applied)
