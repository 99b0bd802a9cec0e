"""The snapshot: everything one probe learned, as a versioned JSON document, and the Machine it implies.

A snapshot keeps the *answers* of every source (NVML, ``nvidia-smi`` texts, sysfs, the environment), each
absent answer with its reason, versions and timestamps. :func:`snapshot_to_machine` is the only place
those answers become a :class:`~topoaudit.model.machine.Machine`, so a live ``audit`` and a later
``analyze snapshot.json`` are judged from the very same Machine.

Schema (``"kind": "topoaudit-snapshot"``, ``"schema_version": 1``): the dataclasses below, encoded by
:mod:`topoaudit.model.codec` (absent values as ``{"status", "source", "reason"}``, field names with units).
A document with a newer ``schema_version`` is refused with an InputError; older versions are read by
:func:`_upgrade` (none exist yet).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from topoaudit.errors import InputError
from topoaudit.model.codec import DecodeError, decode, encode
from topoaudit.model.machine import (
    FabricInfo,
    Gpu,
    Host,
    Link,
    Machine,
    Nic,
    NvLinkPort,
    P2PStatus,
    PathLevel,
    PcieLink,
    SourceDisagreement,
)
from topoaudit.model.values import Failed, Probed, Unsupported

SNAPSHOT_KIND = "topoaudit-snapshot"
SNAPSHOT_SCHEMA_VERSION = 1
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
    nics: tuple[RdmaNic, ...] = ()
    env: EnvRecord = field(default_factory=EnvRecord)
    commands: tuple[CommandRecord, ...] = ()
    notes: tuple[str, ...] = ()  # NVML functions missing from this driver, timeouts, ...


# --- JSON ------------------------------------------------------------------------------------------


def snapshot_to_dict(snapshot: Snapshot) -> dict[str, Any]:
    data: dict[str, Any] = encode(snapshot)
    return data


def snapshot_to_json(snapshot: Snapshot) -> str:
    return json.dumps(snapshot_to_dict(snapshot), indent=1) + "\n"


def looks_like_snapshot(text: str) -> bool:
    head = text.lstrip()[:512]
    return head.startswith("{") and f'"kind": "{SNAPSHOT_KIND}"' in head.replace('":"', '": "')


def snapshot_from_dict(data: Any, name: str = "snapshot") -> Snapshot:
    """Read a snapshot document; InputError for a foreign, newer or damaged one."""
    if not isinstance(data, dict) or data.get("kind") != SNAPSHOT_KIND:
        raise InputError(f'{name}: not a topoaudit snapshot (no "kind": "{SNAPSHOT_KIND}")')
    version = data.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise InputError(f"{name}: snapshot schema_version {version!r} is not a version topoaudit ever wrote")
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
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    return snapshot_from_dict(data, name)


def _upgrade(data: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring an older document to the current schema (one step per version; none exist yet)."""
    return data


# --- Machine ---------------------------------------------------------------------------------------

_ANCESTOR_LEVEL = {
    "INTERNAL": PathLevel.PIX,  # two GPUs on one board: at most a bridge between them
    "PIX": PathLevel.PIX,
    "PXB": PathLevel.PXB,
    "PHB": PathLevel.PHB,
    "NODE": PathLevel.NODE,
    "SYS": PathLevel.SYS,
}


