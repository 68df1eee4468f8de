"""``--apiserver both``: every request to the real server and to the model, answers compared.

The end-to-end check of the model (``compatfuzz.apiserver``): the model follows the same
objects as the server (each answer of the server is what the model is given next, without
the server's own fields), and the first step where the two answer differently, one
refusing what the other takes or both answering with objects that differ by semantic
equality, is a :class:`~compatfuzz.errors.Disagreement`: the model's fault, not the
converter's. Where both refuse, the server's words stand. The properties do not know
they run here (``_properties``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from compatfuzz.apiserver._real._backend import comparable
from compatfuzz.errors import ConverterError, Disagreement, NotEquivalent
from compatfuzz.roundtrip._check._backend import ModelBackend, ModelSession, Refused, plain
from compatfuzz.roundtrip._check._model import Kind
from compatfuzz.roundtrip._check._real import RealBackend, RealSession, too_large
from compatfuzz.roundtrip._check._verdict import expect_equal
from compatfuzz.roundtrip._events import Unit

__all__ = ["BothBackend", "BothSession"]


class BothSession:
    """The real server's session, each step repeated on the model and compared."""

    judge = RealSession.judge

    def __init__(self, model: ModelSession, real: RealSession) -> None:
        self.model = model
        self.real = real
        self.storage = real.storage
        self.trace: list[Any] | None = None
        self.api = model.api
        self.kind = real.kind

    def name(self) -> str:
        return self.real.name()

    def prepare(self, obj: dict[str, Any], name: str) -> dict[str, Any]:
        return self.real.prepare(obj, name)

    def create(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        return self._both(f"create in {version}", lambda: self.real.create(name, obj, version),
                          lambda: self.model.create(name, plain(obj), version))

    def get(self, name: str, version: str) -> dict[str, Any]:
        return self._both(f"get in {version}", lambda: self.real.get(name, version),
                          lambda: self.model.get(name, version))

    def update(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        return self._both(f"update in {version} (unchanged)",
                          lambda: self.real.update(name, obj, version),
                          lambda: self.model.update(name, obj, version))

    def _both(self, step: str, real: Callable[[], dict[str, Any]],
              modelled: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        outcome: dict[str, Any] | None = None
        failure: BaseException | None = None
        try:
            outcome = real()
        except (Refused, ConverterError) as exc:
            failure = exc
        if failure is not None and too_large(failure):
            raise failure  # the model has no size limit: the server's words
        try:
            expected = modelled()
            refused: BaseException | None = None
        except (Refused, ConverterError, NotEquivalent) as exc:
            expected, refused = None, exc
        if failure is not None and refused is not None:
            raise failure  # both refuse: the server's words (and the converter's)
        if failure is not None or refused is not None:
            said = (f"the server refused it ({failure})" if failure is not None
                    else "the server accepted it")
            thought = (f"the model refused it ({refused})" if refused is not None
                       else "the model accepted it")
            raise Disagreement(
                f"{self.api.name}: the API-server model and the real kube-apiserver "
                f"disagree at '{step}': {said}, but {thought}. This is a compatfuzz model "
                "bug (or a Kubernetes version the model does not follow), not your "
                "converter's: please report it with this example",
                step=step, model=None if refused else expected,
                server=None if failure else outcome)
        assert outcome is not None and expected is not None
        self._compare(step, expected, outcome)
        return outcome

    def _compare(self, step: str, expected: dict[str, Any], outcome: dict[str, Any]) -> None:
        mine, theirs = comparable(expected), comparable(outcome)
        version = str(outcome.get("apiVersion", "")).rsplit("/", 1)[-1]
        try:
            expect_equal(mine, theirs, self.kind, version, "model vs server", api=self.api)
        except NotEquivalent as exc:
            raise Disagreement(
                f"{self.api.name}: the API-server model and the real kube-apiserver "
                f"answer '{step}' differently (model -> server below). This is a compatfuzz "
                "model bug (or a Kubernetes version the model does not follow), not your "
                f"converter's: please report it with this example\n{exc}",
                exc.diff, step=step, model=mine, server=theirs) from None


class BothBackend:
    """The real server and the model, side by side (``--apiserver both``)."""

    def __init__(self, real: RealBackend) -> None:
        self.api = real.api
        self.real = real
        self.model = ModelBackend(real.api, record=False)

    @contextlib.contextmanager
    def session(self, kind: Kind, unit: Unit, obj: Any) -> Iterator[BothSession]:
        with self.real.session(kind, unit, obj) as real, \
                self.model.session(kind, unit, obj) as model:
            yield BothSession(model, real)
