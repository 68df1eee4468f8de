"""``compatfuzz.roundtrip`` exports exactly ``__all__``, sorted, each reporting its home."""

from __future__ import annotations

import compatfuzz.roundtrip as rt


def test_all_is_sorted_and_complete() -> None:
    assert rt.__all__ == sorted(rt.__all__)
    public = {n for n in dir(rt) if n.isidentifier() and not n.startswith("_")}
    public -= {"annotations", "contextlib"}
    assert set(rt.__all__) == public


def test_exports_report_their_public_home() -> None:
    for name in rt.__all__:
        obj = getattr(rt, name)
        if isinstance(obj, type):
            assert obj.__module__ == "compatfuzz.roundtrip", name
