"""The leaf-path coverage metric, loaded from ``src/compatfuzz/schema/_leafpaths.py``.

The metric lives in the package (the runner reports it per unit); this shim loads that
stdlib-only file by path, so the peer's worker, whose virtualenv lacks compatfuzz, uses
the very same definition.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parent.parent / "src" / "compatfuzz" / "schema" / "_leafpaths.py"
_spec = importlib.util.spec_from_file_location("_compatfuzz_leafpaths", _PATH)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
sys.modules["_compatfuzz_leafpaths"] = _module
_spec.loader.exec_module(_module)

ITEMS = _module.ITEMS
Coverage = _module.Coverage
LeafPath = _module.LeafPath
coverage = _module.coverage
covered_paths = _module.covered_paths
format_path = _module.format_path
leaf_paths = _module.leaf_paths

__all__ = ["ITEMS", "Coverage", "LeafPath", "coverage", "covered_paths", "format_path",
           "leaf_paths"]
