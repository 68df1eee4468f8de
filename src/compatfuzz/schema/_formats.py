"""One format table: the API server's verdict for Kubernetes sources, JSON Schema's otherwise.

Why this module exists (issue "API-server fidelity", Formats): a ``valid`` property is only
as good as its idea of "valid". We used to anchor a strict Go-duration regex for
Kubernetes ``format: duration``, but the API server also accepts ``"PT0S"`` and
``"3 days"``, so a correct converter failed on ``spec.timeout: PT0S``. Every Kubernetes
verdict below is therefore a port of the code the API server runs, read from these files
(ported, never copied):

* apiextensions-apiserver ``pkg/apiserver/validation/formats.go``: a CRD keeps a string
  format only if its name, with every ``-`` removed, is in a fixed list (so ``date-time``
  is ``datetime``; ``k8s-short-name``/``k8s-long-name`` since 1.34); other string formats
  are dropped, i.e. anything is valid. ``integer`` keeps only ``int32``/``int64``,
  ``number`` only ``float``/``double``.
* kube-openapi ``pkg/validation/validate/formats.go`` (string formats apply to string
  values only), ``validate/values.go`` ``IsValueValidAgainstRange`` and
  ``validate/schema.go`` ``numberValidator`` (numeric formats are range-checked since
  kube-openapi 1d94e88, January 2026, the version apiextensions-apiserver pins; older
  servers did not range-check ``int32``).
* kube-openapi ``pkg/validation/strfmt/default.go``, ``duration.go``, ``date.go``,
  ``time.go``, ``bson.go``, ``kubernetes-extensions.go``; govalidator (kube-openapi
  ``pkg/internal/third_party/govalidator``, same logic as asaskevich/govalidator);
  k8s.io/utils ``net/parse.go`` (``ParseIPSloppy``, ``ParseCIDRSloppy``).
* Go 1.27 standard library: ``net/netip.ParseAddr``, ``net.ParseMAC``,
  ``net/url.ParseRequestURI`` (with ``urlstrictcolons=1``, the default of the ``go 1.26``
  module the API server is built as), ``net/mail.ParseAddress``, ``mime.WordDecoder``,
  ``encoding/base64``, ``time.Parse``, ``time.ParseDuration`` and Unicode 17.0.0 tables.

Go works on UTF-8 bytes, so the ports do too; a lone surrogate becomes U+FFFD first, as
Go's JSON decoder makes it. ``conformance/test_formats_conformance.py`` compares every
verdict with a Go program that imports kube-openapi itself. Sources that are not
Kubernetes keep ``jsonschema``'s 2020-12 format checkers (ISO 8601 ``duration``...) plus
``int32``, ``int64`` and ``byte``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.schema._goparse import (
    _ASCII_LOWER,
    _DIGITS,
    _MAX_INT64,
    _go_text,
    _is_cidr,
    _is_email,
    _is_ipv4,
    _is_ipv6,
    _is_mac,
    _is_request_uri,
)

__all__ = [
    "KUBERNETES_FORMATS",
    "check_format",
    "format_checker",
    "kubernetes_format",
    "kubernetes_keywords",
    "kubernetes_type_checker",
]

Check = Callable[[str], bool]

# ----------------------------------------------------------------- dates and times
def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


_DATE = re.compile(rb"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def _is_date(value: bytes) -> bool:
    """strfmt IsDate: time.Parse("2006-01-02"), a real calendar day (year 0000 too)."""
    m = _DATE.fullmatch(value)
    if m is None:
        return False
    year, month, day = (int(g) for g in m.groups())
    return 1 <= month <= 12 and 1 <= day <= _days_in(month, year)


# DateTimePattern; "." is any character but "\n", as in Go.
_TIME_OF_DAY = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|[+-][0-9]{2}:[0-9]{2})\Z")


def _is_date_time(text: str, value: bytes) -> bool:
    """strfmt IsDateTime (not the layouts ParseDateTime tries): lower-case, split at the
    first two "t", a valid date before the first, a time of day between them; anything
    after a second "t" is ignored."""
    if len(value) < 4:
        return False
    # strings.ToLower: only ASCII letters can lower into "t" or "z", and Go maps every
    # rune to one rune, so lowering ASCII alone keeps the verdict.
    parts = text.translate(_ASCII_LOWER).split("t")
    if len(parts) < 2 or not _is_date(parts[0].encode()):
        return False
    m = _TIME_OF_DAY.match(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


_GO_UNITS = {b"ns": 1, b"us": 10**3, "µs".encode(): 10**3, "μs".encode(): 10**3,
             b"ms": 10**6, b"s": 10**9, b"m": 60 * 10**9, b"h": 3600 * 10**9}


def _go_parse_duration(s: bytes) -> bool:
    """time.ParseDuration succeeds ("1h30m", "-1.5s", "0")."""
    negative = s[:1] == b"-"
    if s[:1] in (b"-", b"+"):
        s = s[1:]
    if s == b"0":
        return True
    if not s:
        return False
    total = 0
    while s:
        if not (s[0] == 0x2E or s[0] in _DIGITS):
            return False
        i = v = 0
        while i < len(s) and s[i] in _DIGITS:  # leadingInt
            if v > (1 << 63) // 10:
                return False
            v = v * 10 + s[i] - 48
            if v > 1 << 63:
                return False
            i += 1
        pre, s = i > 0, s[i:]
        post, f, scale = False, 0, 1.0
        if s[:1] == b".":
            s = s[1:]
            i, overflow = 0, False
            while i < len(s) and s[i] in _DIGITS:  # leadingFraction
                if not overflow:
                    if f > ((1 << 63) - 1) // 10 or f * 10 + s[i] - 48 > 1 << 63:
                        overflow = True
                    else:
                        f, scale = f * 10 + s[i] - 48, scale * 10
                i += 1
            post, s = i > 0, s[i:]
        if not pre and not post:
            return False
        i = 0
        while i < len(s) and not (s[i] == 0x2E or s[i] in _DIGITS):
            i += 1
        unit = _GO_UNITS.get(s[:i])
        if unit is None:
            return False  # missing or unknown unit
        s = s[i:]
        if v > (1 << 63) // unit:
            return False
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > 1 << 63:
                return False
        total += v
        if total > 1 << 63:
            return False
    return negative or total <= _MAX_INT64


# strfmt ParseDuration falls back to an unanchored, scala-style matcher: "3 days ago",
# "PT1H30M" ("1H", "30M") and "1 hour" are all durations to the API server.
_DURATION_WORDS = re.compile("([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)")
_UNIT_WORDS = (("ns", "nano"), ("us", "µs", "micro"), ("ms", "milli"), ("s", "sec"),
               ("m", "min"), ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))


def _is_duration(text: str) -> bool:
    """strfmt IsDuration: time.ParseDuration, else at least one number+unit word (a unit
    is a listed spelling or starts with the last one: "hours", "minutes"), and no number
    that overflows strconv.Atoi."""
    if _go_parse_duration(text.encode()):
        return True
    found = False
    for m in _DURATION_WORDS.finditer(text):
        digits = m[1].lstrip("0")
        if len(digits) > 19 or (digits and int(digits) > _MAX_INT64):
            return False
        unit = m[2].lower()  # ASCII letters and "µ", which is already lower case
        found = found or any(unit in v or unit.startswith(v[-1]) for v in _UNIT_WORDS)
    return found


# --------------------------------------------------------------------- hostnames
# Go's \p{L} and \p{S} (Unicode 17.0.0, Go 1.27) as hex ranges, so the verdict does not
# depend on the Python version's unicodedata; conformance checks them against Go.
_GO_LETTERS = (
    "41-5a 61-7a aa b5 ba c0-d6 d8-f6 f8-2c1 2c6-2d1 2e0-2e4 2ec 2ee 370-374 376-377 37a-37d 37f "
    "386 388-38a 38c 38e-3a1 3a3-3f5 3f7-481 48a-52f 531-556 559 560-588 5d0-5ea 5ef-5f2 620-64a "
    "66e-66f 671-6d3 6d5 6e5-6e6 6ee-6ef 6fa-6fc 6ff 710 712-72f 74d-7a5 7b1 7ca-7ea 7f4-7f5 7fa "
    "800-815 81a 824 828 840-858 860-86a 870-887 889-88f 8a0-8c9 904-939 93d 950 958-961 971-980 "
    "985-98c 98f-990 993-9a8 9aa-9b0 9b2 9b6-9b9 9bd 9ce 9dc-9dd 9df-9e1 9f0-9f1 9fc a05-a0a "
    "a0f-a10 a13-a28 a2a-a30 a32-a33 a35-a36 a38-a39 a59-a5c a5e a72-a74 a85-a8d a8f-a91 a93-aa8 "
    "aaa-ab0 ab2-ab3 ab5-ab9 abd ad0 ae0-ae1 af9 b05-b0c b0f-b10 b13-b28 b2a-b30 b32-b33 b35-b39 "
    "b3d b5c-b5d b5f-b61 b71 b83 b85-b8a b8e-b90 b92-b95 b99-b9a b9c b9e-b9f ba3-ba4 ba8-baa "
    "bae-bb9 bd0 c05-c0c c0e-c10 c12-c28 c2a-c39 c3d c58-c5a c5c-c5d c60-c61 c80 c85-c8c c8e-c90 "
    "c92-ca8 caa-cb3 cb5-cb9 cbd cdc-cde ce0-ce1 cf1-cf2 d04-d0c d0e-d10 d12-d3a d3d d4e d54-d56 "
    "d5f-d61 d7a-d7f d85-d96 d9a-db1 db3-dbb dbd dc0-dc6 e01-e30 e32-e33 e40-e46 e81-e82 e84 "
    "e86-e8a e8c-ea3 ea5 ea7-eb0 eb2-eb3 ebd ec0-ec4 ec6 edc-edf f00 f40-f47 f49-f6c f88-f8c "
    "1000-102a 103f 1050-1055 105a-105d 1061 1065-1066 106e-1070 1075-1081 108e 10a0-10c5 10c7 "
    "10cd 10d0-10fa 10fc-1248 124a-124d 1250-1256 1258 125a-125d 1260-1288 128a-128d 1290-12b0 "
    "12b2-12b5 12b8-12be 12c0 12c2-12c5 12c8-12d6 12d8-1310 1312-1315 1318-135a 1380-138f "
    "13a0-13f5 13f8-13fd 1401-166c 166f-167f 1681-169a 16a0-16ea 16f1-16f8 1700-1711 171f-1731 "
    "1740-1751 1760-176c 176e-1770 1780-17b3 17d7 17dc 1820-1878 1880-1884 1887-18a8 18aa "
    "18b0-18f5 1900-191e 1950-196d 1970-1974 1980-19ab 19b0-19c9 1a00-1a16 1a20-1a54 1aa7 "
    "1b05-1b33 1b45-1b4c 1b83-1ba0 1bae-1baf 1bba-1be5 1c00-1c23 1c4d-1c4f 1c5a-1c7d 1c80-1c8a "
    "1c90-1cba 1cbd-1cbf 1ce9-1cec 1cee-1cf3 1cf5-1cf6 1cfa 1d00-1dbf 1e00-1f15 1f18-1f1d "
    "1f20-1f45 1f48-1f4d 1f50-1f57 1f59 1f5b 1f5d 1f5f-1f7d 1f80-1fb4 1fb6-1fbc 1fbe 1fc2-1fc4 "
    "1fc6-1fcc 1fd0-1fd3 1fd6-1fdb 1fe0-1fec 1ff2-1ff4 1ff6-1ffc 2071 207f 2090-209c 2102 2107 "
    "210a-2113 2115 2119-211d 2124 2126 2128 212a-212d 212f-2139 213c-213f 2145-2149 214e "
    "2183-2184 2c00-2ce4 2ceb-2cee 2cf2-2cf3 2d00-2d25 2d27 2d2d 2d30-2d67 2d6f 2d80-2d96 "
    "2da0-2da6 2da8-2dae 2db0-2db6 2db8-2dbe 2dc0-2dc6 2dc8-2dce 2dd0-2dd6 2dd8-2dde 2e2f "
    "3005-3006 3031-3035 303b-303c 3041-3096 309d-309f 30a1-30fa 30fc-30ff 3105-312f 3131-318e "
    "31a0-31bf 31f0-31ff 3400-4dbf 4e00-a48c a4d0-a4fd a500-a60c a610-a61f a62a-a62b a640-a66e "
    "a67f-a69d a6a0-a6e5 a717-a71f a722-a788 a78b-a7dc a7f1-a801 a803-a805 a807-a80a a80c-a822 "
    "a840-a873 a882-a8b3 a8f2-a8f7 a8fb a8fd-a8fe a90a-a925 a930-a946 a960-a97c a984-a9b2 a9cf "
    "a9e0-a9e4 a9e6-a9ef a9fa-a9fe aa00-aa28 aa40-aa42 aa44-aa4b aa60-aa76 aa7a aa7e-aaaf aab1 "
    "aab5-aab6 aab9-aabd aac0 aac2 aadb-aadd aae0-aaea aaf2-aaf4 ab01-ab06 ab09-ab0e ab11-ab16 "
    "ab20-ab26 ab28-ab2e ab30-ab5a ab5c-ab69 ab70-abe2 ac00-d7a3 d7b0-d7c6 d7cb-d7fb f900-fa6d "
    "fa70-fad9 fb00-fb06 fb13-fb17 fb1d fb1f-fb28 fb2a-fb36 fb38-fb3c fb3e fb40-fb41 fb43-fb44 "
    "fb46-fbb1 fbd3-fd3d fd50-fd8f fd92-fdc7 fdf0-fdfb fe70-fe74 fe76-fefc ff21-ff3a ff41-ff5a "
    "ff66-ffbe ffc2-ffc7 ffca-ffcf ffd2-ffd7 ffda-ffdc 10000-1000b 1000d-10026 10028-1003a "
    "1003c-1003d 1003f-1004d 10050-1005d 10080-100fa 10280-1029c 102a0-102d0 10300-1031f "
    "1032d-10340 10342-10349 10350-10375 10380-1039d 103a0-103c3 103c8-103cf 10400-1049d "
    "104b0-104d3 104d8-104fb 10500-10527 10530-10563 10570-1057a 1057c-1058a 1058c-10592 "
    "10594-10595 10597-105a1 105a3-105b1 105b3-105b9 105bb-105bc 105c0-105f3 10600-10736 "
    "10740-10755 10760-10767 10780-10785 10787-107b0 107b2-107ba 10800-10805 10808 1080a-10835 "
    "10837-10838 1083c 1083f-10855 10860-10876 10880-1089e 108e0-108f2 108f4-108f5 10900-10915 "
    "10920-10939 10940-10959 10980-109b7 109be-109bf 10a00 10a10-10a13 10a15-10a17 10a19-10a35 "
    "10a60-10a7c 10a80-10a9c 10ac0-10ac7 10ac9-10ae4 10b00-10b35 10b40-10b55 10b60-10b72 "
    "10b80-10b91 10c00-10c48 10c80-10cb2 10cc0-10cf2 10d00-10d23 10d4a-10d65 10d6f-10d85 "
    "10e80-10ea9 10eb0-10eb1 10ec2-10ec7 10f00-10f1c 10f27 10f30-10f45 10f70-10f81 10fb0-10fc4 "
    "10fe0-10ff6 11003-11037 11071-11072 11075 11083-110af 110d0-110e8 11103-11126 11144 11147 "
    "11150-11172 11176 11183-111b2 111c1-111c4 111da 111dc 11200-11211 11213-1122b 1123f-11240 "
    "11280-11286 11288 1128a-1128d 1128f-1129d 1129f-112a8 112b0-112de 11305-1130c 1130f-11310 "
    "11313-11328 1132a-11330 11332-11333 11335-11339 1133d 11350 1135d-11361 11380-11389 1138b "
    "1138e 11390-113b5 113b7 113d1 113d3 11400-11434 11447-1144a 1145f-11461 11480-114af "
    "114c4-114c5 114c7 11580-115ae 115d8-115db 11600-1162f 11644 11680-116aa 116b8 11700-1171a "
    "11740-11746 11800-1182b 118a0-118df 118ff-11906 11909 1190c-11913 11915-11916 11918-1192f "
    "1193f 11941 119a0-119a7 119aa-119d0 119e1 119e3 11a00 11a0b-11a32 11a3a 11a50 11a5c-11a89 "
    "11a9d 11ab0-11af8 11bc0-11be0 11c00-11c08 11c0a-11c2e 11c40 11c72-11c8f 11d00-11d06 "
    "11d08-11d09 11d0b-11d30 11d46 11d60-11d65 11d67-11d68 11d6a-11d89 11d98 11db0-11ddb "
    "11ee0-11ef2 11f02 11f04-11f10 11f12-11f33 11fb0 12000-12399 12480-12543 12f90-12ff0 "
    "13000-1342f 13441-13446 13460-143fa 14400-14646 16100-1611d 16800-16a38 16a40-16a5e "
    "16a70-16abe 16ad0-16aed 16b00-16b2f 16b40-16b43 16b63-16b77 16b7d-16b8f 16d40-16d6c "
    "16e40-16e7f 16ea0-16eb8 16ebb-16ed3 16f00-16f4a 16f50 16f93-16f9f 16fe0-16fe1 16fe3 "
    "16ff2-16ff3 17000-18cd5 18cff-18d1e 18d80-18df2 1aff0-1aff3 1aff5-1affb 1affd-1affe "
    "1b000-1b122 1b132 1b150-1b152 1b155 1b164-1b167 1b170-1b2fb 1bc00-1bc6a 1bc70-1bc7c "
    "1bc80-1bc88 1bc90-1bc99 1d400-1d454 1d456-1d49c 1d49e-1d49f 1d4a2 1d4a5-1d4a6 1d4a9-1d4ac "
    "1d4ae-1d4b9 1d4bb 1d4bd-1d4c3 1d4c5-1d505 1d507-1d50a 1d50d-1d514 1d516-1d51c 1d51e-1d539 "
    "1d53b-1d53e 1d540-1d544 1d546 1d54a-1d550 1d552-1d6a5 1d6a8-1d6c0 1d6c2-1d6da 1d6dc-1d6fa "
    "1d6fc-1d714 1d716-1d734 1d736-1d74e 1d750-1d76e 1d770-1d788 1d78a-1d7a8 1d7aa-1d7c2 "
    "1d7c4-1d7cb 1df00-1df1e 1df25-1df2a 1e030-1e06d 1e100-1e12c 1e137-1e13d 1e14e 1e290-1e2ad "
    "1e2c0-1e2eb 1e4d0-1e4eb 1e5d0-1e5ed 1e5f0 1e6c0-1e6de 1e6e0-1e6e2 1e6e4-1e6e5 1e6e7-1e6ed "
    "1e6f0-1e6f4 1e6fe-1e6ff 1e7e0-1e7e6 1e7e8-1e7eb 1e7ed-1e7ee 1e7f0-1e7fe 1e800-1e8c4 "
    "1e900-1e943 1e94b 1ee00-1ee03 1ee05-1ee1f 1ee21-1ee22 1ee24 1ee27 1ee29-1ee32 1ee34-1ee37 "
    "1ee39 1ee3b 1ee42 1ee47 1ee49 1ee4b 1ee4d-1ee4f 1ee51-1ee52 1ee54 1ee57 1ee59 1ee5b 1ee5d "
    "1ee5f 1ee61-1ee62 1ee64 1ee67-1ee6a 1ee6c-1ee72 1ee74-1ee77 1ee79-1ee7c 1ee7e 1ee80-1ee89 "
    "1ee8b-1ee9b 1eea1-1eea3 1eea5-1eea9 1eeab-1eebb 20000-2a6df 2a700-2b81d 2b820-2cead "
    "2ceb0-2ebe0 2ebf0-2ee5d 2f800-2fa1d 30000-3134a 31350-33479"
)
_GO_SYMBOLS = (
    "24 2b 3c-3e 5e 60 7c 7e a2-a6 a8-a9 ac ae-b1 b4 b8 d7 f7 2c2-2c5 2d2-2df 2e5-2eb 2ed 2ef-2ff "
    "375 384-385 3f6 482 58d-58f 606-608 60b 60e-60f 6de 6e9 6fd-6fe 7f6 7fe-7ff 888 9f2-9f3 "
    "9fa-9fb af1 b70 bf3-bfa c7f d4f d79 e3f f01-f03 f13 f15-f17 f1a-f1f f34 f36 f38 fbe-fc5 "
    "fc7-fcc fce-fcf fd5-fd8 109e-109f 1390-1399 166d 17db 1940 19de-19ff 1b61-1b6a 1b74-1b7c "
    "1fbd 1fbf-1fc1 1fcd-1fcf 1fdd-1fdf 1fed-1fef 1ffd-1ffe 2044 2052 207a-207c 208a-208c "
    "20a0-20c1 2100-2101 2103-2106 2108-2109 2114 2116-2118 211e-2123 2125 2127 2129 212e "
    "213a-213b 2140-2144 214a-214d 214f 218a-218b 2190-2307 230c-2328 232b-2429 2440-244a "
    "249c-24e9 2500-2767 2794-27c4 27c7-27e5 27f0-2982 2999-29d7 29dc-29fb 29fe-2b73 2b76-2bff "
    "2ce5-2cea 2e50-2e51 2e80-2e99 2e9b-2ef3 2f00-2fd5 2ff0-2fff 3004 3012-3013 3020 3036-3037 "
    "303e-303f 309b-309c 3190-3191 3196-319f 31c0-31e5 31ef 3200-321e 322a-3247 3250 3260-327f "
    "328a-32b0 32c0-33ff 4dc0-4dff a490-a4c6 a700-a716 a720-a721 a789-a78a a828-a82b a836-a839 "
    "aa77-aa79 ab5b ab6a-ab6b fb29 fbb2-fbd2 fd40-fd4f fd90-fd91 fdc8-fdcf fdfc-fdff fe62 "
    "fe64-fe66 fe69 ff04 ff0b ff1c-ff1e ff3e ff40 ff5c ff5e ffe0-ffe6 ffe8-ffee fffc-fffd "
    "10137-1013f 10179-10189 1018c-1018e 10190-1019c 101a0 101d0-101fc 10877-10878 10ac8 "
    "10d8e-10d8f 10ed1-10ed8 1173f 11fd5-11ff1 16b3c-16b3f 16b45 1bc9c 1cc00-1ccef 1ccfa-1ccfc "
    "1cd00-1ceb3 1ceba-1ced0 1cee0-1cef0 1cf50-1cfc3 1d000-1d0f5 1d100-1d126 1d129-1d164 "
    "1d16a-1d16c 1d183-1d184 1d18c-1d1a9 1d1ae-1d1ea 1d200-1d241 1d245 1d300-1d356 1d6c1 1d6db "
    "1d6fb 1d715 1d735 1d74f 1d76f 1d789 1d7a9 1d7c3 1d800-1d9ff 1da37-1da3a 1da6d-1da74 "
    "1da76-1da83 1da85-1da86 1e14f 1e2ff 1ecac 1ecb0 1ed2e 1eef0-1eef1 1f000-1f02b 1f030-1f093 "
    "1f0a0-1f0ae 1f0b1-1f0bf 1f0c1-1f0cf 1f0d1-1f0f5 1f10d-1f1ad 1f1e6-1f202 1f210-1f23b "
    "1f240-1f248 1f250-1f251 1f260-1f265 1f300-1f6d8 1f6dc-1f6ec 1f6f0-1f6fc 1f700-1f7d9 "
    "1f7e0-1f7eb 1f7f0 1f800-1f80b 1f810-1f847 1f850-1f859 1f860-1f887 1f890-1f8ad 1f8b0-1f8bb "
    "1f8c0-1f8c1 1f8d0-1f8d8 1f900-1fa57 1fa60-1fa6d 1fa70-1fa7c 1fa80-1fa8a 1fa8e-1fac6 1fac8 "
    "1facd-1fadc 1fadf-1faea 1faef-1faf8 1fb00-1fb92 1fb94-1fbef 1fbfa"
)


def _class_body(table: str) -> str:
    parts = []
    for item in table.split():
        lo, _, hi = item.partition("-")
        parts.append(f"\\U{int(lo, 16):08x}" + (f"-\\U{int(hi, 16):08x}" if hi else ""))
    return "".join(parts)


@lru_cache(maxsize=1)
def _hostname_re() -> re.Pattern[str]:
    """strfmt HostnamePattern: RFC 1123 labels of letters, digits, symbols and "-", and a
    top-level label of at least two letters (or one label with no dot)."""
    letters, symbols = _class_body(_GO_LETTERS), _class_body(_GO_SYMBOLS)
    char = f"[a-zA-Z0-9{letters}{symbols}]"
    inner = f"[a-zA-Z0-9\\-{letters}{symbols}]"
    tld = f"[a-zA-Z{letters}]"
    return re.compile(f"{char}(?:-?{char}{{0,62}})?|(?:{char}(?:{inner}{{0,61}}{char})?\\.)+"
                      f"{tld}{{2,63}}")


def _is_hostname(text: str) -> bool:
    """strfmt IsHostname: the pattern, at most 255 bytes, labels of at most 63 bytes."""
    raw = text.encode()
    if len(raw) > 255 or any(len(label) > 63 for label in raw.split(b".")):
        return False
    return _hostname_re().fullmatch(text) is not None


# ------------------------------------------------------------- govalidator & regexes
def _regex(pattern: str, flags: int = 0) -> Check:
    compiled = re.compile(pattern, flags)
    return lambda text: compiled.fullmatch(text) is not None


_UUID_FLAGS = re.IGNORECASE | re.ASCII
_ISBN_SPACE = re.compile("[\t\n\f\r -]+")  # govalidator's [\s-]+ (Go's \s is ASCII)
_ISBN10 = re.compile("[0-9]{9}X|[0-9]{10}")
_ISBN13 = re.compile("[0-9]{13}")
_CREDIT_CARD = re.compile(
    "4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    "|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11}"
)
_OCTET = "(?:0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])"
_SP = "[\t\n\f\r ]*"
_K8S_SHORT = re.compile("[a-z0-9](?:[-a-z0-9]*[a-z0-9])?")
_K8S_LONG = re.compile("[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")


def _is_isbn10(text: str) -> bool:
    s = _ISBN_SPACE.sub("", text)
    if _ISBN10.fullmatch(s) is None:
        return False
    total = sum((i + 1) * int(s[i]) for i in range(9))
    return (total + (100 if s[9] == "X" else 10 * int(s[9]))) % 11 == 0


def _is_isbn13(text: str) -> bool:
    s = _ISBN_SPACE.sub("", text)
    if _ISBN13.fullmatch(s) is None:
        return False
    total = sum((1, 3)[i % 2] * int(s[i]) for i in range(12))
    return int(s[12]) == (10 - total % 10) % 10


def _is_credit_card(text: str) -> bool:
    """govalidator.IsCreditCard: the issuer pattern and the Luhn sum over the ASCII digits."""
    digits = "".join(c for c in text if "0" <= c <= "9")
    if _CREDIT_CARD.fullmatch(digits) is None:
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d >= 10 else d
    return total % 10 == 0


def _on_bytes(check: Callable[[bytes], bool]) -> Check:
    return lambda text: check(text.encode())


#: Every string format the API server validates in a CRD, by normalised name ("-" removed),
#: with its verdict on a (Go-normalised) string. Any other string format is dropped by the
#: API server: every string is valid. ``k8sshortname``/``k8slongname``: Kubernetes 1.34+.
KUBERNETES_FORMATS: Mapping[str, Check] = {
    "bsonobjectid": _regex("[0-9a-fA-F]{24}"),  # hex.DecodeString, 12 bytes
    "uri": _on_bytes(_is_request_uri),
    "email": _on_bytes(_is_email),
    "hostname": _is_hostname,
    "ipv4": _on_bytes(_is_ipv4),
    "ipv6": _on_bytes(_is_ipv6),
    "cidr": _on_bytes(_is_cidr),
    "mac": _on_bytes(_is_mac),
    "uuid": _regex("[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}",
                   _UUID_FLAGS),
    "uuid3": _regex("[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}",
                    _UUID_FLAGS),
    "uuid4": _regex("[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}",
                    _UUID_FLAGS),
    "uuid5": _regex("[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}",
                    _UUID_FLAGS),
    "isbn": lambda text: _is_isbn10(text) or _is_isbn13(text),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_credit_card,
    "ssn": lambda text: len(text.encode()) == 11
    and re.fullmatch("[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}", text) is not None,
    "hexcolor": _regex("#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": _regex(f"rgb\\({_SP}{_OCTET}{_SP},{_SP}{_OCTET}{_SP},{_SP}{_OCTET}{_SP}\\)"),
    # govalidator.IsBase64: padded standard alphabet, never empty
    "byte": _regex("(?:[A-Za-z0-9+/]{4})*"
                   "(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})"),
    "password": lambda text: True,
    "date": _on_bytes(_is_date),
    "duration": _is_duration,
    "datetime": lambda text: _is_date_time(text, text.encode()),
    "k8sshortname": lambda text: len(text) <= 63 and _K8S_SHORT.fullmatch(text) is not None,
    "k8slongname": lambda text: len(text) <= 253 and _K8S_LONG.fullmatch(text) is not None,
}


def kubernetes_format(fmt: str) -> str | None:
    """The normalised name under which the API server validates string format ``fmt``
    (``"date-time"`` -> ``"datetime"``), or None when it ignores ``fmt``."""
    name = fmt.replace("-", "")
    return name if name in KUBERNETES_FORMATS else None


# ------------------------------------------------------------------ numeric formats
def _server_number(instance: int | float) -> int | float:
    """The value Kubernetes' JSON decoder holds: int64 if it fits, else float64."""
    if isinstance(instance, int) and not -(2**63) <= instance <= _MAX_INT64:
        return float(instance)
    return instance


