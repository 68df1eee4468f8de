"""``[api.overrides]`` in ``compatfuzz.toml``: strategy overrides by field path, for every
API kind that draws from a schema (CRD, JSON Schema/OpenAPI, pydantic, Cadwyn).

Why: a schema says less than the code that reads it does (a CEL rule compatfuzz cannot
invert, a pattern too costly to draw, a field whose values only a list of names makes
sense for); the generator's warnings then advise an override, and a user of the config
file (``compatfuzz fuzz``, the pytest plugin) had only Python to write one in. Each key is
a field-path glob as :meth:`compatfuzz.strategies.Overrides.path` takes it, each value a
table with exactly one of:

::

    [api.overrides]
    "spec.kind" = { values = ["Deployment", "StatefulSet"] }   # one of these
    "spec.replicas" = { value = 3 }                             # always this
    "spec.image" = { regex = '[a-z]+(:[0-9]+)?' }               # a full match (Python re)
    "spec.selector" = { strategy = "fuzzers:selectors" }        # a strategy of yours, or
                                                                # a factory (node, default)
    "metadata.labels" = { patch = "fuzzers:add_app_label" }     # (value, draw) -> value
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from compatfuzz.errors import InvalidArgument

if TYPE_CHECKING:
    from compatfuzz.roundtrip._check._config import ConfigEntry
    from compatfuzz.strategies import Overrides

__all__ = ["FORMS", "overrides_option"]

#: the keys of one override table, what each means
FORMS = {
    "values": "one of these values (a non-empty array)",
    "value": "always this value",
    "regex": "strings that fully match this Python regular expression",
    "strategy": "'module:name' of a Hypothesis strategy, or of a factory "
                "(node, default_strategy) -> strategy",
    "patch": "'module:function' patch(value, draw) -> value, run on each value drawn there",
}
_EXAMPLE = '"spec.kind" = { values = ["Deployment", "StatefulSet"] }'


def overrides_option(ctx: ConfigEntry) -> Overrides | None:
    """The ``overrides`` table of an ``[[api]]`` entry as
    :class:`~compatfuzz.strategies.Overrides` (``None`` without the key).

    Raises:
        SchemaLoadError: a value that is not a table of one known form, an empty
            ``values``, a regex that does not compile, a ``strategy``/``patch`` that cannot
            be imported or is not what it should be; each at ``overrides/<path>`` with
            the fix.
    """
    from hypothesis import strategies as st

    from compatfuzz.strategies import Overrides

    if "overrides" not in ctx.table:
        return None
    table = ctx.mapping("overrides")
    out = Overrides()
    forms = ", ".join(f"{k} ({v})" for k, v in FORMS.items())
    for glob, spec in table.items():
        key = f"overrides/{glob}"
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in FORMS:
            raise ctx.error(
                f"an override is a table with one of {', '.join(FORMS)}, got {spec!r}",
                key=key, hint=f"write {_EXAMPLE}; the forms: {forms}")
        form, value = next(iter(spec.items()))
        strategy: Any = None
        patch: Any = None
        if form == "values":
            if not isinstance(value, list) or not value:
                raise ctx.error(f"values must be a non-empty array, got {value!r}",
                                key=f"{key}/values", hint=f"write {_EXAMPLE}")
            strategy = st.sampled_from(value)
        elif form == "value":
            strategy = st.just(value)
        elif form == "regex":
            try:
                strategy = st.from_regex(re.compile(str(value)), fullmatch=True)
            except re.error as exc:
                raise ctx.error(f"regex {value!r} does not compile: {exc}", key=f"{key}/regex",
                                hint="write a Python regular expression; it must match the "
                                     "whole value (no ^ or $ needed)") from None
        elif form == "strategy":
            strategy = ctx.function(f"{key}/strategy", value)
        else:
            patch = ctx.function(f"{key}/patch", value)
        try:
            out.path(str(glob), strategy, patch=patch)
        except InvalidArgument as exc:
            raise ctx.error(str(exc), key=f"{key}/{form}" if form in ("strategy", "patch")
                            else key,
                            hint="name a Hypothesis strategy (st.integers(1, 5)) or a "
                                 "function; field paths are relative to the object: "
                                 "spec.replicas, spec.containers[*].image, **.ttl") from None
    return out
