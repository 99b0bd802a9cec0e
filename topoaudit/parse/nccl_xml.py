"""NCCL's XML files: ``NCCL_TOPO_DUMP_FILE`` (``<system>``; RCCL writes ``version="2"``), a hand-written
``NCCL_TOPO_FILE`` of the same shape, and ``NCCL_GRAPH_DUMP_FILE`` (``<graphs>``).

The standard library's parser reads them; a document type declaration is refused before any entity is
declared, so a hostile file cannot make the parser expand entities (a "billion laughs" file is refused,
not expanded). A topology file becomes the Machine a probe would give -- GPUs, NICs, the PCIe path between
each pair, NVLink counts -- plus the facts only NCCL has (:mod:`topoaudit.model.nccl_topo`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from xml.parsers import expat

from topoaudit.errors import InputError
from topoaudit.model.machine import Gpu, Link, Machine, Nic, PathLevel, PcieLink
from topoaudit.model.nccl_bandwidth import (  # NCCL's arithmetic, each constant with its NCCL source
    NET_UNKNOWN_SPEED_MBPS,
    NVLINK_GBPS_PER_LINK,
    nccl_pci_gbps,
)
from topoaudit.model.nccl_topo import (
    HIDDEN_TARGET_PREFIX,
    NO_C2C,
    NcclGpu,
    NcclGraph,
    NcclNet,
    NcclNvlink,
    NcclTopology,
)
from topoaudit.model.values import Probed, Unsupported

SOURCE = "nccl-xml"


GRAPH_PATTERNS = {1: "balanced tree", 2: "split tree", 3: "tree", 4: "ring", 5: "nvls", 6: "collnet direct"}

# PCI device ids of data-centre GPUs that appear in these files (the PCI ID repository, pci-ids.ucw.cz).
PCI_DEVICE_NAMES = {
    "0x1db1": "Tesla V100-SXM2-16GB",
    "0x1db5": "Tesla V100-SXM2-32GB",
    "0x20b0": "NVIDIA A100-SXM4-40GB",
    "0x20b2": "NVIDIA A100-SXM4-80GB",
    "0x20b5": "NVIDIA A100 80GB PCIe",
    "0x20f1": "NVIDIA A100-PCIE-40GB",
    "0x2321": "NVIDIA H100 NVL",
    "0x2330": "NVIDIA H100 80GB HBM3",
    "0x2331": "NVIDIA H100 PCIe",
    "0x2335": "NVIDIA H200",
}
SM_ARCHITECTURES = {60: "Pascal", 70: "Volta", 75: "Turing", 80: "Ampere", 86: "Ampere", 89: "Ada Lovelace",
                    90: "Hopper", 100: "Blackwell", 103: "Blackwell", 120: "Blackwell"}  # fmt: skip

NVSWITCH_CLASS = "0x068000"
CPU_LINK_CLASS = "0x068001"
BRIDGE_CLASS = "0x0604"


@dataclass(frozen=True)
class ParsedNcclXml:
    """What one XML file gave: NCCL's view, the Machine built from it, and notes on what could not be used."""

    topology: NcclTopology
    machine: Machine
    notes: tuple[tuple[int, str], ...] = ()  # (line, what could not be used)


def looks_like_nccl_xml(text: str) -> bool:
    """A ``<system ...>`` or ``<graphs ...>`` root, after an optional XML declaration and comments."""
    body = re.sub(r"<!--.*?-->", "", text[:65536], flags=re.S).lstrip("\ufeff \t\r\n")
    if body.startswith("<?xml"):
        body = body[body.find("?>") + 2 :].lstrip()
    if body.startswith("<!DOCTYPE"):  # never in NCCL's files: recognised here so the reader can refuse it
        return bool(re.match(r"<!DOCTYPE\s+(system|graphs)\b", body))
    return bool(re.match(r"<(system|graphs)[\s>]", body))


def _refuse_doctype(*_args: object) -> None:
    raise InputError("the XML declares a document type (entities); NCCL's dumps have none, so it is refused unread")


def parse_xml_safely(text: str, name: str) -> ET.Element:
    """The root element; InputError for malformed XML or any DOCTYPE/ENTITY declaration.

    A first pass with expat stops at the document type declaration, before any entity is declared or
    expanded; only a file without one reaches ElementTree.
    """
    scan = expat.ParserCreate()
    scan.StartDoctypeDeclHandler = _refuse_doctype
    scan.EntityDeclHandler = _refuse_doctype
    try:
        scan.Parse(text, True)
        return ET.fromstring(text)
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from None
    except (expat.ExpatError, ET.ParseError) as exc:
        line, column = (exc.lineno, exc.offset) if isinstance(exc, expat.ExpatError) else exc.position
        raise InputError(f"{name}: not well-formed XML at line {line}, column {column + 1}") from None


