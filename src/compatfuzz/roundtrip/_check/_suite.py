"""The extension point for API families other than JSON Schema: a :class:`Suite`.

The runner, the reports, the example database and the pytest plugin only need, per API,
its units, a strategy and a check for each unit, and a JSON form of an example for the
counterexample file and ``--replay``.  :class:`~compatfuzz.roundtrip.API` (CRDs, OpenAPI,
JSON Schema) has those built in; any other family subclasses ``Suite``, and everything
downstream of ``units()`` works unchanged.  ``compatfuzz.protobuf`` is one:
it lives above ``roundtrip`` in the layering and plugs in here, so ``roundtrip`` never
imports it and protobuf stays an optional extra.

A config file declares such an API with its own key (``proto = "protos/"``): the loader
for that key is found through the ``compatfuzz.apis`` entry-point group (see ``_config``).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip._check._accept import Accept
from compatfuzz.roundtrip._events import Property, Unit

__all__ = ["Suite", "check_api_name", "plan_units"]


def check_api_name(name: Any) -> None:
    """Refuse a name that cannot be part of a unit id (``api::property[pair]``)."""
    if not isinstance(name, str) or not name or "::" in name or "[" in name:
        raise InvalidArgument(
            f"Expected a short API name but got name={name!r}; use something like "
            "'widgets' (no '::' or '[', they separate test ids)"
        )


def plan_units(name: str, kind: str, properties: Sequence[Property], *,
               order: Sequence[Property], versions: Sequence[str],
               reachable: Callable[[str, str], bool], encodings: bool = True
               ) -> list[Unit]:
    """The units of a family whose properties are ``order`` (a subset of it, in its
    order): ``encodings`` per version, ``roundtrip`` on pairs reachable both ways,
    ``path_independent`` on triples whose three legs are reachable, the rest per
    reachable pair. Shared by protobuf and pydantic, so their plans cannot drift."""
    pairs = [(a, b) for a in versions for b in versions if a != b and reachable(a, b)]
    out: list[Unit] = []
    for prop in order:
        if prop not in properties:
            continue
        combos: list[tuple[str, ...]]
        if prop is Property.ENCODINGS:
            combos = [(v,) for v in versions] if encodings else []
        elif prop is Property.ROUNDTRIP:
            combos = [(a, b) for a, b in pairs if (b, a) in pairs]
        elif prop is Property.PATH_INDEPENDENT:
            combos = [(a, b, c) for a, b in pairs for c in versions
                      if c not in (a, b) and (b, c) in pairs and (a, c) in pairs]
        else:
            combos = list(pairs)
        out.extend(Unit(name, kind, prop, c) for c in combos)
    return out


class Suite(abc.ABC):
    """A versioned API whose properties the round-trip runner checks.

    Subclasses set ``name`` (the API's name in unit ids) and ``source`` (the config file
    it was declared in, or ``None``), and implement :meth:`units`, :meth:`strategy` and
    :meth:`check`.  Checks must be pure (Hypothesis re-runs them while shrinking) and
    raise :class:`~compatfuzz.errors.NotEquivalent` (with ``diff``) or
    :class:`~compatfuzz.errors.ConverterError` when a property does not hold.
    Examples need not be JSON: :meth:`to_json` and :meth:`from_json` convert them for the
    counterexample file, the report and ``compatfuzz fuzz --replay``.

    .. versionadded:: 0.2
    """

    name: str
    source: str | None = None
    #: deliberate differences (``[[api.accept]]``): a difference or validation error at a
    #: path an entry covers is no failure of the units it names, as for a CRD's ``API``
    accept: tuple[Accept, ...] = ()

    @abc.abstractmethod
    def units(self, properties: Sequence[Property]) -> list[Unit]:
        """Every unit of this API for ``properties``, in a stable order."""

    @abc.abstractmethod
    def strategy(self, unit: Unit) -> Any:
        """The Hypothesis strategy for ``unit``'s examples."""

    @abc.abstractmethod
    def check(self, unit: Unit, example: Any) -> None:
        """Check ``unit``'s property on one example; raise if it does not hold."""

    def to_json(self, unit: Unit, example: Any) -> Any:
        """``example`` as JSON, for reports and counterexample files (default: itself)."""
        return example

    def from_json(self, unit: Unit, data: Any) -> Any:
        """The example :meth:`to_json` gave ``data`` for (default: ``data`` itself).

        Raises:
            ValueError: ``data`` is not an example of ``unit``.
        """
        return data

    def unit_cost(self, unit: Unit) -> float:
        """``unit``'s expected cost relative to this API's other units (default 1.0 each).

        A sharded job (``compatfuzz fuzz --shard K/N``) balances its shards by it; return
        more for units whose examples cost more (e.g. more versions to convert through).
        The same units must get the same costs on every shard.

        .. versionadded:: 0.3
        """
        return 1.0

    def migration_code(self) -> tuple[str, ...]:
        """The API's own migration functions (a Cadwyn bundle's), by name: what the run's
        migration coverage counts (default: none, for an API converted by one function).

        .. versionadded:: 0.4
        """
        return ()

    def take_exercised(self) -> tuple[tuple[str, str, int], ...]:
        """``(migration, where, calls)`` since the last call, then forget them: the runner
        takes them before and after each unit (default: none).

        .. versionadded:: 0.4
        """
        return ()

    def preflight(self, unit: Unit) -> None:  # noqa: B027  # optional hook, no-op default
        """Raise if ``unit`` cannot run at all (reported as an error, not a failure)."""
