"""compatfuzz's verdict on each corpus release pair beside the project's documented one.

Why (issue 19, first must-show): a maintainer can only gate releases on ``compatfuzz
diff`` if its verdict on a real release matches what the project itself tells users, or
differs for a reason someone has looked at. This runs ``diff`` as the CLI runs it (load
both files, then :func:`compatfuzz.compat.diff` with the CLI's defaults: budget 200,
whole-schema budget 100, seed 0, direction auto, the ``kubernetes`` profile) on every
consecutive release pair of ../shared/corpus/crd-releases (the pairs come from
``bench_compat_speed.pairs``), and sets beside it the verdict the project documents,
hand-written in ``compat_releases_documented.yaml`` from its changelog or release notes
with a citation. A pair where the two disagree must have a hand-written entry under
``explanations`` in that file; one without is printed and makes the run exit 1, as does
an explanation left on a pair that now agrees, so the table stays honest when the engine
changes.

    .venv/bin/python benchmarks/compat_releases.py               # writes compat_releases.md
    .venv/bin/python benchmarks/compat_releases.py --no-witness  # static: same verdicts, faster
    .venv/bin/python benchmarks/compat_releases.py --policy gateway-api \
        --md benchmarks/results/compat_releases_gateway_api.md \
        --out benchmarks/results/compat_releases_gateway_api.json  # another profile
    .venv/bin/python benchmarks/compat_releases.py --check       # the yaml covers every pair

Writes benchmarks/compat_releases.md and benchmarks/results/compat_releases.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from compatfuzz.compat import Impact, diff, load_revision

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _repo import rel  # noqa: E402
from bench_compat_speed import CORPUS, pairs  # noqa: E402

DOCUMENTED = HERE / "compat_releases_documented.yaml"
VERDICTS = ("compatible", "breaking", "not-stated")
PAIR_KEYS = {"verdict", "what", "cite"}
PAIR_OPTIONAL = {"note"}
PROJECT_KEYS = {"policy", "cite", "notes"}
#: what a disagreement comes down to; each explanation names one or more
KINDS = {
    "real-break": "compatfuzz is right: objects old clients send are rejected by NEW "
                  "(request side), and the notes do not say so",
    "downgrade-only": "every error is response-side (loosened validation, an added enum "
                      "value, a field added under minProperties: 1): it breaks a rollback "
                      "to OLD or a client that validates against OLD's schema, not an "
                      "upgrade",
    "default-in-controller": "a schema default moved into the controller's code, which a "
                             "schema diff cannot see",
    "behaviour-only": "the project's documented break is the controller's behaviour; the "
                      "schema changes only loosen validation, which the default profile "
                      "passes with a warning",
}


class DocumentedError(ValueError):
    """The documented-verdicts file is malformed: the message names the key and the fix."""


def load_documented(path: Path = DOCUMENTED) -> dict[str, Any]:
    """Read and check the hand-written file; every mistake names its key and the fix."""
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise DocumentedError(f"{rel(path)}: not YAML: {e}") from None
    if not isinstance(data, dict) or set(data) - {"projects", "pairs", "explanations"}:
        raise DocumentedError(f"{rel(path)}: top level must be a mapping with keys projects, "
                              "pairs, explanations")
    for section in ("projects", "pairs", "explanations"):
        if not isinstance(data.get(section) or {}, dict):
            raise DocumentedError(f"{rel(path)} at $.{section}: must be a mapping")
        data[section] = data.get(section) or {}
    for name, entry in data["projects"].items():
        if not isinstance(entry, dict) or set(entry) - PROJECT_KEYS:
            raise DocumentedError(f"{rel(path)} at $.projects.{name}: keys are "
                                  f"{sorted(PROJECT_KEYS)}")
    for label, entry in data["pairs"].items():
        where = f"{rel(path)} at $.pairs[{label!r}]"
        if (not isinstance(entry, dict) or not set(entry) >= PAIR_KEYS
                or set(entry) - PAIR_KEYS - PAIR_OPTIONAL):
            raise DocumentedError(f"{where}: needs the keys {sorted(PAIR_KEYS)} (and may "
                                  f"have {sorted(PAIR_OPTIONAL)})")
        if entry["verdict"] not in VERDICTS:
            raise DocumentedError(f"{where}.verdict: {entry['verdict']!r} is not one of "
                                  f"{list(VERDICTS)}")
        if label.split("/")[0] not in data["projects"]:
            raise DocumentedError(f"{where}: project {label.split('/')[0]!r} has no entry "
                                  "under $.projects (add its policy and changelog there)")
    for label, entry in data["explanations"].items():
        where = f"{rel(path)} at $.explanations[{label!r}]"
        if (not isinstance(entry, dict) or set(entry) != {"kinds", "text"}
                or not isinstance(entry["text"], str) or not entry["text"].strip()):
            raise DocumentedError(f"{where}: needs kinds (a list) and text (why the two "
                                  "verdicts differ)")
        unknown = [k for k in entry["kinds"] or [None] if k not in KINDS]
        if unknown or not isinstance(entry["kinds"], list):
            raise DocumentedError(f"{where}.kinds: {unknown} is not a list of "
                                  f"{sorted(KINDS)}")
    return data


def documented_breaking(entry: Mapping[str, Any]) -> bool:
    """A documented verdict read as a gate would: only an announced break is breaking.
    ``not-stated`` (the notes say nothing about the CRD) reads as compatible, as a user
    upgrading on the strength of those notes would read it."""
    return bool(entry["verdict"] == "breaking")


def consistency(doc: Mapping[str, Any], labels: Iterable[str],
                results: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """Every problem that makes the table dishonest: a pair with no documented entry, an
    entry for no pair, a disagreement with no explanation, an explanation on an agreement."""
    labels = list(labels)
    problems = [f"{label}: no documented entry under pairs" for label in labels
                if label not in doc["pairs"]]
    problems += [f"{label}: documented, but no such release pair in the corpus"
                 for label in doc["pairs"] if label not in labels]
    for row in results:
        label, explained = row["pair"], row["pair"] in doc["explanations"]
        if not row["agree"] and not explained:
            problems.append(f"{label}: compatfuzz says {row['verdict']}, the project "
                            f"{row['documented']}: add an explanation")
        elif row["agree"] and explained:
            problems.append(f"{label}: agrees now, but has an explanation: delete it")
    problems += [f"{label}: explanation for no release pair" for label in doc["explanations"]
                 if label not in labels]
    return problems


def run_pair(label: str, old: Path, new: Path, doc: Mapping[str, Any], *,
             dynamic: bool, policy: str) -> dict[str, Any]:
    """One ``diff`` as the CLI runs it, and the row of the table."""
    from compatfuzz.compat._profiles import resolve_policy

    started = time.perf_counter()
    report = diff(load_revision(str(old)), load_revision(str(new)), dynamic=dynamic,
                  policy=resolve_policy(policy))
    seconds = time.perf_counter() - started
    findings = [f.to_json() for f in report.findings]
    errors = [f for f in findings if f["breaking"] and f["severity"] == "error"]
    warned = [f for f in findings if f["breaking"] and f["severity"] != "error"]
    paths: list[str] = []
    for f in errors:
        where = f"{f['version']}:{f['path']}" if f.get("version") else f["path"]
        if where not in paths:
            paths.append(where)
    documented = doc["pairs"].get(label, {"verdict": "missing", "what": "", "cite": ""})
    verdict = "breaking" if report.exit_code == 1 else "compatible"
    return {
        "pair": label, "old": rel(old), "new": rel(new),
        "exit_code": report.exit_code, "verdict": verdict,
        "errors": dict(Counter(f["rule"] for f in errors)),
        "warnings": dict(Counter(f["rule"] for f in warned)),
        "witnessed": sum(1 for f in errors if f.get("witness") is not None),
        # the worst impact on objects stored under OLD among the errors (issue 19, item 2)
        "impact": str(max((Impact(f["impact"]) for f in errors if f.get("impact")),
                          default=Impact.NONE)) if errors else "-",
        "paths": paths,
        "documented": documented["verdict"], "documented_what": documented["what"],
        "cite": documented["cite"], "note": documented.get("note", ""),
        "agree": (verdict == "breaking") == documented_breaking(documented),
        "seconds": round(seconds, 2),
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(rows: list[dict[str, Any]], doc: Mapping[str, Any], *, dynamic: bool,
           policy: str) -> str:
    """The Markdown table, the disagreements with their explanations, the sources."""
    agree = sum(r["agree"] for r in rows)
    stricter = [r for r in rows if not r["agree"] and r["verdict"] == "breaking"]
    looser = [r for r in rows if not r["agree"] and r["verdict"] == "compatible"]
    mode = "witness search on" if dynamic else "--no-witness"
    impacts = Counter(r["impact"] for r in rows if r["verdict"] == "breaking")
    gate = sum(n for k, n in impacts.items() if Impact(k) < Impact.ANY_UPDATE)
    kinds: Counter[str] = Counter()
    for r in rows:
        if not r["agree"] and r["pair"] in doc["explanations"]:
            kinds.update(doc["explanations"][r["pair"]]["kinds"])
    out = [
        "# compatfuzz diff on real release pairs, beside each project's documented verdict",
        "",
        "Generated by `benchmarks/compat_releases.py` from "
        "`benchmarks/compat_releases_documented.yaml` (hand-written from each project's "
        f"changelog or release notes); `compatfuzz diff OLD NEW` with the CLI's defaults "
        f"(`--policy {policy}`, {mode}) on every consecutive release pair of "
        "`../shared/corpus/crd-releases`.",
        "",
        f"**{len(rows)} pairs: {agree} agree, {len(rows) - agree} disagree** "
        f"({len(stricter)} where compatfuzz reports a break the project's notes do not "
        f"state, {len(looser)} where the project documents a break compatfuzz does not "
        "report). A documented verdict `not-stated` (the notes say nothing about the CRD) "
        "counts as compatible: it is what a user upgrading on those notes reads.",
        "",
        "Kinds of disagreement (pairs): " + (", ".join(
            f"{k} {n}" for k, n in sorted(kinds.items())) or "none") + ".",
        "",
        "What the breaking pairs break for objects already stored (the worst `impact` of "
        "their errors, ratcheting assumed): " + (", ".join(
            f"{k} {n}" for k, n in sorted(impacts.items(), key=lambda kv: Impact(kv[0]))))
        + f"; {gate} of {sum(impacts.values())} would pass `--fail-on-impact any-update`, "
        "the gate of a team that only guards its stored objects' updates.",
        "",
        "`errors` lists the error-severity findings by rule (count); `paths` the first "
        "paths they name (`version:path`; `version:$` is a CRD-level finding, e.g. a served "
        "version removed); `impact` the worst of them (`docs/compat.md`, Impact).",
        "",
        "| pair | compatfuzz | errors | paths | impact | documented | citation | agree? |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        errors = ", ".join(f"{k} ({v})" for k, v in sorted(r["errors"].items())) or "-"
        paths = ", ".join(f"`{p}`" for p in r["paths"][:3])
        if len(r["paths"]) > 3:
            paths += f" +{len(r['paths']) - 3}"
        documented = r["documented"] + (f": {r['documented_what']}"
                                        if r["documented_what"] else "")
        if r["note"]:
            documented += f" (note: {r['note']})"
        mark = "yes" if r["agree"] else "**no** (below)"
        out.append(f"| {r['pair']} | {r['verdict']} | {_cell(errors)} | {_cell(paths or '-')} "
                   f"| {r['impact']} | {_cell(documented)} | {_cell(r['cite'])} | {mark} |")
    out += ["", "## Disagreements, explained", ""]
    for r in rows:
        if r["agree"]:
            continue
        entry = doc["explanations"].get(r["pair"])
        text = (f"[{', '.join(entry['kinds'])}] {entry['text'].strip()}" if entry
                else "**NOT EXPLAINED** (add it to the yaml)")
        out.append(f"- **{r['pair']}** (compatfuzz {r['verdict']}, documented "
                   f"{r['documented']}): {_cell(text)}")
    out += ["", "Kinds: " + "; ".join(f"`{k}`: {v}" for k, v in KINDS.items()) + "."]
    out += ["", "## Each project's stated policy", ""]
    for name, entry in doc["projects"].items():
        out.append(f"- **{name}**: {_cell(entry.get('policy', ''))} "
                   f"({_cell(entry.get('cite', ''))})")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-witness", action="store_true",
                    help="static rules only (compatfuzz diff --no-witness)")
    ap.add_argument("--policy", default="kubernetes",
                    help="profile passed as compatfuzz diff --policy (default kubernetes)")
    ap.add_argument("--only", metavar="TEXT", help="pairs whose label contains TEXT")
    ap.add_argument("--check", action="store_true",
                    help="only check that the yaml covers every pair (no engine run)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "compat_releases.json")
    ap.add_argument("--md", type=Path, default=HERE / "compat_releases.md")
    args = ap.parse_args()
    if not CORPUS.is_dir():
        print(f"{rel(CORPUS)} is absent: no release pairs to compare", file=sys.stderr)
        return 0
    try:
        doc = load_documented()
    except DocumentedError as e:
        print(f"compat_releases: error: {e}", file=sys.stderr)
        return 2
    todo = [p for p in pairs() if not args.only or args.only in p[0]]
    labels = [label for label, _, _ in pairs()]
    if args.check:
        problems = consistency(doc, labels)
        for p in problems:
            print("  " + p, file=sys.stderr)
        print(f"{len(labels)} pairs, {len(problems)} problems")
        return 1 if problems else 0
    rows = []
    for label, old, new in todo:
        row = run_pair(label, old, new, doc, dynamic=not args.no_witness, policy=args.policy)
        rows.append(row)
        print(f"{row['seconds']:6.2f}s {row['verdict']:<10} {row['documented']:<11} "
              f"{'agree' if row['agree'] else 'DISAGREE'}  {label}", flush=True)
    problems = consistency(doc, labels if not args.only else [r["pair"] for r in rows],
                           rows)
    if args.only:  # a partial run cannot tell a stale entry from one it did not run
        problems = [p for p in problems if "no such release pair" not in p
                    and "explanation for no release pair" not in p]
    resolved = []
    if args.policy != "kubernetes":  # the explanations are written for the default profile
        resolved = [p.split(": agrees now")[0] for p in problems if "agrees now" in p]
        problems = [p for p in problems if "agrees now" not in p]
    agree = sum(r["agree"] for r in rows)
    print(f"\n{len(rows)} pairs: {agree} agree, {len(rows) - agree} disagree; "
          f"{len(problems)} consistency problems")
    for p in problems:
        print("  " + p)
    if resolved:
        print(f"{len(resolved)} pairs explained under the kubernetes profile agree under "
              f"--policy {args.policy}:")
        for label in resolved:
            print("  " + label)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "policy": args.policy, "witness": not args.no_witness, "pairs": len(rows),
        "agree": agree, "rows": rows, "problems": problems,
        "agree_under_this_policy_only": resolved}, indent=1) + "\n")
    args.md.write_text(render(rows, doc, dynamic=not args.no_witness, policy=args.policy))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
