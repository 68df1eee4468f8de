"""``compatfuzz.compat`` exports exactly its public names, each reporting its public home."""

from __future__ import annotations

import types

from compatfuzz import compat


def test_all_lists_every_public_name_once() -> None:
    public = {n for n, v in vars(compat).items()
              if n.isidentifier() and not n.startswith("_") and n != "annotations"
              and not isinstance(v, types.ModuleType)}
    assert len(compat.__all__) == len(set(compat.__all__))
    assert set(compat.__all__) == public  # order is enforced by ruff (RUF022)


def test_classes_report_their_public_module() -> None:
    for name in compat.__all__:
        obj = getattr(compat, name)
        if isinstance(obj, type):
            assert obj.__module__ == "compatfuzz.compat", name
