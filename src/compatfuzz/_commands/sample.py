"""Print objects generated from a schema as JSON lines (one object per line).

For a CRD file pick the version with --version (default: the storage version); for a
definitions file (OpenAPI, Swagger, JSON Schema $defs) pick one with --definition.
A built-in Kubernetes kind can be named instead of a file: k8s:apps/v1/Deployment.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "schema_file", metavar="SCHEMA_FILE",
        help="CRD YAML, OpenAPI/Swagger/JSON Schema file, or k8s:GROUP/VERSION/KIND",
    )
    parser.add_argument("--version", dest="api_version", metavar="V",
                        help="CRD version to generate (default: the storage version)")
    parser.add_argument("--definition", metavar="NAME",
                        help="definition to generate from a definitions file")
    parser.add_argument("--release", default="1.37",
                        help="Kubernetes release for k8s: kinds (default: 1.37)")
    parser.add_argument("-n", type=int, default=10, metavar="N",
                        help="number of objects (default: 10)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="seed for a reproducible sample")
    parser.add_argument("--allow-ref-root", metavar="DIR", action="append", default=[],
                        help="also let a $ref read files under DIR (default: only the "
                        "schema file's folder); repeatable")


def _load(args: argparse.Namespace) -> Any:
    from compatfuzz.schema import load_kubernetes, load_schema

    source: str = args.schema_file
    if source.startswith("k8s:"):
        group_version, _, kind = source[4:].rpartition("/")
        return load_kubernetes(group_version, kind, release=args.release)
    return load_schema(source, version=args.api_version, definition=args.definition,
                       ref_roots=args.allow_ref_root)


def run(args: argparse.Namespace) -> int:
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

    from compatfuzz.strategies import from_schema

    if args.n < 1:
        print("compatfuzz sample: error: -n must be at least 1", file=sys.stderr)
        return 2
    from compatfuzz.schema._limits import check_generation_limits

    schema = _load(args)
    check_generation_limits(schema)  # minItems: 1e6 fails now, with the path
    strategy = from_schema(schema)
    written: list[int] = []

    @settings(max_examples=args.n, database=None, deadline=None, phases=[Phase.generate],
              verbosity=Verbosity.quiet,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def emit(value: Any) -> None:
        if len(written) < args.n:
            sys.stdout.write(json.dumps(value, ensure_ascii=False, sort_keys=False) + "\n")
            written.append(1)

    if args.seed is not None:
        emit = seed(args.seed)(emit)
    from hypothesis.errors import Unsatisfiable

    from compatfuzz.errors import SchemaLoadError

    # Raised as SchemaLoadError, the CLI prints them like every input error (exit 2).
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        try:
            emit()
        except Unsatisfiable:
            raise SchemaLoadError(
                "no value satisfies the schema (every draw was rejected)",
                source=args.schema_file,
                hint="check that its constraints can hold together: pattern and lengths, "
                     "not/oneOf branches, x-kubernetes-validations rules",
            ) from None
        except RecursionError:
            raise SchemaLoadError(
                "the schema recurses without bound", source=args.schema_file,
                hint="give recursive $refs a base case (an optional field or an empty array)",
            ) from None
    sys.stdout.flush()
    return 0
