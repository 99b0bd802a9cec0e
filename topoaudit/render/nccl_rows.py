"""NCCL's own view (an ``NCCL_DEBUG=INFO`` log) in the row model: its facts, the transport matrix, and each
rank pair beside the topology's link.

Loaded only for a report with an NCCL log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoaudit.model.host_checks import decode_health_mask
from topoaudit.model.nccl import PATTERN_NAMES
from topoaudit.model.values import Unsupported
from topoaudit.render.cells import FULL_MATRIX_MAX, Cell, Table, absent_text, code_cell, register_views

if TYPE_CHECKING:
    from topoaudit.model.report import Report

TRANSPORT_TONE = {"P2P": "nvlink", "NET+GDR": "pcie-switch", "SHM": "host-bridge", "NET": "sys", "OTHER": "unknown"}
"""Transport -> tone, coloured like the link matrix: peer access green, GPUDirect RDMA blue, host memory
orange, the network without GPUDirect red."""


TRANSPORT_LEGEND = (
    ("P2P: peer access (NVLink or PCIe)", "nvlink"),
    ("NET+GDR: network, GPUDirect RDMA", "pcie-switch"),
    ("SHM: through host memory", "host-bridge"),
    ("NET: network through host memory", "sys"),
)


PAIRS_SHOWN = 64


@dataclass(frozen=True)
class NcclSection:
    """NCCL's view: what it is, the transport matrix (rank x rank), the pairs beside the topology's link."""

    facts: Table
    matrix: Table | None  # None above FULL_MATRIX_MAX ranks (the pairs table and report.json keep them)
    pairs: Table | None
    legend: tuple[tuple[str, str], ...]


def _transport_label(kinds: set[str], gdr: bool) -> str:
    """One word for the transports between two ranks, worst first when they differ."""
    order = ("NET", "NET+GDR", "SHM", "P2P", "OTHER")
    labels = {("NET+GDR" if k == "NET" and gdr else k) for k in kinds}
    return "/".join(sorted(labels, key=order.index)) if labels else ""


def nccl_section(report: Report) -> NcclSection | None:
    """NCCL's view as tables, or None when the report has no NCCL log."""
    view = report.nccl
    if isinstance(view, Unsupported):
        return None
    by_pair: dict[tuple[int, int], list[Any]] = {}
    for t in view.transports:
        by_pair.setdefault((min(t.src_rank, t.dst_rank), max(t.src_rank, t.dst_rank)), []).append(t)
    ranks = sorted({r for pair in by_pair for r in pair})
    matrix = None
    if by_pair and len(ranks) <= FULL_MATRIX_MAX:
        rows = []
        for a in ranks:
            cells = [Cell(f"rank {a}", "strong")]
            for b in ranks:
                if a == b:
                    cells.append(Cell("X", "self"))
                    continue
                found = by_pair.get((min(a, b), max(a, b)), [])
                label = _transport_label({t.kind for t in found}, all(t.gdr for t in found if t.kind == "NET"))
                tone = TRANSPORT_TONE.get(label.split("/")[0], "unknown") if label else ""
                hint = "; ".join(sorted({t.via for t in found}))
                cells.append(Cell(label or "-", tone, hint))
            rows.append(tuple(cells))
        matrix = Table(
            "NCCL transport matrix",
            ("", *(f"rank {r}" for r in ranks)),
            tuple(rows),
            notes=("Each cell is the transport NCCL set up between two ranks, in either direction (- : none logged).",),
            anchor="nccl-matrix",
        )
    return NcclSection(_nccl_facts(report, view), matrix, _nccl_pairs(report, view, by_pair), TRANSPORT_LEGEND)


def _rank_place(view: Any, rank: int, report: Report) -> tuple[str, int | None]:
    from topoaudit.model.nccl import rank_gpu

    r = view.rank(rank)
    gpu = rank_gpu(r, report.machine) if report.machine.gpus else None
    host = r.host if r is not None and isinstance(r.host, str) else ""
    device = ""
    if r is not None:
        index = r.nvml_device if isinstance(r.nvml_device, int) else r.cuda_device
        device = f"GPU{index}" if isinstance(index, int) else r.pci_bus_id if isinstance(r.pci_bus_id, str) else ""
    where = ":".join(x for x in (host, device) if x) or "not placed by the log"
    return where, gpu


def _nccl_pairs(report: Report, view: Any, by_pair: dict[tuple[int, int], list[Any]]) -> Table | None:
    if not by_pair:
        return None
    rows = []
    for (a, b), found in sorted(by_pair.items())[:PAIRS_SHOWN]:
        where_a, gpu_a = _rank_place(view, a, report)
        where_b, gpu_b = _rank_place(view, b, report)
        link = report.machine.link(f"GPU{gpu_a}", f"GPU{gpu_b}") if gpu_a is not None and gpu_b is not None else None
        label = _transport_label({t.kind for t in found}, all(t.gdr for t in found if t.kind == "NET"))
        vias = ", ".join(
            f"{t.via}{f' [{t.direction}]' if t.direction else ''} ({t.src_rank}->{t.dst_rank}, {len(t.channels)} ch)"
            for t in found
        )
        rows.append(
            (
                Cell(f"{a}-{b}", "strong"),
                Cell(f"{where_a} / {where_b}"),
                Cell(label, TRANSPORT_TONE.get(label.split("/")[0], "unknown")),
                Cell(vias),
                code_cell(link.code) if link is not None else Cell("not known from this source", "absent"),
                Cell(f"line {min(t.first.line for t in found)}"),
            )
        )
    notes: tuple[str, ...] = ()
    if len(by_pair) > PAIRS_SHOWN:
        notes = (f"{len(by_pair) - PAIRS_SHOWN} more rank pairs in report.json (nccl.transports).",)
    return Table(
        "NCCL transports per rank pair",
        ("Ranks", "Where (host:GPU)", "Transport", "As logged", "Topology link", "Evidence"),
        tuple(rows),
        notes=notes,
        anchor="nccl-pairs",
    )


