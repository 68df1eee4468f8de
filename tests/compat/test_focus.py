"""Searching only where the revisions differ (issue 19, item 6): what ``focus`` leaves
out, that the whole-schema search still finds what rules miss, and ``--no-witness``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.compat import Status, diff
from compatfuzz.compat import _engine as engine
from compatfuzz.compat._focus import focus
from compatfuzz.schema import Schema

BIG = {"type": "array", "items": {"type": "string", "pattern": "^[a-z]([-a-z0-9]*)$"}}


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


def props_of(s: Schema, *path: str) -> set[str]:
    node: Any = s.root
    for p in path:
        node = node["properties"][p]
    return set(node["properties"])


def focused(old: dict[str, Any], new: dict[str, Any], **kw: Any) -> Schema:
    w, r = Schema(root=old), Schema(root=new)
    return focus(w, w, r, **kw)


def test_identical_optional_fields_are_left_out_changed_and_required_stay() -> None:
    old = obj({"same": BIG, "req": BIG, "x": {"type": "integer", "maximum": 9}},
              required=["req"])
    new = obj({"same": {**BIG, "description": "reworded"}, "req": BIG,
               "x": {"type": "integer", "maximum": 3}}, required=["req"])
    assert props_of(focused(old, new)) == {"req", "x"}


def test_a_field_required_only_by_new_stays() -> None:
    old = obj({"a": BIG, "x": {"type": "integer"}})
    new = obj({"a": BIG, "x": {"type": "integer"}}, required=["a"])
    assert props_of(focused(old, new)) == {"a"}  # x: the same, optional on both sides


@pytest.mark.parametrize("keyword", [
    {"anyOf": [{"required": ["a"]}, {"required": ["x"]}]},
    {"x-kubernetes-validations": [{"rule": "has(self.a) || self.x > 1"}]},
    {"dependentRequired": {"a": ["x"]}},
])
def test_nothing_is_left_out_under_a_keyword_that_relates_siblings(
        keyword: dict[str, Any]) -> None:
    old = obj({"a": BIG, "x": {"type": "integer", "maximum": 9}}, **keyword)
    new = obj({"a": BIG, "x": {"type": "integer", "maximum": 3}}, **keyword)
    assert props_of(focused(old, new)) == {"a", "x"}


def test_under_a_union_that_tests_presence_the_named_fields_stay_and_shrink() -> None:
    """Kyverno's ``match: {not: {required: [any, all]}}``: ``any`` and ``all`` may be
    drawn (the union tests whether they are there), but what is the same inside them is
    left out; a branch that reads a field's value keeps it whole; a branch that counts
    fields keeps everything."""
    inner = obj({"big": BIG, "x": {"type": "integer", "maximum": 9}})
    inner3 = obj({"big": BIG, "x": {"type": "integer", "maximum": 3}})
    union = {"not": {"required": ["any", "all"]}}
    old = obj({"any": inner, "all": inner, "other": BIG}, **union)
    new = obj({"any": inner3, "all": inner, "other": BIG}, **union)
    g = focused(old, new)
    assert props_of(g) == {"any", "all"}
    assert props_of(g, "any") == {"x"} and props_of(g, "all") == set()
    reads = {"anyOf": [{"properties": {"all": {"required": ["big"]}}}, {"required": ["any"]}]}
    g = focused({**old, **reads}, {**new, **reads})
    assert props_of(g, "all") == {"big", "x"}  # whole: a branch reads its value
    counts = {"oneOf": [{"minProperties": 2}, {"required": ["any"]}]}
    assert props_of(focused({**old, **counts}, {**new, **counts})) == {"any", "all", "other"}


def test_unchanged_transition_rules_do_not_stop_the_walk_other_rules_do() -> None:
    """``self == oldSelf`` runs on updates only, so it judges none of the objects a search
    draws (Karpenter's immutable NodeClaim spec); a rule on the object itself, or a
    transition rule that changed, keeps everything."""
    def pair(old_rule: str, new_rule: str) -> Schema:
        return focused(
            obj({"a": BIG, "x": {"type": "integer", "maximum": 9}},
                **{"x-kubernetes-validations": [{"rule": old_rule}]}),
            obj({"a": BIG, "x": {"type": "integer", "maximum": 3}},
                **{"x-kubernetes-validations": [{"rule": new_rule}]}))
    assert props_of(pair("self == oldSelf", "self == oldSelf")) == {"x"}
    assert props_of(pair("has(self.a)", "has(self.a)")) == {"a", "x"}
    assert props_of(pair("self == oldSelf", "self.a == oldSelf.a")) == {"a", "x"}


def test_min_properties_keeps_the_smallest_identical_fields_as_fillers() -> None:
    old = obj({"big": BIG, "flag": {"type": "boolean"}, "n": {"type": "integer"},
               "x": {"type": "integer", "maximum": 9}}, minProperties=2)
    new = {**old, "properties": {**old["properties"], "x": {"type": "integer",
                                                            "maximum": 3}}}
    assert props_of(focused(old, new)) == {"flag", "n", "x"}


def test_an_array_with_the_same_bounds_is_drawn_short_a_changed_bound_is_not() -> None:
    item = obj({"x": {"type": "integer", "maximum": 9}})
    item3 = obj({"x": {"type": "integer", "maximum": 3}})
    g = focused(obj({"l": {"type": "array", "items": item}}),
                obj({"l": {"type": "array", "items": item3}}))
    assert g.root["properties"]["l"]["maxItems"] == 2
    g = focused(obj({"l": {"type": "array", "maxItems": 9, "items": item}}),
                obj({"l": {"type": "array", "maxItems": 3, "items": item3}}))
    assert g.root["properties"]["l"]["maxItems"] == 9


def test_settled_fields_are_left_out() -> None:
    old = obj({"spec": obj({"x": {"type": "integer"}})})
    new = obj({"spec": obj({"x": {"type": "integer"}, "added": BIG})})
    w, r = Schema(root=old), Schema(root=new)
    assert props_of(focus(r, r, w), "spec") == {"added"}
    assert props_of(focus(r, r, w, settled=frozenset({"spec.added"})), "spec") == set()


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True),
       st.integers(0, 9), st.integers(0, 9))
def test_a_witness_of_the_full_schema_is_still_valid_for_the_writer_once_focused(
        required: list[str], before: int, after: int) -> None:
    """Whatever ``focus`` keeps, a value drawn from it that fits the focused schema fits
    the writer's schema: leaving out optional fields never makes a writer-invalid
    object look like a witness."""
    props = {k: {"type": "integer", "maximum": 5} for k in "abcd"}
    old = obj({**props, "x": {"type": "integer", "maximum": before}}, required=required)
    new = obj({**props, "x": {"type": "integer", "maximum": after}}, required=required)
    g = focused(old, new)
    assert set(required) <= props_of(g)
    value = dict.fromkeys(props_of(g) - {"x"}, 0) | {"x": 0}
    assert Schema(root=old).is_valid(value) == Schema(root=g.root).is_valid(value)


def test_the_whole_schema_search_finds_a_break_among_identical_siblings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "walk_with_aliases", lambda *a, **k: ([], []))
    siblings = {f"f{i}": obj({"names": BIG, "n": {"type": "integer"}}) for i in range(20)}
    old = obj({"spec": obj({**siblings, "x": {"type": "integer", "maximum": 9}})})
    new = obj({"spec": obj({**siblings, "x": {"type": "integer", "maximum": 3}})})
    r = diff(old, new, whole_budget=100, direction="request")
    [f] = r.findings
    assert (f.rule, f.path, f.status) == ("witness-only", "spec.x", Status.CONFIRMED)
    assert f.witness.value == {"spec": {"x": 4}}


def test_revisions_equal_up_to_descriptions_are_not_searched(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(engine, "search", lambda *a, **k: calls.append(a) or (None, None, ""))
    old = obj({"spec": obj({"x": {"type": "integer", "description": "old words"}})})
    new = obj({"spec": obj({"x": {"type": "integer", "description": "new words"}})})
    assert diff(old, new, whole_budget=25).findings == ()
    assert calls == []
    new["properties"]["spec"]["properties"]["x"]["maximum"] = 3
    diff(old, new, whole_budget=25, budget=0)
    assert calls  # a real change is still searched


def test_no_witness_is_the_static_mode(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(obj({"x": {"type": "integer", "maximum": 9}})))
    new.write_text(json.dumps(obj({"x": {"type": "integer", "maximum": 3}}, required=["x"])))
    assert main(["diff", str(old), str(new), "--no-witness", "--format", "json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert {f["rule"] for f in findings} == {"bound-tightened", "required-added"}
    assert all(f["status"] == "not-checked" and f["witness"] is None for f in findings)
    assert main(["diff", str(old), str(new), "--no-witness"]) == 1
    out = capsys.readouterr().out
    assert "2 breaking (0 with a witness)" in out and "not-checked" in out


# a required list whose items a CEL rule filters: costly to draw afresh in every example
RULED = {"type": "array", "minItems": 1,
         "items": {"type": "string", "pattern": "^[a-z]{1,8}$"},
         "x-kubernetes-validations": [{"rule": "self.all(x, x != 'kops')"}]}


def test_a_field_the_writer_requires_that_is_the_same_is_drawn_as_one_fixed_value() -> None:
    """Required on the writer's side and the same on both: any value the writer allows
    will do, so the search draws one (valid) value instead of a new one per example."""
    old = obj({"req": RULED, "x": {"type": "integer", "maximum": 9}}, required=["req"])
    new = obj({"req": RULED, "x": {"type": "integer", "maximum": 3}}, required=["req"])
    w, r = Schema(root=old, kubernetes=True), Schema(root=new, kubernetes=True)
    g = focus(w, w, r)
    fixed = g.root["properties"]["req"]
    assert set(fixed) == {"const"}
    assert Schema(root=RULED, kubernetes=True).is_valid(fixed["const"])
    assert fixed["const"] and "kops" not in fixed["const"]
    assert g.root["properties"]["x"] == old["properties"]["x"]  # what changed is drawn
    # the same value every time (reproducible), and a copy the caller may change
    again = focus(w, w, r).root["properties"]["req"]["const"]
    assert again == fixed["const"] and again is not fixed["const"]


def test_a_field_only_the_reader_requires_is_not_fixed() -> None:
    """Leaving it out is the witness of ``required-added``: it must stay optional."""
    old = obj({"a": RULED, "x": {"type": "integer"}})
    new = obj({"a": RULED, "x": {"type": "integer"}}, required=["a"])
    w, r = Schema(root=old, kubernetes=True), Schema(root=new, kubernetes=True)
    assert focus(w, w, r).root["properties"]["a"] == RULED
    assert diff(old, new, whole_budget=0).findings[0].witness.value == {}


def test_the_fixed_value_belongs_to_its_own_revision() -> None:
    """The same ``$ref`` text in two revisions whose ``$defs`` differ: each gets a value
    of its own definition (a cache keyed on the field's text alone would hand one
    revision's value to the other)."""
    integer, string = {"type": "integer", "minimum": 5}, {"type": "string", "minLength": 3}
    for t in (integer, string, integer):
        defs = {"$defs": {"T": t}}
        old = obj({"req": {"$ref": "#/$defs/T"}, "x": {"type": "integer", "maximum": 9}},
                  required=["req"], **defs)
        new = obj({"req": {"$ref": "#/$defs/T"}, "x": {"type": "integer", "maximum": 3}},
                  required=["req"], **defs)
        w, r = Schema(root=old), Schema(root=new)
        value = focus(w, w, r).root["properties"]["req"]["const"]
        assert Schema(root={**t}).is_valid(value), (t, value)


def test_the_whole_schema_search_finds_a_break_beside_a_fixed_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "walk_with_aliases", lambda *a, **k: ([], []))
    old = obj({"spec": obj({"req": RULED, "x": {"type": "integer", "maximum": 9}},
                           required=["req"])}, required=["spec"])
    new = obj({"spec": obj({"req": RULED, "x": {"type": "integer", "maximum": 3}},
                           required=["req"])}, required=["spec"])
    w = Schema(root=old, kubernetes=True)
    r = diff(w, Schema(root=new, kubernetes=True), whole_budget=100, direction="request")
    [f] = r.findings
    assert (f.rule, f.path, f.status) == ("witness-only", "spec.x", Status.CONFIRMED)
    assert f.witness.value["spec"]["x"] == 4 and w.is_valid(f.witness.value)


def test_a_crd_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``load_revision`` parses the documents it has already read into CRDs, instead of
    handing the path to ``load_crds`` to read and parse again (Kyverno: 1.4 MB twice)."""
    import compatfuzz.schema as schema_mod
    from compatfuzz.compat import load_revision
    from compatfuzz.schema import _load, load_crds

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": obj(
                                      {"spec": obj({"x": {"type": "integer"}})})}}]}}
    path = tmp_path / "crd.yaml"
    path.write_text(json.dumps(crd))
    expected = load_crds(path)[0]
    reads: list[Any] = []
    real = schema_mod.read_documents

    def counting(p: Any) -> list[Any]:
        reads.append(p)
        return real(p)

    monkeypatch.setattr(schema_mod, "read_documents", counting)
    monkeypatch.setattr(_load, "read_documents", counting)
    rev = load_revision(str(path))
    assert len(reads) == 1
    assert rev.crd is not None and rev.crd.source == expected.source == str(path)
    assert rev.schemas()["v1"].root == expected.versions[0].schema.root


def test_list_map_keys_and_list_set_items_are_never_fixed() -> None:
    """Items of a list-map differ by their keys, of a list-set whole: a fixed key would
    leave room for one item, and a witness that needs two (a tightened ``maxItems``)
    would never be drawn."""
    def pair(list_type: dict[str, Any]) -> Schema:
        item = obj({"name": {"type": "string"}, "kind": {"type": "string"},
                    "x": {"type": "integer"}}, required=["name", "kind"])
        def side(most: int) -> dict[str, Any]:
            return obj({"l": {"type": "array", "maxItems": most, "items": item,
                              **list_type}}, required=["l"])
        w, r = Schema(root=side(5), kubernetes=True), Schema(root=side(3), kubernetes=True)
        return focus(w, w, r)

    def items(g: Schema) -> dict[str, Any]:
        return dict(g.root["properties"]["l"]["items"]["properties"])

    keyed = items(pair({"x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"]}))
    assert "const" not in keyed["name"] and "const" in keyed["kind"]
    whole = items(pair({"x-kubernetes-list-type": "set"}))
    assert not any("const" in v for v in whole.values())
    assert "const" in items(pair({}))["name"]  # an atomic list: nothing to keep apart


# ----------------------------------------------------------- under a CEL rule (issue 19)
FIELDS = ["a", "b", "c", "d-e"]
#: rules over an object; {f} is a field name as CEL spells it, {g} as a string literal
OBJECT_RULES = ["has(self.{f})", "!has(self.{f}) || self.{f} > 1", "self.{f} == 2",
                "self.size() > 2", "size(self) > 1", "'{g}' in self",
                "self.all(k, k != '{g}')", "self['{g}'] == 1", "self == oldSelf",
                "self.?{f}.orValue(0) > 0", "self.exists(k, k == '{g}')",
                "has(self.{f}) && self.{f} >= self.{f2}", "string(self) != ''"]


def spelled(name: str) -> str:
    return name.replace("-", "__dash__")


@given(st.lists(st.tuples(st.sampled_from(OBJECT_RULES), st.sampled_from(FIELDS),
                          st.sampled_from(FIELDS)), min_size=1, max_size=3),
       st.dictionaries(st.sampled_from(FIELDS), st.integers(0, 3)))
def test_a_field_no_rule_reads_changes_no_rule_verdict(
        rules: list[tuple[str, str, str]], value: dict[str, int]) -> None:
    """What ``_cel_reads`` says no rule reads can be left out: every rule gives the same
    verdict with and without it (evaluated by the generator's CEL evaluator)."""
    from compatfuzz.compat._focus import _cel_reads, _reads
    from compatfuzz.strategies._cel import compile_rules

    texts = [t.format(f=spelled(f), g=f, f2=spelled(f2)) for t, f, f2 in rules]
    node = obj({k: {"type": "integer"} for k in FIELDS},
               **{"x-kubernetes-validations": [{"rule": t} for t in texts]})
    reads = _cel_reads(node, node)
    if reads is None:
        return
    compiled = compile_rules(node)
    for name in FIELDS:
        if not _reads(name, reads) and name in value:
            rest = {k: v for k, v in value.items() if k != name}
            assert compiled.failures(value) == compiled.failures(rest), (texts, name)


@pytest.mark.parametrize(("rules", "expected"), [
    (["!has(self.serviceAccountName) || self.provider == 'azure'"],
     {"serviceAccountName", "provider"}),
    (["self.min <= self.max", "oldSelf.kind == self.kind"], {"min", "max", "kind"}),
    (["self.a__dash__b.all(x, x != '')"], {"a__dash__b"}),
    (["self == oldSelf"], None), (["size(self) > 1"], None), (["self.size() > 1"], None),
    (["self.all(k, k != 'x')"], None), (["self['a'] > 1"], None), (["'a' in self"], None),
])
def test_what_object_rules_read(rules: list[str], expected: set[str] | None) -> None:
    from compatfuzz.compat._focus import _cel_reads

    node = {"type": "object", "x-kubernetes-validations": [{"rule": r} for r in rules]}
    got = _cel_reads(node, node)
    assert (None if got is None else set(got[0])) == expected


@pytest.mark.parametrize(("rules", "expected"), [
    (["self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)", "self.size() < 9"],
     {"operator", "values"}),
    (["self.all(x, x.values.all(v, v != x.key))"], {"values", "key"}),
    (["self.exists(x, x == 'a')"], None), (["self.all(x, x.size() > 1)"], None),
    (["self[0].key == 'a'"], None), (["self.map(x, x).size() == 1"], None),
    (["self.all(i, x, x.key != '')"], None),
    (["self.transformList(i, x, x.key).size() > 0"], None),
])
def test_what_list_rules_read_of_their_items(rules: list[str],
                                             expected: set[str] | None) -> None:
    from compatfuzz.compat._focus import _cel_reads

    node = {"type": "array", "x-kubernetes-validations": [{"rule": r} for r in rules]}
    got = _cel_reads(node, node)
    assert (None if got is None else set(got[0])) == expected


def test_under_a_rule_the_fields_it_reads_stay_whole_the_rest_is_left_out() -> None:
    """Flux GitRepository 1.7: a rule on ``spec`` reads two fields; the other identical
    fields are left out as anywhere else, and a required one no rule reads is fixed."""
    rule = {"x-kubernetes-validations": [
        {"rule": "!has(self.sa) || (has(self.provider) && self.provider == 'azure')"}]}
    def side(most: int) -> dict[str, Any]:
        return obj({"spec": obj({"sa": {"type": "string"}, "provider": {"type": "string"},
                                 "url": {"type": "string"}, "big": BIG,
                                 "x": {"type": "integer", "maximum": most}},
                                required=["url"], **rule)}, required=["spec"])
    w, r = Schema(root=side(9), kubernetes=True), Schema(root=side(3), kubernetes=True)
    spec = focus(w, w, r).root["properties"]["spec"]
    assert set(spec["properties"]) == {"sa", "provider", "url", "x"}
    assert spec["properties"]["sa"] == {"type": "string"}  # read: drawn as before
    assert set(spec["properties"]["url"]) == {"const"}
    assert spec["x-kubernetes-validations"] == rule["x-kubernetes-validations"]


def test_a_fixed_value_is_shrunk_as_a_witness_shows_it() -> None:
    old = obj({"name": {"type": "string"}, "n": {"type": "integer"},
               "x": {"type": "integer", "maximum": 9}}, required=["name", "n"])
    new = {**old, "properties": {**old["properties"], "x": {"type": "integer",
                                                            "maximum": 3}}}
    w, r = Schema(root=old), Schema(root=new)
    props = focus(w, w, r).root["properties"]
    assert props["name"] == {"const": ""} and props["n"] == {"const": 0}


def test_the_same_change_at_two_places_is_searched_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``$ref``'d type used twice (Cluster API's ``machineHealthCheck`` under the
    control plane and under each machine deployment) changes the same way at both
    places: one search answers both findings, each witness at its own path. A change
    that differs is searched on its own."""
    calls: list[str] = []
    real = engine.witness_for

    def counting(f: Any, side: Any, **kw: Any) -> Any:
        calls.append(f.path)
        return real(f, side, **kw)

    monkeypatch.setattr(engine, "witness_for", counting)
    def check(most: int) -> dict[str, Any]:
        return obj({"range": {"type": "string", "maxLength": most}})
    old = obj({"a": check(99), "b": obj({"c": check(99)}), "d": check(99)})
    new = obj({"a": check(32), "b": obj({"c": check(32)}), "d": check(16)})
    r = diff(old, new, whole_budget=0, direction="request")
    assert [f.path for f in r.findings] == ["a.range", "b.c.range", "d.range"]
    assert all(f.status is Status.CONFIRMED for f in r.findings)
    assert calls == ["a.range", "d.range"]
    assert [f.witness.path for f in r.findings] == ["a.range", "b.c.range", "d.range"]
    assert [len(f.witness.value) for f in r.findings] == [33, 33, 17]
