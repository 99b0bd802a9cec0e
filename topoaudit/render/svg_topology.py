"""The topology as a picture: one self-contained SVG (presentation attributes only, no CSS, no script).

NVLink domains are drawn as clusters: a switched domain as GPUs hanging off an NVSwitch bar (a comb of
column buses when it has several rows, so 72 GPUs stay readable), a point-to-point mesh or bridged pair as
GPUs on a circle with one line per linked pair, its width growing with the bonded NVLink count. Clusters
flow left to right and wrap; neighbouring clusters are joined by a dashed line labelled with the best
path between them (SYS, NODE, PHB...). The host row below shows each NUMA node (socket) with its CPUs,
its GPUs and the NICs nearest to it. The drawing is an ElementTree, so every string from the machine is
escaped by the serialiser; characters XML cannot carry at all become U+FFFD.
"""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from topoaudit.model.machine import Gpu, Link, Machine, PathLevel
from topoaudit.model.report import Report
from topoaudit.model.topology import Domain
from topoaudit.model.values import Failed, Unsupported
from topoaudit.render.common import cpu_list, xml_text

# a GPU a saved report's domains name but its GPU list does not (an edited or damaged report): drawn, marked
NOT_LISTED = Unsupported("report", "a domain names this GPU; the report's GPU list does not")

GPU_W, GPU_H = 92, 44
PAD = 16  # inside a cluster
HEAD = 28  # cluster title band
GAP_X, GAP_Y = 60, 36  # between clusters (room for the connector label)
MAX_ROW_W = 1100
BAR_H = 14
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"

NVLINK_COLOR = "#2e7d32"
DEGRADED_COLOR = "#e65100"
LEVEL_COLOR = {
    PathLevel.PIX: "#1565c0",
    PathLevel.PXB: "#1565c0",
    PathLevel.PHB: "#ef6c00",
    PathLevel.NODE: "#ef6c00",
    PathLevel.SYS: "#c62828",
    PathLevel.UNKNOWN: "#6a1b9a",
}
NUMA_FILL = ("#e3f2fd", "#fff3e0", "#f3e5f5", "#e0f2f1", "#fce4ec", "#f9fbe7", "#ede7f6", "#efebe9")
NUMA_STROKE = ("#1565c0", "#ef6c00", "#6a1b9a", "#00695c", "#ad1457", "#827717", "#4527a0", "#4e342e")


def _attr(value: object) -> str:
    return f"{value:.1f}" if isinstance(value, float) else xml_text(value)


def sub(parent: ET.Element, tag: str, text: object = None, **attrs: object) -> ET.Element:
    """A child element; attribute names use ``_`` for ``-`` (``font_size`` -> ``font-size``, ``class_``)."""
    el = ET.SubElement(parent, tag, {k.rstrip("_").replace("_", "-"): _attr(v) for k, v in attrs.items()})
    if text is not None:
        el.text = xml_text(text)
    return el


def svg_root(width: float, height: float, cls: str, title: str, view_box: str = "") -> ET.Element:
    """An ``<svg>`` element with its accessible title."""
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "class": cls,
            "role": "img",
            "viewBox": view_box or f"0 0 {width:.0f} {height:.0f}",
            "width": f"{width:.0f}",
            "height": f"{height:.0f}",
            "font-family": SANS,
        },
    )
    sub(root, "title", title)
    return root


def to_text(root: ET.Element) -> str:
    """The drawing as SVG text; ElementTree escapes every text node and attribute value."""
    return ET.tostring(root, encoding="unicode")


def link_width(nvlinks: int) -> float:
    """Stroke width of a bonded NVLink set: grows with the link count (NV1 thin, NV18 thick)."""
    return round(1.0 + 1.6 * math.sqrt(max(nvlinks, 0)), 1)


@dataclass
class _Cluster:
    domain: Domain
    kind: str  # "loners" | "switch" | "ring"
    w: float = 0.0
    h: float = 0.0
    x: float = 0.0
    y: float = 0.0
    pos: dict[int, tuple[float, float]] = field(default_factory=dict)  # GPU box top-left, cluster-relative


def _pairs(machine: Machine) -> dict[tuple[int, int], Link]:
    index = {g.label: g.index for g in machine.gpus}
    out: dict[tuple[int, int], Link] = {}
    for link in machine.links:
        i, j = index.get(link.a), index.get(link.b)
        if i is not None and j is not None and i != j:
            out[(min(i, j), max(i, j))] = link
    return out


