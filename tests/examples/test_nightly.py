"""examples/nightly (issue 21, item 5): the GitHub Actions matrix and the Kubernetes Indexed
Job, checked as far as this machine allows.

* the workflow against SchemaStore's GitHub workflow schema, as ``check-jsonschema``
  vendors it (no fetch at test time), and against what the job must do;
* every manifest by a server-side dry run (``dryRun=All``, strict field validation) on a
  real kube-apiserver (the session's control plane from ``tests/conftest.py``; skipped
  without binaries, outside CI);
* the Job's command run as its pods would: N local processes with
  ``JOB_COMPLETION_INDEX`` set and a real ``redis-server`` on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.apiserver._real._process import Endpoint

REPO = Path(__file__).resolve().parents[2]
NIGHTLY = REPO / "examples" / "nightly"
WORKFLOW = NIGHTLY / "github-actions.yml"
MANIFESTS = [NIGHTLY / "kubernetes.yaml", NIGHTLY / "kubernetes-merge.yaml"]
CHECK_JSONSCHEMA = Path(sys.executable).with_name("check-jsonschema")


def _check_workflow(path: Path) -> subprocess.CompletedProcess[str]:
    if not CHECK_JSONSCHEMA.exists():
        pytest.fail(f"{CHECK_JSONSCHEMA} is missing: install the dev dependency group")
    return subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema",
                           "vendor.github-workflows", str(path)],
                          capture_output=True, text=True, check=False, timeout=120)


def test_workflow_is_valid_against_the_github_workflow_schema(tmp_path: Path) -> None:
    done = _check_workflow(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr
    # the check can fail: a matrix job without runs-on is refused
    broken = yaml.safe_load(WORKFLOW.read_text())
    del broken["jobs"]["fuzz"]["runs-on"]
    (tmp_path / "broken.yml").write_text(yaml.safe_dump(broken))
    refused = _check_workflow(tmp_path / "broken.yml")
    assert refused.returncode == 1 and "runs-on" in refused.stdout, refused.stdout


def test_workflow_shards_every_unit_and_always_merges() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    shards = int(flow["env"]["SHARDS"])
    fuzz, merge = flow["jobs"]["fuzz"], flow["jobs"]["merge"]
    assert fuzz["strategy"]["matrix"]["shard"] == list(range(1, shards + 1))
    assert fuzz["strategy"]["fail-fast"] is False
    run = " ".join(step.get("run", "") for step in fuzz["steps"])
    assert "compatfuzz fuzz" in run
    assert "--shard ${{ matrix.shard }}/${{ env.SHARDS }}" in run
    assert "--report out/shard-${{ matrix.shard }}.json" in run
    assert "--duration " in run and "--database .nightly-db" in run
    assert (REPO / flow["env"]["CONFIG"]).is_file()
    uploads = [s["with"] for s in fuzz["steps"] if "upload-artifact" in s.get("uses", "")]
    assert {u["name"] for u in uploads} == {"examples-db-${{ matrix.shard }}",
                                            "report-shard-${{ matrix.shard }}"}
    assert all(s.get("if") == "always()" for s in fuzz["steps"]
               if "upload-artifact" in s.get("uses", ""))
    assert "gh run download" in run and "examples-db-*" in run
    assert merge["needs"] == "fuzz" and merge["if"] == "always()"
    merged = " ".join(step.get("run", "") for step in merge["steps"])
    assert re.search(r"compatfuzz report merge out/shard-\*\.json .*--junit \S+ --html \S+",
                     merged), merged


def _documents() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in MANIFESTS:
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def _collection(doc: dict[str, Any], namespace: str = "default") -> str:
    group, _, version = doc["apiVersion"].rpartition("/")
    plural = {"Deployment": "deployments", "Service": "services", "Job": "jobs",
              "PersistentVolumeClaim": "persistentvolumeclaims"}[doc["kind"]]
    root = f"/apis/{group}/{version}" if group else f"/api/{version}"
    return f"{root}/namespaces/{namespace}/{plural}"


def _dry_run(client: Client, doc: dict[str, Any]) -> Any:
    return client.request("POST", _collection(doc) + "?dryRun=All&fieldValidation=Strict",
                          doc)


def test_the_manifests_pass_a_server_side_dry_run(real_endpoint: Endpoint) -> None:
    docs = _documents()
    assert sorted(d["kind"] for d in docs) == ["Deployment", "Job", "Job",
                                               "PersistentVolumeClaim",
                                               "PersistentVolumeClaim", "Service"]
    client = Client(real_endpoint)
    try:
        for doc in docs:
            created = _dry_run(client, doc)
            assert created["metadata"]["name"] == doc["metadata"]["name"]
        job = next(d for d in docs if d["metadata"]["name"] == "compatfuzz-nightly")
        spec = _dry_run(client, job)["spec"]
        assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == (
            "Indexed", 4, 4)
        # the dry run validates: an Indexed Job needs completions, and typos are refused
        for broken, words in [({"completions": None}, "completions"),
                              ({"completionsMode": "Indexed"}, "unknown field")]:
            bad = json.loads(json.dumps(job))
            bad["spec"].update(broken)
            with pytest.raises(ServerError, match=words):
                _dry_run(client, bad)
    finally:
        client.close()


def test_the_job_command_names_its_report_by_index_and_the_shared_redis() -> None:
    job = next(d for d in _documents() if d["metadata"]["name"] == "compatfuzz-nightly")
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    count = job["spec"]["completions"]
    assert args[:3] == ["fuzz", "--shards", str(count)]
    assert args[args.index("--database") + 1] == "redis://redis:6379/0"
    assert args[args.index("--report") + 1] == "/out/shard-$(JOB_COMPLETION_INDEX).json"
    service = next(d for d in _documents() if d["kind"] == "Service")
    assert service["metadata"]["name"] == "redis"
    assert service["spec"]["ports"][0]["port"] == 6379
    dockerfile = (NIGHTLY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["compatfuzz"]' in dockerfile
    for source in re.findall(r"^COPY (?:--\S+ )*(.+) \S+$", dockerfile, re.MULTILINE):
        for name in source.split():
            assert (REPO / name).exists(), name  # the build context is the checkout


def _has_shards_flag() -> bool:
    done = subprocess.run([sys.executable, "-m", "compatfuzz.cli", "fuzz", "--help"],
                          capture_output=True, text=True, check=False, timeout=120)
    return "--shards" in done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save",
                             "", "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_indexed_job_runs_as_its_pods_would(tmp_path: Path, redis_url: str) -> None:
    """The Job's container args, index by index, as N local processes sharing one Redis:
    together they run every unit once, each shard its own."""
    if not _has_shards_flag():
        pytest.skip("`compatfuzz fuzz --shards N` (issue 21, item 1) has not landed yet")
    job = next(d for d in _documents() if d["metadata"]["name"] == "compatfuzz-nightly")
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    count = int(job["spec"]["completions"])
    out = tmp_path / "out"
    out.mkdir()
    procs = []
    for index in range(count):
        argv = [a.replace("$(JOB_COMPLETION_INDEX)", str(index)).replace("/out/", f"{out}/")
                .replace("redis://redis:6379/0", redis_url) for a in args]
        at = argv.index("--duration")  # a few examples per unit, not 40 minutes
        argv[at:at + 2] = ["--max-examples", "3"]
        env = {**os.environ, "JOB_COMPLETION_INDEX": str(index),
               "COMPATFUZZ_NIGHT": "test-night"}
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "compatfuzz.cli", *argv],
            cwd=REPO / "examples" / "shipments", env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    reports = [json.loads((out / f"shard-{i}.json").read_text()) for i in range(count)]
    shards = [r["shard"] for r in reports]
    assert [(s["number"], s["count"]) for s in shards] == [(i + 1, count)
                                                           for i in range(count)]
    owned = sorted(u for s in shards for u in s["units"])
    assert owned == sorted(shards[0]["job_units"])  # every unit once
