from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema import read_documents
from compatfuzz.schema._read import MAX_DEPTH, check_depth, parse_documents, yaml_deep_path


def test_multi_document_yaml_drops_empty_documents(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("---\na: 1\n---\n---\n# only a comment\n---\n- b\n")
    assert read_documents(f) == [{"a": 1}, ["b"]]


def test_json_and_yaml_that_starts_with_a_brace(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"a": [1, 2.5, null, true]}')
    assert read_documents(tmp_path / "s.json") == [{"a": [1, 2.5, None, True]}]
    (tmp_path / "flow.yaml").write_text("{a: 1, b: [x, y]}\n")
    # a plain y is true, as Kubernetes' go-yaml v2 reads it (resolve.go resolveMapList)
    assert read_documents(tmp_path / "flow.yaml") == [{"a": 1, "b": ["x", True]}]


def test_dates_stay_strings_like_kubernetes(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("default: 2024-01-01\nt: 2001-12-14t21:59:43.10-05:00\n")
    assert read_documents(f) == [{"default": "2024-01-01", "t": "2001-12-14t21:59:43.10-05:00"}]


def test_unsafe_tags_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "evil.yaml"
    f.write_text("a: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(SchemaLoadError, match=r"evil\.yaml"):
        read_documents(f)


def test_malformed_yaml_names_file_line_column_and_fix(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("apiVersion: v1\nkind: Foo\nspec:\n  a: 1\n   b: 2\n")
    with pytest.raises(SchemaLoadError) as info:
        read_documents(f)
    text = str(info.value)
    assert str(f) in text
    assert "line 5, column 5" in text
    assert "fix:" in text and "indentation" in text
    assert info.value.source == str(f)


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{"a": 1,\n "b": }\n')
    with pytest.raises(SchemaLoadError, match=r"line 2, column 7") as info:
        read_documents(f)
    assert "trailing comma" in info.value.hint


def test_missing_file_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(SchemaLoadError, match="file not found") as info:
        read_documents(tmp_path / "nope.yaml")
    assert "current directory" in info.value.hint


# Depth errors must not depend on which PyYAML/libyaml is installed: libyaml in PyYAML
# 6.0.4's wheels refuses flow nesting past 1000 before a node exists (issue 17, item 1).
_KEYS = st.text("abcxyz-", min_size=1, max_size=3)


@st.composite
def _deep_documents(draw: st.DrawFn) -> tuple[Any, list[Any]]:
    """A chain of mappings and lists 150-260 deep, with siblings, and the chain's path."""
    depth = draw(st.integers(150, 260))
    leaf: Any = draw(st.sampled_from([1, "x", None, [], {}]))
    path: list[Any] = []
    for _ in range(depth):
        sibling = draw(st.sampled_from([None, 0, "s"]))
        if draw(st.booleans()):
            key = draw(_KEYS)
            node: Any = {key: leaf}
            if sibling is not None:
                node["zz-sibling"] = sibling  # after the deep one: the path stays the same
            path.insert(0, key)
        else:
            node = [leaf] if sibling is None else [leaf, sibling]
            path.insert(0, 0)
        leaf = node
    return leaf, path


def _at(doc: Any, tokens: list[Any]) -> Any:
    for token in tokens:
        doc = doc[token]
    return doc


@settings(max_examples=25, deadline=None)
@given(_deep_documents(), st.sampled_from(["flow", "block-flow"]))
def test_yaml_depth_errors_agree_with_the_json_check(
        case: tuple[Any, list[Any]], style: str) -> None:
    doc, _ = case
    text = json.dumps(doc)
    if style == "block-flow":  # block mappings on top, flow below
        text = "top:\n  inner: " + text
        doc = {"top": {"inner": doc}}
    text = "# a YAML file\n" + text + "\n"
    try:
        check_depth(doc, source="d.yaml")
    except SchemaLoadError:
        too_deep = True
    else:
        too_deep = False
    found = yaml_deep_path(text)
    if not too_deep:
        assert found is None
        assert parse_documents(text, source="d.yaml") == [doc]
        return
    assert found is not None
    tokens, line = found
    assert len(tokens) == MAX_DEPTH + 1
    _at(doc, tokens)  # a real path into the document
    assert line == (1 if style == "flow" else 2) + 1
    with pytest.raises(SchemaLoadError, match=r"^d\.yaml: nested more than 200 levels deep "
                       r"at \$.* \(line \d+\)"):
        parse_documents(text, source="d.yaml")
