"""A rule drawn values rarely meet is said once, with a fix the command can take: an
override by path for ``fuzz``, ``sample`` and Python; for ``diff``, which draws its
witnesses from the schemas alone, what it means for the witnesses
(``strategies._overrides.rare_values_warning``)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from compatfuzz.errors import UnsupportedRuleWarning
from compatfuzz.schema import load_schema
from compatfuzz.strategies import from_schema

RULE = "isURL(self) && url(self).getScheme() == 'xyzzy'"  # random strings never are


def _schema(path: Path, max_length: int) -> Path:
    path.write_text(json.dumps({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"endpoint": {
            "type": "string", "maxLength": max_length,
            "x-kubernetes-validations": [{"rule": RULE}]}}}}}))
    return path


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compatfuzz.cli", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=240, check=False)


def test_the_warning_carries_both_fixes(tmp_path: Path) -> None:
    strategy = from_schema(load_schema(_schema(tmp_path / "s.json", 40)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @settings(max_examples=150, database=None, suppress_health_check=list(HealthCheck))
        @given(strategy)
        def draw(value: object) -> None:
            pass

        draw()
    (warning,) = {str(w.message): w.message for w in caught
                  if isinstance(w.message, UnsupportedRuleWarning)}.values()
    where = "spec.endpoint"
    assert f'[api.overrides] "{where}" = {{ values = [...valid values...] }}' in str(warning)
    plain = warning.without_overrides  # type: ignore[attr-defined]
    assert plain.startswith(str(warning).split("; add an override")[0])
    assert "[api.overrides] is for fuzz and pytest" in plain and '"spec.endpoint" =' not in plain


def test_diff_says_what_a_rare_rule_means_for_its_witnesses(tmp_path: Path) -> None:
    _schema(tmp_path / "old.json", 40)
    _schema(tmp_path / "new.json", 20)  # maxLength tightened: a witness is searched for
    done = _cli("diff", "old.json", "new.json", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    warned = [line for line in done.stderr.splitlines() if "compatfuzz diff: warning:" in line]
    assert warned, done.stderr
    assert all("witnesses that need a value there are rarely found" in line
               and "[api.overrides] is for fuzz and pytest" in line
               and '[api.overrides] "' not in line for line in warned), warned


def test_sample_keeps_the_override_hint(tmp_path: Path) -> None:
    _schema(tmp_path / "s.json", 40)
    done = _cli("sample", "s.json", "-n", "150", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '[api.overrides] "spec.endpoint" = { values = [...valid values...] }' in done.stderr
