"""Tests for compatfuzz.strategies._cel: x-kubernetes-validations rules on JSON values."""

from __future__ import annotations

import ipaddress
import json
import re
import string
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import celpy
import celpy.evaluation
import pytest
from celpy import celtypes
from hypothesis import assume, given
from hypothesis import strategies as st

from compatfuzz.errors import SchemaLoadError, UnsupportedRuleWarning
from compatfuzz.schema import read_documents
from compatfuzz.schema._quantity import parse_quantity
from compatfuzz.strategies._cel import (
    CompiledRules,
    UnsupportedRule,
    _environment,
    compile_rules,
    to_cel,
)
from compatfuzz.strategies._cel_functions import FUNCTIONS


def rules(*texts: str, **schema: Any) -> CompiledRules:
    node = {**schema, "x-kubernetes-validations": [{"rule": t} for t in texts]}
    return compile_rules(node, path="spec.test")


# --------------------------------------------------------------------------- classification


def test_rules_are_sorted_into_supported_transition_and_unsupported() -> None:
    compiled = rules(
        "self.a <= self.b",
        "self == oldSelf",
        "self.frobnicate()",
        "self.?x.orValue(1) == 1",
        "self.a == undefinedVariable",
        "self.map(x, x > 1, x * 2).size() > 0",
    )
    assert compiled.supported == ("self.a <= self.b",)
    assert compiled.transition == ("self == oldSelf",)
    by_rule = {u.rule: u.reason for u in compiled.unsupported}
    assert set(by_rule) == {
        "self.frobnicate()", "self.?x.orValue(1) == 1", "self.a == undefinedVariable",
        "self.map(x, x > 1, x * 2).size() > 0",
    }
    assert "frobnicate()" in by_rule["self.frobnicate()"]
    assert "optional syntax" in by_rule["self.?x.orValue(1) == 1"]
    assert "'undefinedVariable'" in by_rule["self.a == undefinedVariable"]
    assert "3 arguments" in by_rule["self.map(x, x > 1, x * 2).size() > 0"]
    assert all(u.path == "spec.test" for u in compiled.unsupported)
    assert repr(compiled) == (
        "CompiledRules(path='spec.test', supported=1, transition=1, unsupported=4)")


def test_unknown_functions_name_the_library_they_come_from() -> None:
    (unsupported,) = rules("!format.dns1123Label().validate(self).hasValue()").unsupported
    assert unsupported.reason == (
        "unknown functions dns1123Label(), validate(), hasValue() "
        "(Kubernetes format library; CEL optional types: not implemented)")


def test_transition_and_unsupported_rules_do_not_filter() -> None:
    compiled = rules("self == oldSelf", "self.nope()")
    assert compiled.check(1) and compiled.check("anything")


def test_node_without_rules_accepts_everything() -> None:
    compiled = compile_rules({"type": "object"})
    assert compiled.supported == compiled.transition == compiled.unsupported == ()
    assert compiled.check({"a": 1})


@pytest.mark.parametrize("bad", [
    {"x-kubernetes-validations": "self > 0"},
    {"x-kubernetes-validations": [{"message": "no rule"}]},
    {"x-kubernetes-validations": [{"rule": 3}]},
])
def test_malformed_validations_raise_with_path_and_fix(bad: dict[str, Any]) -> None:
    with pytest.raises(SchemaLoadError) as info:
        compile_rules(bad, path="spec.replicas")
    assert "spec.replicas" in str(info.value)
    assert "fix:" in str(info.value)


# --------------------------------------------------------------------------- check semantics


def test_has_works_for_absent_fields_and_missing_key_means_violation() -> None:
    guarded = rules("has(self.x) ? self.x > 1 : true")
    assert guarded.check({}) and guarded.check({"x": 2}) and not guarded.check({"x": 1})
    unguarded = rules("self.x > 1")
    assert not unguarded.check({})  # "no such key" on the API server too
    assert unguarded.check({"x": 5})


def test_non_boolean_results_and_type_errors_do_not_hold() -> None:
    assert not rules("self.size()").check("abc")
    assert not rules("self > 1").check("text")


def test_failures_lists_exactly_the_broken_rules() -> None:
    compiled = rules("self.a < self.b", "self.a > 0", "self.b < 10")
    assert compiled.failures({"a": 5, "b": 3}) == ("self.a < self.b",)
    assert compiled.failures({"a": -1, "b": 30}) == ("self.a > 0", "self.b < 10")
    assert compiled.failures({"a": 1, "b": 2}) == ()


def test_integer_outside_int64_is_a_violation_not_a_crash() -> None:
    assert not rules("true").check(2**70)


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                  max_size=3),
    max_leaves=8,
))
def test_check_agrees_with_failures_and_is_stable(value: Any) -> None:
    compiled = _SHAPES
    first = compiled.check(value)
    assert first == (compiled.failures(value) == ())
    assert compiled.check(value) == first  # memoised answer is the same answer


_SHAPES = rules("type(self) == map ? self.size() <= 2 : true",
                "type(self) == list ? self.all(x, x != null) : true")


