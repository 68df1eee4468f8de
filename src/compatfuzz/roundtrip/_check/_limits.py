"""The plan limit's argument: how many version tuples a kind and property may plan (the
API reads it on construction, the planner when it samples)."""

from __future__ import annotations

from typing import Any

from compatfuzz.errors import InvalidArgument

#: At most this many version tuples per kind and property are planned by default: all of
#: them up to it (17 versions give 272 pairs; 7 versions 210 triples), a fixed sample
#: beyond. ``path_independent`` is cubic in the versions: 200 versions are 7,880,400
#: triples, gigabytes before the first unit ran. ``plan_limit=None``
#: (config key ``plan_limit = "none"``, ``--plan-limit none``) plans every tuple.
DEFAULT_PLAN_LIMIT = 300


_UNLIMITED = ("none", "all")


def plan_limit_arg(value: Any, what: str = "plan_limit") -> int | None:
    """``value`` as a plan limit: a positive int, or ``None`` (also ``"none"``/``"all"``)
    for no limit.

    Raises:
        InvalidArgument: anything else.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in _UNLIMITED):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(
            f"Expected a positive number of version tuples or 'none' but got {what}="
            f"{value!r}; 'none' plans every version pair and triple")
    return value


