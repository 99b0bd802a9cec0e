"""The terminal view (rich): verdict and findings first, then domains, placements and the link matrix.

Everything fits the width the caller gives (the CLI passes the terminal's, or ``COLUMNS``): long text
wraps, a wide matrix is split into column blocks, and a table with more columns than fit drops the last
ones and says which, so nothing is cut without a word.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from topoaudit.model.report import Report
from topoaudit.render import RenderOptions, cells
from topoaudit.render import rows as rv

if TYPE_CHECKING:
    from topoaudit.model.plan import DeployPlan
    from topoaudit.render.bench_rows import BenchView
    from topoaudit.render.fact_rows import FactsSection
    from topoaudit.render.nccl_rows import NcclSection
    from topoaudit.render.plan_rows import PlanView

VERDICT_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "not judged": "bold magenta"}
MIN_WIDTH = 40


def _style(tone: str) -> str:
    return cells.TONES[tone][0] if tone else ""


def _cell(c: cells.Cell) -> Text:
    return Text(c.text, style=_style(c.tone))


def render(report: Report, options: RenderOptions) -> str:
    width = max(MIN_WIDTH, options.width)
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        force_terminal=options.color,
        no_color=not options.color,
        color_system="standard" if options.color else None,
        highlight=False,
        emoji=False,  # ':name:' in a hostname or title stays text (and rich's emoji table is not loaded)
    )
    v = rv.view(report)
    console.print(_header(v))
    console.print(_findings(v))
    hint = model_hint(report)
    if hint:
        console.print(Text(hint, style="yellow"))
    if v.policy:
        console.print(Text("Policy", style="italic"))
        for label, text in v.policy:
            console.print(Text.assemble((f"  {label:<12}", "bold"), text))
    if v.domains:
        console.print(fit_table(v.domains, width))
        if v.ring:
            console.print(Text(v.ring))
    if v.bottleneck:
        console.print(fit_table(v.bottleneck, width))
    if v.links_known:
        console.print(_placements(v))
    if v.topology_note:
        console.print(Text(v.topology_note, style="dim"))
    if v.matrix:
        console.print(matrix_blocks(v.matrix, width))
    if v.affinity:
        console.print(fit_table(v.affinity, width))
    if v.nccl:
        console.print(_nccl(v.nccl, width))
    for section in v.facts:
        console.print(facts_section(section, width))
    if v.plan:
        console.print(_plan(v.plan))
    if v.bench:
        console.print(_bench(v.bench, width, options.verbose))
    extra = _not_learned(v, options.verbose)
    if extra is not None:
        console.print(extra)
    return buffer.getvalue()


def _nccl(n: NcclSection, width: int) -> Group:
    """NCCL's view: its facts, the transport matrix with its legend, the rank pairs beside the topology."""
    parts: list[RenderableType] = [fit_table(n.facts, width)]
    if n.matrix:
        parts.append(matrix_blocks(n.matrix, width))
        legend = Text("  ")
        for label, tone in n.legend:
            legend.append(f" {label} ", style=cells.TONES[tone][0])
        parts.append(legend)
    if n.pairs:
        parts.append(fit_table(n.pairs, width))
    return Group(*parts)


def facts_section(section: FactsSection, width: int) -> Group:
    """A section of captured or probed facts: grids in column blocks (with their colour legend), tables fitted."""
    parts: list[RenderableType] = []
    for t in section.tables:
        parts.append(matrix_blocks(t, width) if t.matrix else fit_table(t, width))
    if section.legend:
        legend = Text("  ")
        for label, tone in section.legend:
            legend.append(f" {label} ", style=cells.TONES[tone][0])
        parts.append(legend)
    return Group(*parts)


def _header(v: rv.ReportView) -> Panel:
    title = Text.assemble(("topoaudit ", "bold"), (v.verdict.upper(), VERDICT_STYLE.get(v.verdict, "")))
    body = Text(v.summary + "\n")
    body.append(f"exit {v.exit_code}: {v.gate_reason}\n", style="dim" if v.judged else "")
    if v.judged:
        body.append(f"judged: {v.judged}\n", style="dim")
    if v.identified:
        body.append(f"identified: {v.identified}\n", style="dim")
    body.append(f"source: {v.source}", style="dim")
    if v.demo:
        body.append(f"\nDEMO: {v.demo}", style="bold magenta")
    if v.redaction:
        body.append(f"\nRedacted. {v.redaction}", style="dim")
    if v.left_out:
        body.append(f"\nShortened. {rv.left_out_sentence(v.left_out)}", style="yellow")
    return Panel(body, title=title, title_align="left", border_style=VERDICT_STYLE.get(v.verdict, ""))


