"""Find the Cadwyn app that serves a bundle, so ``compatfuzz init`` can write the app form.

Why: given the bundle alone, compatfuzz guesses each schema's role (request body,
response, both) from the migrations, and cannot see path-based migrations; given the app,
roles and path-based migrations come from its routes (``_bundle.CadwynAPI``). A user who
names the bundle (``compatfuzz init cadwyn:shop.versions:version_bundle``) almost always
has the app beside it, so ``init`` looks for it: a module of the project that builds a
``cadwyn.Cadwyn(versions=<that bundle>)``.

Only files that mention ``Cadwyn(`` are imported (an app module is meant to be imported:
``uvicorn shop.app:app`` does), under the bundle's top package and beside it in the
config's folder, at most :data:`MAX_FILES` of them; one that fails to import is skipped.
"""

from __future__ import annotations

import contextlib
import importlib
from pathlib import Path
from typing import Any

__all__ = ["MAX_FILES", "find_app"]

#: Python files read (not imported) while looking for the app
MAX_FILES = 500
_SKIP = {".venv", "venv", ".git", "node_modules", "__pycache__", ".tox", "build", "dist",
         "tests", "test"}


def _candidates(base: Path, package: str) -> list[str]:
    """Dotted names of the modules under ``base`` that may build a Cadwyn app."""
    roots = [base / package] if (base / package).is_dir() else []
    files = sorted(base.glob("*.py"))
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if not _SKIP.intersection(path.relative_to(base).parts[:-1]):
                files.append(path)
    out = []
    for path in files[:MAX_FILES]:
        try:
            if "Cadwyn(" not in path.read_text(encoding="utf-8", errors="replace"):
                continue
        except OSError:
            continue
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts:
            out.append(".".join(parts))
    return out


def find_app(bundle: Any, bundle_module: str, base: Path) -> str | None:
    """``module:attr`` of the one Cadwyn app whose ``versions`` is ``bundle``, found under
    ``base`` (the config's folder, first on ``sys.path``); ``None`` when there is none, or
    more than one."""
    from cadwyn import Cadwyn

    found: dict[int, str] = {}  # one name per app (a package may re-export it)
    for name in _candidates(base, bundle_module.partition(".")[0]):
        module = None
        with contextlib.suppress(Exception):  # an app module that fails to import
            module = importlib.import_module(name)
        if module is None:
            continue
        for attr, value in vars(module).items():
            if isinstance(value, Cadwyn) and getattr(value, "versions", None) is bundle:
                found.setdefault(id(value), f"{name}:{attr}")
    return next(iter(found.values())) if len(found) == 1 else None
