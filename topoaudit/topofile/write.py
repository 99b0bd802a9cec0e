"""An ``NCCL_TOPO_FILE`` for this box: where each GPU and NIC sits (CPU, PCIe switches), written in NCCL's XML.

NCCL builds its picture of a node from sysfs (src/graph/xml.cc ``ncclTopoGetXmlFromSys``); where a virtual
machine flattens the PCIe tree, every GPU-NIC path looks like a trip through the CPU and NCCL picks NICs and
rings badly. A topology file read through ``NCCL_TOPO_FILE`` is loaded first and wins: NCCL only fills in what
the file leaves out. So the file written here says only what is the box's layout -- the ``<cpu>`` (NUMA node)
each device hangs off, the ``<pci>`` switches above it, its bus id, class and PCIe link, and the NVLinks a probe
saw -- and leaves what NCCL reads for itself at run time (GPU ``dev``/``sm``/``gdr``, the network devices'
speed, GPUDirect and names, CPU vendor and model) to NCCL, because a value in the file overrides NCCL's own.

NCCL's reader is hand-written (xml.cc ``xmlGetNode``): no XML declaration, attributes separated by one space,
no tabs between elements, no entity decoding. The writer uses ElementTree and writes every element with an
end tag, which that reader and any XML parser read alike.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from topoaudit.errors import InputError
from topoaudit.model.codec import shown
from topoaudit.model.machine import Machine, PathLevel
from topoaudit.model.nccl_topo import HIDDEN_TARGET_PREFIX
from topoaudit.model.values import Probed, Unsupported

SOURCE = "nccl-topo"
BRIDGE_CLASS = "0x060400"  # PCI_BRIDGE_DEVICE_CLASS in NCCL's topo.cc
GPU_CLASS = "0x030200"  # 3D controller: NCCL reads the real class from sysfs on the box when the device is there
NIC_CLASS_IB = "0x020700"
NIC_CLASS_ETHERNET = "0x020000"
NVSWITCH_CLASS = "0x068000"  # PCI_NVSWITCH_CLASS
CPU_LINK_CLASS = "0x068001"  # an NVLink to the CPU (POWER9)
PLACEHOLDER_VENDOR = "0xffff"  # what the providers' files give a switch that is no device of the VM
GEN_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe",
             6: "64.0 GT/s PCIe"}  # fmt: skip
NOT_RECORDED = Unsupported(SOURCE, "not recorded")
_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


@dataclass(frozen=True)
class NvlinkSpec:
    """The NVLinks of one GPU to one target, as ``<nvlink target count tclass>``."""

    target: str  # the far end's bus id (a GPU's, a switch's as NVML named it)
    count: int
    target_class: str  # NVSWITCH_CLASS, GPU_CLASS or CPU_LINK_CLASS


@dataclass(frozen=True)
class Endpoint:
    """A GPU or an RDMA NIC: a ``<pci>`` leaf of the file."""

    bus_id: str  # "0000:18:00.0"
    kind: str  # "gpu" | "nic"
    label: str  # "GPU0", "mlx5_0": named in the comment and in --switch
    pci_class: str
    numa_node: Probed[int]
    link_speed: Probed[str] = NOT_RECORDED  # "32.0 GT/s PCIe"
    link_width: Probed[int] = NOT_RECORDED
    vendor: Probed[str] = NOT_RECORDED  # "0x10de"
    device: Probed[str] = NOT_RECORDED  # "0x2330"
    cpu_affinity: Probed[tuple[int, ...]] = NOT_RECORDED
    nvlinks: tuple[NvlinkSpec, ...] = ()


@dataclass(frozen=True)
class Switch:
    """A ``<pci>`` bridge: a PCIe switch as NCCL records it (its upstream port), or a stand-in for one."""

    bus_id: str
    placeholder: bool  # not a device of this box ("ffff:ff:01.0"): NCCL cannot read it from sysfs
    link_speed: Probed[str]
    link_width: Probed[int]
    children: tuple[Switch | Endpoint, ...] = ()


@dataclass(frozen=True)
class CpuNode:
    """A ``<cpu>``: one NUMA node and the devices that hang off it."""

    numa_id: int  # -1: not known (NCCL writes the same when sysfs gives none)
    cpu_affinity: Probed[tuple[int, ...]]
    children: tuple[Switch | Endpoint, ...] = ()


@dataclass(frozen=True)
class TopologyFile:
    """What goes into the file, and what the file could not say."""

    cpus: tuple[CpuNode, ...]
    source: str  # "this machine", "snapshot.json"
    grouping: str  # "sysfs" | "paths" | "given" | "flat"
    notes: tuple[str, ...] = ()  # for the file's comment
    virtualization: Probed[str] = NOT_RECORDED  # "vm" | "bare-metal"
    warnings: tuple[str, ...] = ()  # the grouping is unknown: what to supply (standard error)

    @property
    def endpoints(self) -> tuple[Endpoint, ...]:
        """Every GPU and NIC in the file, in file order."""
        return tuple(_walk(c.children for c in self.cpus))

    @property
    def flat(self) -> bool:
        """No GPU or NIC sits under a switch: every path between them runs through a CPU."""
        return all(isinstance(child, Endpoint) for cpu in self.cpus for child in cpu.children)


def _walk(groups: Iterable[Iterable[Switch | Endpoint]]) -> Iterable[Endpoint]:
    for children in groups:
        for child in children:
            if isinstance(child, Endpoint):
                yield child
            else:
                yield from _walk([child.children])


# --- placing devices --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PciFacts:
    """One PCI function as sysfs shows it: its path from the root complex and its link's maxima."""

    bus_id: str
    path: tuple[str, ...]  # ("pci0000:00", "0000:00:01.0", ..., bus_id)
    numa_node: Probed[int]
    link_speed_max: Probed[str]
    link_width_max: Probed[int]


