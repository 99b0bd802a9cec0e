"""Markdown for tickets and pull requests: the same content as the console, tables escaped."""

from __future__ import annotations

import json

from topoaudit.model.bench import BenchResult
from topoaudit.model.report import Report
from topoaudit.model.topology import format_gpus
from topoaudit.model.values import Unsupported, show
from topoaudit.plan.model import DomainFit, Plan
from topoaudit.render import RenderOptions
from topoaudit.render.common import absent_facts, cpu_list, matrix, policy_lines, summary

_MD_ESCAPES = str.maketrans(
    {
        **{c: "\\" + c for c in "\\`*_[]~!|"},
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
        "\r": " ",
        "\n": " ",
    }
)


class Md(str):
    """Text that is already Markdown (our own emphasis around escaped values): :func:`cell` keeps it."""


def cell(text: object) -> str:
    """Escape a value for Markdown text or a table cell: emphasis, links/images, code, pipes, HTML, newlines."""
    if isinstance(text, Md):
        return str(text).replace("\r", " ").replace("\n", " ")
    return str(text).translate(_MD_ESCAPES)


def code_span(text: object) -> str:
    """``text`` as one inline code span whose fence no backtick inside can close (newlines flattened)."""
    s = str(text).replace("\r", " ").replace("\n", " ")
    run = cur = 0
    for ch in s:
        cur = cur + 1 if ch == "`" else 0
        run = max(run, cur)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


def render(report: Report, options: RenderOptions) -> str:
    lines = ["# topoaudit report", "", f"**{cell(summary(report))}**", ""]
    if report.source.demo:
        lines += ["> **Demo:** this is a bundled example box, not the machine this ran on.", ""]
    redaction = report.extras.get("redaction")
    if isinstance(redaction, dict):
        lines += [f"> **Redacted.** {cell(redaction.get('note', ''))}", ""]
    host = report.machine.host
    lines += table(
        ["", ""],
        [
            [
                "Verdict",
                Md(f"**{report.gate.verdict.upper()}** (exit {report.gate.exit_code}: {cell(report.gate.reason)})"),
            ],
            ["Source", f"{report.source.kind}: {report.source.name}"],
            ["GPU model", show(report.gpu_model)],
            ["Catalog entry", show(report.catalog_entry)],
            ["Host", show(host.hostname)],
            ["Product", show(host.product)],
            ["Driver", show(host.driver_version)],
            ["CUDA driver", show(host.cuda_driver_version)],
            ["Generated", f"{report.generated_at} by topoaudit {report.tool_version}"],
        ],
    )
    lines += ["", *gpu_lines(report)]
    lines += ["", "## Topology", ""]
    if options.picture:
        lines.append(f"![Topology: NVLink domains, NICs and NUMA nodes]({options.picture})")
    else:
        lines.append(
            "_The topology picture is `topology.svg` in the report bundle "
            "(`topoaudit analyze ... --out DIR`, or `topoaudit report report.json --format html`)._"
        )
    lines += ["", "## Findings", ""]
    if report.findings:
        for f in report.findings:
            lines.append(f"- **{f.severity.value.upper()}** `{f.code}`: {cell(f.message)}")
            if f.evidence:
                lines.append(f"  - evidence: {code_span(json.dumps(f.evidence, sort_keys=True, ensure_ascii=False))}")
            if f.remedy:
                lines.append(f"  - remedy: {cell(f.remedy)}")
    else:
        lines.append("No findings.")
    judged_by = policy_lines(report)
    if judged_by:
        lines += ["", "## Policy", ""] + table(["", ""], [[label, text] for label, text in judged_by])
    lines += ["", "## NVLink domains", ""]
    lines += table(
        ["Domain", "GPUs", "Build", "All pairs linked", "NVLinks per pair"],
        [
            [
                str(d.id),
                format_gpus(d.gpus),
                d.build,
                "yes" if d.all_pairs else "no",
                f"{d.min_links}" if d.min_links == d.max_links else f"{d.min_links}-{d.max_links}",
            ]
            for d in report.domains
        ],
    )
    if report.bottlenecks:
        lines += ["", "## Slowest hop of a ring", ""]
        lines += table(
            ["GPUs", "Slowest hop", "Between"],
            [
                [
                    format_gpus(b.gpus),
                    b.describe,
                    f"GPU{b.slowest_hop.a}-GPU{b.slowest_hop.b}" if b.slowest_hop else "-",
                ]
                for b in report.bottlenecks
            ],
        )
    lines += ["", "## Tensor-parallel placements", ""]
    if not report.placements:
        lines.append("None computed: the source describes no GPU-to-GPU links.")
    for p in report.placements:
        mark = "" if p.fits else " (does not fit on NVLink)"
        lines.append(f"- **TP={p.tp}**{mark}")
        lines += [f"  - `{v}`" for v in p.cuda_visible_devices]
        lines += [f"  - {cell(a)}" for a in p.alternatives]
    header, rows = matrix(report)
    lines += ["", "## Link matrix", ""] + table(header, rows)
    numa = [[g.label, cpu_list(g.cpu_affinity), show(g.numa_nodes)] for g in report.machine.gpus]
    lines += ["", "## CPU and NUMA affinity", ""] + table(["GPU", "CPUs", "NUMA"], numa)
    if report.machine.nics:
        lines += ["", "## NICs", ""] + table(
            ["NIC", "Device"], [[n.label, show(n.device)] for n in report.machine.nics]
        )
    if report.input_issues:
        lines += ["", "## Input issues", ""]
        lines += [f"- line {i.line} ({i.action}): {cell(i.message)}" for i in report.input_issues]
    if report.skipped:
        lines += ["", "## Rules skipped", ""] + [f"- `{s.rule}`: {cell(s.reason)}" for s in report.skipped]
    if isinstance(report.plan, Plan):  # deploy planner section
        lines += ["", *plan_lines(report.plan)]
    if isinstance(report.bench, BenchResult):  # all-reduce bench section
        lines += ["", *bench_lines(report.bench)]
    lines += extras_lines(report)
    facts = list(absent_facts(report))
    if facts:
        lines += ["", "## Not learned from this source", ""]
        lines += [f"- {where} `{name}`: {cell(value)}" for where, name, value in facts]
    return "\n".join(lines) + "\n"


