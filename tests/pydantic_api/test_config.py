"""``pydantic = {...}`` in compatfuzz.toml: what loads, and what each mistake says (file,
key, fix), including a missing ``compatfuzz[pydantic]`` extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.pydantic import PydanticAPI
from compatfuzz.roundtrip import load_config, units

from ._shop import copy_example

MODELS = ('pydantic = { v1 = "shop.models.v1:Order", v2 = "shop.models.v2:Order", '
          'v3 = "shop.models.v3:Order" }')
TABLE = textwrap.dedent(f"""\
    [[api]]
    name = "orders"
    {MODELS}
    converters = {{ "v1->v2" = "shop.conversion:v1_to_v2", "v2->v1" = "shop.conversion:v2_to_v1" }}
""")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy_example(tmp_path)
    return tmp_path


def _error(project: Path, text: str) -> SchemaLoadError:
    config = project / "compatfuzz.toml"
    config.write_text(text)
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    return info.value


def test_the_example_config_loads_beside_itself(project: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.parent)  # modules resolve beside the config
    (api,) = load_config(project / "compatfuzz.toml")
    assert isinstance(api, PydanticAPI)
    assert api.source == str((project / "compatfuzz.toml").resolve())
    assert {v: m.__module__ for v, m in api.models.items()} == {
        "v1": "shop.models.v1", "v2": "shop.models.v2", "v3": "shop.models.v3"}
    assert len(units(api)) == 27


def test_a_pyproject_table_with_a_hub_loads(project: Path) -> None:
    (project / "hub.py").write_text(textwrap.dedent("""\
        def to_hub(doc):
            return doc
        def from_hub(doc, version):
            return doc
    """))
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [[tool.compatfuzz.api]]
        name = "orders"
        pydantic = { v2 = "shop.models.v2:Order", v2b = "shop.models.v2:Order" }
        to_hub = "hub:to_hub"
        from_hub = "hub:from_hub"
        hub = "v2"
    """))
    (api,) = load_config(project / "pyproject.toml")
    assert [u.id for u in units(api, ["valid"])] == ["orders::valid[v2->v2b]",
                                                     "orders::valid[v2b->v2]"]


@pytest.mark.parametrize(("table", "pointer", "message", "fix"), [
    (TABLE.replace("shop.models.v2:Order", "shop.models.v2:Ordr"), "$.api[0].pydantic.v2",
     "has no function 'Ordr'", "did you mean 'shop.models.v2:Order'?"),
    (TABLE.replace("shop.models.v2:Order", "shop.modls.v2:Order"), "$.api[0].pydantic.v2",
     "cannot import 'shop.modls.v2'", "did you mean 'shop.models.v2:Order' or"),
    (TABLE.replace("shop.models.v2:Order", "shop.models.v2:Status"), "$.api[0].pydantic.v2",
     "'shop.models.v2:Status' is a class (str, Enum), not a pydantic BaseModel subclass",
     "name the pydantic model class of that version"),
    (TABLE.replace("shop.models.v2:Order", "shop.conversion:v2_to_v1"),
     "$.api[0].pydantic.v2", "'shop.conversion:v2_to_v1' is a function, not a class",
     "as 'module:Order'"),
    (TABLE.replace('"shop.models.v2:Order"', '"Order"'), "$.api[0].pydantic.v2",
     "expected 'module:Model', got 'Order'", 'write pydantic = { v1 = "shop.models.v1:Order"'),
    (TABLE.replace(MODELS, 'pydantic = "shop.models.v1:Order"'), "$.api[0].pydantic",
     "pydantic must be a table of version -> model", "(modules relative to this file)"),
    (TABLE + 'messages = { v1 = "x" }\n', "$.api[0]", "unknown key(s) messages",
     "the keys are: accept, convert, converters, from_hub, hub, name, overrides, pydantic, "
     "to_hub"),
    (TABLE.replace("shop.conversion:v2_to_v1", "shop.conversion:v2_to_v0"),
     "$.api[0].converters['v2->v1']", "has no function 'v2_to_v0'",
     "it defines: v1_to_v2, v2_to_v1, v2_to_v3, v3_to_v2"),
])
def test_mistakes_name_the_file_the_key_and_a_fix(project: Path, table: str, pointer: str,
                                                  message: str, fix: str) -> None:
    err = _error(project, table)
    text = str(err)
    assert err.source == str(project / "compatfuzz.toml")
    assert f"at {pointer}:" in text, text
    assert message in text, text
    assert fix in text, text


def test_a_model_module_that_raises_shows_the_users_traceback(project: Path) -> None:
    (project / "shop" / "models" / "v2.py").write_text("import json\n\n1 / 0\n")
    text = str(_error(project, TABLE))
    assert "at $.api[0].pydantic.v2:" in text
    assert "raised ZeroDivisionError: division by zero" in text
    assert 'v2.py", line 3' in text
    assert "compatfuzz/" not in text.split("raised", 1)[1]  # only the user's frames


def test_without_the_pydantic_extra_the_error_names_it(project: Path) -> None:
    (project / "compatfuzz.toml").write_text(TABLE)
    code = textwrap.dedent(f"""\
        import sys
        sys.modules["pydantic"] = None   # as if pydantic were not installed
        from compatfuzz.cli import main
        sys.exit(main(["fuzz", "--config", {str(project / "compatfuzz.toml")!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "at $.api[0].pydantic: pydantic = ... needs 'pydantic" in proc.stderr
    assert "which is not installed" in proc.stderr
    assert "fix: pip install 'compatfuzz[pydantic]'" in proc.stderr
    assert "Traceback" not in proc.stderr
