"""Envoy's API across releases: ``compatfuzz diff`` side by side with ``buf breaking``.

Envoy's API comes from PyPI: successive ``xds-protos`` releases carry it as ``_pb2``
modules (``RELEASES`` in ``tests/protobuf/_xds_releases.py`` says which release holds
which Envoy API). Each is installed with ``pip install --no-deps --target`` into the user
cache (``~/.cache/compatfuzz/xds-protos-VERSION``) and imported in its own subprocess,
which writes a ``FileDescriptorSet``; both tools read those sets, and only Envoy's own
``envoy/`` files are compared (compatfuzz: the schema's roots; buf: ``--path envoy``).
buf ships as an npm package::

    npm install --prefix ~/.cache/compatfuzz/buf @bufbuild/buf

buf runs twice: with the ``breaking`` rules of Envoy's own ``api/buf.yaml`` (what Envoy's
CI runs; ``ENVOY_BUF_BREAKING`` below) and with buf's default ``FILE`` category.
``--generate`` also draws messages for every ``envoy.*.v3`` message with validate rules of
the newest release and checks binary/JSON parse-back and rule conformance.

Run from the repository root::

    .venv/bin/python benchmarks/bench_protobuf_envoy.py [--generate]

Writes ``benchmarks/results/protobuf_envoy.json`` and prints a Markdown table; exits 2 when
a wheel cannot be installed (no registry).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.protobuf._xds_releases import (  # noqa: E402 (after the path set-up above)
    RELEASES,
    Unavailable,
    cache_dir,
    descriptor_set,
    envoy_schema,
)

# The ``breaking`` section of envoyproxy/envoy ``api/buf.yaml`` (config version v1).
ENVOY_BUF_BREAKING: dict[str, Any] = {
    "version": "v1",
    "breaking": {
        "ignore_unstable_packages": True,
        "use": ["FIELD_SAME_ONEOF", "FIELD_SAME_JSON_NAME", "FIELD_SAME_NAME",
                "FIELD_SAME_TYPE", "FIELD_SAME_LABEL", "FILE_SAME_PACKAGE",
                "FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED",
                "FIELD_NO_DELETE_UNLESS_NAME_RESERVED"],
    },
}
BUF_FILE: dict[str, Any] = {"version": "v2", "breaking": {"use": ["FILE"]}}


def find_buf(given: str | None) -> str | None:
    """``--buf``, else the npm install under the user cache, else ``buf`` on PATH."""
    if given:
        return given
    cached = cache_dir() / "buf" / "node_modules" / ".bin" / "buf"
    return str(cached) if cached.exists() else shutil.which("buf")


def run_buf(buf: str, old: Path, new: Path, config: dict[str, Any]) -> tuple[list[Any], float]:
    """buf's findings on Envoy's own files of the two images, and its time."""
    start = time.perf_counter()
    proc = subprocess.run([buf, "breaking", new.name, "--against", old.name, "--path", "envoy",
                           "--error-format", "json", "--config", json.dumps(config)],
                          capture_output=True, text=True, check=False, cwd=new.parent)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 100):
        raise RuntimeError(f"buf failed ({proc.returncode}): {proc.stderr[:500]}")
    out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    # --path limits the checks, not buf's file-option rules on imports (udpa's go_package)
    return [f for f in out if f.get("path", "").startswith("envoy/")], elapsed


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
    parser.add_argument("--releases", nargs="+", default=list(RELEASES),
                        help="xds-protos versions, oldest first (default: %(default)s)")
    parser.add_argument("--buf", default=None, help="buf binary (default: the npm install "
                        "under the user cache, else buf on PATH; none: compatfuzz only)")
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--generate", action="store_true")
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/protobuf_envoy.json",
                        help="relative to the repository root")
    args = parser.parse_args(argv)
    from compatfuzz.compat import Finished
    from compatfuzz.protobuf import check_protos

    buf = find_buf(args.buf)
    if buf is None:
        print("no buf (npm install --prefix ~/.cache/compatfuzz/buf @bufbuild/buf): "
              "compatfuzz only", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="cf-envoy-"))
    snaps: list[dict[str, Any]] = []
    for version in args.releases:
        start = time.perf_counter()
        try:
            data = descriptor_set(version)
        except Unavailable as exc:
            print(f"{exc}; see this file's docstring", file=sys.stderr)
            return 2
        schema = envoy_schema(version, data)
        load_s = time.perf_counter() - start
        image = work / f"{version}.binpb"
        image.write_bytes(data)
        snaps.append({"xds_protos": version, "envoy_api": RELEASES.get(version, ""),
                      "schema": schema, "image": image, "load_s": round(load_s, 1),
                      "files": len(schema.roots)})
        print(f"xds-protos {version}: {len(schema.roots)} envoy files, loaded in "
              f"{load_s:.1f}s", file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for old, new in itertools.pairwise(snaps):
        start = time.perf_counter()
        findings: tuple[Any, ...] = ()
        for event in check_protos(old["schema"], new["schema"], budget=args.budget):
            if isinstance(event, Finished):
                findings = event.findings
        cf_s = time.perf_counter() - start
        buf_envoy: list[Any] | None = None
        buf_file: list[Any] | None = None
        buf_envoy_s = buf_file_s = None
        if buf is not None:
            buf_envoy, buf_envoy_s = run_buf(buf, old["image"], new["image"],
                                             ENVOY_BUF_BREAKING)
            buf_file, buf_file_s = run_buf(buf, old["image"], new["image"], BUF_FILE)
        breaking = [f for f in findings if f.breaking]
        row = {
            "pair": f"{old['xds_protos']} -> {new['xds_protos']}",
            "compatfuzz_s": round(cf_s, 1),
            "compatfuzz_breaking": sum(1 for f in breaking if not f.ignored),
            "compatfuzz_exempt": sum(1 for f in breaking if f.ignored),
            "compatfuzz_confirmed": sum(1 for f in breaking  # witnessed, exempt ones aside
                                        if str(f.status) == "confirmed" and not f.ignored),
            "compatfuzz_info": sum(1 for f in findings if not f.breaking),
            "buf_envoy_config": None if buf_envoy is None else len(buf_envoy),
            "buf_envoy_s": None if buf_envoy_s is None else round(buf_envoy_s, 1),
            "buf_file": None if buf_file is None else len(buf_file),
            "buf_file_s": None if buf_file_s is None else round(buf_file_s, 1),
            "findings": [dict(f.to_json(), definition=f.definition) for f in breaking],
            "buf_envoy_findings": buf_envoy, "buf_file_findings": buf_file,
        }
        rows.append(row)
        print(f"{row['pair']}: compatfuzz {row['compatfuzz_breaking']} breaking "
              f"(+{row['compatfuzz_exempt']} exempt, {row['compatfuzz_confirmed']} "
              f"witnessed) {cf_s:.1f}s; buf(envoy) {row['buf_envoy_config']} "
              f"{row['buf_envoy_s']}s; buf(FILE) {row['buf_file']} {row['buf_file_s']}s",
              file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    out: dict[str, Any] = {
        "snapshots": [{k: v for k, v in s.items() if k not in ("schema", "image")}
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
    target = ROOT / args.out
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(out, indent=1, default=str) + "\n")
    print("| pair (xds-protos) | compatfuzz breaking (witnessed) | Envoy-exempt "
          "| buf (Envoy's config) | buf (FILE) | compatfuzz s | buf s (Envoy cfg / FILE) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['pair']} | {r['compatfuzz_breaking']} ({r['compatfuzz_confirmed']}) | "
              f"{r['compatfuzz_exempt']} | {r['buf_envoy_config']} | {r['buf_file']} | "
              f"{r['compatfuzz_s']} | {r['buf_envoy_s']} / {r['buf_file_s']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
