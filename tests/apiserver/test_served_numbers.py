"""A whole float comes back from the API server as an int (encoding/json's floatEncoder
writes its shortest digits without a point below 1e21), issue 18: found by the real
server in Tekton Task's ``x-kubernetes-preserve-unknown-fields`` values."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.roundtrip import API, Property, Unit
from compatfuzz.roundtrip._check._both import BothBackend
from compatfuzz.roundtrip._check._properties import served
from compatfuzz.roundtrip._check._real import RealBackend

CRD = Path(__file__).parent / "data" / "ratchet.yaml"
NUMBERS = {"big": 4.443663336611346e16, "two": 2.0, "minus_zero": -0.0, "half": 0.5,
           "huge": 1e21, "tiny": 1.5e-7, "int": 44436633366113459}


def _api() -> API:
    return API.from_crd("ratchet", CRD, convert=lambda obj, v: {**obj, "apiVersion": v})


def _widget(free: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "ratchet.example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"free": free}}


def test_whole_floats_below_1e21_are_read_back_as_go_writes_them() -> None:
    server = _api().server(_api().kind("Widget"))
    seen = server.read(server.write(_widget(dict(NUMBERS)), "v1"), "v1")["spec"]["free"]
    assert seen == {"big": 44436633366113460, "two": 2, "minus_zero": 0, "half": 0.5,
                    "huge": 1e21, "tiny": 1.5e-7, "int": 44436633366113459}
    assert [type(seen[k]) for k in ("big", "two", "minus_zero", "huge")] == [
        int, int, int, float]


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_served_number_is_the_same_float64(x: float) -> None:
    server = _api().server(_api().kind("Widget"))
    got = server.accept(_widget({"x": x}), "v1")["spec"]["free"]["x"]
    assert float(got) == x
    assert isinstance(got, int) == (x.is_integer() and abs(x) < 1e21)
    assert not (isinstance(got, float) and got.is_integer() and abs(got) < 1e21)
    assert math.copysign(1, x) == math.copysign(1, got) or got == 0


def test_the_model_and_the_server_agree_on_whole_floats(real_endpoint: Endpoint) -> None:
    backend = RealBackend(_api(), real_endpoint)
    try:
        for unit in (Unit("ratchet", "Widget", Property.ROUNDTRIP, ("v1", "v2")),
                     Unit("ratchet", "Widget", Property.ROUNDTRIP, ("v1", "v1"))):
            # raises Disagreement where the model keeps a float the server writes as int
            served(BothBackend(backend), unit, _widget({"a": "x", **NUMBERS}))
    finally:
        backend.close()