def parse_nccl_xml(text: str, name: str) -> ParsedNcclXml:
    """Read one NCCL topology or graph XML file."""
    root = parse_xml_safely(text, name)
    if root.tag == "graphs":
        return _graphs(root)
    if root.tag != "system":
        raise InputError(f"{name}: an XML file whose root is <{root.tag}>, not NCCL's <system> or <graphs>")
    return _system(root, name, text)


# --- NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE ---------------------------------------------------------


def _system(root: ET.Element, name: str, text: str) -> ParsedNcclXml:
    version = root.get("version", "")
    parents = {child: parent for parent in root.iter() for child in parent}
    gpu_elements = [e for e in root.iter("pci") if e.get("class", "").startswith("0x03")]
    gpu_elements += [e for e in root.iter("gpu") if parents.get(e) is None or parents[e].tag != "pci"]
    if not gpu_elements:
        raise InputError(f"{name}: an NCCL topology file with no GPU in it")
    indexed = sorted(_gpu_index(e, i) for i, e in enumerate(gpu_elements))
    if len({i for i, _ in indexed}) != len(indexed):
        raise InputError(f"{name}: two GPUs in the NCCL topology file share one dev index")
    nics = _nic_elements(root)
    busid_to_gpu = {(e.get("busid") or "").lower(): i for i, e in indexed if e.tag == "pci"}
    notes: list[tuple[int, str]] = []
    root_line = _line_of(text, "<system")
    rccl = version == "2" or any(e.get("gcn") or e.get("arch") or e.find("xgmi") is not None for e in root.iter("gpu"))
    gpus = tuple(_nccl_gpu(i, e, parents, busid_to_gpu, rccl) for i, e in indexed)
    nets = tuple(_nccl_net(f"NIC{k}", e, parents) for k, e in enumerate(nics))
    describes_nvlink = any(True for _ in root.iter("nvlink"))
    topology = NcclTopology(
        kind="topology",
        version=version,
        flavour="rccl" if rccl else "nccl",
        gpus=gpus,
        nets=nets,
        cpu_numa_ids=tuple(_int(c.get("numaid"), -1) for c in root.iter("cpu")),
        describes_nvlink=describes_nvlink,
    )
    links: list[Link] = []
    positions = {i: _position(e, parents) for i, e in indexed}
    for k, nic in enumerate(nics):
        nic_position = _position(nic, parents)
        for i, _ in indexed:
            level = _path_level(positions[i], nic_position)
            links.append(Link(f"GPU{i}", f"NIC{k}", level.name, level))
    unresolved = [(g, n) for g in gpus for n in g.nvlinks if n.target_kind in ("self", "unknown")]
    if rccl:
        notes.append(
            (
                root_line,
                "an RCCL (AMD) topology: its XGMI links are kept under captures, but GPU-to-GPU paths are judged "
                "only for NVLink, so none is judged from it",
            )
        )
    elif not describes_nvlink:
        notes.append(
            (
                root_line,
                "the file names no NVLink: either NCCL found none or it is a hand-written NCCL_TOPO_FILE (NCCL "
                "adds the NVLinks it detects); GPU-to-GPU paths are not judged from it, capture `nvidia-smi topo -m` "
                "for them",
            )
        )
    elif unresolved:
        gpu, link = unresolved[0]
        where = "the GPU itself" if link.target_kind == "self" else "no device in the file"
        notes.append(
            (
                _line_of(text, f'target="{link.target}"') or root_line,
                f"GPU{gpu.index}'s NVLink target {link.target} is {where}: which GPUs are NVLink peers cannot be "
                "told from this file, so GPU-to-GPU paths are not judged from it",
            )
        )
    else:
        links += _gpu_pair_links(gpus, positions)
    switches = sorted({n.target for g in gpus for n in g.nvlinks if n.target_kind == "nvswitch"})
    machine = Machine(
        source=SOURCE,
        gpus=tuple(
            _machine_gpu(g, e, _cpu_affinity(e, parents), rccl) for g, (_, e) in zip(gpus, indexed, strict=True)
        ),
        nics=tuple(_machine_nic(n, numa) for n, numa in zip(nets, (_numa_of(e, parents) for e in nics), strict=True)),
        links=tuple(sorted(links, key=lambda lk: (lk.a, lk.b))),
        nvswitches=tuple(switches),
    )
    return ParsedNcclXml(topology, machine, tuple(notes))


