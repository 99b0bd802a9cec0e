"""NCCL's constants by release: the entry in force for a release, and the releases it holds for."""

from __future__ import annotations

from topoaudit.bench.nccl_arithmetic import (
    NVLINK_GBPS_PER_LINK,
    RING_CAPS,
    TREE,
    arch_row,
    in_force,
    per_channel_tree_gbps,
)
from topoaudit.model.network import NcclVersion as V


def test_each_constant_names_its_releases_and_its_source() -> None:
    sm90 = in_force(NVLINK_GBPS_PER_LINK[90], V(2, 19, 3))
    assert (sm90.value, sm90.releases) == (20.0, "NCCL 2.18.1 until 2.20.3")
    assert sm90.source == "src/graph/topo.h@v2.18.1-1 SM90_NVLINK_BW"
    current = in_force(NVLINK_GBPS_PER_LINK[100], V(2, 30, 7))
    assert (current.value, current.releases) == (40.1, "NCCL 2.27.5 and later")
    for table in (*NVLINK_GBPS_PER_LINK.values(), RING_CAPS, TREE):
        assert all("@v2." in held.source for held in table)


def test_a_release_older_than_any_read_gets_the_oldest_and_says_so() -> None:
    old = in_force(TREE, V(2, 4, 8))
    assert old.value.factor == 0.9 and old.releases == "the oldest release read, NCCL 2.5.6 (NCCL 2.4.8 is older)"


def test_the_tree_factor_and_the_a100_cap_by_release() -> None:
    assert in_force(TREE, V(2, 7, 8)).value.factor == 0.9
    assert in_force(TREE, V(2, 8, 3)).value.factor == 0.92
    assert in_force(TREE, V(2, 18, 1)).value.tree_pattern_factor == 1.0
    assert in_force(TREE, V(2, 18, 3)).value.tree_pattern_factor == 0.85
    assert in_force(RING_CAPS, V(2, 17, 1)).value == {"ampere": ("min", 235.0), "hopper": ("min", 370.0)}
    assert in_force(RING_CAPS, V(2, 18, 1)).value == {}


def test_architecture_rows_follow_compcapindex_by_release() -> None:
    assert arch_row(90, V(2, 14, 3)) == "volta"  # before 2.15.1 only an all-sm80 job took the Ampere row
    assert arch_row(90, V(2, 16, 5)) == "hopper" and arch_row(100, V(2, 24, 3)) == "hopper"
    assert arch_row(100, V(2, 25, 1)) == "blackwell"
    cap = per_channel_tree_gbps(100, V(2, 28, 3), nodes=4)
    assert cap is not None and cap.value == 24.0 and "v2.28.3-1" in cap.source
    assert per_channel_tree_gbps(80, V(2, 7, 8), nodes=1) is None  # a fixed cap before 2.8.3
