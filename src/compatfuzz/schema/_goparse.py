"""Ports of the Go standard-library parsers the API server's format checks call.

Split from ``_formats.py`` (which holds the format table): ``net.ParseIP`` and
``net/netip.ParseAddr``, k8s.io/utils ``ParseIPSloppy``/``ParseCIDRSloppy``,
``net.ParseMAC``, ``net/url.ParseRequestURI`` (``urlstrictcolons=1``) and
``net/mail.ParseAddress`` with ``mime.WordDecoder``, all of Go 1.27. They work on UTF-8
bytes, as Go does. ``conformance/test_formats_conformance.py`` checks them against Go.
"""

from __future__ import annotations

import re

# ----------------------------------------------------------------------------- helpers
_SURROGATE = re.compile("[\ud800-\udfff]")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
_BIG = 0xFFFFFF  # net's dtoi/xtoi give up at this value
_MAX_INT64 = 2**63 - 1


def _go_text(value: str) -> str:
    """``value`` as Go sees it after JSON decoding: lone surrogates become U+FFFD."""
    if _SURROGATE.search(value) is None:
        return value
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _dtoi(s: bytes) -> tuple[int, int, bool]:
    """net's dtoi: a decimal prefix of ``s``, (value, length, ok)."""
    n = i = 0
    while i < len(s) and s[i] in _DIGITS:
        n = n * 10 + s[i] - 48
        if n >= _BIG:
            return _BIG, i, False
        i += 1
    return n, i, i > 0


def _xtoi(s: bytes) -> tuple[int, int, bool]:
    """net's xtoi: a hexadecimal prefix of ``s``, (value, length, ok)."""
    n = i = 0
    while i < len(s) and s[i] in _HEX:
        n = n * 16 + int(chr(s[i]), 16)
        if n >= _BIG:
            return 0, i, False
        i += 1
    return n, i, i > 0


# ------------------------------------------------------------------- IP addresses
def _sloppy_ipv4(s: bytes) -> bool:
    """k8s.io/utils' forked parseIPv4: four decimal fields, leading zeros allowed."""
    for i in range(4):
        if not s:
            return False
        if i > 0:
            if s[0] != 0x2E:  # "."
                return False
            s = s[1:]
        n, c, ok = _dtoi(s)
        if not ok or n > 0xFF:
            return False
        s = s[c:]
    return not s


def _sloppy_ipv6(s: bytes) -> bool:
    """k8s.io/utils' forked parseIPv6 (Go 1.16's): hex groups may be zero-padded."""
    ellipsis = -1
    if s[:2] == b"::":
        ellipsis = 0
        s = s[2:]
        if not s:
            return True
    i = 0
    while i < 16:
        n, c, ok = _xtoi(s)
        if not ok or n > 0xFFFF:
            return False
        if c < len(s) and s[c] == 0x2E:  # trailing IPv4
            if (ellipsis < 0 and i != 12) or i + 4 > 16 or not _sloppy_ipv4(s):
                return False
            s = b""
            i += 4
            break
        i += 2
        s = s[c:]
        if not s:
            break
        if s[0] != 0x3A or len(s) == 1:  # ":"
            return False
        s = s[1:]
        if s[0] == 0x3A:
            if ellipsis >= 0:
                return False
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        return False
    return ellipsis >= 0 if i < 16 else ellipsis < 0


def _sloppy_ip(s: bytes) -> bool:
    """``netutils.ParseIPSloppy(s) != nil``: the first "." or ":" picks the family."""
    for c in s:
        if c == 0x2E:
            return _sloppy_ipv4(s)
        if c == 0x3A:
            return _sloppy_ipv6(s)
    return False


def _netip_ipv4_fields(s: bytes) -> bool:
    """net/netip's parseIPv4Fields: strict dotted quad, no leading zeros."""
    val = pos = dig = 0
    for i, c in enumerate(s):
        if c in _DIGITS:
            if dig == 1 and val == 0:
                return False
            val = val * 10 + c - 48
            dig += 1
            if val > 255:
                return False
        elif c == 0x2E:
            if i == 0 or i == len(s) - 1 or s[i - 1] == 0x2E or pos == 3:
                return False
            pos += 1
            val = dig = 0
        else:
            return False
    return pos == 3


