"""The oracle at its edges, as a bench finding or the plan quotes it: why there is no figure (each reason whole),
what a figure says of itself, which algorithm NCCL is assumed to run and why, and how the network figure
follows the nodes and the NICs a node uses."""

from __future__ import annotations

import pytest

from topoaudit.bench.oracle import Figure, default_algorithm, expected_busbw, tolerance
from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.model.network import NcclVersion, NicSet
from topoaudit.model.values import Unsupported

GIVEN = NicSet(8, 400.0, "IB", "--nics 8x400")


def _spec(key: str) -> GpuSpec:
    spec = find_gpu(key)
    assert spec is not None
    return spec


def _figure(key: str, gpus: int, **kw: object) -> Figure:
    figure = expected_busbw(_spec(key), gpus, **kw)  # type: ignore[arg-type]
    assert isinstance(figure, Figure), figure
    return figure


@pytest.mark.parametrize(
    ("key", "gpus", "kw", "reason"),
    [
        ("H100-SXM", 8, {"algorithm": "bogus"}, "unknown algorithm 'bogus'"),
        ("H100-SXM", 1, {}, "a single GPU: all-reduce moves no data over a link"),
        (
            "H100-SXM",
            8,
            {"algorithm": "nvls_tree"},
            "NVLS-tree runs across nodes; inside one NVLink domain NCCL runs NVLS",
        ),
        ("H100-SXM", 8, {"algorithm": "collnet"}, "CollNet reduces in the network: it runs only across nodes"),
        (
            "H100-SXM",
            8,
            {"algorithm": "nvls", "nodes": 2},
            "NVLS reduces inside one NVLink domain; across nodes NCCL runs NVLS-tree",
        ),
        (
            "V100-SXM2",
            4,
            {"algorithm": "ring"},
            "no NCCL model for 4x NVIDIA V100 SXM2: its GPUs are not one NVLink domain",
        ),
        (
            "H100-SXM",
            4,
            {"algorithm": "nvls"},
            "no public NVLS measurement of 4x NVIDIA H100 SXM5; NCCL's NVLS model is not reproduced",
        ),
        (
            "H100-PCIE",
            2,
            {"algorithm": "ring"},
            "no NCCL model for 2x NVIDIA H100 PCIe: its GPUs are not one NVLink domain",
        ),
        (
            "GB300",
            16,
            {"algorithm": "nvls"},
            "no public NVLS measurement of 16x NVIDIA GB300; NCCL's NVLS model is not reproduced; the only public "
            "figure, 701.33 GB/s at 8 GiB in one public OCI capture (4 trays of an NVL72 rack, NCCL 2.29.3), is a "
            "single self-measurement and cannot judge a run",
        ),
        (
            "L40S",
            8,
            {"nodes": 2},
            "across 2 nodes the NICs set the figure; the input names none and NVIDIA L40S has no reference node to "
            "assume: pass --nics COUNTxGBITS",
        ),
        (
            "L40S",
            8,
            {"nodes": 2, "nics": NicSet(4, None, "IB", "NET/IB lines")},
            "across 2 nodes the NICs set the figure; their rate is unknown: pass --nics COUNTxGBITS",
        ),
        (
            "H100-SXM",
            8,
            {"nodes": 3, "algorithm": "nvls_tree", "nics": NicSet(8, 400.0, "RoCE", "--nics 8x400")},
            "no public NVLS-tree measurement of 3 nodes of NVIDIA H100 SXM5 with 8x 400G RoCE (--nics 8x400)",
        ),
    ],
)
def test_why_there_is_no_figure(key: str, gpus: int, kw: dict[str, object], reason: str) -> None:
    assert expected_busbw(_spec(key), gpus, **kw) == Unsupported("oracle", reason)  # type: ignore[arg-type]


def test_two_gpus_are_enough_for_a_figure() -> None:
    assert _figure("H100-SXM", 2, algorithm="ring").busbw_gbps > 0


def test_collnet_without_a_public_measurement_says_why_its_arithmetic_is_not_reproduced() -> None:
    why = expected_busbw(_spec("H100-SXM"), 8, nodes=2, algorithm="collnet", nics=NicSet(8, 200.0, "IB", "x"))
    assert isinstance(why, Unsupported) and why.source == "oracle"
    assert why.reason.startswith("no public CollNet measurement of 2 nodes of NVIDIA H100 SXM5 with 8x 200G IB (x); ")
    assert why.reason.endswith("), so it is not reproduced")


