"""Search only where the two revisions differ: leave identical optional fields out.

Why: a witness search drew whole objects from a real CRD (a Cluster
API ``Cluster`` with its topology, a KEDA ``ScaledJob`` with a whole pod template) and
validated them against both revisions, although a release changes a handful of fields.
Almost all of the time (seconds per pair) went into generating, validating and shrinking
fields that are the same in OLD and NEW.

:func:`focus` returns the *generation* schema with every optional property whose schema
is the same on both sides left out. Values are still judged by the real OLD and NEW
schemas, so a witness is as real as before. It cannot hide a break: a value of an
identical subschema validates the same on both sides and both readers keep it (pruning
reads the same ``properties``), and leaving it out keeps a writer-valid object valid, as
long as no keyword relates sibling fields or looks into the subtree from above. So the
walk stops (keeps everything below) at a node with such a keyword: ``if``,
``dependent*``, ``enum``/``const``, ``patternProperties``, ``propertyNames``,
``unevaluated*``, ``$ref``, CEL ``x-kubernetes-validations`` when a rule may read the
whole value (``self == ...``, ``size(self)``, keys of an object; unless all are unchanged
transition rules, ``_only_transitions``), and at an
array with ``uniqueItems``/``contains``/``prefixItems`` (two items
may differ only in a left-out field); under ``allOf``/``anyOf``/``oneOf``/``not`` it
keeps the fields their branches name (whole if a branch reads the value,
``_mentioned``), and stops if a branch may read any field. ``minProperties`` and
``maxProperties`` only count fields, so under them N identical fields stay (N the
largest of those bounds, the smallest schemas first): they are the fillers a
count-based witness needs (``spec: {minProperties: 1}`` in Cluster API keeps one).
An array whose bounds are the same on both sides is drawn with at most two items (or
its ``minItems``): a break inside an item needs one, and a list of 2000 machine
deployments with patterned names cost a quarter of a second per example.

Under a CEL rule that only reads named fields (``self.a``, ``has(self.a)``, ``x.a`` for
the items ``x`` of a list ``self``: :func:`_cel_reads`), those fields are kept whole and
the walk goes on for the others, which no rule's verdict depends on (Flux's
``!has(self.serviceAccountName) || ...`` kept the whole GitRepository ``spec`` drawn).

A field the writer requires whose schema is the same on both sides must be there but
cannot break either, for the same reason: any value the writer allows will do, so it is
drawn as one fixed value (:func:`_filler`: one value the generator makes, CEL rules
included, shrunk, once per subschema) instead of afresh in every example. Karpenter's
required ``requirements`` list, with five CEL rules on each key, cost 50 ms per example
of a search about ``nodeClassRef`` beside it. A field only the reader requires stays as
it is (leaving it out is the witness of ``required-added``), and so do the map keys of
a list-map's items and the items of a list-set, which must differ from one another.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from compatfuzz.compat._static import join
from compatfuzz.schema import Schema

__all__ = ["focus"]

#: keywords that relate siblings or look below a node (see the module docstring)
_STOP = frozenset({
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentRequired",
    "dependentSchemas", "dependencies", "enum", "const", "patternProperties",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems",
    "$ref", "$dynamicRef", "x-kubernetes-validations", "uniqueItems", "contains",
    "minContains", "maxContains", "prefixItems",
})
#: keywords that change nothing a validator or the pruning reader does
_NOTES = frozenset({"description", "title", "$comment", "examples", "example",
                    "x-kubernetes-embedded-resource-description"})


def _plain(node: Any) -> Any:
    """``node`` without descriptions (which change between releases and validate nothing)."""
    if isinstance(node, Mapping):
        return {k: _plain(v) for k, v in node.items() if k not in _NOTES}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


_NONE = object()


def _filler(gen: Schema, node: Mapping[str, Any]) -> Any:
    """One value ``node`` (a subschema of ``gen``, local ``$ref`` resolved in ``gen``)
    allows, shrunk (a witness shows it: ``""`` rather than ``"x\n"``), or ``_NONE`` if
    none of ten values drawn is valid. Made once per subschema and seeded, so the same
    schema always gets the same value and a search stays reproducible."""
    defs = gen.root.get("$defs")
    root = dict(node) if defs is None else {**node, "$defs": defs}
    key = json.dumps(root, sort_keys=True, default=str)
    value = _filler_of(key, gen.kubernetes)
    return value if value is _NONE else copy.deepcopy(value)  # witnesses own their values


@lru_cache(maxsize=256)
def _filler_of(key: str, kubernetes: bool) -> Any:
    """:func:`_filler` by the schema's JSON text: the whole subschema and its ``$defs``
    are the key, so a value is only ever reused for the same schema."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    from compatfuzz.compat._budget import timed_find
    from compatfuzz.strategies import from_schema

    schema = Schema(root=json.loads(key), kubernetes=kubernetes)
    try:  # a budget spent (OutOfBudget) is raised, so it is never cached as "no value"
        return timed_find(from_schema(schema, kubernetes=kubernetes), schema.is_valid,
                    settings=settings(max_examples=10, database=None, deadline=None,
                                      phases=[Phase.generate, Phase.shrink],
                                      suppress_health_check=list(HealthCheck),
                                      verbosity=Verbosity.quiet),
                    random=random.Random(0), partial=False)
    except Exception:  # no value (or no strategy): the field is drawn as before
        return _NONE


