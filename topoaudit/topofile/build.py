"""The tree NCCL's topology file describes, built from what a probe or a saved report says about this box.

From a snapshot, every GPU and RDMA NIC is placed by its sysfs path, so the switches above them follow NCCL's own
rule; from a machine (a saved report), the switches are inferred from the path class between devices (PIX, PXB).
``--switch`` groups name devices the user knows share a switch, which is how a VM that flattens its PCIe tree gets
a useful file. :mod:`topoaudit.topofile.write` writes the tree as NCCL's XML.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from topoaudit.errors import InputError, UsageError

if TYPE_CHECKING:
    from topoaudit.model.machine import Machine
    from topoaudit.model.nccl_topo import NcclTopology
    from topoaudit.model.values import Probed
    from topoaudit.probe.snapshot import GpuRecord, Snapshot
    from topoaudit.topofile.write import Endpoint, NvlinkSpec, PciFacts, Switch, TopologyFile

WHAT_TO_GIVE = "run it on the box itself, or give a snapshot (`topoaudit probe -o snapshot.json`) or a report of one"


def from_snapshot(snapshot: Snapshot, source: str) -> TopologyFile:
    """Place the snapshot's GPUs and RDMA NICs by their sysfs paths, as NCCL would on the box."""
    from topoaudit.model.values import Unsupported
    from topoaudit.topofile.write import (
        GPU_CLASS,
        NIC_CLASS_ETHERNET,
        NIC_CLASS_IB,
        SOURCE,
        Endpoint,
        PciFacts,
        TopologyFile,
        build_tree,
        link_of,
        place_by_sysfs,
    )

    facts = {
        d.bus_id: PciFacts(d.bus_id, d.path, d.numa_node, d.link_speed_max, d.link_width_max)
        for d in snapshot.pci_devices
    }
    bridge_records = snapshot.pci_bridges if isinstance(snapshot.pci_bridges, tuple) else ()
    bridges = {
        d.bus_id: PciFacts(d.bus_id, d.path, d.numa_node, d.link_speed_max, d.link_width_max) for d in bridge_records
    }
    all_facts = {**facts, **bridges}
    single_numa = snapshot.os.numa_node_count == 1
    gpus = [r for r in snapshot.gpus if isinstance(r.pci_bus_id, str)]
    if not gpus:
        raise InputError(f"{source} holds no GPU with a PCI bus id, so there is no machine to describe; {WHAT_TO_GIVE}")
    endpoints: list[Endpoint] = []
    for r in sorted(gpus, key=lambda r: r.index):
        bus = str(r.pci_bus_id)
        speed, width = link_of(facts[bus], all_facts) if bus in facts else _nvml_link(r)
        endpoints.append(
            Endpoint(
                bus_id=bus,
                kind="gpu",
                label=f"GPU{r.index}",
                pci_class=GPU_CLASS,
                numa_node=_gpu_numa(r, facts.get(bus), single_numa),
                link_speed=speed,
                link_width=width,
                vendor=_id_part(r.pci_device_id, 6),
                device=_id_part(r.pci_device_id, 2),
                cpu_affinity=r.cpu_affinity,
                nvlinks=_nvlinks(r.nvlinks),
            )
        )
    for nic in sorted(snapshot.nics, key=lambda n: n.name):
        if not isinstance(nic.pci_bus_id, str):
            continue
        own = facts.get(nic.pci_bus_id)
        speed, width = link_of(own, all_facts) if own is not None else _unknown_link()
        numa = own.numa_node if own is not None and isinstance(own.numa_node, int) else nic.numa_node
        endpoints.append(
            Endpoint(
                bus_id=nic.pci_bus_id,
                kind="nic",
                label=nic.name,
                pci_class=NIC_CLASS_IB if nic.link_layer == "InfiniBand" else NIC_CLASS_ETHERNET,
                numa_node=numa if isinstance(numa, int) else (0 if single_numa else numa),
                link_speed=speed,
                link_width=width,
            )
        )
    placed, notes = place_by_sysfs(endpoints, facts, bridges)
    switch_link = {bus: link_of(b, all_facts) for bus, b in bridges.items()}
    missing = sorted({bus for items in placed.values() for chain, _ in items for bus in chain} - set(bridges))
    if missing:
        notes.append(
            f"the snapshot has no link record of bridge(s) {', '.join(missing)}: their link is the fastest below them"
        )
    affinity = _affinity_by_numa(placed)
    virtual = snapshot.os.virtualization
    return TopologyFile(
        cpus=build_tree(placed, switch_link, affinity),
        source=source,
        grouping="sysfs",
        notes=tuple(notes) + _virtual_note(virtual),
        virtualization=virtual if isinstance(virtual, str) else Unsupported(SOURCE, str(virtual)),
    )


