"""pytest plugin for compatfuzz (registered through the ``pytest11`` entry point).

Imports only the standard library and pytest at load time (STYLE.md 14), so installing
compatfuzz costs nothing in projects that do not use it.
"""

from __future__ import annotations

import pytest


def pytest_report_header(config: pytest.Config) -> str | None:
    return None
