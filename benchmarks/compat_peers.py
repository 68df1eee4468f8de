"""compatfuzz diff beside crdify and oasdiff on every consecutive CRD release pair (issue 19).

Why: a user choosing a release gate compares verdicts, findings and speed on their own
CRDs. This runs the three tools, each as the command a user would type, on the same
pairs (``pairs()`` of ``bench_compat_speed.py``: every consecutive release of each CRD in
../shared/corpus/crd-releases) and records per pair and tool the verdict (breaking,
compatible or error), the findings (errors and warnings, with their rule ids) and the
wall and CPU seconds:

* ``compatfuzz diff OLD NEW --format json`` with the CLI's defaults (witness search on),
  and again with ``--no-witness`` (the static mode);
* crdify (``sigs.k8s.io/crdify``): ``crdify file://OLD file://NEW -o json`` with its
  default configuration (no ``--config``), and again with its ``description`` check
  turned off (``--config``, :data:`CRDIFY_NO_DESCRIPTION`): by default a changed
  description is an error;
* oasdiff (``github.com/oasdiff/oasdiff``): ``oasdiff breaking BASE REVISION --format
  json --fail-on ERR`` on an OpenAPI 3.0 document made from each CRD by
  :func:`openapi_document` (its docstring says what oasdiff can and cannot see that way).

The peers are built from the Go module proxy at the versions pinned in
benchmarks/peers/*/go.mod by ``bash benchmarks/peers/build.sh`` (run by this script when
``--bin`` is not given)::

    .venv/bin/python benchmarks/compat_peers.py             # all pairs, all tools
    .venv/bin/python benchmarks/compat_peers.py --only keda --tools crdify,oasdiff

Writes benchmarks/results/compat_peers.json (every finding) and benchmarks/compat_peers.md
(the table and summary, generated; the hand-written commentary after the
``COMMENTARY`` marker line of an existing file is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _repo import rel  # noqa: E402  (benchmarks/ is on the path only from here on)
from bench_compat_speed import CORPUS, pairs  # noqa: E402

from compatfuzz.errors import SchemaLoadError  # noqa: E402
from compatfuzz.schema import read_documents  # noqa: E402

PEERS = HERE / "peers"
TOOLS = ("compatfuzz", "compatfuzz-static", "crdify", "crdify-nodesc", "oasdiff")
MODULES = {"crdify": "sigs.k8s.io/crdify", "oasdiff": "github.com/oasdiff/oasdiff"}
# crdify's configuration format (sigs.k8s.io/crdify/pkg/config/config.go, JSON is YAML)
CRDIFY_NO_DESCRIPTION = {"validations": [{"name": "description", "enforcement": "None"}]}
COMMENTARY = "<!-- COMMENTARY: hand-written below this line; compat_peers.py keeps it -->"
MESSAGE_CHARS = 160


# --- the OpenAPI document oasdiff compares ------------------------------------------------

def openapi_document(crd: dict[str, Any], *, source: str = "<memory>") -> dict[str, Any]:
    """Return an OpenAPI 3.0 document that serves ``crd`` the way kube-apiserver does.

    oasdiff compares OpenAPI documents, and its breaking-change rules are judged per
    operation, on request bodies (what clients send) and responses (what they read). So
    each *served* version of the CRD becomes:

    * a component schema ``<Kind>.<version>``: the version's ``openAPIV3Schema`` as it
      stands (OpenAPI 3.0 is the dialect CRD schemas are written in; ``nullable`` and
      every ``x-kubernetes-*`` extension are kept, and oasdiff reads the extensions as
      opaque: it has no rule for list types, map keys, int-or-string, preserved unknown
      fields, embedded resources or CEL ``x-kubernetes-validations``);
    * one operation, the create call on the collection: ``POST
      /apis/{group}/{version}/namespaces/{namespace}/{plural}`` (namespaced) or ``POST
      /apis/{group}/{version}/{plural}`` (cluster-scoped), the paths kube-apiserver
      serves (``k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go``),
      whose required JSON request body and ``201`` response are that schema. A CRD's
      object travels both ways, so oasdiff's request rules (a new required field, a
      tighter bound) and response rules (a field removed, a type changed) both apply. One
      operation only: GET and PUT would repeat every finding;
    * ``deprecated: true`` on the operation when the version is, so removing a deprecated
      version reads as oasdiff's ``api-path-removed-with-deprecation``, removing any
      other one as ``api-path-removed-without-deprecation``. A version that is not
      served (``served: false``) has no operation, so un-serving reads as a removal.

    What this cannot show oasdiff: status and metadata are in the body like any field (the
    ``/status`` subresource and the server's own ``metadata`` schema are left out), a
    scope change reads as one path removed and another added, conversion between
    versions is not modelled, and stored versions (``status.storedVersions``) are not in
    a CRD file. No ``x-stability-level`` is set, so oasdiff treats every version, alpha
    or not, as stable.

    Raises:
        SchemaLoadError: ``crd`` is not a CustomResourceDefinition (the message names
            ``source`` and the missing key).
    """
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        raise SchemaLoadError("not a CustomResourceDefinition (kind)", source=source,
                              hint="pass a CRD file (apiextensions.k8s.io/v1)")
    spec = crd.get("spec")
    names = spec.get("names") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(names, dict) or not all(
            isinstance(x, str) for x in (spec.get("group"), names.get("plural"),
                                         names.get("kind"))):
        raise SchemaLoadError("spec.group, spec.names.plural or spec.names.kind is missing",
                              source=source, hint="pass a complete apiextensions.k8s.io/v1 "
                              "CustomResourceDefinition")
    group, plural, kind = spec["group"], names["plural"], names["kind"]
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for i, version in enumerate(spec.get("versions") or []):
        if not isinstance(version, dict) or not isinstance(version.get("name"), str):
            raise SchemaLoadError("a version without a name", source=source,
                                  pointer=f"/spec/versions/{i}/name",
                                  hint="every version needs a name")
        if not version.get("served", False):
            continue
        name = version["name"]
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        ref = f"{kind}.{name}"
        schemas[ref] = schema
        body = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}
        operation: dict[str, Any] = {
            "operationId": f"create{kind}{name[:1].upper()}{name[1:]}",
            "requestBody": {"required": True, "content": body},
            "responses": {"201": {"description": "Created", "content": body}},
        }
        if version.get("deprecated"):
            operation["deprecated"] = True
        if namespaced:
            operation["parameters"] = [{"name": "namespace", "in": "path", "required": True,
                                        "schema": {"type": "string"}}]
            path = f"/apis/{group}/{name}/namespaces/{{namespace}}/{plural}"
        else:
            path = f"/apis/{group}/{name}/{plural}"
        paths[path] = {"post": operation}
    return {"openapi": "3.0.3",
            "info": {"title": f"{plural}.{group}", "version": "crd"},
            "paths": paths,
            "components": {"schemas": schemas}}


def write_openapi(crd_file: Path, out: Path) -> None:
    """Write :func:`openapi_document` of the first CRD in ``crd_file`` to ``out`` (JSON)."""
    docs = read_documents(crd_file)
    crds = [d for d in docs if isinstance(d, dict)
            and d.get("kind") == "CustomResourceDefinition"]
    if not crds:
        raise SchemaLoadError("no CustomResourceDefinition in the file", source=str(crd_file),
                              hint="pass a CRD file")
    out.write_text(json.dumps(openapi_document(crds[0], source=str(crd_file))))


# --- reading each tool's answer -----------------------------------------------------------

def _result(verdict: str, findings: list[dict[str, Any]], message: str = "") -> dict[str, Any]:
    errors = [f for f in findings if f["level"] == "error"]
    warnings = [f for f in findings if f["level"] == "warning"]
    rules = Counter(f["rule"] for f in errors + warnings)
    out = {"verdict": verdict, "errors": len(errors), "warnings": len(warnings),
           "rules": dict(sorted(rules.items())), "findings": findings}
    if message:
        out["message"] = message
    return out


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-3:])[:MESSAGE_CHARS]


def scrub(text: str, scratch: Path) -> str:
    """``text`` with the machine's paths made relative: results files are committed
    (``tests/test_repository_paths.py``)."""
    for path, name in ((scratch, "<scratch>"), (ROOT.parent / "shared", "../shared"),
                       (ROOT, ".")):
        text = text.replace(str(path.resolve()), name).replace(str(path), name)
    return text


def parse_compatfuzz(code: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The verdict of ``compatfuzz diff --format json``: exit 0 compatible, 1 breaking."""
    if code not in (0, 1):
        return _result("error", [], _tail(stderr or stdout))
    report = json.loads(stdout)
    findings = [{"rule": f["rule"], "level": f["severity"], "version": f.get("version"),
                 "path": f.get("path"), "status": f.get("status"),
                 "message": str(f.get("message", ""))[:MESSAGE_CHARS]}
                for f in report["findings"] if not f.get("ignored")]
    return _result("breaking" if code == 1 else "compatible", findings)


def parse_crdify(code: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The verdict of ``crdify -o json``: exit 0 compatible; exit 1 with a report, breaking.

    crdify exits 1 both when a check reports an error (``Results.HasFailures`` in
    ``sigs.k8s.io/crdify/pkg/runner/results.go``) and when it cannot load a file
    (``log.Fatalf`` in ``cli/root.go``); only the first prints a JSON report. Its report
    holds three groups (``crdValidation``, ``sameVersionValidation`` per version and
    property, ``servedVersionValidation`` per pair of served versions and property),
    each check with its ``errors`` and ``warnings``.
    """
    try:
        report = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        report = None
    if code not in (0, 1) or not isinstance(report, dict):
        return _result("error", [], _tail(stderr or stdout))
    findings: list[dict[str, Any]] = []

    def add(scope: str, version: str | None, path: str | None, check: dict[str, Any]) -> None:
        for level, key in (("error", "errors"), ("warning", "warnings")):
            for message in check.get(key) or []:
                findings.append({"rule": check["name"], "level": level, "scope": scope,
                                 "version": version, "path": path,
                                 "message": str(message)[:MESSAGE_CHARS]})

    for check in report.get("crdValidation") or []:
        add("crd", None, None, check)
    for scope, key in (("same-version", "sameVersionValidation"),
                       ("served-version", "servedVersionValidation")):
        for version, by_path in sorted((report.get(key) or {}).items()):
            for path, checks in sorted(by_path.items()):
                for check in checks:
                    add(scope, version, path, check)
    return _result("breaking" if code == 1 else "compatible", findings)


OASDIFF_LEVELS = {3: "error", 2: "warning", 1: "info"}


def parse_oasdiff(code: int, stdout: str, stderr: str) -> dict[str, Any]:
    """The verdict of ``oasdiff breaking --format json --fail-on ERR``: exit 1 when an
    ERR-level change is found, 0 otherwise, 1xx when a spec cannot be loaded or compared
    (``checker.Level`` in ``github.com/oasdiff/oasdiff/checker/rules/level.go``: 3 ERR, 2 WARN,
    1 INFO)."""
    try:
        changes = json.loads(stdout) if stdout.strip() else []
    except json.JSONDecodeError:
        changes = None
    if code not in (0, 1) or not isinstance(changes, list):
        return _result("error", [], _tail(stderr or stdout))
    findings = [{"rule": c.get("id"), "level": OASDIFF_LEVELS.get(c.get("level"), "info"),
                 "operation": c.get("operation"), "path": c.get("path"),
                 "message": str(c.get("text", ""))[:MESSAGE_CHARS]}
                for c in changes if isinstance(c, dict)]
    if code == 1 and not any(f["level"] == "error" for f in findings):
        # failures to load or compare exit 1xx, but an exit 1 without an ERR change is
        # no verdict either
        return _result("error", findings, _tail(stderr or stdout) or "exit 1, no ERR change")
    return _result("breaking" if code == 1 else "compatible", findings)


# --- running ------------------------------------------------------------------------------

def _timed(cmd: Sequence[str], cwd: Path, timeout: float) -> tuple[int, str, str, float, float]:
    """(exit code, stdout, stderr, wall s, CPU s of the child) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, check=False)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired:
        code, out, err = -1, "", f"timed out after {timeout:g} s"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, out, err, round(wall, 3), round(cpu, 3)


def peer_versions() -> dict[str, str]:
    """The version of each peer pinned in benchmarks/peers/<tool>/go.mod."""
    out = {}
    for tool, module in MODULES.items():
        text = (PEERS / tool / "go.mod").read_text()
        m = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", text, re.M)
        out[tool] = m.group(1) if m else "?"
    return out


def build_peers() -> Path:
    """Run benchmarks/peers/build.sh (cached) and return the folder of the binaries."""
    proc = subprocess.run(["bash", str(PEERS / "build.sh")], capture_output=True, text=True,
                          check=False)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"compat_peers.py: benchmarks/peers/build.sh failed (exit "
                         f"{proc.returncode}); fix the build or pass --bin DIR")
    return Path(proc.stdout.strip().splitlines()[-1])


