"""The snapshot record: everything one probe learned, as a versioned JSON document.

A snapshot keeps the *answers* of every source (NVML, ``nvidia-smi`` texts, sysfs, the environment), each
absent answer with its reason, versions and timestamps. What those answers mean -- the Machine they imply
-- is :mod:`topoaudit.probe.interpret`.

Schema (``"kind": "topoaudit-snapshot"``, ``"schema_version": 2``): the dataclasses below, encoded by
:mod:`topoaudit.model.codec` (absent values as ``{"status", "source", "reason"}``, field names with units).
A document with a newer ``schema_version`` is refused with an InputError; older versions are read by
:func:`_upgrade`. Version 2 added the host checks: virtualisation, RDMA ports, GPUDirect RDMA, the bridges
above every GPU and NIC with their links and AER counters, kernel-log signatures and fabric health.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from topoaudit.errors import InputError
from topoaudit.model.codec import DecodeError, decode, encode, read_json, shown
from topoaudit.model.host_checks import KernelEvent, RdmaPort
from topoaudit.model.values import Probed, Unsupported

SNAPSHOT_KIND = "topoaudit-snapshot"
SNAPSHOT_SCHEMA_VERSION = 2
MACHINE_SOURCE = "nvml"  # the Machine of a live probe and of its saved snapshot are the same

NOT_PROBED = Unsupported("probe", "not probed")


@dataclass(frozen=True)
class NvLinkRecord:
    """One NVLink port as NVML answered (``nvidia-smi nvlink -s/-e -i GPU``)."""

    link: int
    state: Probed[str] = NOT_PROBED  # "active" | "inactive"
    version: Probed[str] = NOT_PROBED  # "4.0" (mapped from nvmlNvlinkVersion_t, not the raw int)
    remote_device_type: Probed[str] = NOT_PROBED  # "gpu" | "switch" | "ibmnpu" | "unknown"
    remote_pci_bus_id: Probed[str] = NOT_PROBED  # normalised; "ffffffff:ff:ff.0" for an invisible switch
    replay_errors: Probed[int] = NOT_PROBED
    recovery_errors: Probed[int] = NOT_PROBED
    crc_flit_errors: Probed[int] = NOT_PROBED
    crc_data_errors: Probed[int] = NOT_PROBED


@dataclass(frozen=True)
class GpuRecord:
    """One GPU as NVML answered; ``status`` is Failed when it was lost mid-probe."""

    index: int
    status: Probed[str] = "ok"
    name: Probed[str] = NOT_PROBED
    uuid: Probed[str] = NOT_PROBED
    serial: Probed[str] = NOT_PROBED
    board_part_number: Probed[str] = NOT_PROBED
    pci_bus_id: Probed[str] = NOT_PROBED  # normalised "0000:18:00.0"
    pci_bus_id_nvml: Probed[str] = NOT_PROBED  # verbatim "00000000:18:00.0"
    pci_device_id: Probed[str] = NOT_PROBED  # "0x233010de"
    memory_total_bytes: Probed[int] = NOT_PROBED
    architecture: Probed[str] = NOT_PROBED  # "hopper"
    mig_mode: Probed[str] = NOT_PROBED  # "disabled" | "enabled" | "enabled (pending disable)"...
    cpu_affinity: Probed[tuple[int, ...]] = NOT_PROBED
    numa_nodes: Probed[tuple[int, ...]] = NOT_PROBED  # memory affinity (NUMA nodes near the GPU)
    gpu_numa_id: Probed[int] = NOT_PROBED  # the GPU's own NUMA node (Grace C2C)
    pcie_gen_current: Probed[int] = NOT_PROBED
    pcie_gen_max: Probed[int] = NOT_PROBED  # of the link (capped by the slot)
    pcie_gen_gpu_max: Probed[int] = NOT_PROBED  # of the GPU itself
    pcie_width_current: Probed[int] = NOT_PROBED
    pcie_width_max: Probed[int] = NOT_PROBED
    utilization_percent: Probed[int] = NOT_PROBED
    nvlinks: Probed[tuple[NvLinkRecord, ...]] = NOT_PROBED
    fabric_state: Probed[str] = NOT_PROBED  # "not-supported" | "not-started" | "in-progress" | "completed"
    fabric_status: Probed[str] = NOT_PROBED  # NVML return name, e.g. "SUCCESS"
    fabric_cluster_uuid: Probed[str] = NOT_PROBED
    fabric_clique_id: Probed[int] = NOT_PROBED
    fabric_health_mask: Probed[int] = NOT_PROBED  # nvmlGpuFabricInfo_v3 healthMask, raw
    fabric_health_summary: Probed[str] = NOT_PROBED  # "healthy" | "unhealthy" | "limited-capacity" | ...


@dataclass(frozen=True)
class PairRecord:
    """One GPU pair (a < b): PCIe common ancestor and P2P status per capability, a -> b."""

    a: int
    b: int
    common_ancestor: Probed[str] = NOT_PROBED  # PIX | PXB | PHB | NODE | SYS | INTERNAL
    p2p_read: Probed[str] = NOT_PROBED  # "ok" | "chipset-not-supported" | "disabled-by-regkey" | ...
    p2p_write: Probed[str] = NOT_PROBED
    p2p_nvlink: Probed[str] = NOT_PROBED
    p2p_atomics: Probed[str] = NOT_PROBED


@dataclass(frozen=True)
class SystemRecord:
    """NVML system facts (``nvidia-smi`` header line)."""

    driver_version: Probed[str] = NOT_PROBED
    nvml_version: Probed[str] = NOT_PROBED
    cuda_driver_version: Probed[str] = NOT_PROBED  # "12.4"
    gpu_count: Probed[int] = NOT_PROBED


@dataclass(frozen=True)
class PcieDevice:
    """A PCI device from sysfs: its path from the root complex, NUMA node, link and ACS state."""

    bus_id: str  # "0000:18:00.0"
    path: tuple[str, ...]  # ("pci0000:00", "0000:00:01.0", ..., bus_id)
    numa_node: Probed[int] = NOT_PROBED
    link_speed_current: Probed[str] = NOT_PROBED  # "32.0 GT/s PCIe"
    link_speed_max: Probed[str] = NOT_PROBED
    link_width_current: Probed[int] = NOT_PROBED
    link_width_max: Probed[int] = NOT_PROBED
    aer_correctable: Probed[int] = NOT_PROBED  # TOTAL_ERR_COR of aer_dev_correctable
    aer_nonfatal: Probed[int] = NOT_PROBED  # TOTAL_ERR_NONFATAL of aer_dev_nonfatal
    aer_fatal: Probed[int] = NOT_PROBED  # TOTAL_ERR_FATAL of aer_dev_fatal


@dataclass(frozen=True)
class RdmaNic:
    """An RDMA device of /sys/class/infiniband (InfiniBand or RoCE)."""

    name: str  # "mlx5_0"
    pci_bus_id: Probed[str] = NOT_PROBED
    netdevs: Probed[tuple[str, ...]] = NOT_PROBED
    rate_gbps: Probed[float] = NOT_PROBED  # of the first active port
    link_layer: Probed[str] = NOT_PROBED  # "InfiniBand" | "Ethernet"
    numa_node: Probed[int] = NOT_PROBED


@dataclass(frozen=True)
class AcsRecord:
    """The ACS Control register of one bridge above a GPU or RDMA NIC (``lspci -vvv -s BDF``: ACSCtl)."""

    bus_id: str  # "0000:00:01.0"
    control: Probed[int] = NOT_PROBED  # ECAP_ACS+0x6, as `setpci -s BDF ECAP_ACS+0x6.w` prints it


@dataclass(frozen=True)
class OsRecord:
    """The host around the GPUs (sysfs, /proc, uname)."""

    hostname: Probed[str] = NOT_PROBED
    kernel: Probed[str] = NOT_PROBED
    product: Probed[str] = NOT_PROBED  # DMI product name
    numa_node_count: Probed[int] = NOT_PROBED
    iommu: Probed[str] = NOT_PROBED  # "off" | "passthrough" | "translating"
    iommu_evidence: Probed[str] = NOT_PROBED  # what the answer rests on (cmdline, /sys/class/iommu)
    nvidia_pci_gpus: Probed[tuple[str, ...]] = NOT_PROBED  # NVIDIA display controllers seen on the PCI bus
    acs_redirect_bridges: Probed[tuple[str, ...]] = NOT_PROBED  # bridges above GPUs with ACS RR/CR on
    acs_bridges: Probed[tuple[AcsRecord, ...]] = NOT_PROBED  # every bridge above the GPUs and RDMA NICs
    pci_slots: Probed[dict[str, str]] = NOT_PROBED  # physical slot name by the address of its device "0000:18:00"
    virtualization: Probed[str] = NOT_PROBED  # "bare-metal" | "vm"
    virtualization_evidence: Probed[str] = NOT_PROBED  # the DMI strings and CPU flag the answer rests on
    rdma_ports: Probed[tuple[RdmaPort, ...]] = NOT_PROBED  # every port of every RDMA device
    gpudirect_rdma: Probed[str] = NOT_PROBED  # "nvidia_peermem" | "dma-buf" | "none"
    gpudirect_rdma_evidence: Probed[str] = NOT_PROBED
    kernel_events: Probed[tuple[KernelEvent, ...]] = NOT_PROBED  # Xid and NVLink lines of the kernel log


@dataclass(frozen=True)
class EnvRecord:
    """The environment that changes what NCCL and CUDA do."""

    variables: tuple[str, ...] = ()  # "NAME=value" of NCCL_*, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER...
    nccl_conf: Probed[tuple[str, ...]] = NOT_PROBED  # "NAME=value" lines of /etc/nccl.conf
    fabric_manager: Probed[str] = NOT_PROBED  # "running" | "not running"


@dataclass(frozen=True)
class CommandRecord:
    """One ``nvidia-smi`` run: its text verbatim (or why there is none)."""

    command: str  # "nvidia-smi topo -m"
    text: Probed[str] = NOT_PROBED
    exit_code: Probed[int] = NOT_PROBED
    wall_s: float = 0.0


@dataclass(frozen=True)
class Snapshot:
    """One probe of one machine. ``schema_version`` is the contract; see the module docstring."""

    kind: str = SNAPSHOT_KIND
    schema_version: int = SNAPSHOT_SCHEMA_VERSION
    tool_version: str = ""
    nvml_binding_version: Probed[str] = NOT_PROBED  # nvidia-ml-py
    taken_at: str = ""  # ISO 8601, UTC
    probe_wall_s: float = 0.0
    system: SystemRecord = field(default_factory=SystemRecord)
    gpus: tuple[GpuRecord, ...] = ()
    pairs: tuple[PairRecord, ...] = ()
    os: OsRecord = field(default_factory=OsRecord)
    pci_devices: tuple[PcieDevice, ...] = ()  # GPUs and RDMA NICs
    pci_bridges: Probed[tuple[PcieDevice, ...]] = NOT_PROBED  # every bridge above them, up to the root port
    nics: tuple[RdmaNic, ...] = ()
    env: EnvRecord = field(default_factory=EnvRecord)
    commands: tuple[CommandRecord, ...] = ()
    notes: tuple[str, ...] = ()  # NVML functions missing from this driver, timeouts, ...


# --- JSON ------------------------------------------------------------------------------------------


def snapshot_to_dict(snapshot: Snapshot) -> dict[str, Any]:
    """Encode a snapshot as plain JSON data."""
    data: dict[str, Any] = encode(snapshot)
    return data


def snapshot_to_json(snapshot: Snapshot) -> str:
    """Serialise a snapshot as the JSON document ``probe --save`` writes."""
    return json.dumps(snapshot_to_dict(snapshot), indent=1) + "\n"


def looks_like_snapshot(text: str) -> bool:
    """Tell a saved snapshot from other pasted input by its ``kind`` near the top, without parsing it all."""
    head = text.lstrip()[:512]
    return head.startswith("{") and f'"kind": "{SNAPSHOT_KIND}"' in head.replace('":"', '": "')


def snapshot_from_dict(data: Any, name: str = "snapshot") -> Snapshot:
    """Read a snapshot document; InputError for a foreign, newer or damaged one."""
    if not isinstance(data, dict) or data.get("kind") != SNAPSHOT_KIND:
        raise InputError(f'{name}: not a topoaudit snapshot (no "kind": "{SNAPSHOT_KIND}")')
    version = data.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise InputError(f"{name}: snapshot schema_version {shown(version)} is not a version topoaudit ever wrote")
    if version > SNAPSHOT_SCHEMA_VERSION:
        raise InputError(
            f"{name}: snapshot schema_version {version} is newer than this topoaudit reads "
            f"({SNAPSHOT_SCHEMA_VERSION}); it was written by topoaudit {data.get('tool_version', '?')}",
            hint="upgrade topoaudit (pip install -U topoaudit) to analyse it",
        )
    data = _upgrade(data, version)
    try:
        snapshot: Snapshot = decode(Snapshot, data)
    except DecodeError as exc:
        raise InputError(f"{name}: the snapshot is damaged: {exc}") from exc
    return snapshot


def snapshot_from_json(text: str, name: str = "snapshot") -> Snapshot:
    """Read a saved snapshot; invalid JSON is an InputError naming the line, not a traceback."""
    return snapshot_from_dict(read_json(text, name, "snapshot"), name)


def _upgrade(data: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring an older document to the current schema, one step per version."""
    if version < 2:
        data = _v1_to_v2(data)
    os_ = data.get("os")
    if isinstance(os_, dict):  # written before the probe read ACS per bridge and the slot names
        later = {"acs_bridges": "ACS per bridge", "pci_slots": "PCIe slot names"}
        os_ = dict(os_)
        for key, what in later.items():
            if key not in os_:
                os_[key] = {
                    "status": "unsupported",
                    "source": "snapshot",
                    "reason": f"{what} not recorded in this snapshot",
                }
        data = dict(data, os=os_)
    return data


_V2_OS_FIELDS = ("virtualization", "virtualization_evidence", "rdma_ports", "gpudirect_rdma",
                 "gpudirect_rdma_evidence", "kernel_events")  # fmt: skip


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Mark the host checks schema 1 did not read as absent with that reason, never taken for "none found"."""
    why = {"status": "unsupported", "source": "snapshot", "reason": "not recorded by snapshot schema 1"}
    data = dict(data, schema_version=2, pci_bridges=why)
    data["os"] = dict(data.get("os") or {}, **dict.fromkeys(_V2_OS_FIELDS, why))
    data["gpus"] = [
        dict(g, fabric_health_mask=why, fabric_health_summary=why) if isinstance(g, dict) else g
        for g in data.get("gpus") or []
    ]
    return data
