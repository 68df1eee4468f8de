"""Run ``compatfuzz diff`` over real API histories and write the counts per rule id.

Inputs: kubernetes-validate's GA kinds (apps/v1, core/v1, batch/v1) for releases 1.25 ..
1.37 (each adjacent pair, plus first -> last) and ../shared/corpus/crd-releases (Cluster
API CRDs at v1.8.0 -> v1.10.0 -> v1.12.0 -> main, each served version, adjacent pairs plus
first -> last). GA versions promise compatibility, so every breaking finding was checked
by hand; the verdicts live in ``compat_review_*.yaml``, which are ordinary compatfuzz
ignore files (rule + path glob + reason). A breaking finding no review entry matches is
listed as UNREVIEWED in the output: either a new checker bug or a new real break.

    .venv/bin/python benchmarks/bench_compat.py            # full run (~minutes)
    .venv/bin/python benchmarks/bench_compat.py --quick    # first -> last only

Writes benchmarks/compat_real_data.md and benchmarks/compat_real_data.json.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

from compatfuzz.compat import diff, load_policy, load_revision

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus" / "crd-releases" / "cluster-api"
RELEASES = [f"1.{m}" for m in range(25, 38)]
KINDS = [
    ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("apps/v1", "DaemonSet"),
    ("apps/v1", "ReplicaSet"),
    ("v1", "Pod"), ("v1", "Service"), ("v1", "ConfigMap"), ("v1", "Secret"),
    ("v1", "PersistentVolumeClaim"), ("v1", "ServiceAccount"), ("v1", "Namespace"),
    ("batch/v1", "Job"), ("batch/v1", "CronJob"),
]
TAGS = ["v1.8.0", "v1.10.0", "v1.12.0", "main-ae7ff047db"]


def _pairs(items: list[str], quick: bool) -> list[tuple[str, str]]:
    first_last = [(items[0], items[-1])]
    if quick:
        return first_last
    return [*itertools.pairwise(items), *first_last]


def run(quick: bool, budget: int, whole_budget: int) -> dict[str, Any]:
    k8s_policy = load_policy(HERE / "compat_review_kubernetes.yaml")
    crd_policy = load_policy(HERE / "compat_review_cluster_api.yaml")
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    jobs: list[tuple[str, str, str, Any]] = []
    for api, kind in KINDS:
        for a, b in _pairs(RELEASES, quick):
            jobs.append(("kubernetes", f"{api} {kind} {a}->{b}",
                         f"kubernetes:{a}:{api}:{kind}", (f"kubernetes:{b}:{api}:{kind}",
                                                          k8s_policy)))
    if CORPUS.is_dir():
        for crd in sorted(p.name for p in CORPUS.iterdir()):
            for a, b in _pairs(TAGS, quick):
                jobs.append(("cluster-api", f"{crd} {a}->{b}", str(CORPUS / crd / f"{a}.yaml"),
                             (str(CORPUS / crd / f"{b}.yaml"), crd_policy)))
    cache: dict[str, Any] = {}

    def rev(spec: str) -> Any:
        if spec not in cache:
            cache[spec] = load_revision(spec)
        return cache[spec]

    for source, label, old, (new, policy) in jobs:
        start = time.perf_counter()
        report = diff(rev(old), rev(new), policy=policy, budget=budget,
                      whole_budget=whole_budget)
        for f in report.findings:
            rows.append({"source": source, "pair": label, **f.to_json()})
        print(f"{label}: {len(report.findings)} findings, {len(report.breaking)} "
              f"breaking and not hand-checked, {time.perf_counter() - start:.1f}s",
              file=sys.stderr)
    return {"rows": rows, "seconds": round(time.perf_counter() - t0, 1),
            "pairs": len(jobs), "budget": budget, "whole_budget": whole_budget}


def compact(row: dict[str, Any]) -> dict[str, Any]:
    """A finding row with long values (a 2001-item maxItems witness) cut to 200 characters."""
    def cut(v: Any) -> Any:
        text = json.dumps(v, default=str)
        return v if len(text) <= 200 else text[:197] + "..."

    out = {k: cut(v) if k in ("old", "new") else v for k, v in row.items()}
    if row.get("witness"):
        out["witness"] = {**row["witness"], "value": cut(row["witness"]["value"])}
    return out


def _table(rows: list[dict[str, Any]]) -> list[str]:
    by_rule: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter)
    for r in rows:
        c = by_rule[(r["source"], r["rule"])]
        c["findings"] += 1
        if r["breaking"]:
            c["breaking"] += 1
            c[r["status"]] += 1
            c["reviewed"] += bool(r["ignored"])
    out = ["| source | rule | findings | breaking | with witness | no witness in budget | "
           "not checkable | hand-checked |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (source, rule), c in sorted(by_rule.items()):
        out.append(f"| {source} | {rule} | {c['findings']} | {c['breaking']} | "
                   f"{c['confirmed']} | {c['unconfirmed']} | {c['not-checked']} | "
                   f"{c['reviewed']} |")
    return out


def _distinct(rows: list[dict[str, Any]]) -> list[str]:
    """Breaking findings grouped by (rule, definition, field, old, new): what a reviewer
    reads; verdicts are numbered once in a legend below the table."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = collections.defaultdict(list)
    for r in rows:
        if r["breaking"]:
            leaf = r["path"].rsplit(".", 1)[-1]
            key = (r["source"], r["rule"], r["version"], r["definition"] or r["path"], leaf,
                   json.dumps(r["old"])[:60], json.dumps(r["new"])[:60])
            groups[key].append(r)
    verdicts: dict[str, int] = {}
    out = ["| source | rule | definition | example path | old -> new | pairs | witness | "
           "verdict |", "|---|---|---|---|---|---:|---|---|"]
    for key, rs in sorted(groups.items()):
        source, rule, version, definition, _, old, new = key
        first = rs[0]
        path = first["path"]
        definition = definition.rsplit(".", 1)[-1] if definition != path else ""
        w = first["witness"]
        wtxt = json.dumps(w["value"])[:40] if w else first["status"]
        reason = first.get("ignore_reason")
        if reason:
            verdicts.setdefault(reason, len(verdicts) + 1)
            verdict = f"V{verdicts[reason]}"
        else:
            verdict = "UNREVIEWED"
        loc = f"{version}:{path}" if version else path
        cells = [source, rule, definition, f"`{loc}`", f"`{old}` -> `{new}`", str(len(rs)),
                 f"`{wtxt}`", verdict]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out += ["", "Verdicts:", ""]
    out += [f"* **V{n}**: {reason}" for reason, n in verdicts.items()]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="first -> last pairs only")
    ap.add_argument("--budget", type=int, default=50)
    ap.add_argument("--whole-budget", type=int, default=20)
    args = ap.parse_args()
    result = run(args.quick, args.budget, args.whole_budget)
    rows = result["rows"]
    breaking = [r for r in rows if r["breaking"]]
    unreviewed = [r for r in breaking if not r["ignored"]]
    (HERE / "compat_real_data.json").write_text(json.dumps(
        {k: v for k, v in result.items() if k != "rows"}
        | {"breaking": [compact(r) for r in breaking]}, indent=1, default=str) + "\n")
    md = [
        "# compatfuzz diff on real API histories",
        "",
        "Generated by `benchmarks/bench_compat.py"
        + (" --quick" if args.quick else "") + "`: "
        f"{result['pairs']} revision pairs, {len(rows)} findings, {len(breaking)} breaking "
        f"under Kubernetes semantics (spec both ways, status response-only), "
        f"{len(unreviewed)} not covered by a hand-check verdict. Witness budget "
        f"{result['budget']} examples per finding, {result['whole_budget']} per side for the "
        f"whole-schema search; {result['seconds']} s in total.",
        "",
        "Kubernetes: kubernetes-validate GA kinds (apps/v1 Deployment StatefulSet DaemonSet "
        "ReplicaSet; core/v1 Pod Service ConfigMap Secret PersistentVolumeClaim "
        "ServiceAccount Namespace; batch/v1 Job CronJob), releases 1.25..1.37, adjacent "
        "pairs and 1.25->1.37. Cluster API: crd-releases clusters, machinedeployments, "
        "machines at v1.8.0, v1.10.0, v1.12.0, main (adjacent and first->last), every "
        "served version.",
        "",
        "## Counts per rule",
        "",
        *_table(rows),
        "",
        "## Every distinct breaking finding and its hand-check verdict",
        "",
        "Verdicts come from `compat_review_kubernetes.yaml` / "
        "`compat_review_cluster_api.yaml` (compatfuzz ignore files). `pairs` counts the "
        "revision pairs the same change shows up in.",
        "",
        *_distinct(rows),
        "",
    ]
    (HERE / "compat_real_data.md").write_text("\n".join(md))
    print(f"{len(rows)} findings, {len(breaking)} breaking, {len(unreviewed)} unreviewed; "
          f"{result['seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