def test_a_figure_describes_itself_and_carries_its_evidence() -> None:
    figure = Figure(370.8, "ring", "derived", "src", arithmetic="18 x 20.6", warn_below_ratio=0.85,
                    tolerance_source="t", assumptions=("a",), warn_at_most=True)  # fmt: skip
    assert figure.describe() == "370.8 GB/s ring (derived: 18 x 20.6; src)"
    sized = Figure(480.0, "nvls", "measured", "m", size_bytes=16 << 30)
    assert sized.describe() == "480 GB/s nvls (measured at 16 GiB: m)"
    assert figure.evidence() == {
        "oracle_busbw_gbps": 370.8,
        "oracle_algorithm": "ring",
        "oracle_kind": "derived",
        "oracle_source": "src",
        "oracle_arithmetic": "18 x 20.6",
        "oracle_size_bytes": 0,
        "oracle_warn_below_ratio": 0.85,
        "oracle_tolerance_source": "t",
        "oracle_assumptions": ["a"],
        "oracle_warn_at_most": True,
    }


def test_a_provider_gate_is_its_own_line_and_carries_that_as_its_tolerance() -> None:
    gate = _figure("V100-SXM2", 8, algorithm="ring")
    assert (gate.kind, gate.busbw_gbps, gate.floor_gbps) == ("gate", 110.0, 110.0)
    assert (gate.warn_below_ratio, gate.tolerance_source) == tolerance(gate)
    assert tolerance(gate) == (1.0, "1 of the figure: a provider's acceptance gate is the line itself")
    measured = _figure("H200-SXM", 8, algorithm="ring")
    assert (measured.kind, measured.floor_gbps, measured.size_bytes) == ("measured", 331.0, 16 << 30)


@pytest.mark.parametrize(
    ("key", "gpus", "version", "algorithm", "why"),
    [
        ("A100-SXM", 8, NcclVersion(2, 21, 5), "ring", "algorithm not stated: NCCL's ring (no NVLS on this box)"),
        (
            "H100-SXM",
            8,
            NcclVersion(2, 16, 5),
            "ring",
            "NCCL 2.16.5 has no NVLS (NVIDIA/nccl before v2.17.1-1: no NVLS algorithm): it runs the ring",
        ),
        (
            "GB300",
            16,
            NcclVersion(2, 21, 5),
            "ring",
            "algorithm not stated: NCCL 2.21.5 would pick NVLS on 16x NVIDIA GB300, but no public NVLS measurement "
            "exists for it: held to the ring's figure, the lowest NCCL's choices reach",
        ),
        ("V100-SXM2", 8, NcclVersion(2, 21, 5), "ring", "algorithm not stated: NCCL's ring (no NVLS on this box)"),
    ],
)
def test_the_algorithm_nccl_is_assumed_to_pick_and_why(
    key: str, gpus: int, version: NcclVersion, algorithm: str, why: str
) -> None:
    assert default_algorithm(_spec(key), gpus, version) == (algorithm, why)


def test_nccl_s_own_choice_measured_on_a_rack_is_its_figure_and_nvls_where_measured() -> None:
    algorithm, why = default_algorithm(_spec("GB200"), 72, NcclVersion(2, 21, 5))
    assert algorithm == "default" and why.startswith("the figure measures NCCL's own choice on 72x NVIDIA GB200 (")
    algorithm, why = default_algorithm(_spec("H200-SXM"), 8, NcclVersion(2, 21, 5))
    assert algorithm == "nvls" and why.startswith("algorithm not stated: NCCL 2.21.5 picks NVLS for a large all-reduce")


def test_an_assumed_nvls_figure_keeps_the_ring_s_as_the_lowest_an_explicit_one_does_not() -> None:
    assumed = _figure("H200-SXM", 8)
    assert (assumed.algorithm, assumed.lowest_gbps) == ("nvls", _figure("H200-SXM", 8, algorithm="ring").busbw_gbps)
    assert _figure("H200-SXM", 8, algorithm="nvls").lowest_gbps == 0.0
    assert _figure("H200-SXM", 8, algorithm="ring").lowest_gbps == 0.0


