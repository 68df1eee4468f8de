"""An API versioned as one pydantic model per version, as units of ``roundtrip``'s runner.

Why a :class:`~compatfuzz.roundtrip.Suite` (as ``compatfuzz.protobuf.ProtoAPI``): the
runner, reports (JSON, JUnit, HTML), ``--replay``, the example database and the pytest
plugin all work on units; this module only says which units the API has, how to draw an
example (:func:`~compatfuzz.pydantic.model_strategy`) and how to judge it (pydantic's own
validation and :func:`~compatfuzz.pydantic.canonical` equality).  Converters reuse
``roundtrip``'s ``Converters`` (forms, chaining, the user's traceback).

Examples are JSON documents as a client sends them (drawn from the version's validation
schema, kept when its model accepts them), so the counterexample file holds them as they
are.  Converters get that document (a ``dict``), or, when their first parameter is
annotated with a model class, that model's instance of it; they return a document or a
model instance (dumped as ``model_dump(mode="json", by_alias=True)``, what it sends).

Properties, each a unit per version, ordered version pair or triple:

* ``encodings[v]``: what ``v``'s model sends (``model_dump_json(by_alias=True)``) it
  reads back (``model_validate_json``) as the same document: a serialization alias with
  no matching validation alias, or a serializer its validator does not invert, breaks
  every stored document (pydantic-ai #2789: stored messages that no longer load);
* ``roundtrip[a->b]``: a -> b -> a gives a document ``a`` reads as the original;
* ``valid[a->b]``: ``b``'s model accepts the converted document;
* ``no_mutation[a->b]``: converting leaves the input document untouched;
* ``path_independent[a,b,c]``: a -> b -> c means to ``c`` what a -> c does.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from compatfuzz.errors import ConverterError, InvalidArgument, NotEquivalent
from compatfuzz.pydantic._schema import model_strategy
from compatfuzz.pydantic._values import expect_equivalent, expect_valid, is_model, parse
from compatfuzz.roundtrip import Property, Suite, Unit
from compatfuzz.roundtrip._check._accept import Accept, accepted_changes, check_accepts
from compatfuzz.roundtrip._check._converters import Converters, check_callable, plain_json
from compatfuzz.roundtrip._check._suite import check_api_name, plan_units
from compatfuzz.roundtrip._check._verdict import literal_diff, render_changes

__all__ = ["PROPERTIES", "PydanticAPI", "as_document", "model_input"]

#: The properties a pydantic API has, in the order its units are listed.
PROPERTIES = (Property.ENCODINGS, Property.ROUNDTRIP, Property.VALID, Property.NO_MUTATION,
              Property.PATH_INDEPENDENT)


def model_input(fn: Callable[..., Any]) -> type[BaseModel] | None:
    """The model class ``fn``'s first parameter is annotated with, if any: such a
    converter gets an instance of it instead of the ``dict``."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    if not params:
        return None
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation naming something its module cannot resolve
        return None
    hint = hints.get(params[0].name)
    return hint if is_model(hint) else None


def as_document(out: Any, what: str) -> Any:
    """A converter's output as a JSON document: a model instance dumped by alias in JSON
    mode, anything else vetted as JSON (``roundtrip``'s ``plain_json``).

    Raises:
        ConverterError: ``{what} returned`` something JSON cannot hold.
    """
    if isinstance(out, BaseModel):
        try:
            return out.model_dump(mode="json", by_alias=True)
        except Exception as exc:  # a serializer of the user's
            raise ConverterError(f"{what} returned a {type(out).__name__} whose "
                                 f"model_dump raised {type(exc).__name__}: {exc}") from exc
    return plain_json(out, what)


