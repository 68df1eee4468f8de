"""``compatfuzz sample``: N valid objects as JSON lines, reproducible with --seed, and a
clear exit 2 (file, JSON path, fix) for every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compatfuzz.cli import main
from compatfuzz.schema import load_schema

REPO = Path(__file__).resolve().parents[1]
CRD = REPO / "examples" / "frobber" / "crd.yaml"
OPENAPI = REPO / "tests" / "schema" / "data" / "orders.openapi.yaml"


def _lines(capsys: pytest.CaptureFixture[str]) -> list[object]:
    # JSON lines end at "\n" only: str.splitlines() would also split at U+2028 or U+001C,
    # which generated strings may hold unescaped (ensure_ascii=False).
    return [json.loads(line) for line in capsys.readouterr().out.split("\n") if line]


# Parametrized, not @given: the command runs a Hypothesis test of its own inside.
@pytest.mark.parametrize(("version", "n", "seed"), [("v6", 1, 0), ("v6", 6, 7),
                                                   ("v7beta1", 4, 2**31)])
def test_prints_n_valid_objects_of_the_chosen_version_reproducibly(
        capsys: pytest.CaptureFixture[str], version: str, n: int, seed: int) -> None:
    argv = ["sample", str(CRD), "--version", version, "-n", str(n), "--seed", str(seed)]
    assert main(argv) == 0
    objects = _lines(capsys)
    assert len(objects) == n
    schema = load_schema(CRD, version=version)
    for obj in objects:
        assert schema.validator.is_valid(obj), obj
        assert isinstance(obj, dict) and obj["apiVersion"] == f"frobber.example.com/{version}"
    assert main(argv) == 0
    assert _lines(capsys) == objects  # the same seed, the same sample


def test_definition_picks_one_schema_of_an_openapi_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", str(OPENAPI), "--definition", "Order", "-n", "5"]) == 0
    schema = load_schema(OPENAPI, definition="Order")
    assert all(schema.validator.is_valid(o) for o in _lines(capsys))


@pytest.mark.parametrize(("content", "args", "needle"), [
    (None, [], "not found"),
    ("a: [1, 2\n", [], "fix:"),  # malformed YAML
    ('{"$ref": "other.json"}', [], "other.json"),  # unresolvable $ref
    ('{"$ref": "#"}', [], "$ref cycle that never reaches a schema"),
    ('{"type": "string", "pattern": "^a$", "minLength": 3}', [], "no value satisfies"),
    ('{"type": "string", "pattern": "[a-"}', [], "not a valid regular expression"),
    (None, ["--version", "v9"], "v9"),
])
def test_bad_input_exits_2_with_a_reason_and_no_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None,
        args: list[str], needle: str) -> None:
    if content is None:
        path = tmp_path / "missing.yaml" if not args else CRD
    else:
        path = tmp_path / "schema.yaml"
        path.write_text(content)
    assert main(["sample", str(path), "-n", "2", *args]) == 2
    captured = capsys.readouterr()
    assert needle in captured.err, captured.err
    assert "Traceback" not in captured.err + captured.out


# Issue 10, item 4: one schema spec syntax for every command.
SPECS = ["k8s:apps/v1/Deployment", "kubernetes:1.25:apps/v1:Deployment",
         "k8s:1.25:apps/v1:Deployment", f"{OPENAPI}#Order", f"{CRD}@v6",
         f"{CRD}#Frobber@v7beta1"]


@pytest.mark.parametrize("spec", SPECS)
def test_sample_and_diff_take_the_same_schema_names(
        capsys: pytest.CaptureFixture[str], spec: str) -> None:
    assert main(["sample", spec, "-n", "2", "--seed", "1"]) == 0
    assert len(_lines(capsys)) == 2
    assert main(["diff", spec, spec, "--no-dynamic"]) == 0
    assert "0 breaking" in capsys.readouterr().out


@pytest.mark.parametrize(("spec", "needle", "commands"), [
    # diff compares a whole OpenAPI document; sample needs one schema
    (f"{OPENAPI}", f"fix: append #NAME to the file name ({OPENAPI}#NAME)", ("sample",)),
    (f"{CRD}@v9", f"fix: append @VERSION to the file name ({CRD}@VERSION), one of: v6, v7beta1",
     ("sample", "diff")),
    ("k8s:apps:Deployment", "fix: write k8s:[RELEASE:]API_VERSION:KIND", ("sample", "diff")),
])
def test_spec_errors_speak_spec_syntax_not_python_arguments(
        capsys: pytest.CaptureFixture[str], spec: str, needle: str,
        commands: tuple[str, ...]) -> None:
    for command in (["sample", spec], ["diff", spec, spec, "--no-dynamic"]):
        if command[0] not in commands:
            continue
        assert main(command) == 2
        err = capsys.readouterr().err
        assert needle in err, (command, err)
        assert "version=" not in err and "definition=" not in err and "not found" not in err


@pytest.mark.parametrize("argv", [
    ["sample", "k8s:apps/v1:Deployment", "-n", "100000", "--seed", "1"],
    ["diff", "--list-rules"],
])
def test_a_reader_that_stops_early_gets_no_traceback(argv: list[str]) -> None:
    """``compatfuzz sample ... | head -1``: the command stops quietly with exit 0 (issue 17)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "compatfuzz.cli", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0, err
    assert first.strip() and "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_kubernetes_object_is_not_taken_for_a_schema(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    obj = tmp_path / "es.yaml"
    obj.write_text("apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\n"
                   "metadata: {name: x}\nspec: {refreshInterval: 1h}\n")
    for argv in (["sample", str(obj)], ["diff", str(obj), str(obj)],
                 ["init", str(obj), "--config", str(tmp_path / "c.toml")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "this is an ExternalSecret (external-secrets.io/v1beta1) object, not a CRD or " \
               "schema" in err and "fix:" in err, err
    assert not (tmp_path / "c.toml").exists()
    # a schema that describes objects with apiVersion and kind is still a schema
    schema = tmp_path / "s.yaml"
    schema.write_text("apiVersion: v1\nkind: Widget\ntype: object\n"
                      "properties: {a: {type: string}}\n")
    assert main(["sample", str(schema), "-n", "1"]) == 0
