"""Envoy's API across release pairs: ``compatfuzz diff`` side by side with ``buf breaking``.

Real data is not in the repository. Get it with::

    # Envoy's api/ tree, mirrored as envoyproxy/data-plane-api (any clone works)
    git clone --bare https://github.com/envoyproxy/data-plane-api envoy-api.git
    # buf ships as an npm package; no other download needed
    (cd /tmp/buf && npm install @bufbuild/buf)
    # Envoy's imports (validate, udpa, xds, google/api, opencensus, opentelemetry, cel)
    pip install xds-protos         # already in the dev dependency group
    # ...except io/prometheus/client/metrics.proto (envoy.service.metrics)
    git clone --bare https://github.com/prometheus/client_model prometheus.git

    python benchmarks/bench_protobuf_envoy.py --git envoy-api.git \
        --prometheus-git prometheus.git --buf /tmp/buf/node_modules/.bin/buf

The mirror has no release tags, so a "release" is the last ``api/`` commit on or before
the Envoy release date (``RELEASES`` below). Both tools read the same descriptor sets
(compiled once per snapshot with grpcio-tools' protoc). buf runs twice: with the
``breaking`` section of Envoy's own ``buf.yaml`` at the NEW snapshot (what Envoy's CI
runs) and with buf's default ``FILE`` category. ``--generate`` also draws messages for
every ``envoy.*.v3`` message with validate rules and checks binary/JSON parse-back and
rule conformance (the issue's "100% parse back" must-show).

Writes ``benchmarks/results/protobuf_envoy.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RELEASES = [  # Envoy release -> approximate release date (last api/ commit on or before)
    ("1.31", "2024-07-16"), ("1.32", "2024-10-15"), ("1.33", "2025-01-14"),
    ("1.34", "2025-04-15"), ("1.35", "2025-07-15"), ("1.36", "2025-10-14"),
]
DEFAULT_GIT = "/work/.mirror/envoyproxy+data-plane-api/repo"
DEFAULT_PROMETHEUS = "/work/.mirror/prometheus+client_model/repo"


def _git(git: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git}", *args], check=True,
                          capture_output=True, text=True).stdout


def snapshot(git: str, date: str, dest: Path) -> str:
    """Extract the ``envoy/`` tree of the last commit on or before ``date``; its hash."""
    commit = _git(git, "log", "-1", f"--before={date} 23:59", "--format=%H").strip()
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", f"--git-dir={git}", "archive", commit, "envoy",
                              "buf.yaml"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def buf_config(root: Path) -> dict[str, Any]:
    import yaml

    doc = yaml.safe_load((root / "buf.yaml").read_text())
    return {"version": doc.get("version", "v1"), "breaking": doc.get("breaking", {})}


def run_buf(buf: str, old: Path, new: Path, config: dict[str, Any]) -> tuple[list[Any], float]:
    start = time.perf_counter()
    proc = subprocess.run([buf, "breaking", str(new), "--against", str(old),
                           "--error-format", "json", "--config", json.dumps(config)],
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 100):
        raise RuntimeError(f"buf failed ({proc.returncode}): {proc.stderr[:500]}")
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return out, elapsed


def _collector(seen: list[Any]) -> Any:
    def draw(msg: Any) -> None:
        seen.append(msg)

    return draw


def generate_check(schema: Any, *, examples: int, limit: int | None) -> dict[str, Any]:
    """Draw messages for each envoy.*.v3 message with validate rules; parse back binary and
    JSON; re-check rules. Counts failures per kind."""
    from google.protobuf import json_format
    from hypothesis import HealthCheck, Phase, given, settings

    from compatfuzz.errors import UnsupportedRuleWarning
    from compatfuzz.protobuf import by_name, by_number, from_message, violations
    from compatfuzz.protobuf._validate import rules_of

    names = [n for n in schema.message_names(roots_only=True)
             if n.startswith("envoy.") and ".v3." in n
             and any(rules_of(f) for f in schema.message(n).fields)]
    names = names[:limit] if limit else names
    result: dict[str, Any] = {"messages": len(names), "drawn": 0, "binary_ok": 0,
                              "json_ok": 0, "valid": 0, "errors": {}, "unsupported": 0,
                              "not_generated": []}
    for name in names:
        cls = schema.message_class(name)
        seen: list[Any] = []
        draw = settings(max_examples=examples, database=None, deadline=None,
                        suppress_health_check=list(HealthCheck), phases=[Phase.generate])(
            given(from_message(name, schema=schema, max_depth=2, max_items=2))(
                _collector(seen)))

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UnsupportedRuleWarning)
                draw()
            result["unsupported"] += sum(issubclass(w.category, UnsupportedRuleWarning)
                                         for w in caught)
        except Exception as exc:
            result["not_generated"].append(f"{name}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        for msg in seen:
            result["drawn"] += 1
            if by_number(cls.FromString(msg.SerializeToString())) == by_number(msg):
                result["binary_ok"] += 1
            try:
                text = json_format.MessageToJson(msg, descriptor_pool=schema.pool)
                back = json_format.Parse(text, cls(), descriptor_pool=schema.pool)
                if by_name(back) == by_name(msg):
                    result["json_ok"] += 1
                else:
                    key = f"{name}: JSON reads back a different value"
                    result["errors"][key] = result["errors"].get(key, 0) + 1
            except Exception as exc:
                key = f"{type(exc).__name__}: {str(exc)[:90]}"
                result["errors"][key] = result["errors"].get(key, 0) + 1
            if not violations(msg):
                result["valid"] += 1
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--git", default=DEFAULT_GIT, help="bare git dir of data-plane-api")
    parser.add_argument("--prometheus-git", default=DEFAULT_PROMETHEUS,
                        help="bare git dir of prometheus/client_model")
    parser.add_argument("--buf", default="/tmp/bufdir/node_modules/.bin/buf")
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=len(RELEASES) - 1)
    parser.add_argument("--generate", action="store_true")
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", default=str(HERE / "results" / "protobuf_envoy.json"))
    args = parser.parse_args(argv)
    if not Path(args.git).exists():
        print(f"no Envoy API mirror at {args.git}; see this file's docstring", file=sys.stderr)
        return 2
    from compatfuzz.compat import Finished
    from compatfuzz.protobuf import check_protos, load_protos

    work = Path(tempfile.mkdtemp(prefix="cf-envoy-"))
    deps = work / "deps"
    deps.mkdir()
    archive = subprocess.run(["git", f"--git-dir={args.prometheus_git}", "archive", "HEAD",
                              "io"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(deps)], input=archive, check=True)
    snaps: list[dict[str, Any]] = []
    for release, date in RELEASES[: args.pairs + 1]:
        root = work / release
        commit = snapshot(args.git, date, root)
        start = time.perf_counter()
        schema = load_protos(root / "envoy", include=[root, deps], label=f"envoy-api@{release}")
        compile_s = time.perf_counter() - start
        image = work / f"{release}.binpb"
        image.write_bytes(schema.to_descriptor_set().SerializeToString())
        snaps.append({"release": release, "date": date, "commit": commit, "root": root,
                      "schema": schema, "image": image, "compile_s": round(compile_s, 1),
                      "files": len(schema.roots)})
        print(f"{release}: {commit[:10]} {len(schema.roots)} files, compiled in "
              f"{compile_s:.1f}s", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for old, new in itertools.pairwise(snaps):
        start = time.perf_counter()
        findings: tuple[Any, ...] = ()
        for event in check_protos(old["schema"], new["schema"], budget=args.budget):
            if isinstance(event, Finished):
                findings = event.findings
        cf_s = time.perf_counter() - start
        buf_envoy, buf_envoy_s = run_buf(args.buf, old["image"], new["image"],
                                         buf_config(new["root"]))
        buf_file, buf_file_s = run_buf(args.buf, old["image"], new["image"],
                                       {"version": "v2", "breaking": {"use": ["FILE"]}})
        breaking = [f for f in findings if f.breaking]
        row = {
            "pair": f"{old['release']} -> {new['release']}",
            "old_commit": old["commit"][:10], "new_commit": new["commit"][:10],
            "compatfuzz_s": round(cf_s, 1),
            "compatfuzz_breaking": sum(1 for f in breaking if not f.ignored),
            "compatfuzz_exempt": sum(1 for f in breaking if f.ignored),
            "compatfuzz_confirmed": sum(1 for f in breaking if str(f.status) == "confirmed"),
            "compatfuzz_info": sum(1 for f in findings if not f.breaking),
            "buf_envoy_config": len(buf_envoy), "buf_envoy_s": round(buf_envoy_s, 1),
            "buf_file": len(buf_file), "buf_file_s": round(buf_file_s, 1),
            "findings": [dict(f.to_json(), definition=f.definition) for f in breaking],
            "buf_envoy_findings": buf_envoy, "buf_file_findings": buf_file,
        }
        rows.append(row)
        print(f"{row['pair']}: compatfuzz {row['compatfuzz_breaking']} breaking "
              f"(+{row['compatfuzz_exempt']} exempt, {row['compatfuzz_confirmed']} "
              f"witnessed) {cf_s:.1f}s; buf(envoy) {len(buf_envoy)} {buf_envoy_s:.1f}s; "
              f"buf(FILE) {len(buf_file)} {buf_file_s:.1f}s", file=sys.stderr)
    out: dict[str, Any] = {
        "snapshots": [{k: v for k, v in s.items() if k not in ("schema", "root", "image")}
                      for s in snaps],
        "pairs": rows,
    }
    if args.generate:
        start = time.perf_counter()
        out["generate"] = generate_check(snaps[-1]["schema"], examples=args.examples,
                                         limit=args.limit)
        out["generate"]["seconds"] = round(time.perf_counter() - start, 1)
        summary = {k: (len(v) if isinstance(v, list) else v)
                   for k, v in out["generate"].items()}
        print(json.dumps(summary), file=sys.stderr)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, default=str) + "\n")
    print("| pair | compatfuzz breaking (witnessed) | Envoy-exempt | buf (Envoy's config) "
          "| buf (FILE) | compatfuzz s | buf s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['pair']} | {r['compatfuzz_breaking']} ({r['compatfuzz_confirmed']}) | "
              f"{r['compatfuzz_exempt']} | {r['buf_envoy_config']} | {r['buf_file']} | "
              f"{r['compatfuzz_s']} | {r['buf_envoy_s']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
