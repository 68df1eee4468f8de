"""Kubernetes ``resource.Quantity`` in pure Python: apimachinery's parse and canonical form.

Round-trip tests compare resource requests such as ``"1Gi"`` and ``"1024Mi"``; only a
bit-exact port of ``k8s.io/apimachinery/pkg/api/resource`` decides those the way the API
server does, including its odd corners (nano rounding away from zero, BinarySI capped at
2**63-1, ``"1."`` being valid, DecimalSI above ``E`` falling back to ``e21``). The value is
kept as an exact ``coefficient * 10**exponent`` pair (never a float, never expanded, so
``"1e1000000000"`` stays cheap); Go's ``int32`` wrap-around is reproduced where the parser
has it. Checked against every table of upstream ``quantity_test.go`` that concerns what
the port does (340 of its 510 rows; the rest test Go-only APIs such as arithmetic and
float conversion): ``tests/semantic/data/quantity_cases.json`` names the commit and why
each skipped table is skipped.

It lives in ``compatfuzz.schema`` because two layers need it: ``compatfuzz.semantic``
(its public home) and the CEL quantity library of ``compatfuzz.strategies``.
"""

from __future__ import annotations

import re
from functools import total_ordering
from typing import Any, NamedTuple

from compatfuzz.errors import CompatfuzzError

__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "InvalidQuantity",
    "ParsedQuantity",
    "Quantity",
    "parse_quantity",
    "parse_quantity_parts",
    "quantity_from_json",
]

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_MAX_INT64 = 2**63 - 1
_MAX_INT64_FACTORS = 18  # apimachinery math.go: digits that always fit an int64
_NANO = -9

# suffix -> (base, exponent, format), as suffix.go's tables (and its fastLookup) define them.
_SUFFIXES: dict[str, tuple[int, int, str]] = {
    "": (10, 0, DECIMAL_SI),
    "n": (10, -9, DECIMAL_SI),
    "u": (10, -6, DECIMAL_SI),
    "m": (10, -3, DECIMAL_SI),
    "k": (10, 3, DECIMAL_SI),
    "M": (10, 6, DECIMAL_SI),
    "G": (10, 9, DECIMAL_SI),
    "T": (10, 12, DECIMAL_SI),
    "P": (10, 15, DECIMAL_SI),
    "E": (10, 18, DECIMAL_SI),
    "Ki": (2, 10, BINARY_SI),
    "Mi": (2, 20, BINARY_SI),
    "Gi": (2, 30, BINARY_SI),
    "Ti": (2, 40, BINARY_SI),
    "Pi": (2, 50, BINARY_SI),
    "Ei": (2, 60, BINARY_SI),
}
_DEC_BY_EXPONENT = {e: s for s, (b, e, _f) in _SUFFIXES.items() if b == 10}
_BIN_BY_EXPONENT = {e: s for s, (b, e, _f) in _SUFFIXES.items() if b == 2}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_GO_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
# unicode.IsSpace, which strings.TrimSpace uses (narrower than str.isspace).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


class InvalidQuantity(CompatfuzzError, ValueError):
    """A string is not a Kubernetes quantity (apimachinery's ``ParseQuantity`` rejects it)."""


def _wrap32(n: int) -> int:
    """Go ``int32`` arithmetic: wrap ``n`` into [-2**31, 2**31)."""
    return (n + 2**31) % 2**32 - 2**31


