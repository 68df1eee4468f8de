"""Issue 17: a Kubernetes ``format: duration`` field means what its own pattern says.

The Timer CRD (data/timers.yaml) has an ISO 8601 ``timeout`` and a Go ``interval``; its
converters respell both on every trip (tests/roundtrip/timers.py). A correct converter
must pass, and one that rounds the timeout to minutes must be reported with that bug as
the shrunk counterexample, not with a respelling such as ``PT0H`` -> ``PT0S`` (which is
what the Go-only comparison used to report, hiding the real bug).
"""

from __future__ import annotations

from typing import Any

import pytest

from compatfuzz.errors import NotEquivalent
from compatfuzz.roundtrip import Status, UnitFinished, UnitResult, check, run, units
from compatfuzz.semantic._values import duration_key

from . import timers

SEED = 20261125


def _results(api: Any) -> dict[str, UnitResult]:
    return {e.result.unit.id: e.result for e in run(api, database="none", seed=SEED)
            if isinstance(e, UnitFinished)}


def test_a_converter_that_respells_durations_passes() -> None:
    results = _results(timers.api())
    roundtrips = {k: r for k, r in results.items() if "roundtrip" in k}
    assert roundtrips
    failed = {k: (r.message, r.counterexample and r.counterexample.diff)
              for k, r in results.items() if r.status is Status.FAILED}
    assert not failed


@pytest.mark.parametrize(("old", "new"), [("PT0H", "PT0S"), ("PT1H", "PT3600S"),
                                          ("PT90M", "PT1H30M")])
def test_the_respellings_themselves_are_no_change(old: str, new: str) -> None:
    api = timers.api()
    unit = next(u for u in units(api) if u.id.endswith("roundtrip[v1->v1alpha1]"))
    obj = {"apiVersion": f"{timers.GROUP}/v1", "kind": "Timer",
           "spec": {"timeout": old, "interval": "90m"}}
    assert timers.from_hub(timers.to_hub(obj), "v1alpha1")["spec"]["timeout"] != old
    check(api, unit, obj)  # raises NotEquivalent on a false failure
    assert timers.iso_seconds(new) == timers.iso_seconds(old)


def test_rounding_the_timeout_is_caught_and_reported_as_itself() -> None:
    api = timers.api("rounds-to-minutes")
    failed = [r for r in _results(api).values() if r.status is Status.FAILED]
    assert failed
    for result in failed:
        cx = result.counterexample
        assert cx is not None and cx.shrunk
        assert [row["path"] for row in cx.diff] == ["spec.timeout"], cx.diff
        assert set(cx.object["spec"]) == {"timeout"}  # interval and name shrunk away
        (row,) = cx.diff
        # A real change of length, not a respelling of the same one.
        old, new = duration_key(row["old"]), duration_key(row["new"])
        assert old is not None and new is not None and old != new, row
        assert timers.iso_seconds(row["new"]) % 60 == 0
        with pytest.raises(NotEquivalent):
            check(api, cx.unit, cx.object)
