"""Accepted differences (``[[api.accept]]``, :class:`Accept`) and stash annotations.

Issue 17, item 4: a deliberate difference could only be silenced by turning a whole
property off, and ``path_independent`` failed on a correct converter's own stash
annotation (Cluster API's ``conversion-data``) that ``roundtrip`` rightly ignores.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, NotEquivalent, SchemaLoadError
from compatfuzz.roundtrip import (
    API,
    Accept,
    Property,
    RunStarted,
    Status,
    Unit,
    UnitFinished,
    check,
    load_config,
    run,
)
from compatfuzz.roundtrip._check._accept import accept_summary
from tests.roundtrip import gadgets
from tests.roundtrip._units import failed as _failed
from tests.roundtrip._units import results as _results

REPO = Path(__file__).resolve().parents[2]
FROBBER = REPO / "examples" / "frobber"


# -- stash annotations -------------------------------------------------------------


def test_a_conversion_data_stash_passes_every_property_on_the_api_server() -> None:
    # Before: path_independent[v1alpha1->v1beta1->v1] failed on
    #   metadata.annotations: added: null -> {"example.com/conversion-data": "{}"}
    # while roundtrip, which drops annotations the client did not write, passed.
    results = _results(gadgets.api("conversion-data"), examples=40)
    assert len(results) == 24
    assert _failed(results) == {}


@pytest.mark.slow  # ~15 s: 24 units twice; the API-server case above runs by default
def test_plain_dicts_need_the_stash_named() -> None:
    plain = _failed(_results(gadgets.api("conversion-data", pipeline="plain"),
                             properties=["roundtrip", "path_independent"]))
    assert "example.com/conversion-data" in plain["path_independent[v1alpha1->v1beta1->v1]"]
    assert "example.com/conversion-data" in plain["roundtrip[v1->v1beta1]"]
    assert "name its key prefix in stash_annotations" in plain["roundtrip[v1->v1beta1]"]
    named = gadgets.api("conversion-data", pipeline="plain",
                        stash_annotations=["example.com/conversion-"])
    assert named.stash_annotations == ("example.com/conversion-",)
    assert _failed(_results(named, examples=100)) == {}


def _popping_api(**options: Any) -> API:
    """Cluster API's UnmarshalData deletes the annotation from the object it reads."""
    def to_hub(obj: dict[str, Any]) -> dict[str, Any]:
        out = gadgets.to_hub_data(obj)
        obj.get("metadata", {}).get("annotations", {}).pop(gadgets.DATA, None)
        return out

    return API.from_crd("gadgets", gadgets.CRD, to_hub=to_hub,
                        from_hub=gadgets.from_hub_data, **options)


STASHED = {"apiVersion": "example.com/v1beta1", "kind": "Gadget",
           "metadata": {"annotations": {gadgets.DATA: json.dumps({"note": "n"}),
                                        "team": "a"}},
           "spec": {"params": ["x"]}}


def test_no_mutation_ignores_a_stash_the_converter_consumes() -> None:
    unit = Unit("gadgets", "Gadget", Property.NO_MUTATION, ("v1beta1", "v1"))
    with pytest.raises(NotEquivalent, match=r"example\.com/conversion-data\]: lost"):
        check(_popping_api(), unit, json.loads(json.dumps(STASHED)))
    check(_popping_api(stash_annotations=[gadgets.DATA]), unit, json.loads(json.dumps(STASHED)))

    def drops_team(obj: dict[str, Any]) -> dict[str, Any]:  # a real mutation still fails
        out = gadgets.to_hub_data(obj)
        obj["metadata"]["annotations"].pop("team")
        return out

    api = API.from_crd("gadgets", gadgets.CRD, to_hub=drops_team,
                       from_hub=gadgets.from_hub_data, stash_annotations=[gadgets.DATA])
    with pytest.raises(NotEquivalent, match=r"metadata\.annotations\.team: lost"):
        check(api, unit, json.loads(json.dumps(STASHED)))


def test_default_commutes_ignores_the_stash_of_a_defaulted_field() -> None:
    def default_v1(obj: dict[str, Any]) -> None:
        if isinstance(obj.get("spec"), dict):
            obj["spec"].setdefault("note", "none")

    def run_it(**options: Any) -> dict[str, str]:
        api = API.from_crd("gadgets", gadgets.CRD, to_hub=gadgets.to_hub_data,
                           from_hub=gadgets.from_hub_data, defaulters={"v1": default_v1},
                           **options)
        # from v1 down (v1beta1 and v1alpha1 have no defaulter of their own)
        return _failed(_results(api, only=[f"gadgets::default_commutes[v1->{v}]"
                                           for v in ("v1beta1", "v1alpha1")]))

    assert "conversion-data" in run_it(pipeline="plain")["default_commutes[v1->v1beta1]"]
    assert run_it(pipeline="plain", stash_annotations=[gadgets.DATA]) == {}
    assert run_it() == {}  # on the API server: an annotation the client did not write


