"""The parts of a request besides its body: header, query and cookie parameters.

A Cadwyn request migration sees them as ``RequestInfo.headers``, ``.query_params`` and
``.cookies`` and may rewrite them before HEAD's endpoint reads them (Cadwyn's
``structure/versions/_requests.py`` writes the migrated headers back into the ASGI scope;
the query and cookie dicts are the request's own).  So a route property sends each
parameter a route declares, drawn from its declared type, and every migration on the way
runs on real values: one that reads an optional parameter as if it were always there, or
rewrites one into a value HEAD refuses, fails like any other migration.

Cadwyn serves every version of a route with HEAD's endpoint signature (its version
changes alter paths, methods, status codes and schemas, not parameters), so the
parameters are read from the HEAD route's FastAPI ``Dependant``, sub-dependencies
included (``fastapi/dependencies/models.py``).  Values go on the wire as HTTP carries
them: text, ``true``/``false``, numbers as Python writes them; a list parameter as
repeated query keys.  Parameters whose type is a model (FastAPI's parameter models) are
left out, as are the version header, which the client sets, and headers HTTP itself
owns.
"""

from __future__ import annotations

import enum
import string
from dataclasses import dataclass
from typing import Annotated, Any, Literal

__all__ = ["Param", "Sent", "params_of", "params_strategy", "wire"]

Where = Literal["header", "query", "cookie"]

#: headers the HTTP client or compatfuzz sets: never drawn
_OWNED = frozenset({"content-type", "content-length", "host", "transfer-encoding",
                    "connection", "cookie", "accept-encoding", "user-agent", "accept"})
#: what a header value may hold and keep as sent (visible ASCII and inner spaces: HTTP
#: strips the ends, RFC 9110 section 5.5)
_HEADER_TEXT = string.ascii_letters + string.digits + string.punctuation + " "
#: a cookie value's octets (RFC 6265 section 4.1.1: no spaces, quotes, commas,
#: semicolons or backslashes)
_COOKIE_TEXT = "".join(c for c in string.ascii_letters + string.digits + string.punctuation
                       if c not in '",;\\')


@dataclass(frozen=True)
class Param:
    """One parameter a route declares: where it goes, its name on the wire (FastAPI's
    alias: ``x-request-id`` for ``x_request_id: Header()``), its annotation and whether
    the route requires it."""

    where: Where
    name: str
    annotation: Any
    required: bool


Sent = dict[str, dict[str, Any]]
"""What one request sends besides its body: ``{"header": {...}, "query": {...}, "cookie":
{...}}`` of wire values (a query list parameter's value is a list)."""


def _is_model(annotation: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def params_of(apiroute: Any) -> tuple[Param, ...]:
    """The header, query and cookie parameters of a FastAPI ``APIRoute``, its
    dependencies' too, each once."""
    out: dict[tuple[str, str], Param] = {}

    def walk(dependant: Any) -> None:
        for where, fields in (("header", dependant.header_params),
                              ("query", dependant.query_params),
                              ("cookie", dependant.cookie_params)):
            for field in fields:
                info = field.field_info
                name = str(field.alias or field.name)
                key = (where, name.lower() if where == "header" else name)
                if key not in out and not _is_model(info.annotation):
                    # the bounds (``Header(ge=0, le=9)``) are the field's metadata
                    annotation = (Annotated[(info.annotation, *info.metadata)]
                                  if info.metadata else info.annotation)
                    out[key] = Param(where, name, annotation,  # type: ignore[arg-type]
                                     bool(info.is_required()))
        for sub in dependant.dependencies:
            walk(sub)

    walk(apiroute.dependant)
    return tuple(out.values())


def wire(value: Any) -> Any:
    """A JSON value as a parameter carries it: text (a list stays a list, ``None`` stays
    ``None``: the parameter is left out)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return wire(value.value)
    if isinstance(value, list | tuple):
        return [wire(v) for v in value if v is not None]
    return str(value)


def _keeps(where: Where, value: Any) -> bool:
    """Whether HTTP carries ``value`` to the app as it was sent."""
    if where == "query":
        return not isinstance(value, list) or bool(value)
    allowed = _HEADER_TEXT if where == "header" else _COOKIE_TEXT
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(
        isinstance(v, str) and all(c in allowed for c in v)
        and (where == "cookie" or v == v.strip()) for v in values)


def _value(param: Param) -> Any:
    """Wire values of ``param``'s declared type."""
    from hypothesis import strategies as st
    from pydantic import create_model

    from compatfuzz.pydantic import model_strategy

    if param.annotation is str and param.where != "query":
        text = _HEADER_TEXT if param.where == "header" else _COOKIE_TEXT
        return st.text(alphabet=text, max_size=16).filter(lambda v: v == v.strip())
    model = create_model("Parameter", value=(param.annotation, ...))
    return (model_strategy(model).map(lambda doc: wire(doc["value"]))
            .filter(lambda v: v is not None and _keeps(param.where, v)))


def params_strategy(params: tuple[Param, ...], *, version_header: str) -> Any:
    """A strategy for :data:`Sent`: each required parameter, and each optional one
    present or left out (a migration must cope with both)."""
    from hypothesis import strategies as st

    parts = {}
    for where in ("header", "query", "cookie"):
        drawn = [p for p in params if p.where == where
                 and not (where == "header" and p.name.lower() in
                          (_OWNED | {version_header.lower()}))]
        parts[where] = st.fixed_dictionaries(
            {p.name: _value(p) for p in drawn if p.required},
            optional={p.name: _value(p) for p in drawn if not p.required})
    # a part with nothing in it is left out, so a counterexample shows what was sent
    return st.fixed_dictionaries(parts).map(lambda sent: {k: v for k, v in sent.items() if v})
