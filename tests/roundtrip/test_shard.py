"""The split of a job's units across shards (roundtrip/_engine/_shard.py, issue 21)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip._engine._shard import (
    Shard,
    assign,
    parse_shard,
    shard_from_env,
    shard_seed,
    split,
)

names = st.lists(st.text("abcdefgh", min_size=1, max_size=6), unique=True, max_size=40)
costs = st.dictionaries(st.text("abcdefgh", min_size=1, max_size=6),
                        st.floats(0, 1000, allow_nan=False), max_size=40)


@given(costs, st.integers(1, 12), st.randoms())
def test_every_unit_runs_on_exactly_one_shard_whatever_the_order(table, count, rnd):
    items = list(table)
    shuffled = items[:]
    rnd.shuffle(shuffled)
    runs = []
    for number in range(1, count + 1):
        mine = split(items, Shard(number, count), key=str, cost=table.__getitem__)
        again = split(shuffled, Shard(number, count), key=str, cost=table.__getitem__)
        assert sorted(mine) == sorted(again)  # each pod computes the same split
        assert items == [] or mine  # no shard idles while there is work
        runs.extend(mine)
    if not items:
        assert runs == []
    elif len(items) >= count:
        assert sorted(runs) == sorted((item, 0) for item in items)
    else:
        assert len(set(runs)) == count  # each copy once
        assert {item for item, _ in runs} == set(items)


@given(costs, st.integers(1, 12), st.randoms())
def test_assign_names_the_shard_that_runs_each_unit_as_copy_0(table, count, rnd):
    """The owners a shard report stores (what merge names a missing shard's units by) are
    the split every shard runs, computed once for the whole job."""
    items = list(table)
    rnd.shuffle(items)
    owners = assign(items, count, key=str, cost=table.__getitem__)
    assert set(owners) == set(items)
    for number in range(1, count + 1):
        mine = split(items, Shard(number, count), key=str, cost=table.__getitem__)
        assert {item for item, copy in mine if copy == 0} == {
            item for item, owner in owners.items() if owner == number}


@given(costs, st.integers(1, 8))
def test_loads_are_balanced_within_one_unit_of_the_mean(table, count):
    items = list(table)
    if len(items) < count:
        return
    loads = [sum(table[i] for i, _ in split(items, Shard(n, count), key=str,
                                            cost=table.__getitem__))
             for n in range(1, count + 1)]
    # LPT: the busiest shard's last unit started on the least-loaded shard
    assert max(loads) <= sum(loads) / count + max(table.values()) + 1e-6


def test_cost_moves_units_between_shards():
    table = {"big": 10.0, "a": 1.0, "b": 1.0, "c": 1.0}
    first = split(list(table), Shard(1, 2), key=str, cost=table.__getitem__)
    assert first == [("big", 0)]
    assert split(list(table), Shard(1, 2), key=str) == [("big", 0), ("a", 0)]


@pytest.mark.parametrize("text, shard", [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)),
                                         (" 3 / 3 ", Shard(3, 3))])
def test_parse_shard(text, shard):
    assert parse_shard(text) == shard
    assert str(shard) == text.replace(" ", "")


@pytest.mark.parametrize("text, words", [("0/4", "numbered from 1"), ("5/4", "1 <= K <= N"),
                                         ("2", "K/N"), ("a/b", "K/N"), ("", "K/N"),
                                         ("1/0", "1 <= K <= N")])
def test_bad_shard_says_what_to_write(text, words):
    with pytest.raises(InvalidArgument, match=words):
        parse_shard(text)


def test_indexed_job_index_is_zero_based():
    assert shard_from_env(4, {"JOB_COMPLETION_INDEX": "0"}) == Shard(1, 4)
    assert shard_from_env(4, {"JOB_COMPLETION_INDEX": "3"}) == Shard(4, 4)


@pytest.mark.parametrize("env, words", [({}, "not set"), ({"JOB_COMPLETION_INDEX": "x"},
                                                           "a number 0..3"),
                                        ({"JOB_COMPLETION_INDEX": "4"}, "completions")])
def test_bad_indexed_job_env(env, words):
    with pytest.raises(InvalidArgument, match=words):
        shard_from_env(4, env)


def test_duplicate_ids_are_refused():
    with pytest.raises(InvalidArgument, match="same id"):
        split(["a", "a"], Shard(1, 1), key=str)


@given(st.text(max_size=10), st.text(max_size=10), st.integers(1, 6))
def test_seeds_differ_by_shard_and_night_and_repeat_on_rerun(night, other, count):
    seeds = [shard_seed(night, Shard(n, count)) for n in range(1, count + 1)]
    assert len(set(seeds)) == count
    assert seeds == [shard_seed(night, Shard(n, count)) for n in range(1, count + 1)]
    if other != night:
        assert shard_seed(other, Shard(1, count)) != seeds[0]
    assert shard_seed(night, Shard(1, count), 7) == shard_seed(other, Shard(1, count), 7)


@pytest.mark.parametrize("text", ["0/4", "5/4", "two"])
def test_bad_shard_names_the_option_given(text):
    """``pytest --compatfuzz-shard`` users never typed ``--shard``; the fuzz CLI's message
    stays as it was."""
    with pytest.raises(InvalidArgument, match="Expected --compatfuzz-shard K/N") as caught:
        parse_shard(text, option="--compatfuzz-shard")
    assert " --shard" not in str(caught.value)
    with pytest.raises(InvalidArgument, match="Expected --shard K/N"):
        parse_shard(text)
