"""Round trips through a real kube-apiserver vs compatfuzz's model of it (issue 18).

    .venv/bin/python benchmarks/bench_apiserver.py [--quick] [--starts 3] [--examples 20]
        [--rounds 3] [--json benchmarks/results/apiserver.json]

Two figures, side by side in one script:

* **start-up**: ``ControlPlane(assets).start()`` (etcd, then kube-apiserver until
  ``/readyz``, then the test namespace) and ``.stop()``, ``--starts`` times;
* **round trips**: the same objects checked by the model
  (``check`` of ``compatfuzz.roundtrip._check._properties``, through
  ``compatfuzz.apiserver.APIServer``) and by ``served(real, unit, obj)`` of the same
  module (create, get, update, get through kube-apiserver and etcd, the Python converter
  served as the CRD's conversion webhook), properties ``roundtrip`` and ``valid``.

The objects are drawn once per (kind, version) by an ordinary ``@given`` test with
``derandomize=True`` (so every run checks the same ones), then each round checks every
unit's objects with both backends, the order alternating between rounds (the machine is
shared: a slow moment hits both sides of a ratio). A rate is objects / seconds of one pass;
the ratio real/model is the median of the per-round ratios.

The same runs give an agreement signal: an object that fails in one backend and passes
in the other is a *disagreement* (the first one is printed with both messages). The
APIs: the Frobber example (``examples/frobber``, its own converter) and CRDs from
``../shared/corpus`` (skipped when absent) with a converter that only sets
``apiVersion``, as the API server's ``None`` conversion strategy does
(``k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/nop_converter.go``).
"""

from __future__ import annotations

import argparse
import collections
import copy
import functools
import json
import os
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from compatfuzz.apiserver._real._assets import Assets, MissingAssets, find_assets
from compatfuzz.apiserver._real._process import ControlPlane, Endpoint
from compatfuzz.errors import CompatfuzzError, CompatfuzzWarning
from compatfuzz.roundtrip import API, Kind, Property, Unit
from compatfuzz.roundtrip._check._config import load_config
from compatfuzz.roundtrip._check._properties import check, served, strategy_for
from compatfuzz.roundtrip._check._real import RealBackend

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _repo import SHARED, rel  # noqa: E402

FROBBER = ROOT / "examples" / "frobber" / "compatfuzz.toml"
CORPUS = SHARED / "corpus" / "crds" / "cluster-api"
#: small multi-version CRDs of the corpus (v1beta1 + v1beta2; v1alpha1 + v1beta1 + v1beta2)
CORPUS_CRDS = ("addons.cluster.x-k8s.io_clusterresourcesetbindings.yaml",
               "ipam.cluster.x-k8s.io_ipaddresses.yaml")
PROPERTIES = (Property.ROUNDTRIP, Property.VALID)


# -- the APIs -------------------------------------------------------------------------


@dataclass
class Case:
    """One API to check, where it came from, and its units."""

    name: str
    api: API
    source: str  # as recorded: relative to the checkout, or ../shared/...
    units: list[Unit] = field(default_factory=list)


def set_api_version(obj: dict[str, Any], api_version: str) -> dict[str, Any]:
    """The ``None`` conversion strategy: only ``apiVersion`` changes."""
    return {**obj, "apiVersion": api_version}


def pairs(api: API, kind: Kind) -> list[tuple[str, str]]:
    """Each other version with the storage version, both ways: every unit stores in
    ``storage``, so these are the pairs a converter must get right first."""
    storage = api.server(kind).storage
    return [p for v in kind.versions if v != storage for p in ((v, storage), (storage, v))]


def make_units(api: API) -> list[Unit]:
    kind = api.kinds[0]
    return [Unit(api.name, kind.name, prop, pair)
            for pair in pairs(api, kind) for prop in PROPERTIES]


def frobber_case(config: Path = FROBBER) -> Case:
    api = load_config(config)[0]
    if not isinstance(api, API):
        raise SystemExit(f"{rel(config)}: its first [[api]] is not a CRD API ({api!r})")
    return Case(f"Frobber ({config.name})", api, rel(config), make_units(api))


def corpus_cases(folder: Path = CORPUS, names: Sequence[str] = CORPUS_CRDS,
                 log: Callable[[str], None] = print) -> list[Case]:
    """The corpus CRDs that are there, with the ``None``-strategy converter; a missing
    one is skipped with a note, not an error (the corpus lives outside the checkout)."""
    out = []
    for name in names:
        path = folder / name
        if not path.is_file():
            log(f"skipped {rel(path)}: not there (the corpus is ../shared/corpus)")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompatfuzzWarning)
            api = API.from_crd(path.stem.split("_", 1)[1], path, convert=set_api_version)
        out.append(Case(f"{api.kinds[0].name} ({path.name.split('_')[0]})", api, rel(path),
                        make_units(api)))
    return out


def draw(api: API, kind: Kind, version: str, n: int) -> list[Any]:
    """Up to ``n`` objects of ``kind`` at ``version``, the same ones every run."""
    drawn: list[Any] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy_for(api, kind, version))
    def collect(obj: Any) -> None:
        drawn.append(copy.deepcopy(obj))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompatfuzzWarning)
        collect()
    return drawn