def snapshot_to_machine(snapshot: Snapshot) -> Machine:
    """The Machine a snapshot implies: the same judge then runs on probed and pasted machines.

    GPU-GPU links: the active NVLink ports from one GPU whose far end is the other GPU (bridges, meshes),
    or, when both reach NVSwitches, the smaller of their active switch-port counts (what ``topo -m`` prints
    as NV18 on every pair); otherwise the PCIe level from NVML's common ancestor, else from the sysfs paths.
    """
    gpus = tuple(_gpu(r) for r in snapshot.gpus)
    by_index = {r.index: r for r in snapshot.gpus}
    pci = {d.bus_id: d for d in snapshot.pci_devices}
    links: list[Link] = []
    pairs = {(p.a, p.b): p for p in snapshot.pairs}
    for ra, rb in itertools.combinations(sorted(snapshot.gpus, key=lambda r: r.index), 2):
        links.append(_gpu_link(ra, rb, pairs.get((ra.index, rb.index)), pci))
    nics = []
    for number, nic in enumerate(sorted(snapshot.nics, key=lambda n: _natural(n.name))):
        label = f"NIC{number}"
        nics.append(
            Nic(
                label=label,
                device=nic.name,
                pci_bus_id=nic.pci_bus_id,
                netdev=_first(nic.netdevs),
                link_rate_gbps=nic.rate_gbps,
                numa_node=nic.numa_node,
            )
        )
        for record in snapshot.gpus:
            level = _sysfs_level(record.pci_bus_id, nic.pci_bus_id, pci)
            if level is not None:
                links.append(Link(f"GPU{record.index}", label, level.name, level, 0))
    for (na, ra_), (nb, rb_) in itertools.combinations(
        [(f"NIC{i}", n) for i, n in enumerate(sorted(snapshot.nics, key=lambda n: _natural(n.name)))], 2
    ):
        level = _sysfs_level(ra_.pci_bus_id, rb_.pci_bus_id, pci)
        if level is not None:
            links.append(Link(na, nb, level.name, level, 0))
    switches = sorted(
        {
            port.remote_pci_bus_id
            for r in by_index.values()
            if isinstance(r.nvlinks, tuple)
            for port in r.nvlinks
            if port.remote_device_type == "switch" and isinstance(port.remote_pci_bus_id, str)
        }
    )
    env = snapshot.env
    host = Host(
        hostname=snapshot.os.hostname,
        product=snapshot.os.product,
        kernel=snapshot.os.kernel,
        driver_version=snapshot.system.driver_version,
        nvml_version=snapshot.system.nvml_version,
        cuda_driver_version=snapshot.system.cuda_driver_version,
        visible_gpu_count=snapshot.system.gpu_count,
        total_gpu_count=(
            len(snapshot.os.nvidia_pci_gpus)
            if isinstance(snapshot.os.nvidia_pci_gpus, tuple)
            else snapshot.os.nvidia_pci_gpus
        ),
        iommu=snapshot.os.iommu,
        acs_redirect_bridges=snapshot.os.acs_redirect_bridges,
        environment=env.variables,
        nccl_conf=env.nccl_conf,
        fabric_manager=env.fabric_manager,
        disagreements=_disagreements(snapshot, gpus, links),
    )
    p2p = tuple(
        P2PStatus(p.a, p.b, read=p.p2p_read, write=p.p2p_write, nvlink=p.p2p_nvlink, atomics=p.p2p_atomics)
        for p in snapshot.pairs
    )
    return Machine(MACHINE_SOURCE, gpus, tuple(nics), tuple(links), host, p2p, tuple(switches))


def _first(values: Probed[tuple[str, ...]]) -> Probed[str]:
    if isinstance(values, tuple):
        return values[0] if values else Unsupported("sysfs", "no network interface for this RDMA device")
    return values


def _natural(label: str) -> tuple[str, int]:
    stem = label.rstrip("0123456789")
    tail = label[len(stem) :]
    return stem, int(tail) if tail else -1


def _gpu(r: GpuRecord) -> Gpu:
    ports: Probed[tuple[NvLinkPort, ...]] = r.nvlinks  # type: ignore[assignment]
    if isinstance(r.status, Failed):  # the ports read before the GPU was lost say nothing reliable
        ports = Failed(r.status.source, f"GPU lost mid-probe: {r.status.reason}")
    elif isinstance(r.nvlinks, tuple):
        ports = tuple(
            NvLinkPort(
                link=p.link,
                state=p.state,
                version=_version_major(p.version),
                remote_device_type=p.remote_device_type,
                remote_pci_bus_id=p.remote_pci_bus_id,
                replay_errors=p.replay_errors,
                recovery_errors=p.recovery_errors,
                crc_flit_errors=p.crc_flit_errors,
                crc_data_errors=p.crc_data_errors,
            )
            for p in r.nvlinks
        )
    under_load: Probed[bool] = (
        r.utilization_percent >= 50 if isinstance(r.utilization_percent, int) else r.utilization_percent
    )
    return Gpu(
        index=r.index,
        name=r.name,
        uuid=r.uuid,
        serial=r.serial,
        board_part_number=r.board_part_number,
        pci_bus_id=r.pci_bus_id,
        memory_total_bytes=r.memory_total_bytes,
        architecture=r.architecture,
        mig_mode=r.mig_mode,
        cpu_affinity=r.cpu_affinity,
        numa_nodes=r.numa_nodes,
        gpu_numa_id=r.gpu_numa_id,
        pcie=PcieLink(
            gen_current=r.pcie_gen_current,
            gen_max=r.pcie_gen_max,
            width_current=r.pcie_width_current,
            width_max=r.pcie_width_max,
            under_load=under_load,
        ),
        nvlink_ports=ports,
        fabric=FabricInfo(
            state=r.fabric_state,
            status=r.fabric_status,
            cluster_uuid=r.fabric_cluster_uuid,
            clique_id=r.fabric_clique_id,
        ),
        status=r.status,
    )


def _version_major(version: Probed[str]) -> Probed[int]:
    if isinstance(version, str):
        try:
            return int(version.split(".")[0])
        except ValueError:
            return Failed("nvml", f"unknown NVLink version {version!r}")
    return version


