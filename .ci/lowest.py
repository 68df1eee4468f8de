"""Print pip requirements pinning every dependency of compatfuzz to its lowest allowed version.

`pip install -e . -c <(python .ci/lowest.py)` then installs the oldest releases that
pyproject.toml admits (its ``>=`` bounds), so a test run shows the ranges are true; the
newest are what a fresh `pip install` takes. Names the dev group's tools too, except the
test tools themselves (pytest, ruff, mypy), which are not compatfuzz's dependencies.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = {"pytest", "ruff", "mypy", "types-pyyaml", "types-jsonschema"}


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    specs = list(project["project"]["dependencies"])
    for extra in project["project"].get("optional-dependencies", {}).values():
        specs.extend(extra)
    specs.extend(s for s in project.get("dependency-groups", {}).get("dev", [])
                 if isinstance(s, str))
    pins: dict[str, str] = {}
    for spec in specs:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)\s*", spec)
        if match is None:
            continue
        name = match.group(1).lower()
        if name not in TOOLS:
            pins[name] = max(pins.get(name, "0"), match.group(3), key=_key)
    for name, version in sorted(pins.items()):
        print(f"{name}=={version}")
    return 0


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


if __name__ == "__main__":
    sys.exit(main())
