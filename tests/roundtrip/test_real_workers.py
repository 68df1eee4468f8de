"""``compatfuzz fuzz --apiserver real --workers 2``: one control plane, two workers at
once, each conversion served by the worker whose example it is (``_router``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compatfuzz.apiserver._real._assets import Assets
from compatfuzz.cli import main
from tests.roundtrip import gadgets

# the sound Gadget converter, except that it cannot stash a note for v1alpha1: only
# roundtrip[v1->v1alpha1] meets that (objects written in v1alpha1 or v1beta1 hold no
# note); every call logs its pid and the pid in the object's name
CONVERTER = """\
import json, os, time
from tests.roundtrip.gadgets import from_hub as _from_hub, to_hub as _to_hub

LOG = {log!r}


def _log(obj):
    name = (obj.get("metadata") or {{}}).get("name", "")
    with open(LOG, "a") as f:
        f.write(json.dumps([os.getpid(), name, time.time()]) + "\\n")


def to_hub(obj):
    _log(obj)
    return _to_hub(obj)


def from_hub(hub, version):
    _log(hub)
    if version == "v1alpha1" and "note" in (hub.get("spec") or {{}}):
        raise ValueError("gadget converter bug: no room for the note in v1alpha1")
    return _from_hub(hub, version)
"""


@pytest.mark.extended  # one worker through the server is the default case (test_real_roundtrip.py)
def test_two_workers_through_one_server_each_convert_their_own_objects(
        assets: Assets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(assets.kube_apiserver))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(assets.etcd))
    log = tmp_path / "calls.jsonl"
    (tmp_path / "buggy_gadgets.py").write_text(CONVERTER.format(log=str(log)))
    (tmp_path / "compatfuzz.toml").write_text(
        f'[[api]]\nname = "gadgets"\ncrd = {json.dumps(str(gadgets.CRD))}\n'
        'to_hub = "buggy_gadgets:to_hub"\nfrom_hub = "buggy_gadgets:from_hub"\n')
    report = tmp_path / "report.json"
    rc = main(["fuzz", "--config", str(tmp_path / "compatfuzz.toml"), "--apiserver", "real",
               "--workers", "2", "--property", "roundtrip", "--max-examples", "20",
               "--seed", "1", "--database", "none", "--report", str(report)])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "workers=2" in err and "one at a time" not in err
    doc = json.loads(report.read_text())
    status = {u["id"]: u["status"] for u in doc["units"]}
    assert len(status) == 6, status
    assert {k for k, v in status.items() if v != "passed"} == {
        "gadgets::roundtrip[v1->v1alpha1]"}, status
    cx = json.loads(Path(next(u for u in doc["units"] if u["status"] == "failed")
                         ["counterexample_file"]).read_text())
    # the converter's own words, from the worker that ran it, not the router's
    assert "gadget converter bug: no room for the note in v1alpha1" in cx["error"], cx
    assert "conversion router" not in err
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # every object was converted by the process that created it
    assert all(name == "" or name.split("-")[1] == str(pid) for pid, name, _ in calls)
    # one process per unit, two at a time: some two units' conversions overlapped
    spans: dict[int, list[float]] = {}
    for pid, _, t in calls:
        span = spans.setdefault(pid, [t, t])
        span[0], span[1] = min(span[0], t), max(span[1], t)
    assert len(spans) == 6
    assert any(a != b and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]
               for a in spans for b in spans), spans
