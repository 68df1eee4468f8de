"""Benchmark compatfuzz's strategy compiler against hypothesis-jsonschema, side by side.

For each Kubernetes kind (default: apps/v1 Deployment, autoscaling/v2
HorizontalPodAutoscaler, v1 ConfigMap, release 1.37) the schema is loaded once with
``compatfuzz.schema.load_kubernetes`` and its bundled root is written to a temporary JSON
file. Then, for each round, both engines run one after the other (the order alternates
between rounds to cancel drift on a shared machine), each in a fresh process driven by the
same ``_worker.py``: compatfuzz with this interpreter, hypothesis-jsonschema with
``benchmarks/.peer-venv`` (Hypothesis 6.170.9, see ``peer_setup.sh``).

Reported per kind, as medians over rounds and as *ratios ours/peer of the same round*
(machines here are shared and noisy, so absolute seconds mean little):

* build time: ``from_schema(...)`` plus the first example (both engines are lazy);
* examples/s after the first example, and *values/s*: examples/s times the scalars and
  empty containers per example (``leaf_values``), since the two engines' examples differ
  in size by an order of magnitude and examples/s alone rewards drawing small ones;
* leaf-path coverage after ``--examples`` examples (``_leafpaths.py`` defines it);
* validity: examples that pass ``jsonschema`` Draft 2020-12 with format checking.

Run ``python benchmarks/bench_strategies.py --help``; ``benchmarks/README.md`` has the
commands and the latest figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _leafpaths import covered_paths, format_path, leaf_paths  # noqa: E402
from _repo import rel_args  # noqa: E402

WORKER = HERE / "_worker.py"
DEFAULT_PEER_PYTHON = HERE / ".peer-venv" / "bin" / "python"
ENGINES = ("ours", "peer")

KINDS: dict[str, tuple[str, str]] = {
    "Deployment": ("apps/v1", "Deployment"),
    "HorizontalPodAutoscaler": ("autoscaling/v2", "HorizontalPodAutoscaler"),
    "HPA": ("autoscaling/v2", "HorizontalPodAutoscaler"),
    "ConfigMap": ("v1", "ConfigMap"),
}
DEFAULT_KINDS = "Deployment,HorizontalPodAutoscaler,ConfigMap"

# The goals for compatfuzz (issue: "benchmarks/ compares with hypothesis-jsonschema").
GOAL_BUILD_S = 0.3
GOAL_RATE_RATIO = 100.0
GOAL_COVERAGE = 0.80


def parse_kinds(text: str) -> list[tuple[str, str]]:
    """Turn ``"Deployment,v1:Secret"`` into ``[("apps/v1", "Deployment"), ("v1", "Secret")]``."""
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        if item in KINDS:
            out.append(KINDS[item])
        elif ":" in item:
            api_version, _, kind = item.rpartition(":")
            out.append((api_version, kind))
        else:
            raise SystemExit(
                f"error: unknown kind {item!r} in --kinds={text!r}; use one of "
                f"{', '.join(KINDS)} or API_VERSION:KIND such as 'batch/v1:Job'"
            )
    return out


def load(api_version: str, kind: str, release: str) -> Any:
    """Load the kind's schema exactly as compatfuzz users get it."""
    # Late import: --help and argument errors work even while compatfuzz is half-built.
    from compatfuzz.schema import load_kubernetes

    return load_kubernetes(api_version, kind, release=release)


def run_worker(
    python: str, engine: str, *, api_version: str, kind: str, release: str,
    schema_file: Path, examples: int, seed: int, timeout: float, workdir: Path,
) -> dict[str, Any]:
    """Run ``_worker.py`` once in a fresh process and return its result (with examples)."""
    out = workdir / f"{engine}-{kind}-{seed}.json"
    cmd = [
        python, str(WORKER), "--engine", engine, "--examples", str(examples),
        "--seed", str(seed), "--out", str(out),
    ]
    if engine == "ours":
        cmd += ["--api-version", api_version, "--kind", kind, "--release", release]
    else:
        cmd += ["--schema-file", str(schema_file)]
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"engine": engine, "n": 0, "error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0 or not out.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"engine": engine, "n": 0,
                "error": f"worker exit {proc.returncode}: {' | '.join(tail)}"}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    result["wall_s"] = time.perf_counter() - started
    return result


