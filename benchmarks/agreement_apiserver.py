"""compatfuzz's API-server model vs a real kube-apiserver, on every CRD of the corpus
(issue 18, "Must show").

    .venv/bin/python benchmarks/agreement_apiserver.py [--examples 20] [--triples 2]
        [--only NAME] [--json benchmarks/results/agreement_apiserver.json]
    .venv/bin/python benchmarks/agreement_apiserver.py --compare BEFORE.json AFTER.json

What ``compatfuzz fuzz --apiserver both`` does, in one process and on one control plane:
each example goes through the model (``compatfuzz.apiserver.APIServer``) and through
kube-apiserver + etcd step by step (``served(BothBackend(real), unit, obj)``, of
``compatfuzz.roundtrip._check``), and the first step where the two answer differently is a
*disagreement* (``compatfuzz.errors.Disagreement``). An object the server refuses on create
(``InternalError``) is one too: the generator drew what the server does not take.

The APIs: every CRD file of ``../shared/corpus/crds/`` and the newest tagged release of
each series in ``../shared/corpus/crd-releases/`` (skipped when ``../shared`` is absent),
each converted as a cluster converts a CRD without a webhook, by setting ``apiVersion``
only (the ``None`` strategy, ``k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/
nop_converter.go``); then the project's own multi-version CRDs with their real
converters (``tests/roundtrip/gadgets.py``, ``examples/frobber``). Units: ``roundtrip``
and ``valid`` for every ordered pair of versions (a kind of one version: that version
with itself), ``path_independent`` for up to
``--triples`` triples of a kind with three versions or more. The objects are drawn with
``derandomize=True``: every run checks the same ones.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._real._process import ControlPlane, Endpoint
from compatfuzz.errors import CompatfuzzError, CompatfuzzWarning, Disagreement, InternalError
from compatfuzz.roundtrip import API, Kind, Property, Unit
from compatfuzz.roundtrip._check._both import BothBackend
from compatfuzz.roundtrip._check._config import load_config
from compatfuzz.roundtrip._check._properties import served
from compatfuzz.roundtrip._check._real import RealBackend

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _repo import SHARED, rel  # noqa: E402
from bench_apiserver import draw, set_api_version  # noqa: E402

CORPUS = SHARED / "corpus"
FROBBER = ROOT / "examples" / "frobber" / "compatfuzz.toml"
GADGETS = ROOT / "tests" / "roundtrip"
PAIR_PROPERTIES = (Property.ROUNDTRIP, Property.VALID)


# -- the CRDs ---------------------------------------------------------------------------


def _tag_key(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.stem))


def corpus_files(corpus: Path = CORPUS) -> list[Path]:
    """Every CRD of ``crds/`` and the newest tagged release (``vX.Y.Z``) of each series
    of ``crd-releases/``; none when the corpus is not there."""
    out = sorted((corpus / "crds").glob("*/*.yaml"))
    for series in sorted((corpus / "crd-releases").glob("*/*")):
        tags = [p for p in series.glob("v*.yaml") if re.fullmatch(r"v[\d.]+", p.stem)]
        if tags:
            out.append(max(tags, key=_tag_key))
    return out


def corpus_api(path: Path) -> API:
    """``path``'s kinds as one API, converted by the ``None`` strategy."""
    name = path.parent.name if "crd-releases" in path.parts else path.stem
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompatfuzzWarning)
        return API.from_crd(re.sub(r"[^A-Za-z0-9_.-]", "-", name), path,
                            convert=set_api_version)


def own_apis() -> Iterator[tuple[str, Callable[[], API]]]:
    """The project's own multi-version CRDs with their real converters."""
    def gadgets() -> API:
        sys.path.insert(0, str(ROOT))
        from tests.roundtrip import gadgets as g

        return g.api()

    def frobber() -> API:
        api = load_config(FROBBER)[0]
        assert isinstance(api, API), f"{rel(FROBBER)}: its first [[api]] is not a CRD API"
        return api

    yield "tests/roundtrip/data/gadgets.yaml (tests/roundtrip/gadgets.py)", gadgets
    yield f"{rel(FROBBER)}", frobber


def units_of(api: API, kind: Kind, triples: int) -> list[Unit]:
    """roundtrip and valid on every ordered pair, path_independent on up to ``triples``
    triples (the first ones in version order, then through the storage version)."""
    vs = list(kind.versions)
    # one version: the same steps in it (create, get, update unchanged, get; re-create)
    out = [Unit(api.name, kind.name, prop, (a, b))
           for a in vs for b in vs if a != b or len(vs) == 1 for prop in PAIR_PROPERTIES]
    if len(vs) >= 3 and triples > 0:
        storage = api.server(kind).storage
        others = [v for v in vs if v != storage]
        picked: list[tuple[str, ...]] = []
        for a in others:
            for b in others:
                if a != b and len(picked) < triples:
                    picked.append((a, b, storage))
        if len(picked) < triples:
            picked.append((storage, others[0], others[1]))
        out += [Unit(api.name, kind.name, Property.PATH_INDEPENDENT, t)
                for t in picked[:triples]]
    return out


