"""Split one nightly job's units across N machines.

A job outgrows one machine; teams then run N copies on engines they already have: a CI
matrix (``--shard K/N``), a Kubernetes Indexed Job (``JOB_COMPLETION_INDEX`` with
``--shards N``) or pytest-xdist.  Every copy must compute the same split from the same
config with no coordinator, so :func:`split` is a pure function of the planned units,
their expected cost and N: longest-processing-time-first onto the least-loaded shard,
ties broken by unit id and then by shard index (Graham's LPT rule; Indexed Jobs give no
other channel between pods than the shared example database).

``K`` is 1-based on the command line, as in Playwright's and Jest's ``--shard=1/3``;
``JOB_COMPLETION_INDEX`` is 0-based, as Kubernetes sets it
(``pkg/controller/job/indexed_job_utils.go``, ``batch.kubernetes.io/job-completion-index``).

When there are fewer units than shards, the spare shards are not left idle: shard ``k``
runs unit ``k mod U`` again as copy ``k div U``.  Copies differ by seed (:func:`shard_seed`),
so N shards explore N times the space, never the same examples.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from compatfuzz.errors import InvalidArgument

__all__ = ["ENV_INDEX", "MAX_SHARDS", "Shard", "assign", "check_count", "parse_shard",
           "shard_from_env", "shard_seed", "split"]

#: The variable a Kubernetes Indexed Job sets in each pod (0-based).
ENV_INDEX = "JOB_COMPLETION_INDEX"

#: The most shards a job may have (``--shard K/N``, ``--shards N``, a report's
#: ``shard.count``).  A job of more shards than this is a typo or an attack: a report of
#: ``1/1000000`` made ``report merge`` build a line per missing shard (800 MB).
MAX_SHARDS = 10_000

_SHARD = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")  # ASCII digits: \d takes Arabic-Indic ones


def _digits(text: str) -> str:
    return text if len(text) <= 30 else f"{text[:30]}... ({len(text)} digits)"


def check_count(count: int | str, option: str) -> None:
    """Refuse a shard count above :data:`MAX_SHARDS` (``option`` names where it was read).

    Raises:
        InvalidArgument: ``count > MAX_SHARDS``.
    """
    # compared as digits: int() of 5,000 digits is a ValueError (sys.int_info)
    text = str(count).lstrip("0") or "0"
    if len(text) > len(str(MAX_SHARDS)) or int(text) > MAX_SHARDS:
        raise InvalidArgument(
            f"Expected {option} with N <= {MAX_SHARDS:,} shards but got N = "
            f"{_digits(text)}; a job has at most {MAX_SHARDS:,} shards (use fewer, bigger "
            "shards)")

T = TypeVar("T")


@dataclass(frozen=True, order=True)
class Shard:
    """Shard ``number`` of ``count`` (``number`` is 1-based, as written: ``2/4``)."""

    number: int
    count: int

    def __post_init__(self) -> None:
        if not (isinstance(self.number, int) and isinstance(self.count, int)
                and 1 <= self.number <= self.count <= MAX_SHARDS):
            raise InvalidArgument(
                f"Expected a shard K/N with 1 <= K <= N but got {self.number}/{self.count}; "
                "shards are numbered from 1, as in --shard 1/4 ... --shard 4/4"
            )

    @property
    def index(self) -> int:
        """0-based, as ``JOB_COMPLETION_INDEX``."""
        return self.number - 1

    def __str__(self) -> str:
        return f"{self.number}/{self.count}"

    def to_json(self) -> dict[str, int]:
        return {"number": self.number, "count": self.count}


def parse_shard(text: str, *, option: str = "--shard") -> Shard:
    """``"2/4"`` -> ``Shard(2, 4)``; ``option`` is the flag the error names (pytest's is
    ``--compatfuzz-shard``, and its users never typed ``--shard``).

    Raises:
        InvalidArgument: not ``K/N`` with ``1 <= K <= N``.
    """
    match = _SHARD.fullmatch(text or "")
    if match is None:
        shown = repr(text[:40]) + ("..." if len(text or "") > 40 else "")
        raise InvalidArgument(
            f"Expected {option} K/N (like 2/4: the second of four shards) but got {shown}"
        )
    check_count(match.group(2), f"{option} K/N")
    if len(match.group(1).lstrip("0")) > len(str(MAX_SHARDS)):
        raise InvalidArgument(f"Expected {option} K/N with 1 <= K <= N but got K = "
                              f"{_digits(match.group(1))}")
    number, count = int(match.group(1)), int(match.group(2))
    if not 1 <= number <= count:
        raise InvalidArgument(
            f"Expected {option} K/N with 1 <= K <= N but got {number}/{count}; shards are "
            f"numbered from 1, as in {option} 1/4 ... {option} 4/4"
        )
    return Shard(number, count)


def shard_from_env(count: int, environ: Mapping[str, str] | None = None) -> Shard:
    """The shard of this pod of an Indexed Job with ``completions: count``.

    Raises:
        InvalidArgument: ``JOB_COMPLETION_INDEX`` unset, not a number, or not below
            ``count`` (the Job's ``completions`` and ``--shards`` disagree).
    """
    env = os.environ if environ is None else environ
    if not isinstance(count, int) or count < 1:
        raise InvalidArgument(f"Expected --shards N >= 1 but got {count!r}")
    check_count(count, "--shards N")
    raw = env.get(ENV_INDEX)
    if raw is None:
        raise InvalidArgument(
            f"--shards {count} reads this shard's index from {ENV_INDEX}, which is not set; "
            f"run it in a Kubernetes Indexed Job (completionMode: Indexed) or pass "
            f"--shard K/{count} instead"
        )
    if not re.fullmatch(r"[0-9]+", raw.strip()) or len(raw.strip()) > len(str(MAX_SHARDS)):
        raise InvalidArgument(f"Expected {ENV_INDEX} to be a number 0..{count - 1} but got "
                              f"{raw[:40]!r}{'...' if len(raw) > 40 else ''}")
    index = int(raw)
    if index >= count:
        raise InvalidArgument(
            f"{ENV_INDEX}={index} but --shards {count}: the Job's completions and --shards "
            f"must be the same number (indexes run 0..{count - 1})"
        )
    return Shard(index + 1, count)


def _keyed(items: Sequence[T], key: Callable[[T], str]) -> list[tuple[str, T]]:
    """``items`` sorted by ``key`` (so every shard sees them in one order).

    Raises:
        InvalidArgument: two items with the same key.
    """
    keyed = sorted(((key(item), item) for item in items), key=lambda pair: pair[0])
    for (a, _), (b, _) in itertools.pairwise(keyed):
        if a == b:
            raise InvalidArgument(f"two units have the same id {a!r}; a split needs ids "
                                  "that are unique")
    return keyed


def assign(items: Sequence[T], count: int, *, key: Callable[[T], str],
           cost: Callable[[T], float] | None = None) -> dict[str, int]:
    """Every item's owning shard (1-based number) in a job of ``count`` shards: the one
    that runs it as copy 0.  ``cost`` (default 1 each) is an item's expected cost; shards
    get close to equal total cost (LPT: within 4/3 of the best split).  With fewer items
    than shards, item ``j`` (in key order) is shard ``j+1``'s.

    Raises:
        InvalidArgument: two items with the same key, or a cost that is not finite and
            >= 0.
    """
    keyed = _keyed(items, key)
    if len(keyed) < count:
        return {k: j + 1 for j, (k, _) in enumerate(keyed)}
    weight = (lambda item: 1.0) if cost is None else cost
    costs = {k: float(weight(item)) for k, item in keyed}
    for k, c in costs.items():
        if not c >= 0 or c == float("inf"):
            raise InvalidArgument(f"Expected a finite cost >= 0 for unit {k!r} but got {c!r}")
    loads = [0.0] * count
    owners: dict[str, int] = {}
    for k, _ in sorted(keyed, key=lambda pair: (-costs[pair[0]], pair[0])):
        target = min(range(count), key=lambda i: (loads[i], i))
        loads[target] += costs[k] if costs[k] > 0 else 1e-9
        owners[k] = target + 1
    return owners


def split(items: Sequence[T], shard: Shard, *, key: Callable[[T], str],
          cost: Callable[[T], float] | None = None) -> list[tuple[T, int]]:
    """The ``(item, copy)`` pairs shard ``shard`` runs, in the order given.

    Every shard computes the same assignment (:func:`assign`) from the same ``items`` (in
    any order: they are sorted by ``key``), so together the shards run each item exactly
    once when there are at least as many items as shards, and every shard runs something
    when there are fewer (copy ``c > 0`` is a re-run with another seed).

    Raises:
        InvalidArgument: two items with the same key, or a bad cost.
    """
    keyed = _keyed(items, key)
    if not keyed:
        return []
    if len(keyed) < shard.count:
        _, item = keyed[shard.index % len(keyed)]
        return [(item, shard.index // len(keyed))]
    owners = assign(items, shard.count, key=key, cost=cost)
    return [(item, 0) for item in items if owners[key(item)] == shard.number]


def shard_seed(night: str, shard: Shard, run_seed: int | None = None) -> int:
    """The run seed of ``shard`` on ``night`` (any label: a date, a CI run id).

    Different for every shard and every night, the same for a rerun of one shard on one
    night, so a shard's examples can be replayed with ``--seed`` and N shards never draw
    the same ones.  With ``run_seed`` (``--seed S``) the night is ignored: S replays the
    whole job, each shard still distinct.
    """
    base = f"seed:{run_seed}" if run_seed is not None else f"night:{night}"
    digest = hashlib.sha256(f"compatfuzz-shard:{base}:{shard}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
