"""A protobuf API versioned by package, as units of ``roundtrip``'s runner.

Why a :class:`~compatfuzz.roundtrip.Suite` and not a copy of the CRD machinery: the
runner, its reports (JSON, JUnit, HTML, counterexample files, ``--replay``), the example
database, the profiles and the pytest plugin all work on units; this module only says
which units a protobuf API has, how to draw an example (``from_message``) and how to
check it.  Converters reuse ``roundtrip``'s :class:`~compatfuzz.roundtrip._check._converters.
Converters` (forms, chaining, user tracebacks); equality and diffs are ``_roundtrip``'s,
which render through ``semantic``.

Properties, each a unit per version or ordered version pair:

* ``encodings[v]``: binary, proto3 JSON with original names and with json names, and
  YAML, each written and read back, give an equivalent message;
* ``roundtrip[a->b]``: a -> b -> a gives an equivalent message (needs converters both
  ways);
* ``valid[a->b]``: the converter's output is a ``b`` message that passes ``b``'s
  validate rules (and has its proto2 ``required`` fields);
* ``no_mutation[a->b]``: converting leaves the input message untouched (byte for byte);
* ``path_independent[a,b,c]``: a -> b -> c is equivalent to a -> c.

A converter may return the new message (``f(src) -> dst``, with the user's own generated
classes) or fill the empty one it is given (``f(src, dst)``, as Envoy's
``VersionConverter::upgrade(prev, next)`` does), so converters need no generated code.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent
from compatfuzz.protobuf._load import ProtoSchema, load_protos
from compatfuzz.protobuf._roundtrip import (
    ENCODINGS,
    check_encodings,
    expect_equivalent,
    expect_valid,
    json_form,
    roundtrip_message,
)
from compatfuzz.protobuf._strategies import from_message
from compatfuzz.roundtrip import Property, Suite, Unit
from compatfuzz.roundtrip._check._converters import Converters, check_callable
from compatfuzz.roundtrip._check._model import beside_caller
from compatfuzz.roundtrip._check._suite import check_api_name, plan_units
from compatfuzz.roundtrip._check._verdict import literal_diff, render_changes

__all__ = ["PROPERTIES", "ProtoAPI"]

#: The properties a protobuf API has, in the order its units are listed.
PROPERTIES = (Property.ENCODINGS, Property.ROUNDTRIP, Property.VALID, Property.NO_MUTATION,
              Property.PATH_INDEPENDENT)


def _takes_target(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes a second positional argument: the message to fill."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: one argument
        return False
    positional = [p for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def _filled(fn: Callable[..., Any], src: Any, dst: Message) -> Any:
    """``fn(src, dst)``'s result, or ``dst`` when it filled it in and returned ``None``."""
    out = fn(src, dst)
    return dst if out is None else out


def _copy(msg: Message) -> Message:
    out = type(msg)()
    out.CopyFrom(msg)
    return out


def _shown(value: Any) -> str:
    if isinstance(value, Message):
        return f"a message of type {value.DESCRIPTOR.full_name}"
    return f"{type(value).__name__} {value!r:.80}"


