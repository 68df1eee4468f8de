"""``compatfuzz fuzz`` and the pytest plugin on the shop example: exit 0 with the correct
converters, 1 with the lossy one, with the report, JUnit, HTML, counterexample file and
replay that CRD and protobuf APIs get."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from compatfuzz.cli import main

from ._shop import copy_example

pytest_plugins = ["pytester"]

FAILING = {"orders::roundtrip[v2->v3]", "orders::roundtrip[v1->v3]"}
MINIMAL = {"contact_domain": "0", "contact_user": "0", "created": "1970-01-01T00:00:00Z",
           "customer": "0", "gift_note": "", "id": "e3e70682-c209-4cac-629f-6fbed82c07cd",
           "price": 0, "quantity": 1}


def test_correct_converters_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_example(tmp_path)
    report = tmp_path / "report.json"
    rc = main(["fuzz", "--config", str(tmp_path / "compatfuzz.toml"), "--database", "none",
               "--max-examples", "30", "--report", str(report)])
    assert rc == 0, capsys.readouterr().err
    doc = json.loads(report.read_text())
    assert doc["status"] == "passed" and doc["summary"]["passed"] == len(doc["units"]) == 27
    assert "ok      orders::roundtrip[v1->v2]  (30 examples" in capsys.readouterr().err


def test_lossy_converter_exits_1_with_files_and_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_example(tmp_path)
    config, lossy = tmp_path / "compatfuzz.toml", tmp_path / "lossy.toml"
    report, junit, html = tmp_path / "out" / "report.json", tmp_path / "j.xml", tmp_path / "r.html"
    rc = main(["fuzz", "--config", str(lossy), "--database", "none", "--seed", "1",
               "--property", "roundtrip", "--report", str(report), "--junit", str(junit),
               "--html", str(html)])
    assert rc == 1
    doc = json.loads(report.read_text())
    by_id = {u["id"]: u for u in doc["units"]}
    assert {i for i, u in by_id.items() if u["status"] == "failed"} == FAILING
    cx_file = Path(by_id["orders::roundtrip[v2->v3]"]["counterexample_file"])
    cx = json.loads(cx_file.read_text())
    assert cx["object"] == MINIMAL
    assert cx["diff"] == [{"path": "gift_note", "kind": "type-changed", "old": "",
                           "new": None}]
    failures = [c.get("name") for c in ET.parse(junit).iter("testcase")
                if c.find("failure") is not None]
    assert sorted(failures) == ["roundtrip[v1->v3]", "roundtrip[v2->v3]"]
    assert "gift_note" in html.read_text()
    err = capsys.readouterr().err
    assert "v2 -> v3 -> v2 did not give back the original:\n" \
           '      gift_note: type-changed: "" -> null' in err
    # replay: still failing under the lossy config, fixed under the correct one
    assert main(["fuzz", "--replay", str(cx_file), "--config", str(lossy)]) == 1
    assert "still failing: NotEquivalent" in capsys.readouterr().err
    assert main(["fuzz", "--replay", str(cx_file), "--config", str(config)]) == 0
    assert "passes now" in capsys.readouterr().err


def test_replay_of_a_document_the_version_refuses_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_example(tmp_path)
    cx = tmp_path / "cx.json"
    cx.write_text(json.dumps({
        "format": "compatfuzz-counterexample/1", "id": "orders::roundtrip[v2->v3]",
        "api": "orders", "kind": "Order", "property": "roundtrip", "versions": ["v2", "v3"],
        "object": dict(MINIMAL, price="abc")}))
    rc = main(["fuzz", "--replay", str(cx), "--config", str(tmp_path / "compatfuzz.toml")])
    assert rc == 2
    assert "price: Input should be a valid decimal" in capsys.readouterr().err


def test_the_pytest_plugin_collects_and_reports_like_other_families(
        pytester: pytest.Pytester) -> None:
    copy_example(pytester.path)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "lossy.toml",
                                           "-k", "roundtrip and v3]", "--compatfuzz-seed=1")
    result.assert_outcomes(failed=2, passed=0)
    result.stdout.fnmatch_lines([
        "orders::roundtrip[[]v2->v3[]]: NotEquivalent: v2 -> v3 -> v2 did not give back "
        "the original:",
        '  gift_note: type-changed: "" -> null',
        "minimal counterexample: *",
        "replay: pytest 'lossy.toml::orders::roundtrip[[]v2->v3[]]'*",
    ])


@pytest.mark.extended  # the plugin test above collects the config form by default
def test_a_module_level_pydantic_api_is_collected(pytester: pytest.Pytester) -> None:
    copy_example(pytester.path)
    pytester.makepyfile(test_orders="""
        from compatfuzz.pydantic import PydanticAPI
        from shop import conversion
        from shop.models import v1, v2

        test_orders = PydanticAPI("orders", {"v1": v1.Order, "v2": v2.Order},
                                  converters={("v1", "v2"): conversion.v1_to_v2,
                                              ("v2", "v1"): conversion.v2_to_v1})
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_orders.py",
                                           "--compatfuzz-seed=1", "-v")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["*test_orders.py::orders::roundtrip[[]v1->v2[]] PASSED*"])
