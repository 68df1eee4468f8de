"""Print objects generated from a schema as JSON lines (one object per line).

SCHEMA is named as in every command: FILE, FILE#NAME (one definition of a document, or
one CRD of a file), FILE@VERSION (a CRD version; default: the storage version), or
k8s:[RELEASE:]API_VERSION:KIND for a built-in kind (k8s:1.25:apps/v1:Deployment).
Protobuf: FILE.proto#pkg.Message (or a folder of .proto files, a descriptor set,
module:pkg.foo_pb2), printed in proto3 JSON; -I adds import folders.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

from compatfuzz._commands._args import SAMPLE_MAX, parse_count, parse_seed

__all__ = ["BATCH", "add_arguments", "batch_seed", "run"]

#: Examples per Hypothesis run.  One ``@given`` run keeps a record of every example it
#: generated (its choice tree, to avoid repeats, and a cache of recent examples), about
#: 100 KB per Deployment: ``-n 100000`` grew to 15 GB.  Runs of
#: ``BATCH`` examples, each with its own seed, keep memory flat.
BATCH = 250


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from compatfuzz.schema._spec import SPEC_HELP

    parser.add_argument("schema_file", metavar="SCHEMA", help=SPEC_HELP)
    parser.add_argument("--version", dest="api_version", metavar="V",
                        help="CRD version to generate, same as SCHEMA@V (default: the "
                        "storage version)")
    parser.add_argument("--definition", metavar="NAME",
                        help="definition to generate from a definitions file, same as "
                        "SCHEMA#NAME")
    parser.add_argument("--release", default=None,
                        help="Kubernetes release for built-in kinds, same as "
                        "k8s:RELEASE:... (default: 1.37)")
    parser.add_argument("-n", type=parse_count, default=10, metavar="N",
                        help=f"number of objects (default: 10; at most {SAMPLE_MAX:,})")
    parser.add_argument("--seed", type=parse_seed, default=None, metavar="S",
                        help="seed for a reproducible sample")
    parser.add_argument("--allow-ref-root", metavar="DIR", action="append", default=[],
                        help="also let a $ref read files under DIR (default: only the "
                        "schema file's folder); repeatable")
    parser.add_argument("--proto-path", "-I", metavar="DIR", action="append", default=[],
                        help="protobuf: an import folder for .proto inputs (protoc -I); "
                        "repeatable")


def batch_seed(run_seed: int, index: int) -> int:
    """The seed of batch ``index``: ``run_seed`` itself for the first (so ``-n`` up to
    ``BATCH`` prints what it always printed), derived from it after."""
    if index == 0:
        return run_seed
    import hashlib

    digest = hashlib.sha256(f"compatfuzz sample:{run_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _one(flag: str, from_flag: str | None, from_spec: str | None, spec: str) -> str | None:
    if from_flag is not None and from_spec is not None and from_flag != from_spec:
        from compatfuzz.errors import SchemaLoadError

        raise SchemaLoadError(
            f"{flag} {from_flag} contradicts {spec!r}", source=spec,
            hint=f"give it once: in the name or as {flag}",
        )
    return from_flag if from_flag is not None else from_spec


def _load(args: argparse.Namespace) -> Any:
    from compatfuzz.apiserver._admission import admit_schema
    from compatfuzz.errors import SchemaLoadError
    from compatfuzz.schema import load_kubernetes, load_schema
    from compatfuzz.schema._spec import parse_spec, spec_hint

    spec = parse_spec(args.schema_file)
    if spec.builtin:
        assert spec.api_version is not None and spec.kind is not None
        release = _one("--release", args.release, spec.release, spec.text) or "1.37"
        return load_kubernetes(spec.api_version, spec.kind, release=release)
    assert spec.path is not None
    version = _one("--version", args.api_version, spec.version, spec.text)
    definition = _one("--definition", args.definition, spec.definition, spec.text)
    from compatfuzz.errors import InvalidArgument

    try:
        schema = load_schema(spec.path, version=version, definition=definition,
                             ref_roots=args.allow_ref_root)
        admit_schema(schema)  # a CRD the API server refuses: its error, file and line
        return schema
    except SchemaLoadError as exc:
        raise spec_hint(exc, str(spec.path)) from None
    except InvalidArgument as exc:  # load_schema's Python wording: say it in CLI terms
        if "version=" not in str(exc):
            raise
        raise SchemaLoadError(
            f"a version ({version}) applies to CustomResourceDefinition files only, and this "
            "is not one", source=str(spec.path),
            hint=f"drop --version/@{version}; pick one model of a document with "
                 f"{spec.path}#NAME") from None


def _proto_strategy(args: argparse.Namespace) -> Any:
    """Messages of ``FILE#pkg.Message`` as proto3 JSON (``to_json``)."""
    from compatfuzz._commands._protoinput import protobuf, split_message
    from compatfuzz.errors import SchemaLoadError

    proto = protobuf(args.schema_file)
    source, message = split_message(args.schema_file)
    schema = proto.load_protos(source, include=args.proto_path)
    names = sorted(schema.message_names(roots_only=True))
    example = f"{source}#{names[0] if names else 'pkg.Message'}"
    if message is None:
        if len(names) != 1:
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise SchemaLoadError(
                f"which message? it defines {len(names)}: {shown}", source=source,
                hint=f"name one: compatfuzz sample '{example}'")
        message = names[0]
    try:
        schema.message(message)
    except Exception as exc:  # an unknown name: the loader's message has the did-you-mean
        raise SchemaLoadError(str(exc), source=source,
                              hint=f"name a message as pkg.Message, e.g. '{example}'") from None
    return proto.from_message(message, schema=schema).map(proto.to_json)


