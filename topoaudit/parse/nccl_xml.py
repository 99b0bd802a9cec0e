"""NCCL's XML files: ``NCCL_TOPO_DUMP_FILE`` (``<system>``; RCCL writes ``version="2"``), a hand-written
``NCCL_TOPO_FILE`` of the same shape, and ``NCCL_GRAPH_DUMP_FILE`` (``<graphs>``).

The standard library's parser reads them; a document type declaration is refused before any entity is
declared, so a hostile file cannot make the parser expand entities (a "billion laughs" file is refused,
not expanded). A topology file becomes the Machine a probe would give -- GPUs, NICs, the PCIe path between
each pair, NVLink counts -- plus the facts only NCCL has (:mod:`topoaudit.model.nccl_topo`).
"""

from __future__ import annotations

import dataclasses
import math
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
from topoaudit.model.report import InputIssue
from topoaudit.model.topology import MAX_NVLINKS_PER_GPU
from topoaudit.model.values import Probed, Unsupported
from topoaudit.parse.text import printable

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

# what hardware has: a value past these is damage, read as not given (NCCL reads attributes into C ints)
MAX_DEV = 4096  # CUDA device numbers of one host
MAX_PCIE_WIDTH = 32  # lanes
MAX_LINK_MBPS = 1_000_000  # a C2C link's bw, MB/s per link (Grace: about 45,000)
MAX_NET_MBPS = 3_200_000  # a NIC port's speed, Mb/s (800G today)
MAX_CPUMASK_HEX = 2048  # hex digits of a cpumask: Linux's NR_CPUS is at most 8192

NVSWITCH_CLASS = "0x068000"
CPU_LINK_CLASS = "0x068001"
BRIDGE_CLASS = "0x0604"


@dataclass(frozen=True)
class PciDevice:
    """One ``<pci>`` of the file: what the file says it is and where it places it."""

    bus_id: str
    kind: str  # "gpu" | "nic" | "bridge" | "other" (a class the file gives) | "unknown" (a bus id alone)
    numa_id: int  # the <cpu> it hangs off; -1 when the file cannot place it
    parent: str  # the bus id of the <pci> it sits under, "" directly under the CPU


@dataclass(frozen=True)
class ParsedNcclXml:
    """What one XML file gave: NCCL's view, the Machine built from it, and notes on what could not be used."""

    topology: NcclTopology
    machine: Machine
    notes: tuple[tuple[int, str], ...] = ()  # (line, what could not be used)
    host_hash: str = ""  # NCCL's host_hash of the host read ("" when the file names none)
    devices: tuple[PciDevice, ...] = ()  # every <pci> of the host, in file order
    damage: tuple[tuple[int, str], ...] = ()  # the notes on damage read around (a count no GPU has): recovered
    cut_at: tuple[int, str] | None = None  # where a dump pasted in part stops (an excerpt, not damage)

    def input_issues(self) -> tuple[InputIssue, ...]:
        """The notes as a report's input issues: damage read around is recovered (the audit is incomplete and
        says the input was damaged), where an excerpt stops is said as an excerpt, the rest ignored."""
        return tuple(
            InputIssue(line, "excerpt" if (line, note) == self.cut_at else "recovered" if (line, note) in self.damage
                       else "ignored", note)
            for line, note in self.notes
        )  # fmt: skip


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
    """Read one NCCL topology or graph XML file: for a multi-host dump, its first host that has a GPU."""
    hosts = parse_nccl_xml_hosts(text, name)
    shown = next((h for h in hosts if h.machine.gpus), hosts[0])
    if len(hosts) == 1:
        return shown
    others = "; ".join(
        f"host_hash {h.host_hash or 'not given'} with {len(h.machine.gpus)}" for h in hosts if h is not shown
    )
    note = (
        f"the dump holds {len(hosts)} hosts (NCCL fuses the hosts of a multi-node NVLink domain into one file, "
        f"each <cpu> naming its host_hash): this report is of host_hash {shown.host_hash or 'not given'}, "
        f"with {len(shown.machine.gpus)} GPU(s); the other host(s), read the same way: {others} GPU(s)"
    )
    return dataclasses.replace(shown, notes=((_line_of(text, "<system"), note), *shown.notes))