def commands(bin_dir: Path, old: Path, new: Path, scratch: Path
             ) -> dict[str, tuple[list[str], Callable[[int, str, str], dict[str, Any]]]]:
    """Each tool's command line for one pair, with the parser of its output (oasdiff's
    documents and crdify's configuration are in ``scratch``)."""
    compatfuzz = [sys.executable, "-m", "compatfuzz.cli", "diff", str(old), str(new),
                  "--format", "json"]
    crdify = [str(bin_dir / "crdify"), f"file://{old}", f"file://{new}", "-o", "json"]
    old_api, new_api = scratch / "old.openapi.json", scratch / "new.openapi.json"
    return {
        "compatfuzz": (compatfuzz, parse_compatfuzz),
        "compatfuzz-static": ([*compatfuzz, "--no-witness"], parse_compatfuzz),
        "crdify": (crdify, parse_crdify),
        "crdify-nodesc": ([*crdify, "--config", str(scratch / "crdify-no-description.yaml")],
                          parse_crdify),
        "oasdiff": ([str(bin_dir / "oasdiff"), "breaking", str(old_api), str(new_api),
                     "--format", "json", "--fail-on", "ERR"], parse_oasdiff),
    }


def run_pair(bin_dir: Path, old: Path, new: Path, tools: Sequence[str], scratch: Path, *,
             timeout: float = 600) -> dict[str, Any]:
    """Every tool's result on one pair (oasdiff's documents are written first, untimed)."""
    row: dict[str, Any] = {}
    if "oasdiff" in tools:
        start = time.perf_counter()
        try:
            write_openapi(old, scratch / "old.openapi.json")
            write_openapi(new, scratch / "new.openapi.json")
        except SchemaLoadError as exc:  # no document, so no oasdiff verdict for this pair
            row["oasdiff"] = {**_result("error", [], scrub(str(exc), scratch)),
                              "exit_code": None, "seconds": 0.0, "cpu_seconds": 0.0}
            tools = [t for t in tools if t != "oasdiff"]
        row["openapi_seconds"] = round(time.perf_counter() - start, 3)
    (scratch / "crdify-no-description.yaml").write_text(json.dumps(CRDIFY_NO_DESCRIPTION))
    for tool, (cmd, parse) in commands(bin_dir, old.resolve(), new.resolve(),
                                       scratch).items():
        if tool not in tools:
            continue
        # cwd: an empty folder, so no tool picks up a configuration file (.oasdiff.yaml)
        code, out, err, wall, cpu = _timed(cmd, scratch / "cwd", timeout)
        out, err = scrub(out, scratch), scrub(err, scratch)
        row[tool] = {**parse(code, out, err), "exit_code": code, "seconds": wall,
                     "cpu_seconds": cpu}
    return row


