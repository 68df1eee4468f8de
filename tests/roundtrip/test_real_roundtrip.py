"""Round trips through a real kube-apiserver and etcd (issue 18): the Frobber example's
sound converter passes, its lossy one is caught, a raising converter's own message comes
back through the server, and a CRD the server refuses says why."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from compatfuzz.apiserver._admission import CRDRefused as AdmissionRefused
from compatfuzz.apiserver._real._backend import CRDRefused
from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.errors import ConverterError, NotEquivalent
from compatfuzz.roundtrip import API
from compatfuzz.roundtrip._check._config import load_config
from compatfuzz.roundtrip._check._properties import served, strategy_for
from compatfuzz.roundtrip._check._real import RealBackend
from compatfuzz.roundtrip._events import Property, Unit
from compatfuzz.schema import load_crds

FROBBER = Path(__file__).resolve().parents[2] / "examples" / "frobber"


#: valid for compatfuzz's loader, refused by apiextensions.k8s.io/v1: a default that
#: its own schema rejects (validation.go: "must be of type integer")
REFUSED_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: "big"}
"""


def _fuzz(backend: RealBackend, prop: Property, a: str, b: str, examples: int, *,
          shrink: bool = True) -> list[Any]:
    """Run ``prop[a->b]`` through the server; return the minimal failing example (or [])."""
    api = backend.api
    kind = api.kinds[0]
    unit = Unit(api=api.name, kind=kind.name, property=prop, versions=(a, b))
    failing: list[Any] = []

    phases = list(Phase) if shrink else [Phase.explicit, Phase.generate]

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck), phases=phases)
    @given(strategy_for(api, kind, a))
    def run(obj: Any) -> None:
        try:
            served(backend, unit, obj)
        except (NotEquivalent, ConverterError):
            failing[:] = [obj]
            raise

    try:
        run()
    except (NotEquivalent, ConverterError) as exc:
        failing.append(exc)
    return failing


def _backend(config: str, endpoint: Endpoint) -> RealBackend:
    return RealBackend(load_config(FROBBER / config)[0], endpoint)


def test_the_sound_frobber_converter_passes_through_the_real_server(
        real_endpoint: Endpoint) -> None:
    backend = _backend("compatfuzz.toml", real_endpoint)
    try:
        for prop, a, b in [(Property.ROUNDTRIP, "v7beta1", "v6"),
                           (Property.ROUNDTRIP, "v6", "v7beta1"),
                           (Property.VALID, "v7beta1", "v6")]:
            assert _fuzz(backend, prop, a, b, 15) == [], (prop, a, b)
        assert backend.webhook.calls > 0  # the server really called our webhook
    finally:
        backend.close()


def test_the_lossy_frobber_is_caught_through_the_real_server(
        real_endpoint: Endpoint) -> None:
    backend = _backend("lossy.toml", real_endpoint)
    try:
        failing = _fuzz(backend, Property.ROUNDTRIP, "v7beta1", "v6", 50)
    finally:
        backend.close()
    assert failing, "the lossy converter drops params[1:] on the way into storage (v6)"
    obj, exc = failing
    assert len(obj["spec"]["params"]) == 2  # shrunk to the two-param object
    assert "spec.params[1]" in str(exc)
    assert "through the real API server (stored as v6)" in str(exc)


def test_a_raising_converter_s_message_comes_back_through_the_server(
        real_endpoint: Endpoint) -> None:
    import conversion  # examples/frobber, on sys.path after load_config

    def to_hub(obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("spec", {}).get("params"):
            raise ValueError("cannot convert params yet")
        out: dict[str, Any] = conversion.to_hub(obj)
        return out

    good = load_config(FROBBER / "compatfuzz.toml")[0]
    api = API("frobber", good.kinds, hub="internal", to_hub=to_hub,
              from_hub=conversion.from_hub)
    backend = RealBackend(api, real_endpoint)
    try:
        failing = _fuzz(backend, Property.ROUNDTRIP, "v7beta1", "v6", 100, shrink=False)
    finally:
        backend.close()
    assert failing
    exc = failing[-1]
    assert isinstance(exc, ConverterError)
    assert "cannot convert params yet" in str(exc)
    assert "conversion webhook" in str(exc)
    from compatfuzz.roundtrip._check._usercode import find_user_traceback

    # the converter's own frames, as in model mode, though it ran in the webhook
    assert 'raise ValueError("cannot convert params yet")' in find_user_traceback(exc)


def test_a_crd_the_server_refuses_says_why(real_endpoint: Endpoint, tmp_path: Path) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(REFUSED_CRD)
    # compatfuzz refuses it at the door (``apiserver._admission``) with the server's words
    with pytest.raises(AdmissionRefused, match=r"properties\[size\]\.default: Invalid value"):
        API.from_crd("gadgets", crd, convert=lambda obj, version: obj)
    # the real server's own refusal, for a CRD built in memory (no document to validate)
    crds = [dataclasses.replace(c, document=None) for c in load_crds(crd)]
    api = API.from_crd("gadgets", crds, convert=lambda obj, version: obj)
    with pytest.raises(CRDRefused) as info:
        RealBackend(api, real_endpoint)
    # nothing left listening on the webhook port: it would answer the next backend's
    # reviews (with REUSEPORT the kernel shares connections between the two). A connection
    # asks exactly that; binding would also fail on an earlier test's TIME_WAIT connections
    import errno
    import socket

    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", real_endpoint.webhook_port)) == errno.ECONNREFUSED
    text = str(info.value)
    assert "gadgets.example.com" in text
    assert "spec.size" in text or "size" in text
    assert "fix:" in text
