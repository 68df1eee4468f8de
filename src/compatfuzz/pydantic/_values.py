"""pydantic models as judges: which JSON documents a model accepts, and what they mean.

Why pydantic itself and not our JSON Schema engine: a model's JSON Schema is a summary of
its validators (``pydantic/json_schema.py`` drops ``max_digits`` from decimals, all
``field_validator`` / ``model_validator`` code, and Rust-regex patterns), so only
``model_validate_json`` says what a version accepts, and its errors name the field
(``items.0.price``).  Documents are validated in JSON mode because they are JSON: in
strict models Python-mode validation refuses the string a client sends for a ``UUID``
(``pydantic-core/src/input/input_json.rs`` accepts it).

Equality (:func:`canonical`) is pydantic's meaning of the values: both documents are
validated by the version's model, and the instance's field values (defaults filled in,
aliases and names read alike, enums as members, ``Decimal``/``UUID``/``datetime`` as
objects; not ``model_dump``, whose serializers could make two different values look
alike) are written as JSON with one spelling per value: an aware datetime as its UTC
instant (``...+01:00`` and the same instant in ``Z`` are equal, as ``datetime.__eq__``
says), a ``Decimal`` normalised (``"1.0"`` == ``1``),
a ``UUID`` in lower case, a set as a sorted list.  Everything else is compared exactly
(``roundtrip``'s ``literal_diff``: ``None`` and ``[]`` differ, as they do to pydantic), so
a lost field or a changed value is reported by its wire name (the alias).
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import json
import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from compatfuzz.errors import NotEquivalent, NotValid

__all__ = ["canonical", "equivalent", "expect_equivalent", "expect_valid", "is_model",
           "model_diff", "parse", "validation_errors"]


def is_model(obj: Any) -> bool:
    """Whether ``obj`` is a pydantic (v2) ``BaseModel`` subclass."""
    return isinstance(obj, type) and issubclass(obj, BaseModel) and obj is not BaseModel


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def parse(model: type[BaseModel], data: Any) -> tuple[BaseModel | None, list[str]]:
    """``model`` validating the JSON document ``data``: the instance, or ``None`` and
    pydantic's errors as ``path: message`` lines (``items[0].price: Input should be a
    valid decimal``)."""
    try:
        text = json.dumps(data)
    except (TypeError, ValueError) as exc:
        return None, [f"<root>: not JSON: {exc}"]
    try:
        return model.model_validate_json(text), []
    except ValidationError as exc:
        return None, [f"{_location(tuple(e['loc']))}: {e['msg']}"
                      + (f" (got {json.dumps(e['input'])[:60]})"
                         if e.get("type") != "missing" and _jsonable(e.get("input")) else "")
                      for e in exc.errors(include_url=False)]


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def validation_errors(model: type[BaseModel], data: Any) -> list[str]:
    """pydantic's errors for ``data`` under ``model`` (empty: it is valid)."""
    return parse(model, data)[1]


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _plain(value: Any) -> Any:
    """A Python-mode dump value as JSON with one spelling per meaning (module docstring)."""
    if value is None or (isinstance(value, (bool, int, float, str)) and not isinstance(
            value, enum.Enum)):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, Mapping):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            try:
                return value.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat() + "Z"
            except OverflowError:  # 0001-01-01T00:00:00+01:00 is in year 0 in UTC
                since = value - _EPOCH  # aware minus aware: a timedelta, never overflows
                return f"{since // dt.timedelta(microseconds=1)}us after 1970-01-01T00:00:00Z"
        return value.isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"{value.total_seconds()!r}s"
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return str(value)
        return format(value.normalize(), "f") if value else "0"
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        out = {(info.alias or name): _plain(getattr(value, name))
               for name, info in fields.items()}
        out.update({str(k): _plain(v) for k, v in (value.__pydantic_extra__ or {}).items()})
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return str(value)  # URLs, IP addresses, paths: their canonical text


def canonical(model: type[BaseModel], data: Any) -> Any:
    """``data`` as ``model`` reads it, in the canonical JSON form equality compares.

    Raises:
        NotEquivalent: ``model`` does not accept ``data`` (naming each invalid field).
    """
    inst, errors = parse(model, data)
    if inst is None:
        raise NotEquivalent(f"not a valid {model.__name__}:\n"
                            + "\n".join(f"  {e}" for e in errors[:20]))
    return _plain(inst)


def model_diff(model: type[BaseModel], expected: Any, actual: Any) -> list[Any]:
    """The differences between two documents read by ``model``, as ``semantic.Change``
    rows with wire-name paths (empty: they mean the same)."""
    from compatfuzz.roundtrip._check._verdict import literal_diff

    return literal_diff(canonical(model, expected), canonical(model, actual))


def equivalent(model: type[BaseModel], a: Any, b: Any) -> bool:
    """Whether two documents ``model`` accepts mean the same to it (module docstring).

    An equivalence on valid documents: both sides are reduced to one canonical form.
    """
    return bool(canonical(model, a) == canonical(model, b))


def expect_valid(model: type[BaseModel], data: Any, what: str) -> None:
    """Raise ``NotEquivalent("{what}:" + pydantic's errors)`` unless ``model`` accepts
    ``data`` (errors at paths an ``[[api.accept]]`` entry of the check covers aside)."""
    from compatfuzz.roundtrip._check._accept import accepted_errors

    errors = accepted_errors(validation_errors(model, data))
    if errors:
        raise NotValid(f"{what}:\n" + "\n".join(f"  {e}" for e in errors[:20]))


def expect_equivalent(model: type[BaseModel], expected: Any, actual: Any, what: str) -> None:
    """Raise ``NotEquivalent("{what}:" + field-path diff)`` unless ``actual`` means
    ``expected`` to ``model`` (an ``actual`` the model refuses is reported with its
    errors); differences an ``[[api.accept]]`` entry of the check covers are none."""
    from compatfuzz.roundtrip._check._accept import accepted_changes, accepted_errors
    from compatfuzz.roundtrip._check._verdict import render_changes

    errors = accepted_errors(validation_errors(model, actual))
    if errors:
        raise NotEquivalent(f"{what}: the result is not a valid {model.__name__}:\n"
                            + "\n".join(f"  {e}" for e in errors[:20]))
    if validation_errors(model, actual):  # every error accepted: compare as sent
        from compatfuzz.roundtrip._check._verdict import literal_diff

        changes, _ = accepted_changes(literal_diff(expected, actual))
    else:
        changes, _ = accepted_changes(model_diff(model, expected, actual))
    if changes:
        raise NotEquivalent(f"{what}:\n{render_changes(changes)}", diff=changes)