class ProtoAPI(Suite):
    """A protobuf API whose versions are messages of different packages.

    ``messages`` maps a version name to the full name of its message in ``schema``
    (``{"v2": "example.cluster.v2.Cluster", "v3": "example.cluster.v3.Cluster"}``).
    Converters are optional (without them only ``encodings`` runs) and take the forms
    CRD converters take, on messages:

    * ``converters={("v2", "v3"): f, ...}``: ``f(src) -> message`` or ``f(src, dst)``
      filling ``dst``, an empty message of the target version; missing pairs are
      reached by chaining the given ones, pairs no chain reaches are not checked;
    * ``convert=f``: ``f(src, dst)`` for every pair (``dst``'s type says the target);
    * ``to_hub=f``, ``from_hub=g`` and ``hub="v3"``: ``f(src, hub_msg)`` (or
      ``f(src) -> hub``), ``g(hub, dst)``.

    ``encodings`` narrows the ``encodings`` property (default: all of
    :data:`~compatfuzz.protobuf.ENCODINGS`); other keyword arguments go to
    :func:`~compatfuzz.protobuf.from_message` (``max_depth``, ``max_items``, ...).

    Example::

        api = ProtoAPI.from_protos("cluster", "protos/", {
            "v2": "example.cluster.v2.Cluster", "v3": "example.cluster.v3.Cluster"},
            converters={("v2", "v3"): up, ("v3", "v2"): down})
        for event in compatfuzz.roundtrip.run(api): ...

    Raises:
        InvalidArgument: a bad name, a message ``schema`` does not define, an unknown
            encoding, or converters that do not fit (see
            :class:`~compatfuzz.roundtrip.API`).

    .. versionadded:: 0.2
    """

    def __init__(self, name: str, schema: ProtoSchema, messages: Mapping[str, str], *,
                 convert: Callable[..., Any] | None = None,
                 to_hub: Callable[..., Any] | None = None,
                 from_hub: Callable[..., Any] | None = None,
                 hub: str | None = None,
                 converters: Mapping[tuple[str, str], Callable[..., Any]] | None = None,
                 encodings: Sequence[str] = ENCODINGS,
                 source: str | None = None,
                 **strategy_options: Any) -> None:
        check_api_name(name)
        if not isinstance(schema, ProtoSchema):
            raise InvalidArgument(
                f"Expected a ProtoSchema for schema but got schema={schema!r} "
                f"(type={type(schema).__name__}); load one with load_protos(), or use "
                "ProtoAPI.from_protos(name, path, messages)")
        if not isinstance(messages, Mapping) or not messages:
            raise InvalidArgument(
                f"Expected a mapping of version -> message name for messages but got "
                f"messages={messages!r}; e.g. {{'v2': 'example.v2.Cluster', "
                "'v3': 'example.v3.Cluster'}")
        check_encodings(encodings)
        self.name = name
        self.schema = schema
        self.source = source
        self.hub = hub
        self.encodings = tuple(encodings)
        self.strategy_options = dict(strategy_options)
        self.descriptors: dict[str, Descriptor] = {
            version: schema.message(full) for version, full in messages.items()}
        self._classes = {v: schema.message_class(d) for v, d in self.descriptors.items()}
        self.kind = next(iter(self.descriptors.values())).name
        self._strategies: dict[str, Any] = {}
        self._converters = self._adapt(convert, to_hub, from_hub, converters)

    @classmethod
    def from_protos(cls, name: str,
                    proto: str | Path | Sequence[str | Path],
                    messages: Mapping[str, str], *,
                    include: Iterable[str | Path] = (), **options: Any) -> ProtoAPI:
        """Return a ProtoAPI for the ``.proto`` files, folder, descriptor set or
        ``module:`` ``_pb2`` module(s) ``proto`` (see
        :func:`~compatfuzz.protobuf.load_protos`).  Relative paths are read from the
        folder of the file that calls this, as the TOML form reads them from the config's.
        """
        caller = sys._getframe(1)

        def here(p: str | Path) -> str | Path:
            return p if str(p).startswith("module:") else beside_caller(p, caller)

        sources = [proto] if isinstance(proto, (str, Path)) else list(proto)
        schema = load_protos([here(p) for p in sources] if len(sources) > 1
                             else here(sources[0]),
                             include=[beside_caller(p, caller) for p in include])
        return cls(name, schema, messages, **options)

    # -- converters -----------------------------------------------------------------

    def _adapt(self, convert: Callable[..., Any] | None, to_hub: Callable[..., Any] | None,
               from_hub: Callable[..., Any] | None,
               converters: Mapping[tuple[str, str], Callable[..., Any]] | None,
               ) -> Converters | None:
        """The user's converters as ``roundtrip``'s shapes: ``f(src) -> message`` for a
        pair, ``convert(src, dst)``, ``to_hub(src) -> hub``, ``from_hub(hub, version)``."""
        if convert is None and to_hub is None and from_hub is None and not converters:
            return None
        for label, fn in (("convert", convert), ("to_hub", to_hub), ("from_hub", from_hub)):
            check_callable(label, fn)
        pairs: dict[tuple[str, str], Callable[..., Any]] = {}
        for pair, fn in (converters or {}).items():
            check_callable(f"converters[{pair!r}]", fn)
            target = pair[1] if isinstance(pair, tuple) and len(pair) == 2 else None
            pairs[pair] = (self._filling(fn, target)
                           if target in self.descriptors and _takes_target(fn) else fn)
        if convert is not None:
            self._needs_target("convert", convert)
            convert = functools.partial(_filled, convert)
        if to_hub is not None or from_hub is not None:
            if self.hub is None:
                raise InvalidArgument(
                    f"API {self.name!r}: to_hub/from_hub need hub=, the version messages "
                    f"are converted through (one of {', '.join(self.descriptors)})")
            if from_hub is not None:
                self._needs_target("from_hub", from_hub)
                from_hub = self._filling(from_hub, None)
            if to_hub is not None and self.hub in self.descriptors and _takes_target(to_hub):
                to_hub = self._filling(to_hub, self.hub)
        return Converters(self.name, list(self.descriptors), convert=convert, to_hub=to_hub,
                          from_hub=from_hub, converters=pairs)

    def _filling(self, fn: Callable[..., Any], target: str | None) -> Callable[..., Any]:
        """``fn(src, dst)`` called with a fresh ``target`` message as ``dst`` (with no
        ``target``: the version named by the call's second argument, as ``from_hub``
        gets it)."""
        def call(src: Any, version: str | None = None) -> Any:
            return _filled(fn, src, self._classes[target or version or ""]())

        return call

    def _needs_target(self, label: str, fn: Callable[..., Any]) -> None:
        if not _takes_target(fn):
            raise InvalidArgument(
                f"API {self.name!r}: {label}= must take two arguments, (message, target): "
                "target is an empty message of the version to convert to, which the "
                "function fills in (or it returns a new message of that type)")

    def reachable(self, a: str, b: str) -> bool:
        """Whether the converters lead from version ``a`` to ``b``."""
        return self._converters is not None and self._converters.reachable(a, b)

    def convert(self, msg: Message, source: str, target: str) -> Message:
        """Return ``msg`` (a ``source`` message) converted to ``target``.

        The converter receives ``msg`` itself: pass a copy to keep it pristine.

        Raises:
            ConverterError: a converter raised, or returned something else than a
                ``target`` message.
            InvalidArgument: no converter leads from ``source`` to ``target``.
        """
        if source == target:
            return msg
        if self._converters is None:
            raise InvalidArgument(f"API {self.name!r} has no converters")
        out: Message = self._converters.convert(
            msg, source, target, label=self.kind, hub=self.hub,
            target=lambda version: self._classes[version](), check=self._checked)
        return out

    def _checked(self, out: Any, a: str, b: str) -> Any:
        want = self.descriptors[b].full_name
        if not isinstance(out, Message) or out.DESCRIPTOR.full_name != want:
            raise ConverterError(
                f"{self.name}: converting {self.kind} {a} -> {b} returned {_shown(out)}, "
                f"expected a message of type {want} (return one, or fill the second argument)")
        return out

    # -- Suite ----------------------------------------------------------------------

    def units(self, properties: Sequence[Property]) -> list[Unit]:
        return plan_units(self.name, self.kind, properties, order=PROPERTIES,
                          versions=list(self.descriptors), reachable=self.reachable,
                          encodings=bool(self.encodings))

    def strategy(self, unit: Unit) -> Any:
        version = unit.versions[0]
        if version not in self._strategies:
            self._strategies[version] = from_message(
                self.descriptors[version], schema=self.schema, **self.strategy_options)
        return self._strategies[version]

    def check(self, unit: Unit, example: Any) -> None:
        msg: Message = example
        prop, vs = unit.property, unit.versions
        if prop is Property.ENCODINGS:
            failed = roundtrip_message(msg, via=self.encodings)
            if failed:
                lines = []
                for trip in failed:
                    lines.append(f"  [{trip.encoding}] " + trip.problem.replace("\n", "\n  "))
                raise NotEquivalent(
                    f"a {vs[0]} message does not survive "
                    f"{', '.join(t.encoding for t in failed)} and back:\n" + "\n".join(lines),
                    diff=next((t.changes for t in failed if t.changes), None))
        elif prop is Property.ROUNDTRIP:
            a, b = vs
            back = self.convert(self.convert(_copy(msg), a, b), b, a)
            expect_equivalent(msg, back, f"{a} -> {b} -> {a} did not give back the original")
        elif prop is Property.VALID:
            a, b = vs
            expect_valid(self.convert(_copy(msg), a, b),
                         f"{a} -> {b} output breaks {b}'s validate rules")
        elif prop is Property.NO_MUTATION:
            a, b = vs
            probe = _copy(msg)
            self.convert(probe, a, b)
            if probe.SerializeToString(deterministic=True) != msg.SerializeToString(
                    deterministic=True):
                changes = literal_diff(json_form(msg), json_form(probe))
                raise NotEquivalent(
                    f"converting {a} -> {b} mutated its input:\n"
                    + (render_changes(changes) or "  (in binary only)"), diff=changes)
        elif prop is Property.PATH_INDEPENDENT:
            a, b, c = vs
            via = self.convert(self.convert(_copy(msg), a, b), b, c)
            direct = self.convert(_copy(msg), a, c)
            expect_equivalent(direct, via, f"{a} -> {b} -> {c} differs from {a} -> {c}")
        else:
            raise InvalidArgument(f"a protobuf API has no {prop} property; its properties "
                                  f"are {', '.join(map(str, PROPERTIES))}")

    def to_json(self, unit: Unit, example: Any) -> Any:
        """proto3 JSON with original field names, as Envoy's YAML configs write it."""
        return json_form(example)

    def from_json(self, unit: Unit, data: Any) -> Any:
        cls = self._classes[unit.versions[0]]
        try:
            return json_format.ParseDict(data, cls(), descriptor_pool=self.schema.pool)
        except (json_format.Error, TypeError, AttributeError) as exc:
            raise ValueError(f"not a {cls.DESCRIPTOR.full_name} in proto3 JSON: {exc}"
                             ) from None

    def __repr__(self) -> str:
        versions = ", ".join(f"{v}={d.full_name}" for v, d in self.descriptors.items())
        return f"<ProtoAPI {self.name}: {versions}>"