def _layout_cluster(domain: Domain) -> _Cluster:
    n = domain.size
    if domain.build == "single":  # the GPUs without NVLink, in one row per 8, neighbours joined by their path
        cols = min(n, 8)
        gap = 46
        c = _Cluster(domain, "loners", 2 * PAD + cols * GPU_W + (cols - 1) * gap, 0.0)
        rows = math.ceil(n / cols)
        c.h = HEAD + 6 + rows * (GPU_H + 24) - 24 + PAD
        for k, gpu in enumerate(domain.gpus):
            r, col = divmod(k, cols)
            c.pos[gpu] = (PAD + col * (GPU_W + gap), HEAD + 6 + r * (GPU_H + 24))
        return c
    if domain.build == "nvswitch" or (domain.all_pairs and n > 8):
        cols = n if n <= 8 else 8 if n <= 16 else 9
        rows = math.ceil(n / cols)
        comb = 18 if rows > 1 else 0  # room for the column bus left of each column
        cell_w = GPU_W + 14 + comb
        top = HEAD + BAR_H + 26
        c = _Cluster(domain, "switch", 2 * PAD + cols * cell_w - 14, top + rows * (GPU_H + 16) - 16 + PAD)
        for k, gpu in enumerate(domain.gpus):
            r, col = divmod(k, cols)
            c.pos[gpu] = (PAD + col * cell_w + comb, top + r * (GPU_H + 16))
        return c
    radius = max(118.0, n * (GPU_W + 70) / (2 * math.pi)) if n > 2 else (GPU_W + 70) / 2
    start = -math.pi / 2 - (math.pi / n if n in (4, 8) else 0.0)
    if n == 2:
        start = math.pi
    c = _Cluster(domain, "ring", 2 * radius + GPU_W + 2 * PAD, HEAD + 2 * radius + GPU_H + PAD + 6)
    cx, cy = PAD + radius + GPU_W / 2, HEAD + 6 + radius + GPU_H / 2
    if n == 2:
        cy = HEAD + GPU_H / 2 + 4
        c.h = HEAD + GPU_H + PAD + 4
    for k, gpu in enumerate(domain.gpus):
        angle = start + 2 * math.pi * k / n
        c.pos[gpu] = (cx + radius * math.cos(angle) - GPU_W / 2, cy + radius * math.sin(angle) - GPU_H / 2)
    return c


def _flow(clusters: list[_Cluster]) -> tuple[list[list[_Cluster]], float, float]:
    """Place clusters left to right in rows no wider than MAX_ROW_W, balanced (4 pairs: 2 + 2, not 3 + 1)."""
    greedy = _rows(clusters, len(clusters))
    per_row = math.ceil(len(clusters) / len(greedy)) if greedy else 0
    rows = _rows(clusters, per_row) if per_row else []
    if any(sum(c.w for c in row) + GAP_X * (len(row) - 1) > MAX_ROW_W for row in rows if len(row) > 1):
        rows = greedy
    y = width = 0.0
    for row in rows:
        x = 0.0
        for c in row:
            c.x, c.y = x, y
            x += c.w + GAP_X
        width = max(width, x - GAP_X)
        y += max(c.h for c in row) + GAP_Y
    return rows, width, y - GAP_Y if rows else 0.0


def _rows(clusters: list[_Cluster], per_row: int) -> list[list[_Cluster]]:
    """Greedy rows of at most ``per_row`` clusters that fit MAX_ROW_W (a wide cluster gets a row alone)."""
    rows: list[list[_Cluster]] = []
    x = 0.0
    for c in clusters:
        if not rows or len(rows[-1]) >= per_row or x + c.w > MAX_ROW_W:
            rows.append([])
            x = 0.0
        rows[-1].append(c)
        x += c.w + GAP_X
    return rows


def _domain_title(d: Domain) -> str:
    if d.build == "single":
        return f"No NVLink · {d.size} GPU" + ("s" if d.size != 1 else "") + " (PCIe / SMP paths only)"
    links = f"NV{d.min_links}" if d.min_links == d.max_links else f"NV{d.min_links}-{d.max_links}"
    build = {
        "nvswitch": "NVSwitch",
        "mesh": "full mesh",
        "partial-mesh": "partial mesh",
        "bridged-pair": "bridged pair",
        "single": "no NVLink",
    }.get(d.build, d.build)
    size = "" if d.size == 2 else f" · {d.size} GPUs"
    return f"Domain {d.id} · {build}{size} · {links}"