def test_rule_programs_are_compiled_once_per_rule_text() -> None:
    a = rules("self.size() > 3")
    b = compile_rules({"type": "string", "x-kubernetes-validations": [{"rule": "self.size() > 3"}]})
    assert a._programs[0] is b._programs[0]


def test_rule_crashing_cel_python_is_demoted_with_a_warning() -> None:
    rule = "size(" + "[" * 200 + "]" * 200 + ") == 1"  # cel-python recurses past the limit
    compiled = rules(rule)
    assert compiled.supported
    with pytest.warns(UnsupportedRuleWarning, match="no longer checked"):
        assert compiled.check("abc")
    assert [u.rule for u in compiled.unsupported] == [rule]
    again = rules(rule)
    assert again.supported == () and len(again.unsupported) == 1


def test_invalid_regex_is_an_evaluation_error() -> None:
    # regex.go compiles the pattern at evaluation: an invalid one is an error, so the
    # rule does not hold (it used to crash cel-python with re2.error and be demoted)
    compiled = rules("self.find('(unclosed') == ''", "self.findAll('(', 0) == []")
    assert compiled.failures("abc") == compiled.supported
    assert compiled.unsupported == ()


def test_building_the_environment_keeps_the_recursion_limit() -> None:
    # celpy.Environment() sets it to 2500, which Hypothesis reports as a warning when it
    # happens inside a test; run in a fresh interpreter so the environment is built here.
    code = (
        "import sys; sys.setrecursionlimit(1234)\n"
        "from compatfuzz.strategies._cel import compile_rules\n"
        "r = compile_rules({'x-kubernetes-validations': [{'rule': '((self > 0))'}]})\n"
        "assert r.check(1) and not r.check(0)\n"
        "print(sys.getrecursionlimit())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "1234"


# ----------------------------------------------------------------- schema-directed conversion


def test_number_fields_are_doubles_and_integer_fields_ints() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "i": {"type": "integer"}}}
    compiled = compile_rules({**schema, "x-kubernetes-validations": [
        {"rule": "type(self.n) == double && type(self.i) == int"}]})
    assert compiled.check({"n": 3, "i": 3})
    assert not compile_rules({"x-kubernetes-validations": [
        {"rule": "type(self.n) == double"}]}).check({"n": 3})


@pytest.mark.parametrize(("rule", "holds"), [
    ("self.n == 3", True),  # cel-go cross-type numeric equality; cel-python alone: error
    ("self.n != 3", False),
    ("self.n in [1, 3]", True),
    ("self.n == 4", False),
    ("size(self.b) == 3 && self.b == b'abc'", True),  # format: byte is base64 -> bytes
])
def test_numbers_compare_across_types_and_bytes_decode(rule: str, holds: bool) -> None:
    schema = {"type": "object", "properties": {
        "n": {"type": "number"}, "b": {"type": "string", "format": "byte"}}}
    compiled = compile_rules({**schema, "x-kubernetes-validations": [{"rule": rule}]})
    assert compiled.check({"n": 3, "b": "YWJj"}) is holds


def test_property_names_are_escaped_like_kubernetes() -> None:
    schema = {"type": "object", "properties": {
        "foo-bar": {"type": "string"}, "namespace": {"type": "string"},
        "a.b": {"type": "string"}, "x__y": {"type": "string"}}}
    compiled = compile_rules({**schema, "x-kubernetes-validations": [{"rule": (
        "self.foo__dash__bar == '1' && self.__namespace__ == '2' && self.a__dot__b == '3'"
        " && self.x__underscores__y == '4'")}]})
    assert compiled.check({"foo-bar": "1", "namespace": "2", "a.b": "3", "x__y": "4"})
    assert not compiled.check({"foo-bar": "0", "namespace": "2", "a.b": "3", "x__y": "4"})


def test_map_keys_from_additional_properties_are_not_escaped() -> None:
    node = {"type": "object", "additionalProperties": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "'foo-bar' in self"}]}
    assert compile_rules(node).check({"foo-bar": "x"})


def test_date_time_and_duration_formats() -> None:
    schema = {"type": "object", "properties": {
        "at": {"type": "string", "format": "date-time"},
        "ttl": {"type": "string", "format": "duration"},
        "day": {"type": "string", "format": "date"}}}
    compiled = compile_rules({**schema, "x-kubernetes-validations": [
        {"rule": "self.at + self.ttl < timestamp('2024-01-01T00:00:01Z')"},
        {"rule": "self.ttl > duration('0s')"},
        {"rule": "self.day < self.at"}]})
    base = {"at": "2024-01-01T00:00:00Z", "day": "2023-12-31"}
    assert compiled.check({**base, "ttl": "300ms"})  # cel-python's own parser says 0s
    assert compiled.failures({**base, "ttl": "2s"}) == (
        "self.at + self.ttl < timestamp('2024-01-01T00:00:01Z')",)
    assert compiled.failures({**base, "ttl": "0s"}) == ("self.ttl > duration('0s')",)
    lower = {"at": "2024-01-01t00:00:00z", "day": "2023-12-31", "ttl": "1ms"}
    assert compiled.check(lower)


