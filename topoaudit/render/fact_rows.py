"""What captures and the probe add beyond the link matrix, in the row model: NCCL's topology dump, measured
copy bandwidth, P2P status per pair, host checks.

Loaded only for a report that has one of them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.model.machine import PathLevel, level_from_code
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Failed, Unsupported
from topoaudit.render.cells import (
    FULL_MATRIX_MAX,
    LEVEL_TONE,
    MAX_GPUS_LISTED,
    Cell,
    Table,
    absent_text,
    first_listed,
    left_out_note,
    plain,
    register_views,
    sentence,
    value_cell,
)
from topoaudit.rules.base import first_few
from topoaudit.rules.probe_rules import P2P_STATUS_MEANING

if TYPE_CHECKING:
    from topoaudit.model.host_checks import PcieHop
    from topoaudit.model.nccl_topo import BandwidthMatrix, NcclGpu, NcclTopology
    from topoaudit.model.report import Report


@dataclass(frozen=True)
class FactsSection:
    """Facts a capture or probe added beyond the link matrix: NCCL's dump, measured copy bandwidth, P2P
    status per pair, host checks. Present only when the report has them."""

    title: str
    anchor: str
    tables: tuple[Table, ...]
    legend: tuple[tuple[str, str], ...] = ()  # (label, tone) for the matrices' colours


def fact_sections(report: Report) -> tuple[FactsSection, ...]:
    """The sections of facts beyond the link matrix, in reading order; none for a pasted ``topo -m``."""
    sections: list[FactsSection | None] = []
    captures = report.captures
    if not isinstance(captures, Unsupported):
        if not isinstance(captures.nccl_topology, Unsupported):
            sections.append(_nccl_topology_section(captures.nccl_topology))
        if captures.bandwidth:
            sections.append(_bandwidth_section(report, captures.bandwidth))
    sections.append(_p2p_section(report))
    sections.append(_host_checks_section(report))
    return tuple(s for s in sections if s is not None)


_TARGET_WORDS = {"nvswitch": "NVSwitch", "gpu": "GPU", "cpu": "CPU", "hidden": "hidden target", "self": "itself"}


def _nvlink_targets(gpu: NcclGpu) -> str:
    """``18 to 4 NVSwitches`` / ``12 to 2 GPUs``: how a GPU's NVLinks fan out, as NCCL recorded them."""
    if not gpu.nvlinks:
        return "none"
    by_kind: dict[str, list[int]] = {}
    for link in gpu.nvlinks:
        by_kind.setdefault(link.target_kind, []).append(link.count)
    parts = []
    for kind, counts in by_kind.items():
        word = _TARGET_WORDS.get(kind, "unknown target")
        plural = "es" if word.endswith("ch") else "s"
        targets = f"{len(counts)} {word}{plural if len(counts) > 1 and kind != 'self' else ''}"
        parts.append(f"{sum(counts)} to {'a ' + word if len(counts) == 1 and kind == 'hidden' else targets}")
    return ", ".join(parts)


def _nccl_figure(kind: str, value: object, arithmetic: dict[str, None]) -> Cell:
    """NCCL's GB/s for a link; how NCCL's constants give the figure goes to ``arithmetic`` (a note)."""
    from topoaudit.model.nccl_bandwidth import explain

    if not isinstance(value, float):
        return value_cell(value)
    how = explain(kind, value)
    if how:
        arithmetic[f"{kind} {value:g} GB/s: {how}"] = None
    return Cell(f"{value:g} GB/s", hint=how)