def leaf_values(value: Any) -> int:
    """Scalars and empty containers in one example: how much an example carries, so that
    a rate of small examples and one of rich examples can be compared."""
    if isinstance(value, dict):
        return sum(map(leaf_values, value.values())) if value else 1
    if isinstance(value, list):
        return sum(map(leaf_values, value)) if value else 1
    return 1


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def summarise(
    runs: Mapping[str, list[dict[str, Any]]], total_paths: int,
) -> dict[str, Any]:
    """Medians per engine and medians of the per-round ratios ours/peer."""
    summary: dict[str, Any] = {}
    for engine, results in runs.items():
        n_examples = sum(r.get("n", 0) for r in results)
        summary[engine] = {
            "build_s": _median([r.get("build_s") for r in results]),
            "construct_s": _median([r.get("construct_s") for r in results]),
            "rate": _median([r.get("rate") for r in results]),
            "coverage": _median([r.get("coverage") for r in results]),
            "coverage_with_null": _median([r.get("coverage_with_null") for r in results]),
            "values": _median([r.get("values") for r in results]),
            "values_rate": _median([r.get("values_rate") for r in results]),
            "valid": sum(r.get("valid", 0) for r in results),
            "examples": n_examples,
            "errors": [r["error"] for r in results if r.get("error")],
        }
    if "ours" in runs and "peer" in runs:
        pairs = list(zip(runs["ours"], runs["peer"], strict=True))
        summary["ratio"] = {
            key: _median([_ratio(o.get(key), p.get(key)) for o, p in pairs])
            for key in ("build_s", "rate", "coverage", "values_rate")
        }
    summary["leaf_paths"] = total_paths
    return summary


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{suffix}"


