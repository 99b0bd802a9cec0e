"""`topoaudit probe` (capture this machine into a snapshot) and `topoaudit audit` (probe, judge, gate)."""

from __future__ import annotations

import click

from topoaudit.app.audit import DEMO_EXAMPLE, ProbeRequest
from topoaudit.app.bench import SweepRequest
from topoaudit.app.common import GateRequest, OutputRequest
from topoaudit.cli.options import gate_options, output_options, probe_options, show_report, sweep_options, with_progress


@click.command("probe")
@click.option("-o", "--output", type=click.Path(), help="Write the snapshot to FILE (default: stdout).")
@probe_options
def probe(output: str | None, probe_request: ProbeRequest) -> None:
    """Capture this machine (NVML, nvidia-smi, sysfs, environment) into a snapshot JSON.

    \b
    Examples:
      topoaudit probe -o snapshot.json      # on the GPU box
      topoaudit analyze snapshot.json       # anywhere, later: the same verdict as `topoaudit audit`
    """
    from topoaudit.app import audit as use_case
    from topoaudit.app.common import write_text_file

    captured = use_case.probe(probe_request)
    if output:
        write_text_file(output, captured.snapshot_json)
        click.echo(f"topoaudit: {captured.summary}; snapshot written to {output}", err=True)
    else:
        click.echo(captured.snapshot_json, nl=False)
        click.echo(f"topoaudit: {captured.summary}", err=True)


@click.command("audit")
@click.option("--demo", is_flag=True, help=f"Audit a bundled example box ({DEMO_EXAMPLE}) instead of this machine.")
@click.option("--bench", "with_bench", is_flag=True, help="Also measure all-reduce (see `topoaudit bench`).")
@sweep_options(with_topology=False)
@gate_options
@output_options
@probe_options
@click.pass_context
def audit(
    ctx: click.Context,
    demo: bool,
    with_bench: bool,
    sweep: SweepRequest,
    gate: GateRequest,
    out: OutputRequest,
    probe_request: ProbeRequest,
) -> None:
    """Probe this machine, judge it and exit with the gate code.

    \b
    Examples:
      topoaudit audit                                         # verdict of this box
      topoaudit audit --expect-domain 8 --tp 8 --out run1/    # gate; bundle with snapshot and reports
      topoaudit audit --demo                                  # the whole pipeline on a bundled example
      topoaudit audit --bench --expect-busbw 350              # probe + all-reduce sweep + verdict
    """
    from topoaudit.app import audit as use_case
    from topoaudit.app.common import publish

    request = use_case.AuditRequest(gate, probe_request, demo, sweep if with_bench else None)
    judged = (
        with_progress(lambda progress: use_case.audit(request, progress), out.fmt)
        if with_bench
        else use_case.audit(request)
    )
    if judged is None:  # a torchrun rank other than 0: rank 0 reports for the job
        ctx.exit(0)
        return
    show_report(publish(judged.report, out, judged.evidence), out)
    ctx.exit(judged.report.gate.exit_code)