def _gpu_index(element: ET.Element, order: int) -> tuple[int, ET.Element]:
    gpu = element if element.tag == "gpu" else element.find("gpu")
    dev = gpu.get("dev") if gpu is not None else None
    return (_int(dev, order), element)


def _nic_elements(root: ET.Element) -> list[ET.Element]:
    """Each ``<net>``, and each NIC function of a hand-written file that has no ``<net>`` under it."""
    found: list[ET.Element] = []
    for element in root.iter():
        bare_nic = element.tag == "pci" and element.get("class", "").startswith("0x02")
        if element.tag == "net" or (bare_nic and element.find(".//net") is None):
            found.append(element)
    return found


def _int(value: str | None, default: int) -> int:
    try:
        return int(value, 0) if value else default
    except ValueError:
        return default


def _position(element: ET.Element, parents: dict[ET.Element, ET.Element]) -> list[ET.Element]:
    """The device's chain of enclosing elements, outermost first, ending at the device's own PCI function."""
    chain = [element]
    while chain[-1] in parents:
        chain.append(parents[chain[-1]])
    chain.reverse()
    # a <gpu>/<net> element stands for its PCI function: drop it (and a <nic> wrapper) from the chain
    while len(chain) > 1 and chain[-1].tag in ("gpu", "net", "nic"):
        chain.pop()
    return chain


def _path_level(a: list[ET.Element], b: list[ET.Element]) -> PathLevel:
    """NCCL's path classes from the XML tree: PIX (one bridge), PXB (several), PHB (the CPU), SYS (across CPUs)."""
    common = 0
    while common < min(len(a), len(b)) and a[common] is b[common]:
        common += 1
    shared = a[common - 1] if common else None
    if shared is None or shared.tag == "system":
        return PathLevel.SYS
    if shared.tag == "cpu":
        return PathLevel.PHB
    below = [e for e in a[common:-1] + b[common:-1] if e.get("class", "").startswith(BRIDGE_CLASS)]
    return PathLevel.PIX if not below else PathLevel.PXB


def _numa_of(element: ET.Element, parents: dict[ET.Element, ET.Element]) -> int:
    while element in parents:
        element = parents[element]
        if element.tag == "cpu":
            return _int(element.get("numaid"), -1)
    return -1


def _nccl_gpu(
    index: int, element: ET.Element, parents: dict[ET.Element, ET.Element], busid_to_gpu: dict[str, int], rccl: bool
) -> NcclGpu:
    pci = element if element.tag == "pci" else parents.get(element, element)
    gpu = element if element.tag == "gpu" else element.find("gpu")
    attrs = gpu.attrib if gpu is not None else {}
    busid = (pci.get("busid") or "").lower() if pci.tag == "pci" else ""
    sm = _int(attrs.get("sm"), 0)
    # RCCL writes AMD's GPU-to-GPU links as <xgmi target count>, the same shape as NCCL's <nvlink>
    found = [n for n in gpu if n.tag in ("nvlink", "xgmi")] if gpu is not None else []
    links = tuple(_nvlink(n, busid, busid_to_gpu) for n in found)
    count = sum(n.count for n in links)
    per_link = next((bw for floor, bw in NVLINK_GBPS_PER_LINK if sm >= floor), 0.0)
    speed = pci.get("link_speed", "") if pci.tag == "pci" else ""
    width = _int(pci.get("link_width"), 0) if pci.tag == "pci" else 0
    not_in_file = Unsupported(SOURCE, "not in the file")
    c2c_links, c2c_gbps = _c2c(gpu)
    return NcclGpu(
        index=index,
        pci_bus_id=busid,
        sm=sm if sm else not_in_file,
        rank=_int(attrs.get("rank"), -1) if "rank" in attrs else not_in_file,
        gdr=attrs.get("gdr") == "1" if "gdr" in attrs else not_in_file,
        numa_id=_numa_of(element, parents),
        link_speed=speed,
        link_width=width,
        pci_gbps=nccl_pci_gbps(speed, width),
        nvlinks=links,
        nvlink_gbps=Unsupported(SOURCE, "RCCL's sm is not an NVIDIA generation")
        if rccl
        else round(count * per_link, 1)
        if sm
        else Unsupported(SOURCE, "no sm in the file"),
        arch=attrs.get("gcn") or attrs.get("arch") or Unsupported(SOURCE, "NCCL does not write it"),
        c2c_links=c2c_links,
        c2c_gbps=c2c_gbps,
    )


