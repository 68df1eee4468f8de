"""Hypothesis settings profiles for compatfuzz's properties: ``default``, ``ci``, ``nightly``.

Settings are Hypothesis profiles, not a parallel settings system (STYLE.md 18).  They are
registered under ``compatfuzz-<name>`` so that loading them never replaces Hypothesis's
own ``default`` and ``ci`` profiles for the user's other tests; register a profile with
the same name *before* importing compatfuzz to override one.  Select with
``--compatfuzz-profile`` / ``COMPATFUZZ_PROFILE`` (pytest) or ``--profile`` (CLI).
The database is left at Hypothesis's default (``.hypothesis/examples``) in every profile,
``ci`` included, so that the CLI and pytest replay each other's failures.
"""

from __future__ import annotations

import contextlib
import warnings

from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import HypothesisDeprecationWarning
from hypothesis.errors import InvalidArgument as HypothesisInvalidArgument

from compatfuzz.errors import InvalidArgument

__all__ = ["PROFILES", "get_profile", "profile_name"]

PROFILES = ("default", "ci", "nightly")

# Generated Kubernetes objects are big and conversions are user code: these health checks
# fire on realistic CRDs without pointing at a real problem.
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def profile_name(name: str) -> str:
    """The Hypothesis profile name for one of :data:`PROFILES`."""
    if name not in PROFILES:
        raise InvalidArgument(
            f"Expected one of {', '.join(PROFILES)} but got profile={name!r}; "
            "use 'nightly' for long runs"
        )
    return f"compatfuzz-{name}"


_BUILT: dict[str, settings] = {}


def _register() -> None:
    # The explain phase re-runs variations of the minimal example to annotate the report;
    # our report is the field-path diff, so skip its cost.
    # Parent is Hypothesis's "default" profile, not the one loaded now: under CI=true
    # Hypothesis auto-loads its "ci" profile (database=None), which would silently stop
    # pytest from replaying the failures the nightly job saved.
    base = settings(settings.get_profile("default"), deadline=None,
                    suppress_health_check=_SUPPRESS,
                    report_multiple_bugs=False,
                    phases=[p for p in Phase if p is not Phase.explain])
    wanted = {
        "default": settings(base, max_examples=100),
        # derandomize: CI runs are repeatable; the database stays, so CI still replays
        # the failures a shared (Redis/directory) database holds from the nightly job.
        "ci": settings(base, max_examples=200, derandomize=True, print_blob=True),
        "nightly": settings(base, max_examples=10_000, print_blob=True),
    }
    for name, value in wanted.items():
        _BUILT[name] = value
        try:
            settings.get_profile(profile_name(name))
        except HypothesisInvalidArgument:
            # compatfuzz first imported inside a user's @settings test: Hypothesis warns
            # (deprecated since 2025-11-15, hypothesis/_settings.py::register_profile), and
            # pytest's -W error makes that a failure.  Serve it unregistered instead; a
            # later import or get_profile() outside such a test registers it.
            with warnings.catch_warnings():
                warnings.simplefilter("error", HypothesisDeprecationWarning)
                with contextlib.suppress(HypothesisDeprecationWarning):
                    settings.register_profile(profile_name(name), value)


def get_profile(name: str = "default") -> settings:
    """Return the ``settings`` of compatfuzz profile ``name``."""
    try:
        return settings.get_profile(profile_name(name))
    except HypothesisInvalidArgument:
        _register()
        try:
            return settings.get_profile(profile_name(name))
        except HypothesisInvalidArgument:
            return _BUILT[name]


_register()