def _distinct(w: Mapping[str, Any], r: Mapping[str, Any],
              unfixed: frozenset[str] | None) -> frozenset[str] | None:
    """What may not be fixed in the items of array ``w``/``r``: items must differ by
    their ``x-kubernetes-list-map-keys`` (a list-map) or whole (a list-set), so those
    keys (everything, ``None``, for a set) keep being drawn. A fixed key would leave
    room for one item only."""
    if unfixed is None:
        return None
    kinds = {w.get("x-kubernetes-list-type"), r.get("x-kubernetes-list-type")}
    if "set" in kinds:
        return None
    keys = [k for n in (w, r) for k in n.get("x-kubernetes-list-map-keys") or ()
            if isinstance(k, str)]
    return frozenset(keys)


_UNIONS = frozenset({"allOf", "anyOf", "oneOf", "not"})
#: what a union branch may hold for the fields it does not name to be left out
_BRANCH = frozenset({"required", "properties", "type"}) | _UNIONS | _NOTES


def _mentioned(*nodes: Mapping[str, Any]) -> tuple[set[str], set[str]] | None:
    """The field names the ``allOf``/``anyOf``/``oneOf``/``not`` branches of ``nodes``
    test for presence (``required``) and those whose value they read (``properties``),
    or ``None`` when a branch may read any field (``minProperties``,
    ``additionalProperties``, CEL...): then nothing is left out.

    Kyverno's ``match: {not: {required: [any, all]}}`` only tests two fields' presence;
    without this the whole 300 KB rule schema under it was drawn.
    """
    present: set[str] = set()
    read: set[str] = set()
    for node in nodes:
        for kw in _UNIONS & node.keys():
            value = node[kw]
            for b in value if isinstance(value, list) else [value]:
                if isinstance(b, bool):
                    continue
                if not isinstance(b, Mapping) or not b.keys() <= _BRANCH:
                    return None
                present.update(b.get("required") or ())
                read.update(b.get("properties") or ())
                inner = _mentioned(b)
                if inner is None:
                    return None
                present |= inner[0]
                read |= inner[1]
    return present, read


_CEL = "x-kubernetes-validations"


#: a CEL string or bytes literal (raw, triple-quoted or not)
_CEL_LITERAL = re.compile(
    r"[rRbB]{0,2}('''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")")
#: the macros that bind a variable to each item of a list (or key of a map)
_MACROS = "all|exists|exists_one|map|filter"
_BINDING = re.compile(r"\.\s*(" + _MACROS + r")\s*\(\s*([A-Za-z_]\w*)\s*,")
_ARRAY_METHODS = frozenset({*_MACROS.split("|"), "size"})
#: a macro binding two variables (index and item, key and value: CEL 1.33+)
_TWO_VARIABLES = re.compile(r"\(\s*[A-Za-z_]\w*\s*,\s*[A-Za-z_]\w*\s*,")
_ACCESS = re.compile(r"\s*\.\s*\??\s*([A-Za-z_]\w*)\s*(\()?")