def _netip_parse(s: bytes) -> tuple[str, bytes, bool] | None:
    """net/netip.ParseAddr: None, or (family "4"/"6", 16 bytes, has a zone)."""
    for c in s:
        if c == 0x2E:
            return ("4", b"", False) if _netip_ipv4_fields(s) else None
        if c == 0x3A:
            return _netip_ipv6(s)
        if c == 0x25:  # "%": a zone without an address
            return None
    return None


def _netip_ipv6(s: bytes) -> tuple[str, bytes, bool] | None:
    zone = False
    cut = s.find(b"%")
    if cut >= 0:
        if cut == len(s) - 1:
            return None  # empty zone
        s, zone = s[:cut], True
    ip = bytearray(16)
    ellipsis = -1
    if s[:2] == b"::":
        ellipsis = 0
        s = s[2:]
        if not s:
            return "6", bytes(ip), zone
    i = 0
    while i < 16:
        off = acc = 0
        while off < len(s) and s[off] in _HEX:
            acc = acc * 16 + int(chr(s[off]), 16)
            if off > 3:
                return None  # more than four digits
            off += 1
        if off == 0:
            return None
        if off < len(s) and s[off] == 0x2E:
            if (ellipsis < 0 and i != 12) or i + 4 > 16 or not _netip_ipv4_fields(s):
                return None
            ip[i:i + 4] = bytes(int(part) for part in s.split(b"."))
            s = b""
            i += 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != 0x3A or len(s) == 1:
            return None
        s = s[1:]
        if s[0] == 0x3A:
            if ellipsis >= 0:
                return None
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        return None
    if i < 16:
        if ellipsis < 0:
            return None
        n = 16 - i
        ip[ellipsis + n:16] = ip[ellipsis:i]
        ip[ellipsis:ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        return None
    return "6", bytes(ip), zone


def _go_parse_ip(s: bytes) -> tuple[str, bytes] | None:
    """net.ParseIP: ParseAddr without a zone; (family, bytes of an IPv6 address)."""
    addr = _netip_parse(s)
    if addr is None or addr[2]:
        return None
    return addr[0], addr[1]


def _go_to4(addr: tuple[str, bytes] | None) -> bool:
    """``net.ParseIP(x).To4() != nil``: IPv4, or IPv6 of the ::ffff:0:0/96 form."""
    if addr is None:
        return False
    family, raw = addr
    return family == "4" or raw[:12] == bytes(10) + b"\xff\xff"


def _is_ipv4(value: bytes) -> bool:
    # strfmt isIPv4: ParseIPSloppy (so "010.0.0.1" and "::ffff:1.2.3.4") and a "."
    return _sloppy_ip(value) and b"." in value


def _is_ipv6(value: bytes) -> bool:
    # govalidator.IsIPv6: net.ParseIP (strict, no zone) and a ":"
    return _go_parse_ip(value) is not None and b":" in value


def _is_cidr(value: bytes) -> bool:
    # strfmt isCIDR: netutils.ParseCIDRSloppy
    addr, slash, mask = value.partition(b"/")
    if not slash:
        return False
    bits = 32
    ok = _sloppy_ipv4(addr)
    if not ok:
        bits, ok = 128, _sloppy_ipv6(addr)
    n, length, good = _dtoi(mask)
    return ok and good and length == len(mask) and n <= bits


def _xtoi2(s: bytes, sep: int) -> bool:
    if len(s) > 2 and s[2] != sep:
        return False
    _, length, ok = _xtoi(s[:2])
    return ok and length == 2


def _is_mac(s: bytes) -> bool:
    """govalidator.IsMAC = net.ParseMAC (Go 1.27: also bare hex, "0123456789ab")."""
    if len(s) < 12:
        return False
    if s[2] in b":-":
        if (len(s) + 1) % 3:
            return False
        n = (len(s) + 1) // 3
        return n in (6, 8, 20) and all(_xtoi2(s[x:], s[2]) for x in range(0, 3 * n, 3))
    if s[4] == 0x2E:
        if (len(s) + 1) % 5:
            return False
        n = 2 * (len(s) + 1) // 5
        return n in (6, 8, 20) and all(
            _xtoi2(s[x:x + 2], 0) and _xtoi2(s[x + 2:], s[4]) for x in range(0, 5 * n // 2, 5)
        )
    if len(s) % 2:
        return False
    return len(s) // 2 in (6, 8, 20) and all(_xtoi2(s[x:x + 2], 0)
                                             for x in range(0, len(s), 2))


# ----------------------------------------------------------------------------- URIs
_HOST_OK = frozenset(b"!$&'()*+,;=:[]<>\"-_.~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     b"abcdefghijklmnopqrstuvwxyz")
_USERINFO_OK = frozenset(b"-._:~!$&'()*+,;=%@0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         b"abcdefghijklmnopqrstuvwxyz")
_SCHEME_FIRST = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_SCHEME_REST = _SCHEME_FIRST | frozenset(b"0123456789+-.")


def _url_unescape(s: bytes, mode: str) -> bytes | None:
    """net/url's unescape: the decoded bytes, or None where Go returns an error.

    ``mode`` is "host", "zone" or "other" (path and userinfo: only %XX is checked)."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                return None
            v = int(s[i + 1:i + 3], 16)
            if mode == "host" and v < 0x80 and s[i:i + 3] != b"%25":
                return None  # hosts may %-encode only non-ASCII bytes
            if mode == "zone" and s[i:i + 3] != b"%25" and v != 0x20 and v not in _HOST_OK:
                return None
            out.append(v)
            i += 3
            continue
        if mode in ("host", "zone") and c < 0x80 and c not in _HOST_OK:
            return None
        out.append(c)
        i += 1
    return bytes(out)


def _valid_optional_port(port: bytes) -> bool:
    return not port or (port[0] == 0x3A and all(c in _DIGITS for c in port[1:]))


def _url_host_ok(scheme: bytes, host: bytes) -> bool:
    """net/url's parseHost succeeds."""
    bracket = host.rfind(b"[")
    if bracket > 0:
        return False
    if bracket == 0:
        close = host.rfind(b"]")
        if close < 0 or not _valid_optional_port(host[close + 1:]):
            return False
        name = host[1:close]
        zone_at = name.find(b"%25")
        if zone_at >= 0:
            head = _url_unescape(name[:zone_at], "host")
            zone = _url_unescape(name[zone_at:], "zone")
            if head is None or zone is None:
                return False
            literal = head + zone
        else:
            unescaped = _url_unescape(name, "host")
            if unescaped is None:
                return False
            literal = unescaped
        addr = _netip_parse(literal)
        return addr is not None and addr[0] == "6"  # an IPv4 literal is not allowed
    first = host.find(b":")
    if first >= 0:
        colon = first
        if host.rfind(b":") != first and scheme not in (b"http", b"https"):
            colon = host.rfind(b":")  # urlstrictcolons=1 keeps http(s) strict
        if not _valid_optional_port(host[colon:]):
            return False
    return _url_unescape(host, "host") is not None


def _is_request_uri(raw: bytes) -> bool:
    """govalidator.IsRequestURI = net/url.ParseRequestURI succeeds."""
    if not raw or any(c < 0x20 or c == 0x7F for c in raw):
        return False
    if raw == b"*":
        return True
    scheme, rest = b"", raw
    for i, c in enumerate(raw):
        if c in _SCHEME_FIRST or (i > 0 and c in _SCHEME_REST):
            continue
        if c == 0x3A:
            if i == 0:
                return False  # missing protocol scheme
            scheme, rest = raw[:i].lower(), raw[i + 1:]
        break
    rest = rest.split(b"?", 1)[0]
    if not rest.startswith(b"/"):
        return bool(scheme)  # opaque "mailto:x"; a request URI needs a scheme or a "/"
    if scheme and rest.startswith(b"//"):
        authority, slash, path = rest[2:].partition(b"/")
        rest = slash + path
        at = authority.rfind(b"@")
        if not _url_host_ok(scheme, authority[at + 1:]):
            return False
        if at >= 0:
            userinfo = authority[:at]
            if any(c not in _USERINFO_OK for c in userinfo):
                return False
            if any(_url_unescape(part, "other") is None for part in userinfo.split(b":", 1)):
                return False
    return _url_unescape(rest, "other") is not None


# ---------------------------------------------------------------------------- email
class _Bad(Exception):
    """net/mail returned an error."""


def _rune(s: bytes, i: int) -> tuple[int, int]:
    """The code point at byte ``i`` of valid UTF-8 ``s`` and its length in bytes."""
    c = s[i]
    size = 1 if c < 0x80 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
    return ord(s[i:i + size].decode("utf-8")), size


def _vchar(r: int) -> bool:
    return 0x21 <= r <= 0x7E or r >= 0x80


def _atext(r: int, dot: bool) -> bool:
    if r == 0x2E:
        return dot
    return _vchar(r) and (r >= 0x80 or r not in b'()<>[]:;@\\,"')


def _go_equal_fold_ascii(a: bytes, target: str) -> bool:
    """strings.EqualFold(a, target) for an ASCII ``target`` without "k", whose only
    non-ASCII fold partner is U+017F (long s, which folds to "s")."""
    try:
        text = a.decode("utf-8").replace("\u017f", "s")
    except UnicodeDecodeError:
        return False
    return text.isascii() and text.translate(_ASCII_LOWER) == target


def _b64_std_len(text: bytes) -> int | None:
    """Bytes base64.StdEncoding.DecodeString yields, or None on error (\\r, \\n skipped)."""
    text = text.replace(b"\r", b"").replace(b"\n", b"")
    if len(text) % 4 or not _B64_STD.fullmatch(text):
        return None
    return len(text) // 4 * 3 - text.count(b"=")


_B64_STD = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _q_decode_len(text: bytes) -> int | None:
    """Bytes mime's qDecode yields, or None on error."""
    n = i = 0
    while i < len(text):
        c = text[i]
        if c == 0x3D:  # "=XX"
            if i + 2 >= len(text) or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
                return None
            i += 2
        elif not (c == 0x5F or 0x20 <= c <= 0x7E or c in b"\n\r\t"):
            return None
        n += 1
        i += 1
    return n


def _rfc2047(word: bytes) -> tuple[bool, bool]:
    """net/mail's decodeRFC2047Word: (is an encoded word, decodes to something).

    Raises _Bad where Go returns an error: a well-formed word in a charset other than
    utf-8, iso-8859-1 and us-ascii (ParseAddress has no CharsetReader)."""
    if len(word) < 8 or word[:2] != b"=?" or word[-2:] != b"?=" or word.count(b"?") != 4:
        return False, False
    charset, _, text = word[2:-2].partition(b"?")
    encoding, _, text = text.partition(b"?")
    if not charset or len(encoding) != 1:
        return False, False
    if encoding in b"Bb":
        size = _b64_std_len(text)
    elif encoding in b"Qq":
        size = _q_decode_len(text)
    else:
        return False, False
    if size is None:
        return False, False
    if not any(_go_equal_fold_ascii(charset, name)
               for name in ("utf-8", "iso-8859-1", "us-ascii")):
        raise _Bad
    return True, size > 0


class _MailParser:
    """net/mail's addrParser, reduced to accepting or raising _Bad."""

    def __init__(self, s: bytes) -> None:
        self.s = s

    def skip_space(self) -> None:
        self.s = self.s.lstrip(b" \t")

    def consume(self, c: bytes) -> bool:
        if self.s[:1] == c:
            self.s = self.s[1:]
            return True
        return False

    def comment(self) -> tuple[bytes, bool]:
        depth, out = 1, bytearray()
        while self.s and depth:
            if self.s[0] == 0x5C and len(self.s) > 1:
                self.s = self.s[1:]
            elif self.s[0] == 0x28:
                depth += 1
            elif self.s[0] == 0x29:
                depth -= 1
            if depth:
                out.append(self.s[0])
            self.s = self.s[1:]
        return bytes(out), depth == 0

    def skip_cfws(self) -> bool:
        self.skip_space()
        while self.consume(b"("):
            if not self.comment()[1]:
                return False
            self.skip_space()
        return True

    def quoted_string(self) -> int:
        """Consume a quoted string; return how many runes it holds."""
        i, runes, escaped = 1, 0, False
        while True:
            if i >= len(self.s):
                raise _Bad
            r, size = _rune(self.s, i)
            if escaped:
                if not (_vchar(r) or r in (0x20, 0x09)):
                    raise _Bad
                runes += 1
                escaped = False
            elif (_vchar(r) and r not in (0x5C, 0x22)) or r in (0x20, 0x09):
                runes += 1
            elif r == 0x22:
                break
            elif r == 0x5C:
                escaped = True
            else:
                raise _Bad
            i += size
        self.s = self.s[i + 1:]
        return runes

    def atom(self, permissive: bool) -> bytes:
        i = 0
        while i < len(self.s):
            r, size = _rune(self.s, i)
            if not _atext(r, True):
                break
            i += size
        if i == 0:
            raise _Bad
        atom, self.s = self.s[:i], self.s[i:]
        if not permissive and (atom[:1] == b"." or b".." in atom or atom[-1:] == b"."):
            raise _Bad
        return atom

    def domain_literal(self) -> None:
        self.s = self.s[1:]  # "["
        n = 0
        while True:
            if n >= len(self.s):
                raise _Bad
            r, size = _rune(self.s, n)
            if r == 0x5D:
                break
            if not _vchar(r) or r in (0x5B, 0x5C):
                raise _Bad
            n += size
        dtext, self.s = self.s[:n], self.s[n + 1:]
        if dtext.startswith(b"IPv6:"):
            if _go_parse_ip(dtext[5:]) is None:
                raise _Bad
        elif not _go_to4(_go_parse_ip(dtext)):
            raise _Bad

    def addr_spec(self) -> None:
        orig = self.s
        try:
            self.skip_space()
            if not self.s:
                raise _Bad
            if self.s[0] == 0x22:
                if self.quoted_string() == 0:
                    raise _Bad  # empty quoted string
            else:
                self.atom(permissive=False)
            if not self.consume(b"@"):
                raise _Bad
            self.skip_space()
            if not self.s:
                raise _Bad
            if self.s[0] == 0x5B:
                self.domain_literal()
            else:
                self.atom(permissive=False)
        except _Bad:
            self.s = orig
            raise

    def phrase(self) -> None:
        plain = encoded = failed = False
        while True:
            if plain and not self.skip_cfws():
                raise _Bad
            self.skip_space()
            if not self.s:
                break
            try:
                if self.s[0] == 0x22:
                    self.quoted_string()
                    plain = True
                    continue
                is_encoded, nonempty = _rfc2047(self.atom(permissive=True))
            except _Bad:
                failed = True
                break
            if is_encoded:
                encoded = encoded or nonempty
            else:
                plain = True
        if failed and not (plain or encoded):
            raise _Bad

    def address(self, group: bool) -> int:
        """Parse one address (or a group); return how many mailboxes it held."""
        self.skip_space()
        if not self.s:
            raise _Bad
        try:
            self.addr_spec()
        except _Bad:
            pass
        else:
            self.skip_space()
            if self.consume(b"("):
                text, ok = self.comment()
                if not ok:
                    raise _Bad
                for word in re.split(rb"[ \t]+", text):
                    if word:
                        _rfc2047(word)
            return 1
        if self.s[0] != 0x3C:
            self.phrase()
        self.skip_space()
        if group and self.consume(b":"):
            return self.group_list()
        if not self.consume(b"<"):
            raise _Bad
        self.addr_spec()
        if not self.consume(b">"):
            raise _Bad
        return 1

    def group_list(self) -> int:
        self.skip_space()
        if self.consume(b";"):
            if not self.skip_cfws():
                raise _Bad
            return 0
        count = 0
        while True:
            self.skip_space()
            count += self.address(group=False)
            if not self.skip_cfws():
                raise _Bad
            if self.consume(b";"):
                if not self.skip_cfws():
                    raise _Bad
                return count
            if not self.consume(b","):
                raise _Bad


def _is_email(value: bytes) -> bool:
    """strfmt IsEmail: net/mail.ParseAddress accepts exactly one address."""
    parser = _MailParser(value)
    try:
        count = parser.address(group=True)
    except _Bad:
        return False
    return parser.skip_cfws() and not parser.s and count == 1
