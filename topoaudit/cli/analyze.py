"""`topoaudit analyze`: judge a captured machine (any input :mod:`topoaudit.readers` reads, or a bundled example)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from topoaudit.app.common import GateRequest, OutputRequest
from topoaudit.cli.options import EXAMPLE_HELP, gate_options, output_options, plan_options, print_examples, show_report
from topoaudit.readers import inputs_sentence

if TYPE_CHECKING:
    from topoaudit.model.plan import PlanRequest


HELP = f"""Analyse PATH (or - for standard input): {inputs_sentence()}; a report.json may also be given as the
--out bundle directory holding it. Pasted together, a `nvidia-smi topo -m` and a capture of the same box are read
as one input.

\b
Examples:
  nvidia-smi topo -m > topo.txt && topoaudit analyze topo.txt
  nvidia-smi topo -m | topoaudit analyze -
  topoaudit analyze topo.txt --expect-domain 8 --tp 8     # gate: exit 1 if TP=8 leaves NVLink
  all_reduce_perf -b 8 -e 4G -f 2 -g 8 > nccl.txt && topoaudit analyze nccl.txt
  NCCL_DEBUG=INFO torchrun ... > nccl.log 2>&1 && topoaudit analyze nccl.log   # NCCL's transports
  topoaudit analyze --example h200-nvl-split --format json
"""


@click.command(help=HELP)
@click.argument("path", required=False, type=click.Path(allow_dash=True))
@click.option("--example", metavar="NAME", help=EXAMPLE_HELP)
@click.option(
    "--expect-busbw",
    type=click.FloatRange(min=0, min_open=True),
    help="Fail unless a pasted all-reduce sweep's large-message busbw reaches X GB/s (a figure to hold it to when "
    "the paste names no GPU model).",
)
@gate_options
@plan_options
@output_options
@click.pass_context
def analyze(
    ctx: click.Context,
    path: str | None,
    example: str | None,
    expect_busbw: float | None,
    gate: GateRequest,
    plan: PlanRequest | None,
    out: OutputRequest,
) -> None:
    """Judge a captured machine (the help above lists what it reads)."""
    from topoaudit.app import analyze as use_case
    from topoaudit.app.common import MachineInput, publish

    if example == "list":
        print_examples(out.fmt)
        ctx.exit(0)
    request = use_case.AnalyzeRequest(
        MachineInput(path, example), gate, plan, keep_evidence=bool(out.out_dir), expect_busbw_gbps=expect_busbw
    )
    judged = use_case.analyze_input(request)
    published = publish(judged.report, out, judged.evidence)
    show_report(published, out)
    ctx.exit(judged.report.gate.exit_code)
