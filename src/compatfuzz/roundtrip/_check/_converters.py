"""Python converters in any of their three shapes, as one :class:`~._converter.Converter`.

Shared by every API family the runner knows (JSON Schema / CRD :class:`~._model.API`, and
``compatfuzz.protobuf``'s message APIs), so the forms people write converters in, the
chaining of per-pair converters and the wrapping of whatever a converter raises are one
piece of code (protobuf reuses roundtrip rather than copying it):

* ``convert(obj, target)``, one function for every pair; what ``target`` is depends on
  the family (a CRD's ``apiVersion``, an empty message of the target version); a
  ``convert(obj, source, target)`` with three required parameters is also told the
  version ``obj`` is in (in the same form), for families whose documents do not say it
  (a pydantic model's JSON has no ``apiVersion``);
* ``to_hub(obj) -> hub`` and ``from_hub(hub, version) -> obj``, hub and spoke;
* ``{(a, b): f}`` with ``f(obj) -> obj``; missing pairs are reached by chaining (BFS).

Anything a converter raises becomes a :class:`~compatfuzz.errors.ConverterError` naming
the step and carrying the user's frames, even ``SystemExit`` (``sys.exit(0)``
in a converter made a run pass silently), ``GeneratorExit``, an exception whose ``__str__``
raises, and, in a worker process, ``KeyboardInterrupt``.
:func:`plain_json` vets what a CRD converter returns as the API server would decode it.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from compatfuzz.errors import ConverterError, InvalidArgument
from compatfuzz.roundtrip._check._converter import WebhookAddress
from compatfuzz.roundtrip._check._usercode import describe, our_signal, safe_str, user_traceback

__all__ = ["Converters", "call_user", "check_callable", "plain_json", "short_repr"]


def wrapped(error: ConverterError, cause: BaseException) -> ConverterError:
    """``error`` carrying the user's frames of ``cause`` (the file and line in
    *their* converter, not ours)."""
    error.user_traceback = user_traceback(cause)
    return error


def call_user(fn: Callable[..., Any], args: tuple[Any, ...], what: str,
              context: str = "") -> Any:
    """``fn(*args)``; anything it raises (``SystemExit`` too) becomes a ``ConverterError``
    reading ``{what} raised {exception}{context}``, with the user's frames attached."""
    try:
        return fn(*args)
    except BaseException as exc:  # SystemExit(0) too: it must not end the run as a pass
        if our_signal(exc):
            raise  # the runner's own deadline and stop signals; Ctrl-C in-process
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
        self._with_source = convert is not None and _required_positional(convert) == 3
        self._to_hub = to_hub
        self._from_hub = from_hub
        self._paths: dict[tuple[str, str], list[str]] = {}

    def webhook(self) -> WebhookAddress | None:
        """The address of ``convert`` when it is a conversion webhook's client
        (``webhook_converter(url)`` passed as ``convert=``), else ``None``."""
        address = getattr(self._convert, "address", None)
        return address if isinstance(address, WebhookAddress) else None

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
            args = (target(a), target(b)) if self._with_source else (target(b),)
            return check(self._call("convert()", self._convert, label, a, b, obj, *args),
                         a, b)
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


def _required_positional(fn: Callable[..., Any]) -> int | None:
    """How many positional parameters ``fn`` requires (``None``: no signature to read)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return sum(1 for p in params if p.default is p.empty
               and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


#: Objects nested deeper than this are refused: the comparisons after a conversion recurse,
#: and the schemas compatfuzz reads nest at most ``schema._read.MAX_DEPTH`` (200) levels.
MAX_OUTPUT_DEPTH = 200


def _where(path: list[str | int]) -> str:
    """``spec.x[0]``, ``metadata.annotations['a.b']``, ``the top level``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "").replace("-", "").isalnum():
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "the top level"


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to 60 characters; ``...`` if the user's ``__repr__`` raises."""
    try:
        text = repr(value)
    except BaseException as exc:  # the user's __repr__
        if our_signal(exc):
            raise
        text = "..."
    return text if len(text) <= 60 else text[:57] + "..."


