"""The CEL type checker and cost estimate against figures the API server gave.

Every expected integer and error text below is what k8s.io/apiextensions-apiserver
v0.37.2 answers (``conformance/celcost``, the oracle of
``conformance/test_celcost_conformance.py``); issue 30 measured the first three, where
compatfuzz used to say 31,457,315, 320,244,003 and 629,164,014.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.strategies._cel_check import compile_errors, uses_old_self
from compatfuzz.strategies._cel_cost import call_cost, rule_cost
from compatfuzz.strategies._cel_cost_crd import (
    cost_error_message,
    crd_cost_errors,
    unbounded_cardinality,
)
from compatfuzz.strategies._cel_functions import SETS
from compatfuzz.strategies._cel_parse import ParseError, parse
from compatfuzz.strategies._cel_types import escape


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


STRINGS_1000 = {"type": "array", "maxItems": 1000, "items": {"type": "string"}}


@pytest.mark.parametrize(("rule", "schema", "cost"), [
    # issue 30: compatfuzz said 31,457,315 (refused a CRD the server accepts)
    ("sets.contains(self.l, [self.s])", _obj(l=STRINGS_1000, s={"type": "string"}), 1015),
    # issue 30: compatfuzz said 320,244,003
    ("self.s.split(',').all(x, x.matches('^[a-z]+$'))",
     _obj(s={"type": "string", "maxLength": 10_000}), 248_003),
    # issue 30: compatfuzz said 629,164,014
    ("self.l.map(x, x.name).all(n, n.size() < 64)", _obj(l={
        "type": "array", "maxItems": 1000, "items": _obj(name={"type": "string"})}), 20_014),
    # the server refuses these two, compatfuzz accepted them (no estimate for the format)
    ("self.l.isSorted()", _obj(l={"type": "array", "maxItems": 400_000,
                                  "items": {"type": "string", "maxLength": 63}}), 10_800_002),
    ("!format.dns1123Label().validate(self.s).hasValue()", _obj(s={"type": "string"}),
     10_066_341),
    ("self.l.all(x, x.size() < 3)", _obj(l={"type": "array", "items": {"type": "string"}}),
     6_291_453),
    # oldSelf's type is self's; optional syntax; two-variable comprehensions
    ("self.s == oldSelf.s", _obj(s={"type": "string", "maxLength": 10}), 8),
    ("self.?s.hasValue()", _obj(s={"type": "string"}), 3),
])
def test_the_estimate_is_the_servers(rule: str, schema: dict[str, Any], cost: int) -> None:
    assert rule_cost(rule, schema) == cost


def test_the_unbounded_cardinality_is_the_servers() -> None:
    assert unbounded_cardinality({"type": "object"}, None) == 1_048_576
    # required properties without a default make each value bigger: fewer fit a request
    required = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}}}
    assert unbounded_cardinality(required, None) == 3 * 1024 * 1024 // (2 + 4 + 2 + 4 + 1)


@pytest.mark.parametrize(("rule", "errors"), [
    ("self.x + 1 == 2", ["undefined field 'x'"]),
    ("self.l + 1 == 2", ["found no matching overload for '_+_' applied to "
                         "'(list(string), int)'"]),
    ("self.s.foo()", ["undeclared reference to 'foo' (in container '')"]),
    ("self.l", ["cel expression must evaluate to a bool"]),
    ("[1, 'a'].size() > 0", ["expected type 'int' but found 'string'"]),
    ("self.s.matches('[')", ["invalid matches argument"]),
    ("Foo{a: 1}", ["undeclared reference to 'Foo' (in container '')"]),
    ("self.l.includes('a')", []),  # stored expressions have the 1.37 lists library
    ("'%d %s'.format([1, 'a']) != ''", []),  # format's list may mix types
    ("self.m.namespace == 'a'", []),  # a reserved word finds its escaped field
    # what building the program refuses: constants are folded, regexes compiled
    ("int('a') == 1", ["program instantiation failed: type conversion error from 'string' "
                       "to 'int'"]),
    ("uint(-1) == 1u", ["program instantiation failed: unsigned integer overflow"]),
    ("matches('a', '[')", ["program instantiation failed: error parsing regexp: missing "
                           "closing ]: `[`"]),
    ("'%d'.format(['a']) == ''", ["error during formatting: decimal clause can only be used "
                                  "on integers, was given string"]),
    # cel-go's two nesting limits
    ("(" * 250 + "true" + ")" * 250, ["expression recursion limit exceeded: 250"]),
    ("1" + " + 1" * 250 + " == 1", ["max recursion depth exceeded"]),
    ("1" + " + 1" * 249 + " == 1", []),
])
def test_compile_errors_are_cel_gos(rule: str, errors: list[str]) -> None:
    schema = _obj(l={"type": "array", "items": {"type": "string"}}, s={"type": "string"},
                  m=_obj(namespace={"type": "string"}))
    assert compile_errors(rule, schema) == errors


def test_a_message_expression_must_be_a_string() -> None:
    schema = _obj(s={"type": "string"})
    assert compile_errors("'bad: ' + self.s", schema, message_expression=True) == []
    assert compile_errors("1", schema, message_expression=True) == [
        "messageExpression must evaluate to a string"]


def test_old_self_and_optional_old_self() -> None:
    schema = _obj(s={"type": "string"})
    assert compile_errors("oldSelf.hasValue()", schema) == [
        "found no matching overload for 'hasValue' applied to 'selfType.()'"]
    assert compile_errors("oldSelf.hasValue()", schema, old_self=True) == []
    assert uses_old_self("self.s == oldSelf.s", schema)
    assert not uses_old_self("self.s == 'a'", schema)
    # as the server decides it: any identifier named oldSelf, a loop variable too
    assert uses_old_self("['a'].all(oldSelf, oldSelf != '')", schema)
    assert not uses_old_self("oldSelf.nope == 1", schema)  # it does not compile


NODES = st.sampled_from([
    {"type": "string", "maxLength": 12}, {"type": "integer"},
    {"type": "array", "maxItems": 7, "items": {"type": "string", "maxLength": 3}},
    {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 4},
])
RULES = st.sampled_from([
    "has(self.f)", "self.f == self.f", "self.f.size() > 2", "self.f + 1 > 0",
    "self.f.all(x, x != '')", "self.f.startsWith('a')", "self.g == 1",
])


@settings(max_examples=60, deadline=None)
@given(NODES, RULES)
def test_nullable_and_ref_spellings_mean_the_same(node: dict[str, Any], rule: str) -> None:
    """A CRD's ``nullable: true``, compatfuzz's two normalised spellings and a ``$ref``
    give the same errors and the same estimate."""
    plain = _obj(f=node)
    kind = node["type"]
    spellings = [
        _obj(f={**node, "nullable": True}),
        _obj(f={**node, "type": [kind, "null"]}),
        _obj(f={"anyOf": [node, {"type": "null"}]}),
        _obj(f={"$ref": "#/defs/f"}),
    ]
    defs = {"#/defs/f": node}
    for schema in spellings:
        assert compile_errors(rule, schema, resolve=defs.__getitem__) == compile_errors(
            rule, plain)
        assert rule_cost(rule, schema, resolve=defs.__getitem__) == rule_cost(rule, plain)


@given(st.text(max_size=12))
def test_escaped_names_are_identifiers(name: str) -> None:
    escaped = escape(name)
    if escaped is not None:
        assert escaped.isidentifier() and escaped.isascii()
        parse(f"self.{escaped} == 1")


def test_escaping_follows_the_server() -> None:
    assert escape("foo-bar.baz/qux") == "foo__dash__bar__dot__baz__slash__qux"
    assert escape("a__b") == "a__underscores__b"
    assert escape("namespace") == "__namespace__"
    assert escape("9lives") is None and escape("sp ace") is None


def test_macros_expand_as_cel_go_does() -> None:
    e = parse("self.l.all(x, x > 0)")
    assert e.kind == "comp" and e.iter_var == "x" and e.accu_var == "@result"
    assert e.loop_cond is not None and e.loop_cond.function == "@not_strictly_false"
    with pytest.raises(ParseError, match="argument must be a simple name"):
        parse("self.l.all(1, true)")
    with pytest.raises(ParseError, match="invalid argument to has"):
        parse("has(self)")


def test_refusals_are_in_the_servers_words() -> None:
    assert cost_error_message("estimated rule cost", 10_000_020, 10_000_000) == (
        "estimated rule cost exceeds budget by factor of 1.000002x (try simplifying the "
        "rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
        "strings are declared)")
    assert "factor of 2.5x" in cost_error_message("x", 25, 10)
    assert "factor of more than 100x" in cost_error_message("x", 1001, 10)
    root = _obj(spec=_obj(l={"type": "array", "items": {"type": "string"},
                             "x-kubernetes-validations": [
                                 {"rule": "self.all(x, self.exists(y, x == y))"}]}))
    assert crd_cost_errors(root) == [
        "spec.validation.openAPIV3Schema.properties[spec].properties[l]."
        "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by "
        "factor of more than 100x (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)",
        "spec.validation.openAPIV3Schema.properties[spec].properties[l]."
        "x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost "
        "total exceeding cost limit for entire OpenAPIv3 schema",
        "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated "
        "rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than "
        "100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength "
        "where arrays, maps, and strings are declared)",
    ]


def test_the_cardinality_multiplies_down() -> None:
    """A rule under a list of 1,000 runs 1,000 times; under an unbounded list, as often
    as its smallest value fits a request."""
    rule = {"rule": "self.matches('^[a-z]+$')"}
    item = {"type": "string", "maxLength": 20, "x-kubernetes-validations": [rule]}
    bounded = _obj(l={"type": "array", "maxItems": 1000, "items": item})
    assert crd_cost_errors(bounded) == []
    assert rule_cost(rule["rule"], item) == 19  # ceil(81 x 0.1) x ceil(8 x 0.25) + self
    unbounded = _obj(l={"type": "array", "items": item})
    assert crd_cost_errors(unbounded) == [  # 19 x 1,048,576
        "spec.validation.openAPIV3Schema.properties[l].items.x-kubernetes-validations[0]."
        "rule: Forbidden: estimated rule cost exceeds budget by factor of 2.0x (try "
        "simplifying the rule, or adding maxItems, maxProperties, and maxLength where "
        "arrays, maps, and strings are declared)"]


@pytest.mark.parametrize(("name", "args", "result", "cost"), [
    ("matches", ("a" * 99, "^[a-z]+$"), True, 10 * 2),
    ("contains", ("a" * 100, "b" * 20), False, 10 * 2),
    ("startsWith", ("a" * 100, "b" * 31), False, 4),
    ("join", (["ab"] * 10, ","), ",".join(["ab"] * 10), 6),
    ("isSorted", (["abcdefghij"] * 3,), True, 3),
    ("_==_", ("a" * 50, "a" * 40), True, 4),
    ("size", ("abc",), 3, 1),
    ("contains", (SETS, ["a"] * 30, ["b"] * 4), False, 121),  # sets.contains: 1 + n x m
    ("equivalent", (SETS, ["a"] * 3, ["b"] * 4), False, 25),
])
def test_runtime_costs_follow_the_library(name: str, args: tuple[Any, ...], result: Any,
                                         cost: int) -> None:
    assert call_cost(name, args, result) == cost