#: swag ``conv.IsFloat64AJSONInteger`` (go-openapi/swag v0.27.1, conv/convert.go, which
#: kube-openapi d427ff9 calls): a float64 is a JSON integer only within
#: +-(2^53-1), ECMAScript's Number.MAX_SAFE_INTEGER, however integral it is.
_MAX_SAFE_INTEGER = 2**53 - 1


def _server_integer(instance: object) -> bool:
    """Whether the API server takes ``instance`` for ``type: integer``: an int64, or a
    float64 (a JSON number with a fraction or exponent, or an integer beyond int64)
    that is integral and within +-(2^53-1). kube-openapi ``validate/type.go``
    (``typeValidator``: a float64 passes ``integer`` only if ``IsFloat64AJSONInteger``)
    then ``validate/schema.go`` ``numberValidator``, whose ``IsValueValidAgainstRange``
    (``validate/values.go``) ParseInts ``FormatFloat(x, 'f', -1, 64)``, so a
    non-integral float that swag's relative epsilon lets through still fails."""
    if isinstance(instance, bool) or not isinstance(instance, int | float):
        return False
    value = _server_number(instance)
    if isinstance(value, float):
        return value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER
    return True


def _kubernetes_integer(bits: int) -> Callable[[object], bool]:
    """``type: integer, format: int32|int64``: kube-openapi's ``typeValidator`` refuses a
    float64 beyond +-(2^53-1) in the format's name ("must be of type int64"), then
    ``IsValueValidAgainstRange`` runs strconv.ParseInt(bits) on the value's text (a
    float64 is written with FormatFloat(x, 'f', -1, 64), the digits of ``repr``). A
    non-integral float is left to the ``type`` check: only ``type: number`` admits one,
    and there the format is dropped."""
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(instance: object) -> bool:
        if isinstance(instance, bool) or not isinstance(instance, int | float):
            return True
        value = _server_number(instance)
        if isinstance(value, float):
            if not value.is_integer():
                return True
            if abs(value) > _MAX_SAFE_INTEGER:
                return False
            value = int(value)
        return bool(lo <= value <= hi)

    return check


