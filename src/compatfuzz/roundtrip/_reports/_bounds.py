"""A report's size limits applied to one counterexample: long text, huge values and long
diffs cut, with a pointer to the counterexample file that keeps them whole (the JSON and
HTML reports both show counterexamples through it)."""

from __future__ import annotations

import json
from typing import Any

from compatfuzz.roundtrip._text import (
    REPORT_DIFF_ROWS,
    REPORT_TEXT_LIMIT,
    REPORT_VALUE_LIMIT,
    clip,
)


def _bounded_value(value: Any, full: str | None) -> tuple[Any, bool]:
    """``value``, or its JSON text clipped to ``REPORT_VALUE_LIMIT`` when longer."""
    text = json.dumps(value, default=str)
    if len(text) <= REPORT_VALUE_LIMIT:
        return value, False
    return clip(text, REPORT_VALUE_LIMIT, full), True


def bounded_counterexample(cx: dict[str, Any], full: str | None) -> dict[str, Any]:
    """``cx`` (``Counterexample.to_json()``) cut to the report limits; ``truncated`` lists
    the fields cut (often none), whose full text is in the counterexample file ``full``."""
    out = dict(cx)
    cut: list[str] = []
    for name in ("error", "traceback", "output", "reproduce_failure"):
        text = out.get(name)
        if isinstance(text, str) and len(text) > REPORT_TEXT_LIMIT:
            out[name] = clip(text, REPORT_TEXT_LIMIT, full)
            cut.append(name)
    out["object"], clipped = _bounded_value(out.get("object"), full)
    if clipped:
        cut.append("object")
    diff = out.get("diff") or []
    rows = []
    for change in diff[:REPORT_DIFF_ROWS]:
        row = dict(change)
        for side in ("old", "new"):
            row[side], clipped = _bounded_value(row.get(side), full)
            if clipped and "diff" not in cut:
                cut.append("diff")
        rows.append(row)
    if len(diff) > REPORT_DIFF_ROWS:
        rows.append({"path": None, "kind": "truncated", "old": None, "new": None,
                     "detail": f"... {len(diff) - REPORT_DIFF_ROWS} more changes"
                               + (f"; every change is in {full}" if full else "")})
        if "diff" not in cut:
            cut.append("diff")
    out["diff"] = rows
    out["truncated"] = cut
    return out