# -- start-up --------------------------------------------------------------------------


def get_assets() -> Assets:
    """kube-apiserver and etcd where envtest looks, else built as ``compatfuzz apiserver
    install`` builds them (its progress on stderr); exits with the reason when neither
    works."""
    from compatfuzz.apiserver._real import _build

    try:
        return find_assets()
    except MissingAssets:
        pass
    try:
        folder = _build.install(_build.StreamProgress(sys.stderr))
    except _build.BuildError as exc:
        raise SystemExit(f"no kube-apiserver/etcd, and they could not be built: {exc}") from None
    return find_assets(environ={"KUBEBUILDER_ASSETS": str(folder)})


def time_startups(assets: Assets, n: int,
                  log: Callable[[str], None] = print) -> list[dict[str, float]]:
    """Seconds from ``start()`` to a ready server (namespace made), and of ``stop()``."""
    out = []
    for i in range(n):
        plane = ControlPlane(assets)
        began = time.perf_counter()
        try:
            plane.start()
            started = time.perf_counter() - began
        finally:
            began = time.perf_counter()
            plane.stop()
            stopped = time.perf_counter() - began
        out.append({"start_s": started, "stop_s": stopped})
        log(f"start-up {i + 1}/{n}: start {started:.2f} s, stop {stopped:.2f} s")
    return out


# -- round trips -----------------------------------------------------------------------


def outcome(run: Callable[[], None]) -> str | None:
    """None when the check passes, else ``Type: message`` (compatfuzz's own errors only:
    anything else is a bug of this script or of compatfuzz, and propagates)."""
    try:
        run()
    except CompatfuzzError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def time_pass(fn: Callable[[Any], None], objects: Sequence[Any]) -> tuple[float, list[str | None]]:
    """Seconds to check every object once (each a fresh copy, made before the clock)."""
    copies = [copy.deepcopy(o) for o in objects]
    results: list[str | None] = []
    began = time.perf_counter()
    for obj in copies:
        results.append(outcome(functools.partial(fn, obj)))
    return time.perf_counter() - began, results


def compare(case: Case, backend: RealBackend, objects: dict[str, list[Any]], rounds: int,
            log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """For each unit of ``case``: each round, one pass of the model and one of the real
    server over the unit's objects (the order alternating); rates, ratios, outcomes."""
    rows = []
    for unit in case.units:
        objs = objects[unit.versions[0]]
        sides: dict[str, Callable[[Any], None]] = {
            "model": functools.partial(check, case.api, unit),
            "real": functools.partial(served, backend, unit),
        }
        per_round = []
        for r in range(rounds):
            order = ["model", "real"] if r % 2 == 0 else ["real", "model"]
            got: dict[str, Any] = {}
            for side in order:
                seconds, results = time_pass(sides[side], objs)
                got[side] = {"seconds": seconds, "rate": len(objs) / seconds,
                             "results": results}
            per_round.append(got)
            log(f"{case.name} {unit.property}[{'->'.join(unit.versions)}] round {r + 1}: "
                f"model {got['model']['rate']:.1f}/s, real {got['real']['rate']:.1f}/s")
        rows.append(summarise_unit(unit, objs, per_round))
    return rows


def summarise_unit(unit: Unit, objs: Sequence[Any],
                   per_round: list[dict[str, Any]]) -> dict[str, Any]:
    """Median rates, the median of the per-round ratios real/model, and the outcomes:
    failures on each side, disagreements (fails on one side, passes on the other) and
    objects whose outcome changed between rounds on one side (unstable)."""
    fails = {s: [res is not None for res in per_round[0][s]["results"]]
             for s in ("model", "real")}
    disagree = [i for i, (m, r) in enumerate(zip(fails["model"], fails["real"], strict=True))
                if m != r]
    unstable = sum(
        1 for s in ("model", "real") for i in range(len(objs))
        if len({rnd[s]["results"][i] is None for rnd in per_round}) > 1)
    kinds = collections.Counter(signature(per_round[0], i) for i in disagree)
    first = None
    if disagree:
        i = disagree[0]
        first = {"object": objs[i], "model": per_round[0]["model"]["results"][i],
                 "real": per_round[0]["real"]["results"][i]}
    return {
        "unit": f"{unit.property}[{'->'.join(unit.versions)}]",
        "kind": unit.kind,
        "objects": len(objs),
        "model_rate": statistics.median(r["model"]["rate"] for r in per_round),
        "real_rate": statistics.median(r["real"]["rate"] for r in per_round),
        "ratio": statistics.median(r["real"]["rate"] / r["model"]["rate"]
                                   for r in per_round),
        "model_fails": sum(fails["model"]),
        "real_fails": sum(fails["real"]),
        "disagreements": len(disagree),
        "unstable": unstable,
        "first_disagreement": first,
        "disagreement_kinds": kinds.most_common(),
        "rounds": [{s: {"seconds": rnd[s]["seconds"], "rate": rnd[s]["rate"]}
                    for s in ("model", "real")} for rnd in per_round],
    }


def signature(results: dict[str, Any], i: int, width: int = 300) -> str:
    """Which side fails object ``i``, and how (its first line, without the object names
    and resource paths that differ from object to object): disagreements with the same
    signature have one cause."""
    side = "real" if results["real"]["results"][i] is not None else "model"
    text = str(results[side]["results"][i]).splitlines()[0]
    text = re.sub(r"cf-\d+-\d+", "NAME", text)
    text = re.sub(r" (GET|POST|PUT) /\S+", r" \1", text)
    return f"only {side} fails: {_cut(text, width)}"


def run_case(case: Case, endpoint: Endpoint, n: int, rounds: int,
             log: Callable[[str], None] = print) -> dict[str, Any]:
    """Draw the objects, install the CRD (timed), warm both sides up, compare."""
    kind = case.api.kinds[0]
    objects = {v: draw(case.api, kind, v, n) for v in {u.versions[0] for u in case.units}}
    began = time.perf_counter()
    backend = RealBackend(case.api, endpoint)
    install_s = time.perf_counter() - began
    try:
        for unit in case.units:  # compile the model's schemas, warm the connection
            obj = objects[unit.versions[0]][0]
            outcome(functools.partial(check, case.api, unit, copy.deepcopy(obj)))
            outcome(functools.partial(served, backend, unit, copy.deepcopy(obj)))
        rows = compare(case, backend, objects, rounds, log)
    finally:
        backend.close()
    return {"case": case.name, "source": case.source, "install_s": install_s, "units": rows}


# -- report ----------------------------------------------------------------------------


def startup_table(startups: list[dict[str, float]]) -> str:
    starts = [s["start_s"] for s in startups]
    stops = [s["stop_s"] for s in startups]
    return "\n".join([
        f"| control plane (etcd + kube-apiserver), {len(startups)} times | median s | max s |",
        "|---|---|---|",
        f"| start to ready (`ControlPlane.start()`) | {statistics.median(starts):.2f} | "
        f"{max(starts):.2f} |",
        f"| stop (`ControlPlane.stop()`) | {statistics.median(stops):.2f} | "
        f"{max(stops):.2f} |",
    ])


def roundtrip_table(cases: list[dict[str, Any]]) -> str:
    lines = ["| API | unit | objects | model ex/s | real ex/s | real/model | fails "
             "(model / real) | disagree |", "|---|---|---|---|---|---|---|---|"]
    for case in cases:
        for row in case["units"]:
            lines.append(
                f"| {case['case']} | `{row['unit']}` | {row['objects']} | "
                f"{row['model_rate']:.1f} | {row['real_rate']:.1f} | {row['ratio']:.3f} | "
                f"{row['model_fails']} / {row['real_fails']} | {row['disagreements']} |")
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width] + " ..."