def _findings(v: rv.ReportView) -> Table | Text:
    if not v.findings:
        return Text("No findings.", style="green")
    table = Table(title="Findings", title_justify="left", show_lines=False, expand=True)
    table.add_column("sev", no_wrap=True)
    table.add_column("code", overflow="fold")
    table.add_column("what was found", ratio=1)
    for f in v.findings:
        # Text, never a str: a message quotes the paste, and rich would read "[/path]" in it as markup
        table.add_row(Text(f.severity, style=_style(f.severity)), Text(f.code), Text(f.message))
    return table


GPU_MODEL_HINT = (
    'GPU model unknown: add --gpu-model "NAME" (the name `nvidia-smi -L` prints) '
    "to `topoaudit analyze` to judge by model."
)


def model_hint(report: Report) -> str:
    """The one line that tells a reader of the terminal how to name the GPU model the input left out; ""
    when the model is known (or named but not in the catalog: a spelling, not a missing option)."""
    if isinstance(report.gpu_model, str) or not any(f.code == "model-unknown" for f in report.findings):
        return ""
    return GPU_MODEL_HINT


def fit_table(t: cells.Table, width: int) -> Group:
    """A shared-model table at ``width`` columns: prose and headers wrap at spaces, numbers and codes
    keep their full width; columns that still cannot fit are left out (last first, never the first)
    and named below the table."""
    prose = [_wraps(t, k) for k in range(len(t.header))]
    words = [max([len(word) for word in t.header[k].split()] + [1]) for k in range(len(t.header))]
    cells = [max([len(row[k].text) for row in t.rows] + [1]) for k in range(len(t.header))]
    # numbers and codes keep their full width, their header wrapping at spaces when room is short
    natural = [max(len(t.header[k]), cells[k]) for k in range(len(t.header))]
    narrow = [max(words[k], cells[k]) for k in range(len(t.header))]
    keep = list(range(len(t.header)))
    dropped: list[str] = []

    def needed(cols: list[int], widths: list[int]) -> int:
        return sum(max(words[k], 12) if prose[k] else widths[k] for k in cols) + 3 * len(cols) + 1

    fixed = natural if needed(keep, natural) <= width else narrow
    while len(keep) > 1 and needed(keep, fixed) > width:
        dropped.insert(0, t.header[keep.pop()])
    table = Table(title=Text(t.title), title_justify="left")  # Text: titles and headers may quote the input
    for k in keep:
        table.add_column(
            Text(t.header[k]), overflow="fold", width=None if prose[k] else fixed[k], ratio=1 if prose[k] else None
        )
    for row in t.rows:
        table.add_row(*(_cell(row[k]) for k in keep))
    parts: list[RenderableType] = [table]
    parts += [Text(note, style="dim") for note in t.notes]
    if dropped:
        parts.append(
            Text(
                f"left out at {width} columns: {', '.join(dropped)} "
                "(a wider terminal, --format markdown or json shows them)",
                style="dim",
            )
        )
    return Group(*parts)


def _wraps(t: cells.Table, k: int) -> bool:
    """A column of prose (a cell with a space and more than a short word) may wrap; numbers may not."""
    return any(" " in row[k].text and len(row[k].text) > 12 for row in t.rows)


