"""``compatfuzz diff``: exit codes, output formats, ignore files and severity overrides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.cli import main


def _write(tmp_path: Path, name: str, doc: Any) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def _schema(maximum: int, enum: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 0, "maximum": maximum},
        "mode": {"type": "string", "enum": enum}}}}}


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str, str]:
    old = _write(tmp_path, "old.json", _schema(10, ["a", "b"]))
    new = _write(tmp_path, "new.json", _schema(5, ["a", "b"]))
    same = _write(tmp_path, "same.json", _schema(10, ["a", "b"]))
    return old, new, same


def test_compatible_exits_0(pair: tuple[str, str, str],
                            capsys: pytest.CaptureFixture[str]) -> None:
    old, _, same = pair
    assert main(["diff", old, same]) == 0
    assert "0 findings, 0 breaking" in capsys.readouterr().out


def test_breaking_exits_1_and_shows_witness(pair: tuple[str, str, str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    old, new, _ = pair
    assert main(["diff", old, new, "--budget", "30", "--whole-budget", "10"]) == 1
    out = capsys.readouterr().out
    assert "bound-tightened" in out and "spec.replicas [maximum]" in out
    # the smallest witness: one past the new bound (issue 10: not the old bound)
    assert "witness (request) at spec.replicas: 6 -> rejected by NEW" in out


def test_json_format(pair: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    old, new, _ = pair
    assert main(["diff", old, new, "--format", "json", "--whole-budget", "0"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == 1 and doc["breaking"] == 1
    [f] = doc["findings"]
    assert (f["rule"], f["path"], f["old"], f["new"], f["breaks"]) == (
        "bound-tightened", "spec.replicas", 10, 5, ["request"])
    assert f["status"] == "confirmed" and f["witness"]["value"] == 6


def test_github_format(pair: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    old, new, _ = pair
    assert main(["diff", old, new, "--format", "github", "--no-dynamic"]) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"::error file={new},line=1,title=compatfuzz bound-tightened::")
    assert "spec.replicas" in line and "(old: 10, new: 5)" in line


def test_ignore_file_accepts_a_break(pair: tuple[str, str, str], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    old, new, _ = pair
    ignore = tmp_path / "ignore.yaml"
    ignore.write_text("ignore:\n  - rule: bound-tightened\n    path: spec.*\n"
                      "    reason: replicas above 5 never worked\n")
    assert main(["diff", old, new, "--ignore", str(ignore), "--no-dynamic"]) == 0
    out = capsys.readouterr().out
    assert "IGNORED" in out and "replicas above 5 never worked" in out


def test_severity_override(pair: tuple[str, str, str]) -> None:
    old, new, _ = pair
    assert main(["diff", old, new, "--no-dynamic", "--severity",
                 "bound-tightened=warning"]) == 0


def test_direction_response_ignores_request_breaks(pair: tuple[str, str, str]) -> None:
    old, new, _ = pair
    assert main(["diff", old, new, "--no-dynamic", "--direction", "response"]) == 0
    # NEW -> OLD raises the maximum: a loosening, which warns unless the policy asks
    assert main(["diff", new, old, "--no-dynamic", "--direction", "response"]) == 0
    assert main(["diff", new, old, "--no-dynamic", "--direction", "response",
                 "--policy", "kubernetes-strict"]) == 1


@pytest.mark.parametrize(("content", "expected"), [
    ("ignore:\n  - rule: bound-tightend\n    path: '*'\n    reason: x\n",
     "did you mean 'bound-tightened'"),
    ("ignore:\n  - rule: bound-tightened\n    path: '*'\n", "$.ignore[0]: ignore entry has "
     "no 'reason'"),
    ("severity:\n  enum-value-added: loud\n", "unknown severity 'loud'"),
    ("ignores: []\n", "unknown top-level key"),
])
def test_bad_ignore_file_is_a_usage_error(pair: tuple[str, str, str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str], content: str,
                                          expected: str) -> None:
    old, new, _ = pair
    ignore = tmp_path / "bad.yaml"
    ignore.write_text(content)
    assert main(["diff", old, new, "--ignore", str(ignore), "--no-dynamic"]) == 2
    err = capsys.readouterr().err
    assert str(ignore) in err and expected in err


def test_usage_errors_exit_2(pair: tuple[str, str, str], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    old, _, _ = pair
    assert main(["diff", old, str(tmp_path / "missing.json")]) == 2
    assert main(["diff", old]) == 2
    assert main(["diff", old, old, "--budget", "-1"]) == 2
    assert "budget=-1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["diff", old, old, "--direction", "sideways"])
    assert exc.value.code == 2


def test_list_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--list-rules"]) == 0
    out = capsys.readouterr().out
    assert "enum-value-added" in out and "unhandled" in out


_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: widgets.example.com}}
spec:
  group: example.com
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {{type: string}}
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
              size: {{type: string{extra}}}
              color: {{type: string}}
"""