def _unknown_link() -> tuple[Probed[str], Probed[int]]:
    from topoaudit.model.values import Unsupported
    from topoaudit.topofile.write import SOURCE

    why = Unsupported(SOURCE, "no sysfs record of the device")
    return why, why


def _nvml_link(r: GpuRecord) -> tuple[Probed[str], Probed[int]]:
    """The GPU's link from NVML when sysfs has no record: the most it trains to (an idle GPU drops to Gen1)."""
    from topoaudit.model.values import Unsupported
    from topoaudit.topofile.write import GEN_SPEED, SOURCE

    gen = r.pcie_gen_max
    speed: Probed[str] = GEN_SPEED.get(gen, Unsupported(SOURCE, f"PCIe gen {gen}")) if isinstance(gen, int) else gen
    return speed, r.pcie_width_max


def _id_part(device_id: Probed[str], start: int) -> Probed[str]:
    """NVML's pciDeviceId "0x233010de": the device id (0x2330) at 2, the vendor (0x10de) at 6."""
    if isinstance(device_id, str) and len(device_id) == 10 and device_id.startswith("0x"):
        return "0x" + device_id[start : start + 4].lower()
    from topoaudit.model.values import Unsupported
    from topoaudit.topofile.write import SOURCE

    return Unsupported(SOURCE, f"PCI device id {device_id}")


def _gpu_numa(r: GpuRecord, facts: PciFacts | None, single_numa: bool) -> Probed[int]:
    """sysfs ``numa_node`` (what NCCL reads), else NVML's memory affinity when it names one node."""
    if facts is not None and isinstance(facts.numa_node, int):
        return facts.numa_node
    if isinstance(r.numa_nodes, tuple) and len(r.numa_nodes) == 1:
        return r.numa_nodes[0]
    if single_numa:
        return 0
    return facts.numa_node if facts is not None else r.numa_nodes if not isinstance(r.numa_nodes, tuple) else -1


def _nvlinks(ports: object) -> tuple[NvlinkSpec, ...]:
    """Active NVLink ports counted per far end (NCCL counts them the same way, xml.cc ncclTopoGetXmlFromGpu).

    None when an active port's far end is unknown: NCCL takes a GPU's ``<nvlink>`` list as complete.
    """
    from topoaudit.topofile.write import CPU_LINK_CLASS, GPU_CLASS, NVSWITCH_CLASS, NvlinkSpec

    if not isinstance(ports, tuple):
        return ()
    classes = {"switch": NVSWITCH_CLASS, "gpu": GPU_CLASS, "ibmnpu": CPU_LINK_CLASS}
    counts: dict[tuple[str, str], int] = {}
    for port in ports:
        remote = getattr(port, "remote_pci_bus_id", None)
        tclass = classes.get(str(getattr(port, "remote_device_type", "")))
        if getattr(port, "state", None) != "active":
            continue
        if not isinstance(remote, str) or tclass is None:  # a partial list would stop NCCL asking NVML: none
            return ()
        counts[(remote.lower(), tclass)] = counts.get((remote.lower(), tclass), 0) + 1
    return tuple(NvlinkSpec(target, count, tclass) for (target, tclass), count in sorted(counts.items()))


def _affinity_by_numa(placed: dict[int, list[tuple[tuple[str, ...], Endpoint]]]) -> dict[int, Probed[tuple[int, ...]]]:
    """A NUMA node's CPUs: those NVML names near its GPUs (NCCL reads the node's cpumap when none is given)."""
    out: dict[int, Probed[tuple[int, ...]]] = {}
    for numa, items in placed.items():
        cpus = sorted({c for _, e in items if isinstance(e.cpu_affinity, tuple) for c in e.cpu_affinity})
        if cpus:
            out[numa] = tuple(cpus)
    return out


def _virtual_note(virtual: Probed[str]) -> tuple[str, ...]:
    why = getattr(virtual, "reason", str(virtual))
    return () if isinstance(virtual, str) else (f"virtual machine or bare metal: not known ({why})",)


