"""Read NCCL's topology print (``NCCL_DEBUG_SUBSYS=GRAPH``) into an :class:`NcclGraphPrint`.

NCCL prints its system as a tree (src/graph/topo.cc ``ncclTopoPrintRec``): each CPU at the left, then one
``+ KIND[bw] - NODE`` line per link, a PCIe link's far node printed on the same line and its own links
indented under the column where that node's name starts; other links (NVL, SYS, NET, C2C) name their far
node and stop. Then one path line per GPU and NIC (src/graph/paths.cc ``printNodePaths``: ``GPU/4000 :GPU/5000
(1/360.0/NVL) ...``), then each graph it searched (src/graph/search.cc ``ncclTopoPrintGraph``: ``Pattern 4,
crossNic 0, nChannels 2, bw 24.0/24.0, type NVL/PIX, sameChannels 1`` and `` 0 : GPU/0 GPU/1``).

The lines may come with NCCL's ``host:pid:tid [dev] NCCL INFO`` prefix, or without it (a print pasted on its
own, re-indented). The tree is rebuilt from the relative indentation, per printing thread (ranks print it
at the same time and their lines interleave), so a paste that re-indented the levels keeps their order.
Node ids are kept as printed: ``GPU/4000`` before NCCL 2.23.4, ``GPU/0-4000`` since.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from topoaudit.errors import InputError
from topoaudit.model.nccl import NOT_LOGGED, GraphPattern, LogLine
from topoaudit.model.nccl_graph import GraphLink, GraphNode, GraphPath, GraphSearch, NcclGraphPrint
from topoaudit.model.values import Probed, Unsupported

SOURCE = "nccl-graph"
MAX_EVIDENCE_CHARS = 300

_MARKER = re.compile(r"\bNCCL INFO ")
_FIGURE = r"\d{1,9}(?:\.\d{1,9})?"  # a figure NCCL prints (GB/s); a damaged one ("1.2.3", 400 digits) reads as no line
_PREFIX = re.compile(r"(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\]")
_NODE_ID = r"(?:GPU|PCI|NVS|CPU|NIC|NET|GIN|RMA|DEV|CXB)/[0-9a-fA-F]+(?:-[0-9a-fA-F]+)?"
_SYSTEM = re.compile(rf"=== System : max(?:Bw|Width) (?P<max>{_FIGURE}) total(?:Bw|Width) (?P<total>{_FIGURE}) ===")
_ROOT = re.compile(rf"^(?P<id>{_NODE_ID})(?: \((?P<detail>[^)]*)\))?\s*$")
_LINK = re.compile(rf"^\+ (?P<kind>[A-Z0-9]+)\[(?P<gbps>{_FIGURE})\] - (?P<id>{_NODE_ID})(?: \((?P<detail>[^)]*)\))?")
_PATHS = re.compile(rf"^(?P<src>{_NODE_ID}) :(?P<body>.*)$")
_PATH_ITEM = re.compile(rf"(?P<dst>{_NODE_ID}) \((?P<hops>\d{{1,9}})/(?P<gbps>{_FIGURE})/(?P<type>[A-Z0-9]+)\)")
_PATTERN = re.compile(
    r"Pattern (?P<p>\d{1,9}), crossNic (?P<cross>\d{1,9}), nChannels (?P<n>\d{1,9}), "
    rf"(?:bw|speed) (?P<bi>{_FIGURE})/(?P<be>{_FIGURE}), "
    r"type (?P<ti>\w+)/(?P<te>\w+)"
)
_CHANNEL = re.compile(rf"^\s*(?P<ch>\d+) :(?P<nodes>(?: (?:{_NODE_ID}|(?:GPU|NET)/\d+))+)\s*$")
_GRAPH_WORDS = ("=== System", "+ ", "Pattern ", "/")
MAX_RANK_DIGITS = 9
"""A rank is a count of processes: a longer number on a GPU node is damage, not a rank."""


@dataclass
class _Level:
    column: int | None  # where the '+' of this node's links stands; None until its first link is read
    node: str


@dataclass
class _Printer:
    """One printing thread's state: the tree levels and the search whose channels follow."""

    stack: list[_Level] = field(default_factory=list)
    last_pci: str = ""  # the far node of the last PCI link: deeper lines are its links
    search: tuple[GraphPattern, int] | None = None
    channels: list[tuple[str, ...]] = field(default_factory=list)


def looks_like_nccl_graph(text: str) -> bool:
    """Cheap sniff: NCCL's ``=== System :`` banner, ``+ KIND[bw] - NODE`` lines beside a node line, or a path
    line (``GPU/4000 :GPU/5000 (1/360.0/NVL) ...``)."""
    head = text[:200_000]
    if _SYSTEM.search(head):
        return True
    links = roots = 0
    for line in head.splitlines():
        if "/" not in line:
            continue
        message = _message(line)[1].strip()
        links += bool(_LINK.match(message))
        roots += bool(_ROOT.match(message))
        if links >= 2 and roots:
            return True
        if (m := _PATHS.match(message)) and len(_PATH_ITEM.findall(m["body"])) >= 2:
            return True
    return False


