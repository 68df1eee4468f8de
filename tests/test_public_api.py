"""The public API is exactly what each public module's ``__all__`` lists (STYLE.md 1)."""

from __future__ import annotations

import importlib
import types

import pytest

PUBLIC_MODULES = [
    "compatfuzz",
    "compatfuzz.errors",
    "compatfuzz.schema",
    "compatfuzz.strategies",
    "compatfuzz.semantic",
    "compatfuzz.apiserver",
    "compatfuzz.roundtrip",
    "compatfuzz.compat",
    "compatfuzz.protobuf",
    "compatfuzz.pydantic",
    "compatfuzz.cadwyn",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_sorted_complete_and_resolvable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    # ruff's RUF022 order: SCREAMING_CASE constants, then CamelCase, then the rest.
    isort_style = sorted(exported, key=lambda attr: (not attr.isupper(), attr))
    assert exported == isort_style, f"{name}.__all__ is not sorted"
    for attr in exported:
        assert getattr(module, attr) is not None
    public = {
        key for key, value in vars(module).items()
        if not key.startswith("_")
        and not isinstance(value, types.ModuleType)
        and key not in {"annotations", "TYPE_CHECKING"}
        and getattr(value, "__module__", name).startswith("compatfuzz")
    }
    assert public <= set(exported), f"{name} has public names missing from __all__: " \
        f"{sorted(public - set(exported))}"