def markdown_table(results: Mapping[str, Mapping[str, Any]], engines: Sequence[str]) -> str:
    """The README table: ratios first, medians for context."""
    both = "ours" in engines and "peer" in engines
    head = ["kind", "leaf paths"]
    if both:
        head += ["build ours/peer", "examples/s ours/peer", "values/s ours/peer"]
    head += [f"{what} ({'ours / peer' if both else engines[0]})"
             for what in ("build s", "examples/s", "values per example", "coverage",
                          "valid")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, res in results.items():
        s = res["summary"]
        row = [label, str(s["leaf_paths"])]
        if both:
            row += [_fmt(s["ratio"]["build_s"], ".3g"), _fmt(s["ratio"]["rate"], ".3g", "x"),
                    _fmt(s["ratio"].get("values_rate"), ".3g", "x")]

        def cell(key: str, spec: str, suffix: str = "", s: Mapping[str, Any] = s) -> str:
            return " / ".join(_fmt(s[e][key], spec, suffix) for e in engines)

        row += [cell("build_s", ".3f"), cell("rate", ".1f"), cell("values", ".1f"),
                " / ".join(_fmt(100 * s[e]["coverage"] if s[e]["coverage"] is not None
                                else None, ".1f", "%") for e in engines),
                " / ".join(_fmt(100 * s[e]["valid"] / s[e]["examples"] if s[e]["examples"]
                                else None, ".1f", "%") for e in engines)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def goals(results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per kind saying whether compatfuzz meets the issue's goals."""
    out = []
    for label, res in results.items():
        s = res["summary"]
        ours = s.get("ours")
        if not ours:
            continue
        checks = [
            ("build <= 0.3 s", ours["build_s"] is not None and ours["build_s"] <= GOAL_BUILD_S),
            ("coverage >= 80%", ours["coverage"] is not None
             and ours["coverage"] >= GOAL_COVERAGE),
            ("100% valid", ours["examples"] > 0 and ours["valid"] == ours["examples"]),
        ]
        if "ratio" in s:
            rate = s["ratio"]["rate"]
            checks.insert(1, (">= 100x examples/s", rate is not None and rate >= GOAL_RATE_RATIO))
        out.append(f"{label}: " + ", ".join(f"{name} {'MET' if ok else 'NOT MET'}"
                                            for name, ok in checks))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Compare compatfuzz.strategies.from_schema with hypothesis-jsonschema.",
    )
    parser.add_argument("--kinds", default=DEFAULT_KINDS,
                        help=f"comma-separated: {', '.join(KINDS)} or API_VERSION:KIND "
                        f"(default: {DEFAULT_KINDS})")
    parser.add_argument("--release", default="1.37", help="Kubernetes release (default 1.37)")
    parser.add_argument("--examples", type=int, default=300,
                        help="examples per run; coverage is measured on these (default 300)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds per kind; medians are reported (default 3)")
    parser.add_argument("--engines", default="ours,peer",
                        help="which engines to run: ours, peer or ours,peer (default)")
    parser.add_argument("--peer-python", default=os.environ.get("PEER_PYTHON",
                                                                 str(DEFAULT_PEER_PYTHON)),
                        help="Python of the peer venv (default benchmarks/.peer-venv)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds before one worker run is abandoned (default 900)")
    parser.add_argument("--json", metavar="FILE", help="also write all figures as JSON here")
    args = parser.parse_args(argv)

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines or any(e not in ENGINES for e in engines):
        parser.error(f"--engines={args.engines!r}: use 'ours', 'peer' or 'ours,peer'")
    if args.examples < 2 or args.rounds < 1:
        parser.error("--examples must be >= 2 and --rounds >= 1")
    kinds = parse_kinds(args.kinds)
    if "peer" in engines and not Path(args.peer_python).exists():
        parser.error(f"peer Python {args.peer_python!r} not found: run "
                     "'bash benchmarks/peer_setup.sh' first, or pass --engines ours")
    if "ours" in engines:
        try:
            from compatfuzz.strategies import from_schema  # noqa: F401
        except ImportError as exc:
            parser.error(f"compatfuzz.strategies.from_schema is not importable ({exc}); "
                         "pass --engines peer to measure the peer alone")

    pythons = {"ours": sys.executable, "peer": args.peer_python}
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="compatfuzz-bench-") as tmp:
        workdir = Path(tmp)
        for api_version, kind in kinds:
            label = f"{api_version} {kind}"
            schema = load(api_version, kind, args.release)
            root = dict(schema.root)
            schema_file = workdir / f"{kind}.schema.json"
            schema_file.write_text(json.dumps(root), encoding="utf-8")
            paths = leaf_paths(root)
            runs: dict[str, list[dict[str, Any]]] = {e: [] for e in engines}
            never_hit: dict[str, set[tuple[str, ...]]] = {e: set(paths) for e in engines}
            for rnd in range(args.rounds):
                order = engines if rnd % 2 == 0 else engines[::-1]
                for engine in order:
                    res = run_worker(
                        pythons[engine], engine, api_version=api_version, kind=kind,
                        release=args.release, schema_file=schema_file,
                        examples=args.examples, seed=rnd, timeout=args.timeout,
                        workdir=workdir,
                    )
                    examples = res.pop("examples", [])
                    res["valid"] = sum(1 for ex in examples if schema.is_valid(ex))
                    hit = covered_paths(paths, examples)
                    never_hit[engine] -= hit
                    res["coverage"] = len(hit) / len(paths) if examples else None
                    res["coverage_with_null"] = (
                        len(covered_paths(paths, examples, count_null=True)) / len(paths)
                        if examples else None
                    )
                    res["values"] = (sum(map(leaf_values, examples)) / len(examples)
                                     if examples else None)
                    res["values_rate"] = (res["values"] * res["rate"]
                                          if res["values"] is not None and res.get("rate")
                                          else None)
                    runs[engine].append(res)
                    print(
                        f"[{label}] round {rnd + 1}/{args.rounds} {engine}: "
                        f"build {_fmt(res.get('build_s'), '.3f', ' s')}, "
                        f"{_fmt(res.get('rate'), '.1f', ' examples/s')}, "
                        f"coverage {_fmt(res['coverage'], '.1%')}, "
                        f"valid {res['valid']}/{res.get('n', 0)}"
                        + (f", ERROR {res['error']}" if res.get("error") else ""),
                        file=sys.stderr, flush=True,
                    )
            results[label] = {
                "summary": summarise(runs, len(paths)),
                "runs": runs,
                "never_covered": {e: sorted(format_path(p) for p in never_hit[e])
                                  for e in engines},
            }

    table = markdown_table(results, engines)
    print(table)
    verdicts = goals(results)
    if verdicts:
        print()
        print("\n".join(f"- {line}" for line in verdicts))
    if args.json:
        meta = {
            "argv": rel_args(sys.argv[1:]), "release": args.release, "examples": args.examples,
            "rounds": args.rounds, "engines": engines, "machine": platform.platform(),
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        Path(args.json).write_text(
            json.dumps({"meta": meta, "table": table, "goals": verdicts, "results": results},
                       indent=1),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
