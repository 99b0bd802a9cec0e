"""What an NCCL variable's value does to the path NCCL takes: switched off or pinned (warn), tuned (info), or nothing.

A debug variable does nothing to the path. The values' meanings are NCCL's (docs/env.html of NVIDIA/nccl,
src/graph/paths.cc).

Kept beside the model so that what the gate counts as judged (a tuning setting says nothing of the box) and the
rule that words the finding read the same table.
"""

from __future__ import annotations

import re

from topoaudit.model.finding import Severity
from topoaudit.model.nccl import QUIET

P2P_LEVEL_OFF = ("LOC", "0")
P2P_LEVEL_NARROW = ("NVL", "NVB", "C2C", "PIX", "1")
"""NCCL_P2P_LEVEL values below NCCL's default (PXB): P2P off, or only between the closest GPUs. Before NCCL 2.6
levels were numbers, 0..5 = LOC, PIX, PXB, PHB, SYS, SYS (src/graph/paths.cc)."""
P2P_LEVEL_NVLINK = ("NVL", "NVB")
"""NCCL_P2P_LEVEL values that keep peer access on NVLink paths only: on an NVSwitch board every pair keeps it."""
SWITCHES_OFF = frozenset(
    ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE",
     "NCCL_IGNORE_DISABLED_P2P", "NCCL_P2P_DIRECT_DISABLE")
)  # fmt: skip
"""Variables whose non-zero value switches something off; 0 is their default."""
CHANNELS_ONE_NODE_USES = 32
"""The most ring channels NCCL builds: its search finds at most MAXCHANNELS/2 = 32 and duplicates up to that
(NVIDIA/nccl@5067397c src/init.cc ``ringGraph->maxChannels = MAXCHANNELS / 2``, src/graph/search.cc
``ncclTopoDupChannels``), so NCCL_MAX_NCHANNELS or NCCL_MAX_CTAS at 32 or more takes none of them away."""


SOFTWARE_RDMA = re.compile(r"^\s*=?(?:[\w.-]+(?::\d+)?,)*(?:rxe|siw)\d")
"""A software RDMA device's name in an NCCL_IB_HCA list that selects devices: soft-RoCE (rdma_rxe) or siw, RDMA
emulated by the kernel. A list starting with '^' excludes the devices it names."""


def effect(name: str, value: str, nvlink_everywhere: bool = False) -> tuple[Severity, str] | None:
    """Say what ``name=value`` does to the path (warn) or to tuning (info); None for a debug variable."""
    if name in QUIET:
        return None
    v = value.strip().upper()
    off = v not in ("", "0")
    warn = Severity.WARN
    if not off and name in SWITCHES_OFF:
        return Severity.INFO, "its default: nothing is switched off"
    if name == "NCCL_P2P_DISABLE" and off:
        return warn, "CUDA peer access (NVLink and PCIe P2P) is off: GPU pairs talk through host memory or the network"
    if name == "NCCL_P2P_LEVEL" and v in P2P_LEVEL_OFF:
        return warn, "peer access is off, level LOC: GPU pairs talk through host memory or the network"
    if name == "NCCL_P2P_LEVEL" and v in P2P_LEVEL_NVLINK and nvlink_everywhere:
        return Severity.INFO, f"peer access only over NVLink, level {value}: every GPU pair of this box is on NVLink"
    if name == "NCCL_P2P_LEVEL" and v in P2P_LEVEL_NARROW:
        return warn, f"peer access only between GPUs at path {value} or closer: the other pairs go through host memory"
    if name == "NCCL_SHM_DISABLE" and off:
        return warn, "the host-memory transport is off: pairs without peer access go through the network"
    if name == "NCCL_IB_DISABLE" and off:
        return warn, "InfiniBand/RoCE is off: traffic between nodes goes over TCP sockets"
    if name == "NCCL_NET_GDR_LEVEL" and v in P2P_LEVEL_OFF:
        return warn, "GPUDirect RDMA is off: traffic between nodes is staged through host memory"
    if name == "NCCL_NET_GDR_READ" and v == "0":
        return warn, "the NICs do not read GPU memory directly when sending"
    if name in ("NCCL_ALGO", "NCCL_PROTO"):  # a choice among algorithms over the same links, often made to measure
        what = "algorithms" if name == "NCCL_ALGO" else "protocols"
        return Severity.INFO, f"NCCL may use only the {what} {value}: a run's figures are that choice's"
    if name == "NCCL_NVLS_ENABLE" and v == "0":
        return warn, "NVLink SHARP (NVLS) is off: all-reduce on NVSwitch boxes runs on rings"
    if name == "NCCL_CUMEM_ENABLE" and v == "0":
        return warn, "peer access uses legacy CUDA IPC, and NVLS and multi-node NVLink (which need cuMem) are off"
    if name == "NCCL_NET" and v == "SOCKET":
        return warn, "traffic between nodes goes over TCP sockets"
    if name == "NCCL_IGNORE_DISABLED_P2P" and off:
        return warn, "peer access is used where the driver reports it disabled (masks a fault)"
    if name in ("NCCL_NVB_DISABLE", "NCCL_PXN_DISABLE") and off:  # a route NCCL prefers, no transport switched off
        return Severity.INFO, {
            "NCCL_NVB_DISABLE": "no relaying through another GPU's NVLink",
            "NCCL_PXN_DISABLE": "no sending through a peer GPU's NIC: each GPU uses a NIC of its own",
        }[name]
    if name == "NCCL_MNNVL_ENABLE" and v == "0":
        return warn, "multi-node NVLink is off"
    if name == "NCCL_IB_HCA" and SOFTWARE_RDMA.search(value):
        return warn, "the InfiniBand transport uses a software RDMA device (soft-RoCE or siw): the kernel emulates RDMA"
    if name == "NCCL_GRAPH_FILE":
        return warn, "NCCL's rings and trees come from a file, not its own search"
    if name in ("NCCL_MAX_NCHANNELS", "NCCL_MAX_NRINGS", "NCCL_MAX_CTAS"):
        if v.isdecimal() and int(v) >= CHANNELS_ONE_NODE_USES:
            return Severity.INFO, f"tuning: at most {value} channels, no fewer than NCCL builds on one node"
        return warn, f"at most {value} channels: large messages may not reach the links' bandwidth"
    return Severity.INFO, "tuning"


def effect_class(name: str, value: str) -> str | None:
    """Name the class of fault a path-changing setting produces on its own, where its effect is one by definition.

    NCCL_IB_DISABLE and NCCL_NET=Socket send traffic between nodes over TCP sockets (a network fallback);
    NCCL_NET_GDR_LEVEL=LOC stages it through host memory (GPUDirect RDMA not used). The finding names the class
    beside the setting itself, which is its cause.
    """
    v = value.strip().upper()
    if (name == "NCCL_IB_DISABLE" and v not in ("", "0")) or (name == "NCCL_NET" and v == "SOCKET"):
        return "net-fallback"
    if name == "NCCL_NET_GDR_LEVEL" and v in P2P_LEVEL_OFF:
        return "gdr-disabled"
    return None
