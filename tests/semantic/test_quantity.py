"""resource.Quantity against the tables of upstream apimachinery quantity_test.go.

The cases live in data/quantity_cases.json (provenance inside: repository, path, commit,
every upstream table with its row count, and the tables skipped because they test Go APIs
the port does not have, with the reason); each Go check on a covered table becomes an
assertion here, including the derived ones the Go tests make (negated and ``+``-prefixed
inputs, decomposition, alternates, negated canonical strings).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.schema._quantity import BINARY_SI, DECIMAL_EXPONENT, DECIMAL_SI, _scan
from compatfuzz.semantic import (
    InvalidQuantity,
    Quantity,
    canonical_quantity,
    parse_quantity,
    quantity_from_json,
)
from tests.semantic.strategies import quantity_strings

CASES: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "quantity_cases.json").read_text()
)


def q(parts: dict[str, Any]) -> Quantity:
    return Quantity.from_parts(parts["coefficient"], parts["exponent"], parts["format"])


def test_provenance_names_upstream_file_and_commit() -> None:
    prov = CASES["provenance"]
    assert prov["repository"].endswith("kubernetes/apimachinery")
    assert prov["path"] == "pkg/api/resource/quantity_test.go"
    assert len(prov["commit"]) == 40
    assert prov["counts"] == {k: len(v) for k, v in CASES.items() if isinstance(v, list)}


def test_reconciliation_accounts_for_every_upstream_table() -> None:
    prov = CASES["provenance"]
    upstream, covered, skipped = prov["upstream_tables"], prov["counts"], prov["skipped"]
    assert sum(upstream.values()) == 510
    assert set(covered).isdisjoint(skipped)
    assert set(covered) | set(skipped) == set(upstream)
    for name, rows in covered.items():
        # ParseQuantity("") is a standalone upstream check kept as an invalid row.
        assert rows == upstream[name] + (name == "TestQuantityParse_invalid")


@pytest.mark.parametrize("prefix", ["", "-", "+"])
@pytest.mark.parametrize("case", CASES["TestQuantityParse"], ids=lambda c: c["input"])
def test_parse_value_and_format(case: dict[str, Any], prefix: str) -> None:
    got = parse_quantity(prefix + case["input"])
    expect = q(case["expect"])
    assert got == (-expect if prefix == "-" else expect)
    assert got.format == case["expect"]["format"]


@pytest.mark.parametrize("text", CASES["TestQuantityParse_invalid"])
def test_invalid_inputs_are_rejected(text: str) -> None:
    with pytest.raises(InvalidQuantity):
        parse_quantity(text)


@pytest.mark.parametrize("case", CASES["TestParseQuantityString"], ids=lambda c: c["input"])
def test_scanner(case: dict[str, Any]) -> None:
    assert _scan(case["input"]) == (case["positive"], case["value"], case["num"],
                                    case["denom"], case["suffix"])


@pytest.mark.parametrize("case", CASES["TestQuantityParse"], ids=lambda c: c["input"])
def test_parse_decomposes_and_rebuilds(case: dict[str, Any]) -> None:
    got = parse_quantity(case["input"])
    for fmt in (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT):  # NewDecimalQuantity round trip
        assert Quantity.from_parts(got.coefficient, got.exponent, fmt) == got
    positive, _value, num, denom, suffix = _scan(case["input"])
    assert positive == (got.sign() >= 0)
    rebuilt = ("" if positive else "-") + num + ("." + denom if denom else "") + suffix
    assert parse_quantity(rebuilt) == got


@pytest.mark.parametrize("case", CASES["TestDec"] + CASES["TestBigDec"],
                         ids=lambda c: c["expect"])
def test_exact_value_of_parts(case: dict[str, Any]) -> None:
    # Go renders the inf.Dec with String(); the port's counterpart is its exact value.
    value = Quantity.from_parts(case["coefficient"], case["exponent"])
    assert Fraction(*value.as_fraction()) == Fraction(case["expect"])
    assert parse_quantity(case["expect"]) == value


@pytest.mark.parametrize("case", CASES["TestQuantityString"], ids=lambda c: c["expect"])
def test_string(case: dict[str, Any]) -> None:
    value = q(case["in"])
    assert str(value) == case["expect"]
    assert value.canonical() == case["expect"]
    reparsed = parse_quantity(case["expect"])
    assert str(reparsed) == case["expect"]  # canonical text is kept verbatim by the parser
    if case["alternate"]:
        alternate = parse_quantity(case["alternate"])
        assert alternate == value
        assert str(alternate) == case["expect"]
    if not value.is_zero():
        assert str(-value) == "-" + case["expect"]


@pytest.mark.parametrize("case", CASES["TestQuantityParseEmit"], ids=lambda c: c["in"])
def test_parse_emit(case: dict[str, Any]) -> None:
    assert str(parse_quantity(case["in"])) == case["expect"]
    negative = parse_quantity("-" + case["in"])
    assert negative.is_zero() or str(negative) == "-" + case["expect"]


@pytest.mark.parametrize("case", CASES["TestQuantityCmp"], ids=str)
def test_cmp_strings(case: dict[str, Any]) -> None:
    assert parse_quantity(case["x"]).cmp(parse_quantity(case["y"])) == case["cmp"]


@pytest.mark.parametrize("case", CASES["TestQuantityCmpInt64AndDec"], ids=str)
def test_cmp_parts_both_ways(case: dict[str, Any]) -> None:
    assert q(case["a"]).cmp(q(case["b"])) == case["cmp"]
    assert q(case["b"]).cmp(q(case["a"])) == -case["cmp"]


@pytest.mark.parametrize("case", CASES["TestQuantityCmp_table2"], ids=str)
def test_cmp_nil_dec_is_zero(case: dict[str, Any]) -> None:
    # A nil *inf.Dec falls back to the zero int64 amount: a zero quantity.
    x, y = (Quantity(0) if p is None else q(p) for p in (case["x"], case["y"]))
    assert x.cmp(y) == case["cmp"]
    assert (x == y) == (case["cmp"] == 0)


@pytest.mark.parametrize("case", CASES["TestNeg"], ids=str)
def test_neg_value(case: dict[str, Any]) -> None:
    source = q(case["a"])
    negated = -source
    assert negated.cmp(q(case["expected"])) == 0
    assert negated.format == source.format
    assert source == q(case["a"])  # negating does not mutate the source


def test_neg_at_int64_bounds() -> None:
    # Non-table checks of TestNegAndSubAtMostNegative / TestZeroSubMostNegativeInheritsFormat
    # (the Neg halves; Sub is arithmetic the port does not have).
    most_negative = -(2**63)
    assert str(-Quantity.from_parts(most_negative, 0)) == "9223372036854775808"
    assert -Quantity.from_parts(most_negative, 0) == parse_quantity("9223372036854775808")
    assert (-Quantity.from_parts(most_negative, 0)).sign() == 1
    assert str(-Quantity.from_parts(most_negative, -3)) == "9223372036854775808m"
    assert str(-Quantity.from_parts(most_negative + 1, 0)) == "9223372036854775807"
    assert str(-Quantity.from_parts(most_negative, 0, BINARY_SI)) == "8Ei"


def test_upstream_standalone_checks() -> None:
    # TestQuantityParseZero, TestQuantityParseNonNumericPanic, TestQuantityValueSet.
    assert str(parse_quantity("0")) == "0"
    for bad in ("Non-Numeric", "invalid"):
        with pytest.raises(InvalidQuantity):
            parse_quantity(bad)
    assert parse_quantity("1Mi").as_fraction() == (1024 * 1024, 1)
    assert str(parse_quantity("1Mi")) == "1Mi"


@pytest.mark.parametrize("case", CASES["TestQuantityNeg"], ids=str)
def test_neg(case: dict[str, Any]) -> None:
    assert str(-q(case["in"])) == case["negated"]


@pytest.mark.parametrize(
    "case",
    CASES["TestMilliNewSet"] + CASES["TestNewSet"] + CASES["TestNewScaledSet"],
    ids=lambda c: f"{c['value']}e{c['exponent']}-{c['format']}",
)
def test_constructed_string(case: dict[str, Any]) -> None:
    value = Quantity.from_parts(case["value"], case["exponent"], case["format"])
    assert str(value) == case["expect"]
    if case.get("exact", True):
        assert parse_quantity(str(value)) == value


@pytest.mark.parametrize("case", CASES["TestJSONWhitespace"], ids=lambda c: c["json"])
def test_json_whitespace(case: dict[str, Any]) -> None:
    assert str(quantity_from_json(json.loads(case["json"]))) == case["expect"]


@pytest.mark.parametrize("case", CASES["TestParseQuantity"], ids=lambda c: c["input"])
def test_parse_quantity_value_and_canonical(case: dict[str, Any]) -> None:
    got = parse_quantity(case["input"])
    num, den = got.as_fraction()
    assert Fraction(num, den) == Fraction(case["value"])
    assert str(got) == case["canonical"]


def test_go_string_keeps_canonical_looking_input_verbatim() -> None:
    # Go's String() returns the parsed text when the parser judged it canonical.
    assert str(parse_quantity("+1")) == "+1"
    assert parse_quantity("+1").canonical() == "1"
    assert str(parse_quantity("1000")) == "1k"


@given(quantity_strings())
def test_canonical_form_is_a_fixed_point_with_the_same_value(text: str) -> None:
    try:
        value = parse_quantity(text)
    except InvalidQuantity:
        return  # e.g. an exponent beyond int64; the parser's verdict is tested above
    canonical = value.canonical()
    again = parse_quantity(canonical)
    assert again == value
    assert again.canonical() == canonical
    assert canonical_quantity(canonical) == canonical


@given(quantity_strings(), quantity_strings())
def test_ordering_agrees_with_exact_fractions(x: str, y: str) -> None:
    try:
        a, b = parse_quantity(x), parse_quantity(y)
    except InvalidQuantity:
        return
    fa, fb = Fraction(*a.as_fraction()), Fraction(*b.as_fraction())
    assert a.cmp(b) == (fa > fb) - (fa < fb)
    assert (a == b) == (hash(a) == hash(b) and fa == fb)


@given(st.integers(-(2**70), 2**70), st.integers(-12, 30))
def test_nano_rounding_is_away_from_zero(coefficient: int, exponent: int) -> None:
    text = f"{coefficient}e{-exponent}"
    value = parse_quantity(text)
    exact = Fraction(coefficient) / Fraction(10) ** exponent
    num, den = value.as_fraction()
    got = Fraction(num, den)
    nano = Fraction(1, 10**9)
    assert abs(got) >= abs(exact) and abs(got) - abs(exact) < nano
    assert (got * 10**9).denominator == 1


def test_non_quantities_from_json() -> None:
    for bad in (True, None, [], {}, "1 Gi", float("nan")):
        with pytest.raises(InvalidQuantity):
            quantity_from_json(bad)
