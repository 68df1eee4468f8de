"""The realistic ``Order`` bundle of benchmarks/bench_cadwyn.py: its migrations are correct
(every unit passes, as the benchmark asserts before timing whole units) and it has the
shapes the benchmark claims to measure (nested models, lists, decimals, an aware datetime,
enums, optional fields)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("cadwyn")

from compatfuzz.cadwyn import CadwynAPI
from compatfuzz.cadwyn._suite import CadwynSuite
from compatfuzz.roundtrip import run_unit, units

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "_cadwyn_orders.py"
_spec = importlib.util.spec_from_file_location("_bench_cadwyn_orders", _PATH)
assert _spec is not None and _spec.loader is not None
orders = importlib.util.module_from_spec(_spec)
sys.modules["_bench_cadwyn_orders"] = orders
_spec.loader.exec_module(orders)


def test_the_order_has_the_shapes_the_benchmark_names() -> None:
    schema = orders.Order.model_json_schema()
    line = schema["$defs"]["OrderLine"]["properties"]
    assert schema["properties"]["placed_at"]["format"] == "date-time"
    assert schema["properties"]["lines"]["type"] == "array"
    assert {"Address", "OrderLine", "Status", "Country"} <= set(schema["$defs"])
    assert "anyOf" in line["unit_price"] and "anyOf" in line["discount"]  # Decimal: num|str
    assert set(schema["required"]) == {"id", "placed_at", "lines", "shipping_address"}


def test_every_unit_of_the_order_bundle_passes() -> None:
    suite = CadwynSuite("orders", CadwynAPI(orders.version_bundle))
    planned = units(suite)
    # one schema used both ways, three old versions; the VersionChange code of the two
    # versions that have some
    assert len(planned) == 9 + 2
    failed = {}
    for unit in planned:
        result = run_unit(suite, unit, max_examples=15, seed=1, database=None)
        if result.status.value != "passed":
            failed[unit.id] = result.message
    assert not failed, failed
