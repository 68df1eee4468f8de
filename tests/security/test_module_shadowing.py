"""A user's folder holding a module named like one compatfuzz needs (``json.py``).

Loading ``convert = "mod:fn"``, ``pydantic:models:Model`` or a Cadwyn bundle used to
evict the standard ``json`` from ``sys.modules`` and put the folder first on
``sys.path``, so the folder's ``json.py`` ran in its place and the run crashed.  Now the
folder is appended to ``sys.path``, nothing installed is evicted, and a spec naming such a
module is exit 2 with the fix.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.roundtrip._check._config import resolve_object
from tests.faults._project import project

EVIL_JSON = 'raise SystemExit("the folder\'s json.py was imported")\n'
MODELS = textwrap.dedent("""
    import json

    from pydantic import BaseModel

    EXAMPLE = json.dumps({"name": "a"})  # a models module that imports json itself

    class Ok1(BaseModel):
        name: str
        size: int = 0

    class Ok2(BaseModel):
        name: str
        size: int = 0
""")


def _cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The CLI as its console script runs it: the script's folder, not the working
    directory, first on ``sys.path``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "compatfuzz"
    script.write_text("import sys\nfrom compatfuzz.cli import main\nsys.exit(main())\n")
    return subprocess.run([sys.executable, str(script), *argv], cwd=tmp_path / "work",
                          capture_output=True, text=True, timeout=120, check=False)


def test_diff_of_pydantic_models_beside_a_json_py(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "json.py").write_text(EVIL_JSON)
    (work / "models.py").write_text(MODELS)
    run = _cli(tmp_path, "diff", "pydantic:models:Ok1", "pydantic:models:Ok2")
    assert run.returncode == 0, run.stderr
    assert "json.py was imported" not in run.stderr and "Traceback" not in run.stderr


def test_a_converter_module_named_json_is_refused_with_the_fix(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    config = project(work, "")
    (work / "json.py").write_text(EVIL_JSON)
    config.write_text(config.read_text().replace('"conv:convert"', '"json:convert"'))
    run = _cli(tmp_path, "fuzz", "--config", str(config), "--database", "none",
               "--max-examples", "5")
    assert run.returncode == 2, run.stderr
    assert "json.py was imported" not in run.stderr and "Traceback" not in run.stderr
    assert str(work / "json.py") in run.stderr and "standard library's 'json'" in run.stderr
    assert "$.api[0].convert" in run.stderr and "rename json" in run.stderr


@pytest.fixture
def restored() -> Iterator[None]:
    path, modules = list(sys.path), dict(sys.modules)
    try:
        yield
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - set(modules):
            del sys.modules[name]
        sys.modules.update(modules)


def test_a_sibling_json_py_neither_evicts_nor_shadows_json(tmp_path: Path,
                                                            restored: None) -> None:
    (tmp_path / "json.py").write_text("SHADOW = True\n")
    (tmp_path / "conv_shadow_test.py").write_text(
        "import json\n\ndef convert(obj, desired):\n    return json.loads(json.dumps(obj))\n")
    before = sys.modules["json"]
    convert = resolve_object("conv_shadow_test:convert", tmp_path)
    assert sys.modules["json"] is before and json.dumps({}) == "{}"
    assert convert({"a": 1}, "v2") == {"a": 1}
    assert sys.path.index(str(tmp_path.resolve())) > sys.path.index(
        str(Path(json.__file__).parent.parent))


def test_a_pydantic_spec_naming_a_module_compatfuzz_needs_is_refused(
        tmp_path: Path, restored: None) -> None:
    (tmp_path / "yaml.py").write_text("raise SystemExit('imported')\n")
    with pytest.raises(SchemaLoadError, match="yaml") as info:
        resolve_object("yaml:Model", tmp_path, source="pydantic:yaml:Model")
    assert "rename yaml" in str(info.value.hint)