def _nccl_topology_section(topo: NcclTopology) -> FactsSection:
    tables = []
    arithmetic: dict[str, None] = {}  # each distinct figure's arithmetic, once
    if topo.gpus:
        c2c = any(g.c2c_links for g in topo.gpus)
        header = (
            ("GPU", "Bus id", "NVLinks", "NCCL's NVLink GB/s", "NCCL's PCIe GB/s")
            + (("Grace C2C",) if c2c else ())
            + ("GPUDirect RDMA", "NUMA")
        )
        rows = []
        gpus, cut = first_listed(topo.gpus, "GPUs", MAX_GPUS_LISTED)
        for g in gpus:
            pcie = f"{g.link_speed} x{g.link_width}" if g.link_speed and g.link_width else "link not recorded"
            row = [
                Cell(f"GPU{g.index}", "strong"),
                Cell(g.pci_bus_id),
                Cell(_nvlink_targets(g)),
                _nccl_figure("NVL", g.nvlink_gbps, arithmetic) if g.nvlinks else Cell("no NVLink", "absent"),
                Cell(f"{_nccl_figure('PCI', g.pci_gbps, arithmetic).text} ({pcie})"),
            ]
            if c2c:
                c2c_cell = (
                    Cell(f"{g.c2c_links} links, {g.c2c_gbps:g} GB/s")
                    if g.c2c_links and isinstance(g.c2c_gbps, float)
                    else value_cell(g.c2c_gbps)
                )
                row.append(c2c_cell)
            row.append(_yes_no(g.gdr))
            row.append(Cell(str(g.numa_id)) if g.numa_id >= 0 else Cell("not placed by NCCL", "warn"))
            rows.append(tuple(row))
        tables.append(Table("GPUs as NCCL saw them", header, tuple(rows), left_out_note(cut), anchor="nccl-xml-gpus"))
    if topo.nets:
        nets, cut = first_listed(topo.nets, "NICs")
        rows = [
            (
                Cell(n.label, "strong"),
                value_cell(n.name),
                value_cell(n.pci_bus_id),
                value_cell(n.speed_megabits_per_s, " Mb/s"),
                _nccl_figure("NET", n.net_gbps, arithmetic),
                _yes_no(n.gdr),
            )
            for n in nets
        ]
        header = ("NIC", "Device", "Bus id", "Speed", "NCCL's GB/s", "GPUDirect RDMA")
        tables.append(Table("NICs as NCCL saw them", header, tuple(rows), left_out_note(cut), anchor="nccl-xml-nets"))
    if topo.graphs:
        graphs, cut = first_listed(topo.graphs, "graphs")
        rows = [
            (
                Cell(g.pattern, "strong"),
                Cell(str(g.channels)),
                value_cell(g.speed_intra_gbps, " GB/s"),
                value_cell(g.speed_inter_gbps, " GB/s"),
                Cell(g.type_intra, "warn" if g.type_intra in ("SYS", "PHB", "NODE") else ""),
                Cell(g.type_inter),
            )
            for g in graphs
        ]
        header = ("Pattern", "Channels", "Speed inside a node", "Speed between nodes", "Path inside", "Path between")
        title = "Channels NCCL built per pattern"
        tables.append(Table(title, header, tuple(rows), left_out_note(cut), anchor="nccl-xml-graphs"))
    what = "graph dump" if topo.kind == "graph" else "topology dump"
    source = f"From {topo.flavour.upper()}'s {what} (XML version {topo.version})"
    if arithmetic:
        notes: tuple[str, ...] = (f"{source}, in NCCL's own GB/s arithmetic:", *arithmetic)
    else:
        notes = (f"{source}.",)
    if not tables:
        tables.append(Table("NCCL's XML", ("",), (), notes=("The dump names no GPU, NIC or graph.",)))
    first = tables[0]
    tables[0] = dataclasses.replace(first, notes=first.notes + notes)
    return FactsSection(f"NCCL's {what}", "nccl-xml", tuple(tables))


def _yes_no(value: object) -> Cell:
    if isinstance(value, bool):
        return Cell("yes" if value else "no", "" if value else "warn")
    return value_cell(value)


def _bandwidth_section(report: Report, matrices: tuple[BandwidthMatrix, ...]) -> FactsSection:
    """Each measured matrix as a grid, a GPU pair's cell coloured like its link in the link matrix."""
    tables = []
    toned = False
    for m in matrices:
        rows = []
        labels, row_cut = first_listed(m.rows, "rows")
        columns, column_cut = first_listed(m.columns, "columns")
        for label, values in zip(labels, m.values_gbps, strict=False):
            cells = [Cell(label, "strong")]
            for k, column in enumerate(columns):
                if k >= len(values):  # a saved report whose row is short: the cell is missing, never an error
                    cells.append(Cell("-", "absent", "not in the report"))
                    continue
                value = values[k]
                link = report.machine.link(label, column) if label != column else None
                tone, hint = "", ""
                if link is not None:
                    tone, hint = LEVEL_TONE[level_from_code(link.code)[0]], f"{label}-{column}: {link.code}"
                    toned = True
                if isinstance(value, float):
                    cells.append(Cell(f"{value:.1f}", tone, hint))
                else:
                    cells.append(Cell("-", "self" if label == column else "absent", absent_text(value)))
            rows.append(tuple(cells))
        notes = left_out_note(" and ".join(cut for cut in (row_cut, column_cut) if cut))
        tables.append(Table(_matrix_title(m), ("", *columns), tuple(rows), notes, anchor="bandwidth", matrix=True))
    legend = tuple((lv.label, LEVEL_TONE[lv]) for lv in PathLevel if lv != PathLevel.SELF) if toned else ()
    note = "Measured copy bandwidth in GB/s (- : not measured);"
    note += (
        " a GPU pair's cell is coloured like its link in the link matrix." if toned else " no link matrix beside it."
    )
    tables[-1] = dataclasses.replace(tables[-1], notes=(*tables[-1].notes, note))
    return FactsSection("Measured copy bandwidth", "bandwidth", tuple(tables), legend)


