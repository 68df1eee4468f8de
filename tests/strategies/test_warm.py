"""``warm_up`` pays Hypothesis's one-time set-up (local constants, Unicode tables) so that
neither the per-example deadline nor the witness budget is charged for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import compatfuzz

SCRIPT = """
import sys, time
from compatfuzz.strategies._warm import warm_up
import compatfuzz.cli, compatfuzz.compat, compatfuzz.roundtrip  # what a run has imported
warm_up()
print("constants" if any(__import__("pathlib").Path(".hypothesis/constants").iterdir())
      else "none")
"""


@pytest.mark.skipif("site-packages" in compatfuzz.__file__,
                    reason="an installed compatfuzz is not local code to Hypothesis")
def test_warm_up_harvests_local_constants_once(tmp_path: Path) -> None:
    """In a folder Hypothesis has never run in, ``warm_up`` leaves the local constants
    harvested (and cached on disk): the first example does not parse compatfuzz's sources."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "constants"
    assert (tmp_path / ".hypothesis" / "unicode_data").is_dir()