def closed_cut_dump(text: str) -> tuple[str, int, tuple[str, ...]] | None:
    """The text of a dump cut short (pasted in part: its last elements never closed) with the closing tags it lacks,
    the line it stops at and the elements it stops inside (outermost first); None when the text is whole or damaged
    elsewhere than at its end."""
    open_tags: list[str] = []
    scan = expat.ParserCreate()
    scan.StartElementHandler = lambda tag, _attrs: open_tags.append(tag)
    scan.EndElementHandler = lambda _tag: open_tags.pop()
    kept = text[: text.rfind(">") + 1]  # a tag cut in its middle is dropped with what follows it
    try:
        scan.Parse(kept, False)
    except expat.ExpatError:
        return None  # damaged before its end: not a cut
    if not open_tags:
        return None
    closing = "".join(f"</{tag}>" for tag in reversed(open_tags))
    return kept + closing + "\n", kept.count("\n") + 1, tuple(open_tags)


def parse_nccl_xml_hosts(text: str, name: str) -> tuple[ParsedNcclXml, ...]:
    """Read one NCCL XML file host by host: a multi-node NVLink dump holds several hosts, each ``<cpu>`` naming
    its ``host_hash`` (NCCL's xml.cc); bus ids and ``dev`` numbers repeat from host to host. A graph dump or a
    single-host file is one reading. A dump pasted in part (cut before its closing tags) is read as far as it goes,
    and the reading says where it stops."""
    try:
        root = parse_xml_safely(text, name)
    except InputError:
        cut = closed_cut_dump(text) if looks_like_nccl_xml(text) and "<!DOCTYPE" not in text else None
        if cut is None:
            raise
        note = (cut[1], f"the dump stops at line {cut[1]} before its closing tags: read as far as it goes")
        root = parse_xml_safely(cut[0], name)  # closed once: still not XML is damage, not a cut (no second try)
        hosts = [dataclasses.replace(h, notes=(note, *h.notes), cut_at=note) for h in _hosts(root, cut[0], name)]
        inside = _gpu_cut_inside(root) if "gpu" in cut[2] else None
        if inside is not None and hosts[-1].topology.kind == "topology":
            said = (
                cut[1],
                f"the dump stops inside GPU{inside}'s element: the NVLinks it lists may be only some of them",
            )
            last = hosts[-1]
            hosts[-1] = dataclasses.replace(
                last,
                topology=dataclasses.replace(last.topology, cut_inside_gpu=inside),
                notes=(*last.notes, said),
            )
        return tuple(hosts)
    return _hosts(root, text, name)


def _gpu_cut_inside(root: ET.Element) -> int | None:
    """The ``dev`` of the GPU whose element a cut dump stops inside: the last ``<gpu>`` of the file."""
    gpus = list(root.iter("gpu"))
    dev = gpus[-1].get("dev", "") if gpus else ""
    return int(dev) if dev.strip().isdecimal() and len(dev.strip()) < 6 else None


def _hosts(root: ET.Element, text: str, name: str) -> tuple[ParsedNcclXml, ...]:
    """The readings of a parsed dump: one per host of a ``<system>``, or the ``<graphs>``."""
    if root.tag == "graphs":
        return (_graphs(root),)
    if root.tag != "system":
        raise InputError(
            f"{name}: an XML file whose root is <{printable(root.tag, 60)}>, not NCCL's <system> or <graphs>"
        )
    by_host: dict[str, list[ET.Element]] = {}
    for cpu in root:
        if cpu.tag == "cpu":
            by_host.setdefault(cpu.get("host_hash", "").strip().lower(), []).append(cpu)
    if len(by_host) <= 1:
        return (_system(root, name, text, next(iter(by_host), "")),)
    hosts = []
    for host_hash, cpus in by_host.items():  # each host alone, as NCCL keys its nodes by host
        system = ET.Element(root.tag, root.attrib)
        system.extend(cpus)
        hosts.append(_system(system, name, text, host_hash))
    return tuple(hosts)


