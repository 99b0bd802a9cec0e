"""Markdown for tickets and pull requests: the rows every format shares, every value escaped."""

from __future__ import annotations

from topoaudit.model.plan import DeployPlan
from topoaudit.model.report import Report
from topoaudit.render import RenderOptions
from topoaudit.render.bench_rows import BenchView
from topoaudit.render.cells import Cell, Table
from topoaudit.render.plan_rows import PlanView, plan_view
from topoaudit.render.rows import left_out_sentence, view

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


def table(header: list[str] | tuple[str, ...], rows: list[list[str]] | list[tuple[str, ...]]) -> list[str]:
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


def _text(c: Cell) -> str:
    return Md(f"**{cell(c.text)}**") if c.tone in ("fail", "strong") and c.text else c.text


def rows_table(t: Table) -> list[str]:
    """A shared-model table, its notes as a list below it."""
    out = table(t.header, [[_text(c) for c in row] for row in t.rows])
    if t.notes:
        out += ["", *(f"- {cell(n)}" for n in t.notes)]
    return out


def render(report: Report, options: RenderOptions) -> str:
    v = view(report)
    lines = ["# topoaudit report", "", f"**{cell(v.summary)}**", ""]
    if v.demo:
        lines += [f"> **Demo:** {cell(v.demo)}", ""]
    if v.redaction:
        lines += [f"> **Redacted.** {cell(v.redaction)}", ""]
    if v.left_out:
        lines += [f"> **Shortened.** {cell(left_out_sentence(v.left_out))}", ""]
    verdict = Md(f"**{cell(v.verdict.upper())}** (exit {v.exit_code}: {cell(v.gate_reason)})")
    covered = [["Judged", cell(v.judged)]] if v.judged else []
    lines += table(["", ""], [["Verdict", verdict], *covered, *([label, c.text] for label, c in v.identity)])
    lines += ["", f"Generated {cell(v.generated)}."]
    if v.gpus:
        lines += ["", "## GPUs", "", *rows_table(v.gpus)]
    if v.topology_note:
        lines += ["", cell(v.topology_note)]
    if v.links_known:
        lines += ["", "## Topology", ""]
        if options.picture:
            lines.append(f"![Topology: NVLink domains, NICs and NUMA nodes]({options.picture})")
        else:
            lines.append(
                "_The topology picture is `topology.svg` in the report bundle "
                "(`topoaudit analyze ... --out DIR`, or `topoaudit report report.json --format html`)._"
            )
    lines += ["", "## Findings", ""]
    for f in v.findings:
        lines.append(f"- **{f.severity.upper()}** {code_span(f.code)}: {cell(f.message)}")
        if f.evidence:
            lines.append(f"  - evidence: {code_span('; '.join(f.evidence))}")
        if f.remedy:
            lines.append(f"  - remedy: {cell(f.remedy)}")
    if not v.findings:
        lines.append("No findings.")
    if v.policy:
        lines += ["", "## Policy", "", *table(["", ""], [[label, text] for label, text in v.policy])]
    if v.domains:
        lines += ["", "## NVLink domains", "", *rows_table(v.domains)]
        if v.ring:
            lines += ["", cell(v.ring)]
    if v.bottleneck:
        lines += ["", f"## {v.bottleneck.title}", "", *rows_table(v.bottleneck)]
    if v.links_known:
        lines += ["", "## Tensor-parallel placements", ""]
        if not v.placements:
            lines.append("None computed: the source describes no GPU-to-GPU links.")
        for p in v.placements:
            lines.append(f"- **TP={p.tp}**" + ("" if p.fits else " (does not fit on NVLink)"))
            lines += [f"  - {code_span(g)}" for g in p.groups]
            if p.more:
                lines.append(f"  - ... {p.more} more groups (report.json lists all)")
            lines += [f"  - {cell(a)}" for a in p.alternatives]
    if v.matrix:
        lines += ["", f"## {v.matrix.title}", "", *rows_table(v.matrix)]
    if v.affinity:
        lines += ["", "## CPU and NUMA affinity", "", *rows_table(v.affinity)]
    if v.nics:
        lines += ["", "## NICs", "", *rows_table(v.nics)]
    if v.nccl:
        lines += ["", "## NCCL's view", "", *rows_table(v.nccl.facts)]
        if v.nccl.matrix:
            lines += ["", f"### {v.nccl.matrix.title}", "", *rows_table(v.nccl.matrix)]
            lines += ["", "Legend: " + "; ".join(cell(label) for label, _ in v.nccl.legend) + "."]
        if v.nccl.pairs:
            lines += ["", f"### {v.nccl.pairs.title}", "", *rows_table(v.nccl.pairs)]
    for section in v.facts:
        lines += ["", f"## {cell(section.title)}"]
        for t in section.tables:
            lines += ["", f"### {cell(t.title)}", "", *rows_table(t)]
        if section.legend:
            lines += ["", "Legend: " + "; ".join(cell(label) for label, _ in section.legend) + "."]
    if v.bench:
        lines += ["", *_bench_lines(v.bench)]
    if v.plan:
        lines += ["", *_plan_lines(v.plan)]
    for key, text in v.extras:
        fence = "~~~~" if "```" in text else "```"
        while fence in text:
            fence += "~"
        lines += ["", f"## {cell(key)}", "", f"{fence}json", text, fence]
    if v.input_issues or v.skipped or v.not_available:
        lines += ["", "## What could not be probed", ""]
        lines += [f"- {cell(line)}" for line in v.input_issues]
        lines += [f"- rule {code_span(rule)} skipped: {cell(reason)}" for rule, reason in v.skipped]
        lines += [f"- {cell(f.where)} {code_span(f.what)}: {cell(f.why)}" for f in v.not_available]
        if v.not_available:
            lines += ["", f"{len(v.not_available)} fact(s) not available from this source."]
    return "\n".join(lines) + "\n"


def plan_lines(plan: DeployPlan, heading: str = "##") -> list[str]:
    """The plan as Markdown: key numbers, the arithmetic, the domain fit, the alternatives."""
    return _plan_lines(plan_view(plan), heading)


def _plan_lines(p: PlanView, heading: str = "##") -> list[str]:
    lines = [f"{heading} Deploy plan", "", *table(["", ""], [[label, _text(c)] for label, c in p.numbers])]
    lines += ["", f"{heading}# Arithmetic", ""]
    lines += [f"{i}. {cell(step)}" for i, step in enumerate(p.steps, 1)]
    if p.alternatives:
        lines += ["", f"{heading}# Alternatives", "", *rows_table(p.alternatives)]
    return lines


def _bench_lines(b: BenchView, heading: str = "##") -> list[str]:
    lines = [f"{heading} All-reduce bench", "", cell(b.title), "", *rows_table(b.groups)]
    for t in b.rows:
        lines += ["", f"{heading}# {cell(t.title)}", "", *rows_table(t)]
    if b.pairs:
        lines += ["", f"{heading}# {cell(b.pairs.title)}", "", *rows_table(b.pairs)]
    if b.islands:
        lines += ["", cell(b.islands)]
    if b.footer:
        lines += ["", *(f"- {cell(x)}" for x in b.footer)]
    return lines
