"""Compiling ``allOf``, ``anyOf`` and ``oneOf``: merged into one schema where that is exact.

Why a module of its own: structural schemas rarely use junctors, but OpenAPI documents
and controller-gen unions do; merging the branches a value must meet (``merge_schemas``)
keeps generation by construction, and only what cannot be merged exactly falls back to
generate-then-check against the whole node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from compatfuzz.strategies._compile_base import _JSON_TYPES, CompilerBase
from compatfuzz.strategies._compile_cel import Gen


class JunctorCompiling(CompilerBase):
    """``Compiler``'s ``allOf``/``anyOf``/``oneOf`` methods."""

    def compile_all_of(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...],
    ) -> Gen:
        parts = [{k: v for k, v in node.items() if k != "allOf"}]
        exact = True
        for raw in node["allOf"]:
            branch = raw
            if isinstance(raw, Mapping) and isinstance(raw.get("$ref"), str) and len(
                raw
            ) == 1 and stack.count(raw["$ref"]) < self.options.max_recursion:
                branch = self.schema.resolve(raw["$ref"])
            if branch is True:
                continue
            if not isinstance(branch, Mapping):
                raise self.fail(path, "allOf contains `false`: no value is valid here")
            parts.append(dict(branch))
        merged = merge_schemas(parts)
        if merged is None:
            merged, exact = parts[0] | parts[1], False
        gen = self.compile(merged, path, ref_name, stack)
        if exact:
            return gen
        return self.filtered(gen, self.validator_for(node).is_valid)

    def compile_union(
        self, node: Mapping[str, Any], path: tuple[str | int, ...], ref_name: str | None,
        stack: tuple[str, ...],
    ) -> Gen:
        word = "oneOf" if "oneOf" in node else "anyOf"
        base = {k: v for k, v in node.items() if k != word}
        branches = list(node[word])
        gens: list[Gen] = []
        for raw in branches:
            if raw is False or self.too_deep(raw, stack):
                continue
            branch = {} if raw is True else raw
            if isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str) and len(
                branch
            ) == 1:
                target_ref = branch["$ref"]
                resolved = dict(self.schema.resolve(target_ref))
                merged = merge_schemas([base, resolved])
                name = target_ref.rsplit("/", 1)[-1]
                new_stack = (*stack, target_ref)
            else:
                merged = merge_schemas([base, dict(branch)])
                name, new_stack = None, stack
            if merged is None:
                gen = self.compile(branch, path, name, new_stack)
                gen = self.filtered(gen, self.validator_for(base).is_valid)
            else:
                gen = self.lazy(partial(self.compile, merged, path, name, new_stack))
            gens.append(gen)
        if not gens:
            raise self.fail(path, f"every {word} branch is impossible here")
        gen = gens[0] if len(gens) == 1 else self.choice(gens)
        if word == "oneOf" and len(branches) > 1:
            checks = [self.validator_for(b if b is not True else {}).is_valid for b in branches]

            def exactly_one(value: Any) -> bool:
                return sum(1 for check in checks if check(value)) == 1

            gen = self.filtered(gen, exactly_one)
        return gen


_NUMERIC_MIN = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties",
                "minContains")
_NUMERIC_MAX = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties",
                "maxContains")
_ANNOTATIONS = ("description", "title", "$comment", "examples", "deprecated", "readOnly",
                "writeOnly")


def merge_schemas(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Merge schemas that must all hold into one, or ``None`` when we cannot do it exactly.

    Exact for the keywords structural schemas use; anything else makes the caller fall back
    to generate-then-check, which is correct but slower.
    """
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in _ANNOTATIONS:
                continue
            if key not in out:
                out[key] = value
                continue
            current = out[key]
            if current == value:
                continue
            if key == "type":
                a = {current} if isinstance(current, str) else set(current)
                b = {value} if isinstance(value, str) else set(value)
                both = a & b
                if ("number" in a and "integer" in b) or ("number" in b and "integer" in a):
                    both.add("integer")
                out[key] = [t for t in _JSON_TYPES if t in both]
            elif key == "required":
                out[key] = list(dict.fromkeys([*current, *value]))
            elif key == "properties":
                merged_props = dict(current)
                for name, sub in value.items():
                    if name in merged_props and merged_props[name] != sub:
                        inner = merge_schemas([merged_props[name], sub]) if isinstance(
                            merged_props[name], Mapping
                        ) and isinstance(sub, Mapping) else None
                        if inner is None:
                            return None
                        merged_props[name] = inner
                    else:
                        merged_props[name] = sub
                out[key] = merged_props
            elif key in _NUMERIC_MIN:
                out[key] = max(current, value)
            elif key in _NUMERIC_MAX:
                out[key] = min(current, value)
            elif key == "enum":
                out[key] = [v for v in current if v in value]
            elif key in ("items", "additionalProperties") and isinstance(
                current, Mapping
            ) and isinstance(value, Mapping):
                inner = merge_schemas([current, value])
                if inner is None:
                    return None
                out[key] = inner
            elif key == "uniqueItems":
                out[key] = bool(current or value)
            else:
                return None
    if "minimum" in out and "exclusiveMinimum" in out:
        pass
    return out