# --- NCCL_TOPO_DUMP_FILE / NCCL_TOPO_FILE ---------------------------------------------------------


@dataclass(frozen=True)
class _GpuElement:
    """One GPU in the file: the element standing for its PCI function, and its ``<gpu>`` when there is one."""

    function: ET.Element  # the <pci> holding the <gpu>; a hand-written file's GPU <pci>; a stray <gpu> itself
    gpu: ET.Element | None
    order: int  # place in the file


def _gpu_elements(root: ET.Element, parents: dict[ET.Element, ET.Element]) -> list[_GpuElement]:
    """Every GPU where NCCL reads one (topo.cc ncclTopoAddPci): each ``<gpu>`` child of a ``<pci>``, whatever the
    ``<pci>``'s class (a bridge included). Also a hand-written file's GPU function (class 0x03...) without one,
    and a ``<gpu>`` outside any ``<pci>``, which NCCL ignores but a person meant as a GPU."""
    found: list[_GpuElement] = []
    for element in root.iter():
        if element.tag == "pci":
            gpus = [child for child in element if child.tag == "gpu"]
            if gpus:
                found += [_GpuElement(element, gpu, len(found) + k) for k, gpu in enumerate(gpus)]
            elif element.get("class", "").startswith("0x03"):
                found.append(_GpuElement(element, None, len(found)))
        elif element.tag == "gpu" and element in parents and parents[element].tag != "pci":
            found.append(_GpuElement(element, element, len(found)))
    return found


def _system(root: ET.Element, name: str, text: str, host_hash: str = "") -> ParsedNcclXml:
    version = root.get("version", "")
    parents = {child: parent for parent in root.iter() for child in parent}
    root_line = _line_of(text, "<system")
    devices = _devices(root, parents)
    found = _gpu_elements(root, parents)
    if not found:
        return _no_gpu(root, name, host_hash, version, devices, root_line)
    indexed = sorted(((_gpu_index(g), g) for g in found), key=lambda pair: (pair[0], pair[1].order))
    twice = sorted({i for i, _ in indexed if sum(1 for j, _ in indexed if j == i) > 1})
    if twice:
        raise InputError(f"{name}: two GPUs of one host in the NCCL topology file share dev {twice[0]}")
    nics = _nic_elements(root)
    busid_to_gpu = {(g.function.get("busid") or "").lower(): i for i, g in indexed if g.function.tag == "pci"}
    notes: list[tuple[int, str]] = []
    damage: list[tuple[int, str]] = []  # attributes no hardware has: read around, and said so
    rccl = version == "2" or any(e.get("gcn") or e.get("arch") or e.find("xgmi") is not None for e in root.iter("gpu"))
    read = [_nccl_gpu(i, g, parents, busid_to_gpu, rccl, damage, text) for i, g in indexed]
    gpus = tuple(gpu for gpu, _ in read)
    unreadable = any(damaged for _, damaged in read)  # a count no GPU has: NVLink is not judged from the file
    nets = tuple(_nccl_net(f"NIC{k}", e, parents, damage, text) for k, e in enumerate(nics))
    describes_nvlink = any(True for _ in root.iter("nvlink")) and not unreadable
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
    positions = {i: _position(g.function, parents) for i, g in indexed}
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
    elif unreadable:
        pass  # the note on the count says GPU-to-GPU paths are not judged
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
                f"GPU{gpu.index}'s NVLink target {printable(link.target, 40)} is {where}: which GPUs are NVLink "
                "peers cannot be told from this file, so GPU-to-GPU paths are not judged from it",
            )
        )
    else:
        links += _gpu_pair_links(gpus, positions)
    switches = sorted({n.target for g in gpus for n in g.nvlinks if n.target_kind == "nvswitch"})
    machine = Machine(
        source=SOURCE,
        gpus=tuple(
            _machine_gpu(g, e.function, _cpu_affinity(e.function, parents), rccl)
            for g, (_, e) in zip(gpus, indexed, strict=True)
        ),
        nics=tuple(_machine_nic(n, numa) for n, numa in zip(nets, (_numa_of(e, parents) for e in nics), strict=True)),
        links=tuple(sorted(links, key=lambda lk: (lk.a, lk.b))),
        nvswitches=tuple(switches),
    )
    return ParsedNcclXml(topology, machine, (*damage, *notes), host_hash, devices, tuple(damage))


