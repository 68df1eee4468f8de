"""The user's converters in any of their three shapes, behind one ``convert(obj, a, b)``.

Shared by every API family the runner knows (JSON Schema / CRD :class:`~._model.API`, and
``compatfuzz.protobuf``'s message APIs), so the forms people write converters in, the
chaining of per-pair converters and the wrapping of whatever a converter raises are one
piece of code (issue 12: protobuf reuses roundtrip rather than copying it):

* ``convert(obj, target)``, one function for every pair; what ``target`` is depends on
  the family (a CRD's ``apiVersion``, an empty message of the target version);
* ``to_hub(obj) -> hub`` and ``from_hub(hub, version) -> obj``, hub and spoke;
* ``{(a, b): f}`` with ``f(obj) -> obj``; missing pairs are reached by chaining (BFS).

Anything a converter raises becomes a :class:`~compatfuzz.errors.ConverterError` naming
the step and carrying the user's frames, even ``SystemExit`` (issue 11: ``sys.exit(0)``
in a converter made a run pass silently).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import Any

from compatfuzz.errors import ConverterError, InvalidArgument

__all__ = ["Converters", "call_user", "check_callable", "describe"]


def describe(exc: BaseException) -> str:
    """``ValueError: msg``; ``SystemExit(0)`` says why exiting counts as a failure."""
    if isinstance(exc, SystemExit):
        return (f"SystemExit({exc.code!r}) (a converter must return the converted object; "
                "exiting, even with status 0, fails the property)")
    return f"{type(exc).__name__}: {exc}"


def wrapped(error: ConverterError, cause: BaseException) -> ConverterError:
    """``error`` carrying the user's frames of ``cause`` (issue 10: the file and line in
    *their* converter, not ours)."""
    from compatfuzz.roundtrip._usercode import user_traceback

    error.user_traceback = user_traceback(cause)
    return error


def call_user(fn: Callable[..., Any], args: tuple[Any, ...], what: str,
              context: str = "") -> Any:
    """``fn(*args)``; anything it raises (``SystemExit`` too) becomes a ``ConverterError``
    reading ``{what} raised {exception}{context}``, with the user's frames attached."""
    try:
        return fn(*args)
    except (KeyboardInterrupt, GeneratorExit):
        raise  # Ctrl-C, and the runner's own deadline and stop signals
    except BaseException as exc:  # SystemExit(0) too: it must not end the run as a pass
        raise wrapped(ConverterError(f"{what} raised {describe(exc)}{context}"),
                      exc) from exc


