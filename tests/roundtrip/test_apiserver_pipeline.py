"""Round trips judged as a real API server would: the three-version Gadget CRD.

The issue behind this (API-server fidelity): a correct converter must pass every
property, a converter that drops empty lists must pass too (a server cannot tell), and a
converter that leaves a field in a version whose schema does not declare it must fail,
naming the hop that pruned it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from compatfuzz.roundtrip import API, Status
from tests.roundtrip import gadgets
from tests.roundtrip._units import failed as _failed
from tests.roundtrip._units import results as _results


def test_a_crd_is_judged_through_the_api_server_model() -> None:
    api = gadgets.api()
    assert api.pipeline == "apiserver"
    assert api.server(api.kinds[0]).storage == "v1"


@pytest.mark.parametrize("converter", ["correct",
                                       pytest.param("drop-empty", marks=pytest.mark.slow)])
def test_sound_converters_pass_every_property(converter: str) -> None:
    results = _results(gadgets.api(converter))
    assert len(results) == 24  # 6 pairs x roundtrip/valid/no_mutation + 6 paths
    assert _failed(results) == {}


def test_an_unstashed_field_is_lost_where_the_server_prunes_it() -> None:
    failed = _failed(_results(gadgets.api("unstashed"), properties=["roundtrip"]))
    message = failed["roundtrip[v1->v1beta1]"]
    assert "spec.note: lost" in message
    assert "spec.note: pruned when the converter's v1beta1 output was decoded " \
           "(not in v1beta1's schema)" in message
    # ...and compared as plain dicts the same converter passes: the bug the model finds
    plain = _failed(_results(gadgets.api("unstashed", pipeline="plain"),
                             properties=["roundtrip"]))
    assert "roundtrip[v1->v1beta1]" not in plain


def test_a_changed_uid_is_a_rejected_conversion_response() -> None:
    failed = _failed(_results(gadgets.api("uid-changer"), examples=5))
    message = failed["roundtrip[v1->v1beta1]"]
    assert "ConverterError" in message
    assert "the API server rejects the converter's v1 -> v1beta1 response: metadata.uid: " \
           "must have the same uid" in message


def test_metadata_other_than_labels_and_annotations_is_put_back() -> None:
    failed = _failed(_results(gadgets.api("finalizer-stash")))
    message = failed["roundtrip[v1->v1beta1]"]
    assert "spec.note: lost" in message
    assert "metadata.finalizers: changed by the converter converting v1 -> v1beta1, put " \
           "back by the API server" in message


def test_a_default_the_reading_version_does_not_share_is_reported(tmp_path: Path) -> None:
    docs = yaml.safe_load(gadgets.CRD.read_text())
    versions = {v["name"]: v for v in docs["spec"]["versions"]}
    spec = versions["v1beta1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec["properties"]["replicas"]["default"]  # v1beta1: unset means "auto"
    crd = tmp_path / "crd.yaml"
    crd.write_text(yaml.safe_dump(docs))
    api = API.from_crd("gadgets", crd, to_hub=gadgets.to_hub, from_hub=gadgets.from_hub)
    failed = _failed(_results(api, examples=100, properties=["roundtrip"]))
    message = failed["roundtrip[v1beta1->v1]"]
    assert "spec.replicas: defaulted to 1 by v1's schema when the stored v1 object was read" \
        in message


def test_path_independence_compares_what_the_hub_stores() -> None:
    # DROP_EMPTY writes its stash JSON compactly and CORRECT with spaces; mixing them
    # changes only the annotation's spelling, which every path reads back the same.
    mixed = API.from_crd(
        "gadgets", gadgets.CRD, to_hub=gadgets.to_hub,
        from_hub=lambda h, v: gadgets.from_hub(h, v, compact=v == "v1alpha1"
                                               and len(h.get("spec", {}).get("params", [])) > 2))
    results = _results(mixed, examples=100, properties=["path_independent"])
    assert _failed(results) == {}


def test_a_renamed_field_shows_where_it_was_pruned(tmp_path: Path) -> None:
    def misspelt(hub: dict[str, Any], version: str) -> dict[str, Any]:
        out = gadgets.from_hub(hub, version)
        spec = out.get("spec")
        if version == "v1beta1" and isinstance(spec, dict) and "params" in spec:
            spec["paramList"] = spec.pop("params")
        return out

    api = API.from_crd("gadgets", gadgets.CRD, to_hub=gadgets.to_hub, from_hub=misspelt)
    failed = _failed(_results(api, examples=100, properties=["roundtrip"],
                              only=["gadgets::roundtrip[v1->v1beta1]"]))
    message = failed["roundtrip[v1->v1beta1]"]
    assert "spec.params" in message and "a field written under another name?" in message
    assert "spec.paramList: pruned when the converter's v1beta1 output was decoded" in message


def test_duplicates_in_a_set_fail_valid() -> None:
    def doubled(hub: dict[str, Any], version: str) -> dict[str, Any]:
        out = gadgets.from_hub(hub, version)
        tags = out.get("spec", {}).get("tags")
        if version == "v1beta1" and tags:
            tags.append(tags[0])
        return out

    api = API.from_crd("gadgets", gadgets.CRD, to_hub=gadgets.to_hub, from_hub=doubled)
    failed = _failed(_results(api, examples=100, properties=["valid"],
                              only=["gadgets::valid[v1->v1beta1]"]))
    assert "Duplicate value" in failed["valid[v1->v1beta1]"]


def test_opting_a_non_structural_schema_in_warns() -> None:
    from compatfuzz.errors import CompatfuzzWarning

    loose = {"type": "object", "properties": {"x": {"oneOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]}}}
    with pytest.warns(CompatfuzzWarning, match="not a structural schema"):
        API.from_schemas("loose", {"v1": loose, "v2": loose}, convert=lambda o, v: o,
                         hub="v2", pipeline="apiserver")


def test_a_generated_object_the_model_refuses_is_compatfuzzs_fault_not_the_converters(
) -> None:
    # issue 17: a lower-case deletionTimestamp (strfmt takes it, metav1.Time does not) was
    # reported as a ConverterError of the identity converter
    from compatfuzz.errors import ConverterError, InternalError
    from compatfuzz.roundtrip import Property, Unit, check

    api = gadgets.api()
    obj = {"apiVersion": "example.com/v1beta1", "kind": "Gadget",
           "metadata": {"name": "a", "deletionTimestamp": "2026-01-02t03:04:05z"}}
    for prop, versions in ((Property.ROUNDTRIP, ("v1beta1", "v1alpha1")),
                           (Property.VALID, ("v1beta1", "v1alpha1")),
                           (Property.PATH_INDEPENDENT, ("v1beta1", "v1alpha1", "v1"))):
        with pytest.raises(InternalError) as info:
            check(api, Unit("gadgets", "Gadget", prop, versions), obj)
        assert not isinstance(info.value, ConverterError)
        message = str(info.value)
        assert "metadata.deletionTimestamp" in message and "2026-01-02t03:04:05z" in message
        assert "compatfuzz bug" in message and "not your converter's" in message


def test_an_internal_error_ends_the_unit_as_an_error() -> None:
    from hypothesis import strategies as st

    from compatfuzz.strategies import clear_registry, register_path

    register_path("metadata", st.just({"name": "a", "deletionTimestamp": "2026-01-02t03:04:05z"}))
    try:
        results = _results(gadgets.api(), examples=3, properties=["roundtrip"])
    finally:
        clear_registry()
    assert results
    for result in results.values():
        assert result.status is Status.ERROR  # the CLI's exit 2, not a failed property (1)
        assert result.message.startswith("InternalError: gadgets: compatfuzz generated")
