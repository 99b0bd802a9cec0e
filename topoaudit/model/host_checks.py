"""What on the host stands between the GPUs and the fast path.

Virtualisation, RDMA ports, GPUDirect RDMA, every PCIe hop up to the root port, AER counters and kernel-log
signatures.

A live probe (or its snapshot) fills these; other sources leave them absent. Each reading that could not be
taken carries its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.values import Probed, Unsupported

NOT_READ = Unsupported("model", "not provided by this source")


@dataclass(frozen=True)
class RdmaPort:
    """One port of an RDMA device (``/sys/class/infiniband/DEV/ports/N``; ``ibstat`` shows the same)."""

    device: str  # "mlx5_0"
    port: int
    state: Probed[str] = NOT_READ  # "ACTIVE" | "DOWN" | "INIT" | "ARMED"
    phys_state: Probed[str] = NOT_READ  # "LinkUp" | "Disabled" | "Polling" | ...
    rate_gbps: Probed[float] = NOT_READ
    link_layer: Probed[str] = NOT_READ  # "InfiniBand" | "Ethernet"
    link_downed: Probed[int] = NOT_READ  # counters/link_downed
    symbol_error: Probed[int] = NOT_READ  # counters/symbol_error
    pci_bus_id: Probed[str] = NOT_READ


@dataclass(frozen=True)
class PcieHop:
    """One PCIe link on the path from a GPU or NIC up to its root port.

    ``device`` is the link's lower end, ``upstream`` the port above it; the maxima are the lower of the two
    ends' ``max_link_*``, so a link below them was trained down (a bad riser, a slot wired narrower, power).
    """

    device: str
    upstream: str
    speed_current_gts: Probed[float] = NOT_READ
    speed_max_gts: Probed[float] = NOT_READ
    width_current: Probed[int] = NOT_READ
    width_max: Probed[int] = NOT_READ
    endpoints: tuple[str, ...] = ()  # bus ids of the GPUs and NICs whose path runs through this hop


# ACS Control register bits (PCIe base spec 7.7.8.3), named as `lspci -vvv` prints them on the ACSCtl line
ACS_CONTROL_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")


def acs_flags(control: int) -> tuple[str, ...]:
    """Name the ACS control bits set: 0x1d -> ("SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd")."""
    return tuple(name for bit, name in enumerate(ACS_CONTROL_BITS) if control >> bit & 1)


@dataclass(frozen=True)
class AcsBridge:
    """The ACS state of one PCIe bridge above GPUs or RDMA NICs (``lspci -vvv -s BDF``: ACSCtl).

    With P2P Request or Completion Redirect on, peer traffic below the bridge is sent up to the root complex
    (slow, or dropped by the IOMMU) though NVML still reports P2P as supported.
    """

    bridge: str  # "0000:00:01.0"
    control: Probed[int] = NOT_READ  # the ACS Control register (ECAP_ACS+0x6)
    enabled: tuple[str, ...] = ()  # the control bits set, as lspci names them: "SrcValid", "ReqRedir", ...
    below: tuple[str, ...] = ()  # bus ids of the GPUs and RDMA NICs whose path runs through the bridge


@dataclass(frozen=True)
class AerCounters:
    """Advanced Error Reporting totals of one PCI device since boot (``aer_dev_*`` in sysfs)."""

    device: str
    correctable: Probed[int] = NOT_READ
    nonfatal: Probed[int] = NOT_READ
    fatal: Probed[int] = NOT_READ


@dataclass(frozen=True)
class KernelEvent:
    """One kernel-log line with a known GPU failure signature."""

    signature: str  # "xid-79" | "xid-74" | "xid-145" | "fallen-off-bus" | "nvlink-training-failed"
    pci_bus_id: Probed[str]  # normalised; the GPU the line names
    line: str  # verbatim (trimmed to a readable length)


# nvmlGpuFabricInfo_v3 healthMask fields: (name, shift, width mask, value that means the problem)
_HEALTH_FLAGS = (("degraded-bandwidth", 0, 0x3, 1), ("route-recovery", 2, 0x3, 1), ("route-unhealthy", 4, 0x3, 1),
                 ("access-timeout-recovery", 6, 0x3, 1))  # fmt: skip
_INCORRECT_CONFIGURATION = {2: "incorrect-sysguid", 3: "incorrect-chassis-serial", 4: "no-partition",
                            5: "insufficient-nvlinks", 6: "incompatible-gpu-firmware", 7: "invalid-location",
                            8: "gpu-state-invalid"}  # fmt: skip


def decode_health_mask(mask: int) -> tuple[str, ...]:
    """Name the NVML_GPU_FABRIC_HEALTH_MASK_* fields that report a problem (nvml.h).

    Each 2-bit field is 1 when true; the 4-bit incorrect-configuration field names what is wrong (1 is "none").
    """
    problems = [name for name, shift, width, bad in _HEALTH_FLAGS if (mask >> shift) & width == bad]
    config = (mask >> 8) & 0xF
    if config in _INCORRECT_CONFIGURATION:
        problems.append(f"incorrect-configuration: {_INCORRECT_CONFIGURATION[config]}")
    return tuple(problems)


@dataclass(frozen=True)
class FabricHealth:
    """One GPU's NVSwitch-fabric health (NVML fabric info v3): the decoded mask and summary."""

    gpu: int
    health_mask: Probed[int] = NOT_READ
    problems: tuple[str, ...] = ()  # "degraded-bandwidth", "route-recovery", "route-unhealthy", ...
    summary: Probed[str] = NOT_READ  # "healthy" | "unhealthy" | "limited-capacity" | "not-supported"


@dataclass(frozen=True)
class HostChecks:
    """Everything a probe read about the host's blockers; each part absent with its reason when unread."""

    virtualization: Probed[str] = NOT_READ  # "bare-metal" | "vm"
    virtualization_evidence: Probed[str] = NOT_READ  # "DMI sys_vendor QEMU; cpu flag hypervisor"
    rdma_ports: Probed[tuple[RdmaPort, ...]] = NOT_READ
    gpudirect_rdma: Probed[str] = NOT_READ  # "nvidia_peermem" | "dma-buf" | "none"
    gpudirect_rdma_evidence: Probed[str] = NOT_READ
    pcie_hops: Probed[tuple[PcieHop, ...]] = NOT_READ
    aer: Probed[tuple[AerCounters, ...]] = NOT_READ
    kernel_events: Probed[tuple[KernelEvent, ...]] = NOT_READ
    fabric_health: Probed[tuple[FabricHealth, ...]] = NOT_READ
    acs: Probed[tuple[AcsBridge, ...]] = NOT_READ  # every bridge above the GPUs and RDMA NICs
    pcie_slots: Probed[dict[str, str]] = NOT_READ  # physical slot name by the address of its device "0000:18:00"
