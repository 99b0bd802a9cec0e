"""NCCL's own view of the box, as its ``NCCL_DEBUG=INFO`` log tells it.

Which transport NCCL chose between each pair of ranks, how many channels of each kind it built, whether
NVLS and GPUDirect RDMA were usable, and what it warned about. Every fact keeps the log line it came from
(``line``, 1-based, and the line's text) so a finding can quote its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.machine import Machine
from topoaudit.model.values import Probed, Unsupported

NOT_LOGGED = Unsupported(source="nccl-log", reason="not in the log")

TRANSPORT_KINDS = ("P2P", "SHM", "NET", "COLLNET", "OTHER")
"""Transport families, fastest first within one host: P2P (NVLink or PCIe peer access), SHM (through host
memory), NET (a network plugin: IB, RoCE, sockets, libfabric)."""


QUIET = frozenset(
    ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_DEBUG_TIMESTAMP_LEVELS",
     "NCCL_DEBUG_TIMESTAMP_FORMAT", "NCCL_TOPO_DUMP_FILE", "NCCL_TOPO_DUMP_FILE_RANK", "NCCL_GRAPH_DUMP_FILE",
     "NCCL_GRAPH_DUMP_FILE_RANK", "NCCL_HOME", "NCCL_VERSION", "NCCL_SET_THREAD_NAME", "NCCL_PARAM_DUMP_ALL",
     "NCCL_NO_CACHE")
)  # fmt: skip
"""Variables that change what NCCL prints, never the path it takes."""


@dataclass(frozen=True)
class LogLine:
    """One line of the log, as evidence: its 1-based number and its text (prefix kept, long lines cut)."""

    line: int
    text: str


@dataclass(frozen=True)
class NcclSetting:
    """An NCCL variable the input shows set.

    ``NCCL_P2P_LEVEL set by environment to LOC`` in a log, or ``NCCL_ALGO=Ring`` on a pasted command line. The
    value is kept as printed (the period after an integer dropped).
    """

    name: str  # "NCCL_P2P_LEVEL"
    value: str  # "LOC", "1", "^NVLS"
    origin: str  # "environment" (NCCL's own line: the environment or nccl.conf) | "command line"
    evidence: LogLine


@dataclass(frozen=True)
class NcclRank:
    """One rank as the log places it: host, CUDA and NVML device, PCI bus id, communicator shape."""

    rank: int
    host: Probed[str] = NOT_LOGGED
    cuda_device: Probed[int] = NOT_LOGGED
    nvml_device: Probed[int] = NOT_LOGGED
    pci_bus_id: Probed[str] = NOT_LOGGED  # normalised "0000:18:00.0"
    ranks_in_comm: Probed[int] = NOT_LOGGED
    nodes_in_comm: Probed[int] = NOT_LOGGED
    local_ranks: Probed[int] = NOT_LOGGED
    local_rank: Probed[int] = NOT_LOGGED
    mnnvl: Probed[bool] = NOT_LOGGED
    init_complete: bool = False


@dataclass(frozen=True)
class NcclDevice:
    """A CUDA device that printed lines (the ``[dev]`` of ``host:pid:tid [dev]``), ranks known or not."""

    host: Probed[str]
    cuda_device: int


@dataclass(frozen=True)
class NcclTransport:
    """The connections NCCL set up from ``src_rank`` to ``dst_rank`` over one transport, across channels.

    ``via`` is the transport as logged after ``via`` (``P2P/CUMEM/read``, ``SHM/direct/direct``,
    ``NET/IB/0/GDRDMA``). ``direction`` is ``send``/``receive`` on network lines and "" elsewhere.
    """

    src_rank: int
    dst_rank: int
    kind: str  # one of TRANSPORT_KINDS
    via: str
    direction: str
    gdr: bool  # network transport with GPUDirect RDMA (/GDRDMA)
    proxy_rank: Probed[int]  # PXN: the local rank whose NIC carries the traffic
    channels: tuple[int, ...]
    first: LogLine
    line_count: int


@dataclass(frozen=True)
class NcclRing:
    """A ring order NCCL printed for one or more channels (``Channel 00/24 : 0 1 2 3``)."""

    order: tuple[int, ...]
    channels: tuple[int, ...]
    first: LogLine


@dataclass(frozen=True)
class NcclTree:
    """One rank's tree neighbours as printed (``Trees [0] 1/-1/-1->0->-1 ...``), identical channels merged."""

    rank: int
    shape: str  # "1/-1/-1->0->-1" (children->rank->parent)
    channels: tuple[int, ...]
    first: LogLine