def _numa_of(gpu: Gpu) -> int | None:
    return gpu.numa_nodes[0] if isinstance(gpu.numa_nodes, tuple) and gpu.numa_nodes else None


def _short_bus(bus: object) -> str:
    if not isinstance(bus, str):
        return ""
    parts = bus.split(":")
    return ":".join(parts[-2:]) if len(parts) >= 2 else bus


def _gpu_box(parent: ET.Element, gpu: Gpu, x: float, y: float) -> None:
    numa = _numa_of(gpu)
    fill = NUMA_FILL[numa % len(NUMA_FILL)] if numa is not None else "#ffffff"
    stroke = NUMA_STROKE[numa % len(NUMA_STROKE)] if numa is not None else "#455a64"
    lost, listed = isinstance(gpu.status, Failed), gpu.status is not NOT_LISTED
    if not listed:
        fill, stroke = "#ffffff", "#9e9e9e"
    tip = gpu.label + (f" · {gpu.name}" if isinstance(gpu.name, str) else "")
    tip += f" · {gpu.pci_bus_id}" if isinstance(gpu.pci_bus_id, str) else ""
    tip += f" · NUMA {numa}" if numa is not None else ""
    tip += " · LOST" if lost else "" if listed else " · not among the report's GPUs"
    g = sub(parent, "g", class_="gpu", data_gpu=gpu.index)
    sub(g, "title", tip)
    dash = {"stroke_dasharray": "4 3"} if lost else {}
    sub(g, "rect", x=x, y=y, width=GPU_W, height=GPU_H, rx=6, fill=fill, stroke="#c62828" if lost else stroke,
        stroke_width=1.6, **dash)  # fmt: skip
    sub(g, "text", gpu.label, x=x + GPU_W / 2, y=y + 18, text_anchor="middle", font_size=14, font_weight="bold",
        fill="#212121")  # fmt: skip
    caption = "lost" if lost else _short_bus(gpu.pci_bus_id) or (f"NUMA {numa}" if numa is not None else "")
    caption = caption if listed else "not listed"
    if caption:
        sub(g, "text", caption, x=x + GPU_W / 2, y=y + 35, text_anchor="middle", font_size=11, fill="#455a64")


def _draw_cluster(
    parent: ET.Element, c: _Cluster, machine: Machine, pairs: dict[tuple[int, int], Link], most: dict[int, int]
) -> None:
    d = c.domain
    ox, oy = c.x, c.y
    nv = d.build != "single"
    g = sub(parent, "g", class_="domain", data_domain=d.id)
    sub(g, "rect", x=ox, y=oy, width=c.w, height=c.h, rx=12, fill="#f1f8e9" if nv else "#fafafa",
        stroke=NVLINK_COLOR if nv else "#9e9e9e", stroke_width=1.5)  # fmt: skip
    sub(g, "text", _domain_title(d), x=ox + 12, y=oy + 19, font_size=13, font_weight="bold",
        fill="#1b5e20" if nv else "#616161")  # fmt: skip
    gpus: dict[int, Gpu] = {}
    for gpu in machine.gpus:  # a saved report may repeat an index: the first GPU listed is drawn
        gpus.setdefault(gpu.index, gpu)
    if c.kind == "switch":
        _draw_switch(g, c, most)
    elif c.kind == "ring":
        _draw_ring(g, c, pairs)
    else:
        _draw_loners(g, c, pairs)
    for index in d.gpus:
        px, py = c.pos[index]
        _gpu_box(g, gpus.get(index) or Gpu(index=index, status=NOT_LISTED), ox + px, oy + py)


