"""NCCL's own picture of the box and the other captures users paste beside it.

NCCL's ``NCCL_TOPO_DUMP_FILE`` / ``NCCL_GRAPH_DUMP_FILE`` XML and ``nvbandwidth`` output, as facts a Machine
has no field for.

What a capture shares with a probe (GPUs, NICs, paths, NVLink ports, P2P status) goes into the
:class:`~topoaudit.model.machine.Machine`, so the same rules judge it; what only NCCL or a measurement
knows (links per NVSwitch target, the flattened view of a VM, a copy-bandwidth matrix) lives here.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.values import Probed, Unsupported

NO_NCCL_XML = Unsupported(source="nccl-xml", reason="no NCCL XML dump in the input")
NO_C2C = Unsupported(source="nccl-xml", reason="no <c2c> link: the GPU reaches its CPU over PCIe")

# NCCL_TOPO_DUMP_FILE writes this target when the far end of an NVLink is not visible (VMs, GB200 trays):
# "fffffff:ffff:ff" in NCCL's xml.cc, "fffffff:ff:ff.0" in older dumps.
HIDDEN_TARGET_PREFIX = "fffffff:"


@dataclass(frozen=True)
class NcclNvlink:
    """One ``<nvlink>`` of a GPU (RCCL: ``<xgmi>``): how many links reach one target."""

    target: str  # the remote PCI bus id, or NCCL's invisible-device sentinel
    count: int
    target_class: str  # "0x068000" NVSwitch, "0x0302.." a GPU, "0x068001" a CPU
    target_kind: str  # "nvswitch" | "gpu" | "cpu" | "hidden" | "self" | "unknown"


@dataclass(frozen=True)
class NcclGpu:
    """One GPU as NCCL saw it."""

    index: int  # ``dev``; file order when the file has no ``<gpu>`` element
    pci_bus_id: str
    sm: Probed[int]
    rank: Probed[int]
    gdr: Probed[bool]  # GPUDirect RDMA possible from this GPU
    numa_id: int  # -1: NCCL could not place it (a flattened VM view)
    link_speed: str  # NCCL's text, "32.0 GT/s PCIe"; "" when unknown
    link_width: int  # lanes; 0 when unknown
    pci_gbps: float  # what NCCL credits the PCIe link with (GB/s)
    nvlinks: tuple[NcclNvlink, ...]
    nvlink_gbps: Probed[float]  # what NCCL credits all this GPU's NVLinks with (GB/s)
    arch: Probed[str]  # RCCL's ``gcn`` name ("gfx942"), else its ``arch``
    c2c_links: int = 0  # Grace C2C links to the CPU (GB200/GH200 ``<c2c count>``)
    c2c_gbps: Probed[float] = NO_C2C  # their bandwidth together: ``bw`` (MB/s per link) x ``count`` / 1000

    @property
    def nvlink_count(self) -> int:
        """Count this GPU's NVLinks over all its targets."""
        return sum(link.count for link in self.nvlinks)


@dataclass(frozen=True)
class NcclNet:
    """One ``<net>`` (or a bare NIC function in a hand-written topology file)."""

    label: str  # "NIC0", as in ``topo -m``
    name: Probed[str]  # "mlx5_0"
    pci_bus_id: Probed[str]
    speed_megabits_per_s: Probed[int]
    net_gbps: Probed[float]  # what NCCL credits it with (GB/s)
    gdr: Probed[bool]


@dataclass(frozen=True)
class NcclGraph:
    """One ``<graph>`` of an ``NCCL_GRAPH_DUMP_FILE``: the channels NCCL built for one pattern."""

    id: int
    pattern: str  # "ring", "tree", "nvls", ...
    channels: int
    speed_intra_gbps: Probed[float]
    speed_inter_gbps: Probed[float]
    type_intra: str  # path type NCCL settled for inside the node: "NVL", "PIX", "SYS", ...
    type_inter: str
    orders: tuple[tuple[str, ...], ...]  # per channel, the devices in order ("GPU0", "NET1")


@dataclass(frozen=True)
class NcclTopology:
    """One NCCL XML file: a topology dump (``<system>``) or a graph dump (``<graphs>``)."""

    kind: str  # "topology" | "graph"
    version: str  # the root's ``version``: "1" for NCCL, "2" for RCCL
    flavour: str  # "nccl" | "rccl"
    gpus: tuple[NcclGpu, ...] = ()
    nets: tuple[NcclNet, ...] = ()
    cpu_numa_ids: tuple[int, ...] = ()
    graphs: tuple[NcclGraph, ...] = ()
    describes_nvlink: bool = False  # any ``<nvlink>`` element; a hand-written NCCL_TOPO_FILE often has none
    cut_inside_gpu: int | None = None  # a dump pasted in part that stops inside this GPU's element: its links are cut