# -- accepted differences ----------------------------------------------------------


def _lossy(**options: Any) -> API:
    import importlib

    from compatfuzz.roundtrip._check._config import _put_first_on_path

    # forgets a 'lossy' or 'conversion' another test imported from its own folder
    _put_first_on_path("lossy", FROBBER.resolve())
    try:
        lossy = importlib.import_module("lossy")
    finally:
        sys.path.remove(str(FROBBER.resolve()))
    return API.from_crd("frobber", FROBBER / "crd.yaml", hub="internal",
                        to_hub=lossy.to_hub, from_hub=lossy.from_hub, **options)


def test_an_accepted_difference_is_not_a_failure_and_is_counted() -> None:
    assert "roundtrip[v7beta1->v6]" in _failed(_results(_lossy(), properties=["roundtrip"]))
    entry = Accept(property="roundtrip", versions="v7beta1->v6", path="spec.params[*]",
                   why="v6 holds one param")
    results = _results(_lossy(accept=[entry]), properties=["roundtrip"])
    assert _failed(results) == {}
    (index, count), = results["roundtrip[v7beta1->v6]"].accepted
    assert index == 0 and 0 < count <= 60
    assert results["roundtrip[v6->v7beta1]"].accepted == ()


@pytest.mark.parametrize("entry", [
    Accept(path="spec.params[*]", why="w", versions="v6->v7beta1"),  # other pair
    Accept(path="spec.params[*]", why="w", property="valid"),  # other property
    Accept(path="spec.param", why="w"),  # other field
])
def test_an_entry_accepts_only_what_it_names(entry: Accept) -> None:
    failed = _failed(_results(_lossy(accept=[entry]), properties=["roundtrip"]))
    assert "spec.params[1]: lost" in failed["roundtrip[v7beta1->v6]"]


def test_a_difference_left_over_still_fails_and_says_what_was_accepted() -> None:
    def loses_two(hub: dict[str, Any], version: str) -> dict[str, Any]:
        out = gadgets.from_hub(hub, version)
        spec = out.get("spec", {})
        if version == "v1beta1":
            spec.pop("timeout", None)
            spec.pop("tags", None)
        return out

    entry = Accept(path="spec.timeout", versions="*->v1beta1", why="v1beta1 drops it")
    api = API.from_crd("gadgets", gadgets.CRD, to_hub=gadgets.to_hub, from_hub=loses_two,
                       pipeline="plain", accept=[entry])
    unit = Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1"))
    obj = {"apiVersion": "example.com/v1", "kind": "Gadget",
           "spec": {"timeout": "1s", "tags": ["a"]}}
    used: set[int] = set()
    with pytest.raises(NotEquivalent) as caught:
        check(api, unit, obj, accepted=used)
    assert "spec.tags: lost" in str(caught.value) and "spec.timeout" not in str(caught.value)
    assert "(1 more difference accepted by the API's accept entries)" in str(caught.value)
    assert [c.path for c in caught.value.diff] == ["spec.tags"] and used == {0}
    check(api, unit, {**obj, "spec": {"timeout": "1s"}})  # only the accepted one: passes


def test_valid_accepts_errors_at_an_accepted_path() -> None:
    schemas = {v: {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "n": {"type": "integer", **({"maximum": 9} if v == "v2" else {})},
        "m": {"type": "integer", **({"maximum": 9} if v == "v2" else {})}}}}}
        for v in ("v1", "v2")}

    def make(*accept: Accept) -> API:
        return API.from_schemas("numbers", schemas, convert=lambda o, v: dict(o),
                                accept=list(accept))

    unit = Unit("numbers", "numbers", Property.VALID, ("v1", "v2"))
    obj = {"spec": {"n": 10}}
    with pytest.raises(NotEquivalent, match=r"spec\.n: 10 is greater than the maximum of 9"):
        check(make(), unit, obj)
    check(make(Accept(path="spec.n", versions="v1->v2", why="v2 caps n")), unit, obj)
    with pytest.raises(NotEquivalent, match=r"spec\.m"):
        check(make(Accept(path="spec.n", why="v2 caps n")), unit, {"spec": {"n": 10, "m": 10}})


