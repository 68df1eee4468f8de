"""A Cadwyn app through its routes (``cadwyn._routes``, ``_sequences``): what a client of one
version creates it reads back, as itself and after a client of another version wrote it back
unchanged. tests/cadwyn/data/items_app.py has create and response schemas apart, inherited
fields, a nested model and path-based migrations; ``ITEMS_BUG`` seeds one bug."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cadwyn")

from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.cadwyn._bundle import Route
from compatfuzz.cadwyn._routes import find_resources
from compatfuzz.cli import main
from compatfuzz.errors import SchemaLoadError
from compatfuzz.roundtrip import Property, Status, UnitFinished, load_config, run
from tests.cadwyn._apps import loader

pytest_plugins = ["pytester"]

DATA = Path(__file__).resolve().parent / "data"
CONFIG = DATA / "items.toml"
ROUTE_PROPERTIES = [Property.WRITE_THEN_READ, Property.CROSS_VERSION]


@pytest.fixture
def items(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Load items.toml with the bug ``ITEMS_BUG`` names (the module imported anew)."""
    yield from loader(monkeypatch, "ITEMS_BUG", "items_app", CONFIG)


def _run(suite: Any, examples: int = 50) -> dict[str, Any]:
    return {e.result.unit.id: e.result
            for e in run(suite, properties=ROUTE_PROPERTIES, database="none", seed=1,
                         max_examples=examples) if isinstance(e, UnitFinished)}


def test_a_right_app_passes_every_route_unit(items: Any) -> None:
    suite = items()
    [resource] = suite.resources
    assert (resource.create.path, resource.read.path, resource.update.path,
            resource.id_field) == ("/items", "/items/{item_id}", "/items/{item_id}", "id")
    results = _run(suite)
    assert sorted(results) == [
        "items::items::cross_version[2000-01-01->2001-01-01]",
        "items::items::cross_version[2001-01-01->2000-01-01]",
        "items::items::write_then_read[2000-01-01]",
        "items::items::write_then_read[2001-01-01]"]
    assert {r.status for r in results.values()} == {Status.PASSED}, {
        k: r.message for k, r in results.items()}
    # and every other unit of the app form: per route up and down, the static checks
    every = [e.result for e in run(items(), database="none", seed=1, max_examples=50)
             if isinstance(e, UnitFinished)]
    assert len(every) == 15
    assert {r.status for r in every} == {Status.PASSED}, [
        (r.unit.id, r.message) for r in every if r.status is not Status.PASSED]


def test_a_response_migration_that_drops_a_field_is_caught_and_blamed_downwards(
        items: Any) -> None:
    result = _run(items("drop"))["items::items::write_then_read[2000-01-01]"]
    assert result.status is Status.FAILED
    message = result.message
    assert "a 2000-01-01 client created a resource with POST /items and reads back " \
           "something else" in message, message
    assert 'color: type-changed: "" -> null' in message
    # the response migration is named as the one that lost it, with what it did
    assert ("on the way down (HEAD -> 2000-01-01, response migrations): "
            "RenameColour.colour_down (version 2001-01-01) made `color` absent -> None"
            in message), message
    assert "POST /items as 2000-01-01 {'name': '', 'color': ''} -> 201" in message


def test_a_path_migration_missing_on_one_route_is_caught_naming_the_route(
        items: Any) -> None:
    results = _run(items("route"))
    assert results["items::items::write_then_read[2000-01-01]"].status is Status.PASSED
    failed = results["items::items::cross_version[2001-01-01->2000-01-01]"]
    assert failed.status is Status.FAILED
    assert ("the 2000-01-01 write-back ran other request migrations than a 2000-01-01 "
            "create: PUT /items/{item_id}: none; POST /items: RenameColour.color_up "
            "(version 2001-01-01)") in failed.message, failed.message


def test_a_failure_that_needs_earlier_requests_says_so(items: Any) -> None:
    results = _run(items("history"), examples=30)
    failed = [r for r in results.values() if r.status is Status.FAILED]
    assert failed
    message = failed[0].message
    assert "this failure needs earlier requests: alone, on a freshly imported app, the " \
           "example passes" in message, message
    assert "POST /items as" in message.split("needs earlier requests")[1]


