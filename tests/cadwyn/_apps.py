"""The test apps of tests/cadwyn/data, loaded with a seeded bug: one loader for every app."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.roundtrip import load_config

DATA = Path(__file__).resolve().parent / "data"


def loader(monkeypatch: pytest.MonkeyPatch, variable: str, module: str,
           config: Path) -> Iterator[Callable[[str], Any]]:
    """A fixture body: ``load(bug)`` sets ``variable`` to ``bug``, imports ``module`` anew
    (the app reads its bug at import) and loads ``config``'s first API."""
    def load(bug: str = "") -> Any:
        monkeypatch.setenv(variable, bug)
        sys.modules.pop(module, None)
        return load_config(config)[0]

    yield load
    sys.modules.pop(module, None)
