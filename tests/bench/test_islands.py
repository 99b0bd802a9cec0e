"""Island clustering as a pure function of fixed pair bandwidths: the split happens at the largest gap, only
when that gap reaches MIN_GAP, and ranks without a measured pair stand alone. (The gloo and namespace runs
do not assert islands: 2-core loopback timings sit too near the gap to decide by chance.)"""

from __future__ import annotations

import itertools

import pytest

from topoaudit.bench.islands import MIN_GAP, islands, same_partition
from topoaudit.model.bench import PairBw


def _pairs(n: int, fast: set[frozenset[int]], fast_gbps: float, slow_gbps: float) -> tuple[PairBw, ...]:
    return tuple(
        PairBw(a, b, fast_gbps if frozenset((a, b)) in fast else slow_gbps, 1 << 24)
        for a, b in itertools.combinations(range(n), 2)
    )


def _within(*groups: tuple[int, ...]) -> set[frozenset[int]]:
    return {frozenset(p) for g in groups for p in itertools.combinations(g, 2)}


def test_two_domains_of_four_split_at_the_nvlink_to_pcie_gap() -> None:
    pairs = _pairs(8, _within((0, 1, 2, 3), (4, 5, 6, 7)), fast_gbps=360.0, slow_gbps=28.0)
    assert islands(tuple(range(8)), pairs) == ((0, 1, 2, 3), (4, 5, 6, 7))


@pytest.mark.parametrize(("ratio", "expected"), [(MIN_GAP * 0.99, 1), (MIN_GAP, 2), (MIN_GAP * 1.01, 2)])
def test_the_split_needs_a_gap_of_at_least_min_gap(ratio: float, expected: int) -> None:
    pairs = _pairs(4, _within((0, 1), (2, 3)), fast_gbps=10.0 * ratio, slow_gbps=10.0)
    assert len(islands((0, 1, 2, 3), pairs)) == expected


def test_loopback_noise_below_the_gap_is_one_island() -> None:
    """Like pairs on a loaded runner: up to 2.5x apart, no structure."""
    values = [1.0, 1.4, 2.5, 1.1, 2.0, 1.7]
    every_pair = itertools.combinations(range(4), 2)
    pairs = tuple(PairBw(a, b, v, 1 << 24) for (a, b), v in zip(every_pair, values, strict=True))
    assert islands((0, 1, 2, 3), pairs) == ((0, 1, 2, 3),)


def test_the_largest_gap_wins_over_a_smaller_one_above_min_gap() -> None:
    # 3 tiers: 400 (NVLink pairs), 100 (same socket), 5 (across sockets); 100 -> 5 is the widest gap
    tier = {frozenset((0, 1)): 400.0, frozenset((2, 3)): 400.0, frozenset((0, 2)): 100.0, frozenset((1, 3)): 100.0}
    pairs = tuple(
        PairBw(a, b, tier.get(frozenset((a, b)), 5.0), 1 << 24) for a, b in itertools.combinations(range(6), 2)
    )
    assert islands(tuple(range(6)), pairs) == ((0, 1, 2, 3), (4,), (5,))


def test_ranks_without_a_measured_pair_stand_alone() -> None:
    pairs = (PairBw(0, 1, 50.0, 1 << 24), PairBw(0, 2, 0.0, 1 << 24))  # a pair measuring nothing is no evidence
    assert islands((0, 1, 2), pairs) == ((0, 1), (2,))
    assert islands((0, 1), ()) == ((0,), (1,))


def test_same_partition_ignores_order() -> None:
    assert same_partition(((1, 0), (3, 2)), ((2, 3), (0, 1)))
    assert not same_partition(((0, 1, 2, 3),), ((0, 1), (2, 3)))