def test_the_replay_of_such_a_failure_sends_the_earlier_requests_first(
        items: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items("history")
    sys.modules.pop("items_app", None)
    code = main(["fuzz", "--config", str(CONFIG), "--property", "write_then_read",
                 "--max-examples", "30", "--seed", "3", "--database", "none",
                 "--counterexamples", str(tmp_path)])
    first = capsys.readouterr()
    assert code == 1, first.out + first.err
    [saved] = tmp_path.glob("*write_then_read__2000-01-01.json")
    history = json.loads(saved.read_text())["history"]
    assert history and {"method", "path", "version", "body"} <= set(history[0])
    sys.modules.pop("items_app", None)
    assert main(["fuzz", "--replay", str(saved), "--config", str(CONFIG)]) == 1
    err = capsys.readouterr().err
    assert f"sending the {len(history)} earlier requests the failure needed first" in err
    assert "still failing" in err, err


def test_a_status_code_other_than_the_route_declares_is_caught(items: Any) -> None:
    """Status codes go through the migrations too: a response migration that answers old
    clients' creates 200 where the route (as that version) declares 201."""
    failed = _run(items("status"))["items::items::write_then_read[2000-01-01]"]
    assert failed.status is Status.FAILED
    assert ("POST /items as 2000-01-01 answered 200, but the route declares 201 in "
            "2000-01-01") in failed.message, failed.message


@pytest.mark.extended  # the history note's other side; the note itself is a default test
def test_a_failure_of_its_own_has_no_history_note(items: Any) -> None:
    message = _run(items("drop"))["items::items::write_then_read[2000-01-01]"].message
    assert "needs earlier requests" not in message


def test_reset_is_called_before_each_route_example(items: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    suite = items()
    calls = []
    monkeypatch.setattr(suite, "reset", lambda: calls.append(1))
    results = _run(suite, examples=10)
    examples = sum(r.examples for r in results.values())
    assert len(calls) == examples > 0


def test_reset_with_a_bundle_is_refused_at_its_key(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[[api]]\nname = "shop"\ncadwyn = "static_bugs:version_bundle"\n'
                      'reset = "static_bugs:version_bundle"\n')
    sys.path.insert(0, str(DATA))
    try:
        with pytest.raises(SchemaLoadError) as info:
            load_config(config)
    finally:
        sys.path.remove(str(DATA))
    text = str(info.value)
    assert "$.api[0].reset" in text and "point cadwyn at the app" in text, text


def test_the_cli_runs_the_route_units_of_the_app_form(items: Any, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    items("drop")
    sys.modules.pop("items_app", None)
    code = main(["fuzz", "--config", str(CONFIG), "--property", "write_then_read",
                 "--max-examples", "20", "--seed", "1", "--database", "none",
                 "--counterexamples", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 1, out.err
    assert "items::items::write_then_read[2000-01-01]" in out.out + out.err
    assert "Traceback" not in out.out + out.err


def _route(name: str, methods: str, path: str, body: Any, response: Any) -> Route:
    return Route(name, path, frozenset(methods.split(",")), body, response)


def _model(*fields: str) -> Any:
    from pydantic import create_model

    return create_model("M", **{f: (str, ...) for f in fields})


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["things", "users", "orders"]),
       st.sampled_from(["thing_id", "id", "key"]),
       st.sampled_from(["", "/api/v1"]))
def test_a_resource_is_a_post_beside_a_get_on_one_more_parameter(
        collection: str, param: str, prefix: str) -> None:
    model = _model("id", param)
    base = f"{prefix}/{collection}"
    routes = [_route("create", "POST", base, model, model),
              _route("read", "GET", f"{base}/{{{param}}}", None, model),
              _route("list", "GET", base, None, model)]
    [resource], notes = find_resources(routes)
    assert notes == []
    assert resource.name == collection and resource.param == param
    assert resource.id_field == param
    assert resource.item_path(7) == f"{base}/7"


def test_a_post_without_a_read_route_is_noted_not_guessed() -> None:
    model = _model("id")
    resources, notes = find_resources([_route("send", "POST", "/emails", model, model)])
    assert resources == []
    assert notes == ["POST /emails (send) has no GET /emails/{id} beside it: nothing reads "
                     "what it creates"]


def test_a_rename_a_route_does_not_migrate_is_a_static_finding(items: Any) -> None:
    """The same bug as the cross_version failure above, found before any example."""
    from compatfuzz.cadwyn._lint import check_version

    suite = items("route")
    [finding] = check_version(suite.api, "2001-01-01")
    assert finding.check == "one-direction"
    assert finding.version_change == "RenameColour"
    assert finding.file.endswith("items_app.py") and finding.line > 0
    assert ("no request migration of this change moves an old client's `color` up to "
            "`colour_code` for PUT /items/{item_id} (put_item)") in finding.message
    assert check_version(items().api, "2001-01-01") == []


def test_each_migration_s_calls_are_counted_by_route_and_a_never_run_one_is_warned(
        items: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items()
    sys.modules.pop("items_app", None)
    report, html = tmp_path / "r.json", tmp_path / "r.html"
    # write_then_read alone never sends a PUT: the PUT route's migration never runs
    assert main(["fuzz", "--config", str(CONFIG), "--property", "write_then_read",
                 "--max-examples", "10", "--seed", "1", "--database", "none",
                 "--report", str(report), "--html", str(html)]) == 0
    err = capsys.readouterr().err
    assert ("items: RenameColour.color_up (version 2001-01-01): 10 calls (POST /items 10)"
            in err), err
    assert ("items: RenameColour.colour_down (version 2001-01-01): 20 calls "
            "(GET /items/{item_id} 10, POST /items 10)") in err
    assert ("warning: items: RenameColour.color_up_on_put (version 2001-01-01) never ran: "
            "no example reached it") in err
    doc = json.loads(report.read_text())
    rows = {r["migration"]: r for r in doc["migrations"]}
    assert rows["RenameColour.color_up_on_put (version 2001-01-01)"]["calls"] == 0
    assert rows["RenameColour.colour_down (version 2001-01-01)"]["where"] == {
        "GET /items/{item_id}": 10, "POST /items": 10}
    [unit] = [u for u in doc["units"] if u["id"].endswith("write_then_read[2000-01-01]")]
    assert {m["where"] for m in unit["migrations"]} == {"POST /items", "GET /items/{item_id}"}
    page = html.read_text()
    assert 'id="migrations"' in page and "never ran: no example reached it" in page


@pytest.mark.extended  # ~10 s of pytest runs, one per printed id
def test_every_node_id_compatfuzz_prints_resolves_in_pytest(
        pytester: pytest.Pytester) -> None:
    """The ids of units that show their route, resource or schema
    (``items::items::write_then_read[2000-01-01]``) were item names with ``::`` in them,
    which pytest could not find ("not found: ... no match in any of [<APINode items>]"):
    each printed replay line was a dead end."""
    import shutil

    for name in ("items_app.py", "items.toml"):
        shutil.copy(DATA / name, pytester.path / name)
    listed = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                           "items.toml")
    ids = [line for line in listed.outlines if line.startswith("items.toml::")]
    shown = [i for i in ids if i.count("::") == 3]  # api::kind::property[...]
    assert "items.toml::items::items::write_then_read[2000-01-01]" in shown
    assert "items.toml::items::put_item::valid[2000-01-01->head]" in shown
    chosen = [shown[0], "items.toml::items::items::write_then_read[2000-01-01]"]
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *chosen)
    result.assert_outcomes(passed=2)


@pytest.mark.extended  # the replay of a history is a default test; the ids it maps, in CI
def test_the_replay_maps_the_app_s_own_ids(items: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An app that names resources by ``uuid4`` (Cadwyn's tutorial) gave the replayed
    history's GETs ids the fresh app never made: a KeyError, reported as "still failing"
    though the failure was another. The recorded creates' ids are mapped to the new ones."""
    monkeypatch.setenv("ITEMS_IDS", "uuid")
    items("history")
    sys.modules.pop("items_app", None)
    assert main(["fuzz", "--config", str(CONFIG), "--property", "write_then_read",
                 "--max-examples", "30", "--seed", "3", "--database", "none",
                 "--counterexamples", str(tmp_path)]) == 1
    capsys.readouterr()
    [saved] = tmp_path.glob("*write_then_read__2000-01-01.json")
    history = json.loads(saved.read_text())["history"]
    assert any(call.get("created") and call["id_field"] == "id" for call in history)
    sys.modules.pop("items_app", None)
    assert main(["fuzz", "--replay", str(saved), "--config", str(CONFIG)]) == 1
    err = capsys.readouterr().err
    assert "still failing: RouteFailure: a 2000-01-01 client created" in err, err
    assert "KeyError" not in err


def test_a_path_based_migration_no_route_serves_is_a_static_finding(items: Any) -> None:
    """Cadwyn only raises RouteByPathConverterDoesNotApplyToAnythingError on the app's first
    request; the static check names the migration, its file and line, and the close path."""
    from compatfuzz.cadwyn._lint import check_version

    found = check_version(items("typo").api, "2001-01-01")
    [typo] = [f for f in found if f.check == "no-route"]
    assert typo.function == "color_up_on_put" and typo.file.endswith("items_app.py")
    assert "PUT /item/{item_id}, which no route of the app serves" in typo.message
    assert "did you mean '/items/{item_id}'?" in typo.hint


def test_a_run_of_the_static_checks_alone_warns_of_no_migration(
        items: Any, capsys: pytest.CaptureFixture[str]) -> None:
    items()
    sys.modules.pop("items_app", None)
    assert main(["fuzz", "--config", str(CONFIG), "--property", "migrations",
                 "--database", "none"]) == 0
    assert "never ran" not in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["drop", "route", "history"])
def test_each_seeded_route_bug_is_caught_on_19_of_20_seeds(items: Any, bug: str) -> None:
    """The route properties' own catch rate: each bug of items_app.py, 100 examples per
    unit (the default), seeds 0 to 19, caught by some route unit on at least 19."""
    caught = 0
    for seed in range(20):
        suite = items(bug)
        results = [e.result for e in run(suite, properties=ROUTE_PROPERTIES,
                                         database="none", seed=seed, max_examples=100)
                   if isinstance(e, UnitFinished)]
        caught += any(r.status is Status.FAILED for r in results)
    assert caught >= 19, f"{bug}: caught on {caught} of 20 seeds"