def _no_gpu(
    root: ET.Element, name: str, host_hash: str, version: str, devices: tuple[PciDevice, ...], line: int
) -> ParsedNcclXml:
    """A file that names no GPU: what it places where, when it places anything (NCCL reads it and fills in the
    devices from the machine it runs on), else InputError."""
    if not devices:
        raise InputError(f"{name}: an NCCL topology file with no GPU and no PCI device in it")
    bare = sum(1 for d in devices if d.kind == "unknown")
    numa = sorted({d.numa_id for d in devices})
    what = f"{len(devices)} PCI device(s) on NUMA node(s) {', '.join(map(str, numa))}"
    if bare:
        what += (
            f", {bare} of them by bus id alone (no class, no <gpu> or <nic>: NCCL learns what each is from the "
            "machine it runs on)"
        )
    note = (line, f"the file names no GPU: it places {what}; no GPU can be judged from it")
    topology = NcclTopology(
        kind="topology",
        version=version,
        flavour="nccl",
        cpu_numa_ids=tuple(_int(c.get("numaid"), -1) for c in root.iter("cpu")),
    )
    return ParsedNcclXml(topology, Machine(source=SOURCE, gpus=()), (note,), host_hash, devices)


def _devices(root: ET.Element, parents: dict[ET.Element, ET.Element]) -> tuple[PciDevice, ...]:
    """Every ``<pci>`` of the file, in file order, with what the file says it is and where it places it."""
    out = []
    for element in root.iter("pci"):
        cls = element.get("class", "")
        children = {child.tag for child in element}
        kind = (
            "gpu" if "gpu" in children or cls.startswith("0x03")
            else "nic" if "nic" in children or cls.startswith("0x02")
            else "bridge" if cls.startswith(BRIDGE_CLASS)
            else "other" if cls
            else "unknown"
        )  # fmt: skip
        above = parents.get(element)
        parent = (above.get("busid") or "").lower() if above is not None and above.tag == "pci" else ""
        out.append(PciDevice((element.get("busid") or "").lower(), kind, _numa_of(element, parents), parent))
    return tuple(out)


def _gpu_index(gpu: _GpuElement) -> int:
    """NCCL's ``dev`` (the CUDA device number), else the GPU's place in the file."""
    dev = gpu.gpu.get("dev") if gpu.gpu is not None else None
    index = _int(dev, gpu.order)
    return index if 0 <= index < MAX_DEV else gpu.order


def _nic_elements(root: ET.Element) -> list[ET.Element]:
    """Each ``<net>``, and each NIC function of a hand-written file that has no ``<net>`` under it."""
    found: list[ET.Element] = []
    for element in root.iter():
        bare_nic = element.tag == "pci" and element.get("class", "").startswith("0x02")
        if element.tag == "net" or (bare_nic and element.find(".//net") is None):
            found.append(element)
    return found


