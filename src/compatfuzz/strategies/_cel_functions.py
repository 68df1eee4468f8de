"""Kubernetes CEL library functions that cel-python 0.5 does not ship.

Kubernetes validation rules may call the cel-go ``strings`` extension and the
Kubernetes libraries for lists, regular expressions, URLs, quantities, IP addresses,
CIDRs and sets (https://kubernetes.io/docs/reference/using-api/cel/). cel-python only
implements the CEL standard definitions, so a rule such as ``self.lowerAscii() == self``
would fail with "undeclared reference". This module implements them as plain Python
functions bound into each cel-python program (``Environment.program(ast, functions=...)``),
the extension mechanism cel-python documents.

cel-python calls a method ``x.f(a)`` as ``f(x, a)``, so one Python function serves every
receiver type that shares a name (``indexOf`` on strings and lists, ``ip`` as a global and
as a CIDR method, ``string`` on quantities/IPs/CIDRs, ``contains`` on strings, lists, maps
and the ``sets`` namespace). A mistyped call raises ``TypeError`` or ``ValueError``, which
cel-python turns into a CEL evaluation error, i.e. the rule does not hold for that value.

The quantity library is ``_cel_quantity``: apimachinery's ``resource.Quantity`` with its
representation, on the parser ``compatfuzz.semantic`` uses too.
"""

from __future__ import annotations

import datetime
import ipaddress
import math
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs
from celpy import celtypes
from celpy.evaluation import base_functions

from compatfuzz.schema._goparse import (
    _SCHEME_FIRST,
    _SCHEME_REST,
    _USERINFO_OK,
    _is_request_uri,
    _url_host_ok,
    _url_unescape,
)
from compatfuzz.schema._re2 import RE2SyntaxError, compile_re2
from compatfuzz.strategies import _cel_numbers, _cel_quantity
from compatfuzz.strategies._cel_quantity import Quantity

__all__ = [
    "CIDR",
    "FUNCTIONS",
    "GO_DOUBLE",
    "GO_INT",
    "GO_UINT",
    "IP",
    "LIST_MIN",
    "SETS",
    "URL",
    "Quantity",
    "parse_go_duration",
]



# --------------------------------------------------------------------------- strings


def _str(value: Any, what: str = "receiver") -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string {what}, got {type(value).__name__}")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int, got {type(value).__name__}")
    return int(value)


def char_at(s: Any, index: Any) -> celtypes.StringType:
    text, i = _str(s), _int(index)
    if not 0 <= i <= len(text):
        raise ValueError(f"index out of range: {i}")
    return celtypes.StringType(text[i : i + 1])


def _index_of_offset(text: str, sub: str, offset: int) -> int:
    """cel-go ext/strings.go ``indexOfOffset`` (code points)."""
    if offset < 0:
        raise ValueError(f"index out of range: {offset}")
    if not sub:
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def _last_index_of_offset(text: str, sub: str, offset: int) -> int:
    """cel-go ext/strings.go ``lastIndexOfOffset`` (code points)."""
    if offset < 0:
        raise ValueError(f"index out of range: {offset}")
    if not sub:
        return min(offset, len(text))
    if offset >= len(text):
        return -1
    return text.rfind(sub, 0, min(offset, len(text) - len(sub)) + len(sub))


def index_of(container: Any, item: Any, offset: Any = None) -> celtypes.IntType:
    """``indexOf`` of the strings extension (code points) and of the lists library."""
    if isinstance(container, str):
        text, sub = container, _str(item, "argument")
        return celtypes.IntType(_index_of_offset(text, sub, 0 if offset is None else _int(offset)))
    if isinstance(container, list) and offset is None:
        for i, element in enumerate(container):
            if _cel_equal(element, item):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    raise TypeError(f"no indexOf overload for {type(container).__name__}")


