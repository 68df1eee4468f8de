"""Issue 19, item 4: YAML is read as Kubernetes reads it.

Kubernetes (kubectl, kube-apiserver) turns YAML into JSON with ``sigs.k8s.io/yaml``
``YAMLToJSON`` (v1.6.0 in Kubernetes 1.37), which decodes with go-yaml v2
(``go.yaml.in/yaml/v2`` v2.4.4) and then ``encoding/json``. ``EXPECTED`` below is that
table, derived from go-yaml v2's ``resolve.go`` (``resolveMapList``, ParseInt base 0 on the
value with "_" removed, ``yamlStyleFloat``, ParseFloat for a leading "."), its
``decode.go`` (a timestamp decoded into ``interface{}`` is the string) and ``yaml.go``
``convertToJSONableObject`` (keys become strings), then json.Marshal (an integral float64
below 1e21 is written without a point). Each row was checked against the compiled
upstream code (``conformance/yaml``, ``conformance/test_yaml_conformance.py``).

PyYAML's 1.1 SafeLoader, used before, refused ``=`` (its ``!!value`` tag: ``compatfuzz
diff`` exited 2 on prometheus-operator's CRDs), read ``1:20`` as 80, ``2024-01-01`` as a
date, ``0o17`` and ``1e3`` as strings and ``y``/``n`` as strings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema import load_crds
from compatfuzz.schema._read import parse_documents

#: plain scalar -> the JSON value Kubernetes reads (json.loads of YAMLToJSON's output).
EXPECTED: dict[str, Any] = {
    # not a tag, not a number: strings (PyYAML 1.1: "=" is !!value, refused)
    "=": "=", "=~": "=~", "<<": "<<", "1:20": "1:20", "-1:20": "-1:20",
    "190:20:30": "190:20:30", "0x1p3": "0x1p3", "0b2": "0b2", "0o8": "0o8", "0x": "0x",
    "_1": "_1", "._5": "._5", "inf": "inf", "+inf": "+inf", "NaN": "NaN",
    "Infinity": "Infinity", "-.nan": "-.nan", "yES": "yES", "oN": "oN", "nULL": "nULL",
    "o": "o", "tRUE": "tRUE",
    # timestamps: decode.go keeps them strings when decoding into interface{}
    "2024-01-01": "2024-01-01", "2024-1-1": "2024-1-1",
    "2001-12-14t21:59:43.10-05:00": "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5": "2001-12-14 21:59:43.10 -5",
    # resolveMapList: three spellings each, y/n included
    "y": True, "Y": True, "yes": True, "Yes": True, "YES": True, "on": True, "On": True,
    "ON": True, "true": True, "True": True, "TRUE": True,
    "n": False, "N": False, "no": False, "No": False, "NO": False, "off": False,
    "Off": False, "OFF": False, "false": False, "False": False, "FALSE": False,
    "~": None, "null": None, "Null": None, "NULL": None,
    # strconv.ParseInt(s without "_", 0, 64): Go literal prefixes, a leading 0 is octal
    "0": 0, "+1": 1, "-1": -1, "0o17": 15, "0O17": 15, "017": 15, "-017": -15,
    "0x1F": 31, "0X1f": 31, "+0x1F": 31, "0b101": 5, "-0b101": -5, "1_000": 1000,
    "0_x1F": 31, "1__0": 10, "1_": 1,
    "9223372036854775807": 9223372036854775807,
    "18446744073709551615": 18446744073709551615,  # ParseUint
    # yamlStyleFloat, then json.Marshal: integral floats below 1e21 have no point
    "08": 8, "09.5": 9.5, "1e3": 1000, "1.0e+3": 1000, "1.0": 1, "1.": 1, "-0.0": 0,
    ".5": 0.5, ".5_0": 0.5, ".5e3": 500, "+.5": 0.5, "1_000.5": 1000.5, "0.1": 0.1,
    "1e20": 100000000000000000000, "1e21": 1e21, "1e-7": 1e-7, "1e-400": 0,
    "18446744073709551616": 18446744073709552000,  # past uint64: a float64
    "+18446744073709551615": 18446744073709552000,  # ParseUint takes no sign
    # ParseFloat's range error: the string, not +Inf
    "1e400": "1e400", "9" * 400: "9" * 400,
}
#: json.Marshal refuses these: "json: unsupported value: +Inf" / "NaN".
REFUSED = [".inf", ".Inf", ".INF", "+.inf", "-.inf", "-.Inf", ".nan", ".NaN", ".NAN"]


def _read(text: str) -> Any:
    return parse_documents(text, source="s.yaml")[0]


@given(st.lists(st.sampled_from(sorted(EXPECTED)), min_size=1, max_size=6))
def test_plain_scalars_read_as_kubernetes_reads_them(words: list[str]) -> None:
    doc = _read("v:\n" + "".join(f"- {w}\n" for w in words))
    assert json.dumps(doc["v"]) == json.dumps([EXPECTED[w] for w in words])


@given(st.sampled_from(sorted(EXPECTED)), st.sampled_from(["'", '"']))
def test_quoted_scalars_are_always_strings(word: str, quote: str) -> None:
    assert _read(f"v: {quote}{word}{quote}\n") == {"v": word}


@pytest.mark.parametrize("word", REFUSED)
def test_infinities_and_nan_are_refused_with_the_path(word: str) -> None:
    with pytest.raises(SchemaLoadError, match=r"at \$\.a\.b\[1\] \(line 2\)"):
        _read(f"a:\n  b: [1, {word}]\n")


@pytest.mark.parametrize(("key", "json_key"), [
    ("yes", "true"), ("on", "true"), ("n", "false"), ("1", "1"), ("0x1F", "31"),
    ("1.0", "1"), ("1e6", "1e+06"), ("0.1", "0.1"), ("1.1", "1.1"), ("16777217", "16777217"),
    ("1e3", "1000"), (".inf", ".inf"), ("-.Inf", "-.inf"), (".nan", ".nan"),
    ("2024-01-01", "2024-01-01"), ("=", "="),
])
def test_keys_become_json_strings_as_yaml_go_spells_them(key: str, json_key: str) -> None:
    """sigs.k8s.io/yaml yaml.go convertToJSONableObject: bools, ints and float64 keys
    (strconv.FormatFloat 'g', -1, 32) become strings, so ``on:`` is the key "true"."""
    assert _read(f"{key}: x\n") == {json_key: "x"}


@pytest.mark.parametrize("key", ["~", "null", "18446744073709551615"])
def test_keys_kubernetes_cannot_make_strings_are_refused(key: str) -> None:
    with pytest.raises(SchemaLoadError, match="cannot turn into a JSON key") as err:
        _read(f"a:\n  {key}: x\n")
    assert "at $.a has the key" in str(err.value) and "(line 2)" in str(err.value)
    assert "quote the key" in str(err.value)


@pytest.mark.parametrize(("first", "second"), [
    ("yes", "Yes"), ("'true'", "on"), ("1", "0x1"), ("1", "1.0"), ("1e6", "'1e+06'")])
def test_two_spellings_of_one_json_key_are_refused(first: str, second: str) -> None:
    """YAMLToJSONStrict refuses ``yes`` and ``Yes`` ('key true already set in map'); for
    ``1`` and ``1.0`` YAMLToJSON keeps either, at random: both are errors here."""
    with pytest.raises(SchemaLoadError, match=r"set twice in the mapping at \$\.a: line 3 "
                       r"\(first at line 2\), both the JSON key"):
        _read(f"a:\n  {first}: 1\n  {second}: 2\n")


def test_keys_python_would_merge_stay_apart() -> None:
    """``1`` and ``true`` are one Python dict key (1 == True), two JSON keys in Go."""
    assert _read("a:\n  1: p\n  true: q\n  0.0: r\n  false: s\n") == {
        "a": {"1": "p", "true": "q", "0": "r", "false": "s"}}


def test_merge_keys_and_guards_still_apply() -> None:
    assert _read("a: &x {k: 1}\nb:\n  <<: *x\n  j: 2\n") == {"a": {"k": 1},
                                                               "b": {"k": 1, "j": 2}}
    pairs = zip("abcdef", "bcdefg", strict=True)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in pairs)
    with pytest.raises(SchemaLoadError, match="alias bomb"):
        _read(bomb)
    with pytest.raises(SchemaLoadError, match="nested more than 200 levels"):
        _read("a: " + "[" * 300 + "]" * 300 + "\n")


# -- the prometheus-operator case: an enum with a plain "=" ----------------------------

def _crd(operators: str, extra: str = "") -> str:
    """A CRD shaped like prometheus-operator's AlertmanagerConfig matcher (its
    ``matchType`` enum is written ``- '!='``, ``- =``, ``- =~``, ``- '!~'``)."""
    return f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: matchers.example.com
spec:
  group: example.com
  names: {{kind: Matcher, plural: matchers, singular: matcher, listKind: MatcherList}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              matchType:
                type: string
                enum:
{operators}{extra}"""


OPERATORS = "".join(f"                - {op}\n" for op in ("'!='", "=", "=~", "'!~'"))


def test_a_crd_with_a_plain_equals_in_an_enum_loads(tmp_path: Path) -> None:
    path = tmp_path / "crd.yaml"
    path.write_text(_crd(OPERATORS))
    (crd,) = load_crds(path)  # refused before: PyYAML has no constructor for '!!value'
    schema = crd.version("v1").schema
    assert schema is not None
    assert schema.root["properties"]["spec"]["properties"]["matchType"]["enum"] == [
        "!=", "=", "=~", "!~"]


def test_diff_of_two_crds_with_a_plain_equals_gives_a_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, same, narrower = (tmp_path / "old.yaml", tmp_path / "same.yaml",
                           tmp_path / "new.yaml")
    old.write_text(_crd(OPERATORS))
    same.write_text(_crd(OPERATORS))
    narrower.write_text(_crd("                - =\n                - =~\n"))
    assert main(["diff", str(old), str(same)]) == 0  # exit 2 before
    capsys.readouterr()
    assert main(["diff", str(old), str(narrower)]) == 1  # '!=' and '!~' removed
    out = capsys.readouterr().out
    assert "matchType" in out
