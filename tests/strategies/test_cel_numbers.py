"""CEL doubles follow Go's float64 semantics (``strategies/_cel_numbers``).

Expected answers are cel-go's, as ``conformance/test_cel_conformance.py`` (library
``doubles``) got them from the API server's CEL environment compiled from Go modules.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.strategies._cel import CompiledRules, compile_rules
from compatfuzz.strategies._cel_numbers import format_double


def rules(*texts: str) -> CompiledRules:
    return compile_rules({"x-kubernetes-validations": [{"rule": t} for t in texts]},
                         path="spec.x")


def holds(rule: str, value: Any = None) -> bool:
    return rules(rule).check(value)


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0"), (-0.0, "-0"), (1.5, "1.5"), (100.0, "100"), (123456.0, "123456"),
    (1234567.0, "1.234567e+06"), (123456789.0, "1.23456789e+08"), (1e21, "1e+21"),
    (1e-4, "0.0001"), (1e-5, "1e-05"), (0.1, "0.1"), (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"), (math.inf, "+Inf"),
    (-math.inf, "-Inf"), (math.nan, "NaN"), (999999.5, "999999.5"),
])
def test_string_of_a_double_is_go_format_float_g(value: float, text: str) -> None:
    assert format_double(value) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_string_of_a_double_reads_back_exactly(value: float) -> None:
    text = format_double(value)
    assert float(text) == value and math.copysign(1, float(text)) == math.copysign(1, value)
    mantissa = text.lstrip("-").split("e")[0]
    assert len(mantissa.replace(".", "").lstrip("0")) <= 17  # the shortest digits


@pytest.mark.parametrize("rule", [
    "-1.0 / 0.0 < 0.0",  # cel-python: +inf whatever the signs
    "1.0 / -0.0 < 0.0",
    "0.0 / 0.0 != 0.0 / 0.0",  # NaN, not +inf
    "string(-1.0 / 0.0) == '-Inf'",
    "string(123456789.0) == '1.23456789e+08'",
    "type(1.5 * 2.0) == double && 2.0 == 1.0 * 2.0",  # a double, not a Python float
    "[-0.0].sum() == 0.0 && string([-0.0].sum()) == '0'",
    "quantity('" + "9" * 330 + "').asApproximateFloat() > 1.0e308",
    "quantity('-" + "9" * 330 + "').asApproximateFloat() == -1.0 / 0.0",
])
def test_doubles_evaluate_as_in_go(rule: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no longer checked" warning: the rule runs
        assert holds(rule)


@pytest.mark.parametrize(("rule", "value"), [
    ("int(self) > 0", 1e19), ("int(self) < 0", -(2.0**63)), ("uint(self) >= 0u", -0.5),
    ("uint(self) > 0u", 2.0**64), ("int(self / 0.0) > 0", 1.0),
])
def test_integer_conversion_out_of_range_is_a_cel_error(rule: str, value: float) -> None:
    """cel-go's "integer overflow": the rule fails (the object is refused), where Python's
    OverflowError crashed the evaluation and the rule stopped being checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not holds(rule, value)


def test_integer_conversion_in_range_truncates() -> None:
    assert holds("int(self) == -1 && uint(-self) == 1u", -1.9)
