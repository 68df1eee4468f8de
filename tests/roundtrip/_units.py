"""Run an API's units in-process and index the results: shared by the round-trip tests."""

from __future__ import annotations

from typing import Any

from compatfuzz.roundtrip import API, Status, UnitFinished, run


def results(api: API, examples: int = 60, **options: Any) -> dict[str, Any]:
    """Unit results by id without the API name (``roundtrip[v1->v2]``), seed 3."""
    return {e.result.unit.id.split("::", 1)[1]: e.result
            for e in run(api, database="none", seed=3, max_examples=examples, **options)
            if isinstance(e, UnitFinished)}


def failed(results: dict[str, Any]) -> dict[str, str]:
    """The messages of the units that did not pass."""
    return {k: r.message for k, r in results.items() if r.status is not Status.PASSED}
