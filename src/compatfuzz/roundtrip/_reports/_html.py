"""The HTML run report (``compatfuzz fuzz --html report.html``): one self-contained page.

Why a page as well as ``report.json``: a nightly job's reader wants to see at a glance which
version pairs hold and which do not, and then the one counterexample that matters, without
a JSON viewer.  The page holds, per API and property, a matrix of version pairs
(green: holds, red: failed, amber: error, grey: not run) with examples and leaf-path
coverage; each failure with its minimal counterexample, field-path diff, the user's
traceback, the converter's output and the commands that replay it; and the run's settings.

It is rendered from the same document as ``report.json`` (see ``_report``), rewritten with
it, so a run killed half-way leaves a page that says so.  Inline CSS only: no script and
nothing fetched from the network, so it opens anywhere, from a CI artifact too.
"""

from __future__ import annotations

import html
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from compatfuzz.roundtrip._events import Unit
from compatfuzz.roundtrip._reports._bounds import bounded_counterexample

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;
color:#1b1f24}h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}
h3{font-size:15px;margin:18px 0 6px}
.status{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}
.s-passed{background:#1a7f37}.s-failed{background:#cf222e}.s-error{background:#bc4c00}
.s-running,.s-interrupted,.s-incomplete,.s-not-run,.s-skipped{background:#6e7781}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}
td.cell{min-width:110px;font-size:12px}td.passed{background:#dafbe1}td.failed{background:#ffebe9;
color:#82071e;font-weight:600}td.error{background:#fff1e5}td.not-run,td.skipped,td.running,
td.interrupted{background:#eaeef2;color:#57606a}td.same{background:#fff}
td.cell a{color:inherit}pre{background:#f6f8fa;border:1px solid #d0d7de;padding:8px;overflow:auto;
max-height:420px;font-size:12px}code{font-size:12px}.failure{border-left:4px solid #cf222e;
padding:2px 0 2px 14px;margin:18px 0}.muted{color:#57606a}dl{display:grid;
grid-template-columns:max-content auto;gap:2px 14px}dt{font-weight:600}dd{margin:0}
"""

_LABEL = {"passed": "holds", "failed": "FAILED", "error": "error", "skipped": "skipped",
          "interrupted": "stopped", "running": "running", "not-run": "not run"}


def _e(value: Any) -> str:
    """HTML-escaped, with control characters shown as ``\x1b``: a converter's message
    reaches the page as text, never as raw escape bytes."""
    from compatfuzz.roundtrip._text import printable

    return html.escape(printable(str(value)), quote=True)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _anchor(unit_id: str) -> str:
    return "u-" + "".join(c if c.isalnum() else "-" for c in unit_id)


def _cell(row: Mapping[str, Any] | None, state: str) -> str:
    label = _LABEL.get(state, state)
    if row is None:
        return f'<td class="cell {state}">{_e(label)}</td>'
    n = row.get("examples", 0)
    parts = [f"{n} example{'' if n == 1 else 's'}"]
    cov = row.get("coverage")
    if cov and cov.get("leaf_paths"):
        parts.append(f"{cov.get('ratio', 0) * 100:.0f}% of {cov['leaf_paths']} leaf paths")
    text = _e(label) + "<br>" + "<br>".join(_e(p) for p in parts)
    if state in ("failed", "error"):
        text = f'<a href="#{_anchor(row["id"])}">{text}</a>'
    return f'<td class="cell {state}" title="{_e(row["id"])}">{text}</td>'


def _matrices(planned: Sequence[Unit], rows: Mapping[str, Mapping[str, Any]],
              states: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    apis: dict[tuple[str, str], dict[str, list[Unit]]] = {}
    for unit in planned:
        apis.setdefault((unit.api, unit.kind), {}).setdefault(str(unit.property), []).append(
            unit)
    for (api, kind), props in apis.items():
        title = api if all(not u.show_kind for p in props.values() for u in p) else (
            f"{api} / {kind}")
        out.append(f"<h2>{_e(title)}</h2>")
        for prop, units in props.items():
            out.append(f"<h3>{_e(prop)}</h3>")
            if all(len(u.versions) == 2 for u in units):
                versions = list(dict.fromkeys(v for u in units for v in u.versions))
                by_pair = {u.versions: u for u in units}
                out.append('<table class="matrix"><tr><th>from \\ to</th>'
                           + "".join(f"<th>{_e(v)}</th>" for v in versions) + "</tr>")
                for a in versions:
                    cells = []
                    for b in versions:
                        pair = by_pair.get((a, b))
                        if pair is None:
                            cells.append('<td class="cell same"></td>')
                        else:
                            cells.append(_cell(rows.get(pair.id), states[pair.id]))
                    out.append(f"<tr><th>{_e(a)}</th>{''.join(cells)}</tr>")
                out.append("</table>")
            else:
                out.append('<table class="matrix"><tr>' + "".join(
                    f"<th>{_e(' -> '.join(u.versions))}</th>" for u in units) + "</tr><tr>"
                    + "".join(_cell(rows.get(u.id), states[u.id]) for u in units)
                    + "</tr></table>")
    return out


def _relative(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel


def _failure(row: Mapping[str, Any]) -> list[str]:
    cx = row.get("counterexample") or {}
    if cx and "truncated" not in cx:  # not yet cut to the report limits (pytest's rows)
        cx = bounded_counterexample(cx, row.get("counterexample_file"))
    out = [f'<div class="failure" id="{_anchor(row["id"])}">',
           f"<h3>{_e(row['id'])} <span class=\"status s-{_e(row['status'])}\">"
           f"{_e(row['status'])}</span></h3>"]
    error = cx.get("error") or row.get("message") or ""
    out.append(f"<pre class=\"error\">{_e(error)}</pre>")
    if cx:
        minimal = "minimal counterexample" if cx.get("shrunk", True) else (
            "counterexample (not yet minimal)")
        out.append(f"<p><b>{minimal}</b></p><pre class=\"counterexample\">"
                   f"{_e(_json(cx.get('object')))}</pre>")
        diff = cx.get("diff") or []
        if diff:
            out.append('<table class="diff"><tr><th>field path</th><th>change</th>'
                       "<th>old</th><th>new</th></tr>")
            for change in diff[:50]:
                out.append(f"<tr><td><code>{_e(change.get('path') or '<root>')}</code></td>"
                           f"<td>{_e(change.get('kind'))}</td>"
                           f"<td><code>{_e(json.dumps(change.get('old'), default=str))}</code>"
                           f"</td><td><code>{_e(json.dumps(change.get('new'), default=str))}"
                           "</code></td></tr>")
            out.append("</table>")
        if cx.get("traceback"):
            out.append(f"<p><b>traceback (your code)</b></p><pre>{_e(cx['traceback'])}</pre>")
        if cx.get("output"):
            out.append("<p><b>captured output of the converters on this example</b></p>"
                       f"<pre>{_e(cx['output'])}</pre>")
    replay = []
    if row.get("counterexample_file"):
        # with its config: a replay never loads the config its file names, and without
        # --config it replays against whatever config the folder has ("passes now")
        config = f" --config {shlex.quote(_relative(cx['config']))}" if cx.get("config") \
            else ""
        replay.append(f"compatfuzz fuzz --replay {shlex.quote(row['counterexample_file'])}"
                      f"{config}")
    if cx.get("config"):
        seed = row.get("run_seed")
        replay.append(f"pytest '{_relative(cx['config'])}::{row['id']}'"
                      + (f" --compatfuzz-seed={seed}" if seed is not None else ""))
    if replay:
        out.append('<p><b>replay</b></p><pre class="replay">'
                   + "\n".join(_e(r) for r in replay) + "</pre>")
    out.append("</div>")
    return out


def _accepts(accepted: Sequence[Mapping[str, Any]],
             stale: Sequence[Mapping[str, Any]]) -> list[str]:
    """The accepted differences (entry, why, count, units) and the stale entries."""
    out: list[str] = []
    head = ("<tr><th>API</th><th>property</th><th>versions</th><th>field path</th>"
            "<th>why</th><th>{}</th></tr>")
    if accepted:
        out.append(f'<h2>Accepted differences ({len(accepted)})</h2><table id="accepted">'
                   + head.format("examples (units)"))
        for row in accepted:
            out.append(
                f"<tr><td>{_e(row['api'])}</td><td>{_e(row['property'])}</td>"
                f"<td>{_e(row['versions'])}</td><td><code>{_e(row['path'])}</code></td>"
                f"<td>{_e(row['why'])}</td><td>{_e(row['count'])} "
                f"({_e(', '.join(row['units']))})</td></tr>")
        out.append("</table>")
    if stale:
        out.append(f'<h2>Stale accept entries ({len(stale)})</h2><p class="muted">These '
                   "accepted no difference in the units that ran: remove an entry whose "
                   'difference is gone.</p><table id="stale">' + head.format("units run"))
        for row in stale:
            out.append(
                f"<tr><td>{_e(row['api'])}</td><td>{_e(row['property'])}</td>"
                f"<td>{_e(row['versions'])}</td><td><code>{_e(row['path'])}</code></td>"
                f"<td>{_e(row['why'])}</td><td>{_e(len(row['units']))}</td></tr>")
        out.append("</table>")
    return out


def _migrations(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The migration coverage: each migration, where it ran and how often; one that never
    ran is marked (no example reached it)."""
    if not rows:
        return []
    never = sum(1 for r in rows if not r.get("calls"))
    out = [f'<h2>Migrations ({len(rows)}, {never} never ran)</h2><table id="migrations">'
           "<tr><th>API</th><th>migration</th><th>calls</th><th>where</th></tr>"]
    for row in rows:
        where = ", ".join(f"{w}: {n}" for w, n in sorted((row.get("where") or {}).items()))
        state = "" if row.get("calls") else ' class="cell failed"'
        out.append(f"<tr{state}><td>{_e(row['api'])}</td><td><code>{_e(row['migration'])}"
                   f"</code></td><td>{_e(row.get('calls', 0))}</td><td>"
                   f"{_e(where) if where else 'never ran: no example reached it'}</td></tr>")
    out.append("</table>")
    return out


def render_html(doc: Mapping[str, Any], planned: Sequence[Unit]) -> str:
    """Return the page for a ``report.json`` document and the run's planned units."""
    rows = {u["id"]: u for u in doc.get("units", [])}
    states: dict[str, str] = {}
    running = {r["id"] for r in doc.get("running", [])}
    for unit in planned:
        row = rows.get(unit.id)
        states[unit.id] = (str(row["status"]) if row is not None else
                           "running" if unit.id in running else "not-run")
    status = str(doc.get("status", "running"))
    summary = ", ".join(f"{n} {s}" for s, n in sorted((doc.get("summary") or {}).items())
                        if n)
    not_run = sum(1 for s in states.values() if s == "not-run")
    head = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>compatfuzz run: {_e(status)}</title><style>{_CSS}</style></head><body>",
        f'<h1>compatfuzz run <span class="status s-{_e(status)}" id="run-status">'
        f"{_e(status)}</span></h1>",
        f'<p class="muted">{_e(summary or "nothing finished yet")}'
        + (f"; {not_run} not run" if not_run else "")
        + f" &middot; {len(planned)} units &middot; updated {_e(doc.get('updated', ''))}</p>",
    ]
    body = _matrices(planned, rows, states)
    failures = [r for r in doc.get("units", []) if r.get("status") in ("failed", "error")]
    if failures:
        body.append(f"<h2>Failures ({len(failures)})</h2>")
        for row in failures:
            body += _failure({**row, "run_seed": doc.get("seed")})
    body += _accepts(doc.get("accepted") or [], doc.get("stale_accepts") or [])
    body += _migrations(doc.get("migrations") or [])
    notices = doc.get("notices") or []
    if notices:
        body.append("<h2>Notices</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notices)
                    + "</ul>")
    settings = [("compatfuzz", doc.get("compatfuzz")), ("profile", doc.get("profile")),
                ("seed", doc.get("seed") if doc.get("seed") is not None else "random"),
                ("max_examples", doc.get("max_examples") or "profile"),
                ("duration", f"{doc['duration']:.0f}s" if doc.get("duration") else "none"),
                ("workers", doc.get("workers")), ("database", doc.get("database")),
                ("started", doc.get("started")), ("seconds", doc.get("seconds")),
                ("stop reason", doc.get("stop_reason"))]
    body.append('<h2>Settings</h2><dl id="settings">' + "".join(
        f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in settings if v is not None)
        + "</dl>")
    return "\n".join(head + body + ["</body></html>"]) + "\n"