def first_disagreements(cases: list[dict[str, Any]], width: int = 700) -> str:
    """Each API's first disagreement: the unit, the object and both backends' answers."""
    out = []
    for case in cases:
        for row in case["units"]:
            first = row["first_disagreement"]
            if first is not None:
                obj = json.dumps(first["object"], sort_keys=True)
                out.append(f"first disagreement of {case['case']}: `{row['unit']}`\n"
                           f"  object: {_cut(obj, width)}\n"
                           f"  model:  {_cut(first['model'] or 'passes', width)}\n"
                           f"  real:   {_cut(first['real'] or 'passes', width)}")
                break
        kinds: collections.Counter[str] = collections.Counter()
        for row in case["units"]:
            kinds.update(dict(row["disagreement_kinds"]))
        out += [f"  {n} x {text}" for text, n in kinds.most_common()]
    return "\n".join(out) or "no disagreement: every object fails in both or passes in both"


def report(startups: list[dict[str, float]], cases: list[dict[str, Any]]) -> str:
    total = sum(r["disagreements"] for c in cases for r in c["units"])
    unstable = sum(r["unstable"] for c in cases for r in c["units"])
    ratios = [r["ratio"] for c in cases for r in c["units"]]
    parts = [startup_table(startups), "", roundtrip_table(cases), ""]
    if ratios:
        parts.append(f"real/model, median over units: {statistics.median(ratios):.3f} "
                     f"(the model is {1 / statistics.median(ratios):.0f}x faster)")
    installs = ", ".join(f"{c['case']} {c['install_s']:.2f} s" for c in cases)
    parts += [f"CRD install (RealBackend(...)): {installs}",
              f"disagreements: {total}; outcomes that changed between rounds: {unstable}",
              first_disagreements(cases)]
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1 start-up, 3 objects a version, 1 round")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--examples", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if args.quick:
        args.starts, args.examples, args.rounds = 1, 3, 1

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    assets = get_assets()
    cases = [frobber_case(), *corpus_cases(log=log)]
    startups = time_startups(assets, args.starts, log)
    results = []
    with ControlPlane(assets) as endpoint:
        for case in cases:
            results.append(run_case(case, endpoint, args.examples, args.rounds, log))
    print(report(startups, results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"examples": args.examples, "rounds": args.rounds,
                       "cpus": os.cpu_count(), "startups": startups, "cases": results},
                      fh, indent=2, default=str)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
