"""APIs versioned as pydantic models, one per version: strategies, validity, equality.

``model_strategy`` draws the JSON documents a model accepts (from its JSON Schema, judged
by ``model_validate_json``); ``canonical``/``equivalent``/``model_diff`` compare two
documents as a model reads them (datetimes as instants, decimals by value, UUIDs in any
case, defaults filled in, aliases); ``PydanticAPI`` runs ``encodings``, ``roundtrip``, ``valid``,
``no_mutation`` and ``path_independent`` through the user's converters in ``compatfuzz
fuzz`` and the pytest plugin (``pydantic = {...}`` in ``compatfuzz.toml``).  Needs the
``compatfuzz[pydantic]`` extra.  See ``docs/pydantic.md``.

The package is named after the library it serves, as ``compatfuzz.protobuf`` is; its
modules import ``pydantic`` absolutely (Python 3 has no implicit relative imports), so
the library is never shadowed.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.pydantic._api import PROPERTIES, PydanticAPI, as_document, model_input
from compatfuzz.pydantic._schema import model_schema, model_strategy
from compatfuzz.pydantic._values import (
    canonical,
    equivalent,
    expect_equivalent,
    expect_valid,
    is_model,
    model_diff,
    parse,
    validation_errors,
)

__all__ = [
    "PROPERTIES",
    "PydanticAPI",
    "as_document",
    "canonical",
    "equivalent",
    "expect_equivalent",
    "expect_valid",
    "is_model",
    "model_diff",
    "model_input",
    "model_schema",
    "model_strategy",
    "parse",
    "validation_errors",
]

_rehome(globals())
