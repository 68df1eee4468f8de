"""``canonicalise`` gives one spelling per meaning: ``equal(a, b)`` iff the canonical forms
are identical, on Deployments drawn from the real schema and respelled without changing
their meaning (quantities in other formats, times in other offsets, reordered keys,
list-maps and sets, empties added to maps)."""

from __future__ import annotations

import datetime
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compatfuzz.schema._quantity import InvalidQuantity, quantity_from_json
from compatfuzz.semantic import canonicalise, equal
from compatfuzz.semantic._api import compiled
from compatfuzz.semantic._containers import AnyNode, ListNode, MapNode, _Keyed
from compatfuzz.semantic._lists import SetNode
from compatfuzz.semantic._node import Node
from compatfuzz.semantic._registered import CanonicaliserNode, ComparatorNode
from compatfuzz.semantic._scalars import QuantityNode, TimeNode
from compatfuzz.semantic._union import UnionNode
from compatfuzz.semantic._values import date_time_key


@pytest.fixture(scope="module")
def schema() -> Any:
    from compatfuzz.schema import load_kubernetes

    return load_kubernetes("apps/v1", "Deployment")


def _respell_quantity(v: Any, rnd: random.Random) -> Any:
    try:
        q = quantity_from_json(v)
    except InvalidQuantity:
        return v
    num, den = q.as_fraction()
    choice = rnd.randrange(6)
    if choice == 0 and den == 1 and num and num % 1024 == 0 and abs(num) <= 2**63 - 1:
        return f"{num // 1024}Ki"  # BinarySI caps at 2**63-1: stay below it
    if choice == 1 and den == 1:
        return num if abs(num) < 2**53 else str(num)
    if choice == 2 and (num * 1000) % den == 0:
        return f"{num * 1000 // den}m"
    if choice == 3 and den == 1 and num % 1000 == 0:
        return f"{num // 1000}e3"
    if choice == 4 and den == 1:
        return f"{num}e0"
    return f" {v} " if isinstance(v, str) else v


def _respell_time(v: Any, rnd: random.Random) -> Any:
    key = date_time_key(v)
    if key is None:
        return v
    seconds, frac = key
    offset = datetime.timedelta(hours=rnd.choice([-5, 0, 2, 23]), minutes=rnd.choice([0, 30]))
    try:
        when = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + \
            datetime.timedelta(seconds=seconds)
        local = when.astimezone(datetime.timezone(offset))
    except (OverflowError, ValueError):
        return v
    zone = local.strftime("%z")
    # strftime("%Y") leaves years before 1000 unpadded on glibc ("1-01-01T..."): pad them
    return f"{local.year:04d}" + local.strftime("-%m-%dT%H:%M:%S") + (
        f".{frac}0" if frac else rnd.choice(
        ["", ".000"])) + zone[:3] + ":" + zone[3:]


def respell(node: Node, v: Any, rnd: random.Random) -> Any:
    """A different spelling of ``v`` with the same meaning under ``node``."""
    if isinstance(node, (CanonicaliserNode, ComparatorNode)):
        return v
    if isinstance(node, QuantityNode):
        return _respell_quantity(v, rnd)
    if isinstance(node, TimeNode):
        return _respell_time(v, rnd)
    if isinstance(node, UnionNode):
        return respell(node.pick(v), v, rnd)
    if isinstance(node, _Keyed) and isinstance(v, dict):
        items = [(k, respell(node.child(k), x, rnd)) for k, x in v.items()]
        rnd.shuffle(items)
        out = dict(items)
        if isinstance(node, (MapNode, AnyNode)) and rnd.random() < 0.3:
            out["zz-empty"] = rnd.choice([None, {}, []])
        return out
    if isinstance(node, ListNode) and isinstance(v, list):
        out_list = [respell(node.item, x, rnd) for x in v]
        if isinstance(node, SetNode):
            rnd.shuffle(out_list)
        return out_list
    return v


def _deployments() -> st.SearchStrategy[Any]:
    from compatfuzz.schema import load_kubernetes
    from compatfuzz.strategies import from_schema

    return from_schema(load_kubernetes("apps/v1", "Deployment"))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(x=_deployments(), y=_deployments(), rnd=st.randoms(use_true_random=False))
def test_equal_iff_canonical_forms_are_identical(schema: Any, x: Any, y: Any,
                                                 rnd: random.Random) -> None:
    root = compiled(schema)
    respelled = respell(root, x, rnd)
    cx = canonicalise(x, schema=schema)
    assert canonicalise(cx, schema=schema) == cx
    assert equal(cx, x, schema=schema)
    assert equal(x, respelled, schema=schema)
    assert canonicalise(respelled, schema=schema) == cx
    for a, b in ((x, y), (respelled, y), (y, respell(root, y, rnd))):
        assert equal(a, b, schema=schema) == \
            (canonicalise(a, schema=schema) == canonicalise(b, schema=schema))


@pytest.mark.parametrize("spellings", [
    ["1Gi", "1073741824", 1073741824, "1024Mi", "1048576Ki", " 1Gi "],
    ["1k", "1e3", "1000", 1000, "1E3", "0.001M"],
    ["1T", "1e12", "1000G", "976562500Ki"],
    ["1Ki", "1024", 1024],
    ["500m", "0.5", 0.5, "5e-1"],
    ["-9223372036854775808", "-9223372036854775808e0"],  # beyond BinarySI's cap: decimal
])
def test_quantities_canonicalise_to_one_spelling_whatever_the_format(
        schema: Any, spellings: list[Any]) -> None:
    def pod(q: Any) -> Any:
        return {"spec": {"template": {"spec": {"containers": [
            {"name": "a", "resources": {"limits": {"memory": q}}}]}}}}

    forms = {str(canonicalise(pod(q), schema=schema)) for q in spellings}
    assert len(forms) == 1, forms
    for q in spellings:
        assert equal(pod(q), pod(spellings[0]), schema=schema)
