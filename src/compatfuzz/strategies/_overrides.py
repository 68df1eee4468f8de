"""Override registry: the Kubernetes "custom fuzzer funcs", for schemas.

A user replaces the strategy for a ``format``, a definition name or a field path, or keeps
the default and *patches* what it drew (``patch(value, draw) -> value``), which is how
Kubernetes fuzzers fix up invariants the schema cannot express. One global registry
(``register_*``) plus per-call :class:`Overrides`; per-call entries win.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument, UnsupportedRuleWarning

__all__ = [
    "Override",
    "Overrides",
    "clear_registry",
    "register_definition",
    "register_format",
    "register_path",
]

Patch = Callable[[Any, st.DrawFn], Any]
#: A factory gets the schema node and the default strategy and returns a strategy, or
#: ``NotImplemented`` to keep the default (e.g. when the node is not the shape it handles).
Factory = Callable[[Mapping[str, Any], "st.SearchStrategy[Any]"], Any]


@dataclass(frozen=True)
class Override:
    """One registered replacement: a strategy, a factory, or a patch of the default."""

    strategy: st.SearchStrategy[Any] | None = None
    factory: Factory | None = None
    patch: Patch | None = None


def _make(what: str, key: str, strategy: Any, patch: Any) -> Override:
    if (strategy is None) == (patch is None):
        raise InvalidArgument(
            f"register {what} {key!r} with exactly one of strategy= or patch=, got "
            f"strategy={strategy!r}, patch={patch!r}; use patch= to draw the default value "
            "and modify it"
        )
    if patch is not None:
        if not callable(patch):
            raise InvalidArgument(
                f"Expected a callable patch(value, draw) but got patch={patch!r} "
                f"(type={type(patch).__name__})"
            )
        return Override(patch=patch)
    if isinstance(strategy, st.SearchStrategy):
        return Override(strategy=strategy)
    if callable(strategy):
        return Override(factory=strategy)
    raise InvalidArgument(
        f"Expected a SearchStrategy or a factory (node, default) -> SearchStrategy but got "
        f"strategy={strategy!r} (type={type(strategy).__name__}); wrap a constant value "
        "with hypothesis.strategies.just()"
    )


def _check_key(what: str, key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidArgument(
            f"Expected a non-empty string {what} but got {key!r} (type={type(key).__name__})"
        )
    return key


_INDEX = re.compile(r"\[\d+\]")


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``*`` matches within one field name, ``**`` across fields, ``[*]`` any list index."""
    out = []
    i = 0
    glob = _INDEX.sub("[*]", glob)
    while i < len(glob):
        if glob.startswith("[*]", i):
            out.append(re.escape("[*]"))
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^.\[]*")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


@dataclass
class Overrides:
    """Per-call overrides for :func:`~compatfuzz.strategies.from_schema`.

    Paths are Kubernetes-style field paths relative to the root object: ``*`` matches within
    one field name, ``**`` across fields, ``[*]`` (or any ``[N]``) any list index:
    ``"spec.template.spec.containers[*].image"``, ``"metadata.*"``, ``"**.image"``.
    Each method returns ``self`` so calls chain.
    """

    formats: dict[str, Override] = field(default_factory=dict)
    definitions: dict[str, Override] = field(default_factory=dict)
    paths: list[tuple[str, Override]] = field(default_factory=list)

    def format(self, name: str, strategy: Any = None, *, patch: Patch | None = None) -> Overrides:
        """Use ``strategy`` (or patch the default) for every string with ``format: name``."""
        self.formats[_check_key("format name", name)] = _make("format", name, strategy, patch)
        return self

    def definition(
        self, name: str, strategy: Any = None, *, patch: Patch | None = None
    ) -> Overrides:
        """Use ``strategy`` (or patch the default) wherever ``$ref`` names definition ``name``."""
        key = _check_key("definition name", name)
        self.definitions[key] = _make("definition", key, strategy, patch)
        return self

    def path(self, glob: str, strategy: Any = None, *, patch: Patch | None = None) -> Overrides:
        """Use ``strategy`` (or patch the default) at field paths matching ``glob``."""
        key = _check_key("path glob", glob)
        if key.startswith(("$", ".")):
            raise InvalidArgument(
                f"path globs are relative to the root object, got {glob!r}; "
                f"write {key.lstrip('$.')!r}"
            )
        self.paths.append((key, _make("path", key, strategy, patch)))
        return self

    def merged_over(self, base: Overrides) -> Overrides:
        """Return overrides where entries of ``self`` win over ``base``."""
        return Overrides(
            formats={**base.formats, **self.formats},
            definitions={**base.definitions, **self.definitions},
            paths=[*self.paths, *base.paths],
        )

    def for_path(self, path: str) -> Override | None:
        if not self.paths:
            return None
        normal = _INDEX.sub("[*]", path)
        for glob, override in self.paths:
            if _glob_regex(glob).fullmatch(normal):
                return override
        return None

    def __bool__(self) -> bool:
        return bool(self.formats or self.definitions or self.paths)


_GLOBAL = Overrides()


def register_format(name: str, strategy: Any = None, *, patch: Patch | None = None) -> None:
    """Register a strategy (or patch) for ``format: name`` in every later ``from_schema``."""
    _GLOBAL.format(name, strategy, patch=patch)


def register_definition(name: str, strategy: Any = None, *, patch: Patch | None = None) -> None:
    """Register a strategy (or patch) for a definition name in every later ``from_schema``."""
    _GLOBAL.definition(name, strategy, patch=patch)


def register_path(glob: str, strategy: Any = None, *, patch: Patch | None = None) -> None:
    """Register a strategy (or patch) for a field-path glob in every later ``from_schema``."""
    _GLOBAL.path(glob, strategy, patch=patch)


def clear_registry() -> None:
    """Forget every globally registered override (for test isolation)."""
    _GLOBAL.formats.clear()
    _GLOBAL.definitions.clear()
    _GLOBAL.paths.clear()


def global_overrides() -> Overrides:
    return _GLOBAL


def rare_values_warning(head: str, where: str) -> UnsupportedRuleWarning:
    """``head`` (why values at ``where`` are rare) with its fix: an override by path.

    The warning also carries ``without_overrides``, the same news for a command that takes
    no overrides (``diff`` draws its witnesses from the schemas alone), so the CLI does not
    point there at a ``[api.overrides]`` table it would not read."""
    warning = UnsupportedRuleWarning(
        f"{head}; add an override: in compatfuzz.toml, [api.overrides] \"{where}\" = "
        "{ values = [...valid values...] }, or in Python from_schema(schema, "
        f"overrides=Overrides().path({where!r}, st.sampled_from([...valid values...])))")
    warning.without_overrides = (  # type: ignore[attr-defined]
        f"{head}; witnesses that need a value there are rarely found (diff draws from the "
        "schemas alone: [api.overrides] is for fuzz and pytest)")
    return warning
