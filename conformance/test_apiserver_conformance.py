"""Differential test: compatfuzz's API-server model against upstream Kubernetes Go code.

Every case runs through ``compatfuzz.apiserver`` (or ``compatfuzz.semantic`` for
Quantity) and through the oracle compiled from apiextensions-apiserver and apimachinery
v0.37.2 (``conformance/apiserver/main.go`` and its ``go.mod``, built by
``conformance/build.py`` into ``~/.cache/compatfuzz``); the answers must be identical as
the server would write them. Cases are drawn by Hypothesis with fixed seeds, so the
figures are reproducible; a disagreement is minimised (object, then schema) with the
oracle in the loop and reported with both answers.

Skips cleanly, naming what is missing, without Go (>= 1.26), the Go module proxy (or a
module cache holding the pinned modules) or ``compatfuzz.apiserver``.
Run: ``.venv/bin/python -m pytest conformance/test_apiserver_conformance.py
-p no:cacheprovider -rP``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent


def _load(name: str) -> ModuleType:
    """Import a sibling module by path (the folder is not a package; ``build`` is taken)."""
    full = f"compatfuzz_conformance_{name.lstrip('_')}"
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.spec_from_file_location(full, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


builder = _load("build")
oracle_mod = _load("_apiserver_oracle")
cases_mod = _load("_apiserver_cases")
Case, Oracle = oracle_mod.Case, oracle_mod.Oracle

# ../shared/corpus beside the checkout (only CI and developers have it: skipped when absent)
CORPUS = Path(os.environ.get("COMPATFUZZ_CRD_CORPUS",
                             HERE.parent.parent / "shared" / "corpus" / "crds"))
REPORT = Path(os.environ.get("COMPATFUZZ_CONFORMANCE_REPORT",
                             Path(tempfile.gettempdir()) / "compatfuzz-conformance"
                             / "apiserver.json"))
# Scale: COMPATFUZZ_CONFORMANCE_SCALE=4 draws four times as many cases.
SCALE = float(os.environ.get("COMPATFUZZ_CONFORMANCE_SCALE", "1"))



@dataclass(frozen=True)
class Known:
    """A compatfuzz bug found by this suite and not fixed yet: its disagreements are
    reported but do not fail the differential, and its minimal repro runs as a strict
    xfail (so the fix shows up as XPASS: then delete the entry)."""

    name: str
    reason: str  # the upstream code that decides it
    ops: tuple[str, ...]  # op labels it shows in (prefixes)
    signatures: tuple[str, ...]  # substrings of the disagreement's signature
    repro: dict[str, Any]  # one request for the oracle (op, schema, object, ...)
    refused_schemas_only: bool = False  # only under schemas CRD validation refuses

    def explains(self, label: str, why: str, refused: bool = False) -> bool:
        return (label.startswith(self.ops) and any(s in why for s in self.signatures)
                and (refused or not self.refused_schemas_only))


_OBJ = {"type": "object"}
_TIMES = ("at metadata.creationTimestamp", "at metadata.deletionTimestamp",
          "managedFields[].time", "at metadata.managedFields")
KNOWN: tuple[Known, ...] = (
    Known(
        "prune-defaults-in-surrounding-object",
        "defaulting/prune.go pruneDefaults puts each default into its surrounding object "
        "(surroundingobject.go) and coerces and prunes it with the ROOT schema as a resource "
        "root: an apiVersion/kind default that is not a string (at the root or in an "
        "embedded resource) is dropped (Default.Object becomes nil), a metadata default "
        "goes through ObjectMeta",
        ("default", "decode", "prune_nulls"), ("apiVersion", "kind", "metadata"),
        {"op": "default", "schema": {"type": "object", "properties": {"kind": {"default": 0}}},
         "object": {}}, refused_schemas_only=True),
    Known(
        "quantity-DecimalSI-above-E",
        "apimachinery pkg/api/resource/quantity.go:454 `suffix, _ := quantitySuffixer."
        "constructBytes(10, exponent, format)` ignores !ok: DecimalSI values >= 10^21 print "
        "without a suffix (1000E -> \"1\"); kubernetes/kubernetes#140459 proposes the e21 "
        "fallback compatfuzz implements, not in apimachinery v0.37.2",
        ("quantity",), ("DecimalSI above E",), {"op": "quantity", "a": "1000E"}),
    Known(
        "quantity-UnmarshalJSON-escapes",
        "apimachinery quantity.go UnmarshalJSON strips the quotes of the raw JSON literal "
        "without unescaping it, then strings.TrimSpace: a tab or newline (which JSON must "
        "escape as \\t, \\n) is not trimmed and the parse fails; Unicode spaces sent raw "
        "(U+00A0, U+3000) are trimmed",
        ("quantity",), ("escaped control character",),
        {"op": "quantity_json", "value": " 1\t"}),
    Known(
        "quantity-UnmarshalJSON-null",
        "apimachinery quantity.go UnmarshalJSON: a JSON null leaves the zero Quantity "
        "(no error), which prints \"0\"",
        ("quantity",), ("UnmarshalJSON(null)",), {"op": "quantity_json", "value": None}),
)

OPS: tuple[tuple[str, bool, bool], ...] = (
    # (op, root, drop_invalid)
    ("prune", True, False), ("prune", False, False), ("prune_nulls", True, False),
    ("default", True, False), ("coerce", True, False), ("coerce", True, True),
    ("coerce", False, False), ("decode", True, False),
)

_RESULTS: dict[str, dict[str, Any]] = {}
MAX_SHRINKS = 40  # kinds of disagreement minimised per test (each takes about a second)


# --- fixtures -----------------------------------------------------------------------------

@pytest.fixture(scope="session")
def oracle(request: pytest.FixtureRequest) -> Iterator[Any]:
    try:
        binary = builder.build()
    except builder.MissingPrerequisite as exc:
        pytest.skip(f"oracle prerequisites missing: {exc}")
    except builder.BuildError as exc:
        pytest.fail(str(exc), pytrace=False)
    running = Oracle(binary)
    request.config.pluginmanager.register(_Summary(), "compatfuzz-apiserver-summary")
    yield running
    running.close()


@pytest.fixture(scope="session")
def api() -> ModuleType:
    module: ModuleType = pytest.importorskip("compatfuzz.apiserver")
    return module


class _Summary:
    """Prints the figures at the end of the run and writes them to ``REPORT``."""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not _RESULTS:
            return
        tr = terminalreporter
        tr.section("compatfuzz vs upstream API server")
        for name, result in _RESULTS.items():
            tr.write_line(f"{name}: {result['cases']} cases, "
                          f"{result['disagreements']} disagreements "
                          f"({result.get('unexplained', '?')} not explained by a known bug)")
            for label, n in sorted(result["per_op"].items()):
                bad = result["per_op_bad"].get(label, 0)
                tr.write_line(f"  {label:<34} {n:>7} cases  {bad:>5} disagreements")
            for text in result["examples"]:
                tr.write_line("  - " + text.replace("\n", "\n    "))
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(json.dumps(_RESULTS, indent=1))
        tr.write_line(f"report: {REPORT}")


# --- helpers ------------------------------------------------------------------------------

def draw_many(strategy: st.SearchStrategy[Any], n: float, seed: int) -> list[Any]:
    """``n`` values from ``strategy``, reproducibly (Hypothesis' generate phase only)."""
    out: list[Any] = []

    @hseed(seed)
    @settings(max_examples=max(1, int(n)), database=None, phases=[Phase.generate],
              deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


def python_schema(raw: dict[str, Any]) -> Any:
    """The Schema compatfuzz builds for a CRD version (as ``load_crds`` does)."""
    from compatfuzz.schema import Schema, normalize

    return Schema(normalize(raw, dialect="openapi-3.0"), name="generated", kubernetes=True,
                  meta={"openapi": raw})


def expand(schema: dict[str, Any], objects: list[Any], origin: str) -> list[Any]:
    server_value = oracle_mod.server_value
    return [Case(op, schema, server_value(obj), root=root, drop_invalid=drop, origin=origin)
            for obj in objects for op, root, drop in OPS
            # a request body that is not an object never reaches the schema coercer
            if op != "decode" or isinstance(obj, dict)]


def judge(name: str, oracle: Any, api: ModuleType, cases: list[Any],
          schema_objs: dict[str, Any]) -> list[str]:
    """Run ``cases`` through both sides; record figures; return the unexplained reports."""
    from compatfuzz.errors import CompatfuzzError

    oracle.schemas_batch(c.schema for c in cases)
    runnable, refused = [], Counter[str]()
    for c in cases:
        verdict = oracle.schemas[oracle_mod.schema_key(c.schema)]
        if verdict.get("error"):
            refused[verdict["error"][:60]] += 1
        else:
            runnable.append(c)
    answers = oracle.ask([c.request(oracle_mod.schema_key(c.schema)) for c in runnable])
    rejected = getattr(api, "Rejected", CompatfuzzError)

    def ours(c: Any) -> Any:
        return oracle_mod.our_verdict(c, schema_objs[oracle_mod.schema_key(c.schema)], api,
                                      rejected)

    per_op, per_op_bad = Counter[str](), Counter[str]()
    found: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for c, answer in zip(runnable, answers, strict=True):
        per_op[c.label()] += 1
        mine, theirs = ours(c), oracle_mod.upstream_verdict(answer)
        why = oracle_mod.compare(c, mine, theirs)
        if why is not None:
            per_op_bad[c.label()] += 1
            why = oracle_mod.signature(why, mine, theirs)
            found[(c.label(), why)].append(oracle_mod.Disagreement(c, mine, theirs, why))

    def still_fails(why: str, valid: bool) -> Callable[[Any], bool]:
        def check(trial: Any) -> bool:
            key, verdict = oracle.schema(trial.schema)
            if verdict.get("error"):
                return False
            if valid and (verdict.get("structural_errors") or verdict.get("defaults_pruned")):
                return False  # keep a schema the API server accepts in a CRD
            if key not in schema_objs:
                schema_objs[key] = python_schema(trial.schema)
            theirs = oracle_mod.upstream_verdict(oracle.ask([trial.request(key)])[0])
            mine = ours(trial)
            now = oracle_mod.compare(trial, mine, theirs)
            return now is not None and oracle_mod.signature(now, mine, theirs) == why
        return check

    reports, unexplained, unexplained_count = [], [], 0
    for n, ((label, why), items) in enumerate(sorted(found.items(), key=lambda kv: -len(kv[1]))):
        if n >= MAX_SHRINKS:
            first = items[0]
            sverdict = oracle.schemas[oracle_mod.schema_key(first.case.schema)]
            is_refused = bool(sverdict.get("structural_errors") or sverdict.get("defaults_pruned"))
            known = next((k for k in KNOWN if k.explains(label, why, is_refused)), None)
            reports.append(("" if known is None else f"(known: {known.name}) ")
                           + f"[{len(items)}x] {label}: {why} (not minimised: "
                           f"{first.render()})")
            if known is None:
                unexplained.append(reports[-1])
                unexplained_count += len(items)
            continue
        smallest = min(items, key=lambda d: len(oracle_mod.dumps([d.case.obj, d.case.schema])))
        sverdict = oracle.schemas[oracle_mod.schema_key(smallest.case.schema)]
        valid = not (sverdict.get("structural_errors") or sverdict.get("defaults_pruned"))
        small = oracle_mod.shrink(smallest.case, still_fails(why, valid))
        key, sverdict = oracle.schema(small.schema)
        small_d = oracle_mod.Disagreement(
            small, ours(small), oracle_mod.upstream_verdict(oracle.ask([small.request(key)])[0]),
            why, sverdict)
        text = f"[{len(items)}x] " + small_d.render()
        reports.append(text)
        is_refused = bool(sverdict.get("structural_errors") or sverdict.get("defaults_pruned"))
        known = next((k for k in KNOWN if k.explains(label, why, is_refused)), None)
        if known is None:
            unexplained.append(text)
            unexplained_count += len(items)
        else:
            reports[-1] = f"(known: {known.name}) " + text
    _RESULTS[name] = {
        "cases": len(runnable), "disagreements": sum(per_op_bad.values()),
        "unexplained": unexplained_count, "per_op": dict(per_op),
        "per_op_bad": dict(per_op_bad), "examples": reports,
        "schemas_refused_by_NewStructural": dict(refused),
    }
    return unexplained


def _fail_on(unexplained: list[str]) -> None:
    if unexplained:
        pytest.fail(f"{len(unexplained)} kinds of disagreement with upstream:\n\n"
                    + "\n\n".join(unexplained), pytrace=False)


# --- the differential ---------------------------------------------------------------------

@st.composite
def _schema_with_objects(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any], list[Any]]:
    schema = draw(cases_mod.schemas())
    valid = draw(st.lists(cases_mod.objects(schema, False), min_size=2, max_size=2))
    mutated = draw(st.lists(cases_mod.objects(schema, True), min_size=6, max_size=6))
    return schema, valid, mutated


def test_generated_schemas(oracle: Any, api: ModuleType) -> None:
    """Small structural schemas x valid and mutated objects, every op."""
    from compatfuzz.errors import CompatfuzzError
    from compatfuzz.strategies import from_schema

    drawn = draw_many(_schema_with_objects(), 450 * SCALE, seed=20260723)
    cases: list[Any] = []
    schema_objs: dict[str, Any] = {}
    for i, (raw_schema, valid, mutated) in enumerate(drawn):
        schema = oracle_mod.server_value(raw_schema)  # defaults as the server decodes them
        key = oracle_mod.schema_key(schema)
        if key not in schema_objs:
            schema_objs[key] = python_schema(schema)
        try:
            generated = draw_many(from_schema(schema_objs[key]), 3, seed=i)
        except CompatfuzzError:
            generated = []
        cases += expand(schema, generated + valid, "generated schema, valid object")
        cases += expand(schema, mutated, "generated schema, mutated object")
    _fail_on(judge("generated schemas", oracle, api, cases, schema_objs))


def test_crd_corpus(oracle: Any, api: ModuleType) -> None:
    """Every CRD version of the shared corpus x objects from ``from_schema`` and mutants."""
    from compatfuzz.schema import load_crds
    from compatfuzz.strategies import from_schema

    files = sorted(CORPUS.rglob("*.yaml")) + sorted(CORPUS.rglob("*.json"))
    if not files:
        pytest.skip(f"no CRD corpus at {CORPUS}")
    cases: list[Any] = []
    schema_objs: dict[str, Any] = {}
    for n, path in enumerate(files):
        for crd in load_crds(path):
            for version in crd.versions:
                if version.schema is None:
                    continue
                raw = version.schema.meta["openapi"]
                schema_objs[oracle_mod.schema_key(raw)] = version.schema
                origin = f"{path.name} {version.name}"
                valid = draw_many(from_schema(version.schema), 12 * SCALE, seed=n)
                mutated = draw_many(cases_mod.objects(raw, True), 8 * SCALE, seed=n)
                cases += expand(raw, valid, origin + ", from_schema")
                cases += expand(raw, mutated, origin + ", mutated")
    _fail_on(judge("CRD corpus", oracle, api, cases, schema_objs))


def _quantity_ours(a: str, b: str | None) -> dict[str, Any]:
    from compatfuzz.semantic import InvalidQuantity, parse_quantity

    def one(text: str) -> tuple[dict[str, Any], Any]:
        try:
            q = parse_quantity(text)
        except InvalidQuantity:
            return {"ok": False}, None
        return {"ok": True, "string": str(q), "canonical": q.canonical(),
                "format": q.format}, q

    mine, qa = one(a)
    out: dict[str, Any] = {"quantity": mine}
    if b is not None:
        out["other"], qb = one(b)
        if qa is not None and qb is not None:
            out["cmp"], out["equal"] = qa.cmp(qb), qa == qb
    return out


def _quantity_theirs(answer: dict[str, Any]) -> dict[str, Any]:
    def one(r: dict[str, Any]) -> dict[str, Any]:
        if not r.get("ok"):
            return {"ok": False}
        return {k: r[k] for k in ("ok", "string", "canonical", "format")}

    out = {"quantity": one(answer["quantity"])}
    if "other" in answer:
        out["other"] = one(answer["other"])
    if "cmp" in answer:
        out["cmp"], out["equal"] = answer["cmp"], answer["equal"]
    return out


def _quantity_cause(req: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """Name the cause of a Quantity disagreement, to group by."""
    if req["op"] == "quantity_json" and req["value"] is None:
        return "UnmarshalJSON(null)"
    if req["op"] == "quantity_json" and isinstance(req["value"], str) and any(
            ord(c) < 0x20 for c in req["value"]):
        return "escaped control character"
    texts = json.dumps(mine)
    if re.search(r'"[-+]?\d+e(2[1-9]|[3-9]\d|\d{3,})"', texts) and "DecimalSI" in texts:
        return "DecimalSI above E"
    diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    return f"differs in {diff}"


def test_quantity(oracle: Any) -> None:
    """ParseQuantity, String(), the canonical form, Cmp/Equal and UnmarshalJSON."""
    pytest.importorskip("compatfuzz.semantic")
    from compatfuzz.semantic import InvalidQuantity, quantity_from_json

    edge = list(cases_mod.EDGE_QUANTITIES)
    generated = draw_many(cases_mod.quantity_strings(), 2000 * SCALE, seed=7)
    singles = edge + cases_mod.systematic_quantities() + generated
    slow = [s for s in singles if not cases_mod.cheap_for_go(s)]
    singles = [s for s in singles if cases_mod.cheap_for_go(s)]
    pairs = draw_many(st.tuples(st.sampled_from(singles), st.sampled_from(singles)),
                      4000 * SCALE, seed=8)
    pairs += [("1Gi", "1024Mi"), ("1k", "1000"), ("1000m", "1"), ("1e3", "1k"),
              ("0.5", "500m"), ("1Ei", "1152921504606846976"), ("-0", "0"),
              ("1n", "0.0000000001"), ("1e1000000000", "1e999999999")]
    pairs = [(a, b) for a, b in pairs if cases_mod.cheap_pair(a, b)]
    json_values = draw_many(cases_mod.quantity_values(), 1500 * SCALE, seed=9)
    json_values += [1, 1.0, 0.1, 1e21, 1e-7, 2**63, -(2**63), 1.5, True, None, "", " 1Gi ",
                    "\u00a01", "1\u3000", "\u20281"]
    json_values = [oracle_mod.server_value(v) for v in json_values]

    requests = [{"op": "quantity", "a": a} for a in singles]
    requests += [{"op": "quantity", "a": a, "b": b} for a, b in pairs]
    requests += [{"op": "quantity_json", "value": v} for v in json_values
                 if not isinstance(v, str) or cases_mod.cheap_for_go(v.strip())]
    answers = oracle.ask(requests)
    per_op, per_op_bad = Counter[str](), Counter[str]()
    found: dict[str, list[str]] = defaultdict(list)
    for req, answer in zip(requests, answers, strict=True):
        if req["op"] == "quantity_json":
            label = "Quantity.UnmarshalJSON"
            try:
                q = quantity_from_json(req["value"])
                mine: dict[str, Any] = {"ok": True, "string": str(q), "format": q.format}
            except InvalidQuantity:
                mine = {"ok": False}
            got = answer["quantity"]
            theirs = {"ok": False}
            if got.get("ok"):
                theirs = {"ok": True, "string": got.get("string", ""),
                          "format": got.get("format", "")}
        else:
            label = "ParseQuantity+Cmp" if "b" in req else "ParseQuantity"
            mine, theirs = _quantity_ours(req["a"], req.get("b")), _quantity_theirs(answer)
        per_op[label] += 1
        if mine != theirs:
            per_op_bad[label] += 1
            shown = {k: v for k, v in req.items() if k != "op"}
            found[f"{label}: {_quantity_cause(req, mine, theirs)}"].append(
                f"{json.dumps(shown)}\n    upstream: {json.dumps(theirs)}\n"
                f"    ours:     {json.dumps(mine)}")
    reports = [f"[{len(v)}x] {k}: " + min(v, key=len) for k, v in sorted(found.items())]
    unexplained = [r for r in reports
                   if not any(k.explains("quantity", r.split(": ", 1)[-1]) for k in KNOWN)]
    _RESULTS["Quantity"] = {"cases": len(requests), "disagreements": sum(per_op_bad.values()),
                            "unexplained": sum(int(r[1:r.index("x]")]) for r in unexplained),
                            "per_op": dict(per_op), "per_op_bad": dict(per_op_bad),
                            "examples": reports, "not_run_upstream_too_slow": slow}
    _fail_on(unexplained)


@pytest.mark.parametrize("known", [
    pytest.param(k, id=k.name, marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                                      reason=k.reason))
    for k in KNOWN])
def test_known_bug_still_there(known: Known, oracle: Any, api: ModuleType) -> None:
    """Each known bug's minimal repro: fails (xfail) until compatfuzz agrees with upstream."""
    from compatfuzz.errors import CompatfuzzError

    req = known.repro
    if req["op"].startswith("quantity"):
        theirs = _quantity_theirs(oracle.ask([req])[0]) if req["op"] == "quantity" else None
        mine = _quantity_ours(req["a"], req.get("b")) if req["op"] == "quantity" else None
        if req["op"] == "quantity_json":
            from compatfuzz.semantic import InvalidQuantity, quantity_from_json

            got = oracle.ask([req])[0]["quantity"]
            theirs = {"ok": bool(got.get("ok")), "string": got.get("string", "")}
            try:
                mine = {"ok": True, "string": str(quantity_from_json(req["value"]))}
            except InvalidQuantity:
                mine = {"ok": False, "string": ""}
        assert mine == theirs
        return
    case = Case(req["op"], req["schema"], req["object"], root=req.get("root", True),
                drop_invalid=req.get("drop_invalid", False), origin="known bug")
    key, verdict = oracle.schema(case.schema)
    assert not verdict.get("error"), verdict
    theirs = oracle_mod.upstream_verdict(oracle.ask([case.request(key)])[0])
    mine = oracle_mod.our_verdict(case, python_schema(case.schema), api,
                                  getattr(api, "Rejected", CompatfuzzError))
    assert oracle_mod.compare(case, mine, theirs) is None, (mine, theirs)