def _draw_switch(parent: ET.Element, c: _Cluster, most: dict[int, int]) -> None:
    d = c.domain
    ox, oy = c.x, c.y
    bar_y = oy + HEAD + 4
    sub(parent, "rect", x=ox + PAD, y=bar_y, width=c.w - 2 * PAD, height=BAR_H, rx=4, fill=NVLINK_COLOR)
    sub(parent, "text", "NVSwitch fabric", x=ox + c.w / 2, y=bar_y + 11, text_anchor="middle", font_size=10.5,
        font_weight="bold", fill="#ffffff")  # fmt: skip
    per_gpu = {g: most.get(g, 0) for g in d.gpus}
    best = max(per_gpu.values(), default=0)
    multi_row = len({round(y) for _, y in c.pos.values()}) > 1
    buses: dict[float, float] = {}
    for g in d.gpus:
        px, py = c.pos[g]
        n = per_gpu[g]
        color = DEGRADED_COLOR if n < best else NVLINK_COLOR
        width = link_width(n) if n else 1.0
        if multi_row:
            bus_x = ox + px - 10
            buses[bus_x] = max(buses.get(bus_x, 0.0), oy + py + GPU_H / 2)
            sub(parent, "line", x1=bus_x, y1=oy + py + GPU_H / 2, x2=ox + px, y2=oy + py + GPU_H / 2, stroke=color,
                stroke_width=min(width, 8))  # fmt: skip
        else:
            x = ox + px + GPU_W / 2
            sub(parent, "line", x1=x, y1=bar_y + BAR_H, x2=x, y2=oy + py, stroke=color, stroke_width=width)
            if n:
                sub(parent, "text", f"NV{n}", x=x + width / 2 + 3, y=(bar_y + BAR_H + oy + py) / 2 + 4, font_size=10,
                    fill=color)  # fmt: skip
    for bus_x, bottom in buses.items():
        sub(parent, "line", x1=bus_x, y1=bar_y + BAR_H, x2=bus_x, y2=bottom, stroke=NVLINK_COLOR, stroke_width=4)


def _most_nvlinks(pairs: dict[tuple[int, int], Link]) -> dict[int, int]:
    """The largest bonded NVLink count of each GPU, over all its pairs."""
    most: dict[int, int] = {}
    for (i, j), lk in pairs.items():
        if lk.nvlinks:
            most[i] = max(most.get(i, 0), lk.nvlinks)
            most[j] = max(most.get(j, 0), lk.nvlinks)
    return most


def _draw_ring(parent: ET.Element, c: _Cluster, pairs: dict[tuple[int, int], Link]) -> None:
    d = c.domain
    ox, oy = c.x, c.y
    members = set(d.gpus)
    edges = [(i, j, lk) for (i, j), lk in sorted(pairs.items()) if i in members and j in members and lk.nvlinks > 0]
    labels = ET.Element("g")
    for i, j, lk in sorted(edges, key=lambda e: -e[2].nvlinks):
        (ax, ay), (bx, by) = c.pos[i], c.pos[j]
        x1, y1 = ox + ax + GPU_W / 2, oy + ay + GPU_H / 2
        x2, y2 = ox + bx + GPU_W / 2, oy + by + GPU_H / 2
        color = DEGRADED_COLOR if lk.nvlinks < d.max_links and d.build != "bridged-pair" else NVLINK_COLOR
        if d.build == "partial-mesh":
            color = NVLINK_COLOR
        line = sub(parent, "line", class_="nvlink", x1=x1, y1=y1, x2=x2, y2=y2, stroke=color,
                   stroke_width=link_width(lk.nvlinks), stroke_linecap="round")  # fmt: skip
        sub(line, "title", f"GPU{i} - GPU{j}: {lk.code}")
        t = 0.5 if math.hypot(x2 - x1, y2 - y1) < 240 else 0.3  # chords through the centre: off-centre labels
        lx, ly = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t
        sub(labels, "rect", x=lx - 15, y=ly - 8, width=30, height=15, rx=3, fill="#ffffff", fill_opacity=0.9)
        sub(labels, "text", lk.code, x=lx, y=ly + 4, text_anchor="middle", font_size=10.5, fill=color)
    parent.extend(list(labels))


def _draw_loners(parent: ET.Element, c: _Cluster, pairs: dict[tuple[int, int], Link]) -> None:
    """Dashed connectors between neighbouring lone GPUs of a row, labelled with their path (PHB, SYS...)."""
    gpus = c.domain.gpus
    for a, b in itertools.pairwise(gpus):
        (ax, ay), (bx, by) = c.pos[a], c.pos[b]
        lk = pairs.get((min(a, b), max(a, b)))
        if lk is None or abs(ay - by) > 1:
            continue
        _connector(parent, c.x + ax + GPU_W, c.x + bx, c.y + ay + GPU_H / 2, lk, f"GPU{a} - GPU{b}")


