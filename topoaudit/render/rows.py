"""The report as rows every format renders: one place decides what is shown, in what words and colours.

Console, Markdown and HTML all read :func:`view`; they differ only in layout. So a count, a label or a
colour cannot disagree between formats, and an absent value reads the same everywhere: its reason in
plain words, never ``unsupported (...)`` nested in another sentence. The cells and their tones are in
:mod:`topoaudit.render.cells`; the bench, plan, NCCL and captured-facts sections are in modules of their
own, loaded only for a report that has them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topoaudit.model.machine import PathLevel, level_from_code
from topoaudit.model.paste import parts_read
from topoaudit.model.report import VERDICTS, Report
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Failed, Unsupported
from topoaudit.render.cells import (
    FULL_MATRIX_MAX,
    LEVEL_TONE,
    MAX_GPUS_LISTED,
    VIEW_FIELDS,
    Cell,
    Table,
    absent_text,
    cells,
    code_cell,
    first_listed,
    is_printable,
    left_out_note,
    plain,
    printable,
    register_views,
    sentence,
    value_cell,
)
from topoaudit.render.common import cpu_list, no_gpus_why, summary

if TYPE_CHECKING:  # a report without a bench, a plan, an NCCL log or captures does not load their sections
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.plan import DeployPlan
    from topoaudit.render.bench_rows import BenchView
    from topoaudit.render.fact_rows import FactsSection
    from topoaudit.render.nccl_rows import NcclSection
    from topoaudit.render.plan_rows import PlanView

EXCEPTIONS_SHOWN = 40
"""Pairs inside a domain whose link differs from its usual one, named under a summarised matrix."""
GROUPS_SHOWN = 16
"""CUDA_VISIBLE_DEVICES lines shown per TP size; report.json lists every group."""


@dataclass(frozen=True)
class FindingView:
    """A finding as shown: its message as a sentence and its evidence as ``key: value`` lines."""

    severity: str
    code: str
    message: str
    evidence: tuple[str, ...]  # "key: value" lines
    remedy: str


@dataclass(frozen=True)
class PlacementView:
    """The TP groups for one size, as ``CUDA_VISIBLE_DEVICES`` lines, or the alternatives when none fit."""

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
class ReportView:
    """Everything a human format shows, each string printable, in reading order."""

    verdict: str  # "pass" | "warn" | "fail" | "not judged"
    exit_code: int
    gate_reason: str
    incomplete: bool
    judged: str  # what the verdict covered, in one sentence ("" when not judged)
    to_judge: str  # not judged: the capture or option that would let it judge
    identified: str  # what the box is judged as and what showed it ("" when nothing did)
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
    left_out: tuple[str, ...] = ()  # what the tables and lists leave out past MAX_LISTED: "119,744 of its 120,000 NICs"


def left_out_sentence(cuts: tuple[str, ...], shown_as: str = "view") -> str:
    """The banner of a shortened report ("" when nothing was left out): what was left out, and where it all is."""
    if not cuts:
        return ""
    return f"This {shown_as} lists part of the report: it leaves out {'; '.join(cuts)}. The JSON report holds them all."


def _printable_tree(value: Any) -> Any:
    """Every string of a view object made printable (the raw bench result and plan, drawn by the SVG
    code that scrubs its own text, are left as they are). An object with nothing to scrub is returned
    as it is, not copied: a report's strings are almost always printable already."""
    if isinstance(value, str):
        return value if is_printable(value) else printable(value)
    if isinstance(value, tuple):
        items = tuple(_printable_tree(v) for v in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    names = VIEW_FIELDS.get(type(value))
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
    single = len(report.machine.gpus) == 1
    known = has_gpus and not single and not all(d.build == "unknown" for d in report.domains)
    note = ""
    if not has_gpus:
        note = f"No GPUs in this report ({no_gpus_why(report)}): no domains, placements or link matrix."
    elif single:
        note = "One GPU in this report: no GPU-to-GPU links, NVLink domains or placements to show."
    elif not known:
        note = "The source describes no links between GPUs: NVLink domains, placements and the link matrix are unknown."
    bench = None if isinstance(report.bench, Unsupported) else _bench_view(report.bench)
    plan = None if isinstance(report.plan, Unsupported) else _plan_view(report.plan)
    issues, issues_cut = first_listed(report.input_issues, "input issues")
    skipped, skipped_cut = first_listed(report.skipped, "skipped rules")
    everything_absent = not_available(report)
    facts_absent, absent_cut = first_listed(everything_absent, "facts not available")
    verdict = report.gate.verdict if report.gate.verdict in VERDICTS else "fail"
    return ReportView(
        verdict=verdict,
        exit_code=report.gate.exit_code,
        gate_reason=sentence(report.gate.reason),
        incomplete=report.gate.incomplete,
        judged=sentence("; ".join(report.gate.judged)) if report.gate.judged else "",
        to_judge=sentence(report.gate.to_judge) if report.gate.to_judge else "",
        identified=sentence(report.identified.sentence) if report.identified.sentence else "",
        summary=summary(report),
        source=_source(report),
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
        input_issues=tuple(f"input line {i.line} ({i.action}): {sentence(i.message)}" for i in issues),
        skipped=tuple((s.rule, sentence(s.reason)) for s in skipped),
        not_available=facts_absent,
        generated=f"{report.generated_at} by topoaudit {report.tool_version} (report schema {report.schema_version})",
        nccl=_nccl_section(report),
        facts=_fact_sections(report),
        left_out=_left_out(report, (issues_cut, skipped_cut, absent_cut)),
    )


def _source(report: Report) -> str:
    read = parts_read(report.source.parts)
    return f"{report.source.kind} {report.source.name}" + (f"; parts: {read}" if read else "")


def _left_out(report: Report, lists: tuple[str, ...]) -> tuple[str, ...]:
    """What the view leaves out past MAX_LISTED, by what it is: the tables' cuts, then the lists'."""
    machine = report.machine
    cuts = [
        first_listed(machine.gpus, "GPUs", MAX_GPUS_LISTED)[1],
        first_listed(machine.nics, "NICs")[1],
        first_listed(report.domains, "NVLink domains", MAX_GPUS_LISTED)[1],
        first_listed(report.bottlenecks, "ring bottlenecks", MAX_GPUS_LISTED)[1],
        *lists,
    ]
    captures = report.captures
    topo = getattr(captures, "nccl_topology", None)
    if topo is not None and not isinstance(topo, Unsupported):
        cuts += [
            first_listed(topo.gpus, "GPUs in NCCL's topology", MAX_GPUS_LISTED)[1],
            first_listed(topo.nets, "NICs in NCCL's topology")[1],
        ]
    return tuple(cut for cut in cuts if cut)


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
    identified = report.identified.sentence
    return (
        ("Host", value_cell(host.hostname)),
        ("Product", value_cell(host.product)),
        ("GPU model", value_cell(report.gpu_model)),
        *((("Identified", Cell(sentence(identified))),) if identified else ()),
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
    gpus, cut = first_listed(report.machine.gpus, "GPUs", MAX_GPUS_LISTED)
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
                    f"Gen{plain(p.gen_current)} x{plain(p.width_current)} "
                    f"(max Gen{plain(p.gen_max)} x{plain(p.width_max)})"
                )
            )
        if lost:
            row.append(value_cell(g.status) if isinstance(g.status, Failed) else Cell("ok"))
        rows.append(tuple(row))
    return Table("GPUs", header, tuple(rows), left_out_note(cut), anchor="gpus")


