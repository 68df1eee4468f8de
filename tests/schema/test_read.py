from __future__ import annotations

from pathlib import Path

import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.schema import read_documents


def test_multi_document_yaml_drops_empty_documents(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("---\na: 1\n---\n---\n# only a comment\n---\n- b\n")
    assert read_documents(f) == [{"a": 1}, ["b"]]


def test_json_and_yaml_that_starts_with_a_brace(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"a": [1, 2.5, null, true]}')
    assert read_documents(tmp_path / "s.json") == [{"a": [1, 2.5, None, True]}]
    (tmp_path / "flow.yaml").write_text("{a: 1, b: [x, y]}\n")
    assert read_documents(tmp_path / "flow.yaml") == [{"a": 1, "b": ["x", "y"]}]


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