def _connector(parent: ET.Element, x1: float, x2: float, y: float, lk: Link, what: str) -> None:
    color = LEVEL_COLOR.get(lk.level, NVLINK_COLOR)
    g = sub(parent, "g", class_="between")
    sub(g, "title", f"{what}: {lk.code} ({lk.level.label})")
    sub(g, "line", x1=x1, y1=y, x2=x2, y2=y, stroke=color, stroke_width=2, stroke_dasharray="6 4")
    sub(g, "text", lk.code, x=(x1 + x2) / 2, y=y - 6, text_anchor="middle", font_size=11.5, font_weight="bold",
        fill=color)  # fmt: skip


def _between(a: Domain, b: Domain, pairs: dict[tuple[int, int], Link]) -> Link | None:
    """The best (fastest) path between any GPU of ``a`` and any of ``b``."""
    found = [pairs[(min(i, j), max(i, j))] for i in a.gpus for j in b.gpus if (min(i, j), max(i, j)) in pairs]
    return min(found, key=lambda lk: (int(lk.level), -lk.nvlinks), default=None)


def _nic_numa(nic_label: str, numa: object, machine: Machine) -> tuple[int | None, str]:
    """NUMA node of a NIC and a short 'nearest GPUs' text (from the link matrix)."""
    near: list[tuple[PathLevel, Gpu, str]] = []
    for g in machine.gpus:
        lk = machine.link(g.label, nic_label)
        if lk is not None:
            near.append((lk.level, g, lk.code))
    if not near:
        return (numa if isinstance(numa, int) else None), ""
    best = min(level for level, _, _ in near)
    closest = [g for level, g, _ in near if level == best]
    code = next(c for level, _, c in near if level == best)
    node = numa if isinstance(numa, int) else _numa_of(closest[0])
    names = ",".join(str(g.index) for g in closest)
    return node, f"{code} to GPU{names}" if len(closest) <= 4 else f"{code} to {len(closest)} GPUs"


