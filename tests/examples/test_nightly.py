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
import subprocess
import sys
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
    # a failure found (exit 1) fails its index at once; a crash is retried once
    from compatfuzz.cli import EXIT_FAILED

    (rule,) = job["spec"]["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailIndex"
    assert rule["onExitCodes"] == {"containerName": "fuzz", "operator": "In",
                                   "values": [EXIT_FAILED]}
    assert job["spec"]["backoffLimitPerIndex"] == 1
    (init,) = job["spec"]["template"]["spec"]["initContainers"]
    assert "redis-cli -h redis ping" in " ".join(init["command"])
    service = next(d for d in _documents() if d["kind"] == "Service")
    assert service["metadata"]["name"] == "redis"
    assert service["spec"]["ports"][0]["port"] == 6379
    dockerfile = (NIGHTLY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["compatfuzz"]' in dockerfile
    # the Job's --database redis://... needs the redis client in the image: without the
    # extra every pod stopped with "needs the 'redis' package"
    job = next(d for d in _documents() if d["metadata"]["name"] == "compatfuzz-nightly")
    assert any("redis://" in a for a in job["spec"]["template"]["spec"]["containers"][0]["args"])
    assert '"/src[redis]"' in dockerfile
    assert '\nredis = ["redis>=' in (REPO / "pyproject.toml").read_text()  # the extra
    for source in re.findall(r"^COPY (?:--\S+ )*(.+) \S+$", dockerfile, re.MULTILINE):
        for name in source.split():
            assert (REPO / name).exists(), name  # the build context is the checkout


def test_the_indexed_job_runs_as_its_pods_would(
        tmp_path: Path, real_redis: tuple[str, subprocess.Popen[bytes]]) -> None:
    """The Job's container args, index by index, as N local processes sharing one Redis:
    together they run every unit once, each shard its own."""
    redis_url, _ = real_redis
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


FAKE_GH = """#!/usr/bin/env bash
# gh, as the workflow calls it: the last finished run is 41; its artifacts are in $ARTIFACTS
set -eu
case "$1 $2" in
  "run list") echo 41 ;;
  "run download")
    shift 2
    dir=.
    while [ $# -gt 0 ]; do
      case "$1" in --dir) dir=$2; shift 2 ;; *) shift ;; esac
    done
    found=0
    for artifact in "$ARTIFACTS"/examples-db-*; do
      [ -d "$artifact" ] || continue
      found=1
      mkdir -p "$dir/$(basename "$artifact")"
      cp -r "$artifact/." "$dir/$(basename "$artifact")/"
    done
    [ $found = 1 ] || { echo "no valid artifacts found to download" >&2; exit 1; } ;;
  *) echo "fake gh: unexpected $*" >&2; exit 2 ;;
esac
"""


def _workflow_step(name: str) -> str:
    """The shell of the fuzz job's step ``name``, its ${{ }} expressions filled in."""
    flow = yaml.safe_load(WORKFLOW.read_text())
    (step,) = [s for s in flow["jobs"]["fuzz"]["steps"] if s.get("name") == name]
    return str(step["run"]).replace("${{ github.workflow }}", "compatfuzz nightly")


@pytest.mark.extended  # ~40 s of shard runs; CI runs it
def test_the_artifact_database_carries_a_failure_to_every_shard_next_night(
        tmp_path: Path) -> None:
    """The matrix as GitHub runs it, one fresh runner folder per shard and night: the
    workflow's own step merges the last night's ``examples-db-K`` artifacts (a fake
    ``gh`` serves them from a folder), the shard fuzzes, and its ``.nightly-db`` is
    uploaded. A failure one shard found on night 1 fails every shard first on night 2."""
    example = REPO / "examples" / "frobber"
    failing = "frobber::roundtrip[v7beta1->v6]"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    merge_step = _workflow_step("Merge the example databases of the last finished night")
    count = 3

    def night(label: str, artifacts: Path, uploads: Path) -> list[dict[str, Any]]:
        reports = []
        for k in range(1, count + 1):
            runner = tmp_path / label / f"runner-{k}"  # a fresh checkout
            runner.mkdir(parents=True)
            for name in ("crd.yaml", "conversion.py", "lossy.py", "lossy.toml"):
                shutil.copy(example / name, runner / name)
            env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                   "ARTIFACTS": str(artifacts), "COMPATFUZZ_NIGHT": label}
            merged = subprocess.run(["bash", "-euo", "pipefail", "-c", merge_step],
                                    cwd=runner, env=env, capture_output=True, text=True,
                                    check=False, timeout=60)
            assert merged.returncode == 0, merged.stderr
            done = subprocess.run(
                [sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config", "lossy.toml",
                 "--shard", f"{k}/{count}", "--max-examples", "100", "-q",
                 "--database", ".nightly-db", "--report", f"out/shard-{k}.json"],
                cwd=runner, env=env, capture_output=True, text=True, check=False,
                timeout=300)
            assert "Traceback" not in done.stderr, done.stderr
            reports.append(json.loads((runner / "out" / f"shard-{k}.json").read_text()))
            shutil.copytree(runner / ".nightly-db", uploads / f"examples-db-{k}")  # upload
        return reports

    first_uploads = tmp_path / "artifacts-1"
    first = night("night-1", tmp_path / "none-yet", first_uploads)
    owners = [r["shard"]["number"] for r in first if failing in r["shard"]["units"]]
    assert len(owners) == 1
    statuses = {u["id"]: u["status"] for r in first for u in r["units"]}
    assert statuses[failing] == "failed"

    second = night("night-2", first_uploads, tmp_path / "artifacts-2")
    for report in second:
        head = report["units"][0]  # before the shard generated anything
        assert (head["id"], head["status"]) == (failing, "failed"), report["shard"]
        assert "replayed the 1 failure compatfuzz saved" in head["replayed"]
        assert report["shard"]["replayed"] == (
            [] if report["shard"]["number"] in owners else [failing])
