"""``[diff]`` in ``compatfuzz.toml``: a project's policy written once.

A team that gates releases on ``compatfuzz diff`` states its promise in the repository, not
in every CI script: ``policy`` (a profile, ``crdify:FILE`` or a policy FILE) and
``ignore`` (an ignore file), found as ``fuzz`` finds its config (the working folder and its
parents; ``[tool.compatfuzz.diff]`` in ``pyproject.toml``), and ``fail_on_impact`` (an
impact level, as ``--fail-on-impact``: ``"reads"`` makes loosenings fail). Paths are
relative to the config file. The command line wins: ``--policy``, ``--ignore`` and
``--fail-on-impact`` replace the config's.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compatfuzz.errors import SchemaLoadError
from compatfuzz.roundtrip._check._config import _table

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["DiffSettings", "diff_settings"]

_KEYS = ("policy", "ignore", "fail_on_impact")
_EXAMPLE = ('write a table, e.g.\n  [diff]\n  policy = "gateway-api"   # or '
            '"crdify:crdify.yaml", or a policy file\n  ignore = "compat-ignore.yaml"')


@dataclass(frozen=True)
class DiffSettings:
    """What ``[diff]`` says; ``None`` where it says nothing.

    ``policy`` and ``ignore`` are ready for ``--policy``/``--ignore`` (paths resolved
    against the config's folder), ``fail_on_impact`` for ``--fail-on-impact`` (an
    :class:`~compatfuzz.compat.Impact` value); ``source`` names the config and table for
    messages.
    """

    policy: str | None = None
    ignore: str | None = None
    source: str = ""
    fail_on_impact: str | None = None


def _resolve(key: str, value: str, base: Path, source: str, pointer: str) -> str:
    """``value`` with its file made relative to the config's folder, which must hold it."""
    from compatfuzz.compat._profiles import PROFILES

    if key == "policy" and value in PROFILES:
        return value
    prefix = "crdify:" if key == "policy" and value.startswith("crdify:") else ""
    file = base / value[len(prefix):]
    if not file.is_file():
        close = difflib.get_close_matches(value, list(PROFILES), n=1) if key == "policy" \
            else []
        known = f"a built-in profile ({', '.join(PROFILES)}), " if key == "policy" else ""
        raise SchemaLoadError(
            f"{key} {value!r}: no such file (looked for {file})", source=source,
            pointer=pointer, hint=(f"did you mean {close[0]!r}? " if close else "")
            + f"give {known}a file path relative to the config's folder")
    return prefix + str(file)


def diff_settings(path: str | Path) -> DiffSettings:
    """Read the ``[diff]`` table of a ``compatfuzz.toml`` or ``pyproject.toml``.

    A config without the table gives empty settings: ``[[api]]`` tables belong to
    ``fuzz`` and are not read here, so a diff never fails on a converter it does not run.

    Raises:
        SchemaLoadError: unreadable TOML, an unknown key or a value that is not a
            string (the message names the file, the key and the fix).
    """
    from compatfuzz.schema._read import read_text

    path = Path(path)
    source = str(path)
    try:
        doc = tomllib.loads(read_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaLoadError(f"cannot read the config: {exc}", source=source,
                              hint="check the path (--config), or pass --config none"
                              ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SchemaLoadError(f"invalid TOML: {exc}", source=source,
                              hint="fix the TOML at that line") from None
    table, prefix = _table(doc, path)
    raw: Any = (table or {}).get("diff")
    if raw is None:
        return DiffSettings(source=source)
    pointer = f"{prefix}/diff"
    if not isinstance(raw, Mapping):
        raise SchemaLoadError("diff must be a table", source=source, pointer=pointer,
                              hint=_EXAMPLE)
    for key in raw:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            raise SchemaLoadError(
                f"unknown key {key!r}", source=source, pointer=f"{pointer}/{key}",
                hint=(f"did you mean {close[0]!r}? " if close else "")
                + "[diff] takes: " + ", ".join(_KEYS))
    values: dict[str, str] = {}
    for key in _KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise SchemaLoadError(f"{key} must be a non-empty string, got {value!r}",
                                  source=source, pointer=f"{pointer}/{key}", hint=_EXAMPLE)
        if key == "fail_on_impact":
            values[key] = _impact(value, source, f"{pointer}/{key}")
            continue
        values[key] = _resolve(key, value, path.parent, source, f"{pointer}/{key}")
    where = f"{source} [{'tool.compatfuzz.' if prefix else ''}diff]"
    return DiffSettings(policy=values.get("policy"), ignore=values.get("ignore"),
                        source=where, fail_on_impact=values.get("fail_on_impact"))


def _impact(value: str, source: str, pointer: str) -> str:
    """``fail_on_impact``: one of the impact levels ``--fail-on-impact`` takes."""
    from compatfuzz.compat import Impact

    levels = [i.value for i in Impact]
    if value not in levels:
        close = difflib.get_close_matches(value, levels, n=1)
        raise SchemaLoadError(
            f"unknown fail_on_impact {value!r}", source=source, pointer=pointer,
            hint=(f"did you mean {close[0]!r}? " if close else "")
            + "use one of " + ", ".join(levels) + ' (e.g. fail_on_impact = "reads": '
            "loosenings fail too)")
    return value
