#!/usr/bin/env bash
# Create benchmarks/.peer-venv: the peer engine (hypothesis-jsonschema) in its own venv,
# pinned to the Hypothesis release the issue's reference figures were measured with.
# Idempotent: re-running only (re)installs when the pins are not already satisfied.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${PEER_VENV:-$here/.peer-venv}"
python="${PYTHON:-python3}"
pins=("hypothesis==6.170.9" "hypothesis-jsonschema==0.23.1" "jsonschema")

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi

if "$venv/bin/python" - <<'PY' 2>/dev/null; then
from importlib.metadata import version
import hypothesis_jsonschema, jsonschema  # noqa: F401
assert version("hypothesis") == "6.170.9", version("hypothesis")
assert version("hypothesis-jsonschema") == "0.23.1", version("hypothesis-jsonschema")
PY
    echo "peer venv ready: $venv"
    exit 0
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c "import hypothesis, hypothesis_jsonschema; print('peer venv ready:', '$venv', 'hypothesis', hypothesis.__version__)"
