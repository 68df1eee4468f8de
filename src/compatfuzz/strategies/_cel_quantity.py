"""The Kubernetes CEL quantity library on apimachinery's ``resource.Quantity``.

Why not a plain decimal: the library (``k8s.io/apiserver/pkg/cel/library/quantity.go``)
answers from Quantity's internal representation, not only from its value. A Quantity holds
either an ``int64Amount`` (value and scale as parsed: ``"1000m"`` is ``1000 * 10**-3``) or
an ``inf.Dec`` (``"1.5Gi"``, anything finer than a nano, rounded to the nano), and

* ``isInteger``/``asInteger`` are ``Quantity.AsInt64``: false for every ``inf.Dec`` and for
  an ``int64Amount`` with a negative scale, so ``quantity("1000m").isInteger()`` is false;
* ``asApproximateFloat`` is ``AsApproximateFloat64``: ``float64(unscaled) *
  math.Pow10(scale)``, two roundings, not the nearest double;
* ``add``/``sub`` are ``Quantity.Add``/``Sub`` (``amount.go``): int64 arithmetic at the
  smaller scale while it fits, else exact ``inf.Dec`` arithmetic, never re-rounded;
* parsing rounds below a nano and caps BinarySI at 2**63-1 (``ParseQuantity``), which is
  :func:`compatfuzz.schema._quantity.parse_quantity_parts`, the port ``compatfuzz.semantic``
  uses too.

Two quirks of the Go code are reproduced because rules evaluate differently with them:
``compareTo``/``isGreaterThan``/``isLessThan`` call ``Cmp`` on the receiver's pointer,
which turns an ``int64Amount`` into an ``inf.Dec`` in place when either side is one
(``Quantity.AsDec``), so a later ``isInteger()`` on that value is false; and ``add``/``sub``
return a ``*Quantity`` whose ``==`` works on the left only (``apiservercel.Quantity.Equal``
accepts a ``Quantity`` value, so ``quantity("2") == quantity("1").add(1)`` is the error
"no such overload").
"""

from __future__ import annotations

import math
from typing import Any

from celpy import celtypes

from compatfuzz.schema._quantity import Quantity as _Value
from compatfuzz.schema._quantity import parse_quantity_parts

__all__ = [
    "Quantity",
    "add",
    "as_approximate_float",
    "as_integer",
    "compare_to",
    "is_greater_than",
    "is_integer",
    "is_less_than",
    "is_quantity",
    "quantity",
    "sign",
    "sub",
]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
#: Exponent gaps beyond this are not expanded (upstream's inf.Dec would need minutes).
_MAX_ALIGN_DIGITS = 10_000


class Quantity:
    """A CEL ``kubernetes.Quantity``: exact value plus the representation Go keeps.

    ``value`` is exact; ``value == unscaled * 10**scale`` with ``decimal`` telling whether
    Go holds it as an ``inf.Dec`` (else an ``int64Amount``, whose unscaled fits an int64).
    ``pointer`` marks the ``*Quantity`` that ``add``/``sub`` return.
    """

    __slots__ = ("decimal", "pointer", "scale", "value")

    def __init__(self, value: _Value, scale: int, decimal: bool, pointer: bool = False) -> None:
        self.value = value
        self.scale = scale
        self.decimal = decimal
        self.pointer = pointer

    def unscaled(self) -> int:
        """The integer Go stores (value / 10**scale); call it only when it is bounded."""
        coefficient = self.value.coefficient
        return coefficient * 10 ** (self.value.exponent - self.scale) if coefficient else 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        if other.pointer:
            raise TypeError("no such overload: == with a Quantity from add() or sub() "
                            "on the right (apiservercel.Quantity.Equal)")
        return self.value.cmp(other.value) == 0

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.value.canonical()!r})"


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string argument, got {type(value).__name__}")
    return value


def _q(value: Any) -> Quantity:
    if isinstance(value, Quantity):
        return value
    raise TypeError(f"expected a quantity, got {type(value).__name__}")


def quantity(text: Any) -> Quantity:
    """``quantity(string)``: ``resource.ParseQuantity``; an invalid string is an error."""
    parsed = parse_quantity_parts(_str(text))
    return Quantity(_Value(parsed.coefficient, parsed.exponent), parsed.scale, parsed.decimal)


def is_quantity(text: Any) -> celtypes.BoolType:
    try:
        parse_quantity_parts(_str(text))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _positive_scale(base: int, scale: int) -> int | None:
    """math.go ``positiveScaleInt64``: ``base * 10**scale`` if it fits an int64."""
    if base == 0:
        return 0
    if scale > 19:
        return None
    result = base * 10**scale
    return result if _INT64_MIN <= result <= _INT64_MAX else None


def _as_int64(q: Quantity) -> int | None:
    """``Quantity.AsInt64`` (quantity.go, amount.go): None where it answers false."""
    if q.decimal or q.scale < 0:
        return None
    return _positive_scale(q.unscaled(), q.scale)


