"""Installed packages register rules through the ``compatfuzz.semantic`` entry-point group,
loaded lazily on first use (STYLE.md 6)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from typing import Any

import pytest

from compatfuzz.errors import CompatfuzzWarning
from compatfuzz.semantic import Registration, equal, register_canonicaliser
from compatfuzz.semantic._registry import _REGISTRY, ENTRY_POINT_GROUP

SCHEMA = {"type": "object", "properties": {"host": {"type": "string", "format": "hostname"}}}
REGISTERED: list[Registration] = []
CALLS: list[str] = []


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else NotImplemented


def setup_hostnames() -> None:
    """What a plugin's entry point names: a function that registers its rules."""
    CALLS.append("hostnames")
    REGISTERED.append(register_canonicaliser(_lower, format="hostname"))


def broken() -> None:
    raise RuntimeError("boom")


NOT_A_FUNCTION = 42


def _entry(name: str, attr: str) -> importlib.metadata.EntryPoint:
    return importlib.metadata.EntryPoint(name=name, value=f"{__name__}:{attr}",
                                         group=ENTRY_POINT_GROUP)


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[importlib.metadata.EntryPoint]]:
    installed: list[importlib.metadata.EntryPoint] = []
    asked: list[Any] = []

    def fake_entry_points(**kwargs: Any) -> list[importlib.metadata.EntryPoint]:
        asked.append(kwargs)
        return [e for e in installed if e.group == kwargs.get("group")]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    monkeypatch.setattr(_REGISTRY, "_plugins_loaded", False)
    CALLS.clear()
    yield installed
    assert all(kw == {"group": ENTRY_POINT_GROUP} for kw in asked)
    for reg in REGISTERED:
        reg.unregister()
    REGISTERED.clear()


def test_entry_point_rules_are_loaded_lazily_once(plugins: list[Any]) -> None:
    plugins.append(_entry("hostnames", "setup_hostnames"))
    assert CALLS == []  # installing (or importing compatfuzz.semantic) runs nothing
    assert equal({"host": "Example.COM"}, {"host": "example.com"}, schema=SCHEMA)
    assert equal({"host": "A"}, {"host": "a"}, schema=SCHEMA)
    assert CALLS == ["hostnames"]  # once, on first use


def test_a_broken_plugin_is_skipped_with_a_warning_naming_it(plugins: list[Any]) -> None:
    plugins.extend([_entry("a-broken", "broken"), _entry("b-not-callable", "NOT_A_FUNCTION"),
                    _entry("c-missing", "no_such_attribute"), _entry("d-ok", "setup_hostnames")])
    with pytest.warns(CompatfuzzWarning) as record:
        assert equal({"host": "A"}, {"host": "a"}, schema=SCHEMA)  # d-ok still loaded
    messages = [str(w.message) for w in record]
    assert any("a-broken" in m and "RuntimeError: boom" in m for m in messages)
    assert any("b-not-callable" in m and "not a function" in m for m in messages)
    assert any("c-missing" in m for m in messages)
    assert CALLS == ["hostnames"]


def test_without_plugins_nothing_changes(plugins: list[Any]) -> None:
    assert not equal({"host": "A"}, {"host": "a"}, schema=SCHEMA)