def test_refs_are_converted_through_the_resolver() -> None:
    defs = {"#/$defs/N": {"type": "number"}}
    node = {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}},
            "x-kubernetes-validations": [{"rule": "type(self.n) == double"}]}
    assert compile_rules(node, resolve=defs.__getitem__).check({"n": 1})
    assert not compile_rules(node).check({"n": 1})


def test_to_cel_rejects_non_json() -> None:
    with pytest.raises(ValueError, match="not a JSON value"):
        to_cel({1, 2})


# --------------------------------------------------------------------------- Kubernetes libraries
# Expected values are passed in through ``self`` so that each rule is compiled once.

small_ints = st.lists(st.integers(-1000, 1000), max_size=8)


@given(small_ints, st.integers(-1000, 1000))
def test_lists_library_matches_python(items: list[int], probe: int) -> None:
    compiled = rules(
        "self.l.sum() == self.sum",
        "self.l.isSorted() == self.sorted",
        "self.l.indexOf(self.probe) == self.index",
        "self.l.lastIndexOf(self.probe) == self.last",
        "self.l.size() == 0 || (self.l.min() == self.min && self.l.max() == self.max)",
    )
    expected = {
        "l": items, "probe": probe, "sum": sum(items), "sorted": items == sorted(items),
        "index": items.index(probe) if probe in items else -1,
        "last": len(items) - 1 - items[::-1].index(probe) if probe in items else -1,
        "min": min(items, default=0), "max": max(items, default=0),
    }
    assert compiled.failures(expected) == ()
    assert not compiled.check({**expected, "sum": expected["sum"] + 1})


def test_min_of_empty_list_is_an_error() -> None:
    assert not rules("self.min() == 0").check([])


ascii_text = st.text(alphabet=string.ascii_letters + string.digits + "-/. Äé", max_size=12)


