"""compatfuzz.semantic exports exactly its documented API, each reporting its public home."""

from __future__ import annotations

from compatfuzz import semantic

EXPECTED = {
    "Change", "ChangeKind", "Diff", "InvalidQuantity", "PathGlob", "Quantity", "Registration",
    "assert_equal", "canonical_date_time", "canonical_duration", "canonical_go_duration",
    "canonical_quantity", "canonicalise", "diff", "equal", "format_go_duration",
    "parse_go_duration", "parse_quantity", "quantity_from_json", "register_canonicaliser",
    "register_comparator", "unregister",
}


def test_all_is_sorted_and_complete() -> None:
    assert semantic.__all__ == sorted(semantic.__all__)
    assert set(semantic.__all__) == EXPECTED
    public = {n for n in vars(semantic) if n.isidentifier() and not n.startswith("_")}
    public -= {"annotations", "contextlib"}
    assert public == EXPECTED


def test_exports_report_their_public_module() -> None:
    for name in semantic.__all__:
        assert getattr(semantic, name).__module__ == "compatfuzz.semantic", name


def test_invalid_quantity_is_a_compatfuzz_error_and_a_value_error() -> None:
    from compatfuzz.errors import CompatfuzzError

    assert issubclass(semantic.InvalidQuantity, CompatfuzzError)
    assert issubclass(semantic.InvalidQuantity, ValueError)
