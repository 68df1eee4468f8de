"""Dependencies flow one way: schema -> strategies/semantic -> roundtrip/compat -> cli/plugin.

No lower layer imports a higher one, not even under TYPE_CHECKING (STYLE.md 21).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "compatfuzz"

# part -> parts it may import (errors is importable by everyone)
ALLOWED: dict[str, set[str]] = {
    "schema": set(),
    "strategies": {"schema"},
    "semantic": {"schema"},
    "apiserver": {"schema", "strategies"},
    "roundtrip": {"schema", "strategies", "semantic", "apiserver"},
    "compat": {"schema", "strategies", "semantic", "apiserver"},
    "protobuf": {"schema", "strategies", "semantic", "roundtrip", "compat"},
    "pydantic": {"schema", "strategies", "semantic", "roundtrip", "compat"},
    # one engine for Python models (issue 20): Cadwyn bodies are drawn and compared by
    # the pydantic family, never the reverse
    "cadwyn": {"schema", "strategies", "semantic", "roundtrip", "compat", "pydantic"},
    # a converter kind: implements roundtrip's Converter, serves through apiserver's PKI
    "golang": {"schema", "roundtrip", "apiserver"},
}
PARTS = set(ALLOWED) | {"cli", "pytest_plugin", "_commands"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "compatfuzz" and len(parts) > 1 and parts[1] in PARTS:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_no_upward_imports(part: str) -> None:
    offenders = []
    for path in sorted((SRC / part).rglob("*.py")):
        bad = _imports(path) - ALLOWED[part] - {part}
        if bad:
            offenders.append(f"{path.relative_to(SRC)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)