def startup_seconds(bin_dir: Path, tools: Sequence[str], scratch: Path) -> dict[str, float]:
    """Median wall seconds (of 3) of each tool doing nothing: the floor of every pair."""
    idle = {"compatfuzz": [sys.executable, "-m", "compatfuzz.cli", "diff", "--list-rules"],
            "crdify": [str(bin_dir / "crdify"), "version"],
            "oasdiff": [str(bin_dir / "oasdiff"), "--version"]}
    out = {}
    for family, cmd in idle.items():
        if any(t.startswith(family) for t in tools):
            out[family] = statistics.median(_timed(cmd, scratch, 60)[3] for _ in range(3))
    return out


# --- the report ---------------------------------------------------------------------------

def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return "-"
    if r["verdict"] == "error":
        return f"**error** ({r['seconds']:.2f} s)"
    word = "breaking" if r["verdict"] == "breaking" else "ok"
    return f"{word} {r['errors']}/{r['warnings']} ({r['seconds']:.2f} s)"


def _rules(r: dict[str, Any] | None) -> str:
    if not r:
        return "-"
    if r["verdict"] == "error":
        return f"error: {r.get('message', '')}"
    return ", ".join(f"{k} ({v})" if v > 1 else k for k, v in r["rules"].items()) or "none"


