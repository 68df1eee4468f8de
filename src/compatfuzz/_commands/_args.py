"""Argument types the commands share: a seed and a count, bounded where they are read.

Why bounds: a 5,000-digit ``--seed`` reached Hypothesis (or Python's int parser, whose
message quoted all 5,000 digits), and ``sample -n 10**20`` streams until killed; a
value past the bound is a usage error (exit 2) naming it.
"""

from __future__ import annotations

import argparse

__all__ = ["SAMPLE_MAX", "SEED_DIGITS", "parse_count", "parse_seed"]

#: the most digits of a ``--seed`` (2**128 has 39)
SEED_DIGITS = 39
#: the most objects ``compatfuzz sample -n`` prints
SAMPLE_MAX = 1_000_000


def parse_seed(text: str) -> int:
    """A ``--seed``: an integer of at most :data:`SEED_DIGITS` digits."""
    digits = text.strip().lstrip("+-")
    if len(digits) > SEED_DIGITS:
        raise argparse.ArgumentTypeError(
            f"expected a seed of at most {SEED_DIGITS} digits, got one of {len(digits)} "
            f"({text[:20]!r}...); any integer below 2**128 replays a run")
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text[:40]!r}") from None


def parse_count(text: str, most: int = SAMPLE_MAX) -> int:
    """A count from 1 to ``most``."""
    try:
        value = int(text) if len(text) <= 20 else most + 1
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text[:40]!r}")
    if value > most:
        raise argparse.ArgumentTypeError(f"expected at most {most:,}, got {text[:40]!r}")
    return value
