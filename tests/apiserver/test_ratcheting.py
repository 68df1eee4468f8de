"""What validation ratcheting excuses on an unchanged update (issue 18).

Written in v1 (the storage version) and read by a v2 client, whose schema is stricter, an
object is written back unchanged: the server refuses it only for errors on values it
cannot correlate with the old object (``ratchetingValueValidator.Validate`` in
apiextensions-apiserver ``pkg/apiserver/validation/ratcheting.go``,
``CorrelatedObject`` in k8s.io/apiserver ``pkg/cel/common/equality.go``). The model's
answer (``APIServer.update_errors``) is checked alone, and against a real kube-apiserver
where one can run (``--apiserver both`` semantics: a ``Disagreement`` fails the test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.apiserver._real._process import Endpoint
from compatfuzz.errors import Disagreement, NotEquivalent
from compatfuzz.roundtrip import API, Property, Unit
from compatfuzz.roundtrip._check._both import BothBackend
from compatfuzz.roundtrip._check._properties import served
from compatfuzz.roundtrip._check._real import RealBackend

CRD = Path(__file__).parent / "data" / "ratchet.yaml"


def _api() -> API:
    return API.from_crd("ratchet", CRD,
                        convert=lambda obj, v: {**obj, "apiVersion": v})


def _widget(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "ratchet.example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": spec}


#: (spec written in v1, whether a v2 client's unchanged update is refused)
CASES = {
    # the value holding the error is unchanged and correlated: excused
    "missing required field": ({"ref": {"name": "x"}}, False),
    "failed CEL rule": ({"ref": {"name": "bad", "group": "g"}}, False),
    "too long under a plain list": ({"plain": [{"n": "long"}]}, False),
    "failed CEL rule under a plain list": ({"plain": [{"n": "bad"}]}, False),
    # an item of an atomic list is not correlated: its errors rise to the list, which
    # is unchanged, so excused as well
    "too long under an atomic list": ({"atomic": [{"n": "long"}]}, False),
    "failed CEL rule under an atomic list": ({"atomic": [{"n": "bad"}]}, False),
    # a value holding an undeclared (preserved) field never compares equal
    "missing required beside an unknown field": ({"free": {"x": "1"}}, True),
    "missing required without one": ({"free": {}}, False),
    # v1's map under v2's list rule: the type error is excused, the rule then fails to
    # evaluate ("invalid data, expected an array"), which is never excused
    "a rule that cannot evaluate": ({"args": {"k": "v"}}, True),
    # v1's plain list is a map list in v2: an item is correlated with the first old item
    # of its key, so a duplicate's error is excused only when it equals that first item
    "too long in a map list item": ({"conditions": [{"type": "a", "reason": "long"}]},
                                    False),
    "too long in a duplicate map list item": (
        {"conditions": [{"type": "a"}, {"type": "a", "reason": "long"}]}, True),
    "too long in an identical duplicate": (
        {"conditions": [{"type": "a", "reason": "long"}, {"type": "a", "reason": "long"}]},
        False),
    # v2 defaults a field the stored (v1) object lacks: the request is not unchanged
    # there, so its missing required field is not excused
    "missing required beside a v2 default": ({"defaulted": {}}, True),
}


def _model_refuses(api: API, spec: dict[str, Any]) -> list[str]:
    server = api.server(api.kind("Widget"))
    seen = server.read(server.store(_widget(spec), "v1"), "v2")
    return server.update_errors(seen, "v2")


@pytest.mark.parametrize("case", list(CASES))
def test_the_model_refuses_an_unchanged_update_only_where_ratcheting_cannot_excuse(
        case: str) -> None:
    spec, refused = CASES[case]
    errors = _model_refuses(_api(), spec)
    assert bool(errors) is refused, errors


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=6), st.booleans())
def test_a_correlated_unchanged_value_is_always_excused(name: str, group: bool) -> None:
    ref: dict[str, Any] = {"name": name, **({"group": "g"} if group else {})}
    assert _model_refuses(_api(), {"ref": ref, "plain": [{"n": name}]}) == []


@pytest.mark.parametrize("case", list(CASES))
def test_the_model_and_the_server_agree_on_an_unchanged_update(
        real_endpoint: Endpoint, case: str) -> None:
    spec, refused = CASES[case]
    backend = RealBackend(_api(), real_endpoint)
    unit = Unit("ratchet", "Widget", Property.ROUNDTRIP, ("v1", "v2"))
    try:
        served(BothBackend(backend), unit, _widget(spec))
    except Disagreement as exc:  # pragma: no cover - what this test guards against
        pytest.fail(f"{case}: {exc}")
    except NotEquivalent as exc:  # both refuse: the server's words
        assert refused, exc
        assert "the real API server refuses the update" in str(exc)
    else:
        assert not refused, f"{case}: the server took it"
    finally:
        backend.close()