def summary(rows: list[dict[str, Any]], tools: Sequence[str]) -> dict[str, Any]:
    """Median / max seconds, verdict counts and pairwise verdict agreement per tool."""
    out: dict[str, Any] = {"tools": {}, "agreement": {}}
    for tool in tools:
        results = [r[tool] for r in rows if tool in r]
        if not results:
            continue
        walls = [x["seconds"] for x in results]
        cpus = [x["cpu_seconds"] for x in results]
        out["tools"][tool] = {
            "pairs": len(results),
            "verdicts": dict(Counter(x["verdict"] for x in results)),
            "errors": sum(x["errors"] for x in results),
            "warnings": sum(x["warnings"] for x in results),
            "rules": dict(sum((Counter(x["rules"]) for x in results), Counter()).most_common()),
            "median_seconds": round(statistics.median(walls), 3),
            "max_seconds": round(max(walls), 3),
            "total_seconds": round(sum(walls), 1),
            "median_cpu_seconds": round(statistics.median(cpus), 3),
            "max_cpu_seconds": round(max(cpus), 3),
        }
    present = [t for t in tools if t in out["tools"]]
    for i, a in enumerate(present):
        for b in present[i + 1:]:
            both = [r for r in rows if a in r and b in r]
            same = sum(r[a]["verdict"] == r[b]["verdict"] for r in both)
            out["agreement"][f"{a} vs {b}"] = {"same": same, "pairs": len(both)}
    return out


