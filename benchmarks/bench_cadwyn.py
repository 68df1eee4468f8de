"""What checking a Cadwyn bundle costs per example, beside pydantic's and Cadwyn's own work.

    .venv/bin/python benchmarks/bench_cadwyn.py [--examples 200] [--rounds 3]

Two bundles, each loaded as ``compatfuzz fuzz`` loads it (a :class:`CadwynSuite`):

* ``shop``: examples/cadwyn_shop (``Customer``: strings, an optional string, a ``Decimal``
  with ``ge=0``, an enum, a dict; three versions);
* ``orders``: ``benchmarks/_cadwyn_orders.py``, a realistic ``Order`` (UUID, aware datetime,
  enum, 1-20 nested lines with constrained decimals and a patterned SKU, nested addresses,
  optional fields, a list of tags; three versions, a rename, an added field, an enum
  member hidden from old clients).

Per round and bundle, for its oldest version ``v`` and on the same drawn bodies:

* ``draw request body``, ``draw response body``: microseconds per example of the suite's
  strategies for ``valid[v->head]`` (a ``v`` body) and ``valid[head->v]`` (a HEAD body),
  drawn by Hypothesis (generate phase only), after a warm-up draw that builds them;
* ``model_validate``: pydantic's own validation of each ``v`` body by ``v``'s generated
  model (``cadwyn.generate_versioned_models``), the floor any checker pays;
* ``check valid[v->head]``: our whole check of one example (validate in ``v``, dump,
  run the request migrations recording each step, validate in HEAD, dump), and its ratio
  to ``model_validate`` on the same bodies;
* ``migrations (request)``: the request migrations alone, with our step recording
  (``CadwynAPI._run``), on pre-dumped bodies;
* ``check valid[head->v]`` beside ``cadwyn.migrate_response_body``: our response check
  against Cadwyn's own public response migration (migrate and validate) on the same HEAD
  bodies, and the ratio;
* ``fuzz unit``: examples/s of whole units through ``run_unit`` (draw, check, Hypothesis
  bookkeeping), as one line of ``compatfuzz fuzz`` runs them.

Ratios are taken within a round (the machine is shared); figures are medians over rounds.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

HERE = Path(__file__).resolve().parent
SHOP = HERE.parent / "examples" / "cadwyn_shop" / "compatfuzz.toml"


def _draw(strategy: Any, n: int) -> tuple[float, list[Any]]:
    """(microseconds per example, the examples) of drawing ``n`` examples."""
    kept: list[Any] = []

    @seed(1)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(doc: Any) -> None:
        kept.append(doc)

    start = time.perf_counter()
    draw()
    return (time.perf_counter() - start) / max(len(kept), 1) * 1e6, kept


def _per_doc(fn: Callable[[Any], Any], docs: list[Any]) -> float:
    start = time.perf_counter()
    for doc in docs:
        fn(doc)
    return (time.perf_counter() - start) / len(docs) * 1e6


def _suites() -> list[Any]:
    from compatfuzz.cadwyn import CadwynAPI
    from compatfuzz.cadwyn._suite import CadwynSuite
    from compatfuzz.roundtrip import load_config

    sys.path.insert(0, str(HERE))
    import _cadwyn_orders

    (shop,) = load_config(SHOP)
    return [shop, CadwynSuite("orders", CadwynAPI(_cadwyn_orders.version_bundle))]


def _round(suite: Any, n: int, rows: dict[tuple[str, str], list[float]]) -> None:
    import cadwyn

    from compatfuzz.roundtrip import Property, run_unit, units

    api = suite.api
    v = api.versions[0]
    every = units(suite)
    # the schema both requests and responses use (the shop also has a response-only one)
    schema = next(s for s in api.schemas
                  if any(u.kind == s.__name__ and u.property is Property.ROUNDTRIP
                         for u in every))
    mine = [u for u in every if u.kind == schema.__name__]
    up = next(u for u in mine if u.property is Property.VALID and u.versions == (v, "head"))
    down = next(u for u in mine if u.property is Property.VALID and u.versions == ("head", v))
    trip = next(u for u in mine if u.property is Property.ROUNDTRIP and u.versions[0] == v)

    def add(measure: str, value: float) -> None:
        rows.setdefault((suite.name, measure), []).append(value)

    for unit in (up, down):  # build and warm each strategy first: fuzz reuses them
        _draw(suite.strategy(unit), 5)
    cost, bodies = _draw(suite.strategy(up), n)
    add("draw request body, us/example", cost)
    cost, heads = _draw(suite.strategy(down), n)
    add("draw response body, us/example", cost)
    model = api.model(schema, v)
    floor = _per_doc(model.model_validate, bodies)
    add(f"pydantic model_validate ({v}), us/doc", floor)
    ours = _per_doc(lambda b: suite.check(up, b), bodies)
    add(f"check valid[{v}->head], us/doc", ours)
    add(f"  ratio check valid[{v}->head] / model_validate", ours / floor)
    dumped = [model.model_validate(b).model_dump(by_alias=True, exclude_unset=True)
              for b in bodies]
    copies = iter(copy.deepcopy(dumped))
    add("migrations alone (request, with step recording), us/doc",
        _per_doc(lambda _: api._run("request", schema, next(copies), v), dumped))
    ours = _per_doc(lambda b: suite.check(down, b), heads)
    add(f"check valid[head->{v}], us/doc", ours)
    head_bodies = [schema.model_validate(b).model_dump(by_alias=True) for b in heads]
    copies = iter(copy.deepcopy(head_bodies))
    theirs = _per_doc(lambda _: cadwyn.migrate_response_body(
        api.bundle, schema, latest_body=next(copies), version=v), head_bodies)
    add(f"cadwyn.migrate_response_body (HEAD->{v}), us/doc", theirs)
    add(f"  ratio check valid[head->{v}] / migrate_response_body", ours / theirs)
    for unit in (up, down, trip):
        start = time.perf_counter()
        result = run_unit(suite, unit, max_examples=n, seed=1, database=None)
        elapsed = time.perf_counter() - start
        assert result.status.value == "passed", (unit.id, result.message)
        add(f"fuzz unit {unit.name}, examples/s", result.examples / elapsed)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    suites = _suites()
    rows: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for suite in suites:
            _round(suite, args.examples, rows)
    print(f"{args.examples} examples per measure, median of {args.rounds} rounds")
    print("| bundle | measure | median | min | max |")
    print("|---|---|---|---|---|")
    for (name, measure), values in rows.items():
        fmt = ".2f" if measure.startswith("  ratio") else ",.0f"
        print(f"| {name} | {measure.strip()} | {statistics.median(values):{fmt}} | "
              f"{min(values):{fmt}} | {max(values):{fmt}} |")


if __name__ == "__main__":
    main()
