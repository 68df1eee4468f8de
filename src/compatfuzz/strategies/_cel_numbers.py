"""CEL doubles with Go's float64 semantics, where cel-python's differ.

Why: a rule's verdict must be the API server's. cel-go computes doubles with Go's IEEE 754
float64 arithmetic (``common/types/double.go``), and cel-python diverges at the edges:

* ``x / 0.0``: cel-python's ``DoubleType.__truediv__`` answers ``+inf`` whatever the signs
  (``-1.0/0.0`` and ``0.0/0.0`` too); Go gives ``-Inf`` and ``NaN`` as IEEE 754 says,
  so ``0.0/0.0 == 0.0/0.0`` was true here and false on the server;
* ``+``, ``-`` and ``*`` of doubles return a plain Python ``float``, not a ``DoubleType``;
* ``string(double)`` is Python's ``str`` (``"inf"``, ``"123456789.0"``); cel-go formats
  with ``strconv.FormatFloat(d, 'g', -1, 64)`` (``"+Inf"``, ``"1.23456789e+08"``);
* ``int(double)``/``uint(double)`` of an infinity or NaN raised Python's ``OverflowError``
  (a crash, no CEL error); cel-go answers "integer overflow" / "unsigned integer overflow"
  (``doubleToInt64Checked``/``doubleToUint64Checked`` in ``common/types/overflow.go``),
  also for the values at the ends of the range, which float64 cannot tell from overflow.

The quantity library's ``asApproximateFloat`` overflows to ``±Inf`` the same way
(``_cel_quantity``). ``conformance/test_cel_conformance.py`` checks all of it against cel-go.
"""

from __future__ import annotations

import math
import operator
from decimal import Decimal
from typing import Any

from celpy import celtypes

__all__ = ["add", "format_double", "multiply", "negate", "subtract", "to_int", "to_uint",
           "true_divide"]

_INT64_BOUND = 2.0**63  # float64(math.MaxInt64) rounds up to 2**63
_UINT64_BOUND = 2.0**64


def format_double(value: float) -> str:
    """Go's ``strconv.FormatFloat(value, 'g', -1, 64)``: the shortest digits that read
    back (Python's ``repr`` finds the same), in ``%e`` form with at least two exponent
    digits when the exponent is below -4 or at least 6 (``strconv/ftoa.go``, ``case 'g'``:
    "if precision was the shortest possible, use precision 6 for this decision")."""
    value = float(value)  # (DoubleType's == refuses an int)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent = int(exponent) + len(digit_tuple) - len(digits)  # trailing zeros dropped
    nd = len(digits)
    dp = nd + exponent  # the decimal point's position within the digits
    exp = dp - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if nd > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if dp <= 0:
        return f"{sign}0.{'0' * -dp}{digits}"
    if dp >= nd:
        return sign + digits + "0" * (dp - nd)
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def _double(result: Any) -> Any:
    """A plain float result (cel-python's arithmetic on doubles) as a CEL double."""
    if type(result) is float:
        return celtypes.DoubleType(result)
    return result


def add(a: Any, b: Any) -> Any:
    return _double(operator.add(a, b))


def subtract(a: Any, b: Any) -> Any:
    return _double(operator.sub(a, b))


def multiply(a: Any, b: Any) -> Any:
    return _double(operator.mul(a, b))


def negate(a: Any) -> Any:
    return _double(operator.neg(a))


def true_divide(a: Any, b: Any) -> Any:
    """``_/_``: IEEE 754 division for two doubles (``±Inf``, ``NaN``), else cel-python's."""
    if (isinstance(a, celtypes.DoubleType) and isinstance(b, celtypes.DoubleType)
            and float(b) == 0.0):  # (DoubleType's == refuses an int)
        if float(a) == 0.0 or math.isnan(a):
            return celtypes.DoubleType(math.nan)
        negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
        return celtypes.DoubleType(-math.inf if negative else math.inf)
    return _double(operator.truediv(a, b))


def to_int(value: float) -> celtypes.IntType:
    """``int(double)``: truncation, with cel-go's range check. Raises ``ValueError``."""
    value = float(value)
    if math.isnan(value) or not -_INT64_BOUND < value < _INT64_BOUND:
        raise ValueError("integer overflow")
    return celtypes.IntType(int(value))


def to_uint(value: float) -> celtypes.UintType:
    """``uint(double)``: truncation, with cel-go's range check. Raises ``ValueError``."""
    value = float(value)
    if math.isnan(value) or not 0 <= value < _UINT64_BOUND:
        raise ValueError("unsigned integer overflow")
    return celtypes.UintType(int(value))
