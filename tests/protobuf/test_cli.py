"""``compatfuzz fuzz`` on the bundled proto_cluster example: exit 0 with the correct
converters, 1 with the lossy one, with the report, JUnit, counterexample file and replay
that CRD APIs get."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from compatfuzz.cli import main
from tests.protobuf._cluster import copy_example

FAILING = {"cluster::roundtrip[v2->v3]", "cluster::roundtrip[v3->v2]"}


def test_correct_converters_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = copy_example(tmp_path)
    report = tmp_path / "report.json"
    rc = main(["fuzz", "--config", str(config), "--database", "none", "--max-examples", "30",
               "--report", str(report)])
    assert rc == 0
    doc = json.loads(report.read_text())
    assert doc["status"] == "passed" and doc["summary"]["passed"] == len(doc["units"]) == 8
    err = capsys.readouterr().err
    assert "compatfuzz fuzz: 8 properties" in err
    assert "ok      cluster::encodings[v2]  (30 examples" in err and "8 passed" in err


def test_lossy_converter_exits_1_with_files_and_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = copy_example(tmp_path)
    lossy = tmp_path / "lossy.toml"
    report, junit, html = tmp_path / "out" / "report.json", tmp_path / "j.xml", tmp_path / "r.html"
    rc = main(["fuzz", "--config", str(lossy), "--database", "none", "--seed", "3",
               "--property", "roundtrip", "--report", str(report), "--junit", str(junit),
               "--html", str(html)])
    assert rc == 1
    doc = json.loads(report.read_text())
    by_id = {u["id"]: u for u in doc["units"]}
    assert {i for i, u in by_id.items() if u["status"] == "failed"} == FAILING
    cx_file = Path(by_id["cluster::roundtrip[v2->v3]"]["counterexample_file"])
    cx = json.loads(cx_file.read_text())
    assert cx["object"] == {"name": "0", "per_connection_buffer_limit_bytes": 0}
    assert cx["diff"] == [{"path": "per_connection_buffer_limit_bytes", "kind": "lost",
                           "old": 0, "new": None}]
    failures = [c.get("name") for c in ET.parse(junit).iter("testcase")
                if c.find("failure") is not None]
    assert sorted(failures) == ["roundtrip[v2->v3]", "roundtrip[v3->v2]"]
    assert "per_connection_buffer_limit_bytes" in html.read_text()
    err = capsys.readouterr().err
    assert "minimal counterexample: {\"name\": \"0\", \"per_connection_buffer_limit_bytes\": 0}" \
        in err
    # replay: still failing under the lossy config, fixed under the correct one
    assert main(["fuzz", "--replay", str(cx_file), "--config", str(lossy)]) == 1
    assert "still failing: NotEquivalent" in capsys.readouterr().err
    assert main(["fuzz", "--replay", str(cx_file), "--config", str(config)]) == 0
    assert "passes now" in capsys.readouterr().err
    cx["object"] = {"name": 7}
    cx_file.write_text(json.dumps(cx))
    assert main(["fuzz", "--replay", str(cx_file), "--config", str(lossy)]) == 2
    assert "is not an example of cluster::roundtrip[v2->v3]" in capsys.readouterr().err


def test_sample_prints_valid_messages_as_proto3_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from google.protobuf import json_format

    from compatfuzz.protobuf import load_protos, violations

    copy_example(tmp_path)
    protos = tmp_path / "protos"
    v3 = protos / "example" / "cluster" / "v3" / "cluster.proto"
    assert main(["sample", f"{v3}#example.cluster.v3.Cluster", "-I", str(protos),
                 "-n", "20", "--seed", "1"]) == 0
    lines = capsys.readouterr().out.rstrip("\n").split("\n")  # not splitlines: U+2028
    assert len(lines) == 20
    schema = load_protos(protos)
    cls = schema.message_class("example.cluster.v3.Cluster")
    for line in lines:  # each parses back and meets the validate rules (name not empty)
        msg = json_format.ParseDict(json.loads(line), cls(), descriptor_pool=schema.pool)
        assert msg.name and not violations(msg)


def test_sample_and_diff_name_protobuf_messages_clearly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A .proto is never read as YAML (audit: "invalid YAML at line 17")."""
    copy_example(tmp_path)
    protos = tmp_path / "protos"
    v2 = protos / "example" / "cluster" / "v2" / "cluster.proto"
    v3 = protos / "example" / "cluster" / "v3" / "cluster.proto"
    assert main(["sample", f"{v2}#example.cluster.v2.Clustr", "-I", str(protos)]) == 2
    err = capsys.readouterr().err
    assert "did you mean example.cluster.v2.Cluster" in err and "YAML" not in err
    assert main(["sample", str(protos), "-n", "1"]) == 2
    err = capsys.readouterr().err
    assert "which message? it defines 4" in err and "#example.cluster.v2.Cluster" in err
    assert main(["sample", str(v2), "-n", "1", "-I", str(protos)]) == 0  # its one message
    assert json.loads(capsys.readouterr().out)["name"]
    assert main(["diff", f"{v2}#example.cluster.v2.Cluster",
                 f"{v3}#example.cluster.v3.Cluster"]) == 2
    err = capsys.readouterr().err
    assert "compared whole, package by package" in err and "YAML" not in err