def from_machine(machine: Machine, source: str, nccl: NcclTopology | None = None) -> TopologyFile:
    """A saved report's machine: switches inferred from the path classes between its devices.

    ``nccl`` is NCCL's own topology dump the report was read from, if any: its ``<nvlink>`` lists give the
    GPUs' NVLinks where the machine has no per-port record.
    """
    from topoaudit.model.host_checks import HostChecks
    from topoaudit.model.values import Unsupported
    from topoaudit.topofile.write import (
        GEN_SPEED,
        NIC_CLASS_ETHERNET,
        NIC_CLASS_IB,
        SOURCE,
        Endpoint,
        TopologyFile,
        build_tree,
        chains_from_groups,
        groups_from_paths,
    )

    if not machine.gpus:
        raise InputError(f"{source} holds no machine (no GPU in it); {WHAT_TO_GIVE}")
    gpus = [g for g in machine.gpus if isinstance(g.pci_bus_id, str)]
    if not gpus:
        raise InputError(f"{source} names no PCI bus id of its GPUs (NCCL matches devices by bus id); {WHAT_TO_GIVE}")
    checks = machine.host.checks if isinstance(machine.host.checks, HostChecks) else None
    layers = {
        p.device: p.link_layer
        for p in (checks.rdma_ports if checks is not None and isinstance(checks.rdma_ports, tuple) else ())
    }
    endpoints: list[Endpoint] = []
    notes: list[str] = []
    dumped = _dumped_nvlinks(nccl, {str(g.pci_bus_id) for g in gpus})
    for g in sorted(gpus, key=lambda g: g.index):
        gen = g.pcie.gen_max
        speed = GEN_SPEED.get(gen, Unsupported(SOURCE, f"PCIe gen {gen}")) if isinstance(gen, int) else gen
        numa = g.numa_nodes[0] if isinstance(g.numa_nodes, tuple) and len(g.numa_nodes) == 1 else -1
        endpoints.append(
            Endpoint(
                bus_id=str(g.pci_bus_id),
                kind="gpu",
                label=g.label,
                pci_class="0x030200",
                numa_node=numa,
                link_speed=speed,
                link_width=g.pcie.width_max,
                cpu_affinity=g.cpu_affinity,
                nvlinks=_nvlinks(g.nvlink_ports)
                if isinstance(g.nvlink_ports, tuple)
                else dumped.get(str(g.pci_bus_id), ()),
            )
        )
    if not any(isinstance(g.nvlink_ports, tuple) for g in gpus):
        notes.append(
            "NVLinks: as the NCCL topology file in the input lists them"
            if dumped
            else "the input has no per-port NVLink record: NCCL detects the NVLinks itself"
        )
    ports: dict[str, list[str]] = {}  # a PCI function's RDMA names: a dual-port NIC is one <pci> with two nets
    nic_of: dict[str, Endpoint] = {}
    for nic in machine.nics:
        if not isinstance(nic.pci_bus_id, str):
            continue
        name = nic.device if isinstance(nic.device, str) else nic.label
        ports.setdefault(nic.pci_bus_id, []).append(name)
        nic_of.setdefault(
            nic.pci_bus_id,
            Endpoint(
                bus_id=nic.pci_bus_id,
                kind="nic",
                label=name,
                pci_class=NIC_CLASS_IB if layers.get(name) == "InfiniBand" else NIC_CLASS_ETHERNET,
                numa_node=nic.numa_node if isinstance(nic.numa_node, int) else -1,
            ),
        )
    endpoints += [replace(end, label=NIC_NAMES_JOIN.join(ports[bus])) for bus, end in nic_of.items()]
    leaves, parents = groups_from_paths(machine)
    chains = chains_from_groups(endpoints, leaves, parents)
    placed: dict[int, list[tuple[tuple[str, ...], Endpoint]]] = {}
    for end in endpoints:
        placed.setdefault(_numa_of(end), []).append((chains.get(end.bus_id, ()), end))
    virtual = checks.virtualization if checks is not None else Unsupported(SOURCE, "not in the input")
    return TopologyFile(
        cpus=build_tree(placed, {}, _affinity_by_numa(placed)),
        source=source,
        grouping="paths",
        notes=(
            *notes,
            "switches inferred from the paths between devices (PIX: one switch, PXB: switches below a common one); "
            "GPUs joined only by NVLink are grouped through the NICs beside them",
        ),
        virtualization=virtual,
    )


def _numa_of(end: Endpoint) -> int:
    return end.numa_node if isinstance(end.numa_node, int) else -1


NIC_NAMES_JOIN = "/"  # the RDMA names of one PCI function ("mlx5_0/mlx5_1"); --switch takes any of them