def run(args: argparse.Namespace) -> int:
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

    from compatfuzz._commands._pipe import reader_gone
    from compatfuzz._commands._protoinput import is_protobuf
    from compatfuzz.schema._limits import check_generation_limits
    from compatfuzz.strategies._api import sampling_strategy
    from compatfuzz.strategies._cel import CostRefusal, check_rules

    plan = None
    if is_protobuf(args.schema_file):
        strategy = _proto_strategy(args)
    else:
        schema = _load(args)
        check_generation_limits(schema)  # minItems: 1e6 fails now, with the path
        try:
            check_rules(schema)  # CEL the API server refuses: a syntax error, cost
        except CostRefusal as exc:
            # an estimate, and generation does not need it: say so and go on
            print(f"compatfuzz sample: warning: {exc}\n  (objects are generated all the "
                  "same; fuzz and diff refuse this CRD)", file=sys.stderr)
        strategy, plan = sampling_strategy(schema)
    written: list[int] = []
    want = {"n": 0}

    class _Stop(Exception):
        """The reader of stdout has gone: no more samples."""

    def batch(size: int, index: int) -> Any:
        @settings(max_examples=size, database=None, deadline=None,
                  phases=[Phase.generate], verbosity=Verbosity.quiet,
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def emit(value: Any) -> None:
            if reader_gone():
                raise _Stop
            if len(written) < want["n"]:
                sys.stdout.write(json.dumps(value, ensure_ascii=False, sort_keys=False)
                                 + "\n")
                written.append(1)

        if args.seed is not None:
            return seed(batch_seed(args.seed, index))(emit)
        return emit
    from hypothesis.errors import Unsatisfiable

    from compatfuzz.errors import SchemaLoadError

    # Raised as SchemaLoadError, the CLI prints them like every input error (exit 2).
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        try:
            index = 0
            while len(written) < args.n:
                size = min(BATCH, args.n - len(written))
                want["n"] = len(written) + size
                before = len(written)
                batch(size, index)()
                index += 1
                if len(written) - before < size:
                    break  # Hypothesis ran out of distinct values, as one run would

        except _Stop:
            return 0
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
    if plan is not None:
        _report_filtered(plan.cel_filtered())
    return 0


def _report_filtered(stats: dict[str, Any]) -> None:
    """Say which CEL rules were met by filtering, not by construction, and how often
    drawn values passed them: a low share is where an override helps."""
    if not stats:
        return
    print(f"compatfuzz sample: CEL rules enforced by filtering at {len(stats)} "
          f"node{'s' if len(stats) > 1 else ''} (not recognised for construction):",
          file=sys.stderr)
    for where, stat in sorted(stats.items()):
        share = f"{stat.passes} of {stat.checks} drawn values passed" if stat.checks else (
            "never drawn")
        for rule in stat.rules:
            shown = rule if len(rule) <= 100 else rule[:97] + "..."
            print(f"  {where}: {shown}  ({share})", file=sys.stderr)
