"""What a run's generated objects exercised: leaf paths that carried a value, edge classes hit.

A round trip that never saw a zero, a nanosecond or a Quantity above 2^53 says nothing
about the converters' handling of them, so the runner reports, per unit, the fraction of
the version's leaf paths that carried a value (the metric of
``compatfuzz.schema._leafpaths``) and which *edge classes* its values hit, out of those
the schema allows:

* integers: ``int:zero``, ``int:one`` (+-1), ``int:bound`` (a declared minimum/maximum or
  one inside it), ``int:2^31``, ``int:2^53`` (the float64 precision edge), ``int:int64``
  (the int64 extremes);
* numbers: ``number:zero``, ``number:fraction``, ``number:negative``;
* plain strings: ``string:empty``, ``string:max-length``, ``string:digits`` (digit-only,
  what int-or-string parsers trip on), ``string:non-ascii``, ``string:astral`` (outside
  the BMP: two UTF-16 units);
* int-or-string: ``int-or-string:int``, ``int-or-string:string``;
* Quantity: ``quantity:int`` (a JSON number), ``quantity:binary-suffix`` (Ki..Ei),
  ``quantity:decimal-suffix`` (n..E), ``quantity:exponent``, ``quantity:many-digits``
  (more than 18 significant digits), ``quantity:over-2^53`` (digit-only above 2^53);
* date-times: ``time:whole-seconds``, ``time:nanoseconds`` (a non-zero digit below the
  microsecond), ``time:offset`` (not ``Z``), ``time:leap-day``;
* durations (Kubernetes' Go form): ``duration:<unit>`` for ns, us, ms, s, m, h;
* booleans: ``bool:false``, ``bool:true``.

Each observed class is also sent to Hypothesis as an ``event`` (``edge int:zero``) by the
runner, so ``--hypothesis-show-statistics`` and coverage-guided fuzzers see them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compatfuzz.schema import Schema, WellKnown, classify
from compatfuzz.schema._leafpaths import (
    LeafPath,
    covered_paths,
    format_path,
    leaf_paths,
)

__all__ = ["Coverage", "edge_classes"]

_INT64 = (-(2**63), 2**63 - 1)
_QUANTITY_SUFFIX = re.compile(r"(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])$")
_TIME = re.compile(r"\d{4}-(\d\d)-(\d\d)[Tt ]\d\d:\d\d:\d\d(?:[.,](\d+))?([Zz]|[+-]\d\d:\d\d)$")
_GO_UNITS = re.compile(r"(ns|us|µs|μs|ms|s|m|h)")


def _scalar_kind(node: Mapping[str, Any], ref: str | None, kubernetes: bool) -> str:
    known = classify(node, ref)
    if known is WellKnown.QUANTITY:
        return "quantity"
    if known is WellKnown.INT_OR_STRING:
        return "int-or-string"
    if known in (WellKnown.TIME, WellKnown.MICRO_TIME):
        return "time"
    if known is WellKnown.DURATION:
        return "duration"
    fmt = node.get("format")
    types = node.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if "string" in types or (not types and isinstance(fmt, str)):
        if "pattern" in node or "enum" in node:
            return "string-constrained"  # the pattern decides which edges exist
        if fmt in ("date-time", "datetime"):
            return "time"
        if fmt == "duration" and kubernetes:
            return "duration"
        if "enum" in node or "pattern" in node or isinstance(fmt, str) or "const" in node:
            return "string-constrained"
        return "string"
    for t in ("integer", "number", "boolean"):
        if t in types:
            return t
    return ""


def _bounds(node: Mapping[str, Any]) -> tuple[float, float]:
    width = (-(2**31), 2**31 - 1) if node.get("format") == "int32" else _INT64
    lo = node.get("minimum", width[0])
    hi = node.get("maximum", width[1])
    if isinstance(node.get("exclusiveMinimum"), int | float):
        lo = node["exclusiveMinimum"] + 1
    if isinstance(node.get("exclusiveMaximum"), int | float):
        hi = node["exclusiveMaximum"] - 1
    return max(lo, width[0]), min(hi, width[1])


def _applicable(kind: str, node: Mapping[str, Any]) -> frozenset[str]:
    if kind == "integer":
        if "enum" in node or "const" in node or "multipleOf" in node:
            return frozenset()
        lo, hi = _bounds(node)
        out = set()
        if lo <= 0 <= hi:
            out.add("int:zero")
        if lo <= 1 <= hi or lo <= -1 <= hi:
            out.add("int:one")
        if "minimum" in node or "maximum" in node or "exclusiveMinimum" in node \
                or "exclusiveMaximum" in node:
            out.add("int:bound")
        if lo <= 2**31 - 1 <= hi or lo <= -(2**31) <= hi:
            out.add("int:2^31")
        if hi >= 2**53 or lo <= -(2**53):
            out.add("int:2^53")
        if hi >= _INT64[1] or lo <= _INT64[0]:
            out.add("int:int64")
        return frozenset(out)
    if kind == "number":
        if "enum" in node or "const" in node or "multipleOf" in node:
            return frozenset()
        lo, hi = node.get("minimum", -1e308), node.get("maximum", 1e308)
        out = {"number:fraction"} if hi - lo > 1 else set()
        if lo <= 0 <= hi:
            out.add("number:zero")
        if lo < 0:
            out.add("number:negative")
        return frozenset(out)
    if kind == "string":
        out = {"string:digits", "string:non-ascii", "string:astral"}
        if int(node.get("minLength", 0)) == 0:
            out.add("string:empty")
        if isinstance(node.get("maxLength"), int):
            out.add("string:max-length")
        if isinstance(node.get("maxLength"), int) and node["maxLength"] < 1:
            out -= {"string:digits", "string:non-ascii", "string:astral"}
        return frozenset(out)
    if kind == "int-or-string":
        return frozenset({"int-or-string:int", "int-or-string:string"})
    if kind == "quantity":
        return frozenset({"quantity:int", "quantity:binary-suffix", "quantity:decimal-suffix",
                          "quantity:exponent", "quantity:many-digits", "quantity:over-2^53"})
    if kind == "time":
        return frozenset({"time:whole-seconds", "time:nanoseconds", "time:offset",
                          "time:leap-day"})
    if kind == "duration":
        return frozenset(f"duration:{u}" for u in ("ns", "us", "ms", "s", "m", "h"))
    if kind == "boolean":
        return frozenset({"bool:false", "bool:true"})
    return frozenset()


def edge_classes(kind: str, value: Any, node: Mapping[str, Any]) -> set[str]:
    """The edge classes ``value`` hits as a value of a node of ``kind``."""
    out: set[str] = set()
    if isinstance(value, bool):
        if kind == "boolean":
            out.add(f"bool:{'true' if value else 'false'}")
        return out
    if kind == "integer" and isinstance(value, int):
        a = abs(value)
        if value == 0:
            out.add("int:zero")
        if a == 1:
            out.add("int:one")
        for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            b = node.get(bound)
            if isinstance(b, int | float) and abs(value - b) <= 1:
                out.add("int:bound")
        if a in (2**31 - 1, 2**31, 2**31 + 1):
            out.add("int:2^31")
        if a in (2**53 - 1, 2**53, 2**53 + 1):
            out.add("int:2^53")
        if value in _INT64:
            out.add("int:int64")
    elif kind == "number" and isinstance(value, int | float):
        if value == 0:
            out.add("number:zero")
        if isinstance(value, float) and not value.is_integer():
            out.add("number:fraction")
        if value < 0:
            out.add("number:negative")
    elif kind == "string" and isinstance(value, str):
        if value == "":
            out.add("string:empty")
        if len(value) == node.get("maxLength"):
            out.add("string:max-length")
        if value.isdigit() and value.isascii():
            out.add("string:digits")
        if not value.isascii():
            out.add("string:non-ascii")
        if any(ord(c) > 0xFFFF for c in value):
            out.add("string:astral")
    elif kind == "int-or-string":
        out.add("int-or-string:int" if isinstance(value, int) else "int-or-string:string")
    elif kind == "quantity":
        if isinstance(value, int | float):
            out.add("quantity:int")
        elif isinstance(value, str):
            text = value.strip()
            m = _QUANTITY_SUFFIX.search(text)
            if m:
                out.add("quantity:binary-suffix" if m.group(1).endswith("i")
                        else "quantity:decimal-suffix")
            if "e" in text.lower() and not m:
                out.add("quantity:exponent")
            digits = re.sub(r"[^0-9]", "", text.split("e")[0].split("E")[0])
            if len(digits.lstrip("0")) > 18:
                out.add("quantity:many-digits")
            if text.lstrip("+-").isdigit() and int(text) > 2**53:
                out.add("quantity:over-2^53")
    elif kind == "time" and isinstance(value, str):
        m = _TIME.match(value)
        if m:
            month, day, fraction, zone = m.groups()
            if not fraction or not fraction.strip("0"):
                out.add("time:whole-seconds")
            if fraction and len(fraction) > 6 and fraction[6:].strip("0"):
                out.add("time:nanoseconds")
            if zone not in ("Z", "z"):
                out.add("time:offset")
            if (month, day) == ("02", "29"):
                out.add("time:leap-day")
    elif kind == "duration" and isinstance(value, str):
        for unit in _GO_UNITS.findall(value):
            out.add("duration:" + ("us" if unit in ("µs", "μs") else unit))
    return out


@dataclass
class _Site:
    kind: str
    node: Mapping[str, Any]


class Coverage:
    """Accumulates what the generated objects of one schema exercised.

    ``observe(obj)`` returns the edge classes ``obj`` hit (for Hypothesis events);
    :meth:`to_json` and :meth:`summary` report leaf paths covered and edge classes hit
    out of those the schema allows.
    """

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self._paths: frozenset[LeafPath] = leaf_paths(dict(schema.root))
        self._covered: set[LeafPath] = set()
        self.edges: set[str] = set()
        self.applicable: set[str] = set()
        self._sites: dict[int, _Site | None] = {}
        self.examples = 0
        self._collect_applicable(dict(schema.root), None, set())

    # -- schema side
    def _resolve(self, node: Any) -> tuple[Any, str | None]:
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        name = None
        seen = 0
        while isinstance(ref, str) and seen < 32:
            name = ref.rsplit("/", 1)[-1]
            target = self.schema.resolve(ref)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **rest} if rest else target
            ref = node.get("$ref") if isinstance(node, Mapping) else None
            seen += 1
        return node, name

    def _site(self, node: Any) -> _Site | None:
        key = id(node)
        if key not in self._sites:
            resolved, name = self._resolve(node)
            site = None
            if isinstance(resolved, Mapping):
                kind = _scalar_kind(resolved, name, self.schema.kubernetes)
                if kind:
                    site = _Site(kind, resolved)
            self._sites[key] = site
        return self._sites[key]

    def _collect_applicable(self, node: Any, name: str | None, seen: set[int]) -> None:
        resolved, _ = self._resolve(node)
        if not isinstance(resolved, Mapping) or id(resolved) in seen:
            return
        seen.add(id(resolved))
        site = self._site(node)
        if site is not None:
            self.applicable |= _applicable(site.kind, site.node)
        for sub in (resolved.get("properties") or {}).values():
            self._collect_applicable(sub, None, seen)
        for word in ("items", "additionalProperties"):
            if isinstance(resolved.get(word), Mapping):
                self._collect_applicable(resolved[word], None, seen)
        for word in ("anyOf", "oneOf", "allOf"):
            for sub in resolved.get(word) or ():
                if site is None:
                    self._collect_applicable(sub, None, seen)

    # -- value side
    def _walk(self, node: Any, value: Any, out: set[str], depth: int = 0) -> None:
        if depth > 64 or value is None:
            return
        site = self._site(node)
        if site is not None:
            out |= edge_classes(site.kind, value, site.node)
            return
        resolved, _ = self._resolve(node)
        if not isinstance(resolved, Mapping):
            return
        if isinstance(value, dict):
            props = resolved.get("properties") or {}
            extra = resolved.get("additionalProperties")
            for k, v in value.items():
                sub = props.get(k) if isinstance(props, Mapping) else None
                if sub is None and isinstance(extra, Mapping):
                    sub = extra
                if sub is not None:
                    self._walk(sub, v, out, depth + 1)
        elif isinstance(value, list) and isinstance(resolved.get("items"), Mapping):
            for v in value:
                self._walk(resolved["items"], v, out, depth + 1)
        for word in ("anyOf", "oneOf", "allOf"):
            for sub in resolved.get(word) or ():
                self._walk(sub, value, out, depth + 1)

    def observe(self, obj: Any) -> set[str]:
        """Record one generated object; return the edge classes it hit."""
        self.examples += 1
        self._covered |= covered_paths(self._paths - self._covered, [obj])
        hit: set[str] = set()
        self._walk(self.schema.root, obj, hit)
        self.edges |= hit
        return hit

    @property
    def ratio(self) -> float:
        return len(self._covered) / len(self._paths) if self._paths else 1.0

    def missing_paths(self) -> list[str]:
        return sorted(format_path(p) for p in self._paths - self._covered)

    def missing_edges(self) -> list[str]:
        return sorted(self.applicable - self.edges)

    def summary(self) -> str:
        """``97% of 134 leaf paths, all edge classes`` (or the classes missing)."""
        missing = self.missing_edges()
        edges = ("all edge classes" if not missing else
                 f"edge classes missing: {', '.join(missing[:6])}"
                 + (f" (+{len(missing) - 6})" if len(missing) > 6 else ""))
        return f"{self.ratio:.0%} of {len(self._paths)} leaf paths, {edges}"

    def to_json(self) -> dict[str, Any]:
        return {
            "leaf_paths": len(self._paths),
            "covered": len(self._covered),
            "ratio": round(self.ratio, 4),
            "missing_paths": self.missing_paths()[:50],
            "edge_classes": sorted(self.edges & self.applicable),
            "missing_edge_classes": self.missing_edges(),
        }
