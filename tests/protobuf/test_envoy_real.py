"""Real data: Envoy's API at successive releases, from the ``xds-protos`` wheels on PyPI.

Each release is pip-installed once into the user cache and loaded in a subprocess of its
own (``tests/protobuf/_xds_releases.py``); where PyPI cannot be reached the tests skip and
say so. ``benchmarks/bench_protobuf_envoy.py`` runs every pair of releases against
``buf breaking``; these tests pin what it found on two of them.
"""

from __future__ import annotations

import functools

import pytest

from compatfuzz.compat import Status
from compatfuzz.protobuf import ProtoReport, ProtoSchema, diff_protos
from tests.protobuf._xds_releases import Unavailable, envoy_schema


@functools.cache
def _schema(version: str) -> ProtoSchema:
    return envoy_schema(version)


def schema(version: str) -> ProtoSchema:
    try:
        return _schema(version)
    except Unavailable as exc:
        pytest.skip(f"Envoy's API from PyPI is not available here: {exc}")


@functools.cache
def report(old: str, new: str) -> ProtoReport:
    return diff_protos(schema(old), schema(new), budget=30)


def test_envoy_1_32_to_1_33_removals_and_tightening() -> None:
    """xds-protos 1.66.0 -> 1.70.0: the rate-limit filter's own RateLimitConfig tree goes
    (RateLimitPerRoute.rate_limits now takes config.route.v3.RateLimit), on-demand filter
    chains go, and a certificate provider instance needs a name."""
    r = report("1.66.0", "1.70.0")
    by_path = {f.path: f for f in r.breaking}
    assert not any(f.ignored for f in r.breaking)
    removed = [p for p, f in by_path.items() if f.rule == "proto-message-removed"]
    assert len(removed) == 12
    assert all(p.startswith(("envoy.extensions.filters.http.ratelimit.v3.RateLimitConfig",
                             "envoy.config.listener.v3.FilterChain.OnDemandConfiguration"))
               for p in removed)
    retyped = by_path["envoy.extensions.filters.http.ratelimit.v3.RateLimitPerRoute.rate_limits"]
    assert retyped.rule == "proto-field-type-changed"
    assert retyped.new == "envoy.config.route.v3.RateLimit"
    assert retyped.status is Status.CONFIRMED
    named = by_path["envoy.extensions.transport_sockets.tls.v3."
                    "CertificateProviderPluginInstance.instance_name"]
    assert named.rule == "proto-validate-tightened" and named.status is Status.CONFIRMED
    assert named.witness is not None and named.witness.value == {}
    gone = by_path["envoy.config.listener.v3.FilterChain.on_demand_configuration"]
    assert gone.rule == "proto-field-removed" and gone.status is Status.CONFIRMED
    (enum,) = r.by_rule("proto-enum-removed")
    assert enum.status is Status.NOT_CHECKED  # breaks generated code, not data
    assert len(by_path) == 16


@pytest.mark.slow  # ~12 s here: two more releases, and the binary witness for MaxMind
def test_envoy_1_34_to_1_36_work_in_progress_is_exempt() -> None:
    """xds-protos 1.71.0 -> 1.80.0: MaxMind's isp_db_path moves to number 5 and number 2
    becomes asn_db_path, DynamicModuleFilter.filter_config turns from string into Any;
    both files are work in progress, so Envoy's policy exempts them, with a witness each.
    OAuth2's cookie_domain gains a pattern: the one break."""
    r = report("1.71.0", "1.80.0")
    (maxmind,) = r.by_rule("proto-field-renumbered")
    assert maxmind.path.endswith("MaxMindConfig.isp_db_path") and maxmind.ignored
    assert "work in progress" in maxmind.ignore_reason
    assert maxmind.status is Status.CONFIRMED
    (module,) = r.by_rule("proto-field-type-changed")
    assert module.path.endswith("DynamicModuleFilter.filter_config") and module.ignored
    assert [f.path for f in r.breaking if not f.ignored] == [
        "envoy.extensions.filters.http.oauth2.v3.OAuth2Credentials.cookie_domain"]
