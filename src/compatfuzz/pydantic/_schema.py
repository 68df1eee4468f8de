"""A pydantic model's JSON Schema, tightened where pydantic's own is looser than the
model, and the strategy of the documents the model accepts.

``model_json_schema(mode="validation")`` describes what a client may send; pydantic's
generator (``pydantic/json_schema.py``, ``GenerateJsonSchema.decimal_schema``) writes a
``Decimal`` with ``max_digits``/``decimal_places`` as ``anyOf: [number, string]`` with no
pattern, so a third of the documents drawn from it were refused (``"a\\u200bb"`` is not
a decimal; measured on 300 draws of a three-field order).  :class:`_Tight` (a
``GenerateJsonSchema`` subclass, the documented way to change the output) writes those
as digit strings and integers within the bounds.  The strategy keeps only what
``model_validate_json`` accepts: field and model validators are code no schema shows.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

__all__ = ["model_schema", "model_strategy"]

Mode = Literal["validation", "serialization"]


class _Tight(GenerateJsonSchema):
    """pydantic's JSON Schema generator, with decimals a generator can honour."""

    def decimal_schema(self, schema: Any) -> Any:
        out = super().decimal_schema(schema)
        if self.mode != "validation":
            return out
        places = schema.get("decimal_places")
        digits = schema.get("max_digits")
        whole = None if digits is None else max(digits - (places or 0), 0)
        low = next((schema[k] for k in ("ge", "gt") if schema.get(k) is not None), None)
        sign = "" if low is not None and low >= 0 else "-?"
        ints = "0" if whole == 0 else r"\d{1," + str(min(whole or 12, 12)) + "}"
        fraction = "" if places == 0 else r"(\.\d{1," + str(min(places or 6, 6)) + "})?"
        text = f"^{sign}{ints}{fraction}$"
        number: dict[str, Any] = {"type": "integer"}
        for key, name in (("ge", "minimum"), ("le", "maximum"),
                          ("gt", "exclusiveMinimum"), ("lt", "exclusiveMaximum")):
            if schema.get(key) is not None:
                number[name] = float(schema[key])
        if whole is not None:
            number.setdefault("maximum", 10 ** whole - 1)
            number.setdefault("minimum", -(10 ** whole - 1))
        return {"anyOf": [number, {"type": "string", "pattern": text}]}


def model_schema(model: type[BaseModel], mode: Mode = "validation") -> dict[str, Any]:
    """``model``'s JSON Schema in ``mode`` (``$defs`` and local ``$ref``), by alias, with
    decimals tightened (module docstring)."""
    schema: dict[str, Any] = model.model_json_schema(mode=mode, schema_generator=_Tight)
    return schema


def _accepts(model: type[BaseModel]) -> Any:
    def accepted(doc: Any) -> bool:
        try:
            model.model_validate_json(json.dumps(doc))
        except ValueError:  # pydantic's ValidationError, or JSON the draw cannot hold
            return False
        return True

    accepted.__name__ = f"{model.__name__}.model_validate_json"
    return accepted


Shape = Literal["request", "response"]


def _dumped(model: type[BaseModel]) -> Any:
    def dump(doc: Any) -> Any:
        return model.model_validate_json(json.dumps(doc)).model_dump(mode="json",
                                                                    by_alias=True)

    dump.__name__ = f"{model.__name__}.model_dump"
    return dump


def model_strategy(model: type[BaseModel], *, shape: Shape = "request",
                   **options: Any) -> st.SearchStrategy[Any]:
    """Return a strategy for JSON documents of ``model``.

    ``shape="request"`` (the default): documents a client may send, drawn by
    ``compatfuzz.strategies.from_schema`` from :func:`model_schema` (``options`` are its
    keyword arguments: ``max_list_extra``, ``overrides``, ...), keeping those
    ``model.model_validate_json`` accepts.  ``shape="response"``: what a server sends,
    those documents validated and dumped (``model_dump(mode="json", by_alias=True)``), so
    computed fields, serializers and serialization aliases apply.

    Shrinks as ``from_schema`` does: towards fewer optional fields, shorter lists and
    simpler scalars.
    """
    from compatfuzz.strategies import from_schema

    if shape not in ("request", "response"):
        from compatfuzz.errors import InvalidArgument

        raise InvalidArgument(f"Expected shape='request' or 'response' but got "
                              f"shape={shape!r}")
    requests = from_schema(model_schema(model), **options).filter(_accepts(model))
    return requests if shape == "request" else requests.map(_dumped(model))
