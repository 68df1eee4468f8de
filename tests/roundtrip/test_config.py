"""Declaring APIs in compatfuzz.toml / pyproject.toml."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.roundtrip import find_config, load_config

REPO = Path(__file__).resolve().parents[2]
FROBBER = REPO / "examples" / "frobber"

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "n": {"type": "integer"}}}}}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _schemas_project(root: Path, marker: str) -> None:
    for v in ("v1", "v2"):
        _write(root / "schemas" / f"{v}.json", json.dumps(SCHEMA))
    _write(root / "pkg" / "__init__.py", "")
    _write(root / "pkg" / "conversion.py", f"""
        MARKER = {marker!r}
        def convert(obj, version):
            return dict(obj)
    """)


def test_frobber_config_loads_from_any_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (api,) = load_config(FROBBER / "compatfuzz.toml")
    (kind,) = api.kinds
    assert (api.name, kind.name, list(kind.versions)) == ("frobber", "Frobber",
                                                          ["v6", "v7beta1"])
    assert kind.hub == "v6"  # the CRD's storage version ...
    assert api.hub == "internal"  # ... overridden by the config
    assert api.source == str((FROBBER / "compatfuzz.toml").resolve())


def test_pyproject_table_with_schemas_and_package_paths(tmp_path: Path) -> None:
    _schemas_project(tmp_path, "first")
    config = _write(tmp_path / "pyproject.toml", """
        [project]
        name = "x"

        [[tool.compatfuzz.api]]
        name = "numbers"
        kind = "Number"
        schemas = { v1 = "schemas/v1.json", v2 = "schemas/v2.json" }
        convert = "pkg.conversion:convert"
    """)
    (api,) = load_config(config)
    assert list(api.kinds[0].versions) == ["v1", "v2"]
    assert api.kinds[0].name == "Number"
    assert not api.kinds[0].typed  # the schemas declare no apiVersion/kind
    assert api.convert("Number", {"spec": {"n": 1}}, "v1", "v2") == {"spec": {"n": 1}}
    assert find_config(tmp_path / "schemas") == config


def test_same_module_name_in_two_configs_does_not_collide(tmp_path: Path) -> None:
    configs = []
    for marker in ("first", "second"):
        root = tmp_path / marker
        _schemas_project(root, marker)
        configs.append(_write(root / "compatfuzz.toml", """
            [[api]]
            name = "numbers"
            schemas = { v1 = "schemas/v1.json", v2 = "schemas/v2.json" }
            convert = "pkg.conversion:convert"
        """))
    import sys

    for marker, config in zip(("first", "second"), configs, strict=True):
        load_config(config)
        assert marker == sys.modules["pkg.conversion"].MARKER


def test_a_module_a_converter_imports_is_the_one_beside_the_config(tmp_path: Path) -> None:
    """'lossy.py' doing `from helpers import ...` gets its own folder's helpers.py, not
    one another config loaded first (both example folders in one pytest session)."""
    configs = []
    for marker in ("first", "second"):
        root = tmp_path / marker
        _schemas_project(root, marker)
        (root / "helpers.py").write_text(f"MARKER = {marker!r}\n")
        (root / "conv.py").write_text(
            "from helpers import MARKER\n\n"
            "def convert(obj, version):\n    return dict(obj, marker=MARKER)\n")
        configs.append(_write(root / "compatfuzz.toml", """
            [[api]]
            name = "numbers"
            schemas = { v1 = "schemas/v1.json", v2 = "schemas/v2.json" }
            convert = "conv:convert"
        """))
    for marker, config in zip(("first", "second"), configs, strict=True):
        (api,) = load_config(config)
        kind = api.kinds[0].name
        assert api.convert(kind, {"spec": {"n": 1}}, "v1", "v2")["marker"] == marker


@pytest.mark.parametrize(("body", "pointer", "message"), [
    ('[[api]]\nname = "a"\ncrd = "crd.yaml"\nconvrt = "m:f"\n', "$.api[0]",
     "unknown key(s) convrt"),
    ('[[api]]\nname = "a"\ncrd = "missing.yaml"\nconvert = "conversion:convert"\n', "$.api[0].crd",
     "CRD file 'missing.yaml' not found"),
    ('[[api]]\nname = "a"\ncrd = "crd.yaml"\nconvert = "nomodule:f"\n', "$.api[0].convert",
     "cannot import 'nomodule'"),
    ('[[api]]\nname = "a"\ncrd = "crd.yaml"\nconvert = "conversion:nope"\n',
     "$.api[0].convert", "has no function 'nope'; it defines: convert"),
    ('[[api]]\nname = "a"\nconvert = "conversion:convert"\n', "$.api[0]",
     "exactly one of crd and schemas"),
    ('# nothing\n', "$.api", "no APIs declared"),
    ('[[api]]\nname = "a"\ncrd = "crd.yaml"\nconvert = "conversion:convert"\n'
     'pipeline = "kube"\n', "$.api[0].pipeline", "pipeline must be one of 'apiserver', 'plain'"),
    ('[[api]]\nname = "a"\nschemas = { v1 = "crd.yaml", v2 = "crd.yaml" }\n'
     'convert = "conversion:convert"\npipeline = "apiserver"\n', "$.api[0]",
     "pipeline='apiserver' needs a storage version"),
])
def test_config_errors_name_file_key_and_fix(tmp_path: Path, body: str, pointer: str,
                                             message: str) -> None:
    (tmp_path / "crd.yaml").write_text((FROBBER / "crd.yaml").read_text())
    (tmp_path / "conversion.py").write_text("def convert(o, v):\n    return o\n")
    config = _write(tmp_path / "compatfuzz.toml", body)
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    text = str(info.value)
    assert text.startswith(f"{config} at {pointer}: ")
    assert message in text
    assert info.value.hint


def test_pipeline_key_chooses_how_round_trips_are_judged(tmp_path: Path) -> None:
    _schemas_project(tmp_path, "pipeline")
    config = _write(tmp_path / "compatfuzz.toml", """
        [[api]]
        name = "frobber"
        crd = "crd.yaml"
        convert = "conversion:convert"
        pipeline = "plain"

        [[api]]
        name = "numbers"
        schemas = { v1 = "schemas/v1.json", v2 = "schemas/v2.json" }
        hub = "v2"
        convert = "pkg.conversion:convert"
        pipeline = "apiserver"
    """)
    (tmp_path / "crd.yaml").write_text((FROBBER / "crd.yaml").read_text())
    (tmp_path / "conversion.py").write_text("def convert(o, v):\n    return o\n")
    frobber, numbers = load_config(config)
    assert (frobber.pipeline, numbers.pipeline) == ("plain", "apiserver")
    assert frobber.server(frobber.kinds[0]) is None
    # an opted-in plain schema is pruned by its versions' schemas like a CRD
    server = numbers.server(numbers.kinds[0])
    assert server.storage == "v2"
    assert server.accept({"spec": {"n": 1, "junk": 2}, "extra": 3}, "v1") == {"spec": {"n": 1}}
    (default,) = load_config(FROBBER / "compatfuzz.toml")
    assert default.pipeline == "apiserver"  # a CRD's default


def test_unknown_api_name_lists_the_declared_ones() -> None:
    with pytest.raises(SchemaLoadError, match=r"(?s)no API named 'widgets'.*declares: frobber"):
        load_config(FROBBER / "compatfuzz.toml", api="widgets")


def test_pyproject_without_table_is_not_a_config(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_config(tmp_path) is None
    with pytest.raises(SchemaLoadError, match=r"no \[tool.compatfuzz\] table"):
        load_config(tmp_path / "pyproject.toml")


def _orders(root: Path) -> None:
    """The issue-10 project: a package ``orders`` with ``orders/conversion.py``."""
    for v in ("v1", "v2"):
        _write(root / f"{v}.json", json.dumps(SCHEMA))
    _write(root / "orders" / "__init__.py", "")
    _write(root / "orders" / "conversion.py", """
        import json

        def convert(obj, version):
            return dict(obj)

        def helper(obj):
            return obj
    """)


def _config_with(root: Path, convert: str) -> Path:
    return _write(root / "compatfuzz.toml", f"""
        [[api]]
        name = "orders"
        schemas = {{ v1 = "v1.json", v2 = "v2.json" }}
        convert = "{convert}"
    """)


@pytest.mark.parametrize(("convert", "expected"), [
    # issue 10, item 3: a misspelt module names the missing file and the close name
    ("orders.conversoin:convert",
     ["there is no orders/conversoin.py", "did you mean 'orders.conversion:convert'?",
      "'module:function'"]),
    # a module path without ':function' says so, and the functions it could mean
    ("orders.conversion",
     ["'orders.conversion' names a module", "it defines: convert, helper",
      "e.g. 'orders.conversion:convert'"]),
    ("orders.conversion:convret",
     ["has no function 'convret'", "did you mean 'orders.conversion:convert'?"]),
])
def test_a_mistyped_converter_path_names_the_file_and_the_close_name(
        tmp_path: Path, convert: str, expected: list[str]) -> None:
    _orders(tmp_path)
    config = _config_with(tmp_path, convert)
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    text = str(info.value)
    assert text.startswith(f"{config} at $.api[0].convert: ")
    for part in expected:
        assert part in text
    assert "No module named 'orders'" not in text
    assert "has no attribute 'conversion'" not in text


def test_a_converter_module_that_fails_to_import_shows_its_line(tmp_path: Path) -> None:
    _orders(tmp_path)
    _write(tmp_path / "orders" / "broken.py", "def convert(obj, version)\n    return obj\n")
    with pytest.raises(SchemaLoadError, match=r"(?s)raised SyntaxError.*broken\.py.*line 1"):
        load_config(_config_with(tmp_path, "orders.broken:convert"))


@pytest.mark.parametrize(("body", "pointer", "expected"), [
    # issue 10, item 7
    ('[[apis]]\nname = "a"\n', "$.apis", "did you mean 'api'?"),
    ('[api]\nname = "a"\n', "$.api", "(double brackets)"),
    ('[[api]]\nname = "a"\nschemas = { v1 = "v1.json", v2 = "v2.json" }\nconvret = "x:y"\n',
     "$.api[0]", "did you mean 'convret' -> 'convert'?"),
    ('hub = "v1"\n[[api]]\nname = "a"\n', "$.hub", "put it under its [[api]] table"),
])
def test_config_mistakes_get_a_did_you_mean(tmp_path: Path, body: str, pointer: str,
                                            expected: str) -> None:
    config = _write(tmp_path / "compatfuzz.toml", body)
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    text = str(info.value)
    assert text.startswith(f"{config} at {pointer}: ") and expected in text
    assert "no APIs declared" not in text


def test_toml_syntax_errors_and_empty_configs_carry_a_fix_not_a_docs_path(
        tmp_path: Path) -> None:
    config = _write(tmp_path / "compatfuzz.toml", '[[api]]\nname = orders\n')
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    assert "line 2" in str(info.value) and info.value.hint
    config.write_text('title = "x"\n')
    _write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    for path in (tmp_path / "pyproject.toml",):
        with pytest.raises(SchemaLoadError) as info:
            load_config(path)
        assert "docs/" not in str(info.value) and 'convert = "' in info.value.hint


def test_a_broken_schema_file_names_the_config_key_that_pointed_at_it(
        tmp_path: Path) -> None:
    _orders(tmp_path)
    (tmp_path / "v2.json").write_text('{"type": "object", "properties": {"a": {"$ref": "#/x"}}}')
    config = _config_with(tmp_path, "orders.conversion:convert")
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 'v2.json'} at ")
    assert f"named by: {config} at $.api[0].schemas.v2" in text


def _semantic_project(root: Path, semantic: str) -> Path:
    """v1 -> v2 respells durations, drops an empty struct and rewrites a checksum."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "timeout": {"type": "string"}, "extra": {"type": "object", "properties": {
            "x": {"type": "integer"}}},
        "checksum": {"type": "string"}}}}}
    for v in ("v1", "v2"):
        _write(root / f"{v}.json", json.dumps(schema))
    _write(root / "semconv.py", """
        def convert(obj, version):
            spec = dict(obj.get("spec", {}))
            if spec.get("timeout") == "90m":
                spec["timeout"] = "1h30m0s"
            if spec.get("extra") == {}:
                del spec["extra"]
            if "checksum" in spec:
                spec["checksum"] = spec["checksum"].upper()
            return {**obj, "spec": spec}

        def same_checksum(a, b):
            return str(a).lower() == str(b).lower()
    """)
    return _write(root / "compatfuzz.toml", f"""
        [[api]]
        name = "sem"
        schemas = {{ v1 = "v1.json", v2 = "v2.json" }}
        convert = "semconv:convert"
        {semantic}
    """)


