"""Real data: two Envoy API snapshots (1.34 -> 1.35), when a data-plane-api mirror exists.

Skips cleanly without it (set ``ENVOY_API_GIT`` to a bare clone of envoyproxy/data-plane-api;
see benchmarks/bench_protobuf_envoy.py). Needs prometheus/client_model too
(``PROMETHEUS_GIT``), for envoy.service.metrics' import.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from compatfuzz.compat import Status
from compatfuzz.protobuf import diff_protos, load_protos

GIT = Path(os.environ.get("ENVOY_API_GIT", "/work/.mirror/envoyproxy+data-plane-api/repo"))
PROM = Path(os.environ.get("PROMETHEUS_GIT", "/work/.mirror/prometheus+client_model/repo"))
pytestmark = [
    pytest.mark.skipif(not (GIT.is_dir() and PROM.is_dir()),
                       reason="no Envoy API / prometheus mirror (ENVOY_API_GIT)"),
    pytest.mark.slow,  # ~10-25 s: two ~570-file compiles and the witness search
]


def _extract(git: Path, rev: str, paths: list[str], dest: Path) -> None:
    dest.mkdir(parents=True)
    data = subprocess.run(["git", f"--git-dir={git}", "archive", rev, *paths],
                          check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=data, check=True)


def test_envoy_1_34_to_1_35(tmp_path: Path) -> None:
    _extract(PROM, "HEAD", ["io"], tmp_path / "deps")
    schemas = []
    for rev in ("d9c5e84658eef279e9a021ff0517f8f8ee35d79a",
                "471e4526a658a33e840caa5971ff1d568906fd84"):
        root = tmp_path / rev[:8]
        _extract(GIT, rev, ["envoy"], root)
        schemas.append(load_protos(root / "envoy", include=[root, tmp_path / "deps"]))
    report = diff_protos(*schemas, budget=30)
    gone = {f.path: f for f in report.by_rule("proto-message-removed")}
    assert gone["envoy.config.grpc_credential.v3.AwsIamConfig"].status is Status.CONFIRMED
    (maxmind,) = report.by_rule("proto-field-renumbered")
    assert maxmind.path.endswith("MaxMindConfig.isp_db_path") and maxmind.ignored
    assert "work in progress" in maxmind.ignore_reason
    assert [f.path for f in report.breaking] == ["envoy.config.grpc_credential.v3.AwsIamConfig"]