@dataclass(frozen=True)
class ChannelCounts:
    """``24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer``."""

    coll: int
    collnet: Probed[int]  # absent in NCCL 2.18-2.19 and before 2.9
    nvls: Probed[int]  # absent before 2.17
    p2p: int
    p2p_per_peer: int
    evidence: LogLine


@dataclass(frozen=True)
class NvlsSupport:
    """``NVLS multicast support is [not] available on dev N``."""

    host: Probed[str]
    device: int
    available: bool
    evidence: LogLine


@dataclass(frozen=True)
class GdrDecision:
    """Whether NCCL uses GPUDirect RDMA with an HCA (per HCA, or per GPU and HCA in older logs)."""

    host: Probed[str]
    hca: str  # "0 'mlx5_0'" or the HCA index
    enabled: bool
    gpu_bus_id: Probed[str]  # the older per-GPU form names the GPU
    distance: Probed[str]  # the older form's "7 > 4": path distance against the limit
    evidence: LogLine


@dataclass(frozen=True)
class NetDevices:
    """``NET/IB : Using [0]mlx5_0:1/IB ...`` or ``NET/IB : No device found.``: the NICs a network plugin found."""

    host: Probed[str]
    plugin: str  # "IB", "Socket", "OFI", ...
    devices: tuple[str, ...]  # "mlx5_0:1/IB", "eth0:10.0.0.1"; empty when none was found
    evidence: LogLine


@dataclass(frozen=True)
class NetDevice:
    """One NIC a network plugin listed: ``[1]mlx5_1:1/RoCE`` (IB verbs) or ``[0]eth0:10.0.0.5<0>`` (sockets)."""

    host: Probed[str]
    plugin: str  # "IB", "Socket", "IBext_v8", ...
    index: int  # NCCL's device number: the N of NET/IB/N on channel lines
    name: str  # "mlx5_1", "eth0"
    port: Probed[int]  # the HCA port (IB verbs)
    link_layer: Probed[str]  # "IB" | "RoCE" (IB verbs)
    flags: tuple[str, ...]  # ("SHARP",): what NCCL printed after the link layer
    address: Probed[str]  # the interface address (sockets)
    speed_mbps: Probed[int]  # from ``NET/IB: [0] mlx5_0:uverbs0:1/IB ... speed=400000`` when printed
    evidence: LogLine


@dataclass(frozen=True)
class P2pDisabled:
    """``P2P is disabled between [NVLINK] connected GPUs a and b``: NCCL will not use peer access there."""

    host: Probed[str]
    gpu_a: int
    gpu_b: int
    nvlink: bool  # the NVLink variant: a WARN, and NCCL stops
    evidence: LogLine


PATTERN_NAMES = {1: "balanced tree", 2: "split tree", 3: "tree", 4: "ring", 5: "NVLS", 6: "CollNet direct"}
"""NCCL's graph pattern ids (src/include/graph.h)."""


@dataclass(frozen=True)
class GraphPattern:
    """``Pattern 4, crossNic 0, nChannels 2, bw 24.0/24.0, type SYS/PIX, sameChannels 1`` (GRAPH subsystem)."""

    pattern: int  # 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 NVLS, 6 CollNet direct
    channels: int
    intra_gbps: float
    inter_gbps: float
    intra_path: str  # NCCL's path type inside a node: NVL, PIX, PXB, PHB, SYS, ...
    inter_path: str
    evidence: LogLine


@dataclass(frozen=True)
class MnnvlFabric:
    """A GPU's NVLink fabric registration as NCCL read it.

    From ``MNNVL busId 0x18000 fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x0``: state 3 is completed;
    an all-zero UUID means no multi-node NVLink.
    """

    host: Probed[str]
    pci_bus_id: Probed[str]
    fabric_uuid: str
    clique_id: int
    state: int
    health_mask: int
    evidence: LogLine


@dataclass(frozen=True)
class SystemLink:
    """A link figure from NCCL's GRAPH print of the system (``+ NVL[370.8] - NVS/0-0``), identical ones merged."""

    kind: str  # NVL, PCI, SYS, NET, C2C, ...
    gbps: float  # what NCCL computed for the link (see topoaudit.model.nccl_bandwidth)
    target: str  # the first far end printed: "NVS/0-0", "GPU/E000", "CPU/1"
    count: int
    first: LogLine


@dataclass(frozen=True)
class NcclWarning:
    """A ``NCCL WARN`` line: where in NCCL's source it was raised and what it said."""

    source_location: str  # "transport/nvls.cc:154", "" when the line does not say
    message: str
    evidence: LogLine


