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
import re
import urllib.parse
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no stubs
from celpy import celtypes
from celpy.evaluation import base_functions

from compatfuzz.strategies import _cel_quantity
from compatfuzz.strategies._cel_quantity import Quantity

__all__ = [
    "CIDR",
    "FUNCTIONS",
    "IP",
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


def index_of(container: Any, item: Any, offset: Any = None) -> celtypes.IntType:
    """``indexOf`` of the strings extension (code points) and of the lists library."""
    if isinstance(container, str):
        text, sub = container, _str(item, "argument")
        start = 0 if offset is None else _int(offset)
        if not 0 <= start <= len(text):
            raise ValueError(f"index out of range: {start}")
        return celtypes.IntType(text.find(sub, start))
    if isinstance(container, list) and offset is None:
        for i, element in enumerate(container):
            if _cel_equal(element, item):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    raise TypeError(f"no indexOf overload for {type(container).__name__}")


def last_index_of(container: Any, item: Any, offset: Any = None) -> celtypes.IntType:
    if isinstance(container, str):
        text, sub = container, _str(item, "argument")
        end = len(text) if offset is None else _int(offset)
        if not 0 <= end <= len(text):
            raise ValueError(f"index out of range: {end}")
        return celtypes.IntType(text.rfind(sub, 0, end + len(sub)))
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


def reverse(s: Any) -> celtypes.StringType:
    return celtypes.StringType(_str(s)[::-1])


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
    try:
        return bool(a == b)
    except TypeError:
        return False


def is_sorted(items: Any) -> celtypes.BoolType:
    values = _list(items)
    return celtypes.BoolType(all(values[i] <= values[i + 1] for i in range(len(values) - 1)))


def list_sum(items: Any) -> Any:
    values = _list(items)
    if not values:
        return celtypes.IntType(0)
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


def list_min(items: Any) -> Any:
    values = _list(items)
    if not values:
        raise ValueError("min() of an empty list")
    return min(values)


def list_max(items: Any) -> Any:
    values = _list(items)
    if not values:
        raise ValueError("max() of an empty list")
    return max(values)


# --------------------------------------------------------------------------- regex


def find(s: Any, pattern: Any) -> celtypes.StringType:
    match = re2.compile(_str(pattern, "pattern")).search(_str(s))
    return celtypes.StringType("" if match is None else match.group(0))


def find_all(s: Any, pattern: Any, limit: Any = None) -> celtypes.ListType:
    n = -1 if limit is None else _int(limit)
    if n == 0:
        return celtypes.ListType([])
    found = [m.group(0) for m in re2.compile(_str(pattern, "pattern")).finditer(_str(s))]
    if n > 0:
        found = found[:n]
    return celtypes.ListType([celtypes.StringType(x) for x in found])


# --------------------------------------------------------------------------- URLs

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$")
_BAD_URL_CHARS = re.compile(r"[\x00-\x20\x7f]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


class URL:
    """A URL accepted by Go's ``url.ParseRequestURI`` (absolute URI or absolute path)."""

    __slots__ = ("hostname", "path", "port", "query", "scheme")

    def __init__(self, text: str) -> None:
        if _BAD_URL_CHARS.search(text) or _BAD_PERCENT.search(text):
            raise ValueError(f"invalid URL {text!r}")
        if text.startswith("/"):
            scheme, rest = "", text
        else:
            scheme, sep, rest = text.partition(":")
            if not sep or not _SCHEME.match(scheme):
                raise ValueError(f"URL {text!r} is neither absolute nor an absolute path")
        rest, _, self.query = rest.partition("?")
        host = ""
        if rest.startswith("//"):
            authority, slash, path = rest[2:].partition("/")
            rest = slash + path
            host = authority.rpartition("@")[2]
        self.scheme, self.path = scheme, rest
        self.hostname, self.port = _split_host(host, text)

    def host(self) -> str:
        name = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return f"{name}:{self.port}" if self.port else name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URL) and (
            self.scheme, self.hostname, self.port, self.path, self.query
        ) == (other.scheme, other.hostname, other.port, other.path, other.query)

    def __hash__(self) -> int:
        return hash((self.scheme, self.hostname, self.port, self.path, self.query))


def _split_host(host: str, text: str) -> tuple[str, str]:
    if host.startswith("["):
        name, bracket, after = host[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ValueError(f"invalid IPv6 host in URL {text!r}")
        port = after[1:]
    elif ":" in host:
        name, _, port = host.rpartition(":")
    else:
        name, port = host, ""
    if port and not port.isdigit():
        raise ValueError(f"invalid port {port!r} in URL {text!r}")
    return name, port


def url(text: Any) -> URL:
    return URL(_str(text, "argument"))


def is_url(text: Any) -> celtypes.BoolType:
    try:
        URL(_str(text, "argument"))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _url(value: Any) -> URL:
    if not isinstance(value, URL):
        raise TypeError(f"expected a URL receiver, got {type(value).__name__}")
    return value


def get_query(u: Any) -> celtypes.MapType:
    parsed = urllib.parse.parse_qs(_url(u).query, keep_blank_values=True)
    return celtypes.MapType({
        celtypes.StringType(k): celtypes.ListType([celtypes.StringType(x) for x in v])
        for k, v in parsed.items()
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
    "reverse": reverse,
    "join": join,
    # lists library
    "isSorted": is_sorted,
    "sum": list_sum,
    "min": list_min,
    "max": list_max,
    # regex library
    "find": find,
    "findAll": find_all,
    # URL library
    "url": url,
    "isURL": is_url,
    "getScheme": lambda u: celtypes.StringType(_url(u).scheme),
    "getHost": lambda u: celtypes.StringType(_url(u).host()),
    "getHostname": lambda u: celtypes.StringType(_url(u).hostname),
    "getPort": lambda u: celtypes.StringType(_url(u).port),
    "getEscapedPath": lambda u: celtypes.StringType(_url(u).path),
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
    "_==_": equal,
    "_!=_": not_equal,
    "_in_": member_of,
}
"""Name -> implementation, passed to every ``Environment.program`` call."""