_NAME = st.from_regex(r"[a-z][a-zA-Z0-9]{0,5}", fullmatch=True)
_KEY = st.sampled_from(["example.com/a", "a.b", "x y", "a]b", ""])
def _spell(path: str, kind: str, value: Any) -> str:
    """Append one step the way diffs print it (semantic._diff.join_name, list indices)."""
    from compatfuzz.semantic._diff import join_name

    return f"{path}[{value}]" if kind == "item" else join_name(path, value)


@given(st.lists(st.tuples(st.sampled_from(["name", "key", "item"]), st.booleans()),
                min_size=1, max_size=5),
       st.lists(_NAME, max_size=2), st.data())
def test_a_glob_matches_the_paths_it_stands_for_and_their_insides(
        shape: list[tuple[str, bool]], inside: list[str], data: st.DataObject) -> None:
    path, glob, parent = "spec", "spec", ""
    for kind, wild in shape:
        value = data.draw(st.integers(0, 9) if kind == "item" else
                          _NAME if kind == "name" else _KEY)
        parent, path = path, _spell(path, kind, value)
        glob = (glob + "[*]" if kind == "item" else glob + ".*" if wild else
                _spell(glob, kind, value))
    entry = Accept(path=glob, why="w")
    assert entry.matches(path)
    deeper = path
    for name in inside:
        deeper = _spell(deeper, "name", name)
    assert entry.matches(deeper)  # a path accepts everything inside the field
    if shape[-1][0] != "item":  # a sibling field: only a wildcard covers it
        assert entry.matches(_spell(parent, "name", "zzOther")) is shape[-1][1]
    assert Accept(path="**", why="w").matches(path)
    assert not Accept(path="status.**", why="w").matches(path)


@pytest.mark.parametrize(("versions", "unit", "expected"), [
    ("v1->v1alpha1", ("v1", "v1alpha1"), True),
    ("*->v1alpha1", ("v1beta1", "v1alpha1"), True),
    ("*->v1alpha1", ("v1alpha1", "v1"), False),
    ("v1,*,v1alpha1", ("v1", "v1beta1", "v1alpha1"), True),
    ("*", ("v1", "v1beta1", "v1alpha1"), True),
])
def test_versions_globs_read_like_unit_names(versions: str, unit: tuple[str, ...],
                                             expected: bool) -> None:
    prop = Property.PATH_INDEPENDENT if len(unit) == 3 else Property.ROUNDTRIP
    entry = Accept(path="spec", why="w", versions=versions)
    assert entry.applies(Unit("a", "K", prop, unit)) is expected


@pytest.mark.parametrize(("options", "message"), [
    ({"path": "spec.x", "why": " "}, "needs a why"),
    ({"path": "spec.x"}, "accept entry has no why"),
    ({"path": "/spec/x", "why": "w"}, "is a JSON Pointer"),
    ({"path": "spec.x", "why": "w", "property": "roundtrp"}, "did you mean 'roundtrip'"),
    ({"path": "spec.x", "why": "w", "versions": "v1=>v2"}, "not a version-pair glob"),
    ({"path": "spec.x", "why": "w", "versions": "v1->v1alpha"}, "did you mean 'v1alpha1'"),
    ({"path": "spec.x", "why": "w", "versions": "v1->v1"}, "matches no unit"),
    ({"path": "spec.x", "why": "w", "reason": "r"}, "unknown key(s) reason"),
])
def test_python_mistakes_raise_invalid_argument(options: dict[str, Any],
                                                message: str) -> None:
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        gadgets.api(accept=[options])  # a dict is read as Accept(**options)
    with pytest.raises(InvalidArgument, match="write stash_annotations="):
        gadgets.api(stash_annotations="example.com/conversion-data")


# -- config -------------------------------------------------------------------------


def _config(tmp_path: Path, accept: str, *, name: str = "compatfuzz.toml",
            table: str = "api") -> Path:
    for file in ("crd.yaml", "lossy.py"):
        shutil.copy(FROBBER / file, tmp_path / file)
    shutil.copy(FROBBER / "conversion.py", tmp_path / "conversion.py")
    head = "[project]\nname = 'x'\n\n" if name == "pyproject.toml" else ""
    text = head + textwrap.dedent(f"""\
        [[{table}]]
        name = "frobber"
        crd = "crd.yaml"
        hub = "internal"
        to_hub = "lossy:to_hub"
        from_hub = "lossy:from_hub"
        stash_annotations = ["frobber.example.com/"]
        """) + textwrap.dedent(accept).replace("[[api.accept]]", f"[[{table}.accept]]")
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path / name


ENTRY = """
    [[api.accept]]
    property = "roundtrip"
    versions = "v7beta1->v6"
    path = "spec.params[*]"
    why = "v6 holds one param"
"""


@pytest.mark.parametrize(("name", "table"), [("compatfuzz.toml", "api"),
                                             ("pyproject.toml", "tool.compatfuzz.api")])