def test_two_crd_files_and_two_served_versions(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text(_CRD.format(extra=""))
    new.write_text(_CRD.format(extra=", enum: [S, M]"))
    assert main(["diff", str(old), str(new), "--format", "json", "--budget", "20",
                 "--whole-budget", "10"]) == 1
    doc = json.loads(capsys.readouterr().out)
    got = {(f["version"], f["rule"], f["path"], f["status"]) for f in doc["findings"]}
    assert ("v1", "enum-introduced", "spec.size", "confirmed") in got
    # v1alpha1 -> v1 inside one CRD: adding an optional field is fine under pruning
    assert main(["diff", f"{old}@v1alpha1", f"{old}@v1", "--no-dynamic"]) == 0
    assert main(["diff", f"{old}@v1alpha1", f"{old}@v9"]) == 2
    assert "has no version 'v9'" in capsys.readouterr().err


def test_ignore_paths_match_brackets_literally(tmp_path: Path) -> None:
    from compatfuzz.compat import diff, load_policy

    ignore = tmp_path / "ignore.yaml"
    ignore.write_text("ignore:\n  - rule: bound-tightened\n    path: 'spec.xs[*].n'\n"
                      "    reason: r\n  - rule: '*'\n    path: 'status.*'\n    reason: r\n")
    item = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}}

    def doc(maximum: int) -> dict[str, Any]:
        it = {**item, "properties": {"n": {"type": "integer", "maximum": maximum}}}
        return {"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"xs": {"type": "array", "items": it}}},
            "status": {"type": "object", "properties": {"n": {"type": "integer",
                                                              "maximum": maximum}}}}}

    report = diff(doc(9), doc(3), policy=load_policy(ignore), dynamic=False,
                  direction="both")
    assert {(f.path, f.ignored) for f in report.findings} == {
        ("spec.xs[*].n", True), ("status.n", True)}
    assert report.exit_code == 0


def _openapi(order_max: int) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},
            "components": {"schemas": {
                "Order": {"type": "object", "properties": {
                    "qty": {"type": "integer", "maximum": order_max}}},
                "Customer": {"type": "object", "properties": {"name": {"type": "string"}}},
            }}}


def test_hash_picks_one_definition_of_a_multi_schema_document(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.json", _openapi(10))
    new = _write(tmp_path, "new.json", _openapi(5))
    # One side picked, the other whole: a usage error that says so.
    assert main(["diff", old, f"{new}#Order"]) == 2
    assert "name a definition on both sides with FILE#NAME" in capsys.readouterr().err
    assert main(["diff", f"{old}#Order", f"{new}#/components/schemas/Order"]) == 1
    out = capsys.readouterr().out
    assert "bound-tightened" in out and "qty" in out
    assert main(["diff", f"{old}#Customer", f"{new}#Customer"]) == 0
    capsys.readouterr()
    assert main(["diff", f"{old}#Nope", new]) == 2
    assert "no definition 'Nope'" in capsys.readouterr().err


@pytest.mark.parametrize(("old_max", "new_max"), [(100, 50), (90, 45), (60, 41)])
def test_a_tightened_max_length_is_proved_by_the_shortest_string_printed_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old_max: int,
        new_max: int) -> None:
    """Issue 10, item 9: 100 -> 50 is proved by 51 characters, shown once."""
    def schema(n: int) -> dict[str, Any]:
        return {"type": "object", "properties": {"name": {"type": "string", "maxLength": n}}}

    old = _write(tmp_path, "old.json", schema(old_max))
    new = _write(tmp_path, "new.json", schema(new_max))
    assert main(["diff", old, new, "--format", "json"]) == 1
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["witness"]["value"] == "a" * (new_max + 1)
    assert main(["diff", old, new]) == 1
    out = capsys.readouterr().out
    assert out.count("a" * (new_max + 1)) == 1
    assert f"the value ({new_max + 1} characters) is too long" in out


@pytest.mark.parametrize(("new_extra", "because"), [
    ({}, "NEW's object is open, so it accepts any value under 'b' and may return one that "
         "old clients reject (they expect integer)"),
    ({"additionalProperties": False}, "NEW rejects objects that still set it"),
])
def test_a_removed_field_says_why_it_breaks(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str],
                                            new_extra: dict[str, Any], because: str) -> None:
    old = _write(tmp_path, "old.json", {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "integer"}}})
    new = _write(tmp_path, "new.json", {"type": "object", "properties": {
        "a": {"type": "string"}}, **new_extra})
    assert main(["diff", old, new, "--no-dynamic"]) == 1
    assert f"field 'b' removed: {because}" in capsys.readouterr().out


OPENAPI_YAML = """\
openapi: 3.0.3
info: {{title: shop, version: "1"}}
paths: {{}}
components:
  schemas:
    Order:
      type: object
      properties:
        qty:
          type: integer
          maximum: {maximum}
        note:
          type: string
"""


