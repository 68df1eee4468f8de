"""``pydantic = {...}`` in ``compatfuzz.toml``: an API of pydantic models for ``compatfuzz
fuzz`` and pytest.

::

    [[api]]
    name = "orders"
    pydantic = { v1 = "shop.models.v1:Order", v2 = "shop.models.v2:Order" }
    converters = { "v1->v2" = "shop.conversion:v1_to_v2", "v2->v1" = "shop.conversion:v2_to_v1" }
    # or convert = "mod:convert", or to_hub/from_hub with hub = "v2"

    [[api.accept]]                  # optional: a difference a version shows on purpose
    property = "roundtrip"
    versions = "v2->v1"
    path = "discount"
    why = "v1 has no discounts; v2 orders lose theirs when a v1 client writes them"

``roundtrip``'s config loader finds :func:`load_api` through the ``compatfuzz.apis`` entry
point named ``pydantic`` (it never imports this part, which needs the ``pydantic`` extra:
without it the error says ``pip install 'compatfuzz[pydantic]'``).  Models are imported
as converters are, relative to the config's folder, with the user's traceback when their
module fails to import.
"""

from __future__ import annotations

from compatfuzz.pydantic._api import PydanticAPI
from compatfuzz.pydantic._values import is_model
from compatfuzz.roundtrip import ConfigEntry

__all__ = ["KEYS", "load_api"]

KEYS = frozenset({"name", "pydantic", "hub", "convert", "to_hub", "from_hub", "converters",
                  "accept", "overrides"})
_EXAMPLE = 'pydantic = { v1 = "shop.models.v1:Order", v2 = "shop.models.v2:Order" }'


def load_api(entry: ConfigEntry) -> PydanticAPI:
    """The :class:`PydanticAPI` an ``[[api]]`` table with ``pydantic =`` declares.

    Raises:
        SchemaLoadError: an unknown key, a model module or class that cannot be imported,
            a value that is not a pydantic model, a converter that cannot be imported
            (naming the file, the key and a fix).
    """
    entry.check_keys(KEYS)
    name = entry.name()
    raw = entry.table["pydantic"]
    if not isinstance(raw, dict) or not raw:
        raise entry.error(f"pydantic must be a table of version -> model, got {raw!r}",
                          key="pydantic", hint=f"write {_EXAMPLE} (modules relative to "
                                               "this file)")
    models = {}
    for version, spec in raw.items():
        key = f"pydantic/{version}"
        if not isinstance(spec, str) or ":" not in spec:
            raise entry.error(f"expected 'module:Model', got {spec!r}", key=key,
                              hint=f"write {_EXAMPLE}")
        model = entry.function(key, spec)
        if not is_model(model):
            bases = ", ".join(b.__name__ for b in getattr(model, "__bases__", ()))
            what = (f"a class ({bases}), not a pydantic BaseModel subclass"
                    if isinstance(model, type) else f"a {type(model).__name__}, not a class")
            raise entry.error(f"{spec!r} is {what}", key=key,
                              hint="name the pydantic model class of that version "
                                   "(class Order(BaseModel)), as 'module:Order'")
        models[str(version)] = model
    options = entry.converter_options()
    if "overrides" in entry.table:
        from compatfuzz.roundtrip._check._config_overrides import overrides_option

        options["overrides"] = overrides_option(entry)
    return PydanticAPI(name, models, accept=entry.accept_entries([list(models)]), **options)
