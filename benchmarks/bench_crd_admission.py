"""What the API server's CRD validation adds to loading a CRD, and that the corpus passes it.

Every way in (``sample``, ``init``, ``fuzz``, ``diff``, the pytest plugin) loads a CRD and
then admits it (``compatfuzz.apiserver._admission``: ``validate_crd``, a port of
``ValidateCustomResourceDefinition``). Side by side in one process, so that only ratios
are compared on a shared machine:

* **load**: ``load_crds(path)`` (read, parse, normalise every version), the peer;
* **admit**: ``validate_crd`` of the same CRDs (the cost of the door);

per file, ``--repeat`` pairs of runs (a load, then an admission, interleaved so that a
machine slowing down slows both), the median CPU time of each and the median of the
pairs' ratios (load + admit) / load.
With ``--all`` every CRD file of the corpus is admitted once and each refusal is printed
(the API server accepts every one of them, so the expected count is 0).

Run: ``python benchmarks/bench_crd_admission.py [--corpus ../shared/corpus] [--all]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _repo import SHARED, rel

from compatfuzz.apiserver import validate_crd
from compatfuzz.schema import load_crds
from compatfuzz.schema._read import read_documents


def _cpu(fn: object) -> float:
    start = time.process_time()
    fn()  # type: ignore[operator]
    return time.process_time() - start


def _files(corpus: Path) -> list[Path]:
    return sorted([*corpus.glob("crds/*/*.yaml"), *corpus.glob("crds-cel/*/*.yaml"),
                   *corpus.glob("crd-releases/*/*/*.yaml")])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--biggest", type=int, default=3,
                        help="time the N biggest corpus files (default 3)")
    parser.add_argument("--all", action="store_true",
                        help="also admit every corpus CRD once and count refusals")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    files = _files(args.corpus)
    if not files:
        print(f"no CRD files under {args.corpus}", file=sys.stderr)
        return 2
    warnings.simplefilter("ignore")
    rows = []
    for path in sorted(files, key=lambda p: p.stat().st_size)[-args.biggest:]:
        crds = load_crds(path)
        docs = [c.document for c in crds]
        for d in docs:  # once untimed: the first call fills per-process caches
            if d:
                validate_crd(d)
        loads, admits = [], []
        for _ in range(args.repeat):  # interleaved: a machine that slows down slows both
            loads.append(_cpu(lambda p=path: load_crds(p)))
            admits.append(_cpu(lambda ds=docs: [validate_crd(d) for d in ds if d]))
        ratios = sorted((lo + ad) / lo for lo, ad in zip(loads, admits, strict=True))
        load, admit = statistics.median(loads), statistics.median(admits)
        rows.append({"file": rel(path), "bytes": path.stat().st_size,
                     "load_cpu_s": round(load, 4), "admit_cpu_s": round(admit, 4),
                     "ratio": round(statistics.median(ratios), 3),
                     "ratio_range": [round(ratios[0], 3), round(ratios[-1], 3)]})
        print(f"{rel(path)}: {path.stat().st_size:,} bytes, load {load:.3f} s, "
              f"admit {admit:.3f} s CPU: (load + admit) / load = {rows[-1]['ratio']:.2f} "
              f"(median of {args.repeat} interleaved pairs; {ratios[0]:.2f}-{ratios[-1]:.2f})")
    figures: dict[str, object] = {"timed": rows}
    if args.all:
        refused, total = [], 0
        for path in files:
            for doc in read_documents(path):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    total += 1
                    errors = [p for p in validate_crd(doc) if not p.warning]
                    if errors:
                        refused.append(f"{rel(path)}: {errors[0].message}")
        print(f"corpus: {total} CRDs in {len(files)} files, {len(refused)} refused")
        for line in refused:
            print("  " + line)
        figures["corpus"] = {"files": len(files), "crds": total, "refused": refused}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