def _normalise(coefficient: int, exponent: int) -> tuple[int, int]:
    if coefficient == 0:
        return 0, 0
    while coefficient % 10 == 0:
        coefficient //= 10
        exponent += 1
    return coefficient, exponent


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """apimachinery ``parseQuantityString``: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(s)
    if pos < end:
        if s[0] == "-":
            positive = False
            pos += 1
        elif s[0] == "+":
            pos += 1
    i = pos
    while True:  # strip leading zeros
        if i >= end:
            return positive, "0", "0", "", ""
        if s[i] != "0":
            break
        pos += 1
        i += 1
    i = pos
    while True:  # numerator
        if i >= end:
            return positive, s[:end], s[pos:end], "", ""
        if not _is_digit(s[i]):
            num = s[pos:i]
            pos = i
            break
        i += 1
    if not num:
        num = "0"
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        i = pos
        while True:
            if i >= end:
                return positive, s[:end], num, s[pos:end], ""
            if not _is_digit(s[i]):
                denom = s[pos:i]
                pos = i
                break
            i += 1
    value = s[:pos]
    suffix_start = pos
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, s[suffix_start:end]
        if s[i] not in _SUFFIX_CHARS:
            pos = i
            break
        i += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, s[suffix_start:end]
        if not _is_digit(s[i]):
            break
        i += 1
    raise InvalidQuantity(
        f"quantity {s!r} must match '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """suffix.go ``interpret``: base, exponent (int32) and format, or None."""
    found = _SUFFIXES.get(suffix)
    if found is not None:
        return found
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.fullmatch(suffix[1:]):
        parsed = int(suffix[1:])
        if -(2**63) <= parsed <= _MAX_INT64:
            return 10, _wrap32(parsed), DECIMAL_EXPONENT
    return None


@total_ordering
class Quantity:
    """An exact Kubernetes quantity: compares by value, prints like Go's ``String()``.

    Equality, ordering and hashing use the numeric value only (``Quantity.Cmp``), so
    ``parse_quantity("1Gi") == parse_quantity("1024Mi")``. :meth:`canonical` is the form
    apimachinery emits for the value in its format; ``str()`` is exactly Go's ``String()``,
    which returns the parsed text unchanged when the parser judged it canonical (so
    ``str(parse_quantity("+1")) == "+1"``, as in Go).

    .. versionadded:: 0.1.0
    """

    __slots__ = ("_coefficient", "_exponent", "_string", "format")

    def __init__(self, coefficient: int, exponent: int = 0, format: str = DECIMAL_SI,
                 *, _string: str | None = None) -> None:
        self._coefficient, self._exponent = _normalise(coefficient, exponent)
        self.format = format
        self._string = _string

    @classmethod
    def from_parts(cls, coefficient: int, exponent: int = 0,
                   format: str = DECIMAL_SI) -> Quantity:
        """Return ``coefficient * 10**exponent`` in ``format`` (Go's ``decQuantity``)."""
        if isinstance(coefficient, bool) or not isinstance(coefficient, int):
            raise InvalidQuantity(f"coefficient must be an int, got {coefficient!r}")
        return cls(coefficient, exponent, format)

    @property
    def coefficient(self) -> int:
        """The value's digits without trailing zeros (``0`` for zero)."""
        return self._coefficient

    @property
    def exponent(self) -> int:
        """The power of ten: value == coefficient * 10**exponent."""
        return self._exponent

    def sign(self) -> int:
        return (self._coefficient > 0) - (self._coefficient < 0)

    def is_zero(self) -> bool:
        return self._coefficient == 0

    def _cmp(self, other: Quantity) -> int:
        a, ea = self._coefficient, self._exponent
        b, eb = other._coefficient, other._exponent
        sa, sb = (a > 0) - (a < 0), (b > 0) - (b < 0)
        if sa != sb:
            return 1 if sa > sb else -1
        if sa == 0:
            return 0
        # Compare magnitudes by digit count first so huge exponents never expand.
        ma, mb = len(str(abs(a))) + ea, len(str(abs(b))) + eb
        if ma != mb:
            return sa if ma > mb else -sa
        if ea > eb:
            a *= 10 ** (ea - eb)
        else:
            b *= 10 ** (eb - ea)
        return (a > b) - (a < b)

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1 as apimachinery's ``Quantity.Cmp``."""
        return self._cmp(other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._coefficient == other._coefficient and self._exponent == other._exponent

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._cmp(other) < 0

    def __hash__(self) -> int:
        return hash((self._coefficient, self._exponent))

    def __neg__(self) -> Quantity:
        return Quantity(-self._coefficient, self._exponent, self.format)

    def canonical(self) -> str:
        """The canonical string apimachinery computes (``CanonicalizeBytes``).

        Suffix as large as possible without fractional digits, in the quantity's format:
        BinarySI falls back to DecimalSI below 1024 or when not an integer; DecimalSI falls
        back to an ``e`` exponent beyond ``E`` (10**18); unknown formats use exponents.
        """
        coefficient, exponent = self._coefficient, self._exponent
        if coefficient == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            # -1024 < q < 1024, or not an integer: shown as DecimalSI to avoid rounding.
            if exponent < 0 or (exponent < 4 and abs(coefficient) * 10**exponent < 1024):
                fmt = DECIMAL_SI
        elif fmt != DECIMAL_SI:
            fmt = DECIMAL_EXPONENT
        if fmt == BINARY_SI:
            n = abs(coefficient) * 10**exponent
            times = 0
            while n >= 1024 and n % 1024 == 0:
                n //= 1024
                times += 1
            sign = "-" if coefficient < 0 else ""
            return f"{sign}{n}{_BIN_BY_EXPONENT.get(times * 10, '')}"
        e3 = (exponent // 3) * 3
        digits = coefficient * 10 ** (exponent - e3)
        if fmt == DECIMAL_SI:
            suffix = _DEC_BY_EXPONENT.get(e3)
            if suffix is not None:
                return f"{digits}{suffix}"
        return f"{digits}e{e3}" if e3 else str(digits)

    def __str__(self) -> str:
        return self._string if self._string else self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def as_fraction(self) -> tuple[int, int]:
        """The value as (numerator, denominator) integers."""
        if self._exponent >= 0:
            return self._coefficient * 10**self._exponent, 1
        return self._coefficient, 10 ** (-self._exponent)


class ParsedQuantity(NamedTuple):
    """What ``ParseQuantity`` builds, representation included: ``unscaled * 10**scale``.

    ``decimal`` tells which of Quantity's two amounts holds it (quantity.go): False for
    the ``int64Amount`` fast path (``unscaled`` fits an int64, ``scale`` as parsed, not
    normalised: ``"1000m"`` is ``(1000, -3)``), True for the ``inf.Dec`` path (rounded to
    scale -9 when non-zero, or scale 0 when capped at 2**63-1). The CEL quantity library
    (``isInteger``, ``asApproximateFloat``) depends on it; values compare the same either
    way. ``coefficient``/``exponent`` are the normalised value (an inf.Dec path value is
    kept this way so that ``"1e1000000000"`` is never expanded).
    """

    coefficient: int
    exponent: int
    scale: int
    decimal: bool
    format: str
    string: str | None


def parse_quantity(text: str) -> Quantity:
    """Parse ``text`` exactly as apimachinery's ``ParseQuantity`` does.

    No whitespace is allowed (use :func:`quantity_from_json` for JSON values, which trims
    like ``UnmarshalJSON``). Values finer than a nano are rounded away from zero to the next
    nano; BinarySI values are capped at 2**63-1.

    Raises:
        InvalidQuantity: ``text`` is not a quantity; the message says why.

    .. versionadded:: 0.1.0
    """
    parsed = parse_quantity_parts(text)
    return Quantity(parsed.coefficient, parsed.exponent, parsed.format, _string=parsed.string)


def parse_quantity_parts(text: str) -> ParsedQuantity:
    """:func:`parse_quantity` with the representation apimachinery keeps (ParsedQuantity)."""
    if not isinstance(text, str):
        raise InvalidQuantity(
            f"Expected a quantity string but got text={text!r} (type={type(text).__name__})"
        )
    if not text:
        raise InvalidQuantity("an empty string is not a quantity; use \"0\"")
    if text == "0":
        return ParsedQuantity(0, 0, 0, False, DECIMAL_SI, "0")
    positive, value, num, denom, suffix = _scan(text)
    interpreted = _interpret(suffix)
    if interpreted is None:
        raise InvalidQuantity(
            f"unable to parse the suffix {suffix!r} of quantity {text!r}; "
            "use one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e<exponent>"
        )
    base, exponent, fmt = interpreted

    precision = 0
    scale = 0
    mantissa = 1
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - (exponent * 3) // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale = _wrap32(scale - len(denom))
        if scale >= _NANO:
            shifted = num + denom
            parsed = int(shifted)
            result = parsed * mantissa
            if result <= _MAX_INT64:
                if not positive:
                    result = -result
                cached: str | None = None
                if fmt == BINARY_SI:
                    if exponent % 10 == 0 and parsed & 0x07 != 0:
                        cached = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = text
                coefficient, normal = _normalise(result, scale)
                return ParsedQuantity(coefficient, normal, scale, False, fmt, cached)

    # The inf.Dec path: arbitrary precision, then nano rounding and the BinarySI cap.
    digits = value.lstrip("+-").replace(".", "")
    if not digits:
        raise InvalidQuantity(f"unable to parse the numeric part of quantity {text!r}")
    dot = value.find(".")
    inf_scale = len(value) - dot - 1 if dot >= 0 else 0
    coefficient = int(digits)  # magnitude; the sign is applied at the end
    if base == 10:
        inf_scale = _wrap32(inf_scale + _wrap32(-exponent))
    else:
        coefficient <<= exponent
    if coefficient != 0:  # inf.Dec Round(amount, 9, RoundUp): scale 9 from here on
        if inf_scale > -_NANO:
            unit = 10 ** (inf_scale + _NANO)
            coefficient = -(-coefficient // unit)  # round up (away from zero: magnitude)
            inf_scale = -_NANO
        coefficient, exponent = _normalise(coefficient, -inf_scale)
        inf_scale = -_NANO
    else:
        exponent = 0
    if fmt == BINARY_SI:
        if Quantity(coefficient, exponent)._cmp(_MAX_ALLOWED) > 0:
            coefficient, exponent, inf_scale = _MAX_INT64, 0, 0
        if coefficient != 0 and exponent < 0 and Quantity(coefficient, exponent)._cmp(_ONE) < 0:
            fmt = DECIMAL_SI
    if not positive:
        coefficient = -coefficient
    return ParsedQuantity(coefficient, exponent, -inf_scale, True, fmt, None)


_MAX_ALLOWED = Quantity(_MAX_INT64)
_ONE = Quantity(1)


def quantity_from_json(value: Any) -> Quantity:
    """Decode a JSON value the way ``Quantity.UnmarshalJSON`` does.

    Strings are trimmed of surrounding whitespace first; JSON numbers are parsed from their
    text (for a float, its shortest ``repr``, so ``0.5`` reads as ``"0.5"``). ``bool`` and
    containers are not quantities.

    Raises:
        InvalidQuantity: not a quantity.
    """
    if isinstance(value, str):
        return parse_quantity(value.strip(_GO_SPACE))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidQuantity(f"{value!r} (type={type(value).__name__}) is not a quantity")
    if isinstance(value, int):
        return parse_quantity(str(value))
    text = repr(value)
    if text in ("nan", "inf", "-inf"):
        raise InvalidQuantity(f"{value!r} is not a quantity")
    return parse_quantity(text)