def nccl_parents(path: Sequence[str]) -> tuple[str, ...]:
    """Name the bridges NCCL records above a device, outermost first: every second one up the sysfs path.

    ``ncclTopoGetXmlFromSys`` goes up two levels at a time ("rewind two /", so a switch's downstream port is
    skipped and its upstream port stands for the switch) and stops at the root complex; a device directly
    below a root port hangs off the CPU.
    """
    parents: list[str] = []
    at = len(path) - 1
    while True:
        if at - 1 < 1 or not _BDF.match(path[at - 1]):  # one level up is the root complex
            break
        if at - 2 < 1 or not _BDF.match(path[at - 2]):
            break
        at -= 2
        parents.append(path[at])
    return tuple(reversed(parents))


def _lower_speed(a: Probed[str], b: Probed[str]) -> Probed[str]:
    """Pick the slower of two ``max_link_speed`` texts (NCCL takes the lower of a device and the port above it)."""
    if not isinstance(a, str) or not isinstance(b, str):
        return a if isinstance(a, str) else b
    return a if _gts(a) <= _gts(b) else b


def _lower_width(a: Probed[int], b: Probed[int]) -> Probed[int]:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return a if isinstance(a, int) else b


def _gts(text: str) -> float:
    match = re.match(r"\s*([\d.]+)", text)
    return float(match.group(1)) if match else 0.0


def link_of(facts: PciFacts, by_bus: Mapping[str, PciFacts]) -> tuple[Probed[str], Probed[int]]:
    """Give a device's link as NCCL records it: the lower of its own maxima and the port's above it."""
    above = by_bus.get(facts.path[-2]) if len(facts.path) > 2 else None
    if above is None:
        return facts.link_speed_max, facts.link_width_max
    return _lower_speed(facts.link_speed_max, above.link_speed_max), _lower_width(
        facts.link_width_max, above.link_width_max
    )


def place_by_sysfs(
    endpoints: Sequence[Endpoint], paths: Mapping[str, PciFacts], bridges: Mapping[str, PciFacts]
) -> tuple[dict[int, list[tuple[tuple[str, ...], Endpoint]]], list[str]]:
    """Each endpoint's NUMA node and chain of NCCL parents, from the probe's sysfs paths.

    A parent switch's NUMA node is the one NCCL reads: that of the device directly under the CPU.
    """
    placed: dict[int, list[tuple[tuple[str, ...], Endpoint]]] = {}
    notes: list[str] = []
    for end in endpoints:
        facts = paths.get(end.bus_id)
        chain = nccl_parents(facts.path) if facts is not None else ()
        if facts is None:
            notes.append(f"{end.label} ({end.bus_id}): no sysfs path recorded; placed under its NUMA node")
        top = bridges.get(chain[0]) if chain else None
        numa = top.numa_node if top is not None and isinstance(top.numa_node, int) else end.numa_node
        placed.setdefault(numa if isinstance(numa, int) else -1, []).append((chain, end))
    return placed, notes


def build_tree(
    placed: Mapping[int, Sequence[tuple[tuple[str, ...], Endpoint]]],
    switch_link: Mapping[str, tuple[Probed[str], Probed[int]]],
    affinity: Mapping[int, Probed[tuple[int, ...]]],
) -> tuple[CpuNode, ...]:
    """Nest each endpoint under its chain of switches, under its CPU; children ordered by bus id as NCCL does."""

    def grow(items: Sequence[tuple[tuple[str, ...], Endpoint]]) -> tuple[Switch | Endpoint, ...]:
        leaves: list[Switch | Endpoint] = [end for chain, end in items if not chain]
        below: dict[str, list[tuple[tuple[str, ...], Endpoint]]] = {}
        for chain, end in items:
            if chain:
                below.setdefault(chain[0], []).append((chain[1:], end))
        for bus, rest in below.items():
            children = grow(rest)
            speed, width = switch_link.get(bus) or _fastest(children)
            leaves.append(Switch(bus, bus.startswith("ffff:ff:"), speed, width, children))
        return tuple(sorted(leaves, key=lambda node: node.bus_id))

    return tuple(
        CpuNode(numa, affinity.get(numa, Unsupported(SOURCE, "no GPU on this NUMA node")), grow(items))
        for numa, items in sorted(placed.items())
    )


