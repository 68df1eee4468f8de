"""How a property judges two objects and tells a difference: semantic equality by the
version's schema (``compatfuzz.semantic``) less what the API's accept entries and stash
annotations excuse, the field-path diff rendered for people and for JSON, and which
API-server steps touched the changed fields."""

from __future__ import annotations

import json
from typing import Any

from compatfuzz.errors import NotEquivalent
from compatfuzz.roundtrip._check._accept import (
    accepted_changes,
    strip_stash,
)
from compatfuzz.roundtrip._check._model import API, Kind


def diff_to_json(changes: Any) -> list[dict[str, Any]]:
    """Render a ``semantic.diff`` result as JSON-safe dicts (path, kind, old, new)."""
    out = []
    for change in changes or ():
        row = {}
        for attr in ("path", "kind", "old", "new"):
            value = getattr(change, attr, None)
            if attr == "kind" and value is not None:
                value = str(getattr(value, "value", value))
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                value = repr(value)
            row[attr] = value
        out.append(row)
    return out


def literal_diff(old: Any, new: Any, path: str = "") -> list[Any]:
    """The exact differences between two JSON values as ``semantic.Change`` rows.

    Unlike ``semantic.diff`` nothing is equal by meaning: ``[]`` and an absent key differ,
    as do ``1`` and ``1.0`` and two orders of a list.  A key present on one side only is
    ``lost`` or ``added`` (its other side is ``None``); other differences are ``changed``
    or ``type-changed``.
    """
    from compatfuzz.semantic import Change, ChangeKind
    from compatfuzz.semantic._diff import join_name

    if isinstance(old, dict) and isinstance(new, dict):
        out: list[Any] = []
        for key in old:
            where = join_name(path, key)
            if key not in new:
                out.append(Change(where, ChangeKind.LOST, old[key], None, "key removed"))
            else:
                out.extend(literal_diff(old[key], new[key], where))
        out.extend(Change(join_name(path, key), ChangeKind.ADDED, None, new[key], "key added")
                   for key in new if key not in old)
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        for i, (x, y) in enumerate(zip(old, new, strict=False)):
            out.extend(literal_diff(x, y, f"{path}[{i}]"))
        out.extend(Change(f"{path}[{i}]", ChangeKind.LOST, old[i], None, "item removed")
                   for i in range(len(new), len(old)))
        out.extend(Change(f"{path}[{i}]", ChangeKind.ADDED, None, new[i], "item added")
                   for i in range(len(old), len(new)))
        return out
    if type(old) is type(new) and old == new:
        return []
    kind = ChangeKind.CHANGED if type(old) is type(new) else ChangeKind.TYPE_CHANGED
    return [Change(path, kind, old, new)]


def render_changes(changes: Any, limit: int = 20) -> str:
    """``semantic.diff`` changes as indented lines, ``  path: kind: old -> new``.

    Each value is cut to ``MESSAGE_VALUE_LIMIT`` characters of JSON (the counterexample
    file's ``diff`` keeps it whole): a 10 MB value once made the message, and from it the
    report, 10 MB a copy.
    """
    from compatfuzz.roundtrip._text import MESSAGE_VALUE_LIMIT, human_size

    def show(value: Any) -> str:
        text = json.dumps(value)
        if len(text) <= MESSAGE_VALUE_LIMIT:
            return text
        return (f"{text[:MESSAGE_VALUE_LIMIT]} ... {human_size(len(text) - MESSAGE_VALUE_LIMIT)}"
                " more (the whole value is in the counterexample's diff)")

    rows = diff_to_json(changes)
    lines = []
    for change, row in zip(changes or (), rows[:limit], strict=False):
        old, new = row["old"], row["new"]
        detail = getattr(change, "detail", "")
        if detail in ("key removed", "item removed"):
            text = f"{show(old)} -> (absent: {detail})"
        elif detail in ("key added", "item added"):
            text = f"(absent) -> {show(new)} ({detail})"
        else:
            text = f"{show(old)} -> {show(new)}"
        lines.append(f"  {row['path'] or '<root>'}: {row['kind']}: {text}")
    if len(rows) > limit:
        lines.append(f"  ... and {len(rows) - limit} more changes")
    return "\n".join(lines)


def _related(a: str, b: str) -> bool:
    """Whether two field paths name the same field or one lies inside the other."""
    if a == b:
        return True
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return long.startswith(short) and long[len(short)] in ".["


def _explain(changes: Any, trace: list[Any] | None) -> str:
    """The API-server steps that touched the changed fields, one line each."""
    if trace is None:
        return ""
    paths = [row["path"] or "" for row in diff_to_json(changes)]
    lines: list[str] = []
    for step in trace:
        # a restored metadata field is always worth seeing: it is where data hides
        if step.what == "restored" or any(_related(step.path, p) for p in paths):
            text = "  " + step.describe()
            if text not in lines:
                lines.append(text)
    if not lines:
        # a converter that writes a field under another name loses it to pruning there
        pruned = [f"  {step.describe()}" for step in trace if step.what == "pruned"]
        text = "\n  (no API-server step touched these fields: the converters changed them)"
        if pruned:
            text += ("\nwhat the API server pruned on the way (a field written under another "
                     "name?):\n" + "\n".join(dict.fromkeys(pruned[:10])))
        return text
    return "\nwhat the API server did to these fields:\n" + "\n".join(lines[:20])


def expect_equal(expected: Any, actual: Any, kind: Kind, version: str, what: str, *,
                  trace: list[Any] | None = None, api: API | None = None) -> None:
    from compatfuzz.semantic import diff, equal

    schema = kind.schema(version)
    options = api.semantic_options if api is not None else {}
    if api is not None:
        expected = strip_stash(expected, api.stash_annotations)
        actual = strip_stash(actual, api.stash_annotations)
    if equal(expected, actual, schema=schema, **options):
        return
    changes, accepted = accepted_changes(diff(expected, actual, schema=schema, **options))
    if not changes:
        return
    raise NotEquivalent(f"{what}:\n{render_changes(changes)}{_accepted_note(accepted)}"
                        f"{_explain(changes, trace)}{_stash_hint(changes)}", diff=changes)


def _stash_hint(changes: Any) -> str:
    """A fix for differences only in annotations: they may be a converter's stash."""
    paths = [str(getattr(c, "path", "")) for c in changes]
    if paths and all(p == "metadata" or p.startswith(("metadata.annotations",))
                     for p in paths):
        return ("\n  (only annotations differ: if the converters keep their own data there, "
                "name its key prefix in stash_annotations and no property compares it)")
    return ""


def _accepted_note(accepted: int) -> str:
    return (f"\n  ({accepted} more difference{'s' if accepted > 1 else ''} accepted by the "
            "API's accept entries)") if accepted else ""


def error_path(error: Any) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"