def _int(value: str | None, default: int) -> int:
    """An integer attribute as NCCL reads one (``strtol`` base 0, then an ``int``): ``default`` for anything
    that is not an integer or does not fit 32 bits."""
    try:
        number = int(value, 0) if value else default
    except ValueError:
        return default
    return number if -(2**31) <= number < 2**31 else default


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
    index: int,
    found: _GpuElement,
    parents: dict[ET.Element, ET.Element],
    busid_to_gpu: dict[str, int],
    rccl: bool,
    notes: list[tuple[int, str]],
    text: str,
) -> tuple[NcclGpu, bool]:
    """NCCL's view of one GPU, and whether one of its NVLink counts could not be read."""
    pci, gpu = found.function, found.gpu
    attrs = gpu.attrib if gpu is not None else {}
    busid = (pci.get("busid") or "").lower() if pci.tag == "pci" else ""
    sm = _int(attrs.get("sm"), 0)
    # RCCL writes AMD's GPU-to-GPU links as <xgmi target count>, the same shape as NCCL's <nvlink>
    found_links = [n for n in gpu if n.tag in ("nvlink", "xgmi")] if gpu is not None else []
    links = []
    for element in found_links:
        link = _nvlink(element, busid, busid_to_gpu, index, notes, text)
        if link is not None:
            links.append(link)
    count = sum(n.count for n in links)
    unreadable = len(links) < len(found_links)
    if not unreadable and not rccl and count > MAX_NVLINKS_PER_GPU:
        notes.append(
            (
                _line_of(text, f'busid="{busid}"') if busid else 0,
                f"GPU{index}'s NVLink counts add up to {count}, more than any GPU has ({MAX_NVLINKS_PER_GPU}): "
                "GPU-to-GPU paths are not judged from this file",
            )
        )
        unreadable = True
    per_link = next((bw for floor, bw in NVLINK_GBPS_PER_LINK if sm >= floor), 0.0)
    speed = pci.get("link_speed", "") if pci.tag == "pci" else ""
    width = _int(pci.get("link_width"), 0) if pci.tag == "pci" else 0
    width = width if 0 <= width <= MAX_PCIE_WIDTH else 0  # NCCL counts an unknown width as 16 lanes
    not_in_file = Unsupported(SOURCE, "not in the file")
    c2c_links, c2c_gbps = _c2c(gpu, index, notes, text)
    nvlink_gbps: Probed[float] = (
        Unsupported(SOURCE, "RCCL's sm is not an NVIDIA generation")
        if rccl
        else Unsupported(SOURCE, "an NVLink count in the file cannot be read")
        if unreadable
        else round(count * per_link, 1)
        if sm
        else Unsupported(SOURCE, "no sm in the file")
    )
    rank = _int(attrs.get("rank"), -1)
    read = NcclGpu(
        index=index,
        pci_bus_id=busid,
        sm=sm if sm > 0 else not_in_file,
        rank=rank if "rank" in attrs else not_in_file,
        gdr=attrs.get("gdr") == "1" if "gdr" in attrs else not_in_file,
        numa_id=_numa_of(pci, parents),
        link_speed=speed,
        link_width=width,
        pci_gbps=nccl_pci_gbps(speed, width),
        nvlinks=tuple(links),
        nvlink_gbps=nvlink_gbps,
        arch=attrs.get("gcn") or attrs.get("arch") or Unsupported(SOURCE, "NCCL does not write it"),
        c2c_links=c2c_links,
        c2c_gbps=c2c_gbps,
    )
    return read, unreadable


def _c2c(gpu: ET.Element | None, index: int, notes: list[tuple[int, str]], text: str) -> tuple[int, Probed[float]]:
    """Grace C2C links (``<c2c bw count>``, bw in MB/s per link) and their bandwidth together in GB/s."""
    links = [c for c in gpu if c.tag == "c2c"] if gpu is not None else []
    if not links:
        return 0, NO_C2C
    counts = [_count(c.get("count")) for c in links]
    rates = [_int(c.get("bw"), -1) for c in links]
    if any(n is None for n in counts) or any(not 0 < bw <= MAX_LINK_MBPS for bw in rates):
        bad = next(c for c, n, bw in zip(links, counts, rates, strict=True) if n is None or not 0 < bw <= MAX_LINK_MBPS)
        notes.append(
            (
                _line_of(text, "<c2c"),
                f"GPU{index}'s <c2c> link has {_attrs(bad, 'count', 'bw')}: a count from 1 to {MAX_NVLINKS_PER_GPU} "
                f"and a bw (MB/s per link) up to {MAX_LINK_MBPS} are what Grace's C2C has; its bandwidth is not read",
            )
        )
        return 0, Unsupported(SOURCE, "the <c2c> link's count or bw cannot be read")
    count = sum(n for n in counts if n is not None)
    total_mbps = sum(bw * (n or 0) for bw, n in zip(rates, counts, strict=True))
    return count, total_mbps / 1000