@pytest.mark.parametrize(
    ("version", "figure", "tail"),
    [
        (NcclVersion(2, 17, 1), 370.0, ", capped at 370 (NCCL 2.17.1 until 2.18.1: "),
        (NcclVersion(2, 19, 3), 360.0, " = 360"),
        (NcclVersion(2, 20, 3), 370.8, " = 370.8"),
    ],
)
def test_the_hopper_ring_figure_follows_the_release(version: NcclVersion, figure: float, tail: str) -> None:
    ring = _figure("H100-SXM", 4, algorithm="ring", nccl_version=version)
    assert ring.busbw_gbps == figure and ring.kind == "derived" and tail in ring.arithmetic


# --- across nodes -------------------------------------------------------------------------------------------
def test_a_figure_on_nics_given_is_judged_in_full_one_on_assumed_nics_warns_at_most() -> None:
    given = _figure("H100-SXM", 8, nodes=2, algorithm="ring", nics=GIVEN)
    assumed = _figure("H100-SXM", 8, nodes=2, algorithm="ring")
    assert (given.warn_at_most, given.across_nodes, assumed.warn_at_most, assumed.across_nodes) == (
        False,
        True,
        True,
        True,
    )
    measured = _figure("H100-SXM", 8, nodes=2, algorithm="nvls_tree", nics=NicSet(8, 400.0, "RoCE", "x"))
    assert (measured.busbw_gbps, measured.algorithm, measured.kind, measured.warn_at_most) == (
        430.0,
        "nvls_tree",
        "measured",
        False,
    )
    assert measured.across_nodes and measured.assumptions == ()


def test_a_rate_the_input_did_not_give_is_the_reference_node_s_and_said_so() -> None:
    figure = _figure("H100-SXM", 8, nodes=2, nics=NicSet(8, None, "IB", "NET/IB"))
    assert figure.warn_at_most
    assert (
        "NICs 8x 400G IB (8 NICs NET/IB; 400G each assumed: HGX H100 reference node): pass --nics COUNTxGBITS to "
        "judge your network" in figure.assumptions
    )


@pytest.mark.parametrize(("per_node", "nics", "used"), [(3, 8, 3), (1, 4, 1), (4, 8, 4), (8, 8, 8)])
def test_a_node_running_some_of_its_gpus_uses_its_share_of_the_nics(per_node: int, nics: int, used: int) -> None:
    ring = _figure("H100-SXM", per_node, nodes=2, algorithm="ring", nics=NicSet(nics, 400.0, "IB", "x"))
    share = f" ({per_node} of 8 GPUs per node ran: {used} of {nics} NICs)" if per_node < 8 else ""
    assert ring.arithmetic.startswith(f"{used} NIC{'' if used == 1 else 's'} x 50 GB/s (400 Gb/s / 8, ")
    assert f"){share} = {used * 50}" in ring.arithmetic


def test_a_single_gpu_per_node_is_not_capped_by_a_node_ring() -> None:
    ring = _figure("H100-SXM", 1, nodes=4, algorithm="ring", nics=GIVEN)
    assert ring.busbw_gbps == 50.0 and "node's own ring" not in ring.arithmetic


def test_the_node_s_own_ring_caps_the_network_figure_only_when_lower() -> None:
    capped = _figure("H100-SXM", 8, nodes=2, algorithm="ring", nics=GIVEN)
    assert capped.busbw_gbps == 370.8 and capped.arithmetic.endswith("= 400; the node's own ring, 370.8, is lower")
    network = _figure("H100-SXM", 8, nodes=2, algorithm="ring", nics=NicSet(8, 200.0, "IB", "x"))
    assert network.busbw_gbps == 200.0 and "node's own ring" not in network.arithmetic


def test_the_tree_doubles_its_network_share_on_two_nodes_only() -> None:
    two = _figure("H100-SXM", 8, nodes=2, algorithm="tree", nics=NicSet(8, 100.0, "IB", "x"))
    three = _figure("H100-SXM", 8, nodes=3, algorithm="tree", nics=NicSet(8, 100.0, "IB", "x"))
    assert two.arithmetic.startswith("(2 x (8 NICs x 12.5 GB/s") and " on two nodes (" in two.arithmetic
    assert three.arithmetic.startswith("(8 NICs x 12.5 GB/s") and "on two nodes" not in three.arithmetic
    assert (two.busbw_gbps, three.busbw_gbps) == (172.5, 88.2)  # from 2 x 100 on two nodes, from 100 on three


