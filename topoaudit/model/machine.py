"""The machine as observed: GPUs, NICs, the link between every pair of devices, host facts.

Built from any source -- a pasted ``nvidia-smi topo -m`` (:mod:`topoaudit.parse.topo_matrix`), a live
NVML probe or its saved snapshot (:mod:`topoaudit.probe`). A fact a source cannot give is an
:class:`~topoaudit.model.values.Unsupported` value naming the source, never ``None``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from topoaudit.model.values import Probed, Unsupported

if TYPE_CHECKING:  # bound by bind_host_checks_type() when a saved report is read
    from topoaudit.model.host_checks import HostChecks


class PathLevel(enum.IntEnum):
    """How two devices reach each other, fastest first (the ``nvidia-smi topo -m`` legend).

    The integer order is the order of cost, so ``max(levels)`` is the bottleneck of a path.
    """

    SELF = 0  # X
    NVLINK = 1  # NV#: a bonded set of # NVLinks
    PIX = 2  # at most a single PCIe bridge
    PXB = 3  # multiple PCIe bridges, no host bridge
    PHB = 4  # a PCIe host bridge (typically the CPU)
    NODE = 5  # between PCIe host bridges within a NUMA node
    SYS = 6  # the SMP interconnect between NUMA nodes (QPI/UPI/Infinity Fabric); old drivers say SOC
    UNKNOWN = 7  # a code this tool does not know (kept verbatim on the link)

    @property
    def label(self) -> str:
        """Name the level in words ("PCIe switch (PIX)") for messages and reports."""
        return _LEVEL_LABELS[self]


_LEVEL_LABELS = {
    PathLevel.SELF: "self",
    PathLevel.NVLINK: "NVLink",
    PathLevel.PIX: "PCIe switch (PIX)",
    PathLevel.PXB: "PCIe bridges (PXB)",
    PathLevel.PHB: "PCIe host bridge (PHB)",
    PathLevel.NODE: "host bridges within a NUMA node (NODE)",
    PathLevel.SYS: "cross-socket SMP link (SYS)",
    PathLevel.UNKNOWN: "unknown path",
}

NOT_IN_SOURCE = Unsupported(source="model", reason="not provided by this source")


def level_from_code(code: str) -> tuple[PathLevel, int]:
    """Map a ``topo -m`` cell (``X``, ``NV12``, ``PIX``, ``SOC``...) to a level and an NVLink count."""
    c = code.strip().upper()
    if c == "X":
        return PathLevel.SELF, 0
    if c.startswith("NV") and c[2:].isdecimal():
        return PathLevel.NVLINK, int(c[2:])
    if c == "SOC":
        return PathLevel.SYS, 0
    try:
        return PathLevel[c], 0
    except KeyError:
        return PathLevel.UNKNOWN, 0


@dataclass(frozen=True)
class NvLinkPort:
    """One NVLink port of a GPU (NVML ``nvmlDeviceGetNvLink*``; CLI ``nvidia-smi nvlink -s/-e/-R``)."""

    link: int
    state: Probed[str] = NOT_IN_SOURCE  # "active" | "inactive"
    version: Probed[int] = NOT_IN_SOURCE
    remote_device_type: Probed[str] = NOT_IN_SOURCE  # "gpu" | "switch" | "ibmnpu"
    remote_pci_bus_id: Probed[str] = NOT_IN_SOURCE
    replay_errors: Probed[int] = NOT_IN_SOURCE
    recovery_errors: Probed[int] = NOT_IN_SOURCE
    crc_flit_errors: Probed[int] = NOT_IN_SOURCE
    crc_data_errors: Probed[int] = NOT_IN_SOURCE


@dataclass(frozen=True)
class PcieLink:
    """PCIe link of a GPU (NVML ``nvmlDeviceGetCurrPcieLink*``/``GetMaxPcieLink*``)."""

    gen_current: Probed[int] = NOT_IN_SOURCE
    gen_max: Probed[int] = NOT_IN_SOURCE
    width_current: Probed[int] = NOT_IN_SOURCE
    width_max: Probed[int] = NOT_IN_SOURCE
    under_load: Probed[bool] = NOT_IN_SOURCE  # an idle GPU drops its link speed (power saving)


@dataclass(frozen=True)
class FabricInfo:
    """NVSwitch/NVL72 fabric registration (NVML ``nvmlDeviceGetGpuFabricInfoV``)."""

    state: Probed[str] = NOT_IN_SOURCE  # "not-supported" | "not-started" | "in-progress" | "completed"
    status: Probed[str] = NOT_IN_SOURCE  # NVML return name of the registration, e.g. "SUCCESS"
    cluster_uuid: Probed[str] = NOT_IN_SOURCE
    clique_id: Probed[int] = NOT_IN_SOURCE


@dataclass(frozen=True)
class Gpu:
    """One GPU as the source saw it."""

    index: int
    name: Probed[str] = NOT_IN_SOURCE
    uuid: Probed[str] = NOT_IN_SOURCE
    serial: Probed[str] = NOT_IN_SOURCE
    board_part_number: Probed[str] = NOT_IN_SOURCE
    pci_bus_id: Probed[str] = NOT_IN_SOURCE  # normalised "0000:18:00.0"
    memory_total_bytes: Probed[int] = NOT_IN_SOURCE
    architecture: Probed[str] = NOT_IN_SOURCE
    mig_mode: Probed[str] = NOT_IN_SOURCE
    cpu_affinity: Probed[tuple[int, ...]] = NOT_IN_SOURCE  # logical CPUs, sorted
    numa_nodes: Probed[tuple[int, ...]] = NOT_IN_SOURCE  # NUMA affinity of the CPUs near the GPU
    gpu_numa_id: Probed[int] = NOT_IN_SOURCE  # the GPU's own NUMA node (Grace/MI300A-style memory)
    pcie: PcieLink = field(default_factory=PcieLink)
    nvlink_ports: Probed[tuple[NvLinkPort, ...]] = NOT_IN_SOURCE
    fabric: FabricInfo = field(default_factory=FabricInfo)
    status: Probed[str] = "ok"  # Failed(...) when the GPU was lost mid-probe

    @property
    def label(self) -> str:
        """Name the GPU as ``nvidia-smi topo -m`` does ("GPU3"), the label links refer to."""
        return f"GPU{self.index}"


@dataclass(frozen=True)
class Nic:
    """One network device column of ``topo -m`` (or an RDMA device from sysfs)."""

    label: str  # the column name: "NIC0" or "mlx5_0"
    device: Probed[str] = NOT_IN_SOURCE  # from the NIC Legend: "mlx5_0"
    pci_bus_id: Probed[str] = NOT_IN_SOURCE
    netdev: Probed[str] = NOT_IN_SOURCE
    link_rate_gbps: Probed[float] = NOT_IN_SOURCE
    numa_node: Probed[int] = NOT_IN_SOURCE


@dataclass(frozen=True)
class Link:
    """The path between two devices, ``a`` < ``b`` by label; ``code`` is the source's verbatim cell."""

    a: str
    b: str
    code: str
    level: PathLevel
    nvlinks: int = 0  # bonded NVLinks on this pair; 0 when the path is PCIe/SMP only


