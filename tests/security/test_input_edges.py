"""Issue 22, item 12: input edge cases are input errors (exit 2, file, path, fix).

Before, each ended in a traceback with exit 1 (the code of a real breaking change), hung,
or was silently misread: absurd numbers and keyword values, devices and FIFOs as input
files, duplicate keys, a ``required`` property ``additionalProperties: false`` forbids,
NaN in an ``enum``, a nested ``List``, duplicate CRD version names and a 1,000-type
protobuf message chain. Anything that could hang or eat memory on the old code runs in a
child process with a timeout and an address-space limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema._read import parse_documents
from compatfuzz.strategies import from_schema

resource = pytest.importorskip("resource")  # POSIX


def _limited() -> None:
    """In the child: at most 1 GiB of address space (/dev/zero reached 3.8 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _cli(*argv: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limited, check=False)


def _refused(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "fix:" in done.stderr, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


def _object(prop: dict[str, object], **extra: object) -> dict[str, object]:
    return {"type": "object", "required": ["a"], "properties": {"a": prop}, **extra}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- numbers and keyword values -------------------------------------------------------

@pytest.mark.parametrize(("literal", "message"), [
    ("1e400", "1e400 is past what a float64 holds"),
    ("NaN", "NaN is not a number JSON can hold"),
    ("Infinity", "Infinity is not a number JSON can hold"),
    ("-Infinity", "-Infinity is not a number JSON can hold"),
    ("9" * 5000, "an integer of 5,000 digits"),
    ("9" * 400, "an integer of 400 digits"),
])
def test_numbers_json_cannot_hold_are_refused_with_path_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], literal: str,
        message: str) -> None:
    path = _write(tmp_path, "n.json", '{"type": "object", "required": ["a"],\n'
                  f' "properties": {{"a": {{"type": "number", "maximum": {literal}}}}}}}')
    for argv in (["sample", str(path), "-n", "1"], ["diff", str(path), str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "at $.properties.a.maximum (line 2)" in err, err
        assert "fix: write a finite number" in err and "Traceback" not in err


@pytest.mark.parametrize("literal", [".inf", "-.Inf", ".nan", "+.INF"])
def test_yaml_numbers_json_cannot_hold_are_refused(literal: str) -> None:
    with pytest.raises(SchemaLoadError, match=r"at \$\.properties\.a\.enum\[1\] \(line 4\)"):
        parse_documents(f"type: object\nproperties:\n  a:\n    enum: [1, {literal}]\n",
                        source="e.yaml")


@pytest.mark.parametrize("literal", ["9" * 5000, "9" * 400, "1e400", "-1e400"])
def test_yaml_numbers_past_float64_are_strings_as_kubernetes_reads_them(literal: str) -> None:
    """go-yaml v2 (resolve.go) falls back to the string when ParseFloat's range error
    refuses the number, so Kubernetes reads these as strings, not as +-Inf."""
    doc = parse_documents(f"enum: [1, {literal}]\n", source="e.yaml")
    assert doc == [{"enum": [1, literal]}]


def test_nan_in_an_enum_is_refused_not_printed_as_bare_nan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "e.json", json.dumps(_object({"enum": [float("inf")]})))
    assert "Infinity" in path.read_text()  # what json.dumps writes: not JSON
    assert main(["sample", str(path), "-n", "2"]) == 2  # printed {"a": Infinity} before
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Infinity is not a number JSON can hold" in captured.err
    assert "$.properties.a.enum[0]" in captured.err


@pytest.mark.parametrize(("prop", "where", "message"), [
    ({"type": "number", "multipleOf": 0}, "a.multipleOf", "multipleOf is 0; it must be"),
    ({"type": "number", "multipleOf": -2}, "a.multipleOf", "multipleOf is -2"),
    ({"type": "string", "minLength": -5}, "a.minLength", "minLength is -5; it must be a "
     "non-negative integer"),
    ({"type": "array", "maxItems": 2.5}, "a.maxItems", "maxItems is 2.5"),
    ({"type": "number", "minimum": "1"}, "a.minimum", "minimum is '1', not a finite number"),
    ({"type": ["string", 5]}, "a.type[1]", "type 5 is not a JSON Schema type"),
    ({"type": "object", "properties": [{"b": 1}]}, "a.properties",
     "properties is a list; it must be a mapping"),
    ({"type": "object", "properties": {"b": 5}}, "a.properties.b", "properties.b is 5"),
    ({"anyOf": {"type": "string"}}, "a.anyOf", "anyOf must be a list of schemas"),
    ({"type": "object", "required": True}, "a.required", "required is True"),
])
def test_keyword_values_no_schema_may_hold_are_input_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], prop: dict[str, object],
        where: str, message: str) -> None:
    path = _write(tmp_path, "k.json", json.dumps(_object(prop)))
    assert main(["sample", str(path), "-n", "5"]) == 2  # tracebacks or bad output before
    err = capsys.readouterr().err
    assert f"k.json at $.properties.{where}: {message}" in err, err
    assert "fix:" in err and "Traceback" not in err