def plain_json(value: Any, what: str) -> Any:
    """A plain copy of ``value`` (``dict``/``list``/``str``/``int``/``float``/``bool``/
    ``None``), the object a conversion webhook would send back as JSON.

    The API server decodes a conversion response's ``convertedObjects`` from JSON
    (``getRawExtensionObject`` in
    ``k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go``) and
    deep-copies unstructured content with ``runtime.DeepCopyJSONValue``
    (``k8s.io/apimachinery/pkg/runtime/converter.go``), which knows only those types: an
    in-process converter must not get away with what no webhook could send.  Subclasses
    (``OrderedDict``, a ``str`` enum) are read as ``json.dumps`` reads them (a dict through
    its ``items()``) and copied into the plain types, so later steps never run their code.

    Raises:
        ConverterError: ``{what} returned ...`` naming the first thing JSON cannot hold
            and where: a list that contains itself, a non-string key, a ``set``, NaN, a
            dict whose ``items()`` raised, nesting deeper than ``MAX_OUTPUT_DEPTH``.
    """
    ancestors: dict[int, Any] = {}

    def refuse(message: str, tail: str = " (a conversion webhook could not send it: the "
               "API server reads a converted object as JSON)") -> ConverterError:
        return ConverterError(f"{what} returned {message}{tail}")

    # a path is a linked tuple (parent path, key), built as cheaply as a node is visited
    # and turned into ``spec.x[0]`` only for a message
    def where(path: Any) -> str:
        parts: list[str | int] = []
        while path is not None:
            path, key = path
            parts.append(key)
        return _where(parts[::-1])

    def walk(node: Any, path: Any, depth: int) -> Any:
        kind = type(node)
        if kind is str or kind is int or kind is bool or node is None:
            return node
        if kind is dict or kind is list or isinstance(node, (dict, list)):
            if id(node) in ancestors:
                name = "dict" if isinstance(node, dict) else "list"
                return_to = where(ancestors[id(node)])
                raise refuse(f"a {name} that contains itself at {return_to} "
                             f"({where(path)} is {return_to} again); JSON cannot hold a "
                             "cycle")
            if depth >= MAX_OUTPUT_DEPTH:
                raise refuse(f"an object nested more than {MAX_OUTPUT_DEPTH} levels deep "
                             f"at {where(path)[:60]}...", "; compatfuzz compares objects "
                             f"up to {MAX_OUTPUT_DEPTH} levels deep, as deep as the schemas "
                             "it reads")
            ancestors[id(node)] = path
            try:  # loops, not comprehensions: one frame per level
                if isinstance(node, dict):
                    mapping = {}
                    for key, v in items(node, path):
                        mapping[key] = walk(v, (path, key), depth + 1)
                    return mapping
                out = []
                for i, v in enumerate(list.copy(node)):  # json.dumps reads the list itself
                    out.append(walk(v, (path, i), depth + 1))
                return out
            finally:
                del ancestors[id(node)]
        if isinstance(node, float):
            if not math.isfinite(node):
                raise refuse(f"a float {float.__repr__(node)} at {where(path)}; JSON has "
                             "no NaN or Infinity")
            return float.__float__(node)
        if isinstance(node, str):
            return str.__str__(node)
        if isinstance(node, int) and not isinstance(node, bool):
            return int.__int__(node)
        hint = " (use a list)" if isinstance(node, (tuple, set, frozenset)) else ""
        raise refuse(f"{short_repr(node)} ({type(node).__name__}) at {where(path)}; JSON "
                     "holds only objects (dict), arrays (list), strings, numbers, "
                     f"true/false and null{hint}")

    def items(node: dict[Any, Any], path: Any) -> Iterable[tuple[str, Any]]:
        if type(node) is dict:
            pairs = list(dict.items(node))
        else:
            try:  # what json.dumps reads: the subclass's own items()
                pairs = [(k, v) for k, v in itertools.islice(node.items(),
                                                             dict.__len__(node) + 1)]
            except BaseException as exc:  # anything the user's code does
                if our_signal(exc):
                    raise
                error = refuse(f"a {type(node).__name__} (a dict subclass) at "
                               f"{where(path)} whose items() raised "
                               f"{type(exc).__name__}: {safe_str(exc)}; json.dumps calls it")
                raise wrapped(error, exc) from exc
        for key, _ in pairs:
            if type(key) is not str:
                if not isinstance(key, str):
                    raise refuse(f"a dict key {short_repr(key)} ({type(key).__name__}) at "
                                 f"{where(path)}; JSON object keys are strings")
                return [(str.__str__(k), v) for k, v in pairs]
        return pairs

    return walk(value, None, 0)
