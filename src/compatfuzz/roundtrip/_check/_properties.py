"""The properties: each written once, as the requests a client makes, on any backend.

``roundtrip``, ``valid`` and ``path_independent`` of an API judged by the API-server
pipeline are sequences of client steps (create, get, update in a version) sent to a
backend (``_backend``): the model, a real kube-apiserver, or both, step by step. No
sequence knows which one answers. The other properties (``no_mutation``, the defaulting
ones) and APIs that compare plain dicts are properties of the converters alone, with no
server to ask: they call the converters directly.

:func:`check` raises :class:`~compatfuzz.errors.NotEquivalent` (with the field-path diff
from ``compatfuzz.semantic``), :class:`~compatfuzz.errors.ConverterError` or
:class:`~compatfuzz.errors.InternalError`. Checks copy their input before handing it to a
converter: Hypothesis re-runs them while shrinking.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compatfuzz.apiserver._real._backend import comparable
from compatfuzz.errors import InternalError, NotEquivalent, NotValid
from compatfuzz.roundtrip._check._accept import (
    accepted_changes,
    checking,
    is_accepted,
    strip_stash,
)
from compatfuzz.roundtrip._check._backend import Backend, ModelBackend, Refused, Session
from compatfuzz.roundtrip._check._both import BothBackend
from compatfuzz.roundtrip._check._model import API, Kind, json_copy
from compatfuzz.roundtrip._check._real import backend_for as real_backend_for
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._check._verdict import (
    error_path,
    expect_equal,
    literal_diff,
    render_changes,
)
from compatfuzz.roundtrip._events import Property, Unit

__all__ = ["SERVED_PROPERTIES", "backend_for", "check", "example_from_json", "example_to_json",
           "served", "strategy_for"]


def strategy_for(api: API, kind: Kind, version: str) -> Any:
    """The strategy for objects of ``kind`` at ``version`` (cached on the API).

    Objects get the right ``apiVersion`` and ``kind`` when the kind is typed, as the API
    server guarantees; everything else comes from ``compatfuzz.strategies.from_schema``.
    """
    cache: dict[tuple[str, str], Any] = api.__dict__.setdefault("_strategy_cache", {})
    key = (kind.name, version)
    if key not in cache:
        from compatfuzz.strategies import from_schema

        strategy = from_schema(kind.schema(version), overrides=getattr(api, "overrides", None))
        if kind.typed:
            api_version, name = kind.api_version(version), kind.name

            def _typed(obj: Any) -> Any:
                if isinstance(obj, dict):
                    obj = {**obj, "apiVersion": api_version, "kind": name}
                return obj

            strategy = strategy.map(_typed)
        cache[key] = strategy
    return cache[key]


def example_to_json(api: API | Suite, unit: Unit, obj: Any) -> Any:
    """A copy of ``obj`` as JSON, for reports and counterexample files."""
    return api.to_json(unit, obj) if isinstance(api, Suite) else json_copy(obj)


def example_from_json(api: API | Suite, unit: Unit, data: Any) -> Any:
    """The example ``data`` (from :func:`example_to_json`) stands for.

    Raises:
        ValueError: ``data`` is not an example of ``unit``.
    """
    return api.from_json(unit, data) if isinstance(api, Suite) else data


def backend_for(api: API) -> Backend:
    """Who answers ``api``'s requests: the model, the real server of this process
    (``_real.backend_for``), or both side by side."""
    if api.apiserver == "model":
        backend: Backend | None = api.__dict__.get("_model_backend")
        if backend is None:
            backend = api.__dict__["_model_backend"] = ModelBackend(api)
        return backend
    real = real_backend_for(api)
    return BothBackend(real) if api.apiserver == "both" else real


def served(backend: Backend, unit: Unit, obj: Any) -> None:
    """Check ``unit``'s property on ``obj`` through ``backend`` (see :func:`check`): the
    one sequence of client steps each property is, on whichever backend answers."""
    api = backend.api
    kind = api.kind(unit.kind)
    with backend.session(kind, unit, obj) as session:
        _SEQUENCES[unit.property](_Client(api, kind, session, unit.versions[0]),
                                  unit.versions, obj)


class _Client:
    """A property's client of a backend: each request, and whose fault a refusal is."""

    def __init__(self, api: API, kind: Kind, session: Session, origin: str) -> None:
        self.api = api
        self.kind = kind
        self.session = session
        self.origin = origin  # the version the example was written in
        self.model = api.server(kind)  # the oracle: what a client's write decodes to

    def create(self, obj: dict[str, Any], version: str) -> tuple[str, dict[str, Any],
                                                                  dict[str, Any]]:
        """Create the example as generated: ``(name, what was sent, the answer)``. A
        refusal is compatfuzz's fault (its generator and the judge disagree), never
        the converter's: no converter has run on it yet."""
        s = self.session
        name = s.name()
        sent = s.prepare(obj, name)
        try:
            return name, sent, s.create(name, sent, version)
        except Refused as exc:
            raise InternalError(
                f"{self.api.name}: compatfuzz generated a {self.kind.name} {version} object "
                f"that {s.judge} refuses on create{_status(exc)}:\n{exc.lines()}\n  This is "
                "a compatfuzz bug (its generator and the API server disagree), not your "
                "converter's: please report it with this example (unless a "
                "register_format/register_path override of yours drew that value)") from None

    def update(self, name: str, seen: dict[str, Any], version: str) -> dict[str, Any]:
        """A ``version`` client writes back what it read, unchanged; a refusal fails the
        property (validation ratcheting does not excuse it)."""
        try:
            return self.session.update(name, seen, version)
        except Refused as exc:
            raise NotEquivalent(
                f"written as {self.origin}, read as {version}: a {version} client cannot "
                f"write it back unchanged: {self.session.judge} refuses the update"
                f"{_status(exc)}:\n{exc.lines()}") from None

    def expect_equal(self, expected: Any, actual: Any, version: str, what: str) -> None:
        s = self.session
        expect_equal(expected, actual, self.kind, version, f"through {s.judge} {what}",
                     trace=s.trace, api=self.api)