def _kubernetes_float(instance: object) -> bool:
    """IsValueValidAgainstRange for ``type: number, format: float``: ParseFloat(text, 32)
    must not overflow, i.e. the value must round to a finite float32."""
    if isinstance(instance, bool) or not isinstance(instance, int | float):
        return True
    value = _server_number(instance)
    exact = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    return abs(exact) < 2**128 - 2**103  # ties round to even: up to infinity


_KUBERNETES_NUMBER_FORMATS: Mapping[str, Callable[[object], bool]] = {
    "int32": _kubernetes_integer(32),
    "int64": _kubernetes_integer(64),
    "float": _kubernetes_float,
}


def _kept_format(schema_type: object, fmt: str) -> bool:
    """apiextensions-apiserver v0.37.2 ``pkg/apiserver/validation/formats.go``
    ``StripUnsupportedFormatsPostProcessorForVersion``: which format a CRD node keeps, by
    its (single) type. An untyped or ``string`` node keeps the listed string formats,
    ``integer`` only ``int32``/``int64``, ``number`` only ``float``/``double``; any other
    type keeps none."""
    if schema_type in (None, "string"):
        return kubernetes_format(fmt) is not None
    if schema_type == "integer":
        return fmt in ("int32", "int64")
    if schema_type == "number":
        return fmt in ("float", "double")
    return False


