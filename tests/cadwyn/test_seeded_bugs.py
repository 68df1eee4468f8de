"""Each seeded migration bug of the Cadwyn tutorial's kinds is caught within 100 examples,
by the property a Cadwyn user would name, and the failure names the VersionChange; the
correct bundle passes every property. One seed by default, 20 with --run-slow (issue 20)."""

from __future__ import annotations

import pytest

pytest.importorskip("cadwyn")

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from compatfuzz.cadwyn import (
    CadwynAPI,
    LostInRoundTrip,
    MigrationFailure,
    check_request_roundtrip,
    check_request_up,
    check_response_down,
    request_bodies,
    response_bodies,
)
from tests.cadwyn._tutorial import BUGS, User, make_bundle

CHECKS = {
    "request_up": check_request_up,
    "roundtrip": check_request_roundtrip,
    "response_down": check_response_down,
}
#: the VersionChange each bug lives in
CHANGE = {
    "rename_forgotten_in_request": "RenameEmailSplitNameAddresses",
    "split_drops_empty_last_name": "RenameEmailSplitNameAddresses",
    "address_stripped": "RenameEmailSplitNameAddresses",
    "removed_field_not_stashed": "DecimalBalanceRemoveFaxNewPlan",
    "decimal_not_rounded_down": "DecimalBalanceRemoveFaxNewPlan",
    "enum_member_not_mapped": "DecimalBalanceRemoveFaxNewPlan",
    "int_read_as_float": "DecimalBalanceRemoveFaxNewPlan",
}


def first_failure(api: CadwynAPI, prop: str, version: str, seed: int,
                  max_examples: int = 100) -> BaseException | None:
    """Run one property for ``max_examples`` examples under ``seed``; the failure or None."""
    strategy = (response_bodies(api, User) if prop == "response_down"
                else request_bodies(api, User, version))
    check = CHECKS[prop]

    @hypothesis_seed(seed)
    @settings(max_examples=max_examples, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=[HealthCheck.filter_too_much])
    @given(strategy)
    def run(body: dict[str, object]) -> None:
        check(api, User, version, body)

    try:
        run()
    except (MigrationFailure, LostInRoundTrip) as exc:
        return exc
    return None


def _caught(bug: str, seeds: range) -> None:
    prop, version = BUGS[bug]
    api = CadwynAPI(make_bundle(bug))
    missed = [s for s in seeds if first_failure(api, prop, version, s) is None]
    # issue 20: caught on at least 19 of 20 seeds, every bug alike (split-name was let
    # off with 2 until string edges drew an empty piece beside a separator, _edges.py)
    allowed = 1 if len(seeds) == 20 else 0
    assert len(missed) <= allowed, f"{bug} not caught on seeds {missed}"
    failure = first_failure(api, prop, version, next(s for s in seeds if s not in missed))
    assert CHANGE[bug] in str(failure), str(failure)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_seeded_bug_caught(bug: str) -> None:
    _caught(bug, range(1))


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(BUGS))
def test_seeded_bug_caught_on_20_seeds(bug: str) -> None:
    _caught(bug, range(20))


def _all_pass(seeds: range) -> None:
    api = CadwynAPI(make_bundle())
    for version in api.versions:
        for prop in CHECKS:
            for s in seeds:
                failure = first_failure(api, prop, version, s)
                assert failure is None, f"{prop}[{version}] seed {s}:\n{failure}"


def test_correct_migrations_pass() -> None:
    _all_pass(range(1))


@pytest.mark.slow
def test_correct_migrations_pass_on_20_seeds() -> None:
    _all_pass(range(20))