@given(ascii_text, st.sampled_from(["-", "/", ".", "ab"]))
def test_strings_extension_matches_python(text: str, sep: str) -> None:
    lower = "".join(c.lower() if c.isascii() else c for c in text)
    compiled = rules(
        "self.s.lowerAscii() == self.lower",
        "self.s.split(self.sep).join(self.sep) == self.s",
        "self.s.split(self.sep).size() == self.parts",
        "self.s.indexOf(self.sep) == self.index && self.s.lastIndexOf(self.sep) == self.last",
        "self.s.replace(self.sep, '') == self.removed",
        "self.s.size() == 0 || self.s.charAt(0) == self.first",
        "self.s.substring(self.s.size() / 2) == self.tail",
    )
    value = {
        "s": text, "sep": sep, "lower": lower, "parts": len(text.split(sep)),
        "index": text.find(sep), "last": text.rfind(sep), "removed": text.replace(sep, ""),
        "first": text[:1], "tail": text[len(text) // 2:],
    }
    assert compiled.failures(value) == ()
    assert not compiled.check({**value, "lower": lower + "x"})


@pytest.mark.parametrize(("rule", "value", "holds"), [
    ("self.upperAscii() == 'ABCÄ'", "abcÄ", True),
    ("self.trim() == 'x'", "  x\t", True),
    ("self.split('/', 2) == ['a', 'b/c']", "a/b/c", True),
    ("self.split('/', 0) == []", "a/b", True),
    ("self.replace('a', 'b', 1) == 'bab'", "aab", True),
    ("self.charAt(3) == ''", "abc", True),
    ("self.charAt(4) == ''", "abc", False),  # index out of range is an error
    ("self.substring(1, 2) == 'b'", "abc", True),
    ("self.substring(2, 1) == ''", "abc", False),
    ("self.indexOf('b', 2) == 3", "abcb", True),
    ("self.reverse() == 'cba'", "abc", True),
    ("self.find('[0-9]+') == '123'", "ab123cd45", True),
    ("self.find('[0-9]+') == ''", "abc", True),
    ("self.findAll('[0-9]+') == ['123', '45']", "ab123cd45", True),
    ("self.findAll('[0-9]+', 1) == ['123']", "ab123cd45", True),
    ("self.matches('^[a-z]+$')", "abc", True),
    ("self.matches('^[a-z]+$')", "ab1", False),
])
def test_string_and_regex_functions(rule: str, value: str, holds: bool) -> None:
    assert rules(rule).check(value) is holds


@pytest.mark.parametrize(("rule", "value", "holds"), [
    ("isURL(self) && url(self).getScheme() == 'https'", "https://example.com/a", True),
    ("isURL(self)", "example.com", False),
    ("isURL(self)", "/just/a/path", True),
    ("url(self).getHost() == 'example.com:8080'", "https://example.com:8080/x", True),
    ("url(self).getHostname() == '::1' && url(self).getHost() == '[::1]:80'",
     "http://[::1]:80/", True),
    ("url(self).getPort() == ''", "https://example.com/", True),
    ("url(self).getEscapedPath() == '/a%20b'", "https://example.com/a%20b?x=1", True),
    ("url(self).getQuery() == {'a': ['1', '2'], 'b': ['']}", "https://e.com/?a=1&a=2&b=", True),
    ("isURL(self)", "https://example.com:port/", False),
])
def test_url_library(rule: str, value: str, holds: bool) -> None:
    assert rules(rule).check(value) is holds


@pytest.mark.parametrize(("rule", "value", "holds"), [
    ("isIP(self) && ip(self).family() == 4", "10.0.0.1", True),
    ("isIP(self)", "010.0.0.1", False),
    ("isIP(self)", "::ffff:10.0.0.1", False),  # IPv4-mapped IPv6 is rejected
    ("isIP(self)", "fe80::1%eth0", False),  # zones are rejected
    ("ip(self).isLoopback()", "::1", True),
    ("ip(self).isGlobalUnicast()", "10.0.0.1", True),  # Go: private is global unicast
    ("ip(self).isGlobalUnicast()", "255.255.255.255", False),
    ("ip(self).isLinkLocalMulticast()", "224.0.0.5", True),
    ("ip(self).isLinkLocalMulticast()", "ff02::1", True),
    ("ip(self).isLinkLocalUnicast()", "169.254.1.1", True),
    ("ip(self).isUnspecified()", "0.0.0.0", True),
    ("string(ip(self)) == '2001:db8::1'", "2001:0db8:0000::1", True),
    ("isCIDR(self) && cidr(self).prefixLength() == 24", "192.168.0.7/24", True),
    ("isCIDR(self)", "192.168.0.7", False),
    ("cidr(self).ip() == ip('192.168.0.7')", "192.168.0.7/24", True),
    ("cidr(self).masked() == cidr('192.168.0.0/24')", "192.168.0.7/24", True),
    ("cidr(self).containsIP('192.168.0.200')", "192.168.0.7/24", True),
    ("cidr(self).containsIP(ip('192.168.1.1'))", "192.168.0.7/24", False),
    ("cidr(self).containsCIDR('192.168.0.128/25')", "192.168.0.0/24", True),
    ("cidr(self).containsCIDR(cidr('192.168.0.0/23'))", "192.168.0.0/24", False),
])
def test_ip_and_cidr_libraries(rule: str, value: str, holds: bool) -> None:
    assert rules(rule).check(value) is holds


@given(st.ip_addresses(), st.ip_addresses(v=4) | st.ip_addresses(v=6), st.data())
def test_cidr_contains_ip_matches_ipaddress(
    address: Any, base: Any, data: st.DataObject,
) -> None:
    assume(getattr(address, "ipv4_mapped", None) is None and
           getattr(base, "ipv4_mapped", None) is None)
    prefix = data.draw(st.integers(0, base.max_prefixlen))
    network = ipaddress.ip_network(f"{base}/{prefix}", strict=False)
    compiled = rules("cidr(self.c).containsIP(self.ip) == self.expected")
    expected = address.version == network.version and address in network
    value = {"c": str(network), "ip": str(address), "expected": expected}
    assert compiled.check(value)
    assert not compiled.check({**value, "expected": not expected})


@pytest.mark.parametrize(("rule", "value", "holds"), [
    ("sets.contains(self, [1, 2])", [3, 2, 1], True),
    ("sets.contains(self, [4])", [3, 2, 1], False),
    ("sets.equivalent(self, [1, 2, 2])", [2, 1], True),
    ("sets.intersects(self, [5, 1])", [1], True),
    ("sets.intersects(self, [])", [1], False),
    ("self.contains('b') && ['a'].exists(x, x == 'a')", "abc", True),
])
def test_sets_library_and_contains(rule: str, value: Any, holds: bool) -> None:
    assert rules(rule).check(value) is holds


# --------------------------------------------------------------------------- quantities

_SUFFIX_SCALE = {"": Decimal(1), "m": Decimal("0.001"), "k": Decimal(1000),
                 "M": Decimal(10**6), "G": Decimal(10**9), "Ki": Decimal(1024),
                 "Mi": Decimal(1024**2), "Gi": Decimal(1024**3), "e3": Decimal(1000),
                 "E": Decimal(10**18), "n": Decimal("1e-9"), "u": Decimal("1e-6")}

quantities = st.tuples(
    st.decimals(min_value=-(10**6), max_value=10**6, places=3, allow_nan=False,
                allow_infinity=False),
    st.sampled_from(sorted(_SUFFIX_SCALE)),
)


def _spell(q: tuple[Decimal, str]) -> str:
    number, suffix = q
    return f"{number:f}{suffix}"


@given(quantities, quantities)
def test_quantity_comparisons_follow_parsed_values(
    a: tuple[Decimal, str], b: tuple[Decimal, str],
) -> None:
    # The values ParseQuantity gives (rounded up to the nano), from the port that
    # conformance/test_apiserver_conformance.py checks against apimachinery.
    qa, qb = parse_quantity(_spell(a)), parse_quantity(_spell(b))
    cmp = qa.cmp(qb)
    compiled = rules(
        "quantity(self.a).compareTo(quantity(self.b)) == self.cmp",
        "quantity(self.a).isLessThan(quantity(self.b)) == self.lt",
        "quantity(self.a).isGreaterThan(quantity(self.b)) == self.gt",
        "(quantity(self.a) == quantity(self.b)) == self.eq",
        "quantity(self.a).add(quantity(self.b)).sub(quantity(self.b)) == quantity(self.a)",
        "sign(quantity(self.a)) == self.sign",
    )
    value = {"a": _spell(a), "b": _spell(b), "cmp": cmp, "lt": cmp < 0, "gt": cmp > 0,
             "eq": cmp == 0, "sign": qa.sign()}
    assert compiled.failures(value) == ()
    assert not compiled.check({**value, "lt": not value["lt"]})


@pytest.mark.parametrize(("rule", "value", "holds"), [
    ("isQuantity(self)", "1.5Gi", True),
    ("isQuantity(self)", "1.5GiB", False),
    ("isQuantity(self)", "", False),
    ("quantity(self).asInteger() == 1610612736", "1.5Gi", False),  # an inf.Dec: error
    ("quantity(self).asInteger() == 1610612736", "1572864Ki", True),
    ("quantity(self).isInteger()", "100m", False),
    ("quantity(self).asInteger() > 0", "100m", False),  # not an integer: error
    ("quantity(self).asApproximateFloat() == 0.1", "100m", True),
    ("quantity(self).add(1) == quantity('2')", "1000m", True),
    ("quantity(self).isGreaterThan(quantity('1Gi'))", "1G", False),
    ("quantity(self).isLessThan(quantity('1Gi'))", "1G", True),
    ("quantity(self) == quantity('1k')", "1e3", True),
])
def test_quantity_library(rule: str, value: str, holds: bool) -> None:
    assert rules(rule).check(value) is holds


def test_quantity_arithmetic_is_exact_for_long_numbers() -> None:
    big = "123456789012345678901234567890.123456789"
    # A 28-digit decimal context would round these; inf.Dec arithmetic is exact.
    compiled = rules(f"sign(quantity(self).sub(quantity('{big}k'))) == 0")
    assert compiled.check(f"{big}k")
    assert not compiled.check(f"{big[:-1]}8k")
    # BinarySI is capped at 2**63-1 (ParseQuantity), so these two are equal
    assert rules(f"quantity(self) == quantity('{big}Ki')").check(f"{big[:-1]}8Ki")


# --------------------------------------------------------------------------- real rules
# (rule, satisfying value, violating value, schema or None). Sources: Cluster API CRDs in
# ../shared/corpus (all distinct rules there), Gateway API v1 HTTPRoute CRD
# (kubernetes-sigs/gateway-api, config/crd/standard/gateway.networking.k8s.io_httproutes.yaml,
# Apache-2.0) and the examples of the Kubernetes CEL documentation.

_CONDITION_TYPES = ("!(self in ['Ready','Available','HealthCheckSucceeded','OwnerRemediated',"
                    "'ExternallyRemediated'])")
_PARTITION = ("self.matches('^(Linux|LinuxSwap|LinuxRAID|LVM|Fat32|NTFS|LinuxExtended|"
              "[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12})$')")
_QUALIFIED_KEY = ("self.contains('/') ? ( self.split('/') [0].size() <= 253 && "
                  "self.split('/') [1].size() <= 63 && self.split('/').size() == 2 ) : "
                  "self.size() <= 63")

REAL_RULES: list[tuple[str, Any, Any, dict[str, Any] | None]] = [
    # Cluster API
    (_CONDITION_TYPES, "MyCondition", "Ready", None),
    ("self.all(x, self.exists_one(y, x.name == y.name))",
     [{"name": "a"}, {"name": "b"}], [{"name": "a"}, {"name": "a"}], None),
    ("self.all(x, self.exists_one(y, x == y))", ["a", "b"], ["a", "b", "a"], None),
    ("[has(self.layout),has(self.diskLayout)].filter(x,x==true).size() == 1",
     {"layout": "x"}, {"layout": "x", "diskLayout": {}}, None),
    (_PARTITION, "0FC63DAF-8483-4772-8E79-3D69D8477DE4", "ext4", None),
    (_QUALIFIED_KEY, "example.com/key", "a/b/c", None),
    # Gateway API HTTPRoute
    ("self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
     {"type": "ReplaceFullPath", "replaceFullPath": "/x"}, {"type": "ReplaceFullPath"}, None),
    ("has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true",
     {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"},
     {"type": "ReplaceFullPath", "replacePrefixMatch": "/"}, None),
    ("!(has(self.requestHeaderModifier) && self.type != 'RequestHeaderModifier')",
     {"type": "RequestHeaderModifier", "requestHeaderModifier": {}},
     {"type": "URLRewrite", "requestHeaderModifier": {}}, None),
    ("!(!has(self.urlRewrite) && self.type == 'URLRewrite')",
     {"type": "URLRewrite", "urlRewrite": {}}, {"type": "URLRewrite"}, None),
    ("!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))",
     [{"type": "RequestRedirect"}], [{"type": "RequestRedirect"}, {"type": "URLRewrite"}], None),
    ("self.filter(f, f.type == 'RequestHeaderModifier').size() <= 1",
     [{"type": "RequestHeaderModifier"}, {"type": "URLRewrite"}],
     [{"type": "RequestHeaderModifier"}, {"type": "RequestHeaderModifier"}], None),
    # Kubernetes CEL documentation
    ("self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
     {"minReplicas": 1, "replicas": 2, "maxReplicas": 3},
     {"minReplicas": 1, "replicas": 4, "maxReplicas": 3}, None),
    ("'Available' in self.stateCounts", {"stateCounts": {"Available": 1}},
     {"stateCounts": {"Pending": 1}}, None),
    ("(size(self.list1) == 0) != (size(self.list2) == 0)",
     {"list1": [1], "list2": []}, {"list1": [], "list2": []}, None),
    ("!('MY_FIELD' in self.map1) || self['MY_FIELD'].matches('^[a-zA-Z]*$')",
     {"map1": {}, "MY_FIELD": "x"}, {"map1": {"MY_FIELD": 1}, "MY_FIELD": "x1"}, None),
    ("self.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))",
     {"envars": [{"name": "MY_ENV", "value": "abc"}]},
     {"envars": [{"name": "MY_ENV", "value": "abc1"}]}, None),
    ("has(self.expired) && self.created + self.ttl < self.expired",
     {"created": "2024-01-01T00:00:00Z", "ttl": "1h", "expired": "2024-01-01T02:00:00Z"},
     {"created": "2024-01-01T00:00:00Z", "ttl": "3h", "expired": "2024-01-01T02:00:00Z"},
     {"type": "object", "properties": {
         "created": {"type": "string", "format": "date-time"},
         "expired": {"type": "string", "format": "date-time"},
         "ttl": {"type": "string", "format": "duration"}}}),
    ("type(self) == string ? self == '100%' : self == 1000", 1000, "99%",
     {"x-kubernetes-int-or-string": True}),
    ("self.set1.all(e, !(e in self.set2))", {"set1": [1, 2], "set2": [3]},
     {"set1": [1, 2], "set2": [2]}, None),
    ("size(self.clusters.filter(c, c.name == self.primary)) == 1",
     {"primary": "a", "clusters": [{"name": "a"}, {"name": "b"}]},
     {"primary": "c", "clusters": [{"name": "a"}]}, None),
    ("self.widgets.exists(w, w.key == 'x' && w.foo < 10)",
     {"widgets": [{"key": "x", "foo": 1}]}, {"widgets": [{"key": "x", "foo": 10}]}, None),
]


@pytest.mark.parametrize(("rule", "good", "bad", "schema"), REAL_RULES,
                         ids=[r[0][:40] for r in REAL_RULES])
def test_real_rule_accepts_valid_and_rejects_invalid(
    rule: str, good: Any, bad: Any, schema: dict[str, Any] | None,
) -> None:
    compiled = compile_rules({**(schema or {}), "x-kubernetes-validations": [{"rule": rule}]})
    assert compiled.supported == (rule,)
    assert compiled.check(good)
    assert not compiled.check(bad)


# --------------------------------------------------------------------------- AST collapsing
# compile_rules drops pass-through grammar levels for speed; it must not change any result.

_MIXED_RULES = [
    "-self.a < 3 && !(self.a * 2 > self.b) || self.a % 3 == 0",
    "self.a - self.b + 1 >= self.b / (self.a == 0 ? 1 : self.a)",
    "[self.a, self.b].exists_one(x, x > 0) ? self.a in [1, 2, 3] : self.b != 4",
    "has(self.c) || (self.a > 0 ? self.b > 0 : self.b < 0)",
    "{'k': self.a}['k'] == self.a && size([self.a]) == 1 && [self.a, self.b].all(v, v < 40)",
    "string(self.a).size() <= 2 && int(double(self.b)) == self.b && (self.a > 1) == true",
    "[self.a, self.b].map(v, v * 2).filter(v, v > 0).size() == 1",
]


def _plain_check(rule: str, value: Any) -> bool:
    env = _environment()  # a fresh celpy.Environment() would move the recursion limit
    program = env.program(env.compile(rule), functions=FUNCTIONS)
    try:
        result = program.evaluate({"self": to_cel(value)})
    except celpy.evaluation.CELEvalError:
        return False
    return isinstance(result, celtypes.BoolType) and bool(result)


@given(st.sampled_from(_MIXED_RULES), st.integers(-50, 50), st.integers(-50, 50), st.booleans())
def test_collapsed_ast_evaluates_like_the_parsed_one(rule: str, a: int, b: int, c: bool) -> None:
    value = {"a": a, "b": b, **({"c": 1} if c else {})}
    assert rules(rule).check(value) == _plain_check(rule, value)


@pytest.mark.parametrize(("rule", "good", "bad", "schema"),
                         [r for r in REAL_RULES if r[3] is None],
                         ids=[r[0][:40] for r in REAL_RULES if r[3] is None])
def test_collapsed_ast_agrees_on_real_rules(rule: str, good: Any, bad: Any, schema: None) -> None:
    assert _plain_check(rule, good) and not _plain_check(rule, bad)


# --------------------------------------------------------------------------- corpus


def _load_yaml(path: Path) -> list[Any]:
    return [d for d in read_documents(path) if d]  # as Kubernetes reads YAML


def _rule_nodes(node: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if not isinstance(node, Mapping):
        return
    if "x-kubernetes-validations" in node:
        yield path, node
    for key, sub in node.items():
        if key == "properties" and isinstance(sub, Mapping):
            for name, prop in sub.items():
                yield from _rule_nodes(prop, f"{path}.{name}")
        elif key in ("items", "additionalProperties"):
            yield from _rule_nodes(sub, f"{path}[*]")
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(sub, list):
            for branch in sub:
                yield from _rule_nodes(branch, path)
        elif key == "$defs" and isinstance(sub, Mapping):
            for name, definition in sub.items():
                yield from _rule_nodes(definition, name)


def _crd_rule_nodes(files: list[Path]) -> list[tuple[str, Mapping[str, Any]]]:
    found = []
    for file in files:
        for crd in _load_yaml(file):
            for version in crd["spec"]["versions"]:
                root = version["schema"]["openAPIV3Schema"]
                found += _rule_nodes(root, f"{crd['spec']['names']['kind']}/{version['name']}")
    return found


@pytest.fixture(scope="module")
def corpus_rules(corpus_dir: Path) -> list[tuple[str, Mapping[str, Any]]]:
    return _crd_rule_nodes(sorted((corpus_dir / "crds" / "cluster-api").glob("*.yaml")))


def test_corpus_rules_are_all_supported(
    corpus_rules: list[tuple[str, Mapping[str, Any]]],
) -> None:
    counts: Counter[str] = Counter()
    for path, node in corpus_rules:
        compiled = compile_rules(node, path=path)
        counts["total"] += len(node["x-kubernetes-validations"])
        counts["supported"] += len(compiled.supported)
        counts["transition"] += len(compiled.transition)
        counts["unsupported"] += len(compiled.unsupported)
    # Measured on cluster-api main (ae7ff04): 50 rules, 50 supported.
    assert counts["total"] >= 50
    assert counts["supported"] + counts["transition"] + counts["unsupported"] == counts["total"]
    assert counts["supported"] >= 1.0 * (counts["total"] - counts["transition"])


def test_every_distinct_corpus_rule_has_a_passing_and_failing_example(
    corpus_rules: list[tuple[str, Mapping[str, Any]]],
) -> None:
    examples = {rule: (good, bad) for rule, good, bad, _ in REAL_RULES}
    for path, node in corpus_rules:
        compiled = compile_rules(node, path=path)
        for rule in compiled.supported:
            assert rule in examples, f"new corpus rule at {path} needs an example: {rule!r}"
            good, bad = examples[rule]
            single = compile_rules({**node, "x-kubernetes-validations": [{"rule": rule}]})
            assert single.check(good), (path, rule)
            assert not single.check(bad), (path, rule)


def test_kubernetes_builtin_definitions_have_no_rules() -> None:
    kv = pytest.importorskip("kubernetes_validate")
    defs = Path(kv.__file__).parent / "kubernetes-json-schema" / "v1.37.0-local"
    document = json.loads((defs / "_definitions.json").read_text(encoding="utf-8"))
    assert len(document["$defs"]) > 800
    # Built-in kinds validate in Go code, not with CEL; if a release adds rules, this
    # test tells us to measure them.
    assert list(_rule_nodes(document, "")) == []


def test_release_corpus_rules_are_supported(corpus_dir: Path) -> None:
    files = sorted((corpus_dir / "crd-releases" / "cluster-api").glob("*/*.yaml"))
    nodes = _crd_rule_nodes(files)
    texts = {r["rule"] for _, node in nodes for r in node["x-kubernetes-validations"]}
    assert _QUALIFIED_KEY in texts  # the only rule using the strings extension
    # Measured: 8 rules in 12 files, all supported.
    assert sum(len(node["x-kubernetes-validations"]) for _, node in nodes) >= 8
    for path, node in nodes:
        compiled = compile_rules(node, path=path)
        assert compiled.unsupported == (), (path, compiled.unsupported)


def test_unsupported_rule_is_a_plain_record() -> None:
    record = UnsupportedRule("self.f()", "spec", "unknown function f()")
    assert record == UnsupportedRule("self.f()", "spec", "unknown function f()")
    assert re.search(r"spec", repr(record))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_rules({"x-kubernetes-validations": [{"rule": "self.f()"}]})  # no warning here


# --------------------------------------------------------------------------- Kubernetes' answers
# Disagreements conformance/test_cel_conformance.py found; the expected verdicts are those
# of the API server's CEL environment (k8s.io/apiserver v0.37.2, cel-go v0.29.2).


@pytest.mark.parametrize(("rule", "value", "holds"), [
    # urls.go: checked with url.ParseRequestURI, built with url.Parse
    ("url(self).getScheme() == 'http'", "HTTP://example.com", True),
    ("isURL(self)", "HTTP://h%41/a", False),  # a host may %-escape only non-ASCII bytes
    ("url(self).getEscapedPath() == '/'", "/#[..", True),  # url.Parse cuts the fragment
    ("url(self).getHost() == 'example.com'", "//example.com/x", True),
    ("url(self).getQuery() == {'x': ['']}", "http://h/?x#y", True),
    ("url(self).getEscapedPath() == '/a%20b'", "http://h/a b", True),  # URL.EscapedPath
    ("url(self).getQuery() == {}", "http://h/?a=1;b=2", True),  # ParseQuery drops ';' keys
    # lists.go with cel-go's Compare and Equal (numbers compare across int and double)
    ("self.max() == 2.0", [-1, 2.0], True),
    ("self.min() == -1", [0.5, -1], True),  # not cel-python's own min macro
    ("self.isSorted()", [-1, 2.0], True),
    ("self.sum() == false", [False], False),  # sum is for numbers and durations only
    ("self.sum() == 2.0", [0.5, 1.5], True),
    ("self.indexOf(1) == -1", [True], True),  # true is not 1 in CEL
    ("sets.contains(self, [1])", [True], False),
    ("sets.contains(self, [1])", [1.0], True),
    # regex.go on Go's regexp: no empty match right after a match
    ("self.findAll('$$') == ['']", "b", True),
    ("self.findAll('a*') == ['', 'a']", "ba", True),
    # cel-go ext/strings.go: offsets past the end give -1 (or the length for '')
    ("self.indexOf('a', 8) == -1", "abc", True),
    ("self.lastIndexOf('a', 8) == -1", "abc", True),
    ("self.indexOf('', 8) == 3", "abc", True),
    ("self.lastIndexOf('bc', 1) == 1", "abc", True),
])
def test_library_functions_answer_as_kubernetes(rule: str, value: Any, holds: bool) -> None:
    compiled = rules(rule)
    assert compiled.unsupported == ()
    assert compiled.check(value) is holds


def test_reverse_is_not_in_the_kubernetes_strings_extension() -> None:
    # environment/base.go enables ext.Strings(ext.StringsVersion(2)); reverse() is v3
    (unsupported,) = rules("self.reverse() == self").unsupported
    assert "version 3" in unsupported.reason


# --------------------------------------------------------------------------- all / exists

_ITEM = {"type": "object", "properties": {"a": {"type": "integer"}}}
_ITEMS = st.lists(st.sampled_from([{"a": 1}, {"a": -1}, {}]), max_size=12)


@given(_ITEMS)
def test_all_and_exists_decide_as_cel_go_with_errors_in_the_list(items: list[Any]) -> None:
    """``all`` is false if any element is false, else an error if any errs; ``exists``
    true if any is true, else an error if any errs (cel-spec langdef.md, Macros). An
    error fails a rule, and so does its negation."""
    kinds = [("true" if x.get("a", 0) > 0 else "false") if x else "error" for x in items]
    schema = {"type": "array", "items": _ITEM}
    check = {r: rules(r, **schema).check(items) for r in (
        "self.all(x, x.a > 0)", "!self.all(x, x.a > 0)",
        "self.exists(x, x.a > 0)", "!self.exists(x, x.a > 0)")}
    assert check["self.all(x, x.a > 0)"] == all(k == "true" for k in kinds)
    assert check["!self.all(x, x.a > 0)"] == ("false" in kinds)
    assert check["self.exists(x, x.a > 0)"] == ("true" in kinds)
    assert check["!self.exists(x, x.a > 0)"] == all(k == "false" for k in kinds)


def test_a_list_of_erring_elements_does_not_grow_the_error_message() -> None:
    """cel-python folds ``all`` with ``logical_and``, whose error for two errors quotes
    both: the message doubled per element, and a 100-item list exhausted memory."""
    import tracemalloc

    compiled = rules("self.all(x, x.a > 0)", type="array", items=_ITEM)
    tracemalloc.start()
    try:
        assert not compiled.check([{} for _ in range(20)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak} bytes for 20 elements"


@pytest.mark.parametrize(("text", "ok"), [
    ("1", True), ("-2.5", True), ("1e3", True), (".5", True), ("0x1p-2", True),
    ("Inf", True), (" 1", False), ("1_0", False), ("\u0663", False), ("1e400", False),
    ("", False), ("1.5.2", False)])
def test_double_of_a_string_parses_as_go_strconv_does(text: str, ok: bool) -> None:
    """cel-go converts with strconv.ParseFloat (the real server refused a Kubeflow
    OptimizationJob whose bound cel-python's float() had read)."""
    rules = compile_rules({"type": "string", "x-kubernetes-validations": [
        {"rule": "double(self) == double(self) || double(self) != double(self)"}]})
    assert rules.check(text) is ok


@pytest.mark.parametrize(("text", "ok"), [
    ("12", True), ("-3", True), ("+4", True), (" 1", False), ("1_000", False),
    ("\u0661", False), ("9223372036854775808", False), ("1.0", False)])
def test_int_of_a_string_parses_as_go_strconv_does(text: str, ok: bool) -> None:
    rules = compile_rules({"type": "string", "x-kubernetes-validations": [
        {"rule": "int(self) >= 0 || int(self) < 0"}]})
    assert rules.check(text) is ok
