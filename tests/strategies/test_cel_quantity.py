"""The CEL quantity library answers as the API server's does.

Each case below was a disagreement between compatfuzz and Kubernetes (found by review and
by ``conformance/test_cel_conformance.py``, which compares against
``k8s.io/apiserver/pkg/cel/library/quantity.go`` compiled with apimachinery's
``resource.Quantity``); the expected answers are the Go program's.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.schema._quantity import InvalidQuantity, parse_quantity
from compatfuzz.strategies._cel import CompiledRules, compile_rules


def rules(*texts: str) -> CompiledRules:
    return compile_rules({"x-kubernetes-validations": [{"rule": t} for t in texts]},
                         path="spec.q")


def holds(rule: str, value: Any = None) -> bool:
    return rules(rule).check(value)


# ParseQuantity rounds finer than a nano up (away from zero) and caps BinarySI at 2**63-1.
@pytest.mark.parametrize("rule", [
    "quantity('1e-10').compareTo(quantity('2e-10')) == 0",
    "quantity('1e-10') == quantity('1n')",
    "quantity('-0.1n') == quantity('-1n')",
    "quantity('16Ei') == quantity('32Ei')",
    "quantity('8Ei') == quantity('16Ei')",  # 2**63 is capped too
    "quantity('16Ei').isGreaterThan(quantity('7Ei'))",
])
def test_parse_rounds_to_the_nano_and_caps_binary_si(rule: str) -> None:
    assert holds(rule)


@pytest.mark.parametrize(("text", "valid"), [
    ("1\n", False),  # Python's `$` matched before a final newline
    ("m", True), (".", True), ("e5", True), ("+.", True), ("1.", True),  # Go accepts these
    ("e-10", False), ("", False), (" 1", False), ("1Ki ", False), ("1.5GiB", False),
])
def test_is_quantity_is_parse_quantity(text: str, valid: bool) -> None:
    assert holds("isQuantity(self)", text) is valid
    assert holds("quantity(self) == quantity(self)", text) is valid


@pytest.mark.parametrize(("text", "integer"), [
    ("1000m", False),  # int64Amount{1000, -3}: AsInt64 refuses negative scales
    ("1.0", False),
    ("1.5Gi", False),  # an inf.Dec: AsInt64 is always false
    ("1e-10", False),
    ("1Gi", True), ("50k", True), ("50000000G", True), ("0", True), ("m", False),
    ("922337203685477580", True),
    ("9223372036854775807", False),  # 19 digits: parsed as an inf.Dec
    ("9999999999999999999999999999999999999G", False),
])
def test_is_integer_is_as_int64(text: str, integer: bool) -> None:
    assert holds("quantity(self).isInteger()", text) is integer
    # asInteger errors exactly where isInteger is false (the rule then does not hold)
    assert holds("quantity(self).asInteger() == quantity(self).asInteger()", text) is integer


def test_as_integer_values() -> None:
    assert holds("quantity('50k').asInteger() == 50000")
    assert holds("quantity('1572864Ki').asInteger() == 1610612736")


@pytest.mark.parametrize(("text", "expected"), [
    ("0.3", 3 * 0.1),  # float64(3) * math.Pow10(-1): 0.30000000000000004, not 0.3
    ("1.5Gi", 1610612736.0),
    ("100m", 0.1),
    ("1e-10", 1e-9),  # rounded up to 1n
    ("1e-300", 1e-9),
])
def test_as_approximate_float_is_go_arithmetic(text: str, expected: float) -> None:
    assert rules("quantity(self.q).asApproximateFloat() == self.f").check(
        {"q": text, "f": expected})


def test_as_approximate_float_of_zero_times_infinity_is_nan() -> None:
    # "0e400" is int64Amount{0, 400}: float64(0) * math.Pow10(400) = 0 * +Inf
    assert holds("quantity(self).asApproximateFloat() != quantity(self).asApproximateFloat()",
                 "0e400")


@pytest.mark.parametrize("rule", [
    # parsed values are already rounded, then added exactly
    "quantity('1e-10').add(quantity('1e-10')).compareTo(quantity('2n')) == 0",
    # the cap applies at parse time only: (2**63-1) - 7 * 2**60, and 2**63 + 2**63
    "quantity('16Ei').sub(quantity('7Ei')).compareTo(quantity('1152921504606846975')) == 0",
    "quantity('8Ei').add(quantity('8Ei')).isGreaterThan(quantity('16Ei'))",
    # int64Amount.Add keeps the smaller scale: 2000m is not an int64 to AsInt64
    "!quantity('1500m').add(quantity('500m')).isInteger()",
    "quantity('1k').add(1).asInteger() == 1001",
    "quantity('1k').sub(quantity('1')).isInteger()",
    # int64 overflow falls back to inf.Dec: exact, but no longer an integer
    "quantity('999999999999999999').add(1).isInteger()",
    "!quantity('999999999999999999').add(9223372036854775807).isInteger()",
    "quantity('922337203685477580').add(9223372036854775807).sub(9223372036854775807)"
    ".compareTo(quantity('922337203685477580')) == 0",
    "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')",
])
def test_add_and_sub_follow_quantity_add(rule: str) -> None:
    assert holds(rule)


def test_add_result_compares_equal_on_the_left_only() -> None:
    # quantityAdd returns &apiservercel.Quantity; Quantity.Equal accepts a Quantity value
    assert holds("quantity('1').add(1) == quantity('2')")
    assert not holds("quantity('2') == quantity('1').add(1)")
    assert not holds("!(quantity('2') == quantity('1').add(1))")  # an error, not false


def test_compare_to_makes_its_receiver_an_inf_dec() -> None:
    # Quantity.Cmp calls q.AsDec() on the receiver when either side is an inf.Dec
    assert holds("[quantity('1')].all(q, q.isInteger())")
    assert not holds("[quantity('1')].all(q, q.compareTo(quantity('1.5Gi')) < 0 && "
                     "q.isInteger())")
    assert holds("[quantity('1')].all(q, q.compareTo(quantity('2')) < 0 && q.isInteger())")


@pytest.mark.parametrize("rule", ["quantity('1').sign() == 1", "isInteger(quantity('1'))",
                                  "'a'.isQuantity()"])
def test_calls_the_api_server_refuses_are_unsupported(rule: str) -> None:
    # quantity.go declares sign() with cel.Overload (global) and isInteger() with
    # cel.MemberOverload: the API server refuses a rule calling either the other way
    (unsupported,) = rules(rule).unsupported
    assert "the API server refuses this rule" in unsupported.reason
    assert holds("sign(quantity('-1')) == -1")


def test_string_of_a_quantity_is_an_error() -> None:
    assert not holds("string(quantity('1')) == '1'")
    assert not holds("string(quantity('1')) != '1'")


# --------------------------------------------------------------------------- properties

_numbers = st.builds(lambda s, a, b, suffix: f"{s}{a}{b}{suffix}",
                     st.sampled_from(["", "-", "+"]), st.text("0123456789", max_size=20),
                     st.sampled_from(["", ".", ".5", ".000000000001", ".25"]),
                     st.sampled_from(["", "n", "u", "m", "k", "M", "G", "E", "Ki", "Mi", "Ei",
                                      "e3", "e-12", "e20", "i", "x"]))


@given(_numbers)
def test_is_quantity_agrees_with_the_apimachinery_port(text: str) -> None:
    try:
        parse_quantity(text)
    except InvalidQuantity:
        valid = False
    else:
        valid = True
    assert holds("isQuantity(self)", text) is valid


@given(_numbers, _numbers)
def test_comparisons_and_exact_arithmetic(a: str, b: str) -> None:
    try:
        qa, qb = parse_quantity(a), parse_quantity(b)
    except InvalidQuantity:
        return
    cmp = qa.cmp(qb)
    value = {"a": a, "b": b, "cmp": cmp}
    compiled = rules(
        "quantity(self.a).compareTo(quantity(self.b)) == self.cmp",
        "quantity(self.b).compareTo(quantity(self.a)) == -self.cmp",
        "quantity(self.a).sub(quantity(self.b)).add(quantity(self.b)).compareTo("
        "quantity(self.a)) == 0",
        "sign(quantity(self.a).sub(quantity(self.b))) == self.cmp",
    )
    assert compiled.failures(value) == ()


@given(_numbers)
def test_as_integer_is_exact_when_defined(text: str) -> None:
    try:
        q = parse_quantity(text)
    except InvalidQuantity:
        return
    numerator, denominator = q.as_fraction()
    if holds("quantity(self).isInteger()", text):
        assert denominator == 1
        assert rules("quantity(self.q).asInteger() == self.n").check(
            {"q": text, "n": numerator})
    # asApproximateFloat is within a few ulps of the exact value
    got = rules("quantity(self.q).asApproximateFloat() == self.f")
    exact = Fraction(numerator, denominator)
    if abs(exact) < 2**1000 and (exact == 0 or abs(exact) > Fraction(1, 2**900)):
        approx = float(exact)
        ok = [got.check({"q": text, "f": f}) for f in
              (approx, math.nextafter(approx, math.inf), math.nextafter(approx, -math.inf),
               math.nextafter(math.nextafter(approx, math.inf), math.inf),
               math.nextafter(math.nextafter(approx, -math.inf), -math.inf))]
        assert any(ok)