def _cel_reads(w: Mapping[str, Any], r: Mapping[str, Any]
               ) -> tuple[frozenset[str], frozenset[str]] | None:
    """What the CEL rules of ``w`` and ``r`` may read: (the names after ``self.`` /
    ``oldSelf.``, or after ``x.`` for ``x`` bound to an item of a list ``self``; the
    text of every string literal), or ``None`` when a rule may read the whole value:
    ``self`` (or an item) used other than by a field access (``self == ...``,
    ``size(self)``, ``self[...]``, ``self.all(k, ...)`` over an object's keys).

    A field no rule reads changes no rule's verdict, so under a rule the walk goes on for
    every other field (Flux's ``!has(self.serviceAccountName) || ...`` on the whole
    GitRepository ``spec`` kept all of it drawn). This reads the text,
    so a name that appears in any string literal counts as read; any doubt is ``None``.
    """
    texts = [str(e.get("rule", "")) for n in (w, r) for e in n.get(_CEL) or ()
             if isinstance(e, Mapping)]
    if not texts:
        return None
    array = "array" in (w.get("type"), r.get("type")) or "items" in w or "items" in r
    fields: set[str] = set()
    literals: set[str] = set()
    for text in texts:
        literals.update(m.group(1) for m in _CEL_LITERAL.finditer(text))
        code = _CEL_LITERAL.sub(" '' ", text)
        if _TWO_VARIABLES.search(code):  # all(i, x, ...): which one is the item?
            return None
        items = {m.group(1) for m in re.finditer(
            r"(?<![\w.])(?:self|oldSelf)\s*\.\s*(?:" + _MACROS
            + r")\s*\(\s*([A-Za-z_]\w*)\s*,", code)} if array else set()
        code = _BINDING.sub(r".\1( _ ,", code)  # a binding is no use of the variable
        for m in re.finditer(r"(?<![\w.])([A-Za-z_]\w*)\b", code):
            name = m.group(1)
            if name not in ("self", "oldSelf") and name not in items:
                continue
            after = _ACCESS.match(code, m.end())
            if after is None:
                return None  # the whole value, or an index into it
            field_name, call = after.group(1), after.group(2)
            if name in items or not array:
                if call:  # a method of a whole object: its keys, its size
                    return None
                fields.add(field_name)
            elif not call or field_name not in _ARRAY_METHODS:
                return None  # a list's size and macros over its items only
    return frozenset(fields), frozenset(literals)


