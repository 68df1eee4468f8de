"""The pytest plugin collects a protobuf API like a CRD one: from ``proto =`` in a config,
and from a module-level ``test_* = ProtoAPI(...)``; failures show the diff, the minimal
counterexample (proto3 JSON) and the replay line."""

from __future__ import annotations

import pytest

from tests.protobuf._cluster import EXAMPLE, copy_example

pytest_plugins = ["pytester"]

IDS = ([f"cluster::encodings[{v}]" for v in ("v2", "v3")]
       + [f"cluster::{p}[{pair}]" for p in ("roundtrip", "valid", "no_mutation")
          for pair in ("v2->v3", "v3->v2")])


def test_units_are_collected_from_the_config_and_from_a_test_module(
        pytester: pytest.Pytester) -> None:
    copy_example(pytester.path)
    pytester.makepyfile(test_cluster=f"""
        import importlib.util
        from compatfuzz.protobuf import ProtoAPI

        spec = importlib.util.spec_from_file_location("conv", {str(EXAMPLE / "conversion.py")!r})
        conv = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(conv)

        test_cluster = ProtoAPI.from_protos(
            "cluster", "protos",  # beside this file
            {{"v2": "example.cluster.v2.Cluster", "v3": "example.cluster.v3.Cluster"}},
            converters={{("v2", "v3"): conv.v2_to_v3}})
    """)
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                           "compatfuzz.toml", "test_cluster.py", "-m",
                                           "compatfuzz")
    assert [line for line in result.outlines if "::" in line] == [
        f"compatfuzz.toml::{i}" for i in IDS] + [
        f"test_cluster.py::cluster::{i}" for i in (
            "encodings[v2]", "encodings[v3]", "valid[v2->v3]", "no_mutation[v2->v3]")]


def test_lossy_converter_fails_with_diff_counterexample_and_replay(
        pytester: pytest.Pytester) -> None:
    copy_example(pytester.path)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "lossy.toml",
                                           "-k", "roundtrip")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "cluster::roundtrip[[]v2->v3[]]: NotEquivalent: v2 -> v3 -> v2 did not give back the "
        "original:",
        "  per_connection_buffer_limit_bytes: lost: 0 -> null",
        'minimal counterexample: {"name": "0", "per_connection_buffer_limit_bytes": 0}',
        "replay: pytest 'lossy.toml::cluster::roundtrip[[]v2->v3[]]'*",
    ])