def _openapi_yaml(tmp_path: Path, name: str, maximum: int) -> Path:
    path = tmp_path / name
    path.write_text(OPENAPI_YAML.format(maximum=maximum))
    return path


def test_github_annotations_carry_the_line_of_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10, item 9: ``line=`` from the JSON path mapped back to the YAML."""
    old = _openapi_yaml(tmp_path, "old.yaml", 10)
    new = _openapi_yaml(tmp_path, "new.yaml", 5)
    assert main(["diff", f"{old}#Order", f"{new}#Order", "--format", "github",
                 "--no-dynamic"]) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"::error file={new},line=11,title=compatfuzz bound-tightened::")
    assert new.read_text().splitlines()[10].strip() == "maximum: 5"


def test_sarif_for_code_scanning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 10, item 9: SARIF 2.1.0 with rules, levels, a relative URI and the line."""
    monkeypatch.chdir(tmp_path)
    _openapi_yaml(tmp_path, "old.yaml", 10)
    _openapi_yaml(tmp_path, "new.yaml", 5)
    assert main(["diff", "old.yaml#Order", "new.yaml#Order", "--format", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["bound-tightened"]
    (result,) = run["results"]
    assert result["ruleId"] == "bound-tightened" and result["level"] == "error"
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "new.yaml"}, "region": {"startLine": 11}}
    assert result["properties"]["witness"]["value"] == 6
    assert "qty: maximum 10 -> 5" in result["message"]["text"]


def test_a_whole_openapi_document_compares_every_component_schema(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 10, item 9: no #NAME diffs every component schema, paired by name."""
    old_doc = _openapi(10)
    old_doc["components"]["schemas"]["Gone"] = {"type": "string"}
    new_doc = _openapi(5)
    new_doc["components"]["schemas"]["Fresh"] = {"type": "integer"}
    old = _write(tmp_path, "old.json", old_doc)
    new = _write(tmp_path, "new.json", new_doc)
    assert main(["diff", old, new, "--format", "json", "-v"]) == 1
    found = {(f["rule"], f["version"], f["path"])
             for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found == {("bound-tightened", "Order", "qty"), ("definition-removed", "Gone", "$"),
                     ("definition-added", "Fresh", "$")}
    assert main(["diff", old, old]) == 0


def test_the_summary_says_what_it_did_not_show(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'5 findings' over 3 blocks must say where the other two went (issue 17, item 7)."""
    old = tmp_path / "old.json"
    new = tmp_path / "new.json"
    # docs/compat.md's example: a pattern respelled and an output enum narrowed are info
    old.write_text(json.dumps({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"name": {"pattern": "^[a-z]+$"}}},
        "status": {"type": "object", "properties": {"phase": {"enum": ["P", "R", "F"]}}}}}))
    new.write_text(json.dumps({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"name": {"pattern": "^[a-z][a-z]*$"}}},
        "status": {"type": "object", "properties": {"phase": {"enum": ["P", "R"]}}}}}))

    def blocks(out: str) -> int:
        return sum(1 for line in out.splitlines() if line.split(" ")[0] in (
            "ERROR", "WARNING", "INFO", "IGNORED"))

    main(["diff", str(old), str(new)])
    out = capsys.readouterr().out
    total = int(out.splitlines()[-1].split()[0])
    hidden = total - blocks(out)
    assert hidden > 0, out  # the case must have an info finding to be a test
    assert out.splitlines()[-1].endswith(f"; {hidden} info not shown (-v shows them)"), out
    main(["diff", str(old), str(new), "-v"])
    out = capsys.readouterr().out
    assert "not shown" not in out and blocks(out) == total, out


def test_an_ignore_entry_that_matches_nothing_is_reported_stale(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`path: spec.replica` for spec.replicas used to be silent (issue 17 audit)."""
    old = tmp_path / "old.json"
    new = tmp_path / "new.json"
    old.write_text(json.dumps({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"replicas": {"type": "integer", "maximum": 10}}}}}))
    new.write_text(json.dumps({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"replicas": {"type": "integer", "maximum": 5}}}}}))
    ignore = tmp_path / "ignore.yaml"
    ignore.write_text("ignore:\n"
                      "  - {rule: bound-tightened, path: spec.replica, reason: typo}\n"
                      "  - {rule: bound-tightened, path: spec.replicas, reason: agreed}\n")
    assert main(["diff", str(old), str(new), "--ignore", str(ignore), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "ignore[0] (rule bound-tightened, path spec.replica) matched no finding" in (
        captured.err)
    assert "ignore[1]" not in captured.err
    assert json.loads(captured.out)["stale_ignores"] == [
        {"index": 0, "rule": "bound-tightened", "path": "spec.replica", "reason": "typo"}]