@dataclass(frozen=True)
class NcclEvent:
    """A milestone NCCL logs once per rank.

    ``Connected all rings``, ``Connected all trees``, ``Connected NVLS tree``, ``Using network IB``.
    """

    what: str
    count: int
    first: LogLine


@dataclass(frozen=True)
class NcclView:
    """Everything one ``NCCL_DEBUG=INFO`` log (possibly interleaved from many ranks and hosts) said."""

    version: Probed[str]  # "2.23.4" from the banner
    bracket_value: str  # "device-index" (2.18+) | "pci-bus-id" (up to 2.17) | "none": what R[x] means
    bracket_basis: str  # "version banner" | "form of the values" | "no rank lines"
    hosts: tuple[str, ...]  # in order of first appearance; empty when the prefixes were stripped
    ranks: tuple[NcclRank, ...]
    devices: tuple[NcclDevice, ...]
    transports: tuple[NcclTransport, ...]
    rings: tuple[NcclRing, ...]
    trees: tuple[NcclTree, ...]
    channel_counts: tuple[ChannelCounts, ...]
    nvls_support: tuple[NvlsSupport, ...]
    gdr: tuple[GdrDecision, ...]
    net_devices: tuple[NetDevices, ...]
    networks: tuple[str, ...]  # "IB", "Socket", "AWS Libfabric" from "Using network X"
    p2p_disabled: tuple[P2pDisabled, ...]
    patterns: tuple[GraphPattern, ...]
    system_links: tuple[SystemLink, ...]  # GRAPH subsystem only
    mnnvl_fabric: tuple[MnnvlFabric, ...]
    warnings: tuple[NcclWarning, ...]
    events: tuple[NcclEvent, ...]
    nccl_lines: int  # lines that carried NCCL INFO/WARN, or an NCCL message whose prefix was cut off
    lines_total: int
    settings: tuple[NcclSetting, ...] = ()  # "NCCL_X set by environment to V", once per name and value
    nics: tuple[NetDevice, ...] = ()  # the NICs the network plugins listed, per host
    comm_size: Probed[int] = NOT_LOGGED  # ranks in the communicator: its nRanks line, or a whole ring order
    truncated: Probed[LogLine] = NOT_LOGGED  # the line the paste ends inside (cut mid-line)
    lines_per_host: tuple[tuple[str, int], ...] = ()  # NCCL lines each host printed, in order of appearance

    def rank(self, rank: int) -> NcclRank | None:
        """Return the rank's record, or None when the log never placed it."""
        return next((r for r in self.ranks if r.rank == rank), None)

    def coverage(self) -> str:
        """Which ranks the paste shows, against the communicator's size when the paste gives it.

        ``"the paste shows 3 of 8 ranks (0, 2, 5)"``; ``"ranks 0-3 seen; the communicator's size is not in the
        paste"``; "" when every rank is seen or no rank is named.
        """
        seen = sorted(r.rank for r in self.ranks)
        if not seen:
            return ""
        shown = _rank_list(seen)
        if isinstance(self.comm_size, int):
            if len(seen) >= self.comm_size:
                return ""
            return f"the paste shows {len(seen)} of {self.comm_size} ranks ({shown})"
        return f"ranks {shown} seen; the communicator's size is not in the paste"


def _rank_list(ranks: list[int]) -> str:
    """``0-3, 7, 12-13``: runs of consecutive ranks joined."""
    parts: list[str] = []
    start = prev = ranks[0]
    for r in [*ranks[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    return ", ".join(parts)


def same_host_name(logged: str, hostname: str) -> bool:
    """Tell whether NCCL's log prefix names the machine.

    NCCL cuts the host name at its first dot (``getHostName(hostname, 1024, '.')`` in src/debug.cc), while a
    probe records it whole: ``node7`` in the log is ``node7.cluster.example`` on the machine.
    """
    return logged == hostname or logged == hostname.split(".", 1)[0]


def rank_gpu(rank: NcclRank | None, machine: Machine) -> int | None:
    """Return the machine's GPU index a rank runs on, when the log places the rank on the machine's host."""
    if rank is None:
        return None
    hostname = machine.host.hostname
    if isinstance(hostname, str) and isinstance(rank.host, str) and not same_host_name(rank.host, hostname):
        return None
    by_bus = {g.pci_bus_id: g.index for g in machine.gpus if isinstance(g.pci_bus_id, str)}
    if isinstance(rank.pci_bus_id, str) and rank.pci_bus_id in by_bus:
        return by_bus[rank.pci_bus_id]
    indexes = {g.index for g in machine.gpus}
    for index in (rank.nvml_device, rank.cuda_device):
        if isinstance(index, int) and index in indexes:
            return index
    return None