def _count(value: str | None) -> int | None:
    """A link count as the hardware can have it (1 to 18), None for anything else (absent, 0, 10**21, "x")."""
    if value is None or not value.strip().isdecimal():
        return None
    number = int(value) if len(value.strip()) <= 4 else MAX_NVLINKS_PER_GPU + 1
    return number if 1 <= number <= MAX_NVLINKS_PER_GPU else None


def _attrs(element: ET.Element, *names: str) -> str:
    """``count="999..."`` and ``no bw``: the attributes as the file has them, quoted for a sentence."""
    return " and ".join(
        f'{n}="{printable(element.get(n, ""), 30)}"' if n in element.attrib else f"no {n}" for n in names
    )


def _nvlink(
    element: ET.Element,
    own_busid: str,
    busid_to_gpu: dict[str, int],
    index: int,
    notes: list[tuple[int, str]],
    text: str,
) -> NcclNvlink | None:
    """One ``<nvlink>`` (or ``<xgmi>``); None, with a note, when its count is missing or not one hardware has."""
    target = (element.get("target") or "").lower()
    count = _count(element.get("count"))
    if count is None:
        notes.append(
            (
                _line_of(text, f'target="{element.get("target", "")}"') if target else _line_of(text, "<nvlink"),
                f"GPU{index}'s <{element.tag}> to {printable(target, 40) or 'no target'} has "
                f"{_attrs(element, 'count')}; NCCL requires a count, and no GPU has more than "
                f"{MAX_NVLINKS_PER_GPU} links: the file is damaged or edited, so GPU-to-GPU NVLink paths are not "
                "judged from it",
            )
        )
        return None
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
    return NcclNvlink(target, count, tclass, kind)


def _nccl_net(
    label: str, element: ET.Element, parents: dict[ET.Element, ET.Element], notes: list[tuple[int, str]], text: str
) -> NcclNet:
    pci = element
    while pci.tag != "pci" and pci in parents:
        pci = parents[pci]
    busid: Probed[str] = pci.get("busid", "").lower() if pci.tag == "pci" else Unsupported(SOURCE, "not under a PCI")
    if element.tag != "net":
        absent = Unsupported(SOURCE, "a NIC function without a <net> in the file")
        return NcclNet(label, absent, busid, absent, absent, absent)
    speed = _int(element.get("speed"), -1 if "speed" in element.attrib else 0)  # -1: not an integer NCCL reads
    given: Probed[int] = speed if "speed" in element.attrib else Unsupported(SOURCE, "no speed in the file")
    if "speed" in element.attrib and not 0 <= speed <= MAX_NET_MBPS:
        notes.append(
            (
                _line_of(text, f'name="{element.get("name", "")}"') or _line_of(text, "<net"),
                f"{label}'s speed {_attrs(element, 'speed')} is not a NIC speed (0 to {MAX_NET_MBPS} Mb/s); it is "
                "not read",
            )
        )
        given, speed = Unsupported(SOURCE, "a speed no NIC has"), 0
    return NcclNet(
        label=label,
        name=element.get("name") or Unsupported(SOURCE, "no name in the file"),
        pci_bus_id=busid,
        speed_megabits_per_s=given,
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
    digits = mask.replace(",", "")
    if len(digits) > MAX_CPUMASK_HEX:
        return Unsupported(SOURCE, f"an affinity mask of {len(digits)} hex digits, more CPUs than Linux counts")
    try:
        bits = int(digits, 16)
    except ValueError:
        why = f"affinity {printable(mask, 40)!r} unreadable" if mask else "no CPU affinity mask in the file"
        return Unsupported(SOURCE, why)
    return tuple(i for i, bit in enumerate(reversed(f"{bits:b}")) if bit == "1")


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
            value = float(element.get(key, ""))
        except ValueError:
            return Unsupported(SOURCE, f"no {key} in the file")
        return value if math.isfinite(value) and value >= 0 else Unsupported(SOURCE, f"{key} is not a speed")

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
