"""An unchanged update under validation ratcheting (apiextensions-apiserver
``pkg/apiserver/validation/ratcheting.go``): errors in parts equal to the stored object
are dropped, so a B client writing back what it read is refused only for what is found at
the root (a missing required ``spec``) or under allOf/oneOf/anyOf/not. The model
(``update_errors``) against the real kube-apiserver, which the benchmark caught the model
disagreeing with twice: first for not validating the update at all, then for refusing a
missing ``spec.a`` that the server ratchets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.apiserver import APIServer
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.errors import NotEquivalent
from compatfuzz.roundtrip import API
from compatfuzz.roundtrip._check._both import BothBackend
from compatfuzz.roundtrip._check._properties import check, served
from compatfuzz.roundtrip._check._real import RealBackend
from compatfuzz.roundtrip._events import Property, Unit

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ratchets.example.com}
spec:
  group: example.com
  names: {plural: ratchets, singular: ratchet, kind: Ratchet}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string}
              b: {type: integer}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [a]
            properties:
              a: {type: string}
              b: {type: integer, maximum: 5}
"""


def _api(tmp_path: Path) -> API:
    path = tmp_path / "crd.yaml"
    path.write_text(CRD)
    return API.from_crd("ratchets", path, convert=lambda o, v: {**o, "apiVersion": v})


UNIT = Unit("ratchets", "Ratchet", Property.ROUNDTRIP, ("v1", "v2"))
REFUSED = {"apiVersion": "example.com/v1", "kind": "Ratchet"}  # no spec: root required
RATCHETED = [{"apiVersion": "example.com/v1", "kind": "Ratchet", "spec": {}},  # no spec.a
             {"apiVersion": "example.com/v1", "kind": "Ratchet", "spec": {"a": "", "b": 9}}]


def test_the_model_refuses_only_what_ratcheting_keeps(tmp_path: Path) -> None:
    api = _api(tmp_path)
    with pytest.raises(NotEquivalent, match=r"cannot write it back unchanged(.|\n)*'spec' is "
                                            "a required property"):
        check(api, UNIT, REFUSED)
    for obj in RATCHETED:
        check(api, UNIT, obj)  # unchanged parts with errors: ratcheted


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 9) | st.text(max_size=3)))
def test_errors_inside_an_unchanged_spec_never_block_the_update(spec: dict[str, Any]) -> None:
    import tempfile

    from compatfuzz.schema import load_crds

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "crd.yaml"
        path.write_text(CRD)
        (crd,) = load_crds(path)
    v2 = next(v for v in crd.versions if v.name == "v2").schema
    server = APIServer({"v2": v2}, storage="v2", convert=lambda o, a, b: o,
                       api_version=lambda v: f"example.com/{v}")
    obj = {"apiVersion": "example.com/v2", "kind": "Ratchet", "spec": spec}
    assert server.update_errors(obj, "v2") == []
    assert server.update_errors({"apiVersion": "example.com/v2", "kind": "Ratchet"}, "v2")


def test_the_real_server_agrees(real_endpoint: Endpoint, tmp_path: Path) -> None:
    backend = RealBackend(_api(tmp_path), real_endpoint)
    try:
        with pytest.raises(NotEquivalent) as info:
            served(BothBackend(backend), UNIT, REFUSED)  # both refuse: not a Disagreement
        assert "cannot write it back unchanged" in str(info.value)
        assert type(info.value) is NotEquivalent
        for obj in RATCHETED:
            served(BothBackend(backend), UNIT, obj)
    finally:
        backend.close()
