"""The terminal view (rich): verdict and findings first, then the domain map and the link matrix."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from topoaudit.model.bench import BenchResult
from topoaudit.model.machine import PathLevel, level_from_code
from topoaudit.model.report import Report
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import show
from topoaudit.plan.model import DomainFit, Plan
from topoaudit.render import RenderOptions
from topoaudit.render.common import absent_facts, cpu_list, matrix, policy_lines, summary

SEVERITY_STYLE = {"fail": "bold red", "warn": "yellow", "info": "cyan"}
VERDICT_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red"}
LEVEL_STYLE = {
    PathLevel.SELF: "dim",
    PathLevel.NVLINK: "bold green",
    PathLevel.PIX: "cyan",
    PathLevel.PXB: "cyan",
    PathLevel.PHB: "yellow",
    PathLevel.NODE: "yellow",
    PathLevel.SYS: "red",
    PathLevel.UNKNOWN: "magenta",
}


def render(report: Report, options: RenderOptions) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=options.width,
        force_terminal=options.color,
        no_color=not options.color,
        color_system="standard" if options.color else None,
        highlight=False,
    )
    console.print(_header(report))
    console.print(_findings(report))
    judged_by = policy_lines(report)
    if judged_by:
        console.print(Text("Policy", style="italic"))
        for label, text in judged_by:
            console.print(Text.assemble((f"  {label:<12}", "bold"), text))
    console.print(_domains(report))
    console.print(_placements(report))
    console.print(_matrix(report))
    if isinstance(report.plan, Plan):  # deploy planner section
        console.print(plan_section(report.plan))
    if isinstance(report.bench, BenchResult):  # all-reduce bench section
        console.print(bench_section(report.bench, options.verbose))
    extra = _not_learned(report, options.verbose)
    if extra is not None:
        console.print(extra)
    return buffer.getvalue()


def _header(report: Report) -> Panel:
    verdict = report.gate.verdict
    title = Text.assemble(("topoaudit ", "bold"), (verdict.upper(), VERDICT_STYLE.get(verdict, "")))
    body = Text(summary(report) + "\n")
    body.append(f"exit {report.gate.exit_code}: {report.gate.reason}\n", style="dim")
    body.append(f"source: {report.source.kind} {report.source.name}", style="dim")
    if report.source.demo:
        body.append("\nDEMO: a bundled example box, not the machine this ran on.", style="bold magenta")
    return Panel(body, title=title, title_align="left", border_style=VERDICT_STYLE.get(verdict, ""))


def _findings(report: Report) -> Table | Text:
    if not report.findings:
        return Text("No findings.", style="green")
    table = Table(title="Findings", title_justify="left", show_lines=False, expand=True)
    table.add_column("sev", no_wrap=True)
    table.add_column("code", no_wrap=True)
    table.add_column("what was found", ratio=1)
    for f in report.findings:
        table.add_row(Text(f.severity.value, style=SEVERITY_STYLE[f.severity.value]), f.code, f.message)
    return table


def _domains(report: Report) -> Table:
    table = Table(title="NVLink domains", title_justify="left")
    for col in ("domain", "GPUs", "build", "all pairs", "NVLinks/pair", "slowest ring hop"):
        table.add_column(col)
    hops = {b.gpus: b.describe for b in report.bottlenecks}
    for d in report.domains:
        links = f"{d.min_links}" if d.min_links == d.max_links else f"{d.min_links}-{d.max_links}"
        table.add_row(
            str(d.id),
            format_gpus(d.gpus),
            d.build,
            "yes" if d.all_pairs else "no",
            links,
            hops.get(d.gpus, "-" if d.size < 2 else "NVLink"),
        )
    if len(report.domains) > 1 and report.bottlenecks:
        whole = report.bottlenecks[0]
        table.caption = f"A ring over all GPUs {format_gpus(whole.gpus)} is limited by: {whole.describe}"
    return table


def _placements(report: Report) -> Table | Text:
    if not report.placements:
        return Text("Tensor-parallel placements: none (the source describes no GPU-to-GPU links).", style="dim")
    return _placement_table(report)


def _placement_table(report: Report) -> Table:
    table = Table(title="Tensor-parallel placements (each group on one NVLink domain)", title_justify="left")
    table.add_column("TP")
    table.add_column("groups")
    table.add_column("notes", ratio=1)
    for p in report.placements:
        lines = list(p.cuda_visible_devices)
        if len(lines) > 8:
            lines = lines[:8] + [f"... {len(lines) - 8} more groups (JSON lists all)"]
        groups = "\n".join(lines) or Text("none on NVLink", style="red")
        table.add_row(str(p.tp), groups, "\n".join(p.alternatives))
    return table


def _matrix(report: Report) -> Group:
    """The link matrix laid out by hand: a rich Table of 20+ columns costs ~90 ms to measure."""
    header, rows = matrix(report)
    width = max(5, *(len(h) + 1 for h in header), *(len(c) + 1 for row in rows for c in row))
    gpus = {g.label: g for g in report.machine.gpus}
    head = Text(" " * width + "".join(h.center(width) for h in header[1:]), style="bold", no_wrap=True)
    lines = [Text("Link matrix", style="italic"), head]
    for row in rows:
        line = Text(row[0].ljust(width), style="bold", no_wrap=True, overflow="ellipsis")
        for code in row[1:]:
            level, _ = level_from_code(code)
            line.append(code.center(width), style=LEVEL_STYLE[level])
        lines.append(line)
    lines.append(Text("CPU / NUMA affinity", style="italic"))
    for label, gpu in gpus.items():
        affinity = f"CPUs {cpu_list(gpu.cpu_affinity)}  NUMA {show(gpu.numa_nodes)}"
        lines.append(Text(f"{label:<{width}}{affinity}", no_wrap=True))
    return Group(*lines)


def _not_learned(report: Report, verbose: bool) -> Group | None:
    parts: list[Text] = []
    for issue in report.input_issues:
        parts.append(Text(f"input line {issue.line} ({issue.action}): {issue.message}", style="yellow"))
    for s in report.skipped:
        parts.append(Text(f"rule {s.rule} skipped: {s.reason}", style="yellow"))
    facts = list(absent_facts(report))
    if facts and verbose:
        parts += [Text(f"{where} {name}: {value}", style="dim") for where, name, value in facts]
    elif facts:
        parts.append(Text(f"{len(facts)} fact(s) not available from this source (--verbose lists them)", style="dim"))
    return Group(*parts) if parts else None


# >>> deploy planner section (topoaudit/plan; owner: planner) >>>
PLAN_VERDICT_STYLE = {"fits-one-domain": "bold green", "at-edge-of-domain": "bold yellow", "crosses-domain": "bold red"}


def plan_section(plan: Plan) -> Group:
    """The plan: the key numbers, the arithmetic step by step, the domain fit and the alternatives."""
    title = Text.assemble(("Deploy plan ", "bold"), (plan.verdict, PLAN_VERDICT_STYLE.get(plan.verdict, "")))
    numbers = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
    numbers.add_column("what", style="bold", no_wrap=True)
    numbers.add_column("value")
    numbers.add_row("model", plan.model_text)
    numbers.add_row(
        "footprint",
        f"{plan.footprint_gb:,.1f} GB (weights {plan.weights_gb:,.1f} + KV {plan.kv_cache_gb:,.1f}"
        f" + margin {plan.safety_margin_gb:,.1f})",
    )
    numbers.add_row(
        "card", f"{plan.gpu_name}: {plan.usable_per_card_gb:,.1f} GB usable of {plan.card_memory_gb:,.0f} GB"
    )
    numbers.add_row(
        "cards / TP",
        f"{plan.cards} cards, TP{plan.tp_size}"
        + (f" x PP{plan.pp_size}" if plan.pp_size > 1 else "")
        + f" ({plan.per_card_gb:,.1f} GB per card, {plan.card_utilisation:.0%})",
    )
    for fit in (plan.standard_node, plan.machine):
        if isinstance(fit, DomainFit):
            style = "green" if fit.fits_one_domain and not fit.at_edge else "yellow" if fit.fits_one_domain else "red"
            numbers.add_row(fit.kind, Text(fit.verdict, style=style))
    steps = Table(title="How it was computed", title_justify="left", show_header=False, box=None, pad_edge=False)
    steps.add_column("#", justify="right", no_wrap=True)
    steps.add_column("step")
    for i, step in enumerate(plan.steps, 1):
        steps.add_row(f"{i}.", Text(step))
    parts: list[Table | Text] = [numbers, steps]
    if plan.alternatives:
        alt = Table(
            title="Alternatives (in the seed's order: bigger cards first, the network last)",
            title_justify="left",
            expand=True,
        )
        alt.add_column("option", ratio=2)
        alt.add_column("cost", ratio=2)
        for a in plan.alternatives:
            alt.add_row(a.summary, Text(a.cost, style="red" if a.kind == "cross-node-tp" else ""))
        parts.append(alt)
    return Group(*parts)


# <<< deploy planner section <<<


# >>> all-reduce bench section (topoaudit/bench; owner: bench) >>>
def bench_section(result: BenchResult, verbose: bool = False) -> Group:
    """Groups at a glance (plateau, latency, expectation), the rows of `all` as nccl-tests prints them
    (every group's rows with --verbose), the pairwise matrix and the islands."""
    from topoaudit.render import bench_text as bt

    parts: list[Table | Text] = [Text(bt.title(result), style="bold")]
    groups = Table(title="All-reduce groups", title_justify="left")
    for name in bt.GROUP_HEADER:
        groups.add_column(name, justify="left" if name in ("group", "ranks") else "right", no_wrap=True)
    for row in bt.group_rows(result):
        groups.add_row(*row)
    parts.append(groups)
    for g in result.groups:
        if g.kind == "pair" or not g.rows or (g.name != "all" and not verbose and len(result.groups) > 1):
            continue
        rows = Table(title=f"{g.name}: every size (slowest rank)", title_justify="left")
        for name in bt.row_header(g):
            rows.add_column(name, justify="right", no_wrap=True)
        for r in g.rows:
            cells = bt.row_cells(g, r)
            bad = isinstance(r.wrong, int) and r.wrong > 0
            rows.add_row(*[Text(c, style="bold red") if bad else Text(c) for c in cells])
        parts.append(rows)
    matrix = bt.pair_matrix(result)
    if matrix is not None:
        header, body = matrix
        pairs = Table(title="Pairwise busbw GB/s (each pair alone)", title_justify="left")
        for name in header:
            pairs.add_column(name, justify="right", no_wrap=True)
        for row in body:
            pairs.add_row(*row)
        parts.append(pairs)
    line = bt.islands_line(result)
    if line:
        parts.append(Text(line))
    parts += [Text(x, style="dim") for x in bt.footer_lines(result)]
    return Group(*parts)


# <<< all-reduce bench section <<<