def _matrix_title(m: BandwidthMatrix) -> str:
    """The tool, the test and the matrix's own line, the test left out where that line already names it."""
    if m.title.lower().startswith(m.test.lower()):
        return f"{m.tool}: {m.title}"
    return f"{m.tool} {m.test}: {m.title}"


_P2P_TONE = {"ok": "pass", "gpu-not-supported": "warn", "unknown": "absent"}


P2P_LEGEND = (("OK: peer access works", "pass"), ("GNS: not on this GPU model", "warn"), ("blocked", "fail"))


def _p2p_section(report: Report) -> FactsSection | None:
    """P2P status per GPU pair (read, and write where it differs), with what each status means and its fix."""
    pairs = report.machine.p2p
    if not pairs:
        return None
    from topoaudit.parse.p2p_matrix import P2P_CODES  # with the pairs only: a matrix without them never loads it

    short = {status: code for code, status in P2P_CODES.items()}
    status: dict[tuple[int, int], tuple[str, ...]] = {}
    for p in pairs:
        answers = tuple(dict.fromkeys(v for v in (p.read, p.write) if isinstance(v, str)))
        status[(p.a, p.b)] = status[(p.b, p.a)] = answers
    gpus = sorted({i for p in pairs for i in (p.a, p.b)})
    if len(gpus) > FULL_MATRIX_MAX:
        return _p2p_summary(status, short)
    rows = []
    seen: dict[str, None] = {}
    for a in gpus:
        cells = [Cell(f"GPU{a}", "strong")]
        for b in gpus:
            if a == b:
                cells.append(Cell("X", "self"))
                continue
            answers = status.get((a, b), ())
            if not answers:
                cells.append(Cell("?", "absent", "not read for this pair"))
                continue
            seen.update(dict.fromkeys(answers))
            worst = next((s for s in answers if s != "ok"), "ok")
            text = "/".join(short.get(s, s) for s in answers)
            meaning = P2P_STATUS_MEANING.get(worst, (worst, ""))[0]
            cells.append(Cell(text, _P2P_TONE.get(worst, "fail"), meaning))
        rows.append(tuple(cells))
    differ = any(len(answers) > 1 for answers in status.values())
    notes = ["A cell reads 'read/write' where the two capabilities differ."] if differ else []
    for s in seen:
        if s in P2P_STATUS_MEANING:
            meaning, remedy = P2P_STATUS_MEANING[s]
            notes.append(f"{sentence(meaning)} {remedy}")
        elif s != "ok":
            notes.append(f"{s}: a status this version does not explain.")
    matrix = Table(
        "P2P status per GPU pair", ("", *(f"GPU{g}" for g in gpus)), tuple(rows), tuple(notes), "p2p", matrix=True
    )
    return FactsSection("Peer-to-peer status", "p2p", (matrix,), P2P_LEGEND)


def _p2p_summary(status: dict[tuple[int, int], tuple[str, ...]], short: dict[str, str]) -> FactsSection:
    """Above FULL_MATRIX_MAX GPUs: how many pairs have each status, the first pairs named (report.json lists all)."""
    by_status: dict[str, list[str]] = {}
    for (a, b), answers in sorted(status.items()):
        if a < b:
            label = "/".join(short.get(s, s) for s in answers) or "not read"
            by_status.setdefault(label, []).append(f"GPU{a}-GPU{b}")
    rows = tuple(
        (Cell(label, "pass" if label == "OK" else "fail"), Cell(str(len(found))), Cell(first_few(found, 6)))
        for label, found in by_status.items()
    )
    summary = Table(
        "P2P status per GPU pair (summary)", ("Status", "Pairs", "Which"), rows,
        ("Too many GPUs for a matrix: report.json (p2p) lists every pair.",), "p2p",
    )  # fmt: skip
    return FactsSection("Peer-to-peer status", "p2p", (summary,))


def _rate(hop: PcieHop) -> float:
    speed, width = hop.speed_current_gts, hop.width_current
    return speed * width if isinstance(speed, float) and isinstance(width, int) else float("inf")


def _hop_text(hop: PcieHop) -> str:
    now = f"{plain(hop.speed_current_gts)} GT/s x{plain(hop.width_current)}"
    most = f"{plain(hop.speed_max_gts)} GT/s x{plain(hop.width_max)}"
    return f"{hop.device} under {hop.upstream}: {now} of {most}"


def _below_max(hop: PcieHop) -> bool:
    pairs = ((hop.speed_current_gts, hop.speed_max_gts), (hop.width_current, hop.width_max))
    return any(isinstance(a, (int, float)) and isinstance(b, (int, float)) and a < b for a, b in pairs)


