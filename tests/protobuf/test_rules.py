"""Every rule of Envoy's versioning policy on small trees, each witness re-checked here.

The witness check below is independent of the engine: it feeds the witness to OLD and NEW
with ``json_format`` / ``FromString`` directly.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import any_pb2, json_format

from compatfuzz.cli import main
from compatfuzz.compat import Finding, Severity, Side, Status
from compatfuzz.protobuf import PROTO_RULES, ProtoSchema, by_name, by_number, diff_protos
from compatfuzz.protobuf import violations as pgv_violations
from tests.protobuf._trees import HEADER, api, compile_text, write_tree

BASE = """
enum Mode { MODE_UNSPECIFIED = 0; FAST = 1; SLOW = 2; }
message Cluster {
  string name = 1;
  uint32 port = 2 [(validate.rules).uint32 = {lte: 65535}];
  int32 weight = 3;
  Mode mode = 4;
  string host = 5;
  string addr = 6;
  optional int32 retries = 7;
  repeated string tags = 8 [(validate.rules).repeated = {max_items: 5}];
  oneof target { string ip = 9; string dns = 10; }
}
message Other { int32 x = 1; }
service Discovery { rpc Fetch(Cluster) returns (Other); }
"""


def _edit(*pairs: tuple[str, str]) -> str:
    body = BASE
    for old, new in pairs:
        assert old in body, old
        body = body.replace(old, new)
    return body


CASES: list[tuple[str, str, str, bool]] = [
    # (rule, new body, path, witness expected)
    ("proto-field-removed", _edit(("  int32 weight = 3;\n", "")),
     "demo.v1.Cluster.weight", True),
    ("proto-field-renamed", _edit(("int32 weight = 3", "int32 load = 3")),
     "demo.v1.Cluster.weight", True),
    ("proto-field-json-name-changed",
     _edit(("int32 weight = 3;", 'int32 weight = 3 [json_name = "w"];')),
     "demo.v1.Cluster.weight", True),
    ("proto-field-renumbered", _edit(("int32 weight = 3;", "int32 weight = 30;")),
     "demo.v1.Cluster.weight", True),
    ("proto-field-type-changed", _edit(("int32 weight = 3", "sint32 weight = 3")),
     "demo.v1.Cluster.weight", True),
    ("proto-field-type-changed", _edit(("int32 weight = 3", "string weight = 3")),
     "demo.v1.Cluster.weight", True),
    ("proto-field-singular-to-repeated",
     _edit(("int32 weight = 3", "repeated int32 weight = 3")), "demo.v1.Cluster.weight", True),
    ("proto-field-repeated-to-singular",
     _edit(("repeated string tags = 8 [(validate.rules).repeated = {max_items: 5}]",
            "string tags = 8")), "demo.v1.Cluster.tags", True),
    ("proto-field-presence-changed", _edit(("optional int32 retries", "int32 retries")),
     "demo.v1.Cluster.retries", True),
    ("proto-field-wrapped-in-oneof",
     _edit(("  string host = 5;\n  string addr = 6;\n",
            "  oneof where { string host = 5; string addr = 6; }\n")),
     "demo.v1.Cluster.host", True),
    ("proto-field-wrapped-in-oneof",  # alone in a new oneof: no data-level witness
     _edit(("  string host = 5;\n", "  oneof where { string host = 5; }\n")),
     "demo.v1.Cluster.host", False),
    ("proto-field-oneof-changed",
     _edit(("  oneof target { string ip = 9; string dns = 10; }\n",
            "  string ip = 9;\n  oneof target { string dns = 10; }\n")),
     "demo.v1.Cluster.ip", True),  # an explicit ip: "" is dropped once ip has no presence
    ("proto-enum-value-removed", _edit((" SLOW = 2;", "")), "demo.v1.Mode.SLOW", True),
    ("proto-enum-value-renamed", _edit(("FAST = 1", "QUICK = 1")), "demo.v1.Mode.FAST", True),
    ("proto-enum-value-renumbered", _edit(("SLOW = 2", "SLOW = 3")),
     "demo.v1.Mode.SLOW", True),
    ("proto-message-removed", _edit(("message Other { int32 x = 1; }\n", ""),
                                    ("returns (Other)", "returns (Cluster)")),
     "demo.v1.Other", True),
    ("proto-validate-tightened", _edit(("lte: 65535", "lte: 1024")),
     "demo.v1.Cluster.port", True),
    ("proto-validate-tightened",
     _edit(("string name = 1;", "string name = 1 [(validate.rules).string.min_len = 1];")),
     "demo.v1.Cluster.name", True),
    ("proto-validate-tightened", _edit(("max_items: 5", "max_items: 5, unique: true")),
     "demo.v1.Cluster.tags", True),
    # past the sizes the generator reaches on its own: found by the near-bound search
    ("proto-validate-tightened",
     _edit(("string name = 1;", "string name = 1 [(validate.rules).string.max_len = 60];")),
     "demo.v1.Cluster.name", True),
    ("proto-validate-tightened", _edit(("max_items: 5", "max_items: 4")),
     "demo.v1.Cluster.tags", True),
    ("proto-enum-removed", _edit(("  Mode mode = 4;\n", ""),
                                 ("enum Mode { MODE_UNSPECIFIED = 0; FAST = 1; SLOW = 2; }\n",
                                  "")), "demo.v1.Mode", False),
    ("proto-rpc-removed", _edit(("rpc Fetch(Cluster) returns (Other); ", "")),
     "demo.v1.Discovery.Fetch", False),
    ("proto-rpc-changed", _edit(("returns (Other)", "returns (Cluster)")),
     "demo.v1.Discovery.Fetch", False),
    ("proto-service-removed", _edit(("service Discovery { rpc Fetch(Cluster) returns (Other); }",
                                     "")), "demo.v1.Discovery", False),
]


def _check_witness(old: ProtoSchema, new: ProtoSchema, f: Finding) -> None:
    """OLD accepts the witness; NEW rejects it or reads something else."""
    assert f.witness is not None
    if f.witness.side is Side.RESPONSE:  # a value NEW writes that OLD cannot read
        old, new = new, old
    name, value = f.witness.path, f.witness.value
    if name == "google.protobuf.Any":
        json_format.ParseDict(value, any_pb2.Any(), descriptor_pool=old.pool)
        with pytest.raises(json_format.ParseError):
            json_format.ParseDict(value, any_pb2.Any(), descriptor_pool=new.pool)
        return
    old_cls, new_cls = old.message_class(name), new.message_class(name)
    if "binary_base64" in value:
        data = base64.b64decode(value["binary_base64"])
        before, after = old_cls.FromString(data), new_cls.FromString(data)
        assert not pgv_violations(before)
        assert by_number(before) != by_number(after) or pgv_violations(after)
        return
    before = json_format.ParseDict(value, old_cls(), descriptor_pool=old.pool)
    assert not pgv_violations(before)
    try:
        after = json_format.ParseDict(value, new_cls(), descriptor_pool=new.pool)
    except json_format.ParseError:
        return
    assert pgv_violations(after) or by_name(after) != by_name(before)


@pytest.mark.parametrize(("rule", "new_body", "path", "witnessed"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(rule: str, new_body: str, path: str, witnessed: bool) -> None:
    old, new = api(BASE), api(new_body)
    report = diff_protos(old, new, budget=60)
    hits = [f for f in report.findings if f.rule == rule and f.path == path]
    assert hits, [(f.rule, f.path) for f in report.findings]
    f = hits[0]
    assert f.breaking and f.severity is Severity.ERROR and report.exit_code == 1
    file, _, line = f.definition.rpartition(":")
    assert file.endswith("api.proto") and line.isdigit(), f.definition
    if witnessed:
        assert f.status is Status.CONFIRMED, f
        _check_witness(old, new, f)
    else:
        assert f.witness is None
        assert f.status is (Status.NOT_CHECKED if PROTO_RULES[rule].behavioural
                            else Status.UNCONFIRMED)


def test_renumbering_onto_a_reused_number() -> None:
    """Envoy 1.35 MaxMindConfig: number 2 renamed, the old name moved to number 5."""
    new = _edit(("int32 weight = 3;", "int32 load = 3; int32 weight = 11;"))
    report = diff_protos(api(BASE), api(new))
    (f,) = report.by_rule("proto-field-renumbered")
    assert (f.path, f.old, f.new) == ("demo.v1.Cluster.weight", 3, 11)
    assert f.status is Status.CONFIRMED and "binary" in f.witness.reason
    assert not report.by_rule("proto-field-renamed")


def test_each_witness_is_caused_by_its_own_change() -> None:
    """Several changes to one message: a witness NEW rejects for another change's reason
    does not confirm a finding (a tightened ``name`` rule once "confirmed" a renumbering
    and a tightened ``max_items`` with ``{"name": "0"}``)."""
    body = BASE.replace("string name = 1;", "string name = 1 [(validate.rules).string = "
                        "{min_len: 1}];")
    new = _edit(("int32 weight = 3;", "int32 weight = 30;"), ("max_items: 5", "max_items: 4"))
    new = new.replace("string name = 1;", "string name = 1 [(validate.rules).string = "
                      "{min_len: 3}];")
    old_s, new_s = api(body), api(new)
    report = diff_protos(old_s, new_s, budget=200, seed=3)
    by_path = {f.path: f for f in report.findings if f.breaking}
    assert set(by_path) >= {"demo.v1.Cluster.name", "demo.v1.Cluster.weight",
                            "demo.v1.Cluster.tags"}, by_path
    for path, f in by_path.items():
        assert f.status is Status.CONFIRMED, f
        _check_witness(old_s, new_s, f)
        short = path.rsplit(".", 1)[1]
        if "binary_base64" in f.witness.value:  # the renumbering: decoded differently
            assert short == "weight" and "binary" in f.witness.reason
            continue
        # a rule witness: NEW's violation named in the reason is on the finding's field
        assert f.witness.reason.split("reject it: ", 1)[1].startswith(f"{short}:"), f.witness


@pytest.mark.parametrize(("old_rule", "new_rule", "tighter"), [
    ("uint32 = {gt: 0}", "uint32 = {gte: 0}", False),
    ("uint32 = {gte: 0}", "uint32 = {gt: 0}", True),
    ("uint32 = {lte: 10}", "uint32 = {lt: 10}", True),
    ("uint32 = {lt: 10}", "uint32 = {lt: 11}", False),
    ("uint32 = {gt: 1}", "uint32 = {gt: 1, lt: 9}", True),
])
def test_bounds_compare_as_bounds(old_rule: str, new_rule: str, tighter: bool) -> None:
    body = "message B { uint32 v = 1 [(validate.rules).RULE]; }\n"
    report = diff_protos(api(body.replace("RULE", old_rule)),
                         api(body.replace("RULE", new_rule)), budget=80)
    rules = {f.rule for f in report.findings}
    assert rules == {"proto-validate-tightened" if tighter else "proto-validate-relaxed"}
    if tighter:
        assert report.findings[0].status is Status.CONFIRMED


def test_skip_relaxes() -> None:
    body = ("message In { string s = 1 [(validate.rules).string.min_len = 1]; }\n"
            "message Out { In in = 1 SKIP; }\n")
    report = diff_protos(api(body.replace("SKIP", "")),
                         api(body.replace("SKIP", "[(validate.rules).message.skip = true]")))
    assert [f.rule for f in report.findings] == ["proto-validate-relaxed"]


def test_every_breaking_rule_has_a_case() -> None:
    covered = {c[0] for c in CASES} | {"proto-package-removed", "proto-field-default-changed"}
    breaking = {r for r, rule in PROTO_RULES.items() if rule.severity is Severity.ERROR}
    assert breaking <= covered, sorted(breaking - covered)


def test_identical_and_additions_are_compatible() -> None:
    assert diff_protos(api(BASE), api(BASE)).findings == ()
    added = _edit(("  int32 weight = 3;\n", "  int32 weight = 3;\n  string zone = 11;\n"),
                  ("SLOW = 2;", "SLOW = 2; TURBO = 3;"),
                  ("lte: 65535", "lte: 70000"))
    report = diff_protos(api(BASE), api(added + "message New { int32 y = 1; }\n"))
    assert report.exit_code == 0
    rules = {f.rule for f in report.findings}
    assert rules == {"proto-field-added", "proto-enum-value-added", "proto-message-added",
                     "proto-validate-relaxed"}
    assert all(f.severity is Severity.INFO and not f.breaking for f in report.findings)


def test_package_removed_with_any_witness() -> None:
    old = compile_text(HEADER + BASE)
    new = compile_text(HEADER.replace("demo.v1", "demo.v2") + BASE)
    report = diff_protos(old, new)
    gone = report.by_rule("proto-package-removed")
    assert [f.path for f in gone] == ["demo.v1"]
    assert gone[0].status is Status.CONFIRMED
    _check_witness(old, new, gone[0])
    assert not report.by_rule("proto-message-removed")  # folded into the package finding


def test_proto2_default_changed() -> None:
    p2 = 'syntax = "proto2";\npackage demo.p2;\nmessage P { optional int32 a = 1 [default = 7]; }\n'
    report = diff_protos(compile_text(p2), compile_text(p2.replace("default = 7", "default = 8")))
    (f,) = report.by_rule("proto-field-default-changed")
    assert (f.old, f.new) == (7, 8) and f.status is Status.NOT_CHECKED


# -- Envoy exceptions ------------------------------------------------------------------------

ALPHA = 'syntax = "proto3";\npackage demo.v3alpha;\nmessage M { int32 a = 1; int32 b = 2; }\n'
UDPA_WIP = ('syntax = "proto3";\npackage demo.v3;\nimport "udpa/annotations/status.proto";\n'
            "option (udpa.annotations.file_status).work_in_progress = true;\n"
            "message M { int32 a = 1; int32 b = 2; }\n")
XDS_MSG = ('syntax = "proto3";\npackage demo.v3;\nimport "xds/annotations/v3/status.proto";\n'
           "message M { option (xds.annotations.v3.message_status).work_in_progress = true;\n"
           "  int32 a = 1; int32 b = 2; }\n")
XDS_FIELD = ('syntax = "proto3";\npackage demo.v3;\nimport "xds/annotations/v3/status.proto";\n'
             "message M { int32 a = 1;\n"
             "  int32 b = 2 [(xds.annotations.v3.field_status).work_in_progress = true]; }\n")


def test_removed_wip_package_is_exempt() -> None:
    old = compile_text(UDPA_WIP)
    new = compile_text('syntax = "proto3";\npackage demo.other;\nmessage Z { int32 a = 1; }\n')
    (f,) = diff_protos(old, new).by_rule("proto-package-removed")
    assert f.ignored and "work in progress" in f.ignore_reason


@pytest.mark.parametrize(("text", "reason"), [
    (ALPHA, "alpha package demo.v3alpha"), (UDPA_WIP, "work in progress (file_status)"),
    (XDS_MSG, "work in progress (message_status)"), (XDS_FIELD, "(field_status)")])
def test_envoy_exceptions(text: str, reason: str) -> None:
    old = compile_text(text)
    new = compile_text(text.replace("int32 b = 2", "string b = 2"))
    report = diff_protos(old, new)
    (f,) = report.by_rule("proto-field-type-changed")
    assert f.ignored and reason in f.ignore_reason and report.exit_code == 0
    assert f.status is Status.CONFIRMED  # the evidence is kept
    strict = diff_protos(old, new, envoy_exceptions=False)
    assert strict.exit_code == 1 and not strict.by_rule("proto-field-type-changed")[0].ignored


def test_field_wip_does_not_cover_siblings() -> None:
    old = compile_text(XDS_FIELD)
    new = compile_text(XDS_FIELD.replace("int32 a = 1", "string a = 1"))
    assert diff_protos(old, new).exit_code == 1


# -- CLI: formats, ignore file, severities, exit codes ------------------------------------------


def _pair(tmp_path: Path) -> tuple[str, str]:
    write_tree(tmp_path / "old", {"api.proto": HEADER + BASE})
    write_tree(tmp_path / "new", {"api.proto": HEADER + _edit(("int32 weight", "int32 load"))})
    return str(tmp_path / "old"), str(tmp_path / "new")


def test_cli_text_json_github(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _pair(tmp_path)
    assert main(["diff", old, old]) == 0
    capsys.readouterr()
    assert main(["diff", old, new, "--budget", "30"]) == 1
    out = capsys.readouterr().out
    assert "proto-field-renamed" in out and "demo.v1.Cluster.weight" in out and "witness" in out
    assert main(["diff", old, new, "--format", "json"]) == 1
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    (f,) = [f for f in doc["findings"] if f["rule"] == "proto-field-renamed"]
    assert f["status"] == "confirmed"
    assert "weight" in f["witness"]["value"]  # the old spelling, which NEW rejects
    assert main(["diff", old, new, "--format", "github", "--no-dynamic"]) == 1
    assert "::error" in capsys.readouterr().out


def test_cli_ignore_file_and_severity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _pair(tmp_path)
    ignore = tmp_path / "ignore.yaml"
    ignore.write_text("ignore:\n  - rule: proto-field-renamed\n    path: demo.v1.Cluster.*\n"
                      "    reason: renamed before the first release\n")
    assert main(["diff", old, new, "--ignore", str(ignore), "--no-dynamic"]) == 0
    assert main(["diff", old, new, "--no-dynamic", "--severity",
                 "proto-field-renamed=warning"]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("ignore:\n  - rule: proto-field-renamd\n    path: x\n    reason: r\n")
    capsys.readouterr()
    assert main(["diff", old, new, "--ignore", str(bad)]) == 2
    assert "did you mean 'proto-field-renamed'" in capsys.readouterr().err


def test_cli_list_rules_and_mixed_inputs(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--list-rules"]) == 0
    listed = capsys.readouterr().out
    assert all(rule in listed for rule in PROTO_RULES)
    old, _ = _pair(tmp_path)
    schema = tmp_path / "s.json"
    schema.write_text("{}")
    assert main(["diff", old, str(schema)]) == 2
    assert "one revision is protobuf" in capsys.readouterr().err


def test_example_tree(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "protobuf"
    assert main(["diff", str(root / "old"), str(root / "new"), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    confirmed = {f["rule"] + ":" + f["path"].rsplit(".", 1)[1] for f in doc["findings"]
                 if f["status"] == "confirmed"}
    assert confirmed == {"proto-validate-tightened:name", "proto-validate-tightened:tags",
                         "proto-field-renamed:max_requests",
                         "proto-enum-value-removed:RANDOM"}


def test_cli_envoy_exception_flag(tmp_path: Path) -> None:
    write_tree(tmp_path / "o", {"a.proto": ALPHA})
    write_tree(tmp_path / "n", {"a.proto": ALPHA.replace("int32 b = 2", "string b = 2")})
    assert main(["diff", str(tmp_path / "o"), str(tmp_path / "n")]) == 0
    assert main(["diff", str(tmp_path / "o"), str(tmp_path / "n"),
                 "--no-envoy-exceptions"]) == 1
