"""check_format and format_checker: the API server's verdicts for Kubernetes sources.

Cases come from the upstream code and its tests; each block says where. The exhaustive
comparison with kube-openapi itself is conformance/test_formats_conformance.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument
from compatfuzz.schema import Schema, check_format
from compatfuzz.schema._formats import KUBERNETES_FORMATS, format_checker, kubernetes_format

V, X = True, False  # valid, invalid
S = "kube-openapi pkg/validation/strfmt"

KUBERNETES_CASES: list[tuple[str, str, bool, str]] = [
    # --- duration: time.ParseDuration, else the unit-word matcher (strfmt duration.go)
    ("duration", "PT0S", V, "issue: '0S' is 0 seconds to the matcher"),
    ("duration", "PT1H30M", V, "issue: '1H' and '30M'"),
    ("duration", "1h30m", V, "time.ParseDuration"),
    ("duration", "-1.5s", V, "time.ParseDuration"),
    ("duration", "0", V, "time.ParseDuration special case"),
    ("duration", "1µs", V, f"{S}/duration_test.go"),
    ("duration", "1hr", V, f"{S}/duration_test.go"),
    ("duration", "1  w", V, f"{S}/duration_test.go"),
    ("duration", "1nanoseconds", V, f"{S}/duration_test.go"),
    ("duration", "1 hour", V, "prefix of the last spelling ('hour')"),
    ("duration", "3 days ago", V, "unanchored matcher"),
    ("duration", "5 MINUTES", V, "units are lower-cased"),
    ("duration", "three week", X, f"{S}/duration_test.go"),
    ("duration", "12 parsecs", X, f"{S}/duration_test.go"),
    ("duration", "12 y", X, f"{S}/duration_test.go"),
    ("duration", "45 wekk", X, f"{S}/duration_test.go"),
    ("duration", "9999999999999999999999999999999999999999999999999999999 weeks", X,
     f"{S}/duration_test.go: strconv.Atoi overflows"),
    ("duration", "1 wks", X, "'wk' is not the last spelling, so no prefix match"),
    ("duration", "P1Y", X, "'y' is no unit"),
    ("duration", "", X, "nothing to match"),
    ("duration", "2562047h47m16.854775807s", V, "time.ParseDuration: max int64 ns"),
    ("duration", "2562047h47m16.854775808s", V, "ParseDuration overflows; '2562047h' matches"),
    ("duration", "9223372036854775808ns", X, "ParseDuration and the matcher's Atoi overflow"),
    ("duration", "9223372036854775807 ns", V, "the space fails ParseDuration, not the matcher"),
    ("duration", "9223372036854775808 x", X, "no unit, and Atoi overflows"),
    # --- date-time: IsDateTime, not ParseDateTime's layouts (strfmt time.go)
    ("date-time", "2014-12-15T19:30:20Z", V, f"{S}/time_test.go"),
    ("date-time", "2011-08-18T19:03:37.000000000+01:00", V, f"{S}/time_test.go"),
    ("date-time", "2014-12-15T08:00:00", X, "ParseDateTime accepts it, IsDateTime needs a zone"),
    ("date-time", "2020-01-01t00:00:00z", V, "lower-cased before matching"),
    ("datetime", "2020-01-01T00:00:00Z", V, "names are normalised by removing '-'"),
    ("date-time", "2020-01-01T23:59:60Z", X, "second <= 59"),
    ("date-time", "2020-01-01T24:00:00Z", X, "hour <= 23"),
    ("date-time", "2021-02-29T00:00:00Z", X, "time.Parse checks the day of the month"),
    ("date-time", "2020-01-01T00:00:00Zt whatever", V, "text after a second 't' is ignored"),
    ("date-time", "2020-01-01T00:00:00x5Z", V, "DateTimePattern's '.' is any character"),
    # --- date (strfmt date.go: time.Parse("2006-01-02"))
    ("date", "2020-02-29", V, "leap year"), ("date", "1900-02-29", X, "not a leap year"),
    ("date", "0000-02-29", V, "year 0 is a leap year to Go"),
    ("date", "2020-1-01", X, "two-digit month"),
    # --- hostname (strfmt default_test.go TestFormatHostname)
    ("hostname", "somewhere.com", V, f"{S}/default_test.go"),
    ("hostname", "888.com", V, f"{S}/default_test.go"),
    ("hostname", "☁→❄→☃→☀→☺→☂→☹→✝.ws", V, f"{S}/default_test.go"),
    ("hostname", "ex$ample", V, f"{S}/default_test.go"),
    ("hostname", "<foo>", V, f"{S}/default_test.go"),
    ("hostname", "www.詹姆斯.london", V, f"{S}/default_test.go"),
    ("hostname", "1.1.1.1", X, f"{S}/default_test.go"),
    ("hostname", "a" * 256, X, f"{S}/default_test.go"),
    ("hostname", "x.y." + "a" * 64, X, f"{S}/default_test.go"),
    ("hostname", "www.example-.org", X, f"{S}/default_test.go"),
    ("hostname", "www.詹姆斯.x", X, f"{S}/default_test.go"),
    ("hostname", "a.b.c.é;ö", X, f"{S}/default_test.go"),
    ("hostname", "www.example_underscored.org", X, f"{S}/default_test.go"),
    ("hostname", "a.\U00011f04\U00011f05", V, "Kawi letters: Unicode 15, after Python 3.11's"),
    # --- email: net/mail.ParseAddress (strfmt default_test.go TestFormatEmail)
    ("email", '"Abc\\@def"@example.com', V, f"{S}/default_test.go"),
    ("email", "!#$%&'*+-/=?^_`{}|~@example.com", V, f"{S}/default_test.go"),
    ("email", "postmaster@☁→❄→☃→☀→☺→☂→☹→✝.ws", V, f"{S}/default_test.go"),
    ("email", "john@com", V, f"{S}/default_test.go"),
    ("email", "somebody@somewhere@com", X, f"{S}/default_test.go"),
    ("email", "Joe <joe@example.com>", V, "net/mail: name-addr"),
    ("email", "g: joe@example.com;", V, "net/mail: a group of one"),
    ("email", "g: a@b, c@d;", X, "net/mail: two addresses"),
    ("email", "joe@example.com (Joe)", V, "net/mail: display name in a comment"),
    ("email", "=?koi8-r?q?x?= <a@b>", X, "mime: no CharsetReader for koi8-r"),
    ("email", "a@[IPv6:1.2.3.4]", V, "net/mail: ParseIP gives 16 bytes for IPv4 too"),
    ("email", "a@[::1]", X, "net/mail: not IPv4 and no 'IPv6:' prefix"),
    # --- uri: net/url.ParseRequestURI
    ("uri", "http://somewhere.com", V, f"{S}/default_test.go"),
    ("uri", "somewhere.com", X, f"{S}/default_test.go"),
    ("uri", "/healthz", V, "absolute path"), ("uri", "mailto:x", V, "opaque"),
    ("uri", "*", V, "net/url"), ("uri", "", X, "net/url: empty url"),
    ("uri", "http://a:b:80/", X, "urlstrictcolons=1 (go 1.26 modules)"),
    ("uri", "ftp://a:b:80/", V, "only http(s) hosts are strict about colons"),
    ("uri", "http://::1", X, "urlstrictcolons=1: Kubernetes 1.36+; 1.35 (go 1.25) accepts"),
    ("uri", "https://::1:80/x", X, "urlstrictcolons=1"), ("uri", "ftp://::1", V, "not http"),
    ("uri", "http://[::1]:80/", V, "net/url: bracketed IPv6"),
    ("uri", "http://[::ffff:1.2.3.4]/", V, "net/url: IPv4-mapped is not Is4"),
    ("uri", "http://[1.2.3.4]/", X, "net/url: IPv4 in brackets"),
    ("uri", "http://[fe80::1%25en0]/", V, "net/url: RFC 6874 zone"),
    ("uri", "http://%41/", X, "net/url: hosts escape only non-ASCII bytes"),
    # --- IP addresses (strfmt default_test.go; k8s.io/utils ParseIPSloppy)
    ("ipv4", "192.168.1.01", V, f"{S}/default_test.go: leading zeros"),
    ("ipv4", "198.168.254.2.2", X, f"{S}/default_test.go"),
    ("ipv4", "::ffff:1.2.3.4", V, "ParseIPSloppy parses it, and it has a '.'"),
    ("ipv6", "127.0.0.1", X, f"{S}/default_test.go"),
    ("ipv6", "::ffff:1.2.3.4", V, "net.ParseIP"),
    ("ipv6", "fe80::1%en0", X, "net.ParseIP rejects zones"),
    ("ipv6", "0001::", V, "four hex digits"), ("ipv6", "00001::", X, "five hex digits"),
    ("cidr", "192.0.02.1/24", V, f"{S}/default_test.go: leading zeros"),
    ("cidr", "2001:db8:a0b:12f0::1/32", V, f"{S}/default_test.go"),
    ("cidr", "2001:db8:a0b:12f0::1", X, f"{S}/default_test.go"),
    ("cidr", "1.2.3.4/33", X, "prefix too long"),
    # --- mac: net.ParseMAC
    ("mac", "01:02:03:04:05", X, f"{S}/default_test.go"),
    ("mac", "01-23-45-67-89-AB", V, "net.ParseMAC"), ("mac", "0123.4567.89ab", V, "dotted"),
    ("mac", "0123456789ab", V, "Go 1.27 net.ParseMAC also takes bare hex"),
    # --- govalidator regexes (strfmt default_test.go)
    ("uuid", "not-a-uuid", X, f"{S}/default_test.go"),
    ("uuid", "123E4567E89B12D3A456426614174000", V, "(?i) and optional dashes"),
    ("uuid4", "123e4567-e89b-42d3-c456-426614174000", X, "variant must be 8, 9, a or b"),
    ("isbn10", "836217463", X, f"{S}/default_test.go"),
    ("isbn13", "978-0321751042", X, f"{S}/default_test.go"),
    ("isbn", "0321751043", V, f"{S}/default_test.go"),
    ("hexcolor", "#fffffffz", X, f"{S}/default_test.go"),
    ("rgbcolor", "rgb(300,0,0)", X, f"{S}/default_test.go"),
    ("ssn", "999 99 999", X, f"{S}/default_test.go"), ("ssn", "111-11-1111", V, "ibid."),
    ("creditcard", "4111-1111-1111-1111", V, f"{S}/default_test.go"),
    ("creditcard", "9999-9999-9999-999", X, f"{S}/default_test.go"),
    ("byte", "", X, "govalidator.IsBase64 rejects the empty string"),
    ("byte", "YQ==", V, "padded"), ("byte", "YQ", X, "unpadded"),
    ("bsonobjectid", "507f1f77bcf86cd799439011", V, "12 hex bytes"),
    ("password", "anything at all", V, f"{S}/default_test.go"),
    ("k8s-short-name", "my-name", V, f"{S}/kubernetes-extensions.go (1.34+)"),
    ("k8s-short-name", "My-name", X, "lower case only"),
    ("k8s-long-name", "a." * 126 + "a", V, "253 characters"),
    ("k8s-long-name", "a." * 127 + "a", X, "longer than 253"),
    # --- formats the API server drops (apiextensions-apiserver validation/formats.go)
    ("time", "not a time", V, "not in the CRD list: dropped"),
    ("uri-reference", "::", V, "not in the CRD list: dropped"),
    ("int32", "abc", V, "integer formats never apply to strings"),
    ("DATE", "x", V, "names are case-sensitive: unknown"),
    ("d-a-t-e", "x", X, "every '-' is removed: this is 'date'"),
]


@pytest.mark.parametrize(("fmt", "value", "valid", "source"), KUBERNETES_CASES)
def test_kubernetes_verdicts(fmt: str, value: str, valid: bool, source: str) -> None:
    assert check_format(fmt, value, kubernetes=True) is valid, source


JSON_SCHEMA_CASES = [
    ("duration", "PT0S", V), ("duration", "1h", X), ("date-time", "2020-01-01T00:00:00Z", V),
    ("time", "10:00:00Z", V), ("time", "not a time", X), ("byte", "", V), ("byte", "YQ", X),
    ("ipv4", "010.1.1.1", X), ("mac", "anything", V), ("unknown-format", "x", V),
]


@pytest.mark.parametrize(("fmt", "value", "valid"), JSON_SCHEMA_CASES)
def test_json_schema_verdicts(fmt: str, value: str, valid: bool) -> None:
    assert check_format(fmt, value, kubernetes=False) is valid


def test_regression_pt0s_is_a_valid_crd_duration() -> None:
    crd = Schema(root={"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "timeout": {"type": "string", "format": "duration"}}}}}, kubernetes=True)
    for value in ("PT0S", "PT1H30M", "1h30m", "3 days"):
        assert crd.is_valid({"spec": {"timeout": value}}), value
    assert not crd.is_valid({"spec": {"timeout": "soon"}})
    plain = Schema(root=dict(crd.root))
    assert plain.is_valid({"spec": {"timeout": "PT0S"}})
    assert not plain.is_valid({"spec": {"timeout": "1h30m"}})


NUMERIC_CASES = [
    # kube-openapi validate/values.go IsValueValidAgainstRange, applied since 1d94e88
    ("int32", 2**31 - 1, V), ("int32", 2**31, X), ("int32", -(2**31), V),
    ("int32", 2147483648.0, X), ("int32", 1.5, V),  # non-integral: the type check's job
    ("int64", 2**63 - 1, V), ("int64", 2**63, X), ("int64", -(2**63), V),
    # beyond int64 the decoder holds a float64, which FormatFloat('f', -1) writes with
    # its shortest digits: -9223372036854776000, which ParseInt rejects
    ("int64", -(2**63) - 1, X), ("int64", -9.223372036854776e18, X),
    # typeValidator (validate/type.go) refuses, in the format's name, a float64 that swag's
    # IsFloat64AJSONInteger does not take for an integer: beyond +-(2^53-1), integral or not
    ("int64", 9007199254740992.0, X), ("int64", 9007199254740991.0, V),
    ("int64", -9007199254740992.0, X), ("int64", -9007199254740991.0, V), ("int64", 1e18, X),
    ("int32", 9007199254740992.0, X), ("int32", 2147483647.0, V), ("int64", 2**53, V),
    ("float", 3.4028234663852886e38, V), ("float", 3.5e38, X), ("float", 1e-50, V),
    ("double", 1e308, V), ("int32", True, V), ("int32", "2147483648", V),
]


@pytest.mark.parametrize(("fmt", "value", "valid"), NUMERIC_CASES)
def test_kubernetes_numeric_formats(fmt: str, value: object, valid: bool) -> None:
    assert format_checker(True).conforms(value, fmt) is valid


@given(st.integers(min_value=-(2**64), max_value=2**64) | st.integers().map(float))
def test_kubernetes_integer_type_is_the_api_servers(value: int | float) -> None:
    """typeValidator takes an int64 for ``integer`` and a float64 only if it is integral
    and within +-(2^53-1); an integer beyond int64 is decoded as a float64 (above 2^53)."""
    schema = Schema(root={"type": "integer"}, kubernetes=True)
    expected = (-(2**63) <= value <= 2**63 - 1 if isinstance(value, int)
                else abs(value) <= 2**53 - 1)
    assert schema.is_valid(value) is expected
    assert Schema(root={"type": "integer"}).is_valid(value)  # JSON Schema: any integral


@pytest.mark.parametrize(("root", "value", "valid"), [
    # formats.go strips by type: integer keeps int32/int64, number float/double, an
    # untyped or string node only the listed string formats
    ({"type": "number", "format": "int64"}, 2**63, V),
    ({"type": "number", "format": "int32"}, 2**40, V),
    ({"format": "int32"}, 2**40, V),
    ({"type": "integer", "format": "float"}, 2**62, V),
    ({"type": "integer", "format": "int32"}, 2**40, X),
    ({"type": "number", "format": "float"}, 3.5e38, X),
    ({"type": "integer", "format": "uuid"}, 5, V),
    ({"type": "string", "format": "uuid"}, "x", X),
    ({"format": "uuid"}, "x", X),
    ({"type": "integer", "format": "int64"}, 9007199254740992.0, X),
    ({"type": "integer"}, 9007199254740992.0, X),
    ({"type": "integer"}, 2**63, X),
])
def test_kubernetes_formats_apply_where_the_crd_keeps_them(
        root: dict[str, object], value: object, valid: bool) -> None:
    assert Schema(root=root, kubernetes=True).is_valid(value) is valid


def test_numeric_names_are_not_normalised() -> None:
    # formats.go compares integer formats verbatim: "int-32" is dropped, not "int32"
    assert format_checker(True).conforms(2**40, "int-32")
    assert not format_checker(True).conforms(2**40, "int32")


@given(st.sampled_from(sorted(KUBERNETES_FORMATS)), st.text(max_size=30))
def test_hyphens_never_change_a_verdict(name: str, value: str) -> None:
    hyphenated = "-".join(name)
    assert kubernetes_format(hyphenated) == name
    assert check_format(hyphenated, value, kubernetes=True) == check_format(
        name, value, kubernetes=True)


@given(st.text(min_size=1, max_size=12).filter(lambda f: kubernetes_format(f) is None),
       st.text(max_size=30))
def test_formats_the_server_drops_accept_everything(fmt: str, value: str) -> None:
    assert check_format(fmt, value, kubernetes=True)


@given(st.sampled_from(sorted(KUBERNETES_FORMATS)), st.text(max_size=30))
def test_format_checker_agrees_with_check_format(name: str, value: str) -> None:
    checker = format_checker(True)
    assert checker.conforms(value, name) == check_format(name, value, kubernetes=True)


@given(st.sampled_from(["hostname", "email", "uri", "duration"]), st.text(max_size=10))
def test_a_lone_surrogate_is_judged_as_the_replacement_character(fmt: str, text: str) -> None:
    # Go's JSON decoder turns "\ud800" into U+FFFD before the format sees it
    assert check_format(fmt, text + "\ud800", kubernetes=True) == check_format(
        fmt, text + "\ufffd", kubernetes=True)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"fmt": 1, "value": "x", "kubernetes": True}, "fmt=1"),
    ({"fmt": "uuid", "value": 5, "kubernetes": True}, "value=5"),
    ({"fmt": "uuid", "value": "x", "kubernetes": "yes"}, "kubernetes='yes'"),
])
def test_misuse_is_an_invalid_argument(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        check_format(**kwargs)  # type: ignore[arg-type]
