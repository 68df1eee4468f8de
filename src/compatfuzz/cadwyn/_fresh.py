"""Re-run one route example alone on a freshly imported app, in a process of its own.

A route property that fails only after earlier requests (state a migration or an endpoint
keeps between requests: a module-level dict, a mutable default argument) passes when the
same example runs first on a new app; Hypothesis would otherwise call the failure flaky,
or its replay would say "passes now". The app is imported anew from the config, which only
a new interpreter can do faithfully (a module's import-time state included).

``python -m compatfuzz.cadwyn._fresh`` reads ``{"config", "api", "unit", "example"}`` as
JSON on stdin and prints ``passed`` or ``failed`` (or ``unknown: why``) as its last line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

#: a fresh import of a FastAPI app with its dependencies takes seconds on a loaded machine
TIMEOUT = 60.0


def run_fresh(suite: Any, unit: Any, example: Any) -> str:
    """``passed``, ``failed``, or ``unknown: why`` for ``example`` of ``unit`` on a fresh
    copy of ``suite``'s app (``suite.source``: the config it was loaded from)."""
    if not suite.source or not os.path.isfile(str(suite.source)):
        return "unknown: the API was not loaded from a config file"
    payload = json.dumps({"config": str(suite.source), "api": suite.name,
                          "unit": unit.to_json(), "example": example})
    from compatfuzz.roundtrip._deadline import uncounted

    try:
        with uncounted():  # compatfuzz's own work: not the example's deadline
            done = subprocess.run([sys.executable, "-m", "compatfuzz.cadwyn._fresh"],
                                  input=payload, capture_output=True, text=True,
                                  timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown: {exc}"
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else f"unknown: {done.stderr.strip()[-500:]}"


def main() -> int:
    from compatfuzz.roundtrip import load_config
    from compatfuzz.roundtrip._events import Property, Unit

    asked = json.loads(sys.stdin.read())
    try:
        suites = load_config(asked["config"], api=asked["api"])
        suite: Any = suites[0]
        row = asked["unit"]
        unit = Unit(row["api"], row["kind"], Property(row["property"]),
                    tuple(row["versions"]), show_kind=True)
        suite.check(unit, asked["example"])
    except AssertionError:
        print("failed")
    except Exception as exc:  # the fresh app failing otherwise is a failure too
        from compatfuzz.errors import CompatfuzzError

        print("failed" if isinstance(exc, CompatfuzzError) and not getattr(
            exc, "setup_error", False) else f"unknown: {type(exc).__name__}: {exc}")
    else:
        print("passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