def _status(exc: Refused) -> str:
    return f" ({exc.status})" if exc.status else ""


def _roundtrip(c: _Client, vs: tuple[str, ...], obj: Any) -> None:
    """``roundtrip[A->B]``: create in A, get in B, update in B unchanged (a
    read-modify-write), get in A; what A's client wrote is what it was given back on
    create and what it reads at the end."""
    a, b = vs
    s = c.session
    name, sent, created = c.create(obj, a)
    c.update(name, s.get(name, b), b)
    back = s.get(name, a)
    # What the client wrote, as A's schema decodes it (pruned, defaulted: no converter
    # runs): the create answer alone would hide a loss on the way into storage, since it
    # is read back through the same lossy conversion.
    expected = c.model.as_written(comparable(c.model.accept(sent, a)), sent, a)
    for answer, when in ((created, f"the object the server gave back on create in {a}"),
                         (back, f"what it reads after a {b} client read and updated it")):
        c.expect_equal(expected, c.model.as_written(comparable(answer), sent, a), a,
                       f"(stored as {s.storage}): what a {a} client wrote is not {when}")
    _clean_hub(c, a, b, sent, back)


def _clean_hub(c: _Client, a: str, b: str, sent: dict[str, Any], back: Any) -> None:
    """A round trip ignores annotations its client did not write (a spoke's stash), but
    not in a converter's Hub (``Converter.hub_of``: controller-runtime's
    ``conversion.Hub``): the hub holds every field, so a stash read there was left by a
    ``ConvertTo`` that restored it and did not delete it (Cluster API's ``UnmarshalData``
    deletes it: ``util/conversion/conversion.go``)."""
    hub_of = getattr(c.api.converter, "hub_of", None)
    if hub_of is None or hub_of(c.kind.group, c.kind.name) != a:
        return
    meta = back.get("metadata") if isinstance(back, dict) else None
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    wrote = (sent.get("metadata") or {}).get("annotations") or {}
    left = sorted(k for k in (notes or {}) if k not in wrote
                  and not any(k.startswith(p) for p in c.api.stash_annotations))
    if left:
        raise NotEquivalent(
            f"(stored as {c.session.storage}): a {a} client reads annotations it did not "
            f"write after a {b} client read and updated it: {', '.join(left)}\n  {a} is "
            f"the Hub, which holds every field: a stash restored by {b}'s ConvertTo must "
            "be deleted there (list the key in stash_annotations if it is meant to stay)")


