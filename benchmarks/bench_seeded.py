"""Seeded conversion bugs: how many examples compatfuzz needs to find each one.

The product is measured by how soon a run finds a real conversion bug. For every bug of
``tests/roundtrip/seeded.py`` (the Sprocket CRD, ``tests/roundtrip/data/seeded.yaml``,
each bug one classic mistake in an otherwise correct converter) and every seed
``0..--seeds-1``, the bug's round-trip unit runs as ``compatfuzz fuzz --seed S`` runs it
(the same derived unit seed, the ``default`` profile's settings), generation only (what a
run does before it shrinks), twice:

* with ``max_examples=--budget`` (100, the default profile): is the bug caught? This is
  exactly the verdict of ``compatfuzz fuzz --seed S`` (``tests/roundtrip/
  test_seeded_suite.py`` asserts it for one seed);
* with ``max_examples=--cap`` (1000): the property calls up to and including the first
  failing one. Hypothesis schedules its examples by ``max_examples`` (small ones first),
  so this is a run of its own, not the continuation of the first.

Per bug: seeds caught within the budget, median examples to the first failure of the
long run (a seed that never fails counts as infinitely many), and its *trigger rate*: the
share of ``--census`` generated objects on which the bug's check fails at all (0: the
generator never draws the value class the bug needs).

Generator figures: distinct objects and bare objects (only apiVersion/kind/metadata) in
``--samples`` draws of Sprocket v1 and of a corpus CRD (Cluster API MachineDeployment,
its storage version, when ``--corpus`` exists), and leaf-path coverage of apps/v1
Deployment after ``--coverage-examples`` examples (``_leafpaths.py``, the metric of
``bench_strategies.py``).

Everything runs without Hypothesis's *local constants* (``seeded.without_local_constants``):
literals harvested from loaded non-site-packages modules, here compatfuzz's own source and
this script, which an installed compatfuzz never contributes and whose every edit would
reshuffle all seeded runs. Every figure counts examples, never seconds, so it is the same
on a busy machine. Run
``python benchmarks/bench_seeded.py --help``; ``benchmarks/README.md`` has the commands
and the latest figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))  # tests.roundtrip.seeded

from _leafpaths import covered_paths, leaf_paths  # noqa: E402
from _repo import SHARED, rel, rel_args  # noqa: E402

# ../shared/corpus, beside the repository root
DEFAULT_CORPUS = (SHARED / "corpus" / "crds" / "cluster-api"
                  / "cluster.x-k8s.io_machinedeployments.yaml")
BARE_KEYS = frozenset({"apiVersion", "kind", "metadata"})


# -- examples to the first failure ------------------------------------------------------


def examples_to_failure(api: Any, unit: Any, seed: int, cap: int) -> int | None:
    """Property calls up to and including the first failing one (None: none in ``cap``),
    as ``compatfuzz fuzz --seed SEED`` runs the unit with ``max_examples=cap``."""
    from tests.roundtrip.seeded import first_failure

    found = first_failure(api, unit, seed, cap)
    return None if found is None else found[0]


def _bug_unit(name: str) -> tuple[Any, Any]:
    from tests.roundtrip.seeded import BUGS

    from compatfuzz.roundtrip import units

    bug = BUGS[name]
    api = bug.api()
    (unit,) = [u for u in units(api) if u.id == bug.unit_id]
    return api, unit


Counts = tuple[int | None, int | None]  # (within the budget run, within the cap run)


def _task(args: tuple[str, int, int, int]) -> tuple[str, int, Counts]:
    name, seed, budget, cap = args
    api, unit = _bug_unit(name)
    return name, seed, (examples_to_failure(api, unit, seed, budget),
                        examples_to_failure(api, unit, seed, cap))


def measure_bugs(names: Sequence[str], seeds: int, budget: int, cap: int,
                 workers: int) -> dict[str, list[Counts]]:
    """Examples to the first failure in a budget run and in a cap run, per bug and seed."""
    tasks = [(name, seed, budget, cap) for name in names for seed in range(seeds)]
    out: dict[str, list[Counts]] = {name: [(None, None)] * seeds for name in names}
    left = dict.fromkeys(names, seeds)

    def record(name: str, seed: int, n: Counts) -> None:
        out[name][seed] = n
        left[name] -= 1
        if not left[name]:  # progress: one line per finished bug
            caught = sum(1 for a, _ in out[name] if a is not None)
            print(f"  {name}: caught in {caught}/{seeds} budget runs; "
                  f"{[b for _, b in out[name]]}", file=sys.stderr, flush=True)

    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results: Iterable[tuple[str, int, Counts]] = pool.imap_unordered(_task, tasks)
            for name, seed, n in results:
                record(name, seed, n)
    else:
        for name, seed, n in map(_task, tasks):
            record(name, seed, n)
    return out


def median_examples(counts: Sequence[int | None]) -> float | None:
    """Median over seeds, a seed that never failed counting as infinitely many (None)."""
    values = sorted(float("inf") if n is None else float(n) for n in counts)
    mid = statistics.median(values)
    return None if mid == float("inf") else mid


# -- what the generator draws ------------------------------------------------------------


def draw(strategy: Any, n: int, seed: int) -> list[Any]:
    """``n`` examples of ``strategy`` through an ordinary seeded ``@given`` test."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    out: list[Any] = []

    @hseed(seed)
    @settings(max_examples=n, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def record(value: Any) -> None:
        out.append(value)

    record()
    return out


def shape(objects: Sequence[Any]) -> dict[str, Any]:
    """Distinct objects and the share of bare ones (only apiVersion/kind/metadata)."""
    keys = {json.dumps(o, sort_keys=True) for o in objects}
    bare = sum(1 for o in objects if isinstance(o, Mapping) and set(o) <= BARE_KEYS)
    return {"samples": len(objects), "distinct": len(keys),
            "distinct_ratio": len(keys) / len(objects) if objects else None,
            "bare": bare / len(objects) if objects else None}


def trigger_rates(names: Sequence[str], n: int, seed: int) -> dict[str, float]:
    """Share of ``n`` generated objects (of each bug unit's first version) on which the
    bug's round-trip check fails: the per-example chance of finding it."""
    from compatfuzz.errors import ConverterError, NotEquivalent
    from compatfuzz.roundtrip import check
    from compatfuzz.roundtrip._check._properties import strategy_for

    samples: dict[str, list[Any]] = {}
    rates = {}
    for name in names:
        api, unit = _bug_unit(name)
        version = unit.versions[0]
        if version not in samples:
            samples[version] = draw(strategy_for(api, api.kind(unit.kind), version), n, seed)
        hits = 0
        for obj in samples[version]:
            try:
                check(api, unit, obj)
            except (NotEquivalent, ConverterError):
                hits += 1
        rates[name] = hits / len(samples[version])
    return rates


def generator_figures(samples: int, corpus: Path | None, coverage_examples: int,
                      coverage_seeds: int, seed: int) -> dict[str, Any]:
    from tests.roundtrip.seeded import CRD

    from compatfuzz.schema import load_crds, load_kubernetes
    from compatfuzz.strategies import from_schema

    out: dict[str, Any] = {}
    (sprocket,) = load_crds(CRD)
    v1 = next(v.schema for v in sprocket.versions if v.name == "v1" and v.schema)
    objects = draw(from_schema(v1), samples, seed)
    fields = Counter(k for o in objects for k in (o.get("spec") or {}))
    out["sprocket_v1"] = {
        **shape(objects),
        "mean_spec_fields": sum(len(o.get("spec") or {}) for o in objects) / len(objects),
        "spec_fields": len((v1.root.get("properties") or {})
                           .get("spec", {}).get("properties", {})),
        "spec_field_presence": {k: round(c / len(objects), 4) for k, c in sorted(fields.items())},
    }
    if corpus is not None and corpus.exists():
        (crd,) = load_crds(corpus)
        stored = next(v.schema for v in crd.versions
                      if v.name == crd.storage_version and v.schema)
        out["corpus"] = {"file": rel(corpus), "kind": crd.kind,
                         "version": crd.storage_version,
                         **shape(draw(from_schema(stored), samples, seed))}
    schema = load_kubernetes("apps/v1", "Deployment", release="1.37")
    paths = leaf_paths(dict(schema.root))
    ratios = []
    for s in range(coverage_seeds):
        examples = draw(from_schema(schema), coverage_examples, s)
        ratios.append(len(covered_paths(paths, examples)) / len(paths))
    out["deployment_coverage"] = {"release": "1.37", "examples": coverage_examples,
                                  "leaf_paths": len(paths), "per_seed": ratios,
                                  "median": statistics.median(ratios)}
    return out


# -- reporting ----------------------------------------------------------------------------


def _revision(label: str | None) -> dict[str, Any]:
    import compatfuzz

    where = Path(compatfuzz.__file__).resolve().parent
    info: dict[str, Any] = {"compatfuzz": rel(where), "label": label}
    try:
        top = subprocess.run(["git", "-C", str(where), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        commit = subprocess.run(["git", "-C", top, "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", top, "status", "--porcelain", "--",
                                "src/compatfuzz"], capture_output=True, text=True,
                               check=True).stdout.strip()
        info.update(commit=commit, src_modified=bool(dirty))
    except (OSError, subprocess.CalledProcessError):
        info.update(commit=None, src_modified=None)
    return info


def _fmt_median(value: float | None, cap: int) -> str:
    return f">{cap}" if value is None else f"{value:g}"


def markdown(result: Mapping[str, Any]) -> str:
    meta, bugs = result["meta"], result["bugs"]
    seeds, cap, budget = meta["seeds"], meta["cap"], meta["budget"]
    lines = [f"| bug | category | field (unit) | caught in {budget} examples (of {seeds} "
             f"seeds) | median examples to failure ({cap}-example run) | trigger rate |",
             "|---|---|---|---|---|---|"]
    for name, b in bugs.items():
        rate = b.get("trigger_rate")
        lines.append(
            f"| `{name}` | {b['category']} | `{b['field']}` ({b['unit']}) | "
            f"{b['caught_within_budget']}/{seeds} | {_fmt_median(b['median'], cap)} | "
            f"{'n/a' if rate is None else f'{100 * rate:.1f}%'} |")
    s = result["summary"]
    lines.append("")
    lines.append(f"Caught within {budget} examples on every seed: {s['always_caught']} of "
                 f"{s['bugs']} bugs; on no seed: {s['never_caught']}; never caught within "
                 f"{cap}: {s['never_within_cap']}. Share of (bug, seed) runs caught within "
                 f"{budget}: {100 * s['catch_rate']:.1f}%.")
    gen = result.get("generator")
    if gen:
        sp = gen["sprocket_v1"]
        lines.append("")
        lines.append(f"Sprocket v1, {sp['samples']} samples: {sp['distinct']} distinct, "
                     f"{100 * sp['bare']:.1f}% bare, {sp['mean_spec_fields']:.2f} of "
                     f"{sp['spec_fields']} spec fields per object.")
        if "corpus" in gen:
            c = gen["corpus"]
            lines.append(f"{c['kind']} {c['version']} (corpus), {c['samples']} samples: "
                         f"{c['distinct']} distinct, {100 * c['bare']:.1f}% bare.")
        d = gen["deployment_coverage"]
        lines.append(f"apps/v1 Deployment ({d['release']}): leaf-path coverage after "
                     f"{d['examples']} examples {100 * d['median']:.1f}% of {d['leaf_paths']} "
                     f"(median of {len(d['per_seed'])} seeds: "
                     + ", ".join(f"{100 * r:.1f}%" for r in d["per_seed"]) + ").")
    return "\n".join(lines)


def compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """Markdown: each bug's before and after figures side by side, then the summaries."""
    seeds, cap, budget = (after["meta"][k] for k in ("seeds", "cap", "budget"))
    lines = [f"| bug | category | field (unit) | caught in {budget} (of {seeds} seeds): "
             "before / after | median examples to failure: before / after | trigger rate: "
             "before / after |", "|---|---|---|---|---|---|"]
    for name, a in after["bugs"].items():
        b = before["bugs"].get(name, {})

        def rate(x: Mapping[str, Any]) -> str:
            r = x.get("trigger_rate")
            return "n/a" if r is None else f"{100 * r:.1f}%"

        lines.append(
            f"| `{name}` | {a['category']} | `{a['field']}` ({a['unit']}) | "
            f"{b.get('caught_within_budget', '?')}/{seeds} / {a['caught_within_budget']}/{seeds}"
            f" | {_fmt_median(b.get('median'), cap)} / {_fmt_median(a['median'], cap)} | "
            f"{rate(b)} / {rate(a)} |")
    for label, result in (("before", before), ("after", after)):
        s = result["summary"]
        nearly = sum(1 for x in result["bugs"].values()
                     if x["caught_within_budget"] >= seeds - 1)
        lines += ["", f"**{label}** ({result['meta'].get('label') or ''}): caught within "
                      f"{budget} examples on at least {seeds - 1} of {seeds} seeds: "
                      f"{nearly} of {s['bugs']} bugs (on every seed: "
                      f"{s['always_caught']}); on no seed: {s['never_caught']}; "
                      f"(bug, seed) runs caught within {budget}: "
                      f"{100 * s['catch_rate']:.1f}%."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bugs", help="comma-separated bug names (default: all)")
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 (default 20)")
    parser.add_argument("--cap", type=int, default=1000,
                        help="examples per (bug, seed) before giving up (default 1000)")
    parser.add_argument("--budget", type=int, default=100,
                        help="the budget 'caught within' refers to (default 100: the "
                             "default profile)")
    parser.add_argument("--census", type=int, default=1000,
                        help="objects per version for the trigger rates (0: skip)")
    parser.add_argument("--samples", type=int, default=3000,
                        help="draws for distinct/bare objects (0: skip generator figures)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="a corpus CRD file for the distinct/bare figures")
    parser.add_argument("--coverage-examples", type=int, default=300)
    parser.add_argument("--coverage-seeds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1,
                        help="processes for the (bug, seed) runs (default 1; shared machine)")
    parser.add_argument("--label", help="what is measured, e.g. 'before: HEAD abc123'")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="print the before/after table of two --json files and exit")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        print(compare(before, after))
        return 0

    from tests.roundtrip.seeded import BUGS, without_local_constants

    names = list(BUGS) if not args.bugs else [b.strip() for b in args.bugs.split(",")]
    unknown = [n for n in names if n not in BUGS]
    if unknown:
        parser.error(f"unknown bug(s) {', '.join(unknown)}; the bugs are: {', '.join(BUGS)}")


    with without_local_constants() as alone:
        result = _measure(args, names)
    result["meta"]["local_constants"] = "disabled" if alone else "enabled"
    print(markdown(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def _measure(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    import hypothesis
    from tests.roundtrip.seeded import BUGS

    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"bench_seeded: {len(names)} bugs x {args.seeds} seeds, cap {args.cap}",
          file=sys.stderr, flush=True)
    counts = measure_bugs(names, args.seeds, args.budget, args.cap, args.workers)
    rates: dict[str, float] = {}
    if args.census:
        print(f"bench_seeded: trigger rates over {args.census} objects", file=sys.stderr,
              flush=True)
        rates = trigger_rates(names, args.census, seed=0)
    bugs: dict[str, Any] = {}
    for name in names:
        bug = BUGS[name]
        in_budget = [a for a, _ in counts[name]]
        in_cap = [b for _, b in counts[name]]
        bugs[name] = {
            "category": bug.category, "field": bug.field, "unit": bug.unit_id,
            "examples_budget_run": in_budget,
            "examples_cap_run": in_cap,
            "caught_within_budget": sum(1 for x in in_budget if x is not None),
            "caught_within_cap": sum(1 for x in in_cap if x is not None),
            "median": median_examples(in_cap),
            "trigger_rate": rates.get(name),
        }
    runs = len(names) * args.seeds
    summary = {
        "bugs": len(names),
        "always_caught": sum(1 for b in bugs.values()
                             if b["caught_within_budget"] == args.seeds),
        "never_caught": sum(1 for b in bugs.values() if b["caught_within_budget"] == 0),
        "never_within_cap": sum(1 for b in bugs.values() if b["caught_within_cap"] == 0),
        "catch_rate": sum(b["caught_within_budget"] for b in bugs.values()) / runs,
    }
    result: dict[str, Any] = {
        "meta": {
            "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join([Path(sys.executable).name, *rel_args(sys.argv)]),
            "python": platform.python_version(), "hypothesis": hypothesis.__version__,
            "cpus": os.cpu_count(), "seeds": args.seeds, "cap": args.cap,
            "budget": args.budget, "census": args.census, **_revision(args.label),
        },
        "bugs": bugs,
        "summary": summary,
    }
    if args.samples:
        print("bench_seeded: generator figures", file=sys.stderr, flush=True)
        result["generator"] = generator_figures(args.samples, args.corpus,
                                                args.coverage_examples,
                                                args.coverage_seeds, seed=0)
    return result


if __name__ == "__main__":
    sys.exit(main())