def check_callable(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise InvalidArgument(
            f"Expected a function for {name} but got {name}={value!r} "
            f"(type={type(value).__name__}); pass the function itself, not its result"
        )


Check = Callable[[Any, str, str], Any]


class Converters:
    """One API's converters, in whichever form the user gave them.

    ``versions`` are the names a per-pair key may use.  :meth:`convert` takes what differs
    between API families as arguments: the label of what is converted (for messages), the
    hub, the second argument of ``convert``, and ``check(out, a, b)``, which returns the
    converter's output or raises ``ConverterError`` when it is unusable.

    Raises:
        InvalidArgument: no converter, a converter that is not callable, ``to_hub``
            without ``from_hub``, both ``convert`` and the hub form, or a pair naming an
            unknown version.
    """

    def __init__(self, owner: str, versions: Collection[str], *,
                 convert: Callable[..., Any] | None = None,
                 to_hub: Callable[..., Any] | None = None,
                 from_hub: Callable[..., Any] | None = None,
                 converters: Mapping[tuple[str, str], Callable[..., Any]] | None = None,
                 ) -> None:
        for label, fn in (("convert", convert), ("to_hub", to_hub), ("from_hub", from_hub)):
            check_callable(label, fn)
        if (to_hub is None) != (from_hub is None):
            raise InvalidArgument(
                f"API {owner!r}: to_hub and from_hub go together, but only "
                f"{'to_hub' if to_hub else 'from_hub'} was given; pass both, or use convert="
            )
        if convert is not None and to_hub is not None:
            raise InvalidArgument(
                f"API {owner!r}: pass either convert= or to_hub=/from_hub=, not both"
            )
        pairs = dict(converters or {})
        if convert is None and to_hub is None and not pairs:
            raise InvalidArgument(
                f"API {owner!r} has no converter; pass convert=, to_hub= and from_hub=, "
                "or converters={(from_version, to_version): function}"
            )
        known = set(versions)
        for pair, fn in pairs.items():
            is_pair = isinstance(pair, tuple) and len(pair) == 2
            unknown = [v for v in pair if v not in known] if is_pair else []
            if not is_pair or unknown:
                shown = f"'{pair[0]}->{pair[1]}'" if is_pair else repr(pair)
                raise InvalidArgument(
                    f"API {owner!r}: converters key {shown} is not a pair of known versions"
                    + (f" ({', '.join(map(repr, unknown))} is not one)" if unknown else "")
                    + f"; use (from_version, to_version) with versions from {sorted(known)}, "
                    f"written \"{sorted(known)[0]}->{sorted(known)[-1]}\" in a config file"
                )
            check_callable(f"converters[{pair!r}]", fn)
        self.owner = owner
        self.pairs = pairs
        self._convert = convert
        self._to_hub = to_hub
        self._from_hub = from_hub
        self._paths: dict[tuple[str, str], list[str]] = {}

    def check_chains(self, versions: Collection[str]) -> None:
        """With only per-pair converters, check that every ordered pair of ``versions`` is
        reachable, so a missing converter is reported when the API is declared.

        Raises:
            InvalidArgument: no chain leads from one of ``versions`` to another.
        """
        if self._convert is None and self._to_hub is None:
            for a in versions:
                for b in versions:
                    if a != b:
                        self.path(a, b)

    def reachable(self, a: str, b: str) -> bool:
        """Whether the converters lead from ``a`` to ``b`` (always, but for per-pair
        converters that no chain connects)."""
        if self._convert is not None or self._to_hub is not None:
            return True
        try:
            self.path(a, b)
        except InvalidArgument:
            return False
        return True

    def path(self, a: str, b: str) -> list[str]:
        """Shortest chain of per-pair converters from ``a`` to ``b`` (BFS).

        Raises:
            InvalidArgument: no chain leads from ``a`` to ``b``.
        """
        key = (a, b)
        if key in self._paths:
            return self._paths[key]
        prev: dict[str, str | None] = {a: None}
        queue = deque([a])
        while queue:
            node = queue.popleft()
            if node == b:
                break
            for (x, y) in self.pairs:
                if x == node and y not in prev:
                    prev[y] = node
                    queue.append(y)
        if b not in prev:
            have = ", ".join(f"{x}->{y}" for x, y in self.pairs)
            raise InvalidArgument(
                f"API {self.owner!r}: no chain of converters leads from {a} to {b} "
                f"(converters: {have}); add converters[({a!r}, {b!r})] or a hub"
            )
        path = [b]
        while path[-1] != a:
            step = prev[path[-1]]
            assert step is not None
            path.append(step)
        path.reverse()
        self._paths[key] = path
        return path

    def convert(self, obj: Any, a: str, b: str, *, label: str, hub: str | None,
                target: Callable[[str], Any], check: Check) -> Any:
        """``obj`` (of version ``a``) converted to ``b`` by the user's converters.

        ``label`` names what is converted in error messages (``Widget``), ``target(b)`` is
        the second argument ``convert`` gets, ``check(out, a, b)`` vets each output.

        Raises:
            ConverterError: a converter raised or returned something unusable.
        """
        pair = self.pairs.get((a, b))
        if pair is not None:
            return check(self._call(f"converter {a}->{b}", pair, label, a, b, obj), a, b)
        if self._convert is not None:
            return check(self._call("convert()", self._convert, label, a, b, obj,
                                    target(b)), a, b)
        if self._to_hub is not None and self._from_hub is not None:
            mid = obj if a == hub else self._call("to_hub()", self._to_hub, label, a, b, obj)
            if b == hub:
                return check(mid, a, b)
            return check(self._call("from_hub()", self._from_hub, label, a, b, mid, b), a, b)
        for x, y in itertools.pairwise(self.path(a, b)):
            obj = self.convert(obj, x, y, label=label, hub=hub, target=target, check=check)
        return obj

    def _call(self, what: str, fn: Callable[..., Any], label: str, a: str, b: str,
              *args: Any) -> Any:
        return call_user(fn, args, f"{self.owner}: {what}", f" (converting {label} {a} -> {b})")
