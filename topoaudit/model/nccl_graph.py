"""NCCL's topology as it prints it with ``NCCL_DEBUG_SUBSYS=GRAPH``: the system tree, paths and searched graphs.

The print is what NCCL modelled, with the bandwidth it gives each link (GB/s): ``+ PCI[24.0] - GPU/4000``
under a PCIe switch, ``+ NVL[360.0] - NVS/0`` to the NVSwitches, ``+ PCI[0.2] - PCI/0-65000`` for a bridge a
VM emulates. Which GPUs it links how, and which path each ring takes (``type NVL/PIX`` or ``type SYS/PIX``),
are read from it apart from the machine's own topology: where they differ, NCCL did not see the box as it is.
Every fact keeps the line it came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.nccl import GraphPattern, LogLine
from topoaudit.model.values import Probed

NODE_KINDS = ("GPU", "PCI", "NVS", "CPU", "NIC", "NET", "GIN", "RMA", "DEV", "CXB")
"""NCCL's node types (src/graph/topo.cc ``topoNodeTypeStr``)."""
LINK_KINDS = ("LOC", "NVL", "C2C", "PCI", "SYS", "NET")
"""NCCL's link types (``topoLinkTypeStr``)."""
PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")
"""NCCL's path types, fastest first (``topoPathTypeStr``)."""


@dataclass(frozen=True)
class GraphNode:
    """A node of the system tree: ``GPU/4000 (0)``, ``PCI/2000 (10b5879610b58796)``, ``CPU/0 (1/1/2)``."""

    host: Probed[str]
    id: str  # as printed: "GPU/4000" (before NCCL 2.23.4), "GPU/0-18000" (system id - local id)
    kind: str  # one of NODE_KINDS
    detail: str  # what NCCL printed in parentheses: the GPU's rank, a PCI device id, a CPU's arch/vendor/model
    gpu_rank: Probed[int]  # GPUs: the rank NCCL gave it
    evidence: LogLine


@dataclass(frozen=True)
class GraphLink:
    """``+ PCI[24.0] - GPU/4000``: a link NCCL modelled from the node it is printed under, and its bandwidth."""

    host: Probed[str]
    src: str  # the node id the link hangs under
    kind: str  # one of LINK_KINDS
    gbps: float  # NCCL's figure (see topoaudit.model.nccl_bandwidth): PCI Gen4 x16 24.0, a VM bridge 0.2
    dst: str  # the node id at its far end
    detail: str  # what NCCL printed after a NET node: collSupport/asic/port/bw
    evidence: LogLine


@dataclass(frozen=True)
class GraphPath:
    """``GPU/2A000 :... GPU/AB000 (3/10.000000/SYS)``: NCCL's path between two nodes, as its path print gives it."""

    host: Probed[str]
    src: str
    dst: str
    hops: int
    gbps: float
    path_type: str  # one of PATH_TYPES
    evidence: LogLine


@dataclass(frozen=True)
class GraphSearch:
    """A graph NCCL searched (``Pattern 4, ... type NVL/PIX``) and the order of each of its channels."""

    host: Probed[str]
    pattern: GraphPattern
    cross_nic: int
    channels: tuple[tuple[str, ...], ...]  # per channel, the nodes in order: ("NET/3", "GPU/0", "GPU/1", "NET/2")


@dataclass(frozen=True)
class NcclGraphPrint:
    """Everything the GRAPH subsystem printed in one paste, for every host that printed it."""

    max_gbps: Probed[float]  # "=== System : maxBw 24.0 totalBw 360.0 ===" (maxWidth before NCCL 2.14)
    total_gbps: Probed[float]
    nodes: tuple[GraphNode, ...]
    links: tuple[GraphLink, ...]
    paths: tuple[GraphPath, ...]
    searches: tuple[GraphSearch, ...]
    lines_read: int

    def links_of(self, kind: str) -> tuple[GraphLink, ...]:
        """Select the links of one kind (``PCI``, ``NVL``...)."""
        return tuple(link for link in self.links if link.kind == kind)

    def gpus(self) -> tuple[GraphNode, ...]:
        """Select the GPU nodes."""
        return tuple(node for node in self.nodes if node.kind == "GPU")

    def gpus_on_nvlink(self) -> tuple[str, ...]:
        """List the GPU ids with an NVLink in the tree (to an NVSwitch or to another GPU)."""
        return tuple(dict.fromkeys(link.src for link in self.links_of("NVL") if link.src.startswith("GPU/")))