# -- the checks -------------------------------------------------------------------------


@dataclass
class Result:
    """One API's figures, and the first example of each kind of disagreement."""

    name: str
    source: str
    versions: dict[str, list[str]] = field(default_factory=dict)
    units: int = 0
    examples: int = 0
    disagreements: int = 0
    refused_on_create: int = 0
    failures: int = 0  # both agree the property fails: the converter's (or the CRD's)
    errors: int = 0
    seconds: float = 0.0
    skipped: str | None = None
    found: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self, sig: str, unit: Unit, obj: Any, exc: BaseException) -> None:
        entry = self.found.setdefault(sig, {"count": 0, "unit": unit.id,
                                            "error_type": type(exc).__name__,
                                            "message": str(exc)[:3000],
                                            "example": obj})
        entry["count"] += 1
        step = getattr(exc, "step", None)
        if step is not None:
            entry["step"] = step


def signature(exc: BaseException, unit: Unit) -> str:
    """What tells two disagreements apart: the error type, the property, the step, and
    the field paths and reasons the message names (without the values)."""
    text = str(exc)
    paths = sorted(set(re.findall(r"(?:spec|status|metadata)(?:\.[\w\-/\[\]]+)+", text)))
    paths = [re.sub(r"\[\d+\]", "[]", p) for p in paths][:4]
    reasons = sorted(set(re.findall(
        r"Invalid value|Unsupported value|Required value|Duplicate value|Too long|Too many|"
        r"must be|should be|Forbidden|[a-z ]+ differ|added|removed|changed", text)))[:4]
    step = getattr(exc, "step", "") or ""
    step = re.sub(r"v\d+\w*", "V", step)
    return " | ".join([type(exc).__name__, unit.property.value, step, ",".join(paths),
                       ",".join(reasons)])


def check_api(api: API, endpoint: Endpoint, result: Result, *, examples: int,
              triples: int, log: Callable[[str], None] = print) -> Result:
    """Run every unit of ``api`` through model and server (``both``) and count."""
    began = time.perf_counter()
    backend = RealBackend(api, endpoint)
    try:
        for kind in api.kinds:
            result.versions[kind.name] = list(kind.versions)
            drawn = {v: draw(api, kind, v, examples) for v in kind.versions}
            for unit in units_of(api, kind, triples):
                result.units += 1
                for obj in drawn[unit.versions[0]]:
                    result.examples += 1
                    try:
                        served(BothBackend(backend), unit, copy.deepcopy(obj))
                    except Disagreement as exc:
                        result.disagreements += 1
                        result.record(signature(exc, unit), unit, obj, exc)
                    except InternalError as exc:
                        result.refused_on_create += 1
                        result.record(signature(exc, unit), unit, obj, exc)
                    except CompatfuzzError as exc:
                        if getattr(exc, "setup_error", False):
                            raise
                        result.failures += 1
                        result.record(signature(exc, unit), unit, obj, exc)
    finally:
        backend.close()
        result.seconds = time.perf_counter() - began
    log(f"{result.name}: {result.units} units, {result.examples} examples, "
        f"{result.disagreements} disagreements, {result.refused_on_create} refused on "
        f"create, {result.failures} agreed failures ({result.seconds:.0f} s)")
    return result


def run(endpoint: Endpoint, *, examples: int, triples: int, only: str | None = None,
        corpus: Path = CORPUS, log: Callable[[str], None] = print) -> list[Result]:
    """Every API: the corpus (when there) and the project's own."""
    todo: list[tuple[str, str, Callable[[], API]]] = []
    if not corpus.is_dir():
        log(f"skipped the corpus: {rel(corpus)} is not there")
    for path in corpus_files(corpus):
        todo.append((path.relative_to(corpus).as_posix(), rel(path),
                     lambda p=path: corpus_api(p)))
    for name, make in own_apis():
        todo.append((name, name.split(" ")[0], make))
    results = []
    for name, source, make in todo:
        if only is not None and only not in name:
            continue
        result = Result(name, source)
        try:
            api = make()
        except CompatfuzzError as exc:
            result.skipped = f"{type(exc).__name__}: {str(exc)[:300]}"
            log(f"{name}: skipped ({result.skipped})")
            results.append(result)
            continue
        try:
            check_api(api, endpoint, result, examples=examples, triples=triples, log=log)
        except CompatfuzzError as exc:  # a CRD the server refuses, a server gone
            result.skipped = f"{type(exc).__name__}: {str(exc)[:300]}"
            log(f"{name}: stopped ({result.skipped})")
        results.append(result)
    return results


