"""The report as rows every format renders: one place decides what is shown, in what words and colours.

Console, Markdown and HTML all read :func:`view`; they differ only in layout. So a count, a label or a
colour cannot disagree between formats, and an absent value reads the same everywhere: its reason in
plain words, never ``unsupported (...)`` nested in another sentence.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topoaudit.model.machine import PathLevel, level_from_code
from topoaudit.model.report import Report
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Failed, Unsupported
from topoaudit.render.common import cpu_list, gbps, summary
from topoaudit.rules.base import first_few
from topoaudit.rules.probe_rules import P2P_STATUS_MEANING

if TYPE_CHECKING:  # a report without a bench, a plan or host checks does not load their models
    from topoaudit.model.bench import BenchGroup, BenchResult
    from topoaudit.model.host_checks import PcieHop
    from topoaudit.model.nccl_topo import BandwidthMatrix, NcclGpu, NcclTopology
    from topoaudit.model.plan import DeployPlan

TONES: dict[str, tuple[str, str]] = {
    "fail": ("bold red", "t-fail"),
    "warn": ("yellow", "t-warn"),
    "info": ("cyan", "t-info"),
    "pass": ("bold green", "t-pass"),
    "absent": ("dim", "absent"),
    "failed": ("red", "failed"),
    "strong": ("bold", "t-strong"),
    "self": ("dim", "lv-self"),
    "nvlink": ("bold green", "lv-nv"),
    "pcie-switch": ("cyan", "lv-pix"),
    "host-bridge": ("yellow", "lv-phb"),
    "sys": ("red", "lv-sys"),
    "unknown": ("magenta", "lv-unk"),
}
"""Tone -> (rich style for the console, CSS class for HTML). The one colour table of every format."""

LEVEL_TONE = {
    PathLevel.SELF: "self",
    PathLevel.NVLINK: "nvlink",
    PathLevel.PIX: "pcie-switch",
    PathLevel.PXB: "pcie-switch",
    PathLevel.PHB: "host-bridge",
    PathLevel.NODE: "host-bridge",
    PathLevel.SYS: "sys",
    PathLevel.UNKNOWN: "unknown",
}

FULL_MATRIX_MAX = 64
"""Above this many devices the link matrix is summarised per domain; report.json keeps every link."""

EXCEPTIONS_SHOWN = 40
GROUPS_SHOWN = 16


@dataclass(frozen=True)
class Cell:
    text: str
    tone: str = ""  # a key of TONES, or "" for plain text
    hint: str = ""  # a longer explanation (HTML tooltip)


@dataclass(frozen=True)
class Table:
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = ()
    anchor: str = ""
    matrix: bool = False  # a device-by-device grid: laid out in column blocks, coloured like the link matrix


@dataclass(frozen=True)
class FindingView:
    severity: str
    code: str
    message: str
    evidence: tuple[str, ...]  # "key: value" lines
    remedy: str


@dataclass(frozen=True)
class PlacementView:
    tp: int
    fits: bool
    groups: tuple[str, ...]  # CUDA_VISIBLE_DEVICES lines, at most GROUPS_SHOWN
    more: int  # groups left out (report.json lists all)
    alternatives: tuple[str, ...]


@dataclass(frozen=True)
class Fact:
    """A fact the source could not give: where, which field, and why in plain words."""

    where: str
    what: str
    why: str
    failed: bool


@dataclass(frozen=True)
class BenchView:
    result: BenchResult
    title: str
    groups: Table
    rows: tuple[Table, ...]  # every size of each group that has rows
    pairs: Table | None
    islands: str
    footer: tuple[str, ...]


@dataclass(frozen=True)
class PlanView:
    plan: DeployPlan
    numbers: tuple[tuple[str, Cell], ...]
    steps: tuple[str, ...]
    alternatives: Table | None


@dataclass(frozen=True)
class NcclSection:
    """NCCL's view: what it is, the transport matrix (rank x rank), the pairs beside the topology's link."""

    facts: Table
    matrix: Table | None  # None above FULL_MATRIX_MAX ranks (the pairs table and report.json keep them)
    pairs: Table | None
    legend: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class FactsSection:
    """Facts a capture or probe added beyond the link matrix: NCCL's dump, measured copy bandwidth, P2P
    status per pair, host checks. Present only when the report has them."""

    title: str
    anchor: str
    tables: tuple[Table, ...]
    legend: tuple[tuple[str, str], ...] = ()  # (label, tone) for the matrices' colours


@dataclass(frozen=True)
class ReportView:
    verdict: str
    exit_code: int
    gate_reason: str
    incomplete: bool
    summary: str
    source: str  # "kind name": where the machine facts came from
    demo: str  # "" unless the report is of a bundled example
    redaction: str
    identity: tuple[tuple[str, Cell], ...]
    findings: tuple[FindingView, ...]
    policy: tuple[tuple[str, str], ...]
    has_gpus: bool  # False for a CPU-only bench: no domain, matrix or GPU sections
    links_known: bool  # False when the source names GPUs but no links (nccl-tests logs)
    topology_note: str  # why the topology sections are missing, "" when they are there
    gpus: Table | None
    domains: Table | None
    bottleneck: Table | None
    ring: str  # one sentence on the ring over all GPUs, "" when there is none to say
    placements: tuple[PlacementView, ...]
    matrix: Table | None
    legend: tuple[tuple[str, str], ...]  # (label, tone) for every path level the matrix can show
    affinity: Table | None
    nics: Table | None
    bench: BenchView | None
    plan: PlanView | None
    extras: tuple[tuple[str, str], ...]  # (section, JSON text) for sections without their own view
    input_issues: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (rule, reason)
    not_available: tuple[Fact, ...]
    generated: str
    sections: frozenset[str] = field(default_factory=frozenset)
    nccl: NcclSection | None = None  # NCCL's view, from an NCCL_DEBUG=INFO log
    facts: tuple[FactsSection, ...] = ()  # captures, P2P status and host checks, each only when present


def _view_types() -> tuple[type, ...]:
    return (Cell, Table, FindingView, PlacementView, Fact, BenchView, PlanView, ReportView, NcclSection, FactsSection)


def absent_text(value: Unsupported | Failed) -> str:
    """The reason a value is absent, as a reader wants it: "failed: ..." only for a failure."""
    reason = value.reason.strip().rstrip(".")
    return f"failed: {reason}" if isinstance(value, Failed) else reason


def value_cell(value: object, unit: str = "") -> Cell:
    """A probed value, or its absence (muted, with where the question was asked)."""
    if isinstance(value, Failed):
        return Cell(absent_text(value), "failed", f"source: {value.source}")
    if isinstance(value, Unsupported):
        return Cell(absent_text(value), "absent", f"source: {value.source}")
    if isinstance(value, (tuple, list)):
        return Cell(",".join(map(str, value)) + unit)
    return Cell(f"{value}{unit}")


def sentence(text: str) -> str:
    """``text`` ending in exactly one full stop, whatever punctuation it already carries."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", ".)", "…")) else text + "."


