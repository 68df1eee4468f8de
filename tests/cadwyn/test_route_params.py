"""Header, query and cookie parameters go through the migrations: each route's declared
parameters are drawn from their types (optional ones sent or left out), sent with the
body, and a migration that breaks on them fails the route unit with the request as sent;
the failure's replay sends them again."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cadwyn")
pytest.importorskip("starlette.testclient")

from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.cadwyn._params import Param, params_strategy, wire
from compatfuzz.cli import main
from compatfuzz.roundtrip import Property, Status, UnitFinished, run
from tests.cadwyn._apps import loader

DATA = Path(__file__).resolve().parent / "data"
CONFIG = DATA / "params.toml"
ROUTE_PROPERTIES = [Property.WRITE_THEN_READ, Property.CROSS_VERSION]


@pytest.fixture
def things(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Load params.toml with the bug ``PARAMS_BUG`` names (the module imported anew)."""
    yield from loader(monkeypatch, "PARAMS_BUG", "params_app", CONFIG)


def _run(suite: Any, seed: int = 1) -> dict[str, Any]:
    return {e.result.unit.id: e.result
            for e in run(suite, properties=ROUTE_PROPERTIES, database="none", seed=seed,
                         max_examples=100) if isinstance(e, UnitFinished)}


def test_the_routes_parameters_are_read_with_their_places_and_names(things: Any) -> None:
    [resource] = things().resources
    create = {(p.where, p.name, p.required) for p in resource.create.params}
    read = {(p.where, p.name, p.required) for p in resource.read.params}
    assert create == {("query", "tag", False), ("header", "x-priority", False)}
    assert read == {("cookie", "session", False)}


def test_a_right_app_with_parameters_passes_every_route_unit(things: Any) -> None:
    results = _run(things())
    assert len(results) == 4
    assert {r.status for r in results.values()} == {Status.PASSED}, {
        k: r.message for k, r in results.items()}


@pytest.mark.parametrize(("bug", "sent"), [
    # the header's in the default run; the query's and cookie's in CI (extended)
    pytest.param("absent", "POST /things as 2000-01-01", marks=pytest.mark.extended),
    ("rescale", "[header x-priority: '"),
    pytest.param("cookie", "GET /things/1 as 2000-01-01", marks=pytest.mark.extended),
])
def test_a_migration_that_breaks_on_a_parameter_fails_with_the_request_as_sent(
        things: Any, bug: str, sent: str) -> None:
    results = _run(things(bug))
    old = results["things::things::write_then_read[2000-01-01]"]
    assert old.status is Status.FAILED, old.message
    assert sent in old.message, old.message
    # HEAD's clients run no migration: their units pass
    assert results["things::things::write_then_read[2001-01-01]"].status is Status.PASSED


@pytest.mark.extended  # the replay of a history is a default test (test_route_properties.py)
def test_the_replay_of_a_parameter_failure_sends_the_parameters_again(
        things: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PARAMS_BUG", "rescale")
    sys.modules.pop("params_app", None)
    saved = tmp_path / "counterexamples"
    argv = ["fuzz", "--config", str(CONFIG), "--database", "none", "--seed", "1",
            "--property", "write_then_read", "--counterexamples", str(saved)]
    assert main(argv) == 1
    [found] = saved.rglob("*.json")
    example = json.loads(found.read_text())["object"]
    priority = int(example["params"]["create"]["header"]["x-priority"])
    assert 5 <= priority <= 9  # minimal: the smallest old priority doubled past 9 is 5
    capsys.readouterr()
    sys.modules.pop("params_app", None)
    assert main([*argv[:-2], "--replay", str(found)]) == 1
    replayed = capsys.readouterr()
    assert "x-priority" in replayed.out + replayed.err


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_drawn_headers_and_cookies_are_what_http_carries_unchanged(data: st.DataObject) -> None:
    params = (Param("header", "x-note", str, True), Param("header", "x-count", int, False),
              Param("cookie", "session", str, True), Param("query", "tags", list[str], False),
              Param("header", "x-api-version", str, True))
    sent = data.draw(params_strategy(params, version_header="X-API-Version"))
    assert "x-api-version" not in sent["header"]  # the client sets the version itself
    note = sent["header"]["x-note"]
    assert note == note.strip() and note.isascii() and "\n" not in note
    assert not set(sent["cookie"]["session"]) & set(' ",;\\')
    assert "query" not in sent or sent["query"]  # an empty part is left out
    if "x-count" in sent["header"]:
        int(sent["header"]["x-count"])
    if "tags" in sent.get("query", {}):
        assert isinstance(sent["query"]["tags"], list) and sent["query"]["tags"]


@given(st.booleans() | st.integers() | st.text())
def test_a_value_goes_on_the_wire_as_text(value: Any) -> None:
    out = wire(value)
    assert isinstance(out, str)
    if isinstance(value, bool):
        assert out in ("true", "false")


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["absent", "rescale", "cookie"])
def test_each_seeded_parameter_bug_is_caught_on_19_of_20_seeds(things: Any, bug: str) -> None:
    """Each bug of params_app.py, 100 examples per unit (the default), seeds 0 to 19: the
    old client's write_then_read unit fails on at least 19, and the right app passes."""
    caught = 0
    for seed in range(20):
        results = _run(things(bug), seed=seed)
        caught += results["things::things::write_then_read[2000-01-01]"].status is Status.FAILED
    assert caught >= 19, f"{bug}: caught on {caught} of 20 seeds"
    right = _run(things(), seed=19)
    assert {r.status for r in right.values()} == {Status.PASSED}