def _feeding(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called with the document validated by the model it is annotated with."""
    model = model_input(fn)
    if model is None:
        return fn

    @functools.wraps(fn)
    def call(doc: Any, *rest: Any) -> Any:
        inst, errors = parse(model, doc)
        if inst is None:
            raise ValueError(f"its input is not a valid {model.__name__} (the model its "
                             f"first parameter is annotated with): " + "; ".join(errors[:5]))
        return fn(inst, *rest)

    return call


class PydanticAPI(Suite):
    """An API whose versions are pydantic models (``{"v1": v1.Order, "v2": v2.Order}``).

    Converters take the forms CRD converters take, on JSON documents (see the module
    docstring for model instances):

    * ``converters={("v1", "v2"): f, ...}``: ``f(doc) -> doc``; missing pairs are reached
      by chaining the given ones, pairs no chain reaches are not checked;
    * ``convert=f``: ``f(doc, source_version, target_version) -> doc`` for every pair
      (or ``f(doc, target_version)``, for two versions or documents that say theirs);
    * ``to_hub=f``, ``from_hub=g`` and ``hub="v3"``: ``f(doc) -> hub doc``,
      ``g(hub_doc, version) -> doc``.

    Other keyword arguments go to :func:`~compatfuzz.strategies.from_schema`
    (``max_list_extra``, ``overrides``, ...).

    Example::

        api = PydanticAPI("orders", {"v1": v1.Order, "v2": v2.Order},
                          converters={("v1", "v2"): up, ("v2", "v1"): down})
        for event in compatfuzz.roundtrip.run(api): ...

    Raises:
        InvalidArgument: a bad name, a version that is not a pydantic model, or
            converters that do not fit (see :class:`~compatfuzz.roundtrip.API`).

    .. versionadded:: 0.2
    """

    def __init__(self, name: str, models: Mapping[str, type[BaseModel]], *,
                 convert: Callable[..., Any] | None = None,
                 to_hub: Callable[..., Any] | None = None,
                 from_hub: Callable[..., Any] | None = None,
                 hub: str | None = None,
                 converters: Mapping[tuple[str, str], Callable[..., Any]] | None = None,
                 source: str | None = None,
                 accept: Sequence[Accept] = (),
                 **strategy_options: Any) -> None:
        check_api_name(name)
        if not isinstance(models, Mapping) or len(models) < 1:
            raise InvalidArgument(
                f"Expected a mapping of version -> pydantic model for models but got "
                f"models={models!r}; e.g. {{'v1': v1.Order, 'v2': v2.Order}}")
        for version, model in models.items():
            if not is_model(model):
                raise InvalidArgument(
                    f"Expected a pydantic BaseModel subclass for version {version!r} but "
                    f"got {model!r} (type={type(model).__name__}); pass the class itself")
        self.name = name
        self.source = source
        self.hub = hub
        self.models = dict(models)
        self.kind = next(iter(self.models.values())).__name__
        self.strategy_options = dict(strategy_options)
        self._strategies: dict[str, Any] = {}
        self._converters = self._adapt(convert, to_hub, from_hub, converters)
        self.accept = check_accepts(name, accept, [list(self.models)])

    def _adapt(self, convert: Callable[..., Any] | None, to_hub: Callable[..., Any] | None,
               from_hub: Callable[..., Any] | None,
               converters: Mapping[tuple[str, str], Callable[..., Any]] | None,
               ) -> Converters | None:
        if convert is None and to_hub is None and from_hub is None and not converters:
            return None
        for label, fn in (("convert", convert), ("to_hub", to_hub), ("from_hub", from_hub)):
            check_callable(label, fn)
        for pair, fn in (converters or {}).items():
            check_callable(f"converters[{pair!r}]", fn)
        if (to_hub is not None or from_hub is not None) and self.hub not in self.models:
            raise InvalidArgument(
                f"API {self.name!r}: to_hub/from_hub need hub=, the version documents are "
                f"converted through (one of {', '.join(self.models)}), got hub={self.hub!r}")
        out = Converters(
            self.name, list(self.models),
            convert=None if convert is None else _feeding(convert),
            to_hub=None if to_hub is None else _feeding(to_hub),
            from_hub=None if from_hub is None else _feeding(from_hub),
            converters={pair: _feeding(fn) for pair, fn in (converters or {}).items()})
        return out

    def reachable(self, a: str, b: str) -> bool:
        """Whether the converters lead from version ``a`` to ``b``."""
        return self._converters is not None and self._converters.reachable(a, b)

    def convert(self, doc: Any, source: str, target: str) -> Any:
        """``doc`` (a ``source`` document) converted to ``target``, as a JSON document.

        Raises:
            ConverterError: a converter raised or returned something JSON cannot hold.
            InvalidArgument: no converter leads from ``source`` to ``target``.
        """
        if source == target:
            return doc
        if self._converters is None:
            raise InvalidArgument(f"API {self.name!r} has no converters")
        return self._converters.convert(
            doc, source, target, label=self.kind, hub=self.hub, target=lambda v: v,
            check=lambda out, a, b: as_document(
                out, f"{self.name}: converting {self.kind} {a} -> {b}"))

    # -- Suite ----------------------------------------------------------------------

    def units(self, properties: Sequence[Property]) -> list[Unit]:
        return plan_units(self.name, self.kind, properties, order=PROPERTIES,
                          versions=list(self.models), reachable=self.reachable)

    def strategy(self, unit: Unit) -> Any:
        version = unit.versions[0]
        if version not in self._strategies:
            self._strategies[version] = model_strategy(self.models[version],
                                                       **self.strategy_options)
        return self._strategies[version]

    def check(self, unit: Unit, example: Any) -> None:
        prop, vs = unit.property, unit.versions
        if prop is Property.ENCODINGS:
            model = self.models[vs[0]]
            inst, errors = parse(model, example)
            if inst is None:
                raise InvalidArgument(f"not a valid {vs[0]} {model.__name__}: "
                                      + "; ".join(errors[:5]))
            try:
                sent = inst.model_dump_json(by_alias=True)
            except Exception as exc:  # a serializer of the user's
                raise NotEquivalent(f"a valid {vs[0]} {model.__name__} cannot be sent: "
                                    f"model_dump_json raised {type(exc).__name__}: {exc}"
                                    ) from exc
            expect_equivalent(model, example, json.loads(sent),
                              f"what {vs[0]} sends (model_dump_json) it does not read back "
                              "as the same")
        elif prop is Property.ROUNDTRIP:
            a, b = vs
            back = self.convert(self.convert(copy.deepcopy(example), a, b), b, a)
            expect_equivalent(self.models[a], example, back,
                              f"{a} -> {b} -> {a} did not give back the original")
        elif prop is Property.VALID:
            a, b = vs
            expect_valid(self.models[b], self.convert(copy.deepcopy(example), a, b),
                         f"{a} -> {b} output is not a valid {b} "
                         f"{self.models[b].__name__}")
        elif prop is Property.NO_MUTATION:
            a, b = vs
            probe = copy.deepcopy(example)
            self.convert(probe, a, b)
            changes, _ = accepted_changes(literal_diff(example, probe))
            if changes:
                raise NotEquivalent(f"converting {a} -> {b} mutated its input:\n"
                                    + render_changes(changes), diff=changes)
        elif prop is Property.PATH_INDEPENDENT:
            a, b, c = vs
            direct = self.convert(copy.deepcopy(example), a, c)
            expect_valid(self.models[c], direct, f"{a} -> {c} output is not a valid {c}")
            via = self.convert(self.convert(copy.deepcopy(example), a, b), b, c)
            expect_equivalent(self.models[c], direct, via,
                              f"{a} -> {b} -> {c} differs from {a} -> {c}")
        else:
            raise InvalidArgument(f"a pydantic API has no {prop} property; its properties "
                                  f"are {', '.join(map(str, PROPERTIES))}")

    def from_json(self, unit: Unit, data: Any) -> Any:
        model = self.models[unit.versions[0]]
        errors = parse(model, data)[1]
        if errors:
            raise ValueError(f"not a valid {model.__name__}: " + "; ".join(errors[:5]))
        return data

    def __repr__(self) -> str:
        versions = ", ".join(f"{v}={m.__module__}:{m.__qualname__}"
                             for v, m in self.models.items())
        return f"<PydanticAPI {self.name}: {versions}>"