def _valid(c: _Client, vs: tuple[str, ...], obj: Any) -> None:
    """``valid[A->B]``: created in A and read in B, the object is created again in B
    under a new name: B's full validation (no ratcheting on create) must take it."""
    a, b = vs
    s = c.session
    name, _, _ = c.create(obj, a)
    seen = s.get(name, b)
    again = s.name()
    try:
        s.create(again, s.prepare(seen, again), b)
    except Refused as exc:
        raise NotValid(
            f"written as {a}, read as {b}: {s.judge} refuses it on create in {b}"
            f"{_status(exc)} (and refuses an update in {b} that changes these fields):"
            f"\n{exc.lines()}") from None


def _path_independent(c: _Client, vs: tuple[str, ...], obj: Any) -> None:
    """``path_independent[A,B,C]``: two copies created in A; one read and updated by a
    B client; both read and updated unchanged by a C client, then compared as stored."""
    a, b, c_ = vs
    s = c.session
    name, _, _ = c.create(obj, a)
    twin, _, _ = c.create(obj, a)
    c.update(name, s.get(name, b), b)
    via = s.get(name, c_)
    direct = s.get(twin, c_)
    c.update(name, via, c_)
    c.update(twin, direct, c_)
    st = s.storage
    c.expect_equal(comparable(s.get(twin, st)), comparable(s.get(name, st)), st,
                   f"(stored as {st}): read as {c_} after a {b} client updated it differs "
                   f"from read as {c_} directly")


_SEQUENCES: dict[Property, Callable[[_Client, tuple[str, ...], Any], None]] = {
    Property.ROUNDTRIP: _roundtrip,
    Property.VALID: _valid,
    Property.PATH_INDEPENDENT: _path_independent,
}
#: the properties a backend answers (the model, a real server); the others never involve one
SERVED_PROPERTIES = tuple(_SEQUENCES)


def check(api: API | Suite, unit: Unit, obj: Any, *,
          accepted: set[int] | None = None) -> None:
    """Check one property of ``unit`` on ``obj`` (an object of the unit's first version).

    A difference that one of the API's accept entries covers is not a failure; the
    indexes (into ``api.accept``) of the entries that accepted one are added to
    ``accepted``. Annotations under the API's ``stash_annotations`` prefixes are left out
    of every comparison; with the API-server pipeline ``path_independent`` and
    ``default_commutes`` also leave out the annotations the client did not write, as
    ``roundtrip`` does (``APIServer.as_written``).

    With the API-server pipeline (the default for CRDs) ``roundtrip``, ``valid`` and
    ``path_independent`` are requests to the API's backend (:func:`backend_for`: the
    API-server model, a real kube-apiserver, or both):

    * ``roundtrip[A->B]``: what a client in A wrote (after A's pruning and defaulting) is
      what it was given back on create, and what it reads back after the object was
      stored, read by a client in B and updated by it;
    * ``valid[A->B]``: written as A and read as B, the object is created in B: B's full
      validation takes it;
    * ``path_independent[A,B,C]``: read as C with or without a B client's update in
      between, the two compare equal as the storage (hub) version holds them.

    Raises:
        NotEquivalent: the property does not hold; ``.diff`` holds the field-path changes.
        ConverterError: a converter or defaulter raised or returned garbage, or the API
            server would reject a conversion response.
        InternalError: the API server (model or real) refuses ``obj`` as generated on
            create: a compatfuzz bug.
    """
    if isinstance(api, Suite):
        with checking(api.accept, unit, accepted if accepted is not None else set()):
            api.check(unit, obj)
        return
    written = None
    if api.pipeline == "apiserver" and unit.property in (Property.PATH_INDEPENDENT,
                                                         Property.DEFAULT_COMMUTES):
        # as roundtrip's as_written: an annotation the client did not write is the
        # converter's (a stash), whatever path wrote it
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        notes = meta.get("annotations") if isinstance(meta, dict) else None
        written = list(notes) if isinstance(notes, dict) else []
    with checking(api.accept, unit, accepted if accepted is not None else set(),
                  written=written):
        _check(api, unit, obj)