def kubernetes_keywords() -> dict[str, Callable[..., Any]]:
    """The keywords a Kubernetes schema's ``jsonschema`` validator overrides: ``format``
    applies only where the CRD keeps it (``_kept_format``), as the API server strips a
    format before kube-openapi ever sees it (``{type: number, format: int64}`` accepts
    2^63)."""
    from jsonschema.exceptions import ValidationError

    def format_(validator: Any, fmt: Any, instance: Any, schema: Mapping[str, Any]) -> Any:
        if not isinstance(fmt, str) or validator.format_checker is None:
            return
        if not _kept_format(schema.get("type"), fmt):
            return
        if not validator.format_checker.conforms(instance, fmt):
            yield ValidationError(f"{instance!r} is not a {fmt!r}")
        bound = out_of_format_bound(schema)
        if bound is not None and isinstance(instance, int | float) and not isinstance(
                instance, bool):
            yield ValidationError(bound)

    return {"format": format_}


def out_of_format_bound(schema: Mapping[str, Any]) -> str | None:
    """The API server's error for every number at ``schema`` whose ``maximum`` or
    ``minimum`` lies outside its own numeric ``format`` (``format: int32`` with
    ``maximum: 4294967295``): kube-openapi's ``numberValidator`` (``validate/schema.go``,
    as go-openapi's) checks each bound with ``IsValueValidAgainstRange`` whenever it
    validates a value, so no value is valid there; None when the bounds fit."""
    fmt = schema.get("format")
    check = _KUBERNETES_NUMBER_FORMATS.get(fmt) if isinstance(fmt, str) else None
    if check is None or not _kept_format(schema.get("type"), str(fmt)):
        return None
    for word, name in (("maximum", "Maximum"), ("minimum", "Minimum")):
        value = schema.get(word)
        if isinstance(value, int | float) and not isinstance(value, bool) and not check(
                value):
            return (f"{name} boundary value must be of type {schema.get('type')} with "
                    f"format {fmt}")
    return None


