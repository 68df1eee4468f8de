"""A run's migration coverage: which of an API's migration functions ran, where (a route or
a schema) and how often, and which never ran. Only APIs that have migration code of their
own have rows (a Cadwyn bundle: ``Suite.migration_code``); the terminal, the JSON report and
the HTML report show the same rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["migration_summary", "never_ran"]


def migration_summary(known: Sequence[Mapping[str, Any]], results: Iterable[Any]
                      ) -> list[dict[str, Any]]:
    """One row per migration of ``known`` (``RunStarted.migrations``): ``api``,
    ``migration``, ``calls`` (0: never ran), ``where`` (``{route or schema: calls}``) and
    ``units`` (the ids of the units that ran it), in the APIs' own order."""
    rows: dict[tuple[str, str], dict[str, Any]] = {
        (k["api"], k["migration"]): {"api": k["api"], "migration": k["migration"],
                                     "calls": 0, "where": {}, "units": []}
        for k in known}
    for result in results:
        for migration, where, calls in getattr(result, "migrations", ()) or ():
            row = rows.setdefault((result.unit.api, migration), {
                "api": result.unit.api, "migration": migration, "calls": 0, "where": {},
                "units": []})
            row["calls"] += calls
            row["where"][where] = row["where"].get(where, 0) + calls
            if result.unit.id not in row["units"]:
                row["units"].append(result.unit.id)
    return list(rows.values())


def never_ran(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows of migrations no example reached."""
    return [row for row in rows if not row["calls"]]


def text_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """``shop: SplitName.split_name (version 2023-06-01): 300 calls (POST /customers 200,
    schema Customer 100)``, one line per migration that ran."""
    out = []
    for row in rows:
        if not row["calls"]:
            continue
        where = ", ".join(f"{w} {n}" for w, n in sorted(row["where"].items(),
                                                         key=lambda kv: (-kv[1], kv[0])))
        out.append(f"{row['api']}: {row['migration']}: {row['calls']} call"
                   f"{'s' if row['calls'] != 1 else ''} ({where})")
    return out