def test_accept_tables_load_from_both_config_files(tmp_path: Path, name: str,
                                                   table: str) -> None:
    (api,) = load_config(_config(tmp_path, ENTRY, name=name, table=table))
    assert isinstance(api, API)
    assert api.accept == (Accept(property="roundtrip", versions="v7beta1->v6",
                                 path="spec.params[*]", why="v6 holds one param"),)
    assert api.stash_annotations == ("frobber.example.com/",)
    assert _failed(_results(api, properties=["roundtrip"])) == {}


@pytest.mark.parametrize(("accept", "pointer", "message", "fix"), [
    ('[[api.accept]]\npaht = "spec.x"\npath = "spec.x"\nwhy = "w"', "$.api[0].accept[0]",
     "unknown key(s) paht in an accept entry", "did you mean 'paht' -> 'path'?"),
    ('[[api.accept]]\npath = "spec.x"', "$.api[0].accept[0]", "accept entry has no why",
     'add why = "'),
    ('[[api.accept]]\npath = "spec.params[0]"\nwhy = "w"', "$.api[0].accept[0].path",
     "selects list index [0]", "spec.params[*]"),
    ('[[api.accept]]\npath = "spec.x"\nwhy = "w"\nversions = "v7beta1=>v6"',
     "$.api[0].accept[0].versions", "not a version-pair glob", '"*->v1alpha1"'),
    ('[[api.accept]]\npath = "spec.x"\nwhy = "w"\nproperty = "rondtrip"',
     "$.api[0].accept[0].property", "names no property", "did you mean 'roundtrip'?"),
    (ENTRY + '[[api.accept]]\npath = "spec.x"\nwhy = "w"\nversions = "v7->v6"',
     "$.api[0].accept[1].versions", "'v7', which is not a version of API 'frobber'",
     "did you mean 'v7beta1'? the versions are: v6, v7beta1"),
    ('[[api.accept]]\npath = "spec.x"\nreason = "w"', "$.api[0].accept[0]",
     "unknown key(s) reason in an accept entry", "did you mean 'reason' -> 'why'?"),
    ('[api.accept]\npath = "spec.x"\nwhy = "w"', "$.api[0].accept",
     "accept must be an array of tables", "[[api.accept]]"),
])
def test_config_mistakes_name_the_key_and_the_fix(tmp_path: Path, accept: str, pointer: str,
                                                  message: str, fix: str) -> None:
    config = _config(tmp_path, accept)
    with pytest.raises(SchemaLoadError) as caught:
        load_config(config)
    text = str(caught.value)
    assert text.startswith(f"{config} at {pointer}: "), text
    assert message in caught.value.reason and fix in caught.value.hint, text


def test_stash_annotations_must_be_a_list(tmp_path: Path) -> None:
    config = _config(tmp_path, "")
    config.write_text(config.read_text().replace('["frobber.example.com/"]',
                                                 '"frobber.example.com/"'))
    with pytest.raises(SchemaLoadError, match=r"at \$\.api\[0\]\.stash_annotations: "
                                              r"stash_annotations must be a list"):
        load_config(config)


# -- reports ------------------------------------------------------------------------


def test_accepted_and_stale_entries_in_the_run_summary() -> None:
    entries = [Accept(property="roundtrip", versions="v7beta1->v6", path="spec.params[*]",
                      why="one param"),
               Accept(versions="*->v6", path="spec.widthInInches", why="rounded once")]
    events = list(run(_lossy(accept=entries), database="none", seed=3, max_examples=30))
    started = events[0]
    assert isinstance(started, RunStarted)
    assert [e["index"] for e in started.accept] == [0, 1]
    results = [e.result for e in events if isinstance(e, UnitFinished)]
    accepted, stale = accept_summary(started.accept, results)
    assert [(a["path"], a["units"]) for a in accepted] == [
        ("spec.params[*]", ["frobber::roundtrip[v7beta1->v6]"])]
    assert [(s["path"], len(s["units"])) for s in stale] == [("spec.widthInInches", 3)]
    # an entry covering no unit that ran is not stale: it was not exercised
    narrowed = [r for r in results if r.unit.property is Property.ROUNDTRIP]
    assert [s["path"] for s in accept_summary(started.accept, narrowed)[1]] == [
        "spec.widthInInches"]
    assert accept_summary(started.accept, [r for r in results
                                           if r.unit.versions[1] != "v6"])[1] == []
    # a unit that failed stopped early, maybe before the entry's difference could show:
    # not evidence that the entry is stale
    failed = [dataclasses.replace(r, status=Status.FAILED) for r in results]
    assert accept_summary(started.accept, failed)[1] == []