def _dumped_nvlinks(nccl: NcclTopology | None, gpu_bus_ids: set[str]) -> dict[str, tuple[NvlinkSpec, ...]]:
    """Each GPU's ``<nvlink>`` list as NCCL's dump gives it, where NCCL would read every entry back.

    NCCL takes a GPU's list as complete, so a GPU keeps its list only when every entry is one NCCL connects:
    an NVSwitch (NCCL joins every NVSwitch link to one switch, whatever its bus id, the hidden one of a GB200
    tray included), the CPU, or another GPU of this file. A GPU listing itself (a provider's typo) or an
    unknown target keeps none, and NCCL asks NVML.
    """
    from topoaudit.model.nccl_topo import HIDDEN_TARGET_PREFIX
    from topoaudit.topofile.write import CPU_LINK_CLASS, GPU_CLASS, NVSWITCH_CLASS, NvlinkSpec

    if nccl is None or nccl.kind != "topology" or nccl.flavour != "nccl":
        return {}
    out: dict[str, tuple[NvlinkSpec, ...]] = {}
    for gpu in nccl.gpus:
        bus = gpu.pci_bus_id.lower()
        if bus not in gpu_bus_ids or not gpu.nvlinks:
            continue
        specs = []
        for link in gpu.nvlinks:
            target = link.target.lower()
            if link.target_kind == "nvswitch" or (
                link.target_kind == "hidden" and target.startswith(HIDDEN_TARGET_PREFIX)
            ):
                specs.append(NvlinkSpec(target, link.count, NVSWITCH_CLASS))
            elif link.target_kind == "cpu":
                specs.append(NvlinkSpec(target, link.count, CPU_LINK_CLASS))
            elif link.target_kind == "gpu" and target in gpu_bus_ids and target != bus:
                specs.append(NvlinkSpec(target, link.count, GPU_CLASS))
            else:
                break
        else:
            out[bus] = tuple(specs)
    return out


# --- the user's switch groups --------------------------------------------------------------------------


def apply_switch_groups(topo: TopologyFile, groups: Sequence[str]) -> TopologyFile:
    """Put each ``--switch`` group under one stand-in switch on its CPU; other devices keep their place."""
    from topoaudit.topofile.write import build_tree, placeholder_bus

    endpoints = topo.endpoints
    names = {e.bus_id: e for e in endpoints}
    names.update({name.lower(): e for e in endpoints for name in e.label.split(NIC_NAMES_JOIN)})
    chosen: dict[str, str] = {}  # bus id -> stand-in switch
    end: Endpoint | None
    for number, group in enumerate(groups, start=1):
        members = [token.strip() for token in group.split(",") if token.strip()]
        if len(members) < 2:
            raise UsageError(f"--switch {group!r}: name at least two devices that share one PCIe switch")
        switch = placeholder_bus(0x80 + number)
        found = []
        for token in members:
            end = names.get(_bus_token(token)) or names.get(token.lower())
            if end is None:
                known = ", ".join(f"{e.label} ({e.bus_id})" for e in endpoints)
                raise UsageError(f"--switch: {token!r} is no GPU or RDMA NIC of this machine; it has {known}")
            if end.bus_id in chosen:
                raise UsageError(f"--switch: {end.label} ({end.bus_id}) is named in two switch groups")
            chosen[end.bus_id] = switch
            found.append(end)
        numas = sorted({e.numa_node for e in found if isinstance(e.numa_node, int) and e.numa_node >= 0})
        if len(numas) > 1:
            raise UsageError(
                f"--switch {group!r}: its devices are on NUMA nodes {', '.join(map(str, numas))}; one PCIe switch "
                "hangs off one CPU"
            )
    placed: dict[int, list[tuple[tuple[str, ...], Endpoint]]] = {}
    group_numa: dict[str, int] = {}
    for member in endpoints:
        stand_in = chosen.get(member.bus_id)
        if stand_in is not None and _numa_of(member) >= 0:
            group_numa.setdefault(stand_in, _numa_of(member))
    for cpu in topo.cpus:
        for chain, member in _chains(cpu.children, ()):
            stand_in = chosen.get(member.bus_id)
            if stand_in is None:
                placed.setdefault(cpu.numa_id, []).append((chain, member))
            else:
                placed.setdefault(group_numa.get(stand_in, cpu.numa_id), []).append(((stand_in,), member))
    affinity = {cpu.numa_id: cpu.cpu_affinity for cpu in topo.cpus}
    links = {s.bus_id: (s.link_speed, s.link_width) for s in _switches(topo)}
    note = f"{len(groups)} switch group(s) given on the command line"
    return replace(topo, cpus=build_tree(placed, links, affinity), grouping="given", notes=(*topo.notes, note))