def _fastest(children: Sequence[Switch | Endpoint]) -> tuple[Probed[str], Probed[int]]:
    """Give a stand-in switch the fastest and widest link below it (as the providers' files do)."""
    speeds = [c.link_speed for c in children if isinstance(c.link_speed, str)]
    widths = [c.link_width for c in children if isinstance(c.link_width, int)]
    speed: Probed[str] = max(speeds, key=_gts) if speeds else Unsupported(SOURCE, "no link below it recorded")
    width: Probed[int] = max(widths) if widths else Unsupported(SOURCE, "no link below it recorded")
    return speed, width


def placeholder_bus(number: int) -> str:
    """Name the n-th stand-in switch, numbered as the providers' files do: ffff:ff:01.0, ffff:ff:02.0, ..."""
    return f"ffff:ff:{number:02x}.0"


def groups_from_paths(machine: Machine) -> tuple[list[set[str]], list[set[str]]]:
    """Switch groups a machine's paths imply: devices one PIX apart share a switch; PXB apart, a parent switch.

    GPU pairs joined by NVLink hide their PCIe path (``topo -m`` prints NV#), so they are grouped only through
    the NICs beside them.
    """
    labels = {g.label: g.pci_bus_id for g in machine.gpus if isinstance(g.pci_bus_id, str)}
    labels.update({n.label: n.pci_bus_id for n in machine.nics if isinstance(n.pci_bus_id, str)})

    def components(limit: PathLevel) -> list[set[str]]:
        parent = {bus: bus for bus in labels.values()}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for link in machine.links:
            a, b = labels.get(link.a), labels.get(link.b)
            if a and b and PathLevel.PIX <= link.level <= limit:
                parent[find(a)] = find(b)
        found: dict[str, set[str]] = {}
        for bus in labels.values():
            found.setdefault(find(bus), set()).add(bus)
        return [g for g in found.values() if len(g) > 1]

    leaves = components(PathLevel.PIX)
    parents = [g for g in components(PathLevel.PXB) if not any(g == leaf for leaf in leaves)]
    return leaves, parents


def chains_from_groups(
    endpoints: Sequence[Endpoint], leaves: Sequence[set[str]], parents: Sequence[set[str]] = ()
) -> dict[str, tuple[str, ...]]:
    """Stand-in switch chains for grouped devices: a parent switch (PXB group) above a leaf one (PIX group).

    A device of a PXB group that shares no PIX group gets a leaf of its own below the parent: two devices
    directly under one switch are PIX to NCCL, so putting them there would turn the box's PXB into PIX.
    """
    chains: dict[str, tuple[str, ...]] = {}
    number = 0
    top_of: dict[str, str] = {}
    for group in sorted(parents, key=min):
        number += 1
        for bus in group:
            top_of[bus] = placeholder_bus(number)
    alone = [{bus} for bus in top_of if not any(bus in leaf for leaf in leaves)]
    for group in sorted([*leaves, *alone], key=min):
        number += 1
        leaf = placeholder_bus(number)
        for bus in group:
            chains[bus] = (top_of[bus], leaf) if bus in top_of else (leaf,)
    known = {e.bus_id for e in endpoints}
    return {bus: chain for bus, chain in chains.items() if bus in known}


# --- what the file may say --------------------------------------------------------------------------

_FILE_BDF = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
MAX_NUMA_ID = 4095  # Linux's largest NODES_SHIFT gives 1,024 nodes; a larger id is damage
MAX_CPU = 65535  # Linux's NR_CPUS tops out at 8,192
MAX_NVLINKS = 64  # NVLinks of one GPU to one target (18 on a Blackwell GPU)


