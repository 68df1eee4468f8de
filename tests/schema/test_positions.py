"""``pointer_line``: the line a JSON pointer's value (or its deepest existing ancestor) is on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.schema._positions import pointer_line

YAML = """\
a: 1
---
spec:
  versions:
    - name: v1
      schema:
        openAPIV3Schema:
          type: object
    - name: v2
  "x/y": 3
"""


def test_lines_of_values_in_a_multi_document_file(tmp_path: Path) -> None:
    path = tmp_path / "crd.yaml"
    path.write_text(YAML)
    assert pointer_line(path, 0, "/a") == 1
    assert pointer_line(path, 1, "") == 3
    assert pointer_line(path, 1, "/spec/versions/0/schema/openAPIV3Schema/type") == 8
    assert pointer_line(path, 1, "/spec/versions/1/name") == 9
    assert pointer_line(path, 1, "/spec/x~1y") == 10
    # a missing value: its deepest existing ancestor
    assert pointer_line(path, 1, "/spec/versions/1/schema/openAPIV3Schema") == 9
    assert pointer_line(path, 5, "/a") is None
    assert pointer_line(tmp_path / "missing.yaml", 0, "/a") is None


@given(st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=6, unique=True),
       st.data())
def test_json_keys_are_on_their_own_lines(tmp_path_factory: pytest.TempPathFactory,
                                          keys: list[str],
                                          data: st.DataObject) -> None:
    path = tmp_path_factory.mktemp("p") / "s.json"
    path.write_text(json.dumps({k: i for i, k in enumerate(keys)}, indent=1))
    i = data.draw(st.integers(0, len(keys) - 1))
    assert pointer_line(path, 0, "/" + keys[i]) == i + 2