def _reads(name: str, cel: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether a rule :func:`_cel_reads` read may read property ``name``."""
    from compatfuzz.strategies._cel import escape_property

    fields, literals = cel
    return escape_property(name) in fields or name in fields or any(
        name in text for text in literals)


def _only_transitions(w: Mapping[str, Any], r: Mapping[str, Any]) -> bool:
    """Whether the CEL rules of ``w`` and ``r`` are the same and all transition rules
    (they read ``oldSelf``): the API server runs those on updates only
    (``k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`` skips a
    rule with ``oldSelf`` when there is no old object), so no rule of them judges the
    single objects a search draws. Karpenter's ``spec: self == oldSelf`` (immutable)
    otherwise kept the whole NodeClaim spec in every draw. A rule that changed is not
    exempt: a search for that change needs its fields."""
    rules = w.get(_CEL)
    return (isinstance(rules, list) and rules == r.get(_CEL) and all(
        isinstance(x, Mapping) and "oldSelf" in str(x.get("rule", "")) for x in rules))


def focus(gen: Schema, writer: Schema, reader: Schema, *,
          settled: frozenset[str] = frozenset()) -> Schema:
    """``gen`` (the writer's generation schema, :func:`~._witness.open_up`) with each
    optional property that ``writer`` and ``reader`` declare identically left out.

    ``settled`` are field paths (``spec.items[*].name``) whose difference a static
    finding already accounts for whole (a field added or removed, read with pruning):
    the whole-schema search leaves them out too, as any witness there is explained.

    ``gen`` is returned unchanged when nothing can be left out.
    """
    w_root, r_root = _plain(writer.root), _plain(reader.root)
    same_defs = w_root.get("$defs") == r_root.get("$defs")
    changed = False

    def has_ref(node: Any) -> bool:
        if isinstance(node, Mapping):
            return "$ref" in node or "$dynamicRef" in node or any(
                has_ref(v) for v in node.values())
        if isinstance(node, list):
            return any(has_ref(v) for v in node)
        return False

    def visit(g: Any, w: Any, r: Any, depth: int, path: str = "", *,
              unfixed: frozenset[str] | None = frozenset(),
              above: tuple[frozenset[str], frozenset[str]] | None = None) -> Any:
        nonlocal changed
        if (depth > 64 or not isinstance(g, Mapping) or not isinstance(w, Mapping)
                or not isinstance(r, Mapping)):
            return g
        stops = _STOP & (g.keys() | w.keys() | r.keys())
        cel = None
        if _CEL in stops and _only_transitions(w, r):
            stops -= {_CEL}
        elif _CEL in stops:
            cel = _cel_reads(w, r)  # the fields its rules read, if they can be told
            if cel is not None:
                stops -= {_CEL}
        if not stops <= _UNIONS:
            return g
        mentioned = _mentioned(w, r)
        if mentioned is None:
            return g
        present, read = mentioned
        # a rule here (on an object) or on the list above (on its items) reads these
        for rules in (cel, above):
            if rules is not None and isinstance(g.get("properties"), Mapping):
                read = read | {k for k in g["properties"] if _reads(str(k), rules)}
        out = dict(g)
        gp, wp, rp = g.get("properties"), w.get("properties"), r.get("properties")
        if isinstance(gp, Mapping) and isinstance(wp, Mapping) and isinstance(rp, Mapping):
            required = set(w.get("required") or ()) | set(r.get("required") or ())
            fillers = max([n for n in (w.get("minProperties"), w.get("maxProperties"),
                                       r.get("minProperties"), r.get("maxProperties"))
                           if isinstance(n, int)], default=0)
            same = [k for k in gp if k in wp and k in rp and k not in required
                    and wp[k] == rp[k] and (same_defs or not has_ref(wp[k]))]
            # required by the writer (so always there), the same on both sides: fixed
            fixed = {k for k in gp if k in wp and k in rp and k in (w.get("required") or ())
                     and wp[k] == rp[k] and (same_defs or not has_ref(wp[k]))
                     and unfixed is not None and k not in unfixed}
            # the fillers kept for counting are the smallest schemas (a boolean, not a
            # list of 32 patterned strings)
            kept = set(sorted(same, key=lambda k: (len(json.dumps(wp[k], default=str)), k)
                              )[:fillers])
            props = {}
            for k, v in gp.items():
                if k in read:  # a branch reads its value: kept whole
                    props[k] = v
                    continue
                if k in present and k in wp and k in rp:  # a branch tests it is there
                    props[k] = visit(v, wp[k], rp[k], depth + 1, join(path, k),
                                     unfixed=None if unfixed is None else frozenset())
                    continue
                if k not in required and join(path, k) in settled:
                    changed = True
                    continue
                if k in wp and k in rp:
                    if k in same and k not in kept:
                        changed = True
                        continue
                    if k in fixed:
                        value = _filler(gen, v)
                        if value is not _NONE:
                            props[k] = {"const": value}
                            changed = True
                            continue
                    props[k] = visit(v, wp[k], rp[k], depth + 1, join(path, k),
                                     unfixed=None if unfixed is None else frozenset())
                else:
                    props[k] = v
            out["properties"] = props
        if not stops and cel is None and isinstance(g.get("items"), Mapping) and all(
                w.get(k) == r.get(k) for k in ("minItems", "maxItems", "type")):
            # the same bounds on both sides: one item shows a break of an item, and a
            # second one an item that only breaks beside another (a list-map key)
            low, high = w.get("minItems"), w.get("maxItems")
            least: int = low if isinstance(low, int) else 0
            most: int | None = high if isinstance(high, int) else None
            cap = max(least, 2) if most is None else min(most, max(least, 2))
            if most is None or cap < most:
                out["maxItems"] = cap
                changed = True
        if isinstance(g.get("items"), Mapping):
            out["items"] = visit(g["items"], w.get("items"), r.get("items"), depth + 1,
                                 path + "[*]", unfixed=_distinct(w, r, unfixed), above=cel)
        if isinstance(g.get("additionalProperties"), Mapping):
            out["additionalProperties"] = visit(
                g["additionalProperties"], w.get("additionalProperties"),
                r.get("additionalProperties"), depth + 1, path + "[*]",
                unfixed=None if unfixed is None else frozenset())
        return out

    root = visit(gen.root, w_root, r_root, 0)
    if not changed:
        return gen
    return Schema(root=root, source=gen.source, name=gen.name, kubernetes=gen.kubernetes,
                  meta=gen.meta)
