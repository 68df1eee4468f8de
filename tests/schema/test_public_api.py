from __future__ import annotations

import compatfuzz.schema as schema_api

PUBLIC = {
    "CRD", "CRDVersion", "LintFinding", "Schema", "WellKnown", "bundle", "check_format",
    "classify",
    "definition_kind", "kubernetes_kinds", "kubernetes_releases", "lint_structural",
    "load_crds", "load_kubernetes", "load_schema", "normalize", "read_documents",
    "resolve_pointer",
}


def test_all_is_sorted_and_complete() -> None:
    assert schema_api.__all__ == sorted(schema_api.__all__)
    assert set(schema_api.__all__) >= PUBLIC
    public_names = {n for n in vars(schema_api) if not n.startswith("_")}
    # modules imported as a side effect of loading submodules are not API
    public_names = {n for n in public_names
                    if type(getattr(schema_api, n)).__name__ != "module"}
    assert public_names - {"annotations"} == set(schema_api.__all__)


def test_exports_report_their_public_home() -> None:
    for name in schema_api.__all__:
        obj = getattr(schema_api, name)
        assert obj.__module__ == "compatfuzz.schema", name