def matrix_blocks(t: cells.Table, width: int) -> Group:
    """The link matrix laid out by hand (a rich Table of 20+ columns is slow to measure), split into
    blocks of columns that fit ``width``, each block repeating the row labels."""
    labels = [row[0].text for row in t.rows]
    head = list(t.header[1:])
    label_w = max([len(x) for x in labels] + [4]) + 1
    cell_w = max([6] + [len(h) + 1 for h in head] + [len(c.text) + 2 for row in t.rows for c in row[1:]])
    per_block = max(1, (width - label_w) // cell_w)
    blocks = [range(s, min(s + per_block, len(head))) for s in range(0, len(head), per_block)]
    lines: list[RenderableType] = []
    for n, cols in enumerate(blocks):
        title = t.title
        if len(blocks) > 1:
            title += f" (columns {head[cols[0]]}-{head[cols[-1]]}, block {n + 1} of {len(blocks)})"
        lines.append(Text(title, style="italic"))
        lines.append(Text(" " * label_w + "".join(head[k].center(cell_w) for k in cols), style="bold", no_wrap=True))
        for label, row in zip(labels, t.rows, strict=True):
            line = Text(label.ljust(label_w), style="bold", no_wrap=True)
            for k in cols:
                c = row[k + 1]
                line.append(c.text.center(cell_w), style=_style(c.tone))
            lines.append(line)
    lines += [Text(note, style="dim") for note in t.notes]
    return Group(*lines)


def _placements(v: rv.ReportView) -> Table | Text:
    if not v.placements:
        return Text("Tensor-parallel placements: none (the source describes no GPU-to-GPU links).", style="dim")
    table = Table(title="Tensor-parallel placements (each group on one NVLink domain)", title_justify="left")
    table.add_column("TP", no_wrap=True)
    table.add_column("groups", overflow="fold")
    table.add_column("notes", ratio=1)
    for p in v.placements:
        lines = list(p.groups[:8])
        more = p.more + len(p.groups) - len(lines)
        if more:
            lines.append(f"... {more} more groups (JSON lists all)")
        groups = Text("\n".join(lines)) if lines else Text("none on NVLink", style="red")
        table.add_row(Text(str(p.tp)), groups, Text("\n".join(p.alternatives)))
    return table


def _not_learned(v: rv.ReportView, verbose: bool) -> Group | None:
    parts: list[Text] = [Text(line, style="yellow") for line in v.input_issues]
    parts += [Text(f"rule {rule} skipped: {reason}", style="yellow") for rule, reason in v.skipped]
    facts = v.not_available
    if facts and verbose:
        parts += [Text(f"{f.where} {f.what}: {f.why}", style=_style("failed" if f.failed else "absent")) for f in facts]
    elif facts:
        parts.append(Text(f"{len(facts)} fact(s) not available from this source (--verbose lists them)", style="dim"))
    return Group(*parts) if parts else None


class _FitToConsole:
    """A shared-model table fitted to whatever width the console it is printed on has."""

    def __init__(self, table: cells.Table) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield fit_table(self.table, options.max_width)


def plan_section(plan: DeployPlan) -> Group:
    """The plan: the key numbers, the arithmetic step by step, the domain fit and the alternatives, at
    the width of the console it is printed on."""
    from topoaudit.render.plan_rows import plan_view

    return _plan(plan_view(plan))


def _plan(p: PlanView) -> Group:
    numbers = Table(title="Deploy plan", title_justify="left", show_header=False, box=None, pad_edge=False)
    numbers.add_column("what", style="bold", no_wrap=True)
    numbers.add_column("value")
    for label, c in p.numbers:
        numbers.add_row(Text(label), _cell(c))
    steps = Table(title="How it was computed", title_justify="left", show_header=False, box=None, pad_edge=False)
    steps.add_column("#", justify="right", no_wrap=True)
    steps.add_column("step")
    for i, step in enumerate(p.steps, 1):
        steps.add_row(f"{i}.", Text(step))
    parts: list[RenderableType] = [numbers, steps]
    if p.alternatives:
        parts.append(_FitToConsole(p.alternatives))
    return Group(*parts)


def _bench(b: BenchView, width: int, verbose: bool) -> Group:
    """Groups at a glance (plateau, latency, expectation), the rows of `all` as nccl-tests prints them
    (every group's rows with --verbose), the pairwise matrix and the islands."""
    parts: list[RenderableType] = [fit_table(b.groups, width)]
    shown = [t for t in b.rows if verbose or len(b.rows) == 1 or t.title.startswith("all ")]
    parts += [fit_table(t, width) for t in shown]
    if len(shown) < len(b.rows):
        parts.append(Text(f"{len(b.rows) - len(shown)} more group(s) of rows: --verbose shows them", style="dim"))
    if b.pairs:
        parts.append(matrix_blocks(b.pairs, width))
    if b.islands:
        parts.append(Text(b.islands))
    parts += [Text(x, style="dim") for x in b.footer]
    return Group(*parts)