def _verdict_cell(verdict: object, evidence: object, bad: str) -> Cell:
    """A host check's one-word verdict with its evidence, warned when it is ``bad``; an absent one says why."""
    if not isinstance(verdict, str):
        return value_cell(verdict)
    because = f": {evidence}" if isinstance(evidence, str) else ""
    return Cell(verdict + because, "warn" if verdict == bad else "")


def _host_checks_section(report: Report) -> FactsSection | None:
    """One line per host check the probe read (or why it could not), for a ticket reader."""
    checks = report.machine.host.checks
    if isinstance(checks, (Unsupported, Failed)):
        return None
    rows: list[tuple[Cell, Cell]] = [
        (Cell("Virtualisation"), _verdict_cell(checks.virtualization, checks.virtualization_evidence, "vm")),
        (Cell("GPUDirect RDMA"), _verdict_cell(checks.gpudirect_rdma, checks.gpudirect_rdma_evidence, "none")),
    ]
    ports = checks.rdma_ports
    cut = ""
    if isinstance(ports, tuple):
        if not ports:
            rows.append((Cell("RDMA ports"), Cell("none found")))
        listed, cut = first_listed(ports, "RDMA ports")
        for port in listed:
            state = f"{plain(port.state)} {plain(port.phys_state)}"
            rate = f", {port.rate_gbps:g} Gb/s" if isinstance(port.rate_gbps, float) else ""
            layer = f" {port.link_layer}" if isinstance(port.link_layer, str) else ""
            downed = (
                f", link downed {port.link_downed}x" if isinstance(port.link_downed, int) and port.link_downed else ""
            )
            tone = "" if port.state == "ACTIVE" else "warn"
            rows.append((Cell(f"RDMA {port.device} port {port.port}"), Cell(f"{state}{rate}{layer}{downed}", tone)))
    else:
        rows.append((Cell("RDMA ports"), value_cell(ports)))
    hops = checks.pcie_hops
    if isinstance(hops, tuple) and hops:
        gpus = {g.pci_bus_id for g in report.machine.gpus}
        above = [h for h in hops if h.device not in gpus]  # a GPU's own link is in the GPUs table
        below = [h for h in above if _below_max(h)]
        rows.append((Cell("PCIe path"), Cell(f"{len(above)} hop(s) above the GPUs, {len(below)} below their maximum")))
        if above:
            slowest = min(above, key=_rate)
            tone = "warn" if _below_max(slowest) else ""
            rows.append((Cell("Slowest PCIe hop"), Cell(_hop_text(slowest), tone, ", ".join(slowest.endpoints))))
    elif not isinstance(hops, tuple):
        rows.append((Cell("PCIe path"), value_cell(hops)))
    aer = checks.aer
    if isinstance(aer, tuple):
        errors = [a for a in aer if any(isinstance(n, int) and n > 0 for n in (a.correctable, a.nonfatal, a.fatal))]
        text = "; ".join(
            f"{a.device}: {plain(a.correctable)} correctable, {plain(a.nonfatal)} non-fatal, {plain(a.fatal)} fatal"
            for a in errors[:4]
        ) + (f" and {len(errors) - 4} more" if len(errors) > 4 else "")
        clean = f"none on {len(aer)} device(s)" if aer else "no AER counters exposed"
        rows.append((Cell("PCIe AER errors"), Cell(text or clean, "warn" if errors else "")))
    events = checks.kernel_events
    if isinstance(events, tuple):
        counts: dict[str, int] = {}
        for e in events:
            counts[e.signature] = counts.get(e.signature, 0) + 1
        text = ", ".join(f"{sig} x{n}" for sig, n in counts.items())
        if events:
            text += f"; first: {events[0].line}"
        rows.append((Cell("Kernel log"), Cell(text or "no known GPU failure line", "fail" if events else "")))
    else:
        rows.append((Cell("Kernel log"), value_cell(events)))
    fabric = checks.fabric_health
    if isinstance(fabric, tuple) and fabric:
        by_summary: dict[str, list[int]] = {}
        for f in fabric:
            summary_text = f.summary if isinstance(f.summary, str) else f"not read: {absent_text(f.summary)}"
            by_summary.setdefault(summary_text, []).append(f.gpu)
        text = "; ".join(f"{summary} on GPUs {format_gpus(g)}" for summary, g in by_summary.items())
        bad = any(s in ("unhealthy", "limited-capacity") for s in by_summary)
        rows.append((Cell("NVLink fabric health"), Cell(text, "warn" if bad else "")))
    table = Table("Host checks", ("Check", "What the probe read"), tuple(rows), left_out_note(cut), "host-checks")
    return FactsSection("Host checks", "host-checks", (table,))


register_views(FactsSection)
