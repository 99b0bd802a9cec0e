"""`topoaudit bench`: measure all-reduce over every GPU (or CPU ranks with gloo) and judge the numbers.

torch is imported only when this command runs (``topoaudit.bench`` imports it inside functions).
"""

from __future__ import annotations

import dataclasses
import os
import sys

import click

from topoaudit.app.bench import SweepRequest
from topoaudit.app.common import GateRequest, OutputRequest
from topoaudit.cli.options import gate_options, output_options, show_report, sweep_options, with_progress


@click.command()
@sweep_options(with_topology=True)
@click.option(
    "--algo",
    type=click.Choice(["ring", "nvls", "tree"]),
    default=None,
    help="Force NCCL's all-reduce algorithm (sets NCCL_ALGO) and judge against that algorithm's figure; "
    "--algo ring measures the ring baseline on an NVLS box.",
)
@gate_options
@output_options
@click.pass_context
def bench(ctx: click.Context, sweep: SweepRequest, algo: str | None, gate: GateRequest, out: OutputRequest) -> None:
    """Measure all-reduce bus bandwidth over the GPUs of this machine (or a torchrun job).

    \b
    Examples:
      topoaudit bench                                   # all GPUs, NCCL, 8 B .. 4 GiB
      topoaudit bench --groups all,domains,cross,pairs  # localise a slow path
      topoaudit bench --backend gloo --nproc 4 --max-bytes 16M --out bench-run/
      topoaudit bench --algo ring --max-bytes 16G             # the ring baseline, not NVLS
      torchrun --nnodes 2 --nproc-per-node 8 --rdzv-endpoint HOST:29500 -m topoaudit bench
    """
    from topoaudit.app import bench as use_case
    from topoaudit.app.common import publish
    from topoaudit.model.bench import BenchResult

    sweep = dataclasses.replace(sweep, algo=algo or "")
    judged = with_progress(lambda progress: use_case.bench(use_case.BenchRequest(sweep, gate), progress), out.fmt)
    if judged is None:  # a launched rank other than 0: rank 0 reports for the job
        ctx.exit(0)
        return
    report = judged.report
    show_report(publish(report, out, judged.evidence), out)
    if isinstance(report.bench, BenchResult) and report.bench.status != "complete":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(report.gate.exit_code)  # a wedged communicator must not hang interpreter teardown
    ctx.exit(report.gate.exit_code)