def test_a_measured_figure_on_assumed_nics_warns_at_most() -> None:
    assumed = _figure("H100-SXM", 8, nodes=2, algorithm="nvls_tree")
    assert (assumed.busbw_gbps, assumed.warn_at_most, assumed.across_nodes) == (430.0, True, True)
    assert assumed.assumptions and assumed.assumptions[0].startswith("NICs 8x 400G")


def test_the_network_figure_is_rounded_to_a_tenth() -> None:
    ring = _figure("H100-SXM", 8, nodes=2, algorithm="ring", nics=NicSet(3, 25.0, "IB", "x"))
    assert ring.busbw_gbps == 9.4 and ring.arithmetic.startswith("3 NICs x 3.125 GB/s (25 Gb/s / 8, ")
    assert ring.arithmetic.endswith(") = 9.4")


@pytest.mark.parametrize(
    ("per_node", "nics", "figure", "node_ring"),
    [
        (1, NicSet(1, 6400.0, "IB", "x"), 800.0, False),  # one GPU per node has no NVLink ring of its own
        (2, NicSet(2, 3200.0, "IB", "x"), 370.8, True),  # two GPUs do: their ring caps the faster network
    ],
)
def test_the_node_s_ring_caps_the_network_from_two_gpus_per_node(
    per_node: int, nics: NicSet, figure: float, node_ring: bool
) -> None:
    ring = _figure("H100-SXM", per_node, nodes=2, algorithm="ring", nics=nics)
    assert ring.busbw_gbps == figure and ("the node's own ring, 370.8, is lower" in ring.arithmetic) is node_ring


def test_the_tree_s_refinements_are_each_said_in_its_arithmetic() -> None:
    tree = _figure("A100-SXM", 8, algorithm="tree", channels=4, tree_pattern="tree")
    assert tree.arithmetic.startswith("(12 NVLinks x 20 GB/s (sm80; ")
    assert ", at most 4 channels x 24 GB/s (" in tree.arithmetic
    assert " x 0.85 (the tree graph fell back to NCCL_TOPO_PATTERN_TREE) x (n-1)/n = 7/8 " in tree.arithmetic


def test_nccl_s_measured_choice_on_a_rack_keeps_the_ring_s_figure_as_the_lowest() -> None:
    choice = _figure("GB200", 72)
    assert (choice.algorithm, choice.lowest_gbps) == ("default", _figure("GB200", 72, algorithm="ring").busbw_gbps)


def test_ampere_s_ring_factor_of_nccl_2_7_3_is_applied_rounded_and_said() -> None:
    ring = _figure("A100-SXM", 4, algorithm="ring", nccl_version=NcclVersion(2, 7, 3))
    assert ring.busbw_gbps == 231.8  # 252 x 0.92 = 231.84, to a tenth
    assert ring.arithmetic.endswith(
        " = 252, x 0.92 (NCCL 2.7.3 until 2.7.5: src/graph/tuning.cc@v2.7.3-1: if (compCap80) busBw *= 0.92)"
    )


@pytest.mark.parametrize(("nodes", "cap", "figure"), [(2, 110, 103.1), (3, 80, 76.7)])
def test_nccl_2_6_s_tree_cap_is_lower_above_two_nodes(nodes: int, cap: int, figure: float) -> None:
    tree = _figure("A100-SXM", 8, nodes=nodes, algorithm="tree", nccl_version=NcclVersion(2, 7, 3),
                   nics=NicSet(8, 200.0, "IB", "x"))  # fmt: skip
    assert tree.busbw_gbps == figure and f", capped at {cap} x (n-1)/n = " in tree.arithmetic


def test_one_nic_is_named_in_the_singular() -> None:
    one = _figure("H100-SXM", 8, nodes=2, algorithm="ring", nics=NicSet(1, 400.0, "IB", "x"))
    assert one.arithmetic.startswith("1 NIC x 50 GB/s (400 Gb/s / 8, ")