def is_integer(q: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_as_int64(_q(q)) is not None)


def as_integer(q: Any) -> celtypes.IntType:
    value = _as_int64(_q(q))
    if value is None:
        raise ValueError("cannot convert value to integer")
    return celtypes.IntType(value)


def _pow10(n: int) -> float:
    """Go's ``math.Pow10``: a product (or quotient) of two table entries, not 10**n rounded."""
    if 0 <= n <= 308:
        return float(f"1e{n // 32 * 32}") * float(f"1e{n % 32}")
    if -323 <= n <= 0:
        return float(f"1e-{-n // 32 * 32}") / float(f"1e{-n % 32}")
    return float("inf") if n > 0 else 0.0


def as_approximate_float(q: Any) -> celtypes.DoubleType:
    """``Quantity.AsApproximateFloat64``: ``float64(unscaled) * math.Pow10(scale)``."""
    quantity_ = _q(q)
    value = quantity_.value
    if value.coefficient and len(str(abs(value.coefficient))) + value.exponent - quantity_.scale \
            > 400:
        base = float("inf") if value.coefficient > 0 else float("-inf")  # big.Float.Float64
    else:
        unscaled = quantity_.unscaled()
        try:
            base = float(unscaled)  # rounded to nearest even, as big.Float.Float64
        except OverflowError:  # past float64: big.Float.Float64 gives ±Inf, not an error
            base = math.inf if unscaled > 0 else -math.inf
    if quantity_.scale == 0:
        return celtypes.DoubleType(base)
    return celtypes.DoubleType(base * _pow10(quantity_.scale))


def sign(q: Any) -> celtypes.IntType:
    return celtypes.IntType(_q(q).value.sign())


def _compare(q: Any, other: Any) -> int:
    a, b = _q(q), _q(other)
    if a.decimal or b.decimal:
        a.decimal = True  # Quantity.Cmp calls q.AsDec(), which converts the receiver
    return a.value.cmp(b.value)


def compare_to(q: Any, other: Any) -> celtypes.IntType:
    return celtypes.IntType(_compare(q, other))


def is_greater_than(q: Any, other: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_compare(q, other) == 1)


def is_less_than(q: Any, other: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_compare(q, other) == -1)


def _operand(value: Any) -> Quantity:
    """A quantity, or an int as ``resource.NewQuantity(int, DecimalExponent)``."""
    if isinstance(value, Quantity):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected a quantity or an int, got {type(value).__name__}")
    return Quantity(_Value(int(value)), 0, False)


def _int64_add(a: Quantity, av: int, b_value: int, b_scale: int) -> Quantity | None:
    """amount.go ``int64Amount.Add``; None where it reports an overflow."""
    if b_value == 0:
        return a
    if av == 0:
        return Quantity(_Value(b_value, b_scale), b_scale, False)
    if a.scale == b_scale:
        total, scale = av + b_value, a.scale
    elif a.scale > b_scale:
        shifted = _positive_scale(av, a.scale - b_scale)
        if shifted is None:
            return None
        total, scale = shifted + b_value, b_scale
    else:
        shifted = _positive_scale(b_value, b_scale - a.scale)
        if shifted is None:
            return None
        total, scale = av + shifted, a.scale
    if not _INT64_MIN <= total <= _INT64_MAX:
        return None
    return Quantity(_Value(total, scale), scale, False)


def _exact_sum(a: _Value, b: _Value) -> _Value:
    if not a.coefficient:
        return b
    if not b.coefficient:
        return a
    low = min(a.exponent, b.exponent)
    if max(a.exponent, b.exponent) - low > _MAX_ALIGN_DIGITS:
        raise ValueError("quantity arithmetic across more than 10000 decimal places")
    return _Value(a.coefficient * 10 ** (a.exponent - low)
                  + b.coefficient * 10 ** (b.exponent - low), low)


def _add(q: Quantity, y: Quantity, negate: bool) -> Quantity:
    """``Quantity.Add`` (``Sub`` when ``negate``) on a copy of ``q``, as quantity.go."""
    if not q.decimal and not y.decimal:
        yv = y.unscaled()
        if negate:  # int64Amount.Sub adds -b.value, which wraps for the most negative int64
            yv = yv if yv == _INT64_MIN else -yv
        result = _int64_add(q, q.unscaled(), yv, y.scale)
        if result is not None:
            return Quantity(result.value, result.scale, False, pointer=True)
    other = -y.value if negate else y.value
    return Quantity(_exact_sum(q.value, other), min(q.scale, y.scale), True, pointer=True)


def add(q: Any, other: Any) -> Quantity:
    return _add(_q(q), _operand(other), negate=False)


def sub(q: Any, other: Any) -> Quantity:
    return _add(_q(q), _operand(other), negate=True)