def table(results: Iterable[Result]) -> str:
    rows = ["| CRD | versions | units | examples | disagreements | refused on create | "
            "agreed failures |", "|---|---|---:|---:|---:|---:|---:|"]
    total = [0, 0, 0, 0, 0]
    for r in results:
        versions = "; ".join(f"{k}: {', '.join(v)}" for k, v in r.versions.items())
        if r.skipped:
            rows.append(f"| {r.name} | {versions} | skipped: {r.skipped[:80]} | | | | |")
            continue
        figures = [r.units, r.examples, r.disagreements, r.refused_on_create, r.failures]
        total = [t + f for t, f in zip(total, figures, strict=True)]
        rows.append(f"| {r.name} | {versions} | " + " | ".join(map(str, figures)) + " |")
    rows.append("| **total** | | " + " | ".join(f"**{t}**" for t in total) + " |")
    return "\n".join(rows)


def slim(result: dict[str, Any]) -> dict[str, Any]:
    """A result as recorded: the example only of a disagreement (or a refusal on
    create) and only when small, the message of an agreed failure shortened (the JSON
    stays small; the run is derandomized, so it draws the same examples again)."""
    found = {}
    for sig, entry in result["found"].items():
        if entry["error_type"] in ("Disagreement", "InternalError"):
            found[sig] = {**entry, "message": entry["message"][:1000]}
            size = len(json.dumps(entry.get("example"), default=str))
            if size > 4000:  # a ClusterClass draws 100 KB: the run reproduces it
                found[sig]["example"] = f"<{size} characters, not kept>"
        else:
            found[sig] = {k: v for k, v in entry.items() if k != "example"}
            found[sig]["message"] = entry["message"][:300]
    return {**result, "found": found}


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The table of two runs' JSON (the same CRDs and examples): disagreements (and
    refusals on create) before and after."""
    old = {r["name"]: r for r in before["results"]}
    rows = ["| CRD | versions | units | examples | disagreements before | after |",
            "|---|---|---:|---:|---:|---:|"]
    totals = [0, 0, 0, 0]
    for r in after["results"]:
        b = old.get(r["name"], {})
        versions = "; ".join(f"{k}: {', '.join(v)}" for k, v in r["versions"].items())
        figures = [r["units"], r["examples"],
                   b.get("disagreements", 0) + b.get("refused_on_create", 0),
                   r["disagreements"] + r["refused_on_create"]]
        totals = [t + f for t, f in zip(totals, figures, strict=True)]
        rows.append(f"| {r['name']} | {versions} | " + " | ".join(map(str, figures)) + " |")
    rows.append("| **total** | | " + " | ".join(f"**{t}**" for t in totals) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20,
                        help="objects drawn per (kind, version); each unit checks those "
                             "of its first version")
    parser.add_argument("--triples", type=int, default=2,
                        help="path_independent triples per kind of 3+ versions")
    parser.add_argument("--only", help="only the APIs whose name contains this")
    parser.add_argument("--json", type=Path,
                        default=HERE / "results" / "agreement_apiserver.json")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="print the before/after table of two runs' JSON and exit")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        print(compare(before, after))
        return 0

    from bench_apiserver import get_assets

    assets = get_assets()
    plane = ControlPlane(assets)
    began = time.perf_counter()
    endpoint = plane.start()
    try:
        results = run(endpoint, examples=args.examples, triples=args.triples,
                      only=args.only)
    finally:
        plane.stop()
    seconds = time.perf_counter() - began
    print()
    print(table(results))
    print(f"\n{sum(r.examples for r in results)} examples in {seconds:.0f} s")
    for r in results:
        for sig, entry in r.found.items():
            if entry["error_type"] in ("Disagreement", "InternalError"):
                print(f"\n{r.name}: {entry['count']}x {sig}\n  {entry['unit']}: "
                      f"{entry['message'][:600]}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "command": "benchmarks/agreement_apiserver.py " + " ".join(
            a if not a.startswith("/") else rel(a) for a in (argv or sys.argv[1:])),
        "examples_per_version": args.examples, "triples": args.triples,
        "seconds": round(seconds, 1),
        "results": [slim({**r.__dict__, "seconds": round(r.seconds, 1)}) for r in results],
    }, indent=1, default=str) + "\n")
    print(f"\nwrote {rel(args.json)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
