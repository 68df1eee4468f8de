"""``compatfuzz diff pydantic:mod:Model pydantic:mod:Model``: two revisions of a model
compared through their JSON Schemas, requests on the validation shape and responses on
the serialization shape, with witnesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compatfuzz.cli import main

from ._shop import EXAMPLE

V2, V3 = "pydantic:shop.models.v2:Order", "pydantic:shop.models.v3:Order"


@pytest.fixture(autouse=True)
def _in_example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLE)  # modules resolve from the working directory


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    rc = main(["diff", *args, "--config", "none", "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def test_each_change_is_judged_in_the_direction_it_breaks(
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _diff(capsys, V2, V3)
    assert rc == 1 and doc["direction"] == "both"
    rows = {(f["version"], f["rule"], f["path"]): (f["breaking"], f["status"])
            for f in doc["findings"]}  # type: ignore[attr-defined]
    # a client still sending a removed field or enum value is refused by v3
    assert rows[("request", "field-removed", "gift_note")] == (True, "confirmed")
    assert rows[("request", "enum-value-removed", "status")] == (True, "confirmed")
    # an old client (extra="forbid") refuses the new field and the decimal string
    assert rows[("response", "field-added", "cancelled")] == (True, "confirmed")
    assert rows[("response", "type-changed", "quantity")] == (True, "confirmed")
    # ... while a new field is harmless in requests, a removed one in responses
    assert rows[("request", "field-added", "cancelled")][0] is False
    assert rows[("response", "field-removed", "gift_note")][0] is False


def test_a_model_is_a_web_api_s(capsys: pytest.CaptureFixture[str]) -> None:
    """Findings on pydantic models speak of requests and responses, under the ``rest``
    profile, not of stored Kubernetes objects (compat/_rest.py)."""
    rc = main(["diff", V2, V3, "--config", "none", "--no-witness"])
    out = capsys.readouterr().out
    assert rc == 1 and "built-in profile rest: enum-value-removed = error" in out
    assert "impact: requests: old clients' requests that were valid are refused (422)" in out
    assert "impact: responses: old clients may reject what they read" in out
    for word in ("kubernetes", "custom resource", "ratcheting", "stored object"):
        assert word not in out.lower(), word


def test_one_direction_compares_one_shape(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc = _diff(capsys, V2, V3, "--direction", "request", "--no-witness")
    assert rc == 1 and doc["direction"] == "request"
    assert {f["version"] for f in doc["findings"]} == {"request"}  # type: ignore[attr-defined]
    rc, doc = _diff(capsys, V2, V2)
    assert rc == 0 and doc["findings"] == []


@pytest.mark.parametrize(("old", "new", "message"), [
    ("pydantic:shop.models.v2:Ordr", V3, "has no function 'Ordr'"),
    ("pydantic:shop.models.v2:Status", V3, "'shop.models.v2:Status' is not a pydantic "
                                           "BaseModel subclass"),
    ("pydantic:Order", V3, "expected pydantic:module:Model, got 'pydantic:Order'"),
    (V2, "compatfuzz.toml", "one revision is a pydantic model, the other is not"),
])
def test_bad_inputs_are_usage_errors(capsys: pytest.CaptureFixture[str], old: str, new: str,
                                     message: str) -> None:
    assert main(["diff", old, new, "--config", "none"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "fix:" in err


def test_without_pydantic_the_error_names_the_extra(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    for name in [m for m in sys.modules if m.startswith("compatfuzz.pydantic")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pydantic", None)
    assert main(["diff", V2, V3, "--config", "none"]) == 2
    assert "fix: pip install 'compatfuzz[pydantic]'" in capsys.readouterr().err


def test_init_writes_a_config_for_models_that_loads_and_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from compatfuzz.pydantic import PydanticAPI
    from compatfuzz.roundtrip import load_config

    from ._shop import copy_example

    copy_example(tmp_path)
    (tmp_path / "compatfuzz.toml").unlink()
    monkeypatch.chdir(tmp_path)
    assert main(["init", "pydantic:shop.models.v1:Order", "second=pydantic:shop.models.v2:Order"]
                ) == 0
    assert "2 version pairs to check; next: compatfuzz fuzz" in capsys.readouterr().err
    (api,) = load_config(tmp_path / "compatfuzz.toml")
    assert isinstance(api, PydanticAPI) and list(api.models) == ["v1", "second"]
    # the starter converter copies documents: v2 refuses v1's fields, which fuzz shows
    assert main(["fuzz", "--database", "none", "--max-examples", "10", "--seed", "1",
                 "--property", "valid"]) == 1
    assert "v1 -> second output is not a valid second Order" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["pydantic:shop.models.v1:Order"], "one model is one version"),
    (["pydantic:shop.models.v1:Order", "pydantic:shop.models.v1:Order"],
     "two models for version 'v1'"),
    (["pydantic:Order", "pydantic:shop.models.v2:Order"], "expected [VERSION=]pydantic:"),
])
def test_init_mistakes(tmp_path: Path, args: list[str], message: str,
                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", *args, "--config", str(tmp_path / "c.toml")]) == 2
    assert message in capsys.readouterr().err
