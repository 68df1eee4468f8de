"""Differential test: ``compatfuzz.apiserver.validate_crd`` against the API server's own code.

Every case is a CRD (``apiextensions.k8s.io/v1``) sent through ``validate_crd`` and
through the oracle compiled from apiextensions-apiserver v0.37.2
(``conformance/crdvalidation/main.go``: decode, v1 defaults, conversion to internal, the
registry strategy's ``PrepareForCreate``, ``Validate`` and ``WarningsOnCreate``, built by
``conformance/build.py --oracle crdvalidation`` into ``~/.cache/compatfuzz``). Cases are
every CRD of the corpus as it is, and Hypothesis-drawn (fixed seed) mutations of corpus
CRDs and of generated CRDs, one class of refusal per mutation (``_crd_mutations``, issue
30). Per class the test counts accept/refuse disagreements and whether the first error names
the same field (the server walks a schema's properties in Go map order, which is random:
"same field" means each side's first error is among the other side's errors).

Everything is compared, CEL included: compile (type-check) errors come from
``compatfuzz.strategies._cel_check`` and estimated costs from ``_cel_cost_crd``; the
figures count the refusals of each kind.

Skips cleanly, naming what is missing, without Go (>= 1.26) or the Go module proxy (or a
module cache holding the pinned modules); without the corpus only generated CRDs are used.
Run: ``.venv/bin/python -m pytest conformance/test_crdvalidation_conformance.py
-p no:cacheprovider -rP``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path) -> ModuleType:
    full = f"_compatfuzz_conformance_{name}"
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.spec_from_file_location(full, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


builder = _load("build", HERE / "build.py")
mutations = _load("crd_mutations", HERE / "_crd_mutations.py")

# ../shared/corpus beside the checkout; COMPATFUZZ_CRD_CORPUS names its crds/ folder (as
# for the other suites) and the whole corpus (crds, crds-cel, crd-releases) is its parent.
_CRDS = Path(os.environ.get("COMPATFUZZ_CRD_CORPUS",
                            HERE.parent.parent / "shared" / "corpus" / "crds"))
CORPUS = _CRDS.parent if _CRDS.name == "crds" else _CRDS
REPORT = Path(os.environ.get("COMPATFUZZ_CONFORMANCE_REPORT",
                             Path(tempfile.gettempdir()) / "compatfuzz-conformance"
                             / "crdvalidation.json"))
SCALE = float(os.environ.get("COMPATFUZZ_CONFORMANCE_SCALE", "1"))
CASES = int(3000 * SCALE)
SEED = 30  # issue 30

_COST = ("estimated rule cost", "contributed to estimated rule cost total",
         "x-kubernetes-validations estimated rule cost total")


def _corpus() -> list[tuple[str, dict[str, Any]]]:
    import yaml

    out: list[tuple[str, dict[str, Any]]] = []
    if not CORPUS.is_dir():
        return out
    for path in sorted(CORPUS.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                out.append((str(path.relative_to(CORPUS)), doc))
    return out


@pytest.fixture(scope="module")
def oracle() -> Path:
    try:
        return builder.build(sources=HERE / "crdvalidation", name="crdvalidation-oracle")
    except builder.MissingPrerequisite as exc:
        pytest.skip(f"oracle prerequisites missing: {exc}")
    except builder.BuildError as exc:
        pytest.fail(str(exc), pytrace=False)


def ask(binary: Path, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The oracle's answers, one per document, in order."""
    done = subprocess.run([str(binary)], input="".join(json.dumps(d) + "\n" for d in docs),
                          capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(docs), done.stderr[-2000:]
    return answers


def _cost(errors: list[dict[str, Any]]) -> bool:
    return bool(errors) and all(any(c in e["detail"] for c in _COST) for e in errors)


def _compile_error(e: dict[str, Any]) -> bool:
    """A CEL compile (type-check) error: the verdict of ``strategies._cel_check``."""
    return "compilation failed" in e["detail"] or "must evaluate to a" in e["detail"]


def compare(label: str, doc: dict[str, Any], answer: dict[str, Any], *,
            figures: dict[str, Counter[str]], reports: list[str]) -> None:
    """Judge one case into ``figures[label]``; a disagreement goes to ``reports``."""
    from compatfuzz.apiserver import validate_crd

    problems = validate_crd(doc)
    mine = [p for p in problems if not p.warning]
    theirs = list(answer["errors"])
    # the oracle prefixes the strict decoder's texts; the server sends them as they are
    their_warnings = sorted(w.removeprefix("unknown field: ") for w in answer["warnings"])
    same_warnings = sorted(p.message for p in problems if p.warning) == their_warnings
    if answer.get("decode"):
        theirs = [{"field": "", "detail": answer["decode"], "message": answer["decode"]}]
    f = figures[label]
    f["cases"] += 1
    f["same warnings"] += same_warnings
    f["CEL compile errors"] += any(_compile_error(e) for e in theirs)
    f["CEL cost errors"] += _cost(theirs)
    f["refused by the server"] += bool(theirs)
    if bool(mine) != bool(theirs):
        f["accept/refuse disagreements"] += 1
        reports.append(f"{label}: compatfuzz {'refuses' if mine else 'accepts'}, the server "
                       f"{'refuses' if theirs else 'accepts'}\n  compatfuzz: "
                       f"{[p.message[:300] for p in mine[:3]]}\n  server: "
                       f"{[e['message'][:300] for e in theirs[:3]]}")
        return
    if not mine:
        return
    mine_fields = {p.field for p in mine}
    their_fields = {e["field"] for e in theirs}
    if mine[0].field == theirs[0]["field"]:
        f["first error: same field"] += 1
    elif mine[0].field in their_fields and theirs[0]["field"] in mine_fields:
        f["first error: same field (Go map order)"] += 1
    else:
        f["first error: other field"] += 1
        reports.append(f"{label}: first error differs\n  compatfuzz: {mine[0].message[:300]}"
                       f"\n  server: {theirs[0]['message'][:300]}")
    f["same set of fields"] += mine_fields == their_fields
    f["first message identical"] += any(p.message == theirs[0]["message"] for p in mine)


def _draw_cases(corpus: list[tuple[str, dict[str, Any]]], n: int
                ) -> list[tuple[str, str, dict[str, Any]]]:
    """``n`` mutated CRDs: (mutation class, base CRD, document), drawn with a fixed seed."""
    names = sorted(mutations.MUTATIONS)
    out: list[tuple[str, str, dict[str, Any]]] = []
    base = st.one_of(st.integers(0, 10**6).map(lambda s: (f"generated:{s}",
                                                          mutations.synthetic_crd(s))),
                     *([st.sampled_from(corpus)] if corpus else []))

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @hseed(SEED)
    @given(base, st.sampled_from(names), st.randoms(use_true_random=False))
    def collect(source: tuple[str, dict[str, Any]], name: str, rnd: random.Random) -> None:
        doc = mutations.MUTATIONS[name](source[1], rnd)
        if doc is not None:
            out.append((name, source[0], doc))

    while len(out) < n:
        before = len(out)
        collect()
        if len(out) == before:  # pragma: no cover - nothing applies
            break
    return out[:n]


def test_crd_validation_agrees_with_the_api_server(oracle: Path) -> None:
    corpus = _corpus()
    cases: list[tuple[str, str, dict[str, Any]]] = [("corpus (unchanged)", name, doc)
                                                     for name, doc in corpus]
    cases += _draw_cases(corpus, CASES)
    answers = ask(oracle, [doc for _, _, doc in cases])
    figures: dict[str, Counter[str]] = defaultdict(Counter)
    reports: list[str] = []
    failed: list[dict[str, Any]] = []
    for (label, source, doc), answer in zip(cases, answers, strict=True):
        assert not answer.get("panic"), answer["panic"]
        before = len(reports)
        compare(label, doc, answer, figures=figures, reports=reports)
        if len(reports) > before:
            reports[-1] = f"[{source}] {reports[-1]}"
            failed.append({"class": label, "source": source, "crd": doc, "server": answer})
    total: Counter[str] = Counter()
    for f in figures.values():
        total.update(f)
    summary = {"cases": len(cases), "seed": SEED,
               "total": dict(total), "per class": {k: dict(v) for k, v in
                                                   sorted(figures.items())}}
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(summary, indent=1))
    # the disagreeing CRDs, one JSON line each, to replay with the oracle
    REPORT.with_suffix(".disagreements.jsonl").write_text(
        "".join(json.dumps(f) + "\n" for f in failed))
    print(json.dumps(summary, indent=1))
    refused = total["refused by the server"]
    same = total["first error: same field"] + total["first error: same field (Go map order)"]
    print(f"{len(cases)} cases ({len(corpus)} corpus CRDs + {len(cases) - len(corpus)} "
          f"mutated), {refused} refused by the server\n"
          f"accept/refuse disagreements: {total['accept/refuse disagreements']}\n"
          f"first error on the same field: {same} of {refused} "
          f"({total['first error: same field (Go map order)']} of them in Go map order)\n"
          f"same set of error fields: {total['same set of fields']}; first message word "
          f"for word: {total['first message identical']}\n"
          f"same warnings: {total['same warnings']} of {len(cases)}\n"
          f"refused for CEL compile errors: {total['CEL compile errors']}; for CEL cost "
          f"only: {total['CEL cost errors']}")
    assert not reports, f"{len(reports)} disagreements:\n" + "\n".join(reports[:40])