def _host_row(parent: ET.Element, machine: Machine, top: float, width: float) -> float:
    """NUMA node boxes with CPUs, GPUs and nearest NICs; returns the height used."""
    by_numa: dict[int | None, list[Gpu]] = {}
    for g in machine.gpus:
        by_numa.setdefault(_numa_of(g), []).append(g)
    nics: dict[int | None, list[str]] = {}
    for nic in machine.nics:
        node, near = _nic_numa(nic.label, nic.numa_node, machine)
        name = nic.label + (f" ({nic.device})" if isinstance(nic.device, str) and nic.device != nic.label else "")
        nics.setdefault(node, []).append(name + (f" · {near}" if near else ""))
    nodes = sorted({*by_numa, *nics}, key=lambda k: (k is None, k if k is not None else 0))
    if not nodes:
        return 0.0
    box_w = max(230.0, min(360.0, (width - 16 * (len(nodes) - 1)) / len(nodes)))
    per_row = max(1, int((width + 16) // (box_w + 16)))
    y = top
    used = 0.0
    for start in range(0, len(nodes), per_row):
        row = nodes[start : start + per_row]
        row_h = max(44 + 15 * len(nics.get(n, [])) for n in row)
        for k, node in enumerate(row):
            x = k * (box_w + 16)
            gpus = by_numa.get(node, [])
            if node is None:
                title = "NUMA affinity not in this source"
                fill, stroke = "#fafafa", "#9e9e9e"
                cpus = ""
            else:
                title = f"NUMA node {node}"
                fill, stroke = NUMA_FILL[node % len(NUMA_FILL)], NUMA_STROKE[node % len(NUMA_STROKE)]
                cpus = _cpus(gpus[0].cpu_affinity) if gpus else ""
            box = sub(parent, "g", class_="numa", data_numa=node if node is not None else "unknown")
            sub(
                box,
                "rect",
                x=float(x),
                y=y,
                width=box_w,
                height=row_h,
                rx=8,
                fill=fill,
                stroke=stroke,
                stroke_width=1.3,
            )
            head = title + (f" · CPUs {cpus}" if cpus else "")
            sub(
                box,
                "text",
                _clip(head, box_w),
                x=x + 10.0,
                y=y + 17,
                font_size=12.5,
                font_weight="bold",
                fill="#212121",
            )
            gtext = "GPUs " + _ranges([gpu.index for gpu in gpus]) if gpus else "no GPUs"
            sub(box, "text", _clip(gtext, box_w), x=x + 10.0, y=y + 34, font_size=11.5, fill="#37474f")
            for m, text in enumerate(nics.get(node, [])):
                sub(box, "text", _clip(text, box_w), class_="nic", x=x + 10.0, y=y + 50 + 15 * m, font_size=11,
                    fill="#0d47a1")  # fmt: skip
        y += row_h + 12
        used += row_h + 12
    return used


def _clip(text: str, box_w: float) -> str:
    limit = max(12, int(box_w / 6.6))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cpus(cpus: object) -> str:
    return _ranges(list(cpus)) if isinstance(cpus, tuple) and cpus else ""


def _ranges(values: list[int]) -> str:
    return cpu_list(tuple(sorted(values)))


def _legend(parent: ET.Element, y: float) -> float:
    items: list[tuple[str, str, float, dict[str, str]]] = [
        ("NV2", NVLINK_COLOR, link_width(2), {}),
        ("NV6", NVLINK_COLOR, link_width(6), {}),
        ("NV18", NVLINK_COLOR, link_width(18), {}),
        ("fewer links than its peers", DEGRADED_COLOR, link_width(4), {}),
        ("PCIe / SMP path between domains", LEVEL_COLOR[PathLevel.SYS], 2.0, {"stroke_dasharray": "6 4"}),
    ]
    g = sub(parent, "g", class_="legend")
    sub(g, "text", "Line width = bonded NVLinks:", x=0, y=y + 12, font_size=11.5, fill="#455a64")
    x = 196.0
    for label, color, width, dash in items:
        sub(g, "line", x1=x, y1=y + 8, x2=x + 28, y2=y + 8, stroke=color, stroke_width=width, **dash)
        sub(g, "text", label, x=x + 34, y=y + 12, font_size=11.5, fill="#455a64")
        x += 44 + 6.6 * len(label)
    return x


def topology_svg(report: Report, *, standalone: bool = False) -> str:
    """The machine drawn as SVG; a bundled example is labelled DEMO. ``standalone`` adds the XML prolog
    for a ``.svg`` file."""
    machine = report.machine
    pairs = _pairs(machine)
    domains = report.domains or ()
    lone = tuple(sorted(g for d in domains if d.size == 1 for g in d.gpus))
    shown = [d for d in domains if d.size > 1]
    if lone:
        shown.append(Domain(id=-1, gpus=lone, all_pairs=False, min_links=0, max_links=0, build="single"))
    clusters = [_layout_cluster(d) for d in shown]
    for c in clusters:  # room for the title
        c.w = max(c.w, 7.6 * len(_domain_title(c.domain)) + 24)
    rows, width, height = _flow(clusters)
    width = max(width, 640.0)
    body = ET.Element("g")
    demo = 0.0
    if report.source.demo:
        demo = 30.0
        sub(body, "text", "DEMO: a bundled example box, not the machine this ran on", class_="demo", x=0, y=12,
            font_size=14, font_weight="bold", fill="#8e24aa")  # fmt: skip
    drawing = sub(body, "g", transform=f"translate(0 {demo:.0f})") if demo else body
    # connectors between neighbouring clusters of a row, labelled with the best path between them
    for row in rows:
        for a, b in itertools.pairwise(row):
            lk = _between(a.domain, b.domain, pairs)
            if lk is None:
                continue
            what = f"best path between domain {a.domain.id} and domain {b.domain.id}"
            _connector(drawing, a.x + a.w, b.x, max(a.y, b.y) + min(a.h, b.h) / 2, lk, what)
    most = _most_nvlinks(pairs)
    for c in clusters:
        _draw_cluster(drawing, c, machine, pairs, most)
    top = height + 22
    sub(drawing, "text", "Host: NUMA nodes (sockets), their CPUs, GPUs and nearest NICs", x=0, y=top, font_size=12,
        font_weight="bold", fill="#455a64")  # fmt: skip
    host_h = _host_row(drawing, machine, top + 8, width)
    legend_y = top + 8 + host_h + 6
    width = max(width, _legend(drawing, legend_y))
    total_h = legend_y + 26 + demo
    margin = 10
    label = f"Topology of {len(machine.gpus)} GPUs in {sum(1 for d in domains if d.size > 1)} NVLink domain(s)"
    if report.source.demo:
        label = "DEMO: " + label
    root = svg_root(
        width + 2 * margin,
        total_h + 2 * margin,
        "topology",
        label,
        f"{-margin} {-margin} {width + 2 * margin:.0f} {total_h + 2 * margin:.0f}",
    )
    root.extend(list(body))
    head = '<?xml version="1.0" encoding="UTF-8"?>\n' if standalone else ""
    return head + to_text(root) + "\n"