def _check(api: API, unit: Unit, obj: Any) -> None:
    kind = api.kind(unit.kind)
    prop, vs = unit.property, unit.versions
    if api.server(kind) is not None and prop in _SEQUENCES:
        served(backend_for(api), unit, obj)
        return
    if prop is Property.ROUNDTRIP:
        a, b = vs
        there = api.convert(kind, json_copy(obj), a, b)
        back = api.convert(kind, there, b, a)
        expect_equal(obj, back, kind, a, f"{a} -> {b} -> {a} did not give back the original",
                      api=api)
    elif prop is Property.VALID:
        a, b = vs
        out = api.convert(kind, json_copy(obj), a, b)
        errors = sorted(kind.schema(b).validator.iter_errors(out), key=lambda e: list(
            map(str, e.absolute_path)))
        errors = [e for e in errors if not is_accepted(error_path(e))]
        if errors:
            lines = "\n".join(f"  {error_path(e)}: {e.message}" for e in errors[:20])
            raise NotValid(f"{a} -> {b} output does not validate under {b}:\n{lines}")
    elif prop is Property.NO_MUTATION:
        a, b = vs
        probe = json_copy(obj)
        api.convert(kind, probe, a, b)
        if probe != obj:
            # the exact change, not the semantic one: popping an empty list is a mutation
            # semantic equality cannot see
            changes, _ = accepted_changes(literal_diff(
                strip_stash(obj, api.stash_annotations, tidy=False),
                strip_stash(probe, api.stash_annotations, tidy=False)))
            if not changes:
                return
            raise NotEquivalent(
                f"converting {a} -> {b} mutated its input:\n{render_changes(changes)}",
                diff=changes)
    elif prop is Property.PATH_INDEPENDENT:
        a, b, c = vs
        via = api.convert(kind, api.convert(kind, json_copy(obj), a, b), b, c)
        direct = api.convert(kind, json_copy(obj), a, c)
        hub = api.hub_for(kind)
        if hub in kind.versions and hub != c:
            # compare as the hub sees them: equivalent spellings of the same hub object
            # (a stash annotation's JSON, say) are not a difference
            assert hub is not None
            expect_equal(api.convert(kind, json_copy(direct), c, hub),
                          api.convert(kind, json_copy(via), c, hub), kind, hub,
                          f"{a} -> {b} -> {c} differs from {a} -> {c}, as the hub {hub} "
                          "sees them", api=api)
        else:
            expect_equal(direct, via, kind, c, f"{a} -> {b} -> {c} differs from {a} -> {c}",
                          api=api)
    elif prop is Property.DEFAULT_IDEMPOTENT:
        (a,) = vs
        once = api.default(kind, a, json_copy(obj))
        twice = api.default(kind, a, json_copy(once))
        expect_equal(once, twice, kind, a, f"defaulting {a} twice differs from once", api=api)
    elif prop is Property.DEFAULT_COMMUTES:
        a, b = vs
        first = api.convert(kind, api.default(kind, a, json_copy(obj)), a, b)
        second = api.default(kind, b, api.convert(kind, json_copy(obj), a, b))
        expect_equal(second, first, kind, b,
                      f"default({a}) then convert to {b} differs from convert then default({b})",
                      api=api)
    else:  # pragma: no cover - Property is closed
        raise AssertionError(prop)