def _c2c(gpu: ET.Element | None) -> tuple[int, Probed[float]]:
    """Grace C2C links (``<c2c bw count>``, bw in MB/s per link) and their bandwidth together in GB/s."""
    links = [c for c in gpu if c.tag == "c2c"] if gpu is not None else []
    if not links:
        return 0, NO_C2C
    count = sum(_int(c.get("count"), 0) for c in links)
    total_mbps = sum(_int(c.get("bw"), 0) * _int(c.get("count"), 0) for c in links)
    return count, total_mbps / 1000 if total_mbps else Unsupported(SOURCE, "no bw on the <c2c> link")


def _nvlink(element: ET.Element, own_busid: str, busid_to_gpu: dict[str, int]) -> NcclNvlink:
    target = (element.get("target") or "").lower()
    tclass = element.get("tclass", "")
    if target.startswith(HIDDEN_TARGET_PREFIX):
        kind = "hidden"
    elif target == own_busid:
        kind = "self"
    elif tclass == NVSWITCH_CLASS:
        kind = "nvswitch"
    elif tclass == CPU_LINK_CLASS:
        kind = "cpu"
    elif target in busid_to_gpu:
        kind = "gpu"
    else:
        kind = "unknown"
    return NcclNvlink(target, _int(element.get("count"), 0), tclass, kind)


def _nccl_net(label: str, element: ET.Element, parents: dict[ET.Element, ET.Element]) -> NcclNet:
    pci = element
    while pci.tag != "pci" and pci in parents:
        pci = parents[pci]
    busid: Probed[str] = pci.get("busid", "").lower() if pci.tag == "pci" else Unsupported(SOURCE, "not under a PCI")
    if element.tag != "net":
        absent = Unsupported(SOURCE, "a NIC function without a <net> in the file")
        return NcclNet(label, absent, busid, absent, absent, absent)
    speed = _int(element.get("speed"), 0)
    return NcclNet(
        label=label,
        name=element.get("name") or Unsupported(SOURCE, "no name in the file"),
        pci_bus_id=busid,
        speed_megabits_per_s=speed if "speed" in element.attrib else Unsupported(SOURCE, "no speed in the file"),
        net_gbps=(speed if speed > 0 else NET_UNKNOWN_SPEED_MBPS) / 8000,
        gdr=element.get("gdr") == "1" if "gdr" in element.attrib else Unsupported(SOURCE, "no gdr in the file"),
    )


def _gpu_pair_links(gpus: tuple[NcclGpu, ...], positions: dict[int, list[ET.Element]]) -> list[Link]:
    """Every GPU pair: NVLink through NVSwitches (the smaller side's count, as ``topo -m`` shows NV18),
    direct NVLinks to a peer, else the PCIe path class."""
    switched = {g.index: sum(n.count for n in g.nvlinks if n.target_kind in ("nvswitch", "hidden")) for g in gpus}
    busid = {g.pci_bus_id: g.index for g in gpus}
    direct: dict[tuple[int, int], int] = {}
    for g in gpus:
        for n in g.nvlinks:
            if n.target_kind == "gpu":
                pair = (min(g.index, busid[n.target]), max(g.index, busid[n.target]))
                direct[pair] = max(direct.get(pair, 0), n.count)
    links = []
    for a in gpus:
        for b in gpus:
            if a.index >= b.index:
                continue
            count = direct.get((a.index, b.index), 0) + min(switched[a.index], switched[b.index])
            if count:
                links.append(Link(f"GPU{a.index}", f"GPU{b.index}", f"NV{count}", PathLevel.NVLINK, count))
            else:
                level = _path_level(positions[a.index], positions[b.index])
                links.append(Link(f"GPU{a.index}", f"GPU{b.index}", level.name, level))
    return links


def _line_of(text: str, needle: str) -> int:
    """The 1-based line where ``needle`` first appears (case-insensitive); 0 when it does not."""
    at = text.lower().find(needle.lower())
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def _cpu_affinity(element: ET.Element, parents: dict[ET.Element, ET.Element]) -> Probed[tuple[int, ...]]:
    """The logical CPUs of the ``<cpu>`` a device hangs off, from its ``affinity`` mask (comma-separated hex words,
    most significant first, as Linux prints cpumasks)."""
    while element in parents and element.tag != "cpu":
        element = parents[element]
    mask = element.get("affinity", "") if element.tag == "cpu" else ""
    try:
        bits = int(mask.replace(",", ""), 16)
    except ValueError:
        return Unsupported(SOURCE, "no CPU affinity mask in the file" if not mask else f"affinity {mask!r} unreadable")
    return tuple(i for i in range(bits.bit_length()) if bits >> i & 1)