def active_ports(r: GpuRecord) -> list[NvLinkRecord]:
    return [p for p in r.nvlinks if p.state == "active"] if isinstance(r.nvlinks, tuple) else []


def nvlinks_between(ra: GpuRecord, rb: GpuRecord) -> int:
    """NVLinks joining two GPUs: direct ports (either side's count), or shared NVSwitches (the smaller side)."""
    direct = max(
        sum(1 for p in active_ports(x) if p.remote_device_type == "gpu" and p.remote_pci_bus_id == y.pci_bus_id)
        for x, y in ((ra, rb), (rb, ra))
    )
    if direct:
        return direct
    sw_a = [p for p in active_ports(ra) if p.remote_device_type == "switch"]
    sw_b = [p for p in active_ports(rb) if p.remote_device_type == "switch"]
    shared = {p.remote_pci_bus_id for p in sw_a} & {p.remote_pci_bus_id for p in sw_b}
    if shared:
        return min(len(sw_a), len(sw_b))
    return 0


def _gpu_link(ra: GpuRecord, rb: GpuRecord, pair: PairRecord | None, pci: dict[str, PcieDevice]) -> Link:
    a, b = f"GPU{ra.index}", f"GPU{rb.index}"
    if isinstance(ra.status, Failed) or isinstance(rb.status, Failed):
        return Link(a, b, "?", PathLevel.UNKNOWN, 0)  # a GPU lost mid-probe: its links are not known
    n = nvlinks_between(ra, rb)
    if n:
        return Link(a, b, f"NV{n}", PathLevel.NVLINK, n)
    if pair is not None and isinstance(pair.common_ancestor, str) and pair.common_ancestor in _ANCESTOR_LEVEL:
        level = _ANCESTOR_LEVEL[pair.common_ancestor]
        return Link(a, b, level.name, level, 0)
    level_ = _sysfs_level(ra.pci_bus_id, rb.pci_bus_id, pci)
    if level_ is not None:
        return Link(a, b, level_.name, level_, 0)
    return Link(a, b, "?", PathLevel.UNKNOWN, 0)


def _sysfs_level(bus_a: Probed[str], bus_b: Probed[str], pci: dict[str, PcieDevice]) -> PathLevel | None:
    """The ``topo -m`` level between two PCI devices from their sysfs paths (None when a path is unknown)."""
    if not (isinstance(bus_a, str) and isinstance(bus_b, str)) or bus_a not in pci or bus_b not in pci:
        return None
    return path_level(pci[bus_a], pci[bus_b])


def path_level(da: PcieDevice, db: PcieDevice) -> PathLevel:
    """PIX: both hang below one switch (one bridge each side at most); PXB: more bridges, same root port
    tree; PHB: same root complex only; NODE: other root complex on the same NUMA node; SYS: other socket."""
    pa, pb = da.path, db.path
    if pa[0] != pb[0]:
        na, nb = da.numa_node, db.numa_node
        if isinstance(na, int) and isinstance(nb, int) and na >= 0 and nb >= 0 and na != nb:
            return PathLevel.SYS
        return PathLevel.NODE
    common = 0
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            break
        common += 1
    if common <= 1:  # only the root complex is shared
        return PathLevel.PHB
    below_a, below_b = len(pa) - common - 1, len(pb) - common - 1
    return PathLevel.PIX if max(below_a, below_b) <= 1 else PathLevel.PXB


def _disagreements(
    snapshot: Snapshot, gpus: tuple[Gpu, ...], links: list[Link]
) -> Probed[tuple[SourceDisagreement, ...]]:
    from topoaudit.probe.crosscheck import cross_check

    return cross_check(snapshot, gpus, links)


def snapshot_summary(snapshot: Snapshot) -> dict[str, Any]:
    """What a report shows about the probe itself (the ``probe`` extras section)."""
    sys_ = snapshot.system
    lost = [g.index for g in snapshot.gpus if isinstance(g.status, Failed)]
    smi = {c.command: ("ok" if isinstance(c.text, str) else str(c.text)) for c in snapshot.commands}
    return {
        "description": (
            f"NVML probe of {len(snapshot.gpus)} GPU(s) at {snapshot.taken_at} "
            f"(driver {sys_.driver_version}, topoaudit {snapshot.tool_version})"
        ),
        "taken_at": snapshot.taken_at,
        "probe_wall_s": snapshot.probe_wall_s,
        "snapshot_schema_version": snapshot.schema_version,
        "driver_version": str(sys_.driver_version),
        "cuda_driver_version": str(sys_.cuda_driver_version),
        "nvml_binding_version": str(snapshot.nvml_binding_version),
        "lost_gpus": lost,
        "nvidia_smi": smi,
        "iommu": str(snapshot.os.iommu),
        "notes": list(snapshot.notes),
    }