def test_keyword_values_in_a_crd_are_checked_with_the_crd_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crd = _crd([_version("v1", True, {"type": "integer", "multipleOf": 0})])
    path = _write(tmp_path, "crd.json", json.dumps(crd))
    assert main(["sample", str(path), "-n", "3"]) == 2
    err = capsys.readouterr().err
    assert ("$.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size"
            ".multipleOf: multipleOf is 0") in err, err


@settings(max_examples=30, deadline=None)
@given(st.data(), st.floats(min_value=1e300, max_value=1.7e308), st.booleans())
def test_huge_finite_bounds_generate_values_inside_them(data: st.DataObject, bound: float,
                                                        as_int: bool) -> None:
    """A number bound past int64 (1e300) is valid; it raised Hypothesis InvalidArgument."""
    minimum = int(bound) if as_int else bound
    value = data.draw(from_schema({"type": "number", "minimum": minimum}))
    assert value >= minimum


def test_required_that_additional_properties_false_forbids_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "r.json", json.dumps({
        "type": "object", "required": ["nmae"], "additionalProperties": False,
        "properties": {"name": {"type": "string"}}}))
    assert main(["sample", str(path), "-n", "3"]) == 2  # generated {"nmae": ...} before
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "r.json at $.required: required names 'nmae', which additionalProperties: " \
        "false forbids" in captured.err
    assert "fix: add 'nmae' to properties" in captured.err


def test_required_allowed_by_pattern_properties_still_generates(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import jsonschema

    schema = {"type": "object", "required": ["x-a"], "additionalProperties": False,
              "patternProperties": {"^x-": {"type": "integer"}}}
    path = _write(tmp_path, "p.json", json.dumps(schema))
    assert main(["sample", str(path), "-n", "5"]) == 0
    for line in capsys.readouterr().out.split("\n")[:-1]:
        jsonschema.validate(json.loads(line), schema)


# -- duplicate keys -------------------------------------------------------------------

@pytest.mark.parametrize(("name", "text", "where", "line", "first"), [
    ("d.json", '{"type": "object",\n "properties": {"a": {"type": "string",\n'
     '  "type": "integer"}}}', "$.properties.a", 3, 2),
    ("d.json", '{"a": [1, {"b": 1}, {"c": 1, "c": 2}]}', "$.a[2]", 1, 1),
    ("d.yaml", "type: object\nproperties:\n  a:\n    type: string\n    type: integer\n",
     "$.properties.a", 5, 4),
    ("d.yaml", "type: object\ntype: string\n", "$", 2, 1),
])
def test_duplicate_keys_are_refused_with_key_and_line(  # noqa: PLR0917
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str,
        where: str, line: int, first: int) -> None:
    path = _write(tmp_path, name, text)
    assert main(["sample", str(path), "-n", "1"]) == 2  # the last one silently won
    err = capsys.readouterr().err
    key = "c" if '"c"' in text else "type"
    assert f"key {key!r} is set twice in the mapping at {where}: line {line} " \
        f"(first at line {first})" in err, err


def test_yaml_merge_keys_may_still_be_overridden() -> None:
    docs = parse_documents("base: &b {type: string, a: 1}\nx:\n  <<: *b\n  type: integer\n")
    assert docs[0]["x"] == {"type": "integer", "a": 1}


# -- files that are not regular files -------------------------------------------------

def _config(tmp_path: Path) -> None:
    _write(tmp_path, "s.json", json.dumps({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}}}))
    _write(tmp_path, "conv.py", "def convert(obj, desired):\n"
           "    return {**obj, 'apiVersion': desired}\n")
    _write(tmp_path, "compatfuzz.toml", '[[api]]\nname = "t"\nkind = "T"\n'
           'group = "g.example.com"\nconvert = "conv:convert"\n'
           'schemas = { v1 = "s.json", v2 = "s.json" }\n')


@pytest.mark.parametrize("device", ["/dev/zero", pytest.param("/dev/urandom",
                                                            marks=pytest.mark.extended), "fifo"])