def _links_text(min_links: int, max_links: int) -> str:
    return f"{min_links}" if min_links == max_links else f"{min_links}-{max_links}"


def _domains(report: Report) -> Table:
    hops = {b.gpus: b.describe for b in report.bottlenecks}
    rows = []
    domains, cut = first_listed(report.domains, "NVLink domains", MAX_GPUS_LISTED)
    for d in domains:
        rows.append(
            cells(
                str(d.id),
                format_gpus(d.gpus),
                d.build,
                "yes" if d.all_pairs else "no",
                _links_text(d.min_links, d.max_links),
                hops.get(d.gpus, "-" if d.size < 2 else "NVLink"),
            )
        )
    header = ("Domain", "GPUs", "Build", "All pairs linked", "NVLinks per pair", "Slowest ring hop")
    return Table("NVLink domains", header, tuple(rows), left_out_note(cut), anchor="domains")


def _bottleneck(report: Report) -> Table:
    rows = []
    bottlenecks, cut = first_listed(report.bottlenecks, "ring bottlenecks", MAX_GPUS_LISTED)
    for b in bottlenecks:
        between = f"GPU{b.slowest_hop.a}-GPU{b.slowest_hop.b} ({b.slowest_hop.code})" if b.slowest_hop else "-"
        rows.append(
            (Cell(format_gpus(b.gpus)), Cell(b.describe), Cell(between), Cell("yes" if b.exact else "lower bound"))
        )
    return Table(
        "Bottleneck: the slowest hop of a ring",
        ("GPUs", "Slowest hop", "Between", "Exact"),
        tuple(rows),
        left_out_note(cut),
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
            cells.append(code_cell("X" if a == b else code.get((a, b), "?")))
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
    gpus, cut = first_listed(report.machine.gpus, "GPUs", MAX_GPUS_LISTED)
    if all(isinstance(g.cpu_affinity, Unsupported) and isinstance(g.numa_nodes, Unsupported) for g in gpus):
        return None
    rows = []
    for g in gpus:
        cpus = Cell(cpu_list(g.cpu_affinity)) if isinstance(g.cpu_affinity, tuple) else value_cell(g.cpu_affinity)
        rows.append((Cell(g.label, "strong"), cpus, value_cell(g.numa_nodes)))
    return Table("CPU and NUMA affinity", ("GPU", "CPUs", "NUMA"), tuple(rows), left_out_note(cut), anchor="affinity")


def _nics(report: Report) -> Table | None:
    """NIC table with the columns this source has (topo -m gives names only; a probe adds the rest)."""
    nics, cut = first_listed(report.machine.nics, "NICs")
    if not nics:
        return None
    fields = [("device", "Device", ""), ("netdev", "Netdev", ""), ("pci_bus_id", "Bus id", ""),
              ("link_rate_gbps", "Rate", " Gb/s"), ("numa_node", "NUMA", "")]  # fmt: skip
    shown = [f for f in fields if not all(isinstance(getattr(n, f[0]), Unsupported) for n in nics)]
    rows = tuple(
        (Cell(n.label, "strong"), *(value_cell(getattr(n, name), unit) for name, _, unit in shown)) for n in nics
    )
    return Table("NICs", ("NIC", *(title for _, title, _ in shown)), rows, left_out_note(cut), anchor="nics")


def _extras(report: Report) -> tuple[tuple[str, str], ...]:
    shown = {k: v for k, v in report.extras.items() if k != "redaction"}
    return tuple(
        (key, json.dumps(shown[key], indent=2, ensure_ascii=False, sort_keys=True, default=str))
        for key in sorted(shown)
    )


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


# --- the sections a report may lack, each in its own module, loaded only when the report has it -------


def _bench_view(result: BenchResult) -> BenchView:
    from topoaudit.render.bench_rows import bench_view

    return bench_view(result)


def _plan_view(plan: DeployPlan) -> PlanView:
    from topoaudit.render.plan_rows import plan_view

    return plan_view(plan)


def _nccl_section(report: Report) -> NcclSection | None:
    if isinstance(report.nccl, Unsupported):
        return None
    from topoaudit.render.nccl_rows import nccl_section

    return nccl_section(report)


def _fact_sections(report: Report) -> tuple[FactsSection, ...]:
    """Captures, P2P status and host checks: none for a pasted ``topo -m``, whose facts are all above."""
    checks = report.machine.host.checks
    no_checks = isinstance(checks, (Unsupported, Failed))
    if isinstance(report.captures, Unsupported) and not report.machine.p2p and no_checks:
        return ()
    from topoaudit.render.fact_rows import fact_sections

    return fact_sections(report)


register_views(FindingView, PlacementView, Fact, ReportView)