def markdown(data: dict[str, Any], commentary: str = "") -> str:
    """The generated report: a table per pair, the summary and the disagreements."""
    tools = [t for t in TOOLS if t in data["summary"]["tools"]]
    names = {"compatfuzz": "compatfuzz diff", "compatfuzz-static": "compatfuzz --no-witness",
             "crdify": f"crdify {data['peers'].get('crdify', '')}",
             "crdify-nodesc": "crdify, description off",
             "oasdiff": f"oasdiff {data['peers'].get('oasdiff', '')}"}
    lines = [
        "# compatfuzz diff beside crdify and oasdiff on real CRD release pairs",
        "",
        "Generated by `benchmarks/compat_peers.py` (see benchmarks/README.md); every figure "
        "below comes from `results/compat_peers.json`.",
        f"Run {data['date']} on {data['cores']} shared cores, load average "
        f"{data['load_average']} at the end; {len(data['pairs'])} pairs of "
        "`../shared/corpus/crd-releases`.",
        "",
        "Each cell: verdict, errors/warnings, wall seconds. *breaking* = the tool fails "
        "the change (exit 1), *ok* = it passes it (warnings may remain), **error** = the "
        "tool could not compare the pair. Commands (OLD.openapi.json: "
        "`compat_peers.openapi_document`):",
        "",
        *[f"* {names[t]}: `{data['commands'][t]}`" for t in tools],
        "",
        "Seconds are wall seconds of the whole command, start-up included; start-up alone "
        "(median of 3 runs that compare nothing): "
        + ", ".join(f"{k} {v:.2f} s" for k, v in data.get("startup_seconds", {}).items())
        + ".",
        "",
        "| pair | " + " | ".join(names[t] for t in tools) + " |",
        "|---|" + "---|" * len(tools),
    ]
    for row in data["pairs"]:
        lines.append(f"| {row['pair']} | " + " | ".join(_cell(row.get(t)) for t in tools)
                     + " |")
    lines += ["", "## Summary", "",
              "| tool | breaking | ok | error | errors | warnings | median s | max s | "
              "total s | median CPU s | max CPU s |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in tools:
        s = data["summary"]["tools"][t]
        v = s["verdicts"]
        lines.append(f"| {names[t]} | {v.get('breaking', 0)} | {v.get('compatible', 0)} | "
                     f"{v.get('error', 0)} | {s['errors']} | {s['warnings']} | "
                     f"{s['median_seconds']:.2f} | {s['max_seconds']:.2f} | "
                     f"{s['total_seconds']:.1f} | {s['median_cpu_seconds']:.2f} | "
                     f"{s['max_cpu_seconds']:.2f} |")
    lines += ["", "Rule ids of the errors and warnings over all pairs (count):", ""]
    for t in tools:
        rules = data["summary"]["tools"][t]["rules"]
        lines.append(f"* {names[t]}: " + (", ".join(f"{k} ({v})" for k, v in rules.items())
                                          or "none"))
    lines += ["", "Same verdict on a pair:", ""]
    for key, a in data["summary"]["agreement"].items():
        lines.append(f"* {key}: {a['same']} of {a['pairs']}")
    main = [t for t in ("compatfuzz", "crdify", "crdify-nodesc", "oasdiff") if t in tools]
    split = [r for r in data["pairs"]
             if len({r[t]["verdict"] for t in main if t in r}) > 1]
    lines += ["", f"## Pairs where the verdicts differ ({len(split)})", "",
              "Rule ids of each tool's errors and warnings (count).", ""]
    for r in split:
        lines.append(f"* **{r['pair']}**")
        for t in main:
            if t in r:
                lines.append(f"  * {names[t]}: {r[t]['verdict']}: {_rules(r[t])}")
    lines += ["", COMMENTARY, ""]
    text = "\n".join(lines)
    if commentary.strip():
        text += commentary.strip("\n") + "\n"
    return text


def kept_commentary(md: Path) -> str:
    """The hand-written part of an existing report: everything after the marker line."""
    if not md.is_file():
        return ""
    _, marker, after = md.read_text().partition(COMMENTARY)
    return after if marker else ""


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", metavar="TEXT", help="pairs whose label contains TEXT")
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help=f"comma-separated subset of {','.join(TOOLS)}")
    ap.add_argument("--bin", type=Path, metavar="DIR",
                    help="folder with crdify and oasdiff (default: benchmarks/peers/build.sh)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per tool run")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "compat_peers.json")
    ap.add_argument("--md", type=Path, default=HERE / "compat_peers.md")
    args = ap.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        ap.error(f"--tools: unknown {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    if not CORPUS.is_dir():
        print(f"{rel(CORPUS)} is absent: nothing to compare", file=sys.stderr)
        return 0
    bin_dir = args.bin
    wanted = {t.split("-")[0] for t in tools} & set(MODULES)
    if bin_dir is None and wanted:
        bin_dir = build_peers()
    missing = sorted(t for t in wanted if not (bin_dir and (bin_dir / t).is_file()))
    if missing:
        ap.error(f"--bin {bin_dir}: no {', '.join(missing)} there; build them with bash "
                 "benchmarks/peers/build.sh (it prints their folder) or leave --bin out")
    rows = []
    with tempfile.TemporaryDirectory(prefix="compat-peers-") as tmp:
        scratch = Path(tmp)
        (scratch / "cwd").mkdir()
        startup = startup_seconds(bin_dir or Path(), tools, scratch / "cwd")
        for label, a, b in pairs():
            if args.only and args.only not in label:
                continue
            row = {"pair": label, "old": rel(a), "new": rel(b),
                   **run_pair(bin_dir or Path(), a, b, tools, scratch, timeout=args.timeout)}
            rows.append(row)
            print(f"{label}: " + "; ".join(f"{t} {_cell(row.get(t))}" for t in tools),
                  flush=True)
    data = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "cores": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "peers": peer_versions(),
            "commands": {"compatfuzz": "compatfuzz diff OLD NEW --format json",
                         "compatfuzz-static": "compatfuzz diff OLD NEW --format json "
                                              "--no-witness",
                         "crdify": "crdify file://OLD file://NEW -o json",
                         "crdify-nodesc": "crdify file://OLD file://NEW -o json --config "
                                          "CFG  # CFG: " + json.dumps(CRDIFY_NO_DESCRIPTION),
                         "oasdiff": "oasdiff breaking OLD.openapi.json NEW.openapi.json "
                                    "--format json --fail-on ERR"},
            "startup_seconds": startup, "summary": summary(rows, tools), "pairs": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    args.md.write_text(markdown(data, kept_commentary(args.md)))
    for tool, s in data["summary"]["tools"].items():
        print(f"{tool}: {s['verdicts']}, median {s['median_seconds']} s, max "
              f"{s['max_seconds']} s (CPU median {s['median_cpu_seconds']} s)")
    print(f"wrote {rel(args.out)} and {rel(args.md)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