def test_devices_and_fifos_are_refused_before_reading(tmp_path: Path, device: str) -> None:
    """Each command, each kind of input file: exit 2 at once, no hang, no MemoryError."""
    if device == "fifo":
        os.mkfifo(tmp_path / "fifo")  # nobody writes: reading it would block forever
        device = str(tmp_path / "fifo")
    elif not Path(device).exists():
        pytest.skip(f"no {device}")
    _config(tmp_path)
    kind = "a FIFO (named pipe)" if device.endswith("fifo") else "a character device"
    runs = [
        ("sample", device, "-n", "1"),
        ("diff", device, "s.json"),
        ("diff", "s.json", "s.json", "--ignore", device),
        ("init", device, "--config", "new.toml"),
        ("fuzz", "--config", device),
        ("fuzz", "--replay", device, "--config", "compatfuzz.toml"),
    ]
    for argv in runs:
        done = _cli(*argv, cwd=tmp_path, timeout=60)
        _refused(done, f"{device}: is {kind}, not a regular file")


def test_a_file_past_the_byte_limit_is_refused(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "big.json", json.dumps({"type": "string", "description":
                                                    "x" * 5000}))
    monkeypatch.setenv("COMPATFUZZ_MAX_FILE_BYTES", "4096")
    assert main(["sample", str(path), "-n", "1"]) == 2
    assert "is larger than 4,096 bytes, the most compatfuzz reads" in capsys.readouterr().err
    monkeypatch.setenv("COMPATFUZZ_MAX_FILE_BYTES", "10000")
    assert main(["sample", str(path), "-n", "1"]) == 0


# -- Kubernetes documents ---------------------------------------------------------------

def _version(name: str, storage: bool, size: dict[str, object] | None = None
             ) -> dict[str, object]:
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": size or {"type": "integer"}}}}}}}


def _crd(versions: list[dict[str, object]]) -> dict[str, object]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"kind": "Widget", "plural": "widgets"},
                     "versions": versions}}


def test_duplicate_crd_version_names_are_refused_like_the_api_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "crd.json", json.dumps(_crd([
        _version("v1", True), _version("v2", False), _version("v1", False)])))
    for argv in (["sample", str(path), "-n", "1"], ["diff", str(path), str(path)],
                 ["init", str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "crd.json at $.spec.versions[2].name: spec.versions: Invalid value: must " \
            "contain unique version names: 'v1' is spec.versions[0] and spec.versions[2]" \
            in err, err


def test_a_nested_list_is_flattened_not_read_as_a_schema(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crd = _crd([_version("v1", True)])
    nested = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "List", "items": [crd]}]}
    path = _write(tmp_path, "list.json", json.dumps(nested))
    assert main(["sample", str(path), "-n", "5"]) == 0
    for line in capsys.readouterr().out.split("\n")[:-1]:  # arrays before: "items" as a schema
        obj = json.loads(line)
        assert obj["kind"] == "Widget" and obj["apiVersion"] == "example.com/v1"
    objects = {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1",
               "kind": "List", "items": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}]}
    path.write_text(json.dumps(objects))
    assert main(["sample", str(path), "-n", "1"]) == 2
    assert "this is a List (v1) object, not a CRD or schema" in capsys.readouterr().err


# -- protobuf -------------------------------------------------------------------------

def _chain(n: int) -> str:
    lines = ['syntax = "proto3";', "package deep;"]
    for i in range(n):
        field = f"M{i + 1} next = 1;" if i + 1 < n else "string leaf = 1;"
        lines.append(f"message M{i} {{ {field} }}")
    return "\n".join(lines) + "\n"


def test_a_1000_type_protobuf_chain_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    _write(tmp_path, "deep.proto", _chain(1000))
    _write(tmp_path, "deep2.proto", _chain(1000))
    done = _cli("sample", "deep.proto#deep.M0", "-n", "1", cwd=tmp_path, timeout=120)
    _refused(done, "deep.proto: message deep.M0 starts a chain of 1,000 message types",
             "deep.M998 -> deep.M999); at most 100 are supported")
    done = _cli("diff", "deep.proto", "deep2.proto", cwd=tmp_path, timeout=120)
    _refused(done, "chain of 1,000 message types")


def test_a_100_type_chain_and_recursive_messages_still_load(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    from compatfuzz.protobuf import load_protos

    _write(tmp_path, "ok.proto", _chain(100) + "message Node { repeated Node kids = 1; "
           "M1 head = 2; }\n")  # Node -> M1 ... M99: 100 types
    schema = load_protos(tmp_path / "ok.proto")
    assert "deep.Node" in schema.message_names()
