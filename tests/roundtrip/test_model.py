"""The API model: converter forms, chaining, argument validation, unit enumeration."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import ConverterError, InvalidArgument
from compatfuzz.roundtrip import API, Kind, Property, units
from compatfuzz.schema import Schema

GROUP = "demo.example.com"


def _schema(version: str) -> Schema:
    return Schema({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "spec": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
        name=f"Demo {version}")


def _kind(versions: list[str]) -> Kind:
    return Kind("Demo", {v: _schema(v) for v in versions}, group=GROUP, hub=versions[-1])


def _relabel(obj: dict[str, Any], version: str) -> dict[str, Any]:
    return {**obj, "apiVersion": f"{GROUP}/{version}"}


objects = st.builds(
    lambda n: {"apiVersion": f"{GROUP}/v1", "kind": "Demo", "spec": {"n": n}},
    st.integers(),
)


@given(obj=objects, target=st.sampled_from(["v1", "v2", "v3"]))
def test_all_converter_forms_agree(obj: dict[str, Any], target: str) -> None:
    calls: list[str] = []

    def convert(o: dict[str, Any], desired: str) -> dict[str, Any]:
        calls.append(desired)
        return {**o, "apiVersion": desired}

    def to_hub(o: dict[str, Any]) -> dict[str, Any]:
        return {**o, "apiVersion": "internal"}

    def from_hub(h: dict[str, Any], version: str) -> dict[str, Any]:
        return _relabel(h, version)

    pairs = {(a, b): (lambda o, b=b: _relabel(o, b))
             for a, b in [("v1", "v2"), ("v2", "v3"), ("v3", "v2"), ("v2", "v1")]}
    kind = _kind(["v1", "v2", "v3"])
    forms = [
        API("demo", [kind], convert=convert),
        API("demo", [kind], hub="internal", to_hub=to_hub, from_hub=from_hub),
        API("demo", [kind], converters=pairs),
    ]
    results = [api.convert("Demo", dict(obj), "v1", target) for api in forms]
    assert all(r == results[0] for r in results)
    assert results[0]["apiVersion"] == f"{GROUP}/{target}"
    if target != "v1":
        assert calls == [f"{GROUP}/{target}"]  # ConversionReview style gets the apiVersion


def test_pair_converters_chain_through_shortest_path() -> None:
    seen: list[tuple[str, str]] = []

    def step(a: str, b: str) -> Any:
        def f(o: dict[str, Any]) -> dict[str, Any]:
            seen.append((a, b))
            return _relabel(o, b)
        return f

    pairs = {(a, b): step(a, b) for a, b in
             [("v1", "v2"), ("v2", "v3"), ("v3", "v2"), ("v2", "v1")]}
    api = API("demo", [_kind(["v1", "v2", "v3"])], converters=pairs)
    out = api.convert("Demo", {"apiVersion": f"{GROUP}/v1", "kind": "Demo"}, "v1", "v3")
    assert out["apiVersion"] == f"{GROUP}/v3"
    assert seen == [("v1", "v2"), ("v2", "v3")]


def test_hub_version_skips_the_identity_step() -> None:
    to_hub_calls: list[str] = []

    def to_hub(o: dict[str, Any]) -> dict[str, Any]:
        to_hub_calls.append(o["apiVersion"])
        return _relabel(o, "v2")

    api = API("demo", [_kind(["v1", "v2"])], to_hub=to_hub,
              from_hub=_relabel)
    api.convert("Demo", {"apiVersion": f"{GROUP}/v2", "kind": "Demo"}, "v2", "v1")
    assert to_hub_calls == []  # v2 is the storage version, i.e. the hub
    api.convert("Demo", {"apiVersion": f"{GROUP}/v1", "kind": "Demo"}, "v1", "v2")
    assert to_hub_calls == [f"{GROUP}/v1"]


def test_missing_chain_is_reported_at_construction() -> None:
    with pytest.raises(InvalidArgument, match=r"no chain of converters leads from v2 to v1"):
        API("demo", [_kind(["v1", "v2"])],
            converters={("v1", "v2"): lambda o: _relabel(o, "v2")})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "has no converter"),
    ({"convert": "mod:f"}, r"Expected a function for convert but got convert='mod:f'"),
    ({"to_hub": lambda o: o}, "to_hub and from_hub go together"),
    ({"convert": lambda o, v: o, "to_hub": lambda o: o, "from_hub": lambda h, v: h},
     "not both"),
    ({"converters": {("v1", "v9"): lambda o: o}}, r"not a pair of known versions"),
    ({"convert": lambda o, v: o, "defaulters": {"v9": lambda o: o}},
     "defaulters key 'v9' is not a version"),
])
def test_bad_arguments_name_the_mistake(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        API("demo", [_kind(["v1", "v2"])], **kwargs)


def test_converter_failures_are_wrapped_with_the_step() -> None:
    def convert(o: dict[str, Any], v: str) -> dict[str, Any]:
        raise KeyError("spec")

    api = API("demo", [_kind(["v1", "v2"])], convert=convert)
    with pytest.raises(ConverterError, match=r"convert\(\) raised KeyError.*Demo v1 -> v2"):
        api.convert("Demo", {"apiVersion": f"{GROUP}/v1"}, "v1", "v2")


def test_converter_must_set_api_version_and_return_a_dict() -> None:
    api = API("demo", [_kind(["v1", "v2"])], convert=lambda o, v: o)
    with pytest.raises(ConverterError, match=r"returned apiVersion '.*/v1', expected '.*/v2'"):
        api.convert("Demo", {"apiVersion": f"{GROUP}/v1"}, "v1", "v2")
    api = API("demo", [_kind(["v1", "v2"])], convert=lambda o, v: [o])
    with pytest.raises(ConverterError, match="returned list"):
        api.convert("Demo", {"apiVersion": f"{GROUP}/v1"}, "v1", "v2")


@given(n=st.integers(2, 5), defaulted=st.sets(st.integers(0, 4)))
def test_units_cover_every_ordered_pair_once(n: int, defaulted: set[int]) -> None:
    versions = [f"v{i}" for i in range(n)]
    defaulters = {versions[i]: (lambda o: o) for i in defaulted if i < n}
    api = API("demo", [_kind(versions)], convert=lambda o, v: o, defaulters=defaulters)
    all_units = units(api)
    ids = [u.id for u in all_units]
    assert len(ids) == len(set(ids))
    by_prop: dict[Property, list[tuple[str, ...]]] = {}
    for u in all_units:
        by_prop.setdefault(u.property, []).append(u.versions)
    pairs = {(a, b) for a in versions for b in versions if a != b}
    for prop in (Property.ROUNDTRIP, Property.VALID, Property.NO_MUTATION):
        assert set(by_prop[prop]) == pairs
        assert len(by_prop[prop]) == n * (n - 1)
    assert len(by_prop.get(Property.PATH_INDEPENDENT, [])) == n * (n - 1) * (n - 2)
    assert {v for (v,) in by_prop.get(Property.DEFAULT_IDEMPOTENT, [])} == set(defaulters)
    assert set(by_prop.get(Property.DEFAULT_COMMUTES, [])) == {
        p for p in pairs if set(p) & set(defaulters)}


def test_unit_ids_are_readable_and_name_the_kind_only_when_needed() -> None:
    api = API("widgets", [_kind(["v1alpha1", "v1"])], convert=lambda o, v: o)
    assert "widgets::roundtrip[v1alpha1->v1]" in [u.id for u in units(api)]
    two = API("widgets", [_kind(["v1alpha1", "v1"]),
                          Kind("Other", {"v1alpha1": _schema("a"), "v1": _schema("b")})],
              convert=lambda o, v: o)
    assert "widgets::Other::valid[v1->v1alpha1]" in [u.id for u in units(two)]


def test_a_validity_failure_is_labelled_not_valid_not_not_equivalent() -> None:
    """A ``valid`` unit's failure was reported as ``NotEquivalent:``, a difference; it is
    the converted object that is invalid (still a ``NotEquivalent``, for callers that
    catch that)."""
    from compatfuzz.errors import NotEquivalent, NotValid
    from compatfuzz.roundtrip import API, Property, Status, Unit, UnitFinished, run
    from tests.roundtrip import gadgets

    def from_hub(hub: dict[str, Any], version: str) -> dict[str, Any]:
        out = gadgets.from_hub(hub, version)
        out.setdefault("spec", {})["params"] = "not a list"
        return out

    api = API.from_crd("gadgets", gadgets.CRD, to_hub=gadgets.to_hub, from_hub=from_hub)
    [result] = [e.result for e in run(api, properties=["valid"], database="none", seed=1,
                                      max_examples=20)
                if isinstance(e, UnitFinished) and e.result.unit.versions == ("v1", "v1beta1")]
    assert result.status is Status.FAILED
    assert result.counterexample is not None
    assert result.counterexample.error_type == "NotValid"
    assert issubclass(NotValid, NotEquivalent)
    assert Unit and Property  # the public names this test reads
