"""``nvidia-smi -q`` text, whole or in excerpts: per GPU, its NVLink fabric state and health, ECC mode and PCIe link.

``nvidia-smi -q`` is a tree written with indentation (``GPU 00000000:18:00.0`` / ``    Fabric`` /
``        State : Completed``). People rarely paste all of it: they paste ``nvidia-smi -q | grep -A4 Fabric``
(pieces separated by ``--``, no GPU header), the ``Fabric`` block of one GPU, or a handful of lines. The tree is
rebuilt from relative indentation, so a piece that starts at ``Fabric`` or at ``    Fabric`` reads the same; each
GPU header starts a GPU, and where there is none each ``--`` piece (or each repeated ``Fabric`` block) is one more
GPU the paste does not name. Every value the paste does not show, or shows as ``N/A``, is Unsupported with the
reason.

Field names follow nvidia-smi 535-580 (``Fabric``: State, Status, CliqueId, ClusterUUID, ``Health``: Summary,
Bandwidth, Route Recovery in progress, Route Unhealthy, Access Timeout Recovery, Incorrect Configuration).
``nvidia-smi -q -x`` (the same tree as XML) is read as the lines ``nvidia-smi -q`` prints for the elements read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from xml.parsers import expat

from topoaudit.errors import InputError
from topoaudit.model.smi_query import NO_REMAPPED_ROWS, SOURCE, FabricInfo, PcieLink, RemappedRows, SmiGpu, SmiQuery
from topoaudit.model.values import Unsupported
from topoaudit.parse.prefixes import Line, strip_prefixes
from topoaudit.units import parse_bus_id

__all__ = [
    "FabricInfo", "PcieLink", "SmiGpu", "SmiQuery", "absent_value", "as_int", "looks_like_smi_query", "read_smi_query",
]  # fmt: skip

_GPU_HEADER = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
_KEY_VALUE = re.compile(r"^(?P<indent>\s*)(?P<key>\S(?:.*?\S)?)\s+:(?:\s(?P<value>.*?))?\s*$")
_SECTION = re.compile(r"^(?P<indent>\s*)(?P<name>[A-Za-z][\w ./()-]*?)\s*$")
_ABSENT_WORDS = frozenset({"N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown Error", "Not Available"})
# Keys that appear only in one place of the tree: read even when a grep left their section out.
_UNIQUE_KEYS = {
    "Product Name": ("Product Name",),
    "Bus Id": ("PCI", "Bus Id"),
    "CliqueId": ("Fabric", "CliqueId"),
    "ClusterUUID": ("Fabric", "ClusterUUID"),
    "Attached GPUs": ("Attached GPUs",),
    "Driver Version": ("Driver Version",),
    "CUDA Version": ("CUDA Version",),
}
_TOP_LEVEL = frozenset({("Attached GPUs",), ("Driver Version",), ("CUDA Version",), ("Timestamp",)})


def looks_like_smi_query(text: str) -> bool:
    """A cheap sniff: the ``==NVSMI LOG==`` banner (or ``-q -x``'s root element), a ``GPU 0000:..`` header with
    indented keys, a ``Fabric`` section with its ``State :`` line, or the PCI block's ``Link Width`` with its
    ``Max :`` line."""
    head = text[:200_000]
    if "NVSMI LOG" in head or XML_ROOT in head:
        return True
    if "Fabric" in head and re.search(r"^\s*Fabric\s*\n\s*State\s+:", head, re.M):
        return True
    if "Link Width" in head and re.search(r"^\s*Link Width\s*\n\s*Max\s+:\s*\d+x", head, re.M):
        return True  # the PCI block's link (``nvidia-smi -q | grep -A8 "GPU Link Info"``)
    if "Remapped Rows" in head and re.search(r"^\s*Remapped Rows\s*\n\s*Correctable Error\s+:", head, re.M):
        return True  # ``nvidia-smi -q -d ROW_REMAPPER``, or its block grepped
    return bool(re.search(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*\n\s+\S[^:\n]*\s:\s", head, re.M))


class _Gpu:
    """A GPU being read: the values by their path in the tree."""

    def __init__(self, line: int, bus: str | None) -> None:
        self.line = line
        self.bus = bus
        self.values: dict[tuple[str, ...], str] = {}


def read_smi_query(paste: str | Sequence[Line], name: str = "") -> SmiQuery:
    """Read ``nvidia-smi -q`` output or pieces of it; InputError when no line of it is nvidia-smi -q's."""
    lines = strip_prefixes(paste) if isinstance(paste, str) else paste
    if any(XML_ROOT in line.text for line in lines[:64]):
        lines = _xml_as_lines(lines, name)
    top: dict[tuple[str, ...], str] = {}
    gpus: list[_Gpu] = []
    current: _Gpu | None = None
    stack: list[tuple[int, str, int]] = []  # (indent, section, line) from the outermost open section
    used: set[int] = set()
    pieces = 0
    for line in lines:
        text = line.text.rstrip()
        stripped = text.strip()
        if stripped == "--":  # grep's separator: the next piece may be another GPU
            pieces += 1
            stack = []
            if current is not None and not current.bus:
                current = None
            continue
        if not stripped or stripped.startswith(("[...]", "...", "====", "#")):
            continue
        if m := _GPU_HEADER.match(stripped):
            current = _Gpu(line.number, parse_bus_id(m["bus"]))
            gpus.append(current)
            stack = []
            used.add(line.number)
            continue
        kv = _KEY_VALUE.match(text)
        indent = len(text) - len(text.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if kv is None:
            section = _SECTION.match(text)
            if section is None:
                continue
            name_ = section["name"]
            if not stack and name_ == "Fabric" and current is not None and _has(current, ("Fabric",)):
                current = None  # a second Fabric block without a header: another GPU
            stack.append((indent, name_, line.number))
            if name_ in _KNOWN_SECTIONS or name_ in _PARENTS:
                used.add(line.number)
            continue
        key, value = kv["key"], (kv["value"] or "").strip()
        path = tuple(s for _, s, _ in stack) + (key,)
        if not stack and key in _UNIQUE_KEYS:
            path = _UNIQUE_KEYS[key]
        elif stack and stack[0][1] in _PARENTS:  # a piece that starts inside a section ("        Health")
            path = _PARENTS[stack[0][1]] + path
        if path in _TOP_LEVEL:
            top[path] = value
            used.add(line.number)
            continue
        if not _wanted(path):
            continue
        if current is None or path in current.values:
            current = _Gpu(stack[0][2] if stack else line.number, None)
            gpus.append(current)
        current.values[path] = value
        if path == ("PCI", "Bus Id") and current.bus is None:
            current.bus = parse_bus_id(value)
        used.add(line.number)
    if not gpus and not top:
        where = f"{name}: " if name else ""
        raise InputError(f"{where}no nvidia-smi -q line (a GPU header, a Fabric block or its keys) in the input")
    attached = as_int(top.get(("Attached GPUs",)), "Attached GPUs")
    read = tuple(_gpu(g) for g in gpus)
    excerpt = pieces > 0 or any(g.bus is None for g in gpus) or not top
    if isinstance(attached, int) and attached != len(read):
        excerpt = True
    return SmiQuery(
        gpus=read,
        attached_gpus=attached,
        driver_version=_text(top.get(("Driver Version",)), "Driver Version"),
        cuda_version=_text(top.get(("CUDA Version",)), "CUDA Version"),
        excerpt=excerpt,
        used_lines=tuple(sorted(used)),
    )


_KNOWN_SECTIONS = frozenset({"Fabric", "PCI", "ECC Mode", "Remapped Rows"})
_PARENTS = {  # inner sections a grep may start a piece with, and where they sit
    "Health": ("Fabric",),
    "GPU Link Info": ("PCI",),
    "PCIe Generation": ("PCI", "GPU Link Info"),
    "Link Width": ("PCI", "GPU Link Info"),
}
_FABRIC = ("Fabric",)
_HEALTH = ("Fabric", "Health")
_LINK = ("PCI", "GPU Link Info")
_REMAPPED = ("Remapped Rows",)
YES_NO = ("Yes", "No")


def _wanted(path: tuple[str, ...]) -> bool:
    """The paths this reader keeps (the rest of nvidia-smi -q is not about the interconnect)."""
    return (
        path in (("Product Name",), ("PCI", "Bus Id"))
        or path[:1] in (_FABRIC, ("ECC Mode",), _REMAPPED)
        or path[:2] == _LINK
    )


def _has(gpu: _Gpu, prefix: tuple[str, ...]) -> bool:
    return any(p[: len(prefix)] == prefix for p in gpu.values)


def _gpu(g: _Gpu) -> SmiGpu:
    v = g.values
    fabric: FabricInfo | Unsupported = Unsupported(SOURCE, "the paste has no Fabric block for this GPU")
    if _has(g, _FABRIC):
        fabric = FabricInfo(
            state=_text(v.get((*_FABRIC, "State")), "Fabric State"),
            status=_text(v.get((*_FABRIC, "Status")), "Fabric Status"),
            clique_id=as_int(v.get((*_FABRIC, "CliqueId")), "Fabric CliqueId"),
            cluster_uuid=_text(v.get((*_FABRIC, "ClusterUUID")), "Fabric ClusterUUID"),
            health_summary=_text(v.get((*_HEALTH, "Summary")), "Fabric Health Summary"),
            health_bandwidth=_text(v.get((*_HEALTH, "Bandwidth")), "Fabric Health Bandwidth"),
            route_recovery_in_progress=_bool(v.get((*_HEALTH, "Route Recovery in progress")), "Route Recovery"),
            route_unhealthy=_bool(v.get((*_HEALTH, "Route Unhealthy")), "Route Unhealthy"),
            access_timeout_recovery=_bool(v.get((*_HEALTH, "Access Timeout Recovery")), "Access Timeout Recovery"),
            incorrect_configuration=_text(v.get((*_HEALTH, "Incorrect Configuration")), "Incorrect Configuration"),
        )
    pcie: PcieLink | Unsupported = Unsupported(SOURCE, "the paste has no GPU Link Info for this GPU")
    if _has(g, _LINK):
        generation, width = (*_LINK, "PCIe Generation"), (*_LINK, "Link Width")
        pcie = PcieLink(
            generation_current=as_int(v.get((*generation, "Current")), "PCIe generation (current)"),
            generation_max=as_int(v.get((*generation, "Max")), "PCIe generation (max)"),
            generation_device_max=as_int(v.get((*generation, "Device Max")), "PCIe generation (device max)"),
            generation_host_max=as_int(v.get((*generation, "Host Max")), "PCIe generation (host max)"),
            width_current=as_int(v.get((*width, "Current")), "PCIe link width (current)"),
            width_max=as_int(v.get((*width, "Max")), "PCIe link width (max)"),
        )
    remapped: RemappedRows | Unsupported = NO_REMAPPED_ROWS
    if _has(g, _REMAPPED):
        remapped = RemappedRows(
            correctable=as_int(v.get((*_REMAPPED, "Correctable Error")), "Remapped Rows (correctable)"),
            uncorrectable=as_int(v.get((*_REMAPPED, "Uncorrectable Error")), "Remapped Rows (uncorrectable)"),
            pending=_bool(v.get((*_REMAPPED, "Pending")), "Remapped Rows Pending", YES_NO),
            failure_occurred=_bool(
                v.get((*_REMAPPED, "Remapping Failure Occurred")), "Remapping Failure Occurred", YES_NO
            ),
        )
    return SmiGpu(
        line=g.line,
        bus_id=g.bus if g.bus else Unsupported(SOURCE, "the paste does not show this GPU's bus id"),
        product_name=_text(v.get(("Product Name",)), "Product Name"),
        fabric=fabric,
        ecc_mode_current=_text(v.get(("ECC Mode", "Current")), "ECC Mode (current)"),
        ecc_mode_pending=_text(v.get(("ECC Mode", "Pending")), "ECC Mode (pending)"),
        pcie=pcie,
        remapped_rows=remapped,
    )


def absent_value(raw: str | None, what: str) -> Unsupported | None:
    """A value nvidia-smi did not give (not in the paste, N/A, Not Supported) as the reason; None for a value."""
    if raw is None:
        return Unsupported(SOURCE, f"{what} is not in the paste")
    if raw in _ABSENT_WORDS or not raw:
        return Unsupported(SOURCE, f"nvidia-smi prints {raw or 'nothing'} for {what}")
    return None


def _text(raw: str | None, what: str) -> str | Unsupported:
    absent = absent_value(raw, what)
    return absent if absent is not None else str(raw)


def as_int(raw: str | None, what: str) -> int | Unsupported:
    """A count nvidia-smi printed ("16", "16x"), or why there is none."""
    absent = absent_value(raw, what)
    if absent is not None:
        return absent
    # nvidia-smi prints no count of more than 18 digits: a longer one is damage, said as such rather than kept
    m = re.fullmatch(r"(\d{1,18})x?", str(raw).strip())
    return int(m[1]) if m else Unsupported(SOURCE, f"{what} is not a number: {raw!r}")


def _bool(raw: str | None, what: str, words: tuple[str, str] = ("True", "False")) -> bool | Unsupported:
    """A flag nvidia-smi printed in its words for true and false (the Fabric block's True/False, Remapped Rows'
    Yes/No), or why there is none."""
    absent = absent_value(raw, what)
    if absent is not None:
        return absent
    if raw in words:
        return raw == words[0]
    return Unsupported(SOURCE, f"{what} is neither {words[0]} nor {words[1]}: {raw!r}")


XML_ROOT = "<nvidia_smi_log"
"""The root element of ``nvidia-smi -q -x``."""
_XML_TOP = {"timestamp": "Timestamp", "driver_version": "Driver Version", "cuda_version": "CUDA Version",
            "attached_gpus": "Attached GPUs"}  # fmt: skip
_XML_TITLES = {  # each element read under <gpu>, by the title ``nvidia-smi -q`` prints for it
    "product_name": "Product Name", "pci": "PCI", "pci_bus_id": "Bus Id", "pci_gpu_link_info": "GPU Link Info",
    "pcie_gen": "PCIe Generation", "max_link_gen": "Max", "current_link_gen": "Current",
    "device_current_link_gen": "Device Current", "max_device_link_gen": "Device Max", "max_host_link_gen": "Host Max",
    "link_widths": "Link Width", "max_link_width": "Max", "current_link_width": "Current",
    "ecc_mode": "ECC Mode", "current_ecc": "Current", "pending_ecc": "Pending",
    "remapped_rows": "Remapped Rows", "remapped_row_corr": "Correctable Error",
    "remapped_row_unc": "Uncorrectable Error",
    "remapped_row_pending": "Pending", "remapped_row_failure": "Remapping Failure Occurred",
    "fabric": "Fabric", "state": "State", "status": "Status", "cliqueId": "CliqueId", "clusterUuid": "ClusterUUID",
    "health": "Health", "summary": "Summary", "bandwidth": "Bandwidth",
    "route_recovery_in_progress": "Route Recovery in progress", "route_unhealthy": "Route Unhealthy",
    "access_timeout_recovery": "Access Timeout Recovery", "incorrect_configuration": "Incorrect Configuration",
}  # fmt: skip


class _XmlTree:
    """Walks ``nvidia-smi -q -x`` with expat and writes the ``nvidia-smi -q`` line of each element read, numbered by
    the pasted line the element starts on; what is cut off or damaged ends the walk where it is."""

    def __init__(self, numbers: Sequence[int]) -> None:
        self.numbers = numbers
        self.lines: list[Line] = []
        self.open: list[tuple[str | None, int, list[str]]] = []  # (title, "" for <gpu>, None: not read; line; text)
        self.parents_written: set[int] = set()  # depths whose section line is written

    def number(self, parser: expat.XMLParserType) -> int:
        return self.numbers[min(parser.CurrentLineNumber, len(self.numbers)) - 1]

    def start(self, parser: expat.XMLParserType, tag: str, attrs: dict[str, str]) -> None:
        depth = len(self.open)  # 0: the root; 1: its children
        line = self.number(parser)
        if depth == 1 and tag == "gpu":
            self.lines.append(Line(line, f"GPU {attrs.get('id', '')}"))
            self.open.append(("", line, []))
            return
        parent = self.open[-1][0] if self.open else ""
        inside_gpu = depth >= 2 and self.open[1][0] == ""
        if depth == 1:
            title = _XML_TOP.get(tag)
        elif parent is not None and inside_gpu:
            title = _XML_TITLES.get(tag)
        else:
            title = None
        if parent and depth - 1 not in self.parents_written:  # this element is a child: its parent is a section
            self.lines.append(Line(self.open[-1][1], "    " * (depth - 3) + parent))
            self.parents_written.add(depth - 1)
        self.parents_written.discard(depth)
        self.open.append((title, line, []))

    def end(self, _tag: str) -> None:
        title, line, text = self.open.pop()
        depth = len(self.open)
        if title and depth not in self.parents_written:  # a leaf: its value
            self.lines.append(Line(line, "    " * (depth - 2) + f"{title} : {''.join(text).strip()}"))
        self.parents_written.discard(depth)

    def text(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)


def _refuse_entities(*_args: object) -> None:
    raise InputError("the XML declares entities; nvidia-smi -q -x declares none, so it is refused unread")


def _xml_as_lines(lines: Sequence[Line], name: str) -> tuple[Line, ...]:
    """``nvidia-smi -q -x`` as the lines ``nvidia-smi -q`` prints for the elements this reader reads. Its document
    type names nvidia-smi's DTD file and is not loaded; a document that declares entities is refused unread."""
    tree = _XmlTree([line.number for line in lines])
    parser = expat.ParserCreate()
    parser.StartElementHandler = lambda tag, attrs: tree.start(parser, tag, attrs)
    parser.EndElementHandler = tree.end
    parser.CharacterDataHandler = tree.text
    parser.EntityDeclHandler = _refuse_entities
    parser.StartDoctypeDeclHandler = lambda _n, _s, _p, internal: _refuse_entities() if internal else None
    try:
        parser.Parse("\n".join(line.text for line in lines), True)
    except InputError as exc:
        raise InputError(f"{name}: {exc}" if name else str(exc)) from None
    except expat.ExpatError:
        pass  # cut off or damaged: what was read before stands, as with a piece of the text form
    return tuple(tree.lines)