def last_index_of(container: Any, item: Any, offset: Any = None) -> celtypes.IntType:
    if isinstance(container, str):
        text, sub = container, _str(item, "argument")
        if offset is not None:
            return celtypes.IntType(_last_index_of_offset(text, sub, _int(offset)))
        if not sub:
            return celtypes.IntType(len(text))
        if len(text.encode("utf-8", "surrogatepass")) < len(sub.encode("utf-8", "surrogatepass")):
            return celtypes.IntType(-1)  # cel-go compares byte lengths here
        return celtypes.IntType(_last_index_of_offset(text, sub, len(text) - 1))
    if isinstance(container, list) and offset is None:
        for i in range(len(container) - 1, -1, -1):
            if _cel_equal(container[i], item):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    raise TypeError(f"no lastIndexOf overload for {type(container).__name__}")


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def lower_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_str(s).translate(_ASCII_LOWER))


def upper_ascii(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_str(s).translate(_ASCII_UPPER))


def replace(s: Any, old: Any, new: Any, limit: Any = None) -> celtypes.StringType:
    n = -1 if limit is None else _int(limit)
    return celtypes.StringType(_str(s).replace(_str(old, "argument"), _str(new, "argument"), n))


def split(s: Any, sep: Any, limit: Any = None) -> celtypes.ListType:
    """Go ``strings.SplitN`` semantics: ``n == 0`` gives ``[]``, ``n < 0`` no limit."""
    text, separator = _str(s), _str(sep, "argument")
    n = -1 if limit is None else _int(limit)
    if n == 0:
        return celtypes.ListType([])
    if separator == "":
        parts = list(text)
        if 0 < n < len(parts):
            parts = [*parts[: n - 1], "".join(parts[n - 1 :])]
    else:
        parts = text.split(separator, n - 1 if n > 0 else -1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def substring(s: Any, start: Any, end: Any = None) -> celtypes.StringType:
    text = _str(s)
    i = _int(start)
    j = len(text) if end is None else _int(end)
    if not 0 <= i <= j <= len(text):
        raise ValueError(f"substring range [{i}, {j}) out of range for length {len(text)}")
    return celtypes.StringType(text[i:j])


def trim(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_str(s).strip())


def join(items: Any, sep: Any = None) -> celtypes.StringType:
    if not isinstance(items, list):
        raise TypeError("join() needs a list receiver")
    separator = "" if sep is None else _str(sep, "argument")
    return celtypes.StringType(separator.join(_str(x, "list element") for x in items))


# --------------------------------------------------------------------------- lists


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list receiver, got {type(value).__name__}")
    return value


def _cel_equal(a: Any, b: Any) -> bool:
    """cel-go ``Equal`` as the lists and sets libraries call it: numbers compare across
    int/uint/double, a bool equals only a bool, other types only their own."""
    return _compare(a, b) == 0 if _kind(a) == _kind(b) else False


def _kind(value: Any) -> str:
    if isinstance(value, celtypes.BoolType | bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


_COMPARABLE = (celtypes.StringType, celtypes.BytesType, celtypes.TimestampType,
               celtypes.DurationType)


def _compare(a: Any, b: Any) -> int | None:
    """cel-go ``traits.Comparer.Compare``: -1, 0, 1, or None where it returns an error."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb or (ka not in {"number", "bool"} and not isinstance(a, _COMPARABLE)):
        if ka == kb and isinstance(a, list | dict):
            try:
                return 0 if a == b else 1
            except TypeError:
                return None
        return None
    if ka == "number":
        a, b = _number(a), _number(b)
    try:
        return int((a > b) - (a < b))
    except TypeError:
        return None


def _number(value: Any) -> int | float:
    """A plain Python number: int/float comparisons are exact, as cel-go's across types."""
    return int(value) if isinstance(value, int) else float(value)


def _comparable(value: Any) -> Any:
    """Elements of isSorted/min/max must be cel-go Comparers (numbers, bools, strings, ...)."""
    if _kind(value) in ("bool", "number") or isinstance(value, _COMPARABLE):
        return value
    raise TypeError(f"no such overload: {type(value).__name__} is not comparable")


def is_sorted(items: Any) -> celtypes.BoolType:
    """lists.go ``isSorted``: false only where an element compares greater than the next."""
    values = [_comparable(v) for v in _list(items)]
    return celtypes.BoolType(all(_compare(values[i], values[i + 1]) != 1
                                 for i in range(len(values) - 1)))


_SUMMABLE = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType, celtypes.DurationType)


def list_sum(items: Any) -> Any:
    """lists.go ``sum``: ints, uints, doubles or durations of one type; ``[]`` sums to 0."""
    values = _list(items)
    if not values:
        return celtypes.IntType(0)
    kind = type(values[0])
    if not isinstance(values[0], _SUMMABLE) or isinstance(values[0], celtypes.BoolType) or \
            any(type(v) is not kind for v in values):
        raise TypeError("no such overload: sum(list)")
    total, rest = values[0], values[1:]
    if kind is celtypes.DoubleType:  # from the type's zero: 0.0 + -0.0 is 0.0, not -0.0
        total, rest = celtypes.DoubleType(0.0), values
    for v in rest:
        total = kind(total + v)
    return total


def _pick(items: Any, name: str, prefer: int) -> Any:
    """lists.go ``cmp``: keep the first element, replace it when Compare gives ``prefer``."""
    values = [_comparable(v) for v in _list(items)]
    if not values:
        raise ValueError(f"{name} called on empty list")
    result = values[0]
    for v in values[1:]:
        if _compare(result, v) == prefer:
            result = v
    return result


def list_min(items: Any) -> Any:
    return _pick(items, "min", 1)


def list_max(items: Any) -> Any:
    return _pick(items, "max", -1)


#: The name ``_cel`` gives ``list.min()`` so that cel-python's own ``min`` macro is bypassed.
LIST_MIN = "min()@lists"
#: ``double(x)`` and ``int(x)`` calls, renamed (``_cel._rename_conversions``) so that a
#: string converts as cel-go converts it: Go's strconv, not Python's float()/int()
GO_DOUBLE = "double()@go"
GO_INT = "int()@go"
GO_UINT = "uint()@go"

_GO_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_GO_HEX_FLOAT = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+\Z")
_GO_SPECIAL = re.compile(r"[+-]?(?:inf|infinity|nan)\Z", re.IGNORECASE)
_GO_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def go_parse_float(text: str) -> float:
    """Go's ``strconv.ParseFloat(text, 64)``, which cel-go's string-to-double conversion
    calls (``common/types/string.go``): ASCII digits only, no spaces or ``_``, hex floats
    with a ``p`` exponent, ``inf``/``nan`` in any case; a value past float64 is an error
    (``ErrRange``), not infinity. Raises ``ValueError``."""
    if _GO_SPECIAL.match(text):
        return float(text)
    if _GO_HEX_FLOAT.match(text):
        value = float.fromhex(text)
    elif _GO_DECIMAL.match(text):
        value = float(text)
    else:
        raise ValueError(f"strconv.ParseFloat: parsing {text!r}: invalid syntax")
    if math.isinf(value):
        raise ValueError(f"strconv.ParseFloat: parsing {text!r}: value out of range")
    return value


def go_parse_int(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)`` (cel-go's string-to-int conversion).
    Raises ``ValueError``."""
    if not _GO_INTEGER.match(text):
        raise ValueError(f"strconv.ParseInt: parsing {text!r}: invalid syntax")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"strconv.ParseInt: parsing {text!r}: value out of range")
    return value


def go_double(value: Any) -> celtypes.DoubleType:
    if isinstance(value, str):
        return celtypes.DoubleType(go_parse_float(str(value)))  # ValueError: a CEL error
    return celtypes.DoubleType(value)


def go_int(value: Any) -> celtypes.IntType:
    if isinstance(value, str):
        return celtypes.IntType(go_parse_int(str(value)))  # ValueError: a CEL error
    if isinstance(value, float):
        return _cel_numbers.to_int(value)  # ValueError: a CEL error
    return celtypes.IntType(value)


def go_uint(value: Any) -> celtypes.UintType:
    if isinstance(value, float):
        return _cel_numbers.to_uint(value)  # ValueError: a CEL error
    return celtypes.UintType(value)


# --------------------------------------------------------------------------- regex


def _regex(pattern: Any) -> Any:
    """The pattern in Go's RE2 dialect (``compatfuzz.schema._re2``: Go's verdict, google-re2
    with Go's meaning), as cel-go compiles it with Go's ``regexp``."""
    try:
        return compile_re2(_str(pattern, "pattern"))
    except (RE2SyntaxError, re2.error) as exc:  # an evaluation error, as in regex.go
        raise ValueError(f"Illegal regex: {exc}") from None


def matches(s: Any, pattern: Any) -> celtypes.BoolType:
    """CEL's standard ``matches``, read as Go's ``regexp.MatchString`` (cel-go's
    ``matchesString``), not as cel-python's google-re2 reading of the raw pattern."""
    return celtypes.BoolType(_regex(pattern).search(_str(s)) is not None)


def find(s: Any, pattern: Any) -> celtypes.StringType:
    match = _regex(pattern).search(_str(s))
    return celtypes.StringType("" if match is None else match.group(0))


def find_all(s: Any, pattern: Any, limit: Any = None) -> celtypes.ListType:
    """Go's ``Regexp.FindAllString(s, n)``: an empty match right after a match is skipped
    (regexp.go ``allMatches``), which Python's ``finditer`` does not do."""
    regex = _regex(pattern)
    text = _str(s)
    n = -1 if limit is None else _int(limit)
    found: list[celtypes.StringType] = []
    pos, previous_end = 0, -1
    while pos <= len(text) and (n < 0 or len(found) < n):
        match = regex.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        accept = True
        if end == pos:  # an empty match
            accept = start != previous_end
            pos += 1
        else:
            pos = end
        previous_end = end
        if accept:
            found.append(celtypes.StringType(match.group(0)))
    return celtypes.ListType(found)


# --------------------------------------------------------------------------- URLs

#: Bytes Go's net/url leaves unescaped in a path (encoding_table.go, encodePath).
_PATH_SAFE = frozenset(b"$&+,-./:;=@_~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                       b"abcdefghijklmnopqrstuvwxyz")
#: What validEncoded accepts besides _PATH_SAFE (net/url url.go).
_VALID_ENCODED = _PATH_SAFE | frozenset(b"!$&'()*+,;=:@[]%")


def _go_string(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _path_escape(path: bytes) -> bytes:
    return b"".join(bytes([c]) if c in _PATH_SAFE else b"%%%02X" % c for c in path)


def _query_unescape(text: bytes) -> bytes | None:
    """net/url ``QueryUnescape``: ``+`` is a space; a bad ``%`` escape is an error (None)."""
    return _url_unescape(text.replace(b"+", b" "), "other")


class URL:
    """A URL as k8s.io/apiserver/pkg/cel/library/urls.go builds it.

    ``url()`` checks the string with Go's ``url.ParseRequestURI`` (``compatfuzz.schema``'s
    port, the ``uri`` format's, checked against Go by conformance/test_formats_conformance.py)
    and then builds the value with ``url.Parse``, which cuts the ``#fragment`` first and
    parses ``//host`` even without a scheme; ``isURL()`` is ParseRequestURI alone. Fields
    follow net/url's ``parse``: the scheme lower-cased, ``?`` splits the query, a path
    without a leading ``/`` after a scheme is opaque (no host, no path), the host is
    unescaped, and ``getEscapedPath`` is ``URL.EscapedPath``.
    """

    __slots__ = ("host", "path", "query", "raw_path", "scheme")

    def __init__(self, text: str) -> None:
        raw = text.encode("utf-8", "surrogatepass")
        if not _is_request_uri(raw):
            raise ValueError(f"URL parse error during conversion from string: {text!r}")
        self.scheme, self.host, self.path, self.raw_path, self.query = b"", b"", b"", b"", b""
        raw, _, fragment = raw.partition(b"#")
        if fragment and _url_unescape(fragment, "other") is None:
            raise ValueError(f"invalid URL escape in the fragment of {text!r}")
        if raw == b"*":
            self.path = b"*"
            return
        rest = raw
        for i, c in enumerate(raw):
            if c in _SCHEME_FIRST or (i and c in _SCHEME_REST):
                continue
            if c == 0x3A and i:
                self.scheme, rest = raw[:i].lower(), raw[i + 1:]
            break
        if rest.endswith(b"?") and rest.count(b"?") == 1:
            rest = rest[:-1]
        else:
            rest, _, self.query = rest.partition(b"?")
        if not rest.startswith(b"/"):
            return  # opaque: no host, no path
        if rest.startswith(b"//") and (self.scheme or not rest.startswith(b"///")):
            authority, slash, path = rest[2:].partition(b"/")
            rest = slash + path
            at = authority.rfind(b"@")
            userinfo, host = authority[:max(at, 0)], authority[at + 1:]
            if not _url_host_ok(self.scheme, host) or (at >= 0 and (
                    any(c not in _USERINFO_OK for c in userinfo)
                    or any(_url_unescape(x, "other") is None for x in userinfo.split(b":", 1)))):
                raise ValueError(f"URL parse error during conversion from string: {text!r}")
            self.host = _unescape_host(host)
        self.path = _url_unescape(rest, "other") or b""
        self.raw_path = b"" if _path_escape(self.path) == rest else rest

    def escaped_path(self) -> str:
        raw = self.raw_path
        if raw and all(c in _VALID_ENCODED for c in raw) and \
                _url_unescape(raw, "other") == self.path:
            return _go_string(raw)
        if self.path == b"*":
            return "*"
        return _go_string(_path_escape(self.path))

    def _split_host_port(self) -> tuple[bytes, bytes]:
        host, port = self.host, b""
        colon = host.rfind(b":")
        if colon >= 0 and all(c in b"0123456789" for c in host[colon + 1:]):
            host, port = host[:colon], host[colon + 1:]
        if host.startswith(b"[") and host.endswith(b"]"):
            host = host[1:-1]
        return host, port

    def hostname(self) -> str:
        return _go_string(self._split_host_port()[0])

    def port(self) -> str:
        return _go_string(self._split_host_port()[1])

    def query_values(self) -> dict[str, list[str]]:
        """net/url ``ParseQuery``, keeping what it keeps when it reports an error."""
        values: dict[str, list[str]] = {}
        for pair in self.query.split(b"&") if self.query else ():
            if b";" in pair or not pair:
                continue
            key, _, value = pair.partition(b"=")
            k, v = _query_unescape(key), _query_unescape(value)
            if k is None or v is None:
                continue
            values.setdefault(_go_string(k), []).append(_go_string(v))
        return values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[bytes, ...]:
        return self.scheme, self.host, self.path, self.raw_path, self.query


def _unescape_host(host: bytes) -> bytes:
    """net/url ``parseHost``'s result: the host unescaped (valid: ParseRequestURI said so)."""
    if host.startswith(b"["):
        close = host.rfind(b"]")
        name, port = host[:close + 1], host[close + 1:]
        zone_at = name.find(b"%25")
        if zone_at >= 0:
            head = _url_unescape(name[:zone_at], "host") or b""
            return head + (_url_unescape(name[zone_at:], "zone") or b"") + port
        return (_url_unescape(name, "host") or b"") + port
    return _url_unescape(host, "host") or b""


def url(text: Any) -> URL:
    return URL(_str(text, "argument"))


def is_url(text: Any) -> celtypes.BoolType:
    """``isURL``: url.ParseRequestURI alone (``url()`` also needs url.Parse to succeed)."""
    return celtypes.BoolType(_is_request_uri(_str(text, "argument").encode(
        "utf-8", "surrogatepass")))


def _url(value: Any) -> URL:
    if not isinstance(value, URL):
        raise TypeError(f"expected a URL receiver, got {type(value).__name__}")
    return value


def get_query(u: Any) -> celtypes.MapType:
    return celtypes.MapType({
        celtypes.StringType(k): celtypes.ListType([celtypes.StringType(x) for x in v])
        for k, v in _url(u).query_values().items()
    })


# --------------------------------------------------------------------------- IPs and CIDRs

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse_ip(text: str) -> _Address:
    if "%" in text:
        raise ValueError(f"IP address {text!r} has a zone; Kubernetes rejects zones")
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


class IP:
    """A Kubernetes CEL ``net.IP`` value."""

    __slots__ = ("address",)

    def __init__(self, address: _Address) -> None:
        self.address = address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IP) and self.address == other.address

    def __hash__(self) -> int:
        return hash(self.address)

    def __str__(self) -> str:
        return str(self.address)


class CIDR:
    """A Kubernetes CEL ``net.CIDR`` value; keeps the address as written (``ip()``)."""

    __slots__ = ("interface",)

    def __init__(self, interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> None:
        self.interface = interface

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        return self.interface.network

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CIDR) and self.interface == other.interface

    def __hash__(self) -> int:
        return hash(self.interface)

    def __str__(self) -> str:
        return str(self.interface)


def _parse_cidr(text: str) -> CIDR:
    address, slash, prefix = text.partition("/")
    if not slash or not prefix.isdigit() or (len(prefix) > 1 and prefix[0] == "0"):
        raise ValueError(f"invalid CIDR {text!r}")
    _parse_ip(address)
    return CIDR(ipaddress.ip_interface(text))


def ip(value: Any) -> IP:
    """``ip(string)`` and the CIDR method ``cidr.ip()``."""
    if isinstance(value, CIDR):
        return IP(value.interface.ip)
    return IP(_parse_ip(_str(value, "argument")))


def is_ip(text: Any) -> celtypes.BoolType:
    try:
        _parse_ip(_str(text, "argument"))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def cidr(text: Any) -> CIDR:
    return _parse_cidr(_str(text, "argument"))


def is_cidr(text: Any) -> celtypes.BoolType:
    try:
        _parse_cidr(_str(text, "argument"))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _ip(value: Any) -> _Address:
    if isinstance(value, IP):
        return value.address
    raise TypeError(f"expected an IP, got {type(value).__name__}")


def _cidr(value: Any) -> CIDR:
    if isinstance(value, CIDR):
        return value
    raise TypeError(f"expected a CIDR, got {type(value).__name__}")


def ip_family(value: Any) -> celtypes.IntType:
    return celtypes.IntType(_ip(value).version)


def ip_is_unspecified(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ip(value).is_unspecified)


def ip_is_loopback(value: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_ip(value).is_loopback)


def ip_is_link_local_multicast(value: Any) -> celtypes.BoolType:
    address = _ip(value)
    if address.version == 4:
        return celtypes.BoolType(address in ipaddress.IPv4Network("224.0.0.0/24"))
    packed = address.packed
    return celtypes.BoolType(packed[0] == 0xFF and packed[1] & 0x0F == 0x02)


def ip_is_link_local_unicast(value: Any) -> celtypes.BoolType:
    address = _ip(value)
    return celtypes.BoolType(address.is_link_local and not address.is_multicast)


def ip_is_global_unicast(value: Any) -> celtypes.BoolType:
    """Go's ``net.IP.IsGlobalUnicast``: private ranges count as global unicast."""
    address = _ip(value)
    broadcast = address == ipaddress.IPv4Address("255.255.255.255")
    return celtypes.BoolType(not (
        address.is_unspecified or address.is_loopback or address.is_multicast
        or address.is_link_local or broadcast
    ))


def cidr_contains_ip(c: Any, other: Any) -> celtypes.BoolType:
    network = _cidr(c).network
    address = _parse_ip(other) if isinstance(other, str) else _ip(other)
    return celtypes.BoolType(address.version == network.version and address in network)


def cidr_contains_cidr(c: Any, other: Any) -> celtypes.BoolType:
    network = _cidr(c).network
    inner = (_parse_cidr(other) if isinstance(other, str) else _cidr(other)).network
    return celtypes.BoolType(
        inner.version == network.version and inner.subnet_of(network)  # type: ignore[arg-type]
    )


def cidr_masked(c: Any) -> CIDR:
    return CIDR(ipaddress.ip_interface(str(_cidr(c).network)))


def cidr_prefix_length(c: Any) -> celtypes.IntType:
    return celtypes.IntType(_cidr(c).network.prefixlen)


# --------------------------------------------------------------------------- sets


class _SetsNamespace:
    """Bound to the identifier ``sets`` so that ``sets.contains(a, b)`` resolves."""

    def __repr__(self) -> str:
        return "sets"


SETS = _SetsNamespace()


def _members(value: Any) -> list[Any]:
    return _list(value)


def _contains_all(container: list[Any], items: Iterable[Any]) -> bool:
    return all(any(_cel_equal(x, y) for y in container) for x in items)


def contains(receiver: Any, *args: Any) -> celtypes.BoolType:
    """``string.contains``, plus ``sets.contains(list, sublist)``."""
    if receiver is SETS:
        first, second = args
        return celtypes.BoolType(_contains_all(_members(first), _members(second)))
    (item,) = args
    if isinstance(receiver, str):
        return celtypes.BoolType(_str(item, "argument") in receiver)
    return celtypes.BoolType(receiver.contains(item))


def equivalent(receiver: Any, first: Any, second: Any) -> celtypes.BoolType:
    if receiver is not SETS:
        raise TypeError("equivalent() is only defined as sets.equivalent(list, list)")
    a, b = _members(first), _members(second)
    return celtypes.BoolType(_contains_all(a, b) and _contains_all(b, a))


def intersects(receiver: Any, first: Any, second: Any) -> celtypes.BoolType:
    if receiver is not SETS:
        raise TypeError("intersects() is only defined as sets.intersects(list, list)")
    b = _members(second)
    return celtypes.BoolType(any(any(_cel_equal(x, y) for y in b) for x in _members(first)))


# --------------------------------------------------------------------------- numeric equality

_NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBERS) and not isinstance(value, celtypes.BoolType)


def _equal(a: Any, b: Any) -> Any:
    if _is_number(a) and _is_number(b):
        return celtypes.BoolType(float(a) == float(b) if isinstance(a, float) or
                                 isinstance(b, float) else int(a) == int(b))
    return base_functions["_==_"](a, b)


def equal(a: Any, b: Any) -> Any:
    """``==`` with cel-go's cross-type numeric equality (``3.0 == 3`` is true).

    cel-python 0.5 raises "no such overload" for it, but Kubernetes binds ``number``
    fields to ``double``, so ``self.ratio == 1`` is an ordinary rule there.
    """
    return _equal(a, b)


def not_equal(a: Any, b: Any) -> Any:
    result = _equal(a, b)
    return celtypes.BoolType(not result) if isinstance(result, celtypes.BoolType) else result


def member_of(item: Any, container: Any) -> Any:
    """``in`` with the same numeric equality as ``==``."""
    if isinstance(container, list) and _is_number(item):
        return celtypes.BoolType(any(
            _is_number(x) and bool(_equal(item, x)) for x in container))
    return base_functions["_in_"](item, container)


# --------------------------------------------------------------------------- conversions


def string(value: Any) -> celtypes.StringType:
    """``string(x)`` extended to IPs, CIDRs, quantities and URLs."""
    if isinstance(value, IP | CIDR):
        return celtypes.StringType(str(value))
    if isinstance(value, Quantity):  # apiservercel.Quantity converts to no other type
        raise TypeError("no such overload: string(kubernetes.Quantity)")
    if isinstance(value, float):
        return celtypes.StringType(_cel_numbers.format_double(value))
    return celtypes.StringType(value)


def dyn(value: Any) -> Any:
    return value


_GO_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNITS_US = {
    "ns": Decimal("0.001"), "us": Decimal(1), "µs": Decimal(1), "μs": Decimal(1),
    "ms": Decimal(1000), "s": Decimal(10**6), "m": Decimal(60 * 10**6), "h": Decimal(3600 * 10**6),
}


def parse_go_duration(text: str) -> celtypes.DurationType:
    """Parse Go ``time.ParseDuration`` syntax (``"1h30m"``, ``"300ms"``, ``"-1.5h"``).

    cel-python's own ``duration()`` parser drops sub-second units (``"300ms"`` gives 0s),
    so values of schema ``format: duration`` go through this one.
    """
    body = text
    sign = 1
    if body[:1] in "+-" and body:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return celtypes.DurationType(datetime.timedelta(0))
    if not body:
        raise ValueError(f"invalid duration {text!r}")
    total = Decimal(0)
    pos = 0
    for match in _GO_DURATION.finditer(body):
        number = match.group(1)
        if match.start() != pos or number in ("", "."):
            raise ValueError(f"invalid duration {text!r}")
        total += Decimal(number) * _GO_UNITS_US[match.group(2)]
        pos = match.end()
    if pos != len(body):
        raise ValueError(f"invalid duration {text!r}")
    micros = int(total) * sign
    return celtypes.DurationType(datetime.timedelta(microseconds=micros))


_Function = Callable[..., Any]

FUNCTIONS: dict[str, _Function] = {
    # strings extension
    "charAt": char_at,
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "lowerAscii": lower_ascii,
    "upperAscii": upper_ascii,
    "replace": replace,
    "split": split,
    "substring": substring,
    "trim": trim,
    "join": join,
    # lists library
    "isSorted": is_sorted,
    "sum": list_sum,
    "min": list_min,
    LIST_MIN: list_min,
    GO_DOUBLE: go_double,
    GO_INT: go_int,
    GO_UINT: go_uint,
    "max": list_max,
    # regex library
    "find": find,
    "findAll": find_all,
    "matches": matches,
    # URL library
    "url": url,
    "isURL": is_url,
    "getScheme": lambda u: celtypes.StringType(_go_string(_url(u).scheme)),
    "getHost": lambda u: celtypes.StringType(_go_string(_url(u).host)),
    "getHostname": lambda u: celtypes.StringType(_url(u).hostname()),
    "getPort": lambda u: celtypes.StringType(_url(u).port()),
    "getEscapedPath": lambda u: celtypes.StringType(_url(u).escaped_path()),
    "getQuery": get_query,
    # quantity library
    "quantity": _cel_quantity.quantity,
    "isQuantity": _cel_quantity.is_quantity,
    "isInteger": _cel_quantity.is_integer,
    "asInteger": _cel_quantity.as_integer,
    "asApproximateFloat": _cel_quantity.as_approximate_float,
    "sign": _cel_quantity.sign,
    "add": _cel_quantity.add,
    "sub": _cel_quantity.sub,
    "compareTo": _cel_quantity.compare_to,
    "isGreaterThan": _cel_quantity.is_greater_than,
    "isLessThan": _cel_quantity.is_less_than,
    # IP and CIDR libraries
    "ip": ip,
    "isIP": is_ip,
    "cidr": cidr,
    "isCIDR": is_cidr,
    "family": ip_family,
    "isUnspecified": ip_is_unspecified,
    "isLoopback": ip_is_loopback,
    "isLinkLocalMulticast": ip_is_link_local_multicast,
    "isLinkLocalUnicast": ip_is_link_local_unicast,
    "isGlobalUnicast": ip_is_global_unicast,
    "containsIP": cidr_contains_ip,
    "containsCIDR": cidr_contains_cidr,
    "masked": cidr_masked,
    "prefixLength": cidr_prefix_length,
    # sets library (through the ``sets`` namespace value) and standard overrides
    "contains": contains,
    "equivalent": equivalent,
    "intersects": intersects,
    "string": string,
    "dyn": dyn,
    "_+_": _cel_numbers.add,
    "_-_": _cel_numbers.subtract,
    "_*_": _cel_numbers.multiply,
    "_/_": _cel_numbers.true_divide,
    "-_": _cel_numbers.negate,
    "_==_": equal,
    "_!=_": not_equal,
    "_in_": member_of,
}
"""Name -> implementation, passed to every ``Environment.program`` call."""
