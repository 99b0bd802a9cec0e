"""NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH): the tree, its bandwidths, paths and searched graphs."""

from __future__ import annotations

import pytest
from dev_pastes import dev_paste

from topoaudit.errors import InputError
from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_graph import looks_like_nccl_graph, parse_nccl_graph


def edges(text: str) -> list[tuple[str, str, float, str]]:
    return [(link.src, link.kind, link.gbps, link.dst) for link in parse_nccl_graph(text).links]


def test_a_print_pasted_without_prefixes_and_reindented_keeps_its_tree() -> None:
    """8 Hopper GPUs behind four PCIe switches, each GPU NVLinked to the NVSwitches (the paste re-indented
    NCCL's columns: the levels are read from their order, not their width)."""
    text = dev_paste("nccl-1197-hopper-graph-nvs-4pcisw")
    assert looks_like_nccl_graph(text)
    graph = parse_nccl_graph(text)
    assert (graph.max_gbps, graph.total_gbps) == (24.0, 360.0)
    got = edges(text)
    assert got[:4] == [
        ("CPU/0", "PCI", 24.0, "PCI/2000"),
        ("PCI/2000", "PCI", 24.0, "GPU/4000"),
        ("GPU/4000", "NVL", 360.0, "NVS/0"),
        ("PCI/2000", "PCI", 24.0, "GPU/5000"),
    ]
    assert ("CPU/0", "SYS", 10.0, "CPU/1") in got and ("CPU/1", "PCI", 24.0, "PCI/82000") in got
    assert ("NIC/6000", "NET", 25.0, "NET/0") in got
    assert [g.gpu_rank for g in graph.gpus()] == list(range(8))
    assert len(graph.gpus_on_nvlink()) == 8
    switch = next(n for n in graph.nodes if n.id == "PCI/2000")
    assert switch.detail == "10b5879610b58796"  # a Broadcom/PLX switch, as NCCL read its ids


def test_prefixed_print_with_a_search_and_its_channels() -> None:
    text = dev_paste("nccl-1189-h20-graph-system-nvs-net")
    graph = parse_nccl_graph(text)
    assert ("GPU/18000", "NVL", 370.8, "NVS/0") in edges(text)
    net = next(link for link in graph.links if link.dst == "NET/3")
    assert (net.src, net.gbps, net.detail, net.host) == (
        "NIC/19000",
        50.0,
        "aa24210003bd70c4/1/50.000000",
        "H20-GPU-05",
    )
    (search,) = graph.searches
    assert (search.pattern.pattern, search.pattern.intra_path, search.pattern.inter_path, search.cross_nic) == (
        4,
        "NVL",
        "PIX",
        1,
    )
    assert search.channels[0] == ("NET/3", "GPU/0", "GPU/1", "NET/2") and len(search.channels) == 4


def test_a_ring_over_the_cpus_and_a_slow_bridge() -> None:
    """Two L4s on two sockets: NCCL's ring is ``type SYS``; a NIC NCCL gives 0.2 GB/s hangs under CPU/1."""
    text = dev_paste("nccl-1358-l4-crossnuma-graph-sys")
    graph = parse_nccl_graph(text)
    assert isinstance(graph.max_gbps, Unsupported)  # the banner was not pasted
    assert ("CPU/1", "PCI", 0.2, "NIC/3D000") in edges(text)
    assert min(link.evidence.line for link in graph.links) == 4  # lines 1-2 hang under a CPU the paste cut off
    (search,) = graph.searches
    assert search.pattern.intra_path == "SYS" and search.channels == (("GPU/0", "GPU/1"),)
    path = next(p for p in graph.paths if p.src == "GPU/2A000" and p.dst == "GPU/AB000")
    assert (path.hops, path.gbps, path.path_type) == (3, 10.0, "SYS")


def test_path_lines_alone() -> None:
    text = dev_paste("deepspeed-5022-v100-cubemesh-nvb-graph")
    assert looks_like_nccl_graph(text)
    graph = parse_nccl_graph(text)
    nvb = [(p.src, p.dst) for p in graph.paths if p.path_type == "NVB"]
    assert ("GPU/600000", "GPU/100000") in nvb
    assert next(p for p in graph.paths if p.src == "GPU/700000" and p.dst == "GPU/100000").path_type == "NVL"


VM_BRIDGE = """\
=== System : maxBw 0.2 totalBw 240.0 ===
CPU/0-0 (1/1/1)
+ PCI[0.2] - PCI/0-65000 (104c823200000000)
              + PCI[0.2] - GPU/0-67000 (0)
                            + NVL[240.0] - NVS/0-0
+ PCI[0.2] - PCI/0-85000 (104c823200000000)
              + PCI[0.2] - GPU/0-87000 (1)
                            + NVL[240.0] - NVS/0-0
==========================================
"""


def test_a_vm_bridge_between_the_cpu_and_every_switch() -> None:
    """NCCL 2.23.4+ ids (system id - local id); the VM's emulated bridges get 0.2 GB/s."""
    graph = parse_nccl_graph(VM_BRIDGE)
    assert [(link.src, link.gbps, link.dst) for link in graph.links_of("PCI")] == [
        ("CPU/0-0", 0.2, "PCI/0-65000"),
        ("PCI/0-65000", 0.2, "GPU/0-67000"),
        ("CPU/0-0", 0.2, "PCI/0-85000"),
        ("PCI/0-85000", 0.2, "GPU/0-87000"),
    ]
    assert graph.gpus_on_nvlink() == ("GPU/0-67000", "GPU/0-87000")
    assert graph.links[0].evidence.line == 3


def test_ranks_printing_at_once_keep_their_trees_apart() -> None:
    a = [f"h:1:10 [0] NCCL INFO {line}" for line in VM_BRIDGE.splitlines()[1:5]]
    b = [f"h:1:20 [1] NCCL INFO {line}" for line in VM_BRIDGE.splitlines()[1:5]]
    interleaved = "\n".join(x for pair in zip(a, b, strict=True) for x in pair) + "\n"
    graph = parse_nccl_graph(interleaved)
    assert [(link.src, link.dst) for link in graph.links] == [
        ("CPU/0-0", "PCI/0-65000"),
        ("PCI/0-65000", "GPU/0-67000"),
        ("GPU/0-67000", "NVS/0-0"),
    ]


def test_text_without_a_print_is_refused() -> None:
    assert not looks_like_nccl_graph("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n")
    with pytest.raises(InputError, match="no line of NCCL's topology print"):
        parse_nccl_graph("nothing\n", "x.txt")


def test_a_gpu_rank_of_hundreds_of_digits_is_damage_not_a_rank() -> None:
    """A saved report of such a print could not be read back (a rank past 2**64); the rank is now not logged."""
    text = dev_paste("nccl-1197-hopper-graph-nvs-4pcisw")
    damaged = text.replace("GPU/4000 (0)", "GPU/4000 (" + "9" * 400 + ")", 1)
    assert damaged != text
    ranks = [g.gpu_rank for g in parse_nccl_graph(damaged).gpus()]
    assert isinstance(ranks[0], Unsupported) and ranks[1:] == list(range(1, 8))
