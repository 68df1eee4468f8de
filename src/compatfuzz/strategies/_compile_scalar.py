"""Compiling strings, integers and numbers: edge values mixed in, format overrides honoured.

Why a module of its own: scalar leaves are where the swarm's edge values (``_edges``) and
the user's format overrides (``Overrides().format``, ``register_format``) meet the
schema's own bounds (``_scalars``); which wins, and what a replacement strategy still
has to keep (length and pattern), is decided here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from compatfuzz.strategies import _scalars
from compatfuzz.strategies._compile_base import CompilerBase
from compatfuzz.strategies._compile_cel import Gen, path_text
from compatfuzz.strategies._edges import edged
from compatfuzz.strategies._overrides import rare_values_warning


class ScalarCompiling(CompilerBase):
    """``Compiler``'s scalar methods."""

    def with_edges(self, node: Mapping[str, Any], random: st.SearchStrategy[Any],
                   edges: st.SearchStrategy[Any] | None, family: int) -> Gen:
        """``random`` mixed with the edge values of its class (``_edges``), unless a format
        override owns the node's values."""
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in self.options.overrides.formats:
            return self.formatted(node, random)
        return edged(random, edges, family)

    def formatted(self, node: Mapping[str, Any], default: st.SearchStrategy[Any]) -> Gen:
        """``default``, or what a format override (``Overrides().format``,
        ``register_format``) for the node's format makes of it. Strings go through
        :meth:`compile_string`, which keeps length and pattern on an override."""
        fmt = node.get("format")
        found = self.options.overrides.formats.get(fmt) if isinstance(fmt, str) else None
        if found is None:
            return self.strategy_gen(default)
        if found.strategy is not None:
            return self.strategy_gen(found.strategy)
        if found.factory is not None:
            made = found.factory(node, default)
            return self.strategy_gen(default if made is NotImplemented else made)
        assert found.patch is not None
        patch = found.patch
        return lambda draw, ex: patch(draw(default), draw)

    def compile_string(self, node: Mapping[str, Any], path: tuple[str | int, ...]) -> Gen:
        fmt = node.get("format")
        found = self.options.overrides.formats.get(fmt) if isinstance(fmt, str) else None
        where = path_text(path) or "<root>"

        def warn(reason: str) -> None:
            # a format and a pattern that rarely hold together: say so, never drop the field
            if ("format", where) not in self._warned:
                self._warned.add(("format", where))
                warnings.warn(rare_values_warning(
                    f"{self.schema.name or self.schema.source}: string at {where}: {reason}",
                    where), stacklevel=2)

        default = _scalars.strings_for(node, kubernetes=self.kubernetes, format_override=None,
                                       warn=warn)
        if found is None or found.patch is not None:
            edges, family = _scalars.string_edges_for(node, kubernetes=self.kubernetes)
            return self.with_edges(node, default, edges, family)
        override = found.strategy
        if override is None:
            assert found.factory is not None
            made = found.factory(node, default)
            if made is NotImplemented:
                return self.strategy_gen(default)
            override = made
        # a replacement strategy still gets the node's length and pattern applied
        return self.strategy_gen(_scalars.strings_for(node, kubernetes=self.kubernetes,
                                                      format_override=override))
