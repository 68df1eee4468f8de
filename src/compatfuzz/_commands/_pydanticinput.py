"""``pydantic:module:Model`` on the command line (``compatfuzz diff``): two revisions of a
pydantic model compared through their JSON Schemas.

A model has two shapes: what it accepts (``model_json_schema(mode="validation")``, the
request a client sends) and what it emits (``mode="serialization"``, the response a
server sends); they differ for decimals, computed fields, serialization aliases and
defaults.  ``--direction request`` compares the validation schemas, ``response`` the
serialization schemas, ``auto``/``both`` each shape in its own direction (one comparison
in both directions when the two shapes are the same).  Checked without importing pydantic
until a ``pydantic:`` input is given, which without the extra is an error naming it.

Both schemas are marked as a web API's (``compat/_rest.py``): their findings are judged in
requests and responses, not in stored Kubernetes objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

__all__ = ["PREFIX", "is_pydantic", "model_events", "pydantic_events"]

PREFIX = "pydantic:"


def is_pydantic(spec: str) -> bool:
    """Whether ``spec`` names a pydantic model (``pydantic:module:Model``)."""
    return spec.startswith(PREFIX)


def _model(spec: str) -> Any:
    from compatfuzz.errors import SchemaLoadError

    target = spec.removeprefix(PREFIX)
    if ":" not in target:
        raise SchemaLoadError(f"expected pydantic:module:Model, got {spec!r}", source=spec,
                              hint="e.g. pydantic:shop.models.v1:Order (the module "
                                   "relative to the working directory, or installed)")
    try:
        from compatfuzz.pydantic import is_model
    except ImportError as exc:
        raise SchemaLoadError(f"pydantic support is not installed ({exc.name} is missing)",
                              source=spec, hint="pip install 'compatfuzz[pydantic]'") from None
    from compatfuzz.roundtrip._check._config import resolve_object

    model = resolve_object(target, Path.cwd(), source=spec)
    if not is_model(model):
        raise SchemaLoadError(f"{target!r} is not a pydantic BaseModel subclass "
                              f"(got {type(model).__name__} {model!r:.60})", source=spec,
                              hint="name the model class: pydantic:module:Order")
    return model


def pydantic_events(old: str, new: str, direction: str, **options: Any) -> Iterator[Any]:
    """The events of ``compat.check`` on the two models' JSON Schemas (module docstring);
    ``options`` are ``check``'s keyword arguments.

    Raises:
        SchemaLoadError: a spec that does not name an importable pydantic model.
    """
    models = (_model(old), _model(new))  # first: a missing extra is an input error
    yield from model_events(old, new, models, direction, **options)


def model_events(old: str, new: str, models: tuple[Any, Any], direction: str, *,
                 name: str | None = None, renames: Mapping[str, Any] | None = None,
                 **options: Any) -> Iterator[Any]:
    """The events of ``compat.check`` on two model classes labelled ``old`` and ``new``:
    ``direction`` ``request`` compares the validation shapes, ``response`` the
    serialization shapes, anything else each shape in its own direction (module
    docstring).  Findings are located under ``name.request``/``name.response`` (``name``
    alone when both directions share one comparison), or ``request``/``response`` without
    a name: a Cadwyn diff compares several schemas in one run.  ``renames`` are the
    renames the API declares, for NEW's ``Schema.meta`` (``compat/_static.py``,
    ``RENAMES``).
    """
    from compatfuzz.compat import check
    from compatfuzz.compat._engine import Revision
    from compatfuzz.compat._rest import API_KEY, REST
    from compatfuzz.compat._static import RENAMES
    from compatfuzz.pydantic import model_schema
    from compatfuzz.schema import load_schema

    def key(way: str) -> str:
        if name is None:
            return "request" if way == "both" else way
        return name if way == "both" else f"{name}.{way}"

    def side(label: str, model: Any, mode: Any, way: str, *, newer: bool) -> Revision:
        schema = load_schema(model_schema(model, mode))
        meta = {**schema.meta, API_KEY: REST}
        if newer and renames:
            meta[RENAMES] = renames
        return Revision(label, definitions={key(way): replace(schema, meta=meta)})

    if direction == "request":
        plan = [("validation", "request")]
    elif direction == "response":
        plan = [("serialization", "response")]
    elif all(model_schema(m) == model_schema(m, "serialization") for m in models):
        plan = [("validation", "both")]
    else:
        plan = [("validation", "request"), ("serialization", "response")]
    for mode, way in plan:
        yield from check(side(old, models[0], mode, way, newer=False),
                         side(new, models[1], mode, way, newer=True), direction=way, **options)