def test_semantic_settings_in_the_config(tmp_path: Path) -> None:
    """Issue 10, item 10: go_durations, empty_struct_is_absent and comparators by dotted
    path are settable per API in compatfuzz.toml."""
    from compatfuzz.errors import NotEquivalent
    from compatfuzz.roundtrip import Property, Unit, check

    obj = {"spec": {"timeout": "90m", "extra": {}, "checksum": "abc"}}
    unit = Unit("sem", "sem", Property.ROUNDTRIP, ("v1", "v2"))
    (plain,) = load_config(_semantic_project(tmp_path / "plain", ""))
    with pytest.raises(NotEquivalent) as info:
        check(plain, unit, obj)
    assert {c.path for c in info.value.diff} == {"spec.timeout", "spec.checksum", "spec.extra"}
    config = _semantic_project(tmp_path / "sem", """
        [api.semantic]
        go_durations = ["spec.timeout"]
        empty_struct_is_absent = ["spec.extra"]
        comparators = { "spec.checksum" = "semconv:same_checksum" }
    """)
    (api,) = load_config(config)
    assert api.go_durations == ("spec.timeout",)
    check(api, unit, obj)  # holds: every difference is declared equivalent
    (again,) = load_config(config)  # loading twice replaces the rules, it does not stack
    check(again, unit, obj)


@pytest.mark.parametrize(("semantic", "pointer", "needle"), [
    ("[api.semantic]\ngo_duration = ['spec.timeout']", "$.api[0].semantic",
     "did you mean 'go_durations'?"),
    ("[api.semantic]\ngo_durations = 'spec.timeout'", "$.api[0].semantic.go_durations",
     "must be a list of field-path globs"),
    ("[api.semantic]\ncomparators = { '/spec/checksum' = 'semconv:same_checksum' }",
     "$.api[0].semantic.comparators['/spec/checksum']", "is a JSON Pointer"),
    ("[api.semantic]\ncomparators = { 'spec.checksum' = 'semconv:nope' }",
     "$.api[0].semantic.comparators['spec.checksum']", "has no function 'nope'"),
])
def test_semantic_config_mistakes_name_the_key(tmp_path: Path, semantic: str, pointer: str,
                                              needle: str) -> None:
    config = _semantic_project(tmp_path, semantic)
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    assert str(info.value).startswith(f"{config} at {pointer}: ")
    assert needle in str(info.value)
