"""The backend interface: what a property talks to, as a client talks to an API server.

A property (``_properties``) is written once, as the requests a client makes: create an
object in a version, get it in another, update it unchanged. A backend answers them:

* :class:`ModelBackend` (here): ``compatfuzz.apiserver.APIServer`` and the API's
  converters, in this process; each step records what the model did to each field
  (``trace``), so a failure can say which hop changed a value;
* ``_real.RealBackend``: a real kube-apiserver and etcd, converting through a webhook;
* ``_both.BothBackend``: both, each step's answers compared; the first step where they
  differ is a :class:`~compatfuzz.errors.Disagreement`.

A backend's session raises :class:`Refused` when the server refuses a request by
validation (HTTP 422: the property decides whose fault that is),
:class:`~compatfuzz.errors.ConverterError` when a conversion fails, and nothing else of
its own. A new backend is one class with :meth:`Backend.session` and a session with the
methods of :class:`Session`, chosen in ``_properties.backend_for``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from compatfuzz.apiserver import Rejected
from compatfuzz.apiserver._real._backend import comparable
from compatfuzz.errors import CompatfuzzError, ConverterError
from compatfuzz.roundtrip._check._accept import accepted_errors
from compatfuzz.roundtrip._check._model import API, Kind
from compatfuzz.roundtrip._events import Unit

__all__ = ["Backend", "ModelBackend", "ModelSession", "Refused", "Session", "plain"]


class Refused(CompatfuzzError):
    """The server refused a request by validation (HTTP 422 Unprocessable Entity), not
    because a converter failed. ``causes`` are its field errors, one line each;
    ``status`` is the server's ``422 Invalid`` (empty for the model)."""

    def __init__(self, step: str, causes: list[str], status: str = "") -> None:
        self.step = step
        self.causes = causes
        self.status = status
        super().__init__(f"{step}: {'; '.join(causes)}")

    def lines(self) -> str:
        """The causes, indented, one a line."""
        return "\n".join(f"  {c}" for c in self.causes)


class Session(Protocol):
    """One example's requests to a backend (see the module docstring)."""

    #: who judges, for messages: ``the API-server model``, ``the real API server``
    judge: str
    #: the version objects are stored in (the CRD's storage version)
    storage: str
    #: the model's record of what each step did to each field, or ``None``
    trace: list[Any] | None

    def name(self) -> str:
        """A name for a new object, unused on this backend."""

    def prepare(self, obj: dict[str, Any], name: str) -> dict[str, Any]:
        """``obj`` as a client sends it on create under ``name``."""

    def create(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        """Create ``obj`` (from :meth:`prepare`) in ``version``; the server's answer."""

    def get(self, name: str, version: str) -> dict[str, Any]:
        """The object ``name`` as a client in ``version`` reads it."""

    def update(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        """A ``version`` client writes back ``obj`` (what it read); the server's answer."""


class Backend(Protocol):
    """Who answers a property's requests: the model, a real server, or both."""

    #: the API whose objects it serves
    api: API

    def session(self, kind: Kind, unit: Unit, obj: Any) -> contextlib.AbstractContextManager[
            Session]:
        """A session for one example ``obj`` of ``unit``."""


def plain(obj: dict[str, Any]) -> dict[str, Any]:
    """What the model takes from an answer: the object without server fields (but with
    its name and namespace, which a client sends back)."""
    out: dict[str, Any] = comparable(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        out = {**out, "metadata": {**(out.get("metadata") or {}),
                                   **{k: meta[k] for k in ("name", "namespace") if k in meta}}}
    return out


class ModelSession:
    """The model's answers: each object stored as ``APIServer.store`` writes it (in the
    storage version), read back with ``APIServer.read``; a create is fully validated and
    an update validated with ratcheting (``APIServer.update_errors``), as
    ``customresource_handler.go`` validates them."""

    judge = "the API-server model"

    def __init__(self, api: API, kind: Kind, *, record: bool = True) -> None:
        self.api = api
        self.server = api.server(kind)
        self.storage: str = self.server.storage
        self.trace: list[Any] | None = [] if record else None
        self.stored: dict[str, dict[str, Any]] = {}
        self._names = itertools.count(1)

    def name(self) -> str:
        return f"model-{next(self._names)}"

    def prepare(self, obj: dict[str, Any], name: str) -> dict[str, Any]:
        return obj  # the model keys objects by name; the example keeps its own

    def create(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        step = f"create in {version}"
        try:
            written = self.server.accept(obj, version, self.trace)
        except Rejected as exc:
            raise Refused(step, [str(exc)]) from None
        return self._store(name, version, step, self.server.validate(written, version),
                           lambda: self.server.store(written, version, self.trace))

    def get(self, name: str, version: str) -> dict[str, Any]:
        with _converting(self.api):
            out: dict[str, Any] = self.server.read(self.stored[name], version, self.trace)
        return out

    def update(self, name: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
        step = f"update in {version} (unchanged)"
        sent = plain(obj)
        return self._store(name, version, step, self.server.update_errors(sent, version),
                           lambda: self.server.write(sent, version, self.trace))

    def _store(self, name: str, version: str, step: str, errors: list[str],
               store: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Refuse the request for ``errors`` (less those accepted), else store what
        ``store`` converts and answer as the server does: the object read back."""
        errors = accepted_errors(errors)
        if errors:
            raise Refused(step, errors)
        with _converting(self.api):
            self.stored[name] = store()
        return self.get(name, version)


@contextlib.contextmanager
def _converting(api: API) -> Iterator[None]:
    """A conversion response the server refuses is the converter's failure."""
    try:
        yield
    except Rejected as exc:
        raise ConverterError(f"{api.name}: {exc}") from exc


class ModelBackend:
    """The API-server model as a backend: one :class:`ModelSession` an example."""

    def __init__(self, api: API, *, record: bool = True) -> None:
        self.api = api
        self.record = record

    @contextlib.contextmanager
    def session(self, kind: Kind, unit: Unit, obj: Any) -> Iterator[ModelSession]:
        yield ModelSession(self.api, kind, record=self.record)
