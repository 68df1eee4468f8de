"""``format: duration`` in a Kubernetes schema is a Go duration (kube-openapi validates it
with Go's rules, metav1.Duration), so a converter that respells ``90m`` as ``1h30m0s``
changes nothing; outside Kubernetes it stays ISO 8601 (issue 10, noted under item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.schema import load_schema
from compatfuzz.semantic import equal, format_go_duration, parse_go_duration

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: timers.example.com}
spec:
  group: example.com
  names: {kind: Timer, plural: timers}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              every: {type: string, format: duration}
"""


@pytest.fixture(scope="module")
def crd_schema(tmp_path_factory: pytest.TempPathFactory) -> object:
    path: Path = tmp_path_factory.mktemp("crd") / "timers.yaml"
    path.write_text(CRD)
    return load_schema(path, version="v1")


def test_a_respelt_go_duration_is_no_change(crd_schema: object) -> None:
    assert equal({"spec": {"every": "90m"}}, {"spec": {"every": "1h30m0s"}},
                 schema=crd_schema)
    assert not equal({"spec": {"every": "90m"}}, {"spec": {"every": "91m"}},
                     schema=crd_schema)


@given(st.integers(min_value=0, max_value=10**15))
def test_go_duration_spellings_of_one_length_are_equal(crd_schema: object,
                                                       nanos: int) -> None:
    text = format_go_duration(nanos)
    assert parse_go_duration(text) == nanos
    seconds = f"{nanos // 10**9}s" if nanos % 10**9 == 0 else f"{nanos}ns"
    assert equal({"spec": {"every": text}}, {"spec": {"every": seconds}}, schema=crd_schema)


def test_plain_json_schema_durations_stay_iso_8601() -> None:
    schema = {"type": "object", "properties": {"t": {"type": "string", "format": "duration"}}}
    assert equal({"t": "P1W"}, {"t": "P7D"}, schema=schema)
