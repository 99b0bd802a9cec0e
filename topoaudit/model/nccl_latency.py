"""NCCL's own latency model of an all-reduce: what a small message costs before its bytes, by path.

NCCL times every algorithm and protocol as ``latency + bytes / bandwidth`` and runs the cheapest
(``ncclTopoTuneModel``, ``src/graph/tuning.cc``). Its latency is a base per algorithm and protocol plus a
per-step figure for the hardware each step crosses (NVLink, PCIe, network). The figures here are those of the LL
protocol, NCCL's lowest, for the ring and the tree, read at NVIDIA/nccl tag v2.30.7-1; each constant names the
releases it holds for. A decode step's all-reduce is small (batch x hidden x 2 bytes: 192 KiB for 16 sequences of a
6144-wide model), so this latency is most of its time.

Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SOURCE = "NVIDIA/nccl src/graph/tuning.cc"

BASE_LL_US = {"ring": 6.6, "tree": 6.8}
"""``baseLat`` of the LL protocol, in microseconds: Ring 6.6, Tree 6.8 (src/graph/tuning.cc@v2.18.1-1 to
@v2.30.7-1; 2.12 had Ring 3.6, Tree 4.4)."""

HOP_LL_US = {
    "NVLINK": {"ring": 0.6, "tree": 0.6},
    "PCI": {"ring": 1.0, "tree": 1.0},
    "NET": {"ring": 2.7, "tree": 5.0},
}
"""``hwLat`` of the LL protocol per step, in microseconds, by the hardware the step crosses (src/graph/tuning.cc
@v2.18.1-1 to @v2.30.7-1; NVLink's 0.6 was .47 ring / .52 tree in 2.12)."""

NET_OVERHEAD_LL_US = 1.0
"""``getNetOverhead``: on a ring across nodes each intra-node step costs at least 1.0 us (x86 Intel and ARM; 2.0 on
AMD CPUs), src/graph/tuning.cc@v2.30.7-1."""

ONE_GPU_PER_NODE = "NCCL 2.23.4 and later: with one GPU per node the tree's network latency is used (ppn == 1)"
"""src/graph/tuning.cc@v2.23.4-1: "With ppn=1 latencies are fully exposed, use the Tree network latency"."""


@dataclass(frozen=True)
class Latency:
    """NCCL's modelled latency of one all-reduce on a shape, and the sum that gives it."""

    us: float
    algorithm: str  # "ring" | "tree": the lower of the two
    arithmetic: str
    note: str = ""  # which of NCCL's rules applies, where it matters

    def describe(self) -> str:
        """``7.8 us (NCCL's latency model, ring LL: 6.6 + 2 x 0.6 NVLink; src/graph/tuning.cc@v2.30.7-1)``."""
        note = f"; {self.note}" if self.note else ""
        return (
            f"{self.us:g} us (NCCL's latency model, {self.algorithm} LL: {self.arithmetic}{note}; {SOURCE}@v2.30.7-1)"
        )

    def short(self) -> str:
        """``7.8 us NCCL latency (ring LL: 6.6 + 2 x 0.6 NVLink)``."""
        return f"{self.us:g} us NCCL latency ({self.algorithm} LL: {self.arithmetic})"


def allreduce_latency(ranks: int, nodes: int = 1, intra: str = "NVLINK") -> Latency:
    """Model an all-reduce's latency as NCCL does: the lower of the ring's and the tree's, LL protocol.

    ``ranks`` GPUs on ``nodes`` nodes, their steps inside a node over ``intra`` ("NVLINK" or "PCI").

    Ring: ``base + (nsteps - nInterSteps) x max(intra hop, net overhead) + nInterSteps x net hop`` with
    ``nsteps = 2(n-1)`` and ``nInterSteps = 2(nodes-1)``; tree: ``base + 2 x ((n/nodes - 1) x intra hop +
    log2(nodes) x net hop)`` (``ncclTopoTuneModel``). The graph's own ``latencyInter`` (0 unless a network plugin
    reports one) is left out.
    """
    nodes = max(1, nodes)
    per_node = max(1, ranks // nodes)
    hop = HOP_LL_US[intra]
    net = HOP_LL_US["NET"]
    nsteps, inter_steps = 2 * (ranks - 1), 2 * (nodes - 1)
    ring_net = net["tree"] if nodes > 1 and per_node == 1 else net["ring"]
    ring_intra = max(hop["ring"], NET_OVERHEAD_LL_US) if nodes > 1 else hop["ring"]
    ring = BASE_LL_US["ring"] + (nsteps - inter_steps) * ring_intra + inter_steps * ring_net
    ring_how = f"{BASE_LL_US['ring']:g}"
    if nsteps - inter_steps:
        ring_how += f" + {nsteps - inter_steps} x {ring_intra:g} {_hop_name(intra, nodes)}"
    if inter_steps:
        ring_how += f" + {inter_steps} x {ring_net:g} network"
    note = ONE_GPU_PER_NODE if nodes > 1 and per_node == 1 else ""
    levels = int(math.log2(nodes)) if nodes > 1 else 0
    tree = BASE_LL_US["tree"] + 2 * ((per_node - 1) * hop["tree"] + levels * net["tree"])
    tree_how = f"{BASE_LL_US['tree']:g} + 2 x ({per_node - 1} x {hop['tree']:g} {_hop_name(intra, 1)}"
    tree_how += f" + {levels} x {net['tree']:g} network)" if levels else ")"
    if tree < ring:
        return Latency(round(tree, 2), "tree", tree_how)
    return Latency(round(ring, 2), "ring", ring_how, note)


def _hop_name(intra: str, nodes: int) -> str:
    name = "NVLink" if intra == "NVLINK" else "PCIe"
    return f"{name} (at least the {NET_OVERHEAD_LL_US:g} us network overhead)" if nodes > 1 else name
