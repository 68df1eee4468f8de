"""Round-trip every version pair of an API through the user's converters.

Declare an :class:`API` (in Python, or ``[[api]]`` in ``compatfuzz.toml`` /
``[[tool.compatfuzz.api]]`` in ``pyproject.toml``); :func:`units` lists one test per
(kind, property, version pair); :func:`build_test` turns a unit into an ordinary
Hypothesis test; :func:`run` runs them all and yields events for the CLI and the pytest
plugin.  Other API families (``compatfuzz.protobuf``) plug in as a :class:`Suite`, and
into config files through the ``compatfuzz.apis`` entry points (:class:`ConfigEntry`).
:class:`Accept` entries (``[[api.accept]]``) accept deliberate differences.
See docs/roundtrip.md.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.roundtrip._check._accept import Accept
from compatfuzz.roundtrip._check._config import ConfigEntry, find_config, load_config
from compatfuzz.roundtrip._check._model import API, Kind
from compatfuzz.roundtrip._check._plan import units
from compatfuzz.roundtrip._check._properties import check
from compatfuzz.roundtrip._check._suite import Suite
from compatfuzz.roundtrip._check._webhook import WebhookError, WebhookUnavailable, webhook_converter
from compatfuzz.roundtrip._engine._database import namespaced, open_database
from compatfuzz.roundtrip._engine._given import build_test
from compatfuzz.roundtrip._engine._profiles import get_profile
from compatfuzz.roundtrip._engine._runner import LiveCounts, run
from compatfuzz.roundtrip._engine._unit import run_unit
from compatfuzz.roundtrip._events import (
    Counterexample,
    Event,
    Notice,
    Property,
    RunFinished,
    RunStarted,
    Status,
    StopReason,
    Unit,
    UnitFinished,
    UnitResult,
    UnitStarted,
)

__all__ = [
    "API",
    "Accept",
    "ConfigEntry",
    "Counterexample",
    "Event",
    "Kind",
    "LiveCounts",
    "Notice",
    "Property",
    "RunFinished",
    "RunStarted",
    "Status",
    "StopReason",
    "Suite",
    "Unit",
    "UnitFinished",
    "UnitResult",
    "UnitStarted",
    "WebhookError",
    "WebhookUnavailable",
    "build_test",
    "check",
    "find_config",
    "get_profile",
    "load_config",
    "namespaced",
    "open_database",
    "run",
    "run_unit",
    "units",
    "webhook_converter",
]

_rehome(globals())