def kubernetes_type_checker(base: Any) -> Any:
    """``base`` (a ``jsonschema.TypeChecker``) with the API server's ``integer``
    (``_server_integer``): ``1.0`` is an integer, ``9007199254740992.0`` and ``2**63``
    (which the decoder holds as a float64) are not."""
    return base.redefine("integer", lambda _checker, instance: _server_integer(instance))


def _kubernetes_verdict(instance: object, fmt: str) -> bool:
    if isinstance(instance, str):
        name = kubernetes_format(fmt)
        return name is None or KUBERNETES_FORMATS[name](_go_text(instance))
    number_check = _KUBERNETES_NUMBER_FORMATS.get(fmt)  # numeric names are not normalised
    return number_check is None or number_check(instance)


# ------------------------------------------------------------- JSON Schema extras
def _int_range(bits: int) -> Callable[[object], bool]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(instance: object) -> bool:
        if isinstance(instance, bool) or not isinstance(instance, int | float):
            return True
        return bool(lo <= instance <= hi)

    return check


def _byte(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        base64.b64decode(instance, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


# ---------------------------------------------------------------------- public API
@lru_cache(maxsize=2)
def format_checker(kubernetes: bool) -> Any:
    """Return a ``jsonschema.FormatChecker`` with the API server's meaning of every format
    (``kubernetes=True``) or JSON Schema 2020-12's (plus OpenAPI ``int32``, ``int64``,
    ``byte``)."""
    import jsonschema
    from jsonschema.exceptions import FormatError

    if not kubernetes:
        # Start from the 2020-12 checkers: the bare FormatChecker() mixes drafts (its
        # "time" is draft 3's "%H:%M:%S", which rejects RFC 3339 times with an offset).
        checker = jsonschema.FormatChecker(formats=())
        checker.checkers = dict(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
        checker.checks("int32")(_int_range(32))
        checker.checks("int64")(_int_range(64))
        checker.checks("byte")(_byte)
        return checker

    class ApiServerFormatChecker(jsonschema.FormatChecker):
        """Format names normalised as the API server does; unknown formats pass."""

        def check(self, instance: object, format: str) -> None:
            if not _kubernetes_verdict(instance, format):
                raise FormatError(f"{instance!r} is not a {format!r}")

    checker = ApiServerFormatChecker(formats=())
    spellings = {**{name: name for name in KUBERNETES_FORMATS},
                 "date-time": "datetime", "k8s-short-name": "k8sshortname",
                 "k8s-long-name": "k8slongname"}
    for spelling, name in spellings.items():
        checker.checks(spelling)(lambda v, name=name: _kubernetes_verdict(v, name))
    for name in _KUBERNETES_NUMBER_FORMATS:
        checker.checks(name)(lambda v, name=name: _kubernetes_verdict(v, name))
    return checker


def check_format(fmt: str, value: str, *, kubernetes: bool) -> bool:
    """Return whether string ``value`` satisfies ``format: fmt``.

    With ``kubernetes=True`` the verdict is the API server's for a CRD field of
    ``type: string``: ``fmt`` is normalised by removing ``-``, formats the server does not
    validate accept everything, and ``duration`` accepts ``"1h30m"``, ``"PT0S"`` and
    ``"3 days"`` alike. Otherwise it is JSON Schema 2020-12's (``duration`` is ISO 8601),
    and unknown formats accept everything too.

    >>> check_format("duration", "PT0S", kubernetes=True)
    True
    >>> check_format("duration", "1h", kubernetes=False)
    False

    Raises:
        InvalidArgument: ``fmt`` or ``value`` is not a string, or ``kubernetes`` not a bool.

    .. versionadded:: 0.1
    """
    for name, arg in (("fmt", fmt), ("value", value)):
        if not isinstance(arg, str):
            raise InvalidArgument(
                f"Expected a string but got {name}={arg!r} (type={type(arg).__name__}); "
                "numbers are checked by Schema.validator, which knows the field's type"
            )
    if not isinstance(kubernetes, bool):
        raise InvalidArgument(
            f"Expected a bool but got kubernetes={kubernetes!r} "
            f"(type={type(kubernetes).__name__}); pass kubernetes=schema.kubernetes"
        )
    if kubernetes:
        return _kubernetes_verdict(value, fmt)
    return bool(format_checker(False).conforms(value, fmt))