def parse_nccl_graph(text: str, name: str = "") -> NcclGraphPrint:
    """Every node, link, path and searched graph the print shows; InputError when it shows none."""
    reader = _Reader()
    for number, raw in enumerate(text.splitlines(), 1):
        if any(word in raw for word in _GRAPH_WORDS):
            reader.read(number, raw)
    reader.flush_all()
    if not (reader.nodes or reader.links or reader.paths or reader.searches):
        where = f"{name}: " if name else ""
        raise InputError(f"{where}no line of NCCL's topology print (NCCL_DEBUG_SUBSYS=GRAPH) in the input")
    return NcclGraphPrint(
        max_gbps=reader.max_gbps,
        total_gbps=reader.total_gbps,
        nodes=tuple(reader.nodes.values()),
        links=tuple(reader.links.values()),
        paths=tuple(reader.paths.values()),
        searches=tuple(reader.searches),
        lines_read=reader.lines_read,
    )


def _message(raw: str) -> tuple[str, str]:
    """(prefix, message) of a line: the text after ``NCCL INFO`` (its indentation kept), else the line."""
    m = _MARKER.search(raw)
    if m:
        return raw[: m.start()], raw[m.end() :].rstrip()
    where = _PREFIX.search(raw)
    if where and raw[where.end() :].startswith(" "):
        return raw[: where.end()], raw[where.end() + 1 :].rstrip()
    return "", raw.rstrip()


class _Reader:
    def __init__(self) -> None:
        self.max_gbps: Probed[float] = Unsupported(SOURCE, "no '=== System' line in the paste")
        self.total_gbps: Probed[float] = Unsupported(SOURCE, "no '=== System' line in the paste")
        self.nodes: dict[tuple[object, str], GraphNode] = {}
        self.links: dict[tuple[object, ...], GraphLink] = {}
        self.paths: dict[tuple[object, ...], GraphPath] = {}
        self.searches: list[GraphSearch] = []
        self.printers: dict[str, _Printer] = {}
        self.hosts: dict[str, Probed[str]] = {}
        self.lines_read = 0

    def read(self, number: int, raw: str) -> None:
        prefix, message = _message(raw)
        where = _PREFIX.search(prefix)
        host: Probed[str] = where.group("host") if where else NOT_LOGGED
        key = f"{where.group('host')}:{where.group('pid')}:{where.group('tid')}" if where else ""
        printer = self.printers.setdefault(key, _Printer())
        self.hosts[key] = host
        evidence = LogLine(number, raw.strip()[:MAX_EVIDENCE_CHARS])
        text = message.strip()
        column = len(message) - len(message.lstrip())
        if m := _SYSTEM.search(text):
            self.max_gbps, self.total_gbps = float(m["max"]), float(m["total"])
            printer.stack, printer.last_pci = [], ""
        elif m := _LINK.match(text):
            self.link(printer, host, column, m, evidence)
        elif m := _ROOT.match(text):
            self.node(host, m["id"], m["detail"] or "", evidence)
            printer.stack, printer.last_pci = [_Level(None, m["id"])], ""
        elif m := _PATTERN.search(text):
            self.flush(key, printer)
            pattern = GraphPattern(int(m["p"]), int(m["n"]), float(m["bi"]), float(m["be"]), m["ti"], m["te"], evidence)
            printer.search, printer.channels = (pattern, int(m["cross"])), []
        elif (m := _CHANNEL.match(text)) and printer.search is not None:
            printer.channels.append(tuple(m["nodes"].split()))
        elif m := _PATHS.match(text):
            for item in _PATH_ITEM.finditer(m["body"]):
                path = GraphPath(
                    host, m["src"], item["dst"], int(item["hops"]), float(item["gbps"]), item["type"], evidence
                )
                self.paths.setdefault((host, path.src, path.dst), path)
        else:
            return
        self.lines_read += 1

    def node(self, host: Probed[str], node_id: str, detail: str, evidence: LogLine) -> None:
        kind = node_id.split("/", 1)[0]
        rank: Probed[int] = Unsupported(SOURCE, "not a GPU")
        if kind == "GPU":
            first = detail.split()[0] if detail.split() else ""
            rank = int(first) if first.isdecimal() and len(first) <= MAX_RANK_DIGITS else NOT_LOGGED
        self.nodes.setdefault((host, node_id), GraphNode(host, node_id, kind, detail, rank, evidence))

    def link(self, printer: _Printer, host: Probed[str], column: int, m: re.Match[str], evidence: LogLine) -> None:
        """A ``+`` line: its parent is the node whose links stand at its column (a deeper column: the far node
        of the PCI link just read)."""
        stack = printer.stack
        if not stack:
            return  # a link line whose tree start was not pasted: no node to hang it under
        while len(stack) > 1 and stack[-1].column is not None and column < stack[-1].column:
            stack.pop()
        top = stack[-1]
        if top.column is None:
            top.column = column
        elif column > top.column and printer.last_pci:
            stack.append(_Level(column, printer.last_pci))
        parent = stack[-1].node
        kind, target, detail = m["kind"], m["id"], m["detail"] or ""
        self.node(host, target, detail if kind == "PCI" else "", evidence)
        link = GraphLink(host, parent, kind, float(m["gbps"]), target, detail if kind != "PCI" else "", evidence)
        self.links.setdefault((host, parent, kind, link.gbps, target), link)
        printer.last_pci = target if kind == "PCI" else ""

    def flush(self, key: str, printer: _Printer) -> None:
        if printer.search is not None:
            pattern, cross = printer.search
            self.searches.append(GraphSearch(self.hosts.get(key, NOT_LOGGED), pattern, cross, tuple(printer.channels)))
        printer.search, printer.channels = None, []

    def flush_all(self) -> None:
        for key, printer in self.printers.items():
            self.flush(key, printer)