def _cells(*texts: str) -> tuple[Cell, ...]:
    return tuple(Cell(t) for t in texts)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` without control characters (terminal escapes, bells, carriage returns): each becomes
    U+FFFD, so a string from the machine can neither drive a terminal nor break an XML file."""
    return _CONTROL.sub("\ufffd", text)


def _printable_tree(value: Any) -> Any:
    """Every string of a view object made printable (the raw bench result and plan, drawn by the SVG
    code that scrubs its own text, are left as they are). An object with nothing to scrub is returned
    as it is, not copied: a report's strings are almost always printable already."""
    if isinstance(value, str):
        return printable(value) if _CONTROL.search(value) else value
    if isinstance(value, tuple):
        items = tuple(_printable_tree(v) for v in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    names = _VIEW_FIELDS.get(type(value))
    if names is None:
        return value
    fields = [getattr(value, name) for name in names]
    scrubbed = [_printable_tree(v) for v in fields]
    if all(a is b for a, b in zip(scrubbed, fields, strict=True)):
        return value
    return type(value)(**dict(zip(names, scrubbed, strict=True)))


def view(report: Report) -> ReportView:
    """Everything a human format shows, decided once, every string printable."""
    printable_view: ReportView = _printable_tree(_view(report))
    return printable_view


def _view(report: Report) -> ReportView:
    has_gpus = bool(report.machine.gpus)
    known = has_gpus and not all(d.build == "unknown" for d in report.domains)
    note = ""
    if not has_gpus:
        note = "No GPUs in this report (a CPU-only run): no domains, placements or link matrix."
    elif not known:
        note = "The source describes no links between GPUs: NVLink domains, placements and the link matrix are unknown."
    bench = None if isinstance(report.bench, Unsupported) else bench_view(report.bench)
    plan = None if isinstance(report.plan, Unsupported) else plan_view(report.plan)
    verdict = report.gate.verdict if report.gate.verdict in ("pass", "warn", "fail") else "fail"
    return ReportView(
        verdict=verdict,
        exit_code=report.gate.exit_code,
        gate_reason=sentence(report.gate.reason),
        incomplete=report.gate.incomplete,
        summary=summary(report),
        source=f"{report.source.kind} {report.source.name}",
        demo=_demo(report),
        redaction=_redaction(report),
        identity=_identity(report),
        findings=tuple(_finding(f) for f in report.findings),
        policy=tuple(policy_lines(report)),
        has_gpus=has_gpus,
        links_known=known,
        topology_note=note,
        gpus=_gpus(report) if has_gpus else None,
        domains=_domains(report) if known else None,
        bottleneck=_bottleneck(report) if known and report.bottlenecks else None,
        ring=_ring(report) if known else "",
        placements=tuple(_placement(p) for p in report.placements) if known else (),
        matrix=link_matrix(report) if known else None,
        legend=tuple((lv.label, LEVEL_TONE[lv]) for lv in PathLevel if lv != PathLevel.SELF),
        affinity=_affinity(report) if has_gpus else None,
        nics=_nics(report),
        bench=bench,
        plan=plan,
        extras=_extras(report),
        input_issues=tuple(f"input line {i.line} ({i.action}): {sentence(i.message)}" for i in report.input_issues),
        skipped=tuple((s.rule, sentence(s.reason)) for s in report.skipped),
        not_available=not_available(report),
        generated=f"{report.generated_at} by topoaudit {report.tool_version} (report schema {report.schema_version})",
        nccl=nccl_section(report),
        facts=fact_sections(report),
    )


def _demo(report: Report) -> str:
    if not report.source.demo:
        return ""
    text = "a bundled example box, not the machine this ran on"
    if report.source.description:
        text += ": " + report.source.description.strip()
    return sentence(text)


def _redaction(report: Report) -> str:
    redaction = report.extras.get("redaction")
    if not isinstance(redaction, dict):
        return ""
    return str(redaction.get("note", ""))


def _identity(report: Report) -> tuple[tuple[str, Cell], ...]:
    host = report.machine.host
    if isinstance(report.gpu_model, (Unsupported, Failed)) and not isinstance(report.catalog_entry, str):
        catalog = Cell("not looked up: the GPU model is unknown", "absent", "source: catalog")
    else:
        catalog = value_cell(report.catalog_entry)
    gpus = f"{len(report.machine.gpus)} in the input"
    if isinstance(host.total_gpu_count, int) and isinstance(host.visible_gpu_count, int):
        gpus += f" ({host.visible_gpu_count} visible of {host.total_gpu_count})"
    return (
        ("Host", value_cell(host.hostname)),
        ("Product", value_cell(host.product)),
        ("GPU model", value_cell(report.gpu_model)),
        ("Catalog entry", catalog),
        ("Driver", value_cell(host.driver_version)),
        ("CUDA driver", value_cell(host.cuda_driver_version)),
        ("Kernel", value_cell(host.kernel)),
        ("GPUs", Cell(gpus)),
        ("Source", Cell(f"{report.source.kind}: {report.source.name}")),
    )


def _finding(f: Any) -> FindingView:
    evidence = []
    for key in sorted(f.evidence):
        value = f.evidence[key]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        evidence.append(f"{key}: {text}")
    return FindingView(f.severity.value, f.code, sentence(f.message), tuple(evidence), f.remedy)


def policy_lines(report: Report) -> list[tuple[str, str]]:
    """(label, text) lines saying which policy judged the report and what it changed; [] without one.

    Ignored findings are listed with their reasons: a finding a policy hides must stay visible somewhere.
    """
    outcome = report.policy
    if isinstance(outcome, Unsupported):
        return []
    lines = [("policy", f"{outcome.name} ({outcome.source}, sha256 {outcome.sha256[:12]})")]
    if outcome.description:
        lines.append(("about", outcome.description))
    lines += [("met", text) for text in outcome.met]
    lines += [("not met", text) for text in outcome.not_met]
    lines += [("not checked", text) for text in outcome.not_checked]
    lines += [
        ("severity", f"{c.code}: {c.was.value} -> {c.now.value} ({c.count} finding(s))") for c in outcome.overridden
    ]
    lines += [("ignored", f"{i.finding.code}: {i.finding.message} (reason: {i.reason})") for i in outcome.ignored]
    return lines


_GPU_COLUMNS: tuple[tuple[str, str], ...] = (
    ("name", "Name"),
    ("pci_bus_id", "Bus id"),
    ("serial", "Serial"),
    ("uuid", "UUID"),
    ("memory_total_bytes", "Memory"),
)
"""Identity columns; CPU and NUMA affinity have their own table."""


def _gpus(report: Report) -> Table | None:
    """One row per GPU; a column the source never has (every value absent for one reason) is left out."""
    gpus = report.machine.gpus
    shown = []
    for name, title in _GPU_COLUMNS:
        values = [getattr(g, name) for g in gpus]
        reasons = {v.reason for v in values if isinstance(v, Unsupported)}
        if all(isinstance(v, Unsupported) for v in values) and len(reasons) == 1:
            continue
        shown.append((name, title))
    has_pcie = any(isinstance(g.pcie.width_current, int) for g in gpus)
    lost = any(isinstance(g.status, Failed) for g in gpus)
    if not shown and not has_pcie and not lost:
        return None
    header = ("GPU", *(t for _, t in shown)) + (("PCIe",) if has_pcie else ()) + (("Status",) if lost else ())
    rows = []
    for g in gpus:
        row = [Cell(g.label, "strong")]
        for name, _ in shown:
            v = getattr(g, name)
            if name == "memory_total_bytes" and isinstance(v, int):
                row.append(Cell(f"{v / 2**30:.0f} GiB"))
            else:
                row.append(value_cell(v))
        if has_pcie:
            p = g.pcie
            row.append(
                Cell(
                    f"Gen{_plain(p.gen_current)} x{_plain(p.width_current)} "
                    f"(max Gen{_plain(p.gen_max)} x{_plain(p.width_max)})"
                )
            )
        if lost:
            row.append(value_cell(g.status) if isinstance(g.status, Failed) else Cell("ok"))
        rows.append(tuple(row))
    return Table("GPUs", header, tuple(rows), anchor="gpus")


def _plain(value: object) -> str:
    return "?" if isinstance(value, (Unsupported, Failed)) else str(value)


def _links_text(min_links: int, max_links: int) -> str:
    return f"{min_links}" if min_links == max_links else f"{min_links}-{max_links}"


def _domains(report: Report) -> Table:
    hops = {b.gpus: b.describe for b in report.bottlenecks}
    rows = []
    for d in report.domains:
        rows.append(
            _cells(
                str(d.id),
                format_gpus(d.gpus),
                d.build,
                "yes" if d.all_pairs else "no",
                _links_text(d.min_links, d.max_links),
                hops.get(d.gpus, "-" if d.size < 2 else "NVLink"),
            )
        )
    header = ("Domain", "GPUs", "Build", "All pairs linked", "NVLinks per pair", "Slowest ring hop")
    return Table("NVLink domains", header, tuple(rows), anchor="domains")


def _bottleneck(report: Report) -> Table:
    rows = []
    for b in report.bottlenecks:
        between = f"GPU{b.slowest_hop.a}-GPU{b.slowest_hop.b} ({b.slowest_hop.code})" if b.slowest_hop else "-"
        rows.append(
            (Cell(format_gpus(b.gpus)), Cell(b.describe), Cell(between), Cell("yes" if b.exact else "lower bound"))
        )
    return Table(
        "Bottleneck: the slowest hop of a ring",
        ("GPUs", "Slowest hop", "Between", "Exact"),
        tuple(rows),
        anchor="bottleneck",
    )


def _ring(report: Report) -> str:
    if not report.bottlenecks or report.bottlenecks[0].slowest_hop is None or len(report.domains) < 2:
        return ""
    whole = report.bottlenecks[0]
    hop = whole.slowest_hop
    assert hop is not None
    bound = "" if whole.exact else ", a lower bound"
    where = f"GPU{hop.a}-GPU{hop.b}, {hop.code}{bound}"
    return f"A ring over all GPUs {format_gpus(whole.gpus)} is limited by {whole.describe} ({where})."


def _placement(p: Any) -> PlacementView:
    groups = tuple(p.cuda_visible_devices)
    return PlacementView(
        tp=p.tp,
        fits=p.fits,
        groups=groups[:GROUPS_SHOWN],
        more=max(0, len(groups) - GROUPS_SHOWN),
        alternatives=tuple(sentence(a) for a in p.alternatives),
    )


def _code_cell(code: str) -> Cell:
    level, _ = level_from_code(code)
    return Cell(code, LEVEL_TONE[level], level.label)


def link_matrix(report: Report) -> Table:
    """The device link matrix as ``nvidia-smi topo -m`` shows it; summarised per domain on a big box."""
    machine = report.machine
    labels = [g.label for g in machine.gpus] + [n.label for n in machine.nics]
    if len(labels) > FULL_MATRIX_MAX:
        return _matrix_summary(report)
    code = {}
    for link in machine.links:
        code[(link.a, link.b)] = code[(link.b, link.a)] = link.code
    rows = []
    for a in labels:
        cells = [Cell(a, "strong")]
        for b in labels:
            cells.append(_code_cell("X" if a == b else code.get((a, b), "?")))
        rows.append(tuple(cells))
    return Table("Link matrix", ("", *labels), tuple(rows), anchor="matrix")


def _matrix_summary(report: Report) -> Table:
    """One row per NVLink domain (lone GPUs together, NICs together): the paths between blocks, and the
    pairs inside a domain that differ from its usual link (the exceptions)."""
    machine = report.machine
    block: dict[str, str] = {}
    names: list[str] = []
    lone: list[int] = []
    for d in report.domains:
        if d.size >= 2:
            name = f"domain {d.id} {format_gpus(d.gpus)}"
            names.append(name)
            block.update({f"GPU{g}": name for g in d.gpus})
        else:
            lone.extend(d.gpus)
    if lone:
        name = f"GPUs without NVLink {format_gpus(lone)}"
        names.append(name)
        block.update({f"GPU{g}": name for g in lone})
    if machine.nics:
        name = f"NICs ({len(machine.nics)})"
        names.append(name)
        block.update({n.label: name for n in machine.nics})
    between: dict[tuple[str, str], dict[str, int]] = {}
    inside: dict[str, dict[str, int]] = {}
    for link in machine.links:
        a, b = block.get(link.a), block.get(link.b)
        if a is None or b is None:
            continue
        for key in ((a, b), (b, a)) if a != b else ((a, a),):
            counts = between.get(key)
            if counts is None:
                counts = between[key] = {}
            counts[link.code] = counts.get(link.code, 0) + 1
        if a == b:
            inside[a] = between[(a, a)]
    usual = {name: max(counts, key=counts.__getitem__) for name, counts in inside.items()}
    exceptions = [
        f"{link.a}-{link.b}: {link.code} (its domain's usual link is {usual[block[link.a]]})"
        for link in machine.links
        if link.a in block
        and block[link.a] == block.get(link.b)
        and block[link.a].startswith("domain")
        and link.code != usual[block[link.a]]
    ]
    rows = []
    for a in names:
        cells = [Cell(a, "strong")]
        for b in names:
            counts = between.get((a, b))
            if not counts:
                cells.append(Cell("-"))
                continue
            codes = sorted(counts, key=lambda c: (level_from_code(c)[0], c))
            worst = max(codes, key=lambda c: level_from_code(c)[0])
            cells.append(Cell("/".join(codes), LEVEL_TONE[level_from_code(worst)[0]], f"{sum(counts.values())} links"))
        rows.append(tuple(cells))
    count = len(machine.gpus) + len(machine.nics)
    notes = [
        f"{count} devices: one row per NVLink domain, each cell lists the paths between its blocks "
        "(the full matrix is the 'links' list of report.json)."
    ]
    if exceptions:
        shown = exceptions[:EXCEPTIONS_SHOWN]
        notes.append(f"{len(exceptions)} pair(s) inside a domain differ from its usual link: " + "; ".join(shown))
        if len(exceptions) > len(shown):
            notes.append(f"... {len(exceptions) - len(shown)} more (report.json lists every link).")
    else:
        notes.append("Every pair inside a domain has the domain's usual link.")
    return Table("Link matrix (summary)", ("", *names), tuple(rows), tuple(notes), anchor="matrix")


def _affinity(report: Report) -> Table | None:
    gpus = report.machine.gpus
    if all(isinstance(g.cpu_affinity, Unsupported) and isinstance(g.numa_nodes, Unsupported) for g in gpus):
        return None
    rows = []
    for g in gpus:
        cpus = Cell(cpu_list(g.cpu_affinity)) if isinstance(g.cpu_affinity, tuple) else value_cell(g.cpu_affinity)
        rows.append((Cell(g.label, "strong"), cpus, value_cell(g.numa_nodes)))
    return Table("CPU and NUMA affinity", ("GPU", "CPUs", "NUMA"), tuple(rows), anchor="affinity")


def _nics(report: Report) -> Table | None:
    """NIC table with the columns this source has (topo -m gives names only; a probe adds the rest)."""
    nics = report.machine.nics
    if not nics:
        return None
    fields = [("device", "Device", ""), ("netdev", "Netdev", ""), ("pci_bus_id", "Bus id", ""),
              ("link_rate_gbps", "Rate", " Gb/s"), ("numa_node", "NUMA", "")]  # fmt: skip
    shown = [f for f in fields if not all(isinstance(getattr(n, f[0]), Unsupported) for n in nics)]
    rows = tuple(
        (Cell(n.label, "strong"), *(value_cell(getattr(n, name), unit) for name, _, unit in shown)) for n in nics
    )
    return Table("NICs", ("NIC", *(title for _, title, _ in shown)), rows, anchor="nics")


def _extras(report: Report) -> tuple[tuple[str, str], ...]:
    shown = {k: v for k, v in report.extras.items() if k != "redaction"}
    return tuple(
        (key, json.dumps(shown[key], indent=2, ensure_ascii=False, sort_keys=True, default=str))
        for key in sorted(shown)
    )


_VIEW_FIELDS = {t: tuple(f.name for f in dataclasses.fields(t)) for t in _view_types()}
"""View type -> its field names, the ones :func:`_printable_tree` walks (looked up once, not per object)."""

_GPU_FACTS = ("name", "uuid", "serial", "pci_bus_id", "memory_total_bytes", "cpu_affinity", "numa_nodes")
_HOST_FACTS = ("hostname", "product", "driver_version", "cuda_driver_version", "kernel")


def not_available(report: Report) -> tuple[Fact, ...]:
    """Every fact the source could not give, failures first; a field absent on every GPU for one
    reason is one line ("all 8 GPUs"), not eight."""
    gpus = report.machine.gpus
    items: list[Fact] = []
    for name in _GPU_FACTS:
        unsupported: dict[str, list[tuple[int, Unsupported]]] = {}
        for g in gpus:
            value = getattr(g, name)
            if isinstance(value, Failed):
                items.append(Fact(g.label, name, absent_text(value), True))
            elif isinstance(value, Unsupported):
                unsupported.setdefault(value.reason, []).append((g.index, value))
        for members in unsupported.values():
            if len(members) == 1:
                where = f"GPU{members[0][0]}"
            elif len(members) == len(gpus):
                where = f"all {len(gpus)} GPUs"
            else:
                where = "GPUs " + format_gpus(i for i, _ in members)
            items.append(Fact(where, name, absent_text(members[0][1]), False))
    for g in gpus:
        if isinstance(g.status, Failed):
            items.append(Fact(g.label, "status", absent_text(g.status), True))
    host = report.machine.host
    for name in _HOST_FACTS:
        value = getattr(host, name)
        if isinstance(value, (Unsupported, Failed)):
            items.append(Fact("host", name, absent_text(value), isinstance(value, Failed)))
    items.sort(key=lambda f: 0 if f.failed else 1)
    return tuple(items)


# --- bench -------------------------------------------------------------------------------------------


def format_size(n: int) -> str:
    """A message size as nccl-tests users read it: 1K, 64M, 8G (binary units)."""
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    for unit, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n}B"


def _num(value: object, fmt: str = "{:.2f}") -> str:
    if isinstance(value, (Unsupported, Failed)):
        return "-"
    if isinstance(value, float):
        return fmt.format(value)
    return str(value)


def ranks_text(ranks: tuple[int, ...]) -> str:
    r = list(ranks)
    if len(r) > 2 and r == list(range(r[0], r[-1] + 1)):
        return f"{r[0]}-{r[-1]}"
    return ",".join(map(str, r))


def bench_title(result: BenchResult) -> str:
    where = f"{result.world_size} rank(s) on {len(result.hosts)} host(s)"
    src = "imported from nccl-tests" if result.source == "nccl-tests" else f"measured with {result.backend}"
    extra = f", {result.version}" if result.version else ""
    return f"{result.collective} bench, {src}{extra}: {where}, {result.status}"


BENCH_GROUP_HEADER = (
    "group",
    "ranks",
    "plateau busbw GB/s",
    "at",
    "peak GB/s",
    "lat p50 us",
    "lat p99 us",
    "expected GB/s",
    "ratio",
    "error",
)


def _group_row(g: BenchGroup) -> tuple[Cell, ...]:
    return (
        Cell(g.name, "strong"),
        Cell(ranks_text(g.ranks)),
        Cell(_num(g.plateau_busbw_gbps)),
        Cell(format_size(g.plateau_size_bytes) if isinstance(g.plateau_size_bytes, int) else "-"),
        Cell(_num(g.peak_busbw_gbps)),
        Cell(_num(g.latency_p50_us, "{:.1f}")),
        Cell(_num(g.latency_p99_us, "{:.1f}")),
        Cell(_num(g.expected_busbw_gbps, "{:.1f}"), hint=g.expected_basis),
        Cell(_num(g.ratio, "{:.0%}")),
        Cell(g.error, "fail" if g.error else ""),
    )


def _has_inplace(group: BenchGroup) -> bool:
    return any(isinstance(r.inplace_time_us, float) for r in group.rows)


def _rows_table(g: BenchGroup) -> Table:
    head = ["size(B)", "count", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong"]
    inplace = _has_inplace(g)
    head += ["in-place time(us)", "in-place busbw", "in-place #wrong"] if inplace else ["p99(us)"]
    rows = []
    for r in g.rows:
        tone = "fail" if isinstance(r.wrong, int) and r.wrong > 0 else ""
        cells = [str(r.size_bytes), str(r.count), r.dtype, f"{r.time_us:.2f}", f"{r.algbw_gbps:.2f}",
                 f"{r.busbw_gbps:.2f}", _num(r.wrong)]  # fmt: skip
        if inplace:
            cells += [_num(r.inplace_time_us), _num(r.inplace_busbw_gbps), _num(r.inplace_wrong)]
        else:
            cells += [_num(r.p99_us)]
        rows.append(tuple(Cell(c, tone) for c in cells))
    return Table(f"{g.name} (ranks {ranks_text(g.ranks)}): every size, slowest rank", tuple(head), tuple(rows))


def _pairs_table(result: BenchResult) -> Table | None:
    if not result.pairs:
        return None
    ranks = sorted({r for p in result.pairs for r in (p.a, p.b)})
    value = {(p.a, p.b): p.busbw_gbps for p in result.pairs}
    value.update({(p.b, p.a): p.busbw_gbps for p in result.pairs})
    rows = tuple(
        (Cell(str(a), "strong"), *(Cell("X", "self") if a == b else Cell(_num(value.get((a, b)))) for b in ranks))
        for a in ranks
    )
    return Table("Pairwise busbw GB/s (each pair alone)", ("rank", *map(str, ranks)), rows)


def _islands(result: BenchResult) -> str:
    measured, expected = result.measured_islands, result.expected_islands
    if not isinstance(measured, tuple):
        return ""
    text = "Ranks that talk fast together (measured): " + " ".join("{" + ranks_text(i) + "}" for i in measured)
    if isinstance(expected, tuple):
        text += "; NVLink domains, in ranks: " + " ".join("{" + ranks_text(d) + "}" for d in expected)
    return text


def _bench_footer(result: BenchResult) -> tuple[str, ...]:
    lines = []
    if isinstance(result.avg_busbw_gbps, float):
        lines.append(
            f"nccl-tests 'Avg bus bandwidth' {result.avg_busbw_gbps:g} GB/s (a mean over all sizes; not a gate)"
        )
    if isinstance(result.out_of_bounds, int):
        lines.append(f"out of bounds values: {result.out_of_bounds}")
    if result.source == "topoaudit" and result.timed_s > 0:
        lines.append(
            f"wall {result.wall_s:.1f} s, timed collectives {result.timed_s:.2f} s "
            f"(overhead x{result.wall_s / result.timed_s:.1f})"
        )
    skipped = {s.size_bytes: s.reason for g in result.groups for s in g.skipped_sizes}
    for size, reason in sorted(skipped.items()):
        lines.append(f"skipped {format_size(size)}: {reason}")
    for e in result.errors:
        where = f" [{e.group} {format_size(e.size_bytes)}]" if e.group else ""
        lines.append(f"rank {e.rank} {e.kind}{where}: {e.message}")
    lines += [n for n in result.notes if not n.startswith("nccl-tests' 'Avg")]
    if result.environment:
        lines.append("environment: " + ", ".join(f"{k}={v}" for k, v in sorted(result.environment.items())))
    return tuple(lines)


def bench_view(result: BenchResult) -> BenchView:
    shown = [g for g in result.groups if g.kind != "pair"]
    header: tuple[str, ...] = BENCH_GROUP_HEADER
    rows = [_group_row(g) for g in shown]
    if not any(g.error for g in shown):  # the error column only when a group stopped
        header, rows = header[:-1], [row[:-1] for row in rows]
    groups = Table(bench_title(result), header, tuple(rows), anchor="bench")
    return BenchView(
        result=result,
        title=bench_title(result),
        groups=groups,
        rows=tuple(_rows_table(g) for g in shown if g.rows),
        pairs=_pairs_table(result),
        islands=_islands(result),
        footer=_bench_footer(result),
    )


def plot_title(g: BenchGroup) -> str:
    size = f" at {format_size(g.plateau_size_bytes)}" if isinstance(g.plateau_size_bytes, int) else ""
    plateau = f": plateau {gbps(g.plateau_busbw_gbps)} GB/s{size}" if isinstance(g.plateau_busbw_gbps, float) else ""
    return f"{g.name} ({len(g.ranks)} ranks){plateau}"


# --- plan --------------------------------------------------------------------------------------------

PLAN_VERDICT_TONE = {"fits-one-domain": "pass", "at-edge-of-domain": "warn", "crosses-domain": "fail"}


def plan_view(plan: DeployPlan) -> PlanView:
    numbers: list[tuple[str, Cell]] = [
        ("Verdict", Cell(plan.verdict, PLAN_VERDICT_TONE.get(plan.verdict, "strong"))),
        ("Model", Cell(plan.model_text)),
        (
            "Footprint",
            Cell(
                f"{plan.footprint_gb:,.1f} GB (weights {plan.weights_gb:,.1f} + KV {plan.kv_cache_gb:,.1f}"
                f" + margin {plan.safety_margin_gb:,.1f})"
            ),
        ),
        ("Card", Cell(f"{plan.gpu_name}: {plan.usable_per_card_gb:,.1f} GB usable of {plan.card_memory_gb:,.0f} GB")),
        (
            "Cards",
            Cell(
                f"{plan.cards} (TP{plan.tp_size}"
                + (f" x PP{plan.pp_size}" if plan.pp_size > 1 else "")
                + f"; {plan.per_card_gb:,.1f} GB per card, {plan.card_utilisation:.0%})"
            ),
        ),
    ]
    for fit in (plan.standard_node, plan.machine):
        if not isinstance(fit, Unsupported):
            tone = "pass" if fit.fits_one_domain and not fit.at_edge else "warn" if fit.fits_one_domain else "fail"
            label = "Standard node" if fit.kind == "standard-node" else "This machine"
            numbers.append((label, Cell(fit.verdict, tone)))
    alternatives = None
    if plan.alternatives:
        alternatives = Table(
            "Alternatives",
            ("Option", "Cost"),
            tuple(
                (Cell(a.summary), Cell(a.cost, "fail" if a.kind == "cross-node-tp" else "")) for a in plan.alternatives
            ),
        )
    return PlanView(plan, tuple(numbers), tuple(plan.steps), alternatives)


# --- NCCL's own view (an NCCL_DEBUG=INFO log) ----------------------------------------------------------

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
NCCL_PATTERNS = {1: "balanced tree", 2: "split tree", 3: "tree", 4: "ring", 5: "NVLS", 6: "CollNet direct"}
"""NCCL's graph pattern ids (src/include/graph.h)."""


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
                _code_cell(link.code) if link is not None else Cell("not known from this source", "absent"),
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
        name = NCCL_PATTERNS.get(p.pattern, f"pattern {p.pattern}")
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
                    "warn" if fabric.health_mask else "",
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


# --- what captures and the probe add: NCCL's dump, measured bandwidth, P2P status, host checks ---------


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
        for g in topo.gpus:
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
        tables.append(Table("GPUs as NCCL saw them", header, tuple(rows), anchor="nccl-xml-gpus"))
    if topo.nets:
        rows = [
            (
                Cell(n.label, "strong"),
                value_cell(n.name),
                value_cell(n.pci_bus_id),
                value_cell(n.speed_megabits_per_s, " Mb/s"),
                _nccl_figure("NET", n.net_gbps, arithmetic),
                _yes_no(n.gdr),
            )
            for n in topo.nets
        ]
        header = ("NIC", "Device", "Bus id", "Speed", "NCCL's GB/s", "GPUDirect RDMA")
        tables.append(Table("NICs as NCCL saw them", header, tuple(rows), anchor="nccl-xml-nets"))
    if topo.graphs:
        rows = [
            (
                Cell(g.pattern, "strong"),
                Cell(str(g.channels)),
                value_cell(g.speed_intra_gbps, " GB/s"),
                value_cell(g.speed_inter_gbps, " GB/s"),
                Cell(g.type_intra, "warn" if g.type_intra in ("SYS", "PHB", "NODE") else ""),
                Cell(g.type_inter),
            )
            for g in topo.graphs
        ]
        header = ("Pattern", "Channels", "Speed inside a node", "Speed between nodes", "Path inside", "Path between")
        tables.append(Table("Channels NCCL built per pattern", header, tuple(rows), anchor="nccl-xml-graphs"))
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
        for label, values in zip(m.rows, m.values_gbps, strict=False):
            cells = [Cell(label, "strong")]
            for column, value in zip(m.columns, values, strict=False):
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
        tables.append(Table(_matrix_title(m), ("", *m.columns), tuple(rows), anchor="bandwidth", matrix=True))
    legend = tuple((lv.label, LEVEL_TONE[lv]) for lv in PathLevel if lv != PathLevel.SELF) if toned else ()
    note = "Measured copy bandwidth in GB/s (- : not measured);"
    note += (
        " a GPU pair's cell is coloured like its link in the link matrix." if toned else " no link matrix beside it."
    )
    tables[-1] = dataclasses.replace(tables[-1], notes=(note,))
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
    now = f"{_plain(hop.speed_current_gts)} GT/s x{_plain(hop.width_current)}"
    most = f"{_plain(hop.speed_max_gts)} GT/s x{_plain(hop.width_max)}"
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
    if isinstance(ports, tuple):
        if not ports:
            rows.append((Cell("RDMA ports"), Cell("none found")))
        for port in ports:
            state = f"{_plain(port.state)} {_plain(port.phys_state)}"
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
            f"{a.device}: {_plain(a.correctable)} correctable, {_plain(a.nonfatal)} non-fatal, {_plain(a.fatal)} fatal"
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
    table = Table("Host checks", ("Check", "What the probe read"), tuple(rows), anchor="host-checks")
    return FactsSection("Host checks", "host-checks", (table,))