def _bus_token(token: str) -> str:
    from topoaudit.units import normalize_bus_id

    return normalize_bus_id(token)


def _chains(
    children: Iterable[Switch | Endpoint], above: tuple[str, ...]
) -> Iterable[tuple[tuple[str, ...], Endpoint]]:
    from topoaudit.topofile.write import Endpoint, Switch

    for child in children:
        if isinstance(child, Endpoint):
            yield above, child
        elif isinstance(child, Switch):
            yield from _chains(child.children, (*above, child.bus_id))


def _switches(topo: TopologyFile) -> list[Switch]:
    from topoaudit.topofile.write import Switch

    found: list[Switch] = []

    def walk(children: Iterable[Switch | Endpoint]) -> None:
        for child in children:
            if isinstance(child, Switch):
                found.append(child)
                walk(child.children)

    for cpu in topo.cpus:
        walk(cpu.children)
    return found


# --- what the user is told -------------------------------------------------------------------------------


def flat_warnings(topo: TopologyFile, in_file: bool = False) -> tuple[str, ...]:
    """A flat tree outside bare metal: which GPUs and NICs share a switch is not known, and what would tell it."""
    ends = topo.endpoints
    if not topo.flat or len(ends) < 2 or topo.virtualization == "bare-metal":
        return ()
    where = "this virtual machine" if topo.virtualization == "vm" else "this box (virtual or not could not be told)"
    example = _example_groups(ends)
    return (
        f"the PCIe tree of {where} is flat: no GPU or NIC sits under a PCIe switch, so which GPUs and NICs share a "
        "switch is unknown and this file places every device directly on its CPU (NCCL sees the same).",
        "Supply the grouping: the provider's topology file for this instance type (Azure HPC images: "
        "/opt/microsoft/*-topo.xml; AWS: /opt/amazon/ofi-nccl/share/aws-ofi-nccl/xml/*-topo.xml, which aws-ofi-nccl "
        "sets itself on the instance types it knows), or run `topoaudit nccl-topo` "
        + (
            "again naming the devices of each switch (its switch option, one per switch; see its help)"
            if in_file
            else f"again with one --switch per switch (e.g. `{example}`; bus ids work too)"
        )
        + ", or give a snapshot probed on the bare-metal host.",
    )


def _example_groups(ends: Sequence[Endpoint]) -> str:
    """``--switch GPU0,mlx5_0 --switch GPU1,mlx5_1``: this box's own GPUs and NICs paired on their NUMA node."""
    gpus = [e for e in ends if e.kind == "gpu"]
    nics = [e for e in ends if e.kind == "nic"]
    pairs = []
    for gpu in gpus:
        nic = next((n for n in nics if n.numa_node == gpu.numa_node), None)
        if nic is not None:
            nics.remove(nic)
            pairs.append(f"--switch {gpu.label},{nic.label}")
        if len(pairs) == 2:
            break
    if not pairs and len(gpus) >= 2:
        pairs.append(f"--switch {gpus[0].label},{gpus[1].label}")
    return " ".join(pairs) or "--switch GPU0,mlx5_0"


def placed(topo: TopologyFile) -> Iterable[tuple[int, tuple[str, ...], Endpoint]]:
    for cpu in topo.cpus:
        for chain, end in _chains(cpu.children, ()):
            yield cpu.numa_id, chain, end


def summary(topo: TopologyFile) -> str:
    ends = topo.endpoints
    gpus = sum(1 for e in ends if e.kind == "gpu")
    nics = len(ends) - gpus
    switches = len(_switches(topo))
    return f"{gpus} GPU(s) and {nics} RDMA NIC(s) under {switches} PCIe switch(es) on {len(topo.cpus)} NUMA node(s)"


def without_nvlinks(topo: TopologyFile) -> TopologyFile:
    from topoaudit.topofile.write import CpuNode, Endpoint

    def strip(children: tuple[Switch | Endpoint, ...]) -> tuple[Switch | Endpoint, ...]:
        return tuple(
            replace(c, nvlinks=()) if isinstance(c, Endpoint) else replace(c, children=strip(c.children))
            for c in children
        )

    return replace(topo, cpus=tuple(CpuNode(c.numa_id, c.cpu_affinity, strip(c.children)) for c in topo.cpus))