STAGED_CEILING_GBPS = 64.0
"""One-way copies staged through a host's memory cross two PCIe links; a PCIe 5.0 x16 link carries about 63 GB/s.
Every GPU pair copying faster went peer to peer (NVLink), whether or not the title says P2P=Enabled."""
COPY_SAMPLES = ("p2pBandwidthLatencyTest", "busGrind", "GPU copy benchmark")
"""Copy tests that measure every GPU pair: the samples' p2pBandwidthLatencyTest and the demo suite's busGrind (with
peer access on and off), and another benchmark's matrix titled only by its unit (peer access unknown)."""


@dataclass(frozen=True)
class BandwidthMatrix:
    """One measured copy-bandwidth matrix (an ``nvbandwidth`` test, a ``p2pBandwidthLatencyTest`` matrix)."""

    test: str  # "device_to_device_memcpy_read_ce"
    title: str  # the line naming the matrix: "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"
    rows: tuple[str, ...]  # "GPU0" | "CPU0"
    columns: tuple[str, ...]
    values_gbps: tuple[tuple[Probed[float], ...], ...]  # absent on the diagonal ("N/A" or 0.00)
    tool: str = "nvbandwidth"  # "nvbandwidth" | "p2pBandwidthLatencyTest" | "busGrind"
    rows_missing: tuple[str, ...] = ()  # rows a GPU-to-GPU matrix should have that the paste stops before

    @property
    def peer_access(self) -> bool | None:
        """p2pBandwidthLatencyTest's copies with peer access on (True) or staged through host memory (False)."""
        if "P2P=Enabled" in self.title:
            return True
        if "P2P=Disabled" in self.title:
            return False
        if self.tool in COPY_SAMPLES:  # a title that does not say: copies no host could stage say it
            pairs = [v for r, row in zip(self.rows, self.values_gbps, strict=False)
                     for c, v in zip(self.columns, row, strict=False) if r != c and r.startswith("GPU")]  # fmt: skip
            # a title that does not say its direction may be a bidirectional test's: both ways staged reach twice
            floor = STAGED_CEILING_GBPS * (1 if "Unidirectional" in self.title else 2)
            if len(pairs) >= 2 and all(isinstance(v, float) and v > floor for v in pairs):
                return True
        return None  # nvbandwidth's tests, or a title cut before it says

    @property
    def direction(self) -> str:
        """``bidirectional`` when both GPUs of a pair copied at once, else ``unidirectional``."""
        return "bidirectional" if "Bidirectional" in self.title else "unidirectional"


@dataclass(frozen=True)
class LatencyMatrix:
    """One measured GPU-to-GPU copy latency matrix (``p2pBandwidthLatencyTest``'s ``P2P=... Latency Matrix (us)``)."""

    test: str  # "P2P=Enabled Latency (P2P Writes)"
    title: str  # the line naming the matrix
    rows: tuple[str, ...]  # "GPU0"
    columns: tuple[str, ...]
    values_us: tuple[tuple[Probed[float], ...], ...]  # absent on the diagonal (a GPU's copy to itself)
    tool: str = "p2pBandwidthLatencyTest"


@dataclass(frozen=True)
class CopyTestFailure:
    """A copy test that failed instead of printing its matrix (nvbandwidth).

    ``kind``: ``data-check`` (the pattern check found wrong bytes after a copy: ``Invalid value when checking the
    pattern``, ``ASSERT in expression h_errorFlag == 0``), ``cuda`` (``[CUDA_ERROR_X] text in expression ...``),
    ``nvml``, ``assert`` (another internal check), ``error`` (``ERROR: ...``); ``stopped``: CUDA's
    p2pBandwidthLatencyTest output that ends on a matrix's title (the copies never finished, or the paste stops).
    """

    kind: str
    testcase: Probed[str]  # the test it was in: the last ``Running <test>.`` before it
    message: str  # "Invalid value when checking the pattern at 0x70a640000000"
    detail: str  # "Current offset : 11136", the failed expression, the CUDA error's name
    cuda_error: Probed[int]
    line: int
    text: str


@dataclass(frozen=True)
class WaivedTest:
    """A copy test the tool skipped because its precondition failed (no GPU pair with peer access, no multicast).

    nvbandwidth up to v0.4 names it (``Waiving device_to_device_memcpy_write_ce.``); from v0.5 it prints
    ``Waived:`` alone, so the name is known only from a ``-t`` on the pasted command line.
    """

    testcase: Probed[str]
    line: int
    text: str


@dataclass(frozen=True)
class Captures:
    """What the NCCL dumps and measured matrices add to a report beyond the machine's facts."""

    nccl_topology: NcclTopology | Unsupported = NO_NCCL_XML
    bandwidth: tuple[BandwidthMatrix, ...] = ()
    latency: tuple[LatencyMatrix, ...] = ()  # p2pBandwidthLatencyTest's GPU-to-GPU latency matrices
    copy_failures: tuple[CopyTestFailure, ...] = ()  # nvbandwidth tests that failed instead of printing a matrix
    waived_tests: tuple[WaivedTest, ...] = ()  # nvbandwidth tests skipped because their precondition failed