@dataclass(frozen=True)
class P2PStatus:
    """Peer-to-peer capability of one GPU pair (NVML ``nvmlDeviceGetP2PStatus``; ``nvidia-smi topo -p2p``)."""

    a: int
    b: int
    read: Probed[str] = NOT_IN_SOURCE  # "ok" | "chipset-not-supported" | "disabled-by-regkey" | ...
    write: Probed[str] = NOT_IN_SOURCE
    nvlink: Probed[str] = NOT_IN_SOURCE
    atomics: Probed[str] = NOT_IN_SOURCE


@dataclass(frozen=True)
class SourceDisagreement:
    """Two sources answering the same question differently (NVML against ``nvidia-smi`` text)."""

    subject: str  # "GPU0-GPU1", "GPU3 NVLink 5", "GPU count"
    nvml: str  # what NVML said
    other: str  # what the other source said
    other_source: str  # "nvidia-smi topo -m" | "nvidia-smi nvlink -s" | "sysfs"


@dataclass(frozen=True)
class Host:
    """Facts about the host, where the source has them."""

    hostname: Probed[str] = NOT_IN_SOURCE
    product: Probed[str] = NOT_IN_SOURCE  # DMI product name
    kernel: Probed[str] = NOT_IN_SOURCE
    driver_version: Probed[str] = NOT_IN_SOURCE
    nvml_version: Probed[str] = NOT_IN_SOURCE
    cuda_driver_version: Probed[str] = NOT_IN_SOURCE
    visible_gpu_count: Probed[int] = NOT_IN_SOURCE
    total_gpu_count: Probed[int] = NOT_IN_SOURCE  # all GPUs on the board, when the source can tell
    # --- probe only (topoaudit/probe): the OS and environment around the GPUs ---
    iommu: Probed[str] = NOT_IN_SOURCE  # "off" | "passthrough" | "translating"
    acs_redirect_bridges: Probed[tuple[str, ...]] = NOT_IN_SOURCE  # bridges above GPUs with ACS P2P redirect on
    environment: Probed[tuple[str, ...]] = NOT_IN_SOURCE  # "NAME=value" of NCCL_*/CUDA_* variables
    nccl_conf: Probed[tuple[str, ...]] = NOT_IN_SOURCE  # "NAME=value" lines of /etc/nccl.conf
    fabric_manager: Probed[str] = NOT_IN_SOURCE  # "running" | "not running"
    disagreements: Probed[tuple[SourceDisagreement, ...]] = NOT_IN_SOURCE  # NVML vs nvidia-smi text
    checks: Probed[HostChecks] = NOT_IN_SOURCE  # what blocks P2P, GPUDirect RDMA and the PCIe path


@dataclass(frozen=True)
class Machine:
    """Everything the judge needs to know about one machine, from one source."""

    source: str  # "topo-matrix" | "nvml" | "snapshot" | ...
    gpus: tuple[Gpu, ...]
    nics: tuple[Nic, ...] = ()
    links: tuple[Link, ...] = ()
    host: Host = field(default_factory=Host)
    p2p: tuple[P2PStatus, ...] = ()
    nvswitches: tuple[str, ...] = ()  # PCI bus ids of NVSwitches seen at the far end of NVLink ports

    def link(self, a: str, b: str) -> Link | None:
        """Return the link between two device labels, in either order."""
        return self._link_index().get((a, b)) or self._link_index().get((b, a))

    def _link_index(self) -> dict[tuple[str, str], Link]:
        cache = self.__dict__.get("_links_by_pair")
        if cache is None:
            cache = {(lk.a, lk.b): lk for lk in self.links}
            object.__setattr__(self, "_links_by_pair", cache)
        return cache

    @property
    def gpu_model(self) -> str | None:
        """The GPU product name when every GPU reports the same one; None when unknown or mixed."""
        names = {g.name for g in self.gpus if isinstance(g.name, str)}
        return names.pop() if len(names) == 1 else None


def bind_host_checks_type() -> None:
    """Bind :class:`HostChecks` where ``decode`` resolves the Host's type hints, when a saved report is read.

    A machine from a pasted matrix then never loads the host checks' model.
    """
    from topoaudit.model.host_checks import HostChecks

    globals()["HostChecks"] = HostChecks
