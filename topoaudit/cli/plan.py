"""`topoaudit plan`: size a model, count the cards, and check the TP group against an NVLink domain."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import click

from topoaudit import formats
from topoaudit.app.common import OutputRequest
from topoaudit.cli.options import plan_output_options, planner_options, print_examples

if TYPE_CHECKING:
    from topoaudit.model.plan import PlanRequest
    from topoaudit.model.report import Report

PLAN_FORMATS = formats.choices(formats.REPORT_FORMATS, plan=True)


@click.command("plan")
@planner_options
@click.option(
    "--from",
    "from_path",
    type=click.Path(allow_dash=True),
    metavar="PATH",
    help="Check the plan against this machine: a snapshot, a saved report or `nvidia-smi topo -m` text.",
)
@click.option("--example", metavar="NAME", help="Check the plan against a bundled example box; `--example list`.")
@click.option(
    "--nics",
    metavar="COUNTxGBITS",
    help="One machine's NICs, for a TP group across machines: 8x400, 1x800. Default: NCCL's NET/IB lines in "
    "--from, else the catalog machine's or the reference node's.",
)
@plan_output_options(PLAN_FORMATS)
@click.pass_context
def plan(
    ctx: click.Context,
    plan: PlanRequest | None,
    from_path: str | None,
    example: str | None,
    nics: str | None,
    out: OutputRequest,
) -> None:
    """Size a model and check that its tensor-parallel group fits one NVLink domain.

    The footprint is weights (parameters x bytes per parameter) + KV-cache headroom (25% by default) +
    a safety margin; the card count and TP size follow from the card's memory. The TP group is checked
    against the GPU model's standard node (or the catalog machine --gpu names: a DGX Station is one GPU, its next
    GPU another station over ConnectX-8) and, with --from/--example, against that machine's real NVLink domains.
    With --layers, --hidden and --batch, the TP group's all-reduces per decode step are timed inside one NVLink
    domain and across what the group crosses, and the ceiling that puts on tokens per second is printed.
    `--format json` writes a report (with its plan) that `topoaudit report` re-renders.
    Exit 1 when the group cannot stay inside one domain (or the checked machine has failing findings);
    2 on a bad option value or combination; 4 when the --from input is unreadable or its GPU model
    cannot be sized (pass --gpu).

    \b
    Examples:
      topoaudit plan --params 744B --precision int4 --gpu H200
      topoaudit plan --params 1600B --active 49B --precision int4 --gpu H200 --kv-headroom 0.25
      topoaudit plan --params 753B --precision nvfp4 --gpu GB300
      topoaudit plan --weights-gb 464 --gpu "DGX Station GB300" --kv-headroom 0.05 \
        --layers 78 --hidden 6144 --batch 16
      topoaudit plan --weights-gb 464 --from snapshot.json
      topoaudit plan --params 1600B --precision int4 --example h200-nvl-split
    """
    from topoaudit.app import plan as use_case
    from topoaudit.app.common import MachineInput, publish, write_text_file

    if example == "list":
        print_examples(out.fmt)
        ctx.exit(0)
    if plan is None:
        raise click.UsageError("give the model size: --params N --precision FMT, or --weights-gb GB")
    if from_path and example:
        raise click.UsageError("give --from PATH or --example NAME, not both")
    machine = MachineInput(from_path, example) if from_path or example else None
    report = use_case.plan(use_case.PlanCommandRequest(plan, machine, nics))
    if out.fmt == "json":
        published = publish(report, out)
        text, written = published.text, published.written_to
    else:
        text = _plan_view(report, out)
        written = out.output
        if written:
            write_text_file(written, text)
    code = report.gate.exit_code
    if written:
        click.echo(f"topoaudit plan: {_verdict(report)} (exit {code}); written to {written}", err=True)
    else:
        click.echo(text, nl=False)
    ctx.exit(code)


def _verdict(report: Report) -> str:
    from topoaudit.model.plan import DeployPlan

    return report.plan.verdict if isinstance(report.plan, DeployPlan) else report.gate.verdict


def _checked_against(report: Report) -> str:
    return report.source.name if report.source.kind == "plan" else f"{report.source.kind} {report.source.name}"


def _plan_view(report: Report, out: OutputRequest) -> str:
    """The plan on its own (console or Markdown): what it was checked against, the plan, its finding."""
    from topoaudit.judge.plan_fit import FINDING_CODE
    from topoaudit.model.plan import DeployPlan

    plan = report.plan
    assert isinstance(plan, DeployPlan), "the planner always returns a plan"
    source, demo, code = _checked_against(report), report.source.demo, report.gate.exit_code
    crossing = next((f for f in report.findings if f.code == FINDING_CODE), None)
    if out.fmt == "markdown":
        from topoaudit.render.markdown import cell, plan_lines

        lines = ["# topoaudit plan", "", f"Checked against: {cell(source)} (exit {code})", ""]
        if demo:
            lines += ["> **Demo:** a bundled example box, not the machine this ran on.", ""]
        return "\n".join([*lines, *plan_lines(plan)]) + "\n"
    from rich.console import Console
    from rich.text import Text

    from topoaudit.render.console import plan_section

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=out.width,
        force_terminal=out.color,
        no_color=not out.color,
        color_system="standard" if out.color else None,
        highlight=False,
        emoji=False,  # ':name:' in a hostname or title stays text (and rich's emoji table is not loaded)
    )
    console.print(Text(f"checked against: {source}"))
    if demo:
        console.print(Text("DEMO: a bundled example box, not the machine this ran on.", style="bold magenta"))
    console.print(plan_section(plan))
    if crossing is not None:
        console.print(Text(f"FAIL {crossing.code}: {crossing.message}", style="bold red"))
        console.print(Text(f"remedy: {crossing.remedy}"))
    console.print(Text(f"exit {code}: {plan.verdict if code in (0, 1) else report.gate.reason}", style="dim"))
    return buffer.getvalue()