def _machine_gpu(gpu: NcclGpu, element: ET.Element, cpus: Probed[tuple[int, ...]], rccl: bool) -> Gpu:
    pci = element if element.tag == "pci" else None
    device = (pci.get("device") or "").lower() if pci is not None else ""
    nvidia = pci is not None and pci.get("vendor", "0x10de").lower() == "0x10de"
    name: Probed[str] = (PCI_DEVICE_NAMES.get(device) if nvidia else None) or Unsupported(
        SOURCE, f"the file names PCI device {device}, not the product" if device else "the file names no product"
    )
    sm = gpu.sm if isinstance(gpu.sm, int) and not rccl else 0
    return Gpu(
        index=gpu.index,
        name=name,
        pci_bus_id=gpu.pci_bus_id or Unsupported(SOURCE, "not in the file"),
        architecture=gpu.arch if rccl else SM_ARCHITECTURES.get(sm) or Unsupported(SOURCE, f"sm {sm or 'not given'}"),
        numa_nodes=(gpu.numa_id,) if gpu.numa_id >= 0 else Unsupported(SOURCE, "NCCL could not place the GPU"),
        cpu_affinity=cpus,
        pcie=_pcie(gpu),
    )


PCIE_GENERATIONS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}  # GT/s per lane -> generation
_CURRENT_NOT_RECORDED = Unsupported(
    SOURCE, "NCCL records the link's maximum (the lower of its two ends), not its state"
)


def _pcie(gpu: NcclGpu) -> PcieLink:
    """The GPU's PCIe link as NCCL records it: the most both ends support, read from sysfs ``max_link_*``."""
    match = re.match(r"\s*([\d.]+)", gpu.link_speed)
    generation = PCIE_GENERATIONS.get(float(match.group(1))) if match else None
    return PcieLink(
        gen_current=_CURRENT_NOT_RECORDED,
        gen_max=generation or Unsupported(SOURCE, f"link_speed {gpu.link_speed!r}"),
        width_current=_CURRENT_NOT_RECORDED,
        width_max=gpu.link_width or Unsupported(SOURCE, 'link_width "0"'),
    )


def _machine_nic(net: NcclNet, numa: int) -> Nic:
    return Nic(
        label=net.label,
        device=net.name,
        pci_bus_id=net.pci_bus_id,
        link_rate_gbps=net.speed_megabits_per_s / 1000
        if isinstance(net.speed_megabits_per_s, int)
        else net.speed_megabits_per_s,
        numa_node=numa if numa >= 0 else Unsupported(SOURCE, "NCCL could not place the NIC"),
    )


# --- NCCL_GRAPH_DUMP_FILE -------------------------------------------------------------------------


def _graphs(root: ET.Element) -> ParsedNcclXml:
    graphs = tuple(_graph(g) for g in root.iter("graph"))
    devs = sorted({_int(e.get("dev"), -1) for g in root.iter("graph") for e in g.iter("gpu")} - {-1})
    topology = NcclTopology(kind="graph", version=root.get("version", ""), flavour="nccl", graphs=graphs)
    machine = Machine(source=SOURCE, gpus=tuple(Gpu(index=i) for i in devs))
    return ParsedNcclXml(topology, machine, ((1, "a graph dump names the channels NCCL built, not the box's links"),))


def _graph(element: ET.Element) -> NcclGraph:
    def speed(key: str) -> Probed[float]:
        try:
            return float(element.get(key, ""))
        except ValueError:
            return Unsupported(SOURCE, f"no {key} in the file")

    pattern = _int(element.get("pattern"), 0)
    orders = tuple(
        tuple(f"{'GPU' if e.tag == 'gpu' else 'NET'}{e.get('dev', '?')}" for e in channel if e.tag in ("gpu", "net"))
        for channel in element.iter("channel")
    )
    return NcclGraph(
        id=_int(element.get("id"), 0),
        pattern=GRAPH_PATTERNS.get(pattern, f"pattern {pattern}"),
        channels=_int(element.get("nchannels"), len(orders)),
        speed_intra_gbps=speed("speedintra"),
        speed_inter_gbps=speed("speedinter"),
        type_intra=element.get("typeintra", ""),
        type_inter=element.get("typeinter", ""),
        orders=orders,
    )