def check_writable(topo: TopologyFile, source: str) -> None:
    """Refuse a tree holding what no machine has before it is written: NCCL matches devices by bus id and reads
    the file without decoding entities, so a bus id that is no PCI address, one given twice, a NUMA node or CPU
    past any kernel's, or an NVLink count past any GPU's would give NCCL a wrong machine. InputError names it
    (a saved report or snapshot is someone else's file)."""
    seen: dict[str, str] = {}
    for cpu in topo.cpus:
        if not -1 <= cpu.numa_id <= MAX_NUMA_ID:
            raise InputError(f"{source}: NUMA node {cpu.numa_id} is none a machine has; the input is damaged")
        if isinstance(cpu.cpu_affinity, tuple) and any(not 0 <= c <= MAX_CPU for c in cpu.cpu_affinity):
            raise InputError(f"{source}: NUMA node {cpu.numa_id} lists a CPU no machine has; the input is damaged")
    for end in topo.endpoints:
        name = f"{end.label} ({shown(end.bus_id, 40)})"
        if not _FILE_BDF.match(end.bus_id):
            raise InputError(f"{source}: {name} has no PCI bus id NCCL can match; the input is damaged")
        if end.bus_id in seen:
            raise InputError(f"{source}: {name} has the bus id of {seen[end.bus_id]}; the input is damaged")
        seen[end.bus_id] = end.label
        for link in end.nvlinks:
            hidden = link.target.startswith(HIDDEN_TARGET_PREFIX) and link.target_class == NVSWITCH_CLASS
            if not (hidden or _FILE_BDF.match(link.target)) or not 1 <= link.count <= MAX_NVLINKS:
                raise InputError(
                    f"{source}: {name} has {link.count} NVLink(s) to {shown(link.target, 40)}, which no GPU has; "
                    "the input is damaged"
                )


# --- the XML ------------------------------------------------------------------------------------------


def cpumask(cpus: Iterable[int]) -> str:
    """Linux's cpumask text: 32-bit hex words, most significant first ("0000ffff,ffffffff")."""
    bits = 0
    for cpu in cpus:
        bits |= 1 << cpu
    words = max(1, (bits.bit_length() + 31) // 32)
    return ",".join(f"{bits >> (32 * i) & 0xFFFFFFFF:08x}" for i in reversed(range(words)))


def comment_text(lines: Iterable[str]) -> str:
    """Comment lines XML can hold: no "--" (the option names are spelt without it), no control character (a
    device name from a saved report can carry any; XML forbids most and a terminal runs them), padded for
    NCCL's reader."""
    import textwrap

    from topoaudit.parse.text import printable

    safe: list[str] = []
    for line in lines:
        line = re.sub(r"-{2,}", "-", printable(line, 10_000)).rstrip()
        indent = line[: len(line) - len(line.lstrip())]
        safe += textwrap.wrap(line, 108, subsequent_indent=indent + "  ", break_on_hyphens=False) or [""]
    return "\n" + "\n".join(f"  {line}" if line else "" for line in safe) + "\n  "


def topology_xml(topo: TopologyFile, header: Sequence[str]) -> str:
    """Write the file NCCL_TOPO_FILE points at, with ElementTree."""
    root = ET.Element("system", {"version": "1"})
    root.append(ET.Comment(comment_text(header)))
    for cpu in topo.cpus:
        attrs = {"numaid": str(cpu.numa_id)}
        if isinstance(cpu.cpu_affinity, tuple) and cpu.cpu_affinity:
            attrs["affinity"] = cpumask(cpu.cpu_affinity)
        element = ET.SubElement(root, "cpu", attrs)
        for child in cpu.children:
            _pci(element, child)
    ET.indent(root, space="  ")
    text: str = ET.tostring(root, encoding="unicode", short_empty_elements=False)
    return text + "\n"


def _link_attrs(speed: Probed[str], width: Probed[int]) -> dict[str, str]:
    attrs = {}
    if isinstance(speed, str):
        attrs["link_speed"] = speed
    if isinstance(width, int):
        attrs["link_width"] = str(width)
    return attrs


def _pci(parent: ET.Element, node: Switch | Endpoint) -> None:
    if isinstance(node, Switch):
        attrs = {"busid": node.bus_id, "class": BRIDGE_CLASS, **_link_attrs(node.link_speed, node.link_width)}
        if node.placeholder:  # not in this box's sysfs: say what NCCL would otherwise leave unset
            attrs.update(
                dict.fromkeys(("vendor", "device", "subsystem_vendor", "subsystem_device"), PLACEHOLDER_VENDOR)
            )
        element = ET.SubElement(parent, "pci", attrs)
        for child in node.children:
            _pci(element, child)
        return
    attrs = {"busid": node.bus_id, "class": node.pci_class}
    if isinstance(node.vendor, str) and isinstance(node.device, str):
        attrs.update(vendor=node.vendor, device=node.device)
    attrs.update(_link_attrs(node.link_speed, node.link_width))
    element = ET.SubElement(parent, "pci", attrs)
    if node.kind == "gpu" and node.nvlinks:
        gpu = ET.SubElement(element, "gpu")
        for link in node.nvlinks:
            ET.SubElement(gpu, "nvlink", {"target": link.target, "count": str(link.count), "tclass": link.target_class})
