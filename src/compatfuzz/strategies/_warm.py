"""Pay Hypothesis's one-time set-up before any clock that times examples starts.

Why: the first examples a process draws pay two costs that are Hypothesis's, not the
example's. Hypothesis builds its Unicode tables on first use in a folder and caches them in
``.hypothesis/unicode_data`` (about 5 CPU seconds in a fresh checkout, a CI job). And
Hypothesis mixes constants from the project's own modules into draws: the first time a
draw asks for one (5% of primitive draws, ``HypothesisProvider._maybe_draw_constant`` in
``hypothesis/internal/conjecture/providers.py``) it parses every local module's source
(``constants_ast.constants_from_module``), about 1.2 CPU seconds for an editable install of
compatfuzz, cached in ``.hypothesis/constants`` only from then on. Charged to the witness
search's budget (``compat._budget``) it cut the first search short in CI; charged to the
per-example deadline (``roundtrip._deadline``) it failed an example on a loaded machine.

:func:`warm_up` draws, through Hypothesis's public ``find``, strings (plain and patterned)
and enough integers that a constant is asked for with certainty in practice
(1 - 0.95**400), once per process. (Its first example is the simplest one, drawn without
randomness, so it asks for three.)
"""

from __future__ import annotations

__all__ = ["warm_up"]

_WARM: list[bool] = []

#: integers drawn so that some draw asks for a local constant: 0.95**400 < 1e-8
_DRAWS = 400


def warm_up() -> None:
    """Do Hypothesis's one-time set-up (Unicode tables, local constants) now, once per
    process; later module imports are harvested when they happen, as Hypothesis does."""
    if _WARM:
        return
    _WARM.append(True)
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis import strategies as st

    from compatfuzz.schema import Schema
    from compatfuzz.strategies._api import from_schema

    # the first example is the simplest (no random draws): three, none accepted
    few = settings(max_examples=3, database=None, deadline=None, phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    schema = Schema(root={"type": "object", "properties": {
        "text": {"type": "string", "minLength": 1},
        "word": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["text", "word"]})
    draws = st.tuples(from_schema(schema),
                      st.lists(st.integers(), min_size=_DRAWS, max_size=_DRAWS))
    try:
        find(draws, lambda _: False, settings=few)
    except Exception:  # NoSuchExample; a warm-up that fails changes nothing
        return