def _nccl_facts(report: Report, view: Any) -> Table:
    from topoaudit.model.nccl_bandwidth import explain

    rows: list[tuple[Cell, Cell]] = []
    version = view.version if isinstance(view.version, str) else absent_text(view.version)
    rows.append((Cell("NCCL version"), Cell(version, "" if isinstance(view.version, str) else "absent")))
    meaning = {"device-index": "the device index", "pci-bus-id": "the PCI bus id"}
    if view.bracket_value in meaning:
        rows.append((Cell("R[x] in the log"), Cell(f"{meaning[view.bracket_value]} (from the {view.bracket_basis})")))
    hosts = ", ".join(view.hosts[:8]) + (f" and {len(view.hosts) - 8} more" if len(view.hosts) > 8 else "")
    rows.append((Cell("Hosts"), Cell(hosts or "not named (line prefixes stripped)", "" if hosts else "absent")))
    rows.append((Cell("Ranks placed"), Cell(str(len(view.ranks)))))
    from topoaudit.rules.nccl_rules import format_ranks, p2p_islands

    islands = p2p_islands(view)
    if len(islands) > 1 and len(islands[0]) > 1:
        shown = "; ".join(f"ranks {format_ranks(g)}" for g in islands[:8])
        rows.append((Cell("P2P islands"), Cell(f"{len(islands)}: {shown}", "warn")))
    for c in view.channel_counts:
        collnet = f"{c.collnet} collnet" if isinstance(c.collnet, int) else "collnet not printed"
        nvls = f"{c.nvls} NVLS" if isinstance(c.nvls, int) else "NVLS not printed"
        rows.append((Cell("Channels"), Cell(f"{c.coll} coll, {collnet}, {nvls}, {c.p2p} p2p (line {c.evidence.line})")))
    if view.nvls_support:
        parts = []
        for host in dict.fromkeys(s.host for s in view.nvls_support):
            where = f"{host}: " if isinstance(host, str) and len(view.hosts) > 1 else ""
            for available in (True, False):
                devs = sorted({s.device for s in view.nvls_support if s.host == host and s.available == available})
                if devs:
                    state = "available" if available else "not available"
                    parts.append(f"{where}{state} on dev {','.join(map(str, devs))}")
        off = any(not s.available for s in view.nvls_support)
        rows.append((Cell("NVLS multicast"), Cell("; ".join(parts), "warn" if off else "pass")))
    for g in view.gdr:
        host = f"{g.host}: " if isinstance(g.host, str) else ""
        gpu = f" for GPU {g.gpu_bus_id}" if isinstance(g.gpu_bus_id, str) else ""
        rows.append(
            (
                Cell("GPUDirect RDMA"),
                Cell(
                    f"{host}HCA {g.hca}{gpu}: {'enabled' if g.enabled else 'disabled'} (line {g.evidence.line})",
                    "pass" if g.enabled else "warn",
                ),
            )
        )
    for n in view.net_devices:
        host = f"{n.host}: " if isinstance(n.host, str) else ""
        rows.append((Cell(f"NET/{n.plugin}"), Cell(f"{host}{' '.join(n.devices) or 'no device found'}")))
    if view.networks:
        rows.append((Cell("Network used"), Cell(", ".join(view.networks))))
    for p in view.patterns[:8]:
        name = PATTERN_NAMES.get(p.pattern, f"pattern {p.pattern}")
        rows.append(
            (
                Cell(f"NCCL's {name} graph"),
                Cell(
                    f"{p.channels} channel(s) at {p.intra_gbps:g}/{p.inter_gbps:g} GB/s, path {p.intra_path} inside "
                    f"a node, {p.inter_path} between nodes (line {p.evidence.line})",
                    "warn" if p.intra_path in ("SYS", "PHB") else "",
                ),
            )
        )
    for fabric in view.mnnvl_fabric[:8]:
        where = f"{fabric.host}: " if isinstance(fabric.host, str) else ""
        bus = fabric.pci_bus_id if isinstance(fabric.pci_bus_id, str) else "GPU"
        rows.append(
            (
                Cell("MNNVL fabric"),
                Cell(
                    f"{where}{bus}: state {fabric.state}, cliqueId {fabric.clique_id:#x}, healthMask "
                    f"{fabric.health_mask:#x}, UUID {fabric.fabric_uuid} (line {fabric.evidence.line})",
                    "warn" if decode_health_mask(fabric.health_mask) else "",  # 0x80, 0xaa: fields "false"
                ),
            )
        )
    for link in view.system_links:
        how = explain(link.kind, link.gbps)
        rows.append(
            (
                Cell(f"NCCL's {link.kind} figure"),
                Cell(f"{link.gbps:g} GB/s{': ' + how if how else ''} ({link.count}x, first line {link.first.line})"),
            )
        )
    if view.p2p_disabled:
        rows.append((Cell("P2P disabled"), Cell(f"{len(view.p2p_disabled)} line(s)", "warn")))
    if view.warnings:
        rows.append(
            (Cell("WARN lines"), Cell(f"{len(view.warnings)} (first: line {view.warnings[0].evidence.line})", "warn"))
        )
    rows.append((Cell("Lines read"), Cell(f"{view.nccl_lines} NCCL lines of {view.lines_total}")))
    return Table("NCCL's view", ("Fact", "From the log"), tuple(rows), anchor="nccl")


register_views(NcclSection)
