"""One property sequence on any backend, one converter interface (docs/architecture.md).

A backend that records the requests a property sends shows that each property is the
same sequence of client steps whoever answers; a converter of a kind compatfuzz does not
ship plugs in through ``API(converter=...)``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, NotEquivalent
from compatfuzz.roundtrip import API, Property, Unit, check
from compatfuzz.roundtrip._check._backend import ModelBackend, Session
from compatfuzz.roundtrip._check._converter import Converter, WebhookAddress
from compatfuzz.roundtrip._check._properties import served, strategy_for
from tests.roundtrip import gadgets

OBJ = {"apiVersion": "example.com/v1", "kind": "Gadget",
       "metadata": {"name": "g"}, "spec": {"params": ["x"], "note": "n"}}


class _Recording:
    """Each request of a session, as ``(what, version)``, passed on to the model."""

    def __init__(self, inner: Session, log: list[tuple[str, str]]) -> None:
        self.inner = inner
        self.log = log
        self.judge = inner.judge
        self.storage = inner.storage
        self.trace = inner.trace

    def name(self) -> str:
        return self.inner.name()

    def prepare(self, obj: dict[str, Any], name: str) -> dict[str, Any]:
        return self.inner.prepare(obj, name)

    def create(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        self.log.append(("create", version))
        return self.inner.create(name, obj, version)

    def get(self, name: str, version: str) -> dict[str, Any]:
        self.log.append(("get", version))
        return self.inner.get(name, version)

    def update(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        self.log.append(("update", version))
        return self.inner.update(name, obj, version)


class RecordingBackend:
    """A backend compatfuzz does not ship: the model, with every request written down."""

    def __init__(self, api: API) -> None:
        self.api = api
        self.model = ModelBackend(api)
        self.log: list[tuple[str, str]] = []

    @contextlib.contextmanager
    def session(self, kind: Any, unit: Unit, obj: Any) -> Iterator[_Recording]:
        with self.model.session(kind, unit, obj) as inner:
            yield _Recording(inner, self.log)


@pytest.mark.parametrize(("prop", "versions", "steps"), [
    (Property.ROUNDTRIP, ("v1beta1", "v1alpha1"),
     [("create", "v1beta1"), ("get", "v1alpha1"), ("update", "v1alpha1"),
      ("get", "v1beta1")]),
    (Property.VALID, ("v1beta1", "v1alpha1"),
     [("create", "v1beta1"), ("get", "v1alpha1"), ("create", "v1alpha1")]),
    (Property.PATH_INDEPENDENT, ("v1beta1", "v1alpha1", "v1"),
     [("create", "v1beta1"), ("create", "v1beta1"), ("get", "v1alpha1"),
      ("update", "v1alpha1"), ("get", "v1"), ("get", "v1"), ("update", "v1"),
      ("update", "v1"), ("get", "v1"), ("get", "v1")]),
])
def test_a_property_is_the_same_client_steps_on_a_new_backend(
        prop: Property, versions: tuple[str, ...], steps: list[tuple[str, str]]) -> None:
    api = gadgets.api()
    backend = RecordingBackend(api)
    obj = {**OBJ, "apiVersion": f"example.com/{versions[0]}"}
    obj["spec"] = {"params": ["x"]}
    served(backend, Unit("gadgets", "Gadget", prop, versions), obj)
    assert backend.log == steps


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_new_backend_gives_the_models_verdict(data: st.DataObject) -> None:
    """The recording backend answers as the model does, so the verdicts agree on any
    object, for a correct converter and for one that loses a field."""
    api = gadgets.api(data.draw(st.sampled_from(["correct", "unstashed"])))
    unit = Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1"))
    obj = data.draw(strategy_for(api, api.kind("Gadget"), "v1"))

    def verdict(run: Callable[[], None]) -> str | None:
        try:
            run()
        except NotEquivalent as exc:
            return str(exc)
        return None

    assert verdict(lambda: served(RecordingBackend(api), unit, obj)) == verdict(
        lambda: check(api, unit, obj))


class PrefixConverter:
    """A converter kind of its own: versions differ only in ``apiVersion``; ``lossy``
    drops ``spec.note`` on the way out of v1."""

    def __init__(self, owner: str, *, lossy: bool = False) -> None:
        self.owner = owner
        self.lossy = lossy

    def convert(self, obj: Any, a: str, b: str, *, label: str, hub: str | None,
                target: Callable[[str], Any], check: Callable[[Any, str, str], Any]) -> Any:
        out = {**obj, "apiVersion": target(b)}
        if self.lossy and a == "v1" and isinstance(out.get("spec"), dict):
            out["spec"] = {k: v for k, v in out["spec"].items() if k != "note"}
        return check(out, a, b)

    def reachable(self, a: str, b: str) -> bool:
        return True

    def check_chains(self, versions: Collection[str]) -> None:
        pass

    def webhook(self) -> WebhookAddress | None:
        return None


def test_a_converter_kind_plugs_in_through_the_interface() -> None:
    assert isinstance(PrefixConverter("gadgets"), Converter)
    unit = Unit("gadgets", "Gadget", Property.ROUNDTRIP, ("v1", "v1beta1"))
    obj = {**OBJ, "spec": {"note": "kept?"}}
    crd = gadgets.CRD
    api = API.from_crd("gadgets", crd, converter=PrefixConverter("gadgets"),
                       pipeline="plain")
    check(api, unit, obj)
    lossy = API.from_crd("gadgets", crd, converter=PrefixConverter("gadgets", lossy=True),
                         pipeline="plain")
    with pytest.raises(NotEquivalent, match=r"spec\.note"):
        check(lossy, unit, obj)


def test_a_converter_that_is_not_one_is_refused_with_the_fix() -> None:
    with pytest.raises(InvalidArgument, match=r"Converter.*convert="):
        API.from_crd("gadgets", gadgets.CRD, converter=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="not both"):
        API.from_crd("gadgets", gadgets.CRD, converter=PrefixConverter("gadgets"),
                     convert=lambda o, v: o)
