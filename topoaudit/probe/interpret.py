"""What a snapshot means: the Machine its answers imply, and the summary a report shows about the probe.

:func:`snapshot_to_machine` is the only place a probe's answers become a
:class:`~topoaudit.model.machine.Machine`, so a live ``audit`` and a later ``analyze snapshot.json`` are
judged from the very same Machine.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from topoaudit.model.host_checks import (
    AcsBridge,
    AerCounters,
    FabricHealth,
    HostChecks,
    PcieHop,
    acs_flags,
    decode_health_mask,
)
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
)
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.probe.crosscheck import cross_check
from topoaudit.probe.snapshot import (
    MACHINE_SOURCE,
    AcsRecord,
    GpuRecord,
    NvLinkRecord,
    PairRecord,
    PcieDevice,
    Snapshot,
)
from topoaudit.probe.sysfs import link_speed_gts

_ANCESTOR_LEVEL = {
    "INTERNAL": PathLevel.PIX,  # two GPUs on one board: at most a bridge between them
    "PIX": PathLevel.PIX,
    "PXB": PathLevel.PXB,
    "PHB": PathLevel.PHB,
    "NODE": PathLevel.NODE,
    "SYS": PathLevel.SYS,
}


def snapshot_to_machine(snapshot: Snapshot) -> Machine:
    """Build the Machine a snapshot implies: the same judge then runs on probed and pasted machines.

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
        disagreements=cross_check(snapshot, gpus, links),
        checks=host_checks(snapshot),
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
    """List a GPU's NVLink ports that are up; none when NVML could not read its ports."""
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
    """Derive the ``topo -m`` level between two PCI devices from their sysfs paths (None when a path is unknown)."""
    if not (isinstance(bus_a, str) and isinstance(bus_b, str)) or bus_a not in pci or bus_b not in pci:
        return None
    return path_level(pci[bus_a], pci[bus_b])


def path_level(da: PcieDevice, db: PcieDevice) -> PathLevel:
    """Classify two PCI devices as ``nvidia-smi topo -m`` does, from their sysfs paths.

    PIX: both hang below one switch (one bridge each side at most); PXB: more bridges, same root port tree;
    PHB: same root complex only; NODE: other root complex on the same NUMA node; SYS: other socket.
    """
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


def snapshot_summary(snapshot: Snapshot) -> dict[str, Any]:
    """Summarise what a report shows about the probe itself (the ``probe`` extras section)."""
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


# --- host checks -----------------------------------------------------------------------------------


def host_checks(snapshot: Snapshot) -> HostChecks:
    """Gather what the snapshot says about the host's blockers, in the form the rules judge."""
    os_ = snapshot.os
    return HostChecks(
        virtualization=os_.virtualization,
        virtualization_evidence=os_.virtualization_evidence,
        rdma_ports=os_.rdma_ports,
        gpudirect_rdma=os_.gpudirect_rdma,
        gpudirect_rdma_evidence=os_.gpudirect_rdma_evidence,
        pcie_hops=pcie_hops(snapshot.pci_devices, snapshot.pci_bridges),
        aer=_aer(snapshot.pci_devices, snapshot.pci_bridges),
        kernel_events=os_.kernel_events,
        fabric_health=_fabric_health(snapshot.gpus),
        acs=acs_state(os_.acs_bridges, snapshot.pci_devices),
        pcie_slots=os_.pci_slots,
    )


def acs_state(
    records: Probed[tuple[AcsRecord, ...]], endpoints: tuple[PcieDevice, ...]
) -> Probed[tuple[AcsBridge, ...]]:
    """Each bridge's ACS control, its bits by name and the GPUs and NICs below it."""
    if not isinstance(records, tuple):
        return records
    return tuple(
        AcsBridge(
            bridge=r.bus_id,
            control=r.control,
            enabled=acs_flags(r.control) if isinstance(r.control, int) else (),
            below=tuple(d.bus_id for d in endpoints if r.bus_id in d.path[1:-1]),
        )
        for r in records
    )


def pcie_hops(
    endpoints: tuple[PcieDevice, ...], bridges: Probed[tuple[PcieDevice, ...]]
) -> Probed[tuple[PcieHop, ...]]:
    """Every PCIe link from each GPU and NIC up to its root port, once, with the endpoints behind it.

    Both ends of a link report its trained speed and width; a hop is a parent port and the device below it
    when the two agree (or the device is the GPU/NIC itself). Inside a switch the upstream port reports its
    uplink and each downstream port its own link: where they differ the internal hop is not taken for a link;
    where they agree it is kept, and can only repeat a shortfall its uplink already shows. The
    maxima are the lower of the two ends' ``max_link_*`` (as NCCL reads them, src/graph/xml.cc).
    """
    if not isinstance(bridges, tuple):
        return bridges
    by_bus = {d.bus_id: d for d in (*bridges, *endpoints)}
    hops: dict[tuple[str, str], PcieHop] = {}
    for end in endpoints:
        chain = end.path[1:]  # drop the root complex: it is not a PCI device with a link
        for upper, lower in itertools.pairwise(chain):
            parent, child = by_bus.get(upper), by_bus.get(lower)
            if parent is None or child is None:
                continue
            same_link = (child.link_speed_current, child.link_width_current) == (
                parent.link_speed_current,
                parent.link_width_current,
            )
            if child is not end and not same_link:
                continue
            key = (upper, lower)
            if key in hops:
                hop = hops[key]
                hops[key] = dataclasses.replace(hop, endpoints=(*hop.endpoints, end.bus_id))
                continue
            hops[key] = PcieHop(
                device=lower,
                upstream=upper,
                speed_current_gts=link_speed_gts(child.link_speed_current),
                speed_max_gts=_lower(link_speed_gts(child.link_speed_max), link_speed_gts(parent.link_speed_max)),
                width_current=child.link_width_current,
                width_max=_lower(child.link_width_max, parent.link_width_max),
                endpoints=(end.bus_id,),
            )
    return tuple(hops.values())


def _lower(a: Probed[Any], b: Probed[Any]) -> Probed[Any]:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return min(a, b)
    return a if isinstance(a, (Unsupported, Failed)) else b


def _aer(endpoints: tuple[PcieDevice, ...], bridges: Probed[tuple[PcieDevice, ...]]) -> Probed[tuple[AerCounters, ...]]:
    if not isinstance(bridges, tuple):
        return bridges
    return tuple(
        AerCounters(d.bus_id, correctable=d.aer_correctable, nonfatal=d.aer_nonfatal, fatal=d.aer_fatal)
        for d in (*endpoints, *bridges)
        if any(isinstance(v, int) for v in (d.aer_correctable, d.aer_nonfatal, d.aer_fatal))
    )


def _fabric_health(gpus: tuple[GpuRecord, ...]) -> Probed[tuple[FabricHealth, ...]]:
    return tuple(
        FabricHealth(
            gpu=g.index,
            health_mask=g.fabric_health_mask,
            problems=decode_health_mask(g.fabric_health_mask) if isinstance(g.fabric_health_mask, int) else (),
            summary=g.fabric_health_summary,
        )
        for g in gpus
        if not isinstance(g.status, Failed)
    )
