"""Conversions per second through the Go converter, beside a Python converter, and the
converter's share of a round trip's time.

    .venv/bin/python benchmarks/bench_go_converter.py [--seconds 3] [--rounds 3]
        [--json benchmarks/results/go_converter.json]

1. **Rate.** A Deployment-sized object (``benchmarks/gomod``: a kind holding a whole
   ``apps/v1`` DeploymentSpec, two containers with env, probes, resources and volumes;
   about 3 KB of JSON) converted v1 -> v2 through ``GoConverter.convert``: one
   ConversionReview each, over the pipe to the long-lived Go process, through
   controller-runtime's webhook handler (decode, ``ConvertTo``, encode) and back. The
   peer, run side by side in the same rounds: the same copy written in Python (``convert=``
   through the same ``Converter`` interface). Rounds alternate the two; medians shown.
2. **Share.** The ``roundtrip`` units of the bundled Go example (``examples/go-operator``,
   six pairs, seed 1, 100 examples) through the API-server model, timing the Go
   converter's calls against the units' wall time; beside it the shipments example
   (``examples/shipments``, three versions, Python hub-and-spoke converters) timed the
   same way.

The first run builds the two Go programs (a minute or two; it says so on stderr).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from pathlib import Path
from typing import Any

from compatfuzz.golang import go_converter
from compatfuzz.roundtrip import UnitFinished, load_config, run
from compatfuzz.roundtrip._check._converters import Converters

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GROUP = "bench.example.com"


def deployment() -> dict[str, Any]:
    """A Deployment-sized object of the benchmark kind."""
    container = {
        "name": "app", "image": "registry.example.com/team/app:1.27.3",
        "args": ["--port=8080", "--log-level=info", "--metrics"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "env": [{"name": f"SETTING_{i}", "value": f"value-{i}"} for i in range(8)]
        + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"limits": {"cpu": "500m", "memory": "512Mi"},
                      "requests": {"cpu": "250m", "memory": "256Mi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                          "initialDelaySeconds": 10, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"},
                           "periodSeconds": 5},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"},
                         {"name": "cache", "mountPath": "/var/cache/app"}],
        "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True,
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
    }
    sidecar = {"name": "proxy", "image": "registry.example.com/proxy:2.4",
               "ports": [{"containerPort": 15001}],
               "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}
    return {
        "apiVersion": f"{GROUP}/v1", "kind": "Deploy",
        "metadata": {"name": "web", "namespace": "shop",
                     "labels": {"app": "web", "tier": "frontend", "team": "shop"},
                     "annotations": {"example.com/owner": "shop-team"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "serviceAccountName": "web",
                    "containers": [container, sidecar],
                    "volumes": [{"name": "config", "configMap": {"name": "web-config"}},
                                {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}}],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"key": "dedicated", "operator": "Equal",
                                     "value": "web", "effect": "NoSchedule"}],
                },
            },
        },
    }


def _python_convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"] = desired
    return out


def _rate(convert: Any, obj: dict[str, Any], seconds: float) -> float:
    target = lambda v: f"{GROUP}/{v}"  # noqa: E731
    check = lambda out, _a, _b: out  # noqa: E731
    n, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        for _ in range(50):
            convert(obj, "v1", "v2", label="Deploy", hub="v2", target=target, check=check)
        n += 50
    return n / (time.perf_counter() - began)


def rates(seconds: float, rounds: int) -> dict[str, Any]:
    go = go_converter(HERE / "gomod", ["./api/v1", "./api/v2"], owner="bench")
    py = Converters("bench", ["v1", "v2"], convert=_python_convert)
    obj = deployment()
    out = go.convert(obj, "v1", "v2", label="Deploy", hub="v2",
                     target=lambda v: f"{GROUP}/{v}", check=lambda o, _a, _b: o)
    assert out["spec"] == obj["spec"], "the benchmark kind does not round-trip"
    got: dict[str, list[float]] = {"go": [], "python": []}
    for _ in range(rounds):
        got["go"].append(_rate(go.convert, obj, seconds))
        got["python"].append(_rate(py.convert, obj, seconds))
    go._process.close()
    size = len(json.dumps(obj, separators=(",", ":")))
    return {"object_bytes": size, "go_per_s": statistics.median(got["go"]),
            "python_per_s": statistics.median(got["python"]), "rounds": got}


def _share(config: Path, wrap: str) -> dict[str, Any]:
    (api,) = load_config(config)
    spent = [0.0]
    converter = api.converter
    inner = converter.convert

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - began

    converter.convert = timed  # type: ignore[method-assign]
    examples, began = 0, time.perf_counter()
    for event in run(api, properties=["roundtrip"], seed=1, max_examples=100,
                     database="none"):
        if isinstance(event, UnitFinished):
            examples += event.result.examples
    total = time.perf_counter() - began
    return {"converter": wrap, "examples": examples, "seconds": round(total, 2),
            "converter_seconds": round(spent[0], 2),
            "converter_share": round(spent[0] / total, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rate = rates(args.seconds, args.rounds)
    share = [_share(REPO / "examples" / "go-operator" / "compatfuzz.toml", "go"),
             _share(REPO / "examples" / "shipments" / "compatfuzz.toml", "python")]
    print(f"conversions per second, a {rate['object_bytes']}-byte Deployment-sized object "
          f"(median of {args.rounds} rounds of {args.seconds:g}s):")
    print(f"  Go converter (pipe + controller-runtime handler): {rate['go_per_s']:8.0f}/s")
    print(f"  Python converter (copy.deepcopy):                 {rate['python_per_s']:8.0f}/s")
    print("the converter's share of the roundtrip units' time (100 examples, seed 1):")
    for s in share:
        print(f"  {s['converter']:<6} {s['converter_seconds']:6.2f}s of {s['seconds']:6.2f}s "
              f"= {100 * s['converter_share']:.1f}% ({s['examples']} examples)")
    if args.json:
        args.json.write_text(json.dumps({"rate": rate, "share": share}, indent=2) + "\n")
        print(f"wrote {args.json.relative_to(REPO) if args.json.is_absolute() else args.json}")


if __name__ == "__main__":
    main()
