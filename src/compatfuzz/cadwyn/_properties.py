"""What a Cadwyn user expects of a bundle's migrations, as property functions and strategies.

In the words of Cadwyn's docs (docs/concepts/version_changes.md, the tutorial): the business
logic only ever sees HEAD, so

* :func:`check_request_up`: an old client's request body, migrated to HEAD, is valid there;
* :func:`check_request_roundtrip`: it loses nothing the old version can express: where the
  request and the response share a schema, request-up then response-down gives the old
  client back what it sent (the Kubernetes round-trip rule, compared by pydantic's meaning:
  both sides validated by the old model and dumped to JSON);
* :func:`check_response_down`: a HEAD response migrated to an old version is valid there
  (otherwise FastAPI answers that client with a ``ResponseValidationError``).

One engine for Python models: bodies are drawn by the pydantic family's
:func:`compatfuzz.pydantic.model_strategy` from each version's generated model, and the
round trip is judged by its :func:`compatfuzz.pydantic.model_diff` (datetimes as instants,
decimals by value, UUIDs in any case, enums as members, defaults filled in, aliases), so a
body means the same to both families; only the blame (which ``VersionChange`` and which
migration or instruction) is Cadwyn's own.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from compatfuzz.cadwyn._bundle import HEAD, CadwynAPI, Migrated, Route, Step
from compatfuzz.errors import InvalidArgument, NotEquivalent
from compatfuzz.pydantic import model_diff, model_strategy
from compatfuzz.roundtrip._check._accept import accepted_changes
from compatfuzz.roundtrip._check._verdict import render_changes


class LostInRoundTrip(NotEquivalent):
    """Request-up then response-down did not give the old client back what it sent.

    ``diff`` is the pydantic family's :func:`~compatfuzz.pydantic.model_diff` of what was
    sent and what came back (``semantic.Change`` rows with wire-name field paths);
    ``steps`` are the migrations that ran (up, then down).
    """

    def __init__(self, message: str, diff: Any, steps: tuple[Step, ...]) -> None:
        super().__init__(message, diff)
        self.steps = steps


def load_bundle(spec: str, *, root: str | Path | None = None) -> CadwynAPI:
    """Import ``"module.path:attribute"`` (a ``VersionBundle`` or a Cadwyn app) as the
    ``[[api]] cadwyn = ...`` key will, with ``root`` (the config's folder) on ``sys.path``.

    Raises:
        InvalidArgument: the spec is malformed, or the attribute is not a bundle or app.
        ImportError: the user's module failed to import (its own traceback).
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InvalidArgument(
            f"Expected cadwyn = \"module.path:attribute\" but got {spec!r}; "
            "e.g. cadwyn = \"shop.versions:version_bundle\""
        )
    if root is not None:
        from compatfuzz.errors import SchemaLoadError
        from compatfuzz.roundtrip._check._config import _put_first_on_path

        try:  # appended, never first: a json.py there must not replace the real one
            _put_first_on_path(module_name, Path(root).resolve(), source=spec)
        except SchemaLoadError as exc:
            raise InvalidArgument(str(exc)) from None
    module = importlib.import_module(module_name)
    try:
        value = getattr(module, attr)
    except AttributeError:
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        raise InvalidArgument(
            f"cadwyn = {spec!r}: module {module_name!r} has no attribute {attr!r} "
            f"(it has {names})"
        ) from None
    return CadwynAPI(value)


def request_bodies(api: CadwynAPI, schema: type[Any], version: str, *,
                   overrides: Any = None) -> st.SearchStrategy[Any]:
    """JSON request bodies valid in ``version`` (or HEAD): the pydantic family's
    :func:`~compatfuzz.pydantic.model_strategy` of the model Cadwyn generates for it
    (``overrides``: :class:`compatfuzz.strategies.Overrides` by field path).

    Values shrink as :func:`compatfuzz.strategies.from_schema`'s do: towards fewer optional
    fields, shorter strings and lists, simpler scalars.
    """
    return model_strategy(api.model(schema, version), overrides=overrides)


def response_bodies(api: CadwynAPI, schema: type[Any]) -> st.SearchStrategy[Any]:
    """JSON bodies of HEAD responses: what the business logic can return for ``schema``
    (documents the HEAD model accepts; :meth:`CadwynAPI.response_down` dumps them as a
    route's response is dumped).

    They shrink as :func:`request_bodies` does.
    """
    return request_bodies(api, schema, HEAD)


def check_request_up(api: CadwynAPI, schema: type[Any], version: str,
                     body: dict[str, Any], *, route: Route | None = None) -> Migrated:
    """An old client's ``body``, migrated to HEAD, is valid in HEAD (with ``route``, its
    path-based migrations run too).

    Raises:
        MigrationFailure: a migration raised or HEAD rejects the result (naming the
            ``VersionChange`` and the migration that touched the field).
    """
    return api.request_up(schema, body, version, route=route)


def check_response_down(api: CadwynAPI, schema: type[Any], version: str,
                        body: dict[str, Any], *, route: Route | None = None) -> Migrated:
    """A HEAD response ``body``, migrated to ``version``, is valid in ``version``.

    Raises:
        MigrationFailure: as :func:`check_request_up`.
    """
    return api.response_down(schema, body, version, route=route)


def check_request_roundtrip(api: CadwynAPI, schema: type[Any], version: str,
                            body: dict[str, Any], *, route: Route | None = None) -> Migrated:
    """Request-up then response-down gives a ``version`` client back what it sent.

    Raises:
        MigrationFailure: either direction failed on its own.
        LostInRoundTrip: the old client reads back something else; the message names the
            fields and the migrations and schema instructions that touched them.
    """
    model = api.model(schema, version)
    up = api.request_up(schema, body, version, route=route)
    down = api.response_down(schema, up.body, version, route=route)
    changes, _ = accepted_changes(model_diff(model, body, down.body))
    if not changes:
        return down
    steps = (*up.steps, *down.steps)
    article = "an" if schema.__name__[:1].lower() in "aeiou" else "a"
    lines = [f"a {version} client sent {article} {schema.__name__} and reads back something else "
             f"(request-up to HEAD, then response-down to {version}):",
             render_changes(changes)]
    keys = {*body, *down.body}
    for key in dict.fromkeys(_top_key(change.path, keys) for change in changes):
        blamed, instructions = api.blame(schema, version, key, steps)
        lines.extend(api._blame_lines(key, blamed, instructions))
    lines.append(f"  HEAD body in between: {up.body!r}")
    raise LostInRoundTrip("\n".join(lines), changes, steps)


def _top_key(path: str, keys: set[str]) -> str | None:
    """The top-level field (of ``keys``) a ``model_diff`` path is under
    (``metadata.legacy_fax`` -> ``metadata``): migrations and instructions are blamed per
    top-level field, as ``Step.touched`` sees them."""
    from compatfuzz.semantic._diff import join_name

    for key in sorted(keys, key=len, reverse=True):
        head = join_name("", key)
        if path == head or path.startswith((f"{head}.", f"{head}[")):
            return key
    return None