# >>> reports (owner: reports): machine identity and other sections, as in the HTML page >>>
_GPU_FIELDS = (("name", "Name"), ("pci_bus_id", "Bus id"), ("serial", "Serial"), ("uuid", "UUID"))


def gpu_lines(report: Report) -> list[str]:
    """GPU identity table: the columns this source has (names, bus ids, serials, UUIDs)."""
    gpus = report.machine.gpus
    cols = [
        (name, title)
        for name, title in _GPU_FIELDS
        if not all(isinstance(getattr(g, name), Unsupported) for g in gpus)
        or len({getattr(g, name).reason for g in gpus if isinstance(getattr(g, name), Unsupported)}) > 1
    ]
    if not cols or not gpus:
        return []
    rows = [[g.label, *(show(getattr(g, name)) for name, _ in cols)] for g in gpus]
    return ["## GPUs", "", *table(["GPU", *(t for _, t in cols)], rows)]


def extras_lines(report: Report) -> list[str]:
    """Sections other stages added without a dedicated view, as JSON blocks."""
    shown = {k: v for k, v in report.extras.items() if k not in ("redaction", "bench")}
    lines: list[str] = []
    for key in sorted(shown):
        text = json.dumps(shown[key], indent=2, ensure_ascii=False, sort_keys=True, default=str)
        fence = "~~~~" if "```" in text else "```"
        while fence in text:
            fence += "~"
        lines += ["", f"## {cell(key)}", "", f"{fence}json", text, fence]
    return lines


# <<< reports <<<


# >>> deploy planner section (topoaudit/plan; owner: planner) >>>
def plan_lines(plan: Plan, heading: str = "##") -> list[str]:
    """The plan as Markdown: key numbers, the arithmetic, the domain fit, the alternatives."""
    rows = [
        ["Verdict", Md(f"**{cell(plan.verdict)}**")],
        ["Model", plan.model_text],
        ["Footprint", f"{plan.footprint_gb:,.1f} GB"],
        ["Card", f"{plan.gpu_name} ({plan.usable_per_card_gb:,.1f} GB usable of {plan.card_memory_gb:,.0f} GB)"],
        ["Cards", f"{plan.cards} (TP{plan.tp_size}" + (f" x PP{plan.pp_size}" if plan.pp_size > 1 else "") + ")"],
    ]
    for fit in (plan.standard_node, plan.machine):
        if isinstance(fit, DomainFit):
            rows.append([fit.kind, fit.verdict])
    lines = [f"{heading} Deploy plan", "", *table(["", ""], rows), "", f"{heading}# Arithmetic", ""]
    lines += [f"{i}. {cell(step)}" for i, step in enumerate(plan.steps, 1)]
    if plan.alternatives:
        lines += ["", f"{heading}# Alternatives", ""]
        lines += table(["Option", "Cost"], [[a.summary, a.cost] for a in plan.alternatives])
    return lines


# <<< deploy planner section <<<


# >>> all-reduce bench section (topoaudit/bench; owner: bench) >>>
def bench_lines(result: BenchResult, heading: str = "##") -> list[str]:
    """The bench as Markdown: groups, every row of every group, the pairwise matrix, islands, notes."""
    from topoaudit.render import bench_text as bt

    lines = [f"{heading} All-reduce bench", "", cell(bt.title(result)), ""]
    lines += table(bt.GROUP_HEADER, bt.group_rows(result))
    for g in result.groups:
        if g.kind == "pair" or not g.rows:
            continue
        lines += ["", f"{heading}# {cell(g.name)} (ranks {','.join(map(str, g.ranks))})", ""]
        lines += table(bt.row_header(g), [bt.row_cells(g, r) for r in g.rows])
    matrix = bt.pair_matrix(result)
    if matrix is not None:
        lines += ["", f"{heading}# Pairwise busbw (GB/s, each pair alone)", ""] + table(*matrix)
    line = bt.islands_line(result)
    if line:
        lines += ["", cell(line)]
    footer = bt.footer_lines(result)
    if footer:
        lines += [""] + [f"- {cell(x)}" for x in footer]
    return lines


# <<< all-reduce bench section <<<
