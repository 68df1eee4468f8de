"""compatfuzz's Hypothesis profiles (``roundtrip/_engine/_profiles.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.roundtrip import get_profile


def test_first_imported_inside_a_settings_test_is_no_warning(tmp_path: Path) -> None:
    """Hypothesis deprecates registering a profile under an active @settings; compatfuzz
    imported there for the first time must not warn (pytest's -W error fails the test)."""
    script = textwrap.dedent("""
        import warnings
        from hypothesis import given, settings, strategies as st
        from hypothesis.errors import HypothesisDeprecationWarning
        warnings.simplefilter("error", HypothesisDeprecationWarning)

        # no deadline: the import below compiles compatfuzz where no bytecode is cached
        # (PYTHONDONTWRITEBYTECODE), 0.4-0.9 s, past Hypothesis's 200 ms default
        @settings(max_examples=1, database=None, deadline=None)
        @given(st.none())
        def test(_):
            from compatfuzz.roundtrip import get_profile
            assert get_profile("nightly").max_examples == 10_000
            assert get_profile("default").deadline is None

        test()
        from hypothesis import settings as s
        from compatfuzz.roundtrip import get_profile
        assert get_profile("ci").derandomize
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False, cwd=tmp_path,
                          env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY":
                               str(tmp_path / ".hypothesis")})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@settings(max_examples=5, database=None)
@given(st.sampled_from(["default", "ci", "nightly"]))
def test_profiles_are_served_under_a_users_settings(name: str) -> None:
    profile = get_profile(name)
    assert profile.deadline is None and profile.max_examples >= 100
