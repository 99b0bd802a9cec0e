"""`topoaudit probe` (capture this machine into a snapshot) and `topoaudit audit` (probe, judge, gate)."""

from __future__ import annotations

import click

from topoaudit.cli import gate_options, output_options, write_atomic
from topoaudit.cli_analyze import judge
from topoaudit.cli_bench import bench_options, run_bench_for
from topoaudit.cli_report import bundle_options, finish_report, input_evidence
from topoaudit.loaders import Loaded, load_example, loaded_from_snapshot

DEMO_EXAMPLE = "hgx-h100"


def probe_options(fn):  # type: ignore[no-untyped-def]
    """Options of commands that probe this machine."""
    fn = click.option(
        "--sysfs-root",
        default="/",
        show_default=True,
        hidden=True,
        type=click.Path(file_okay=False),
        help="Read sysfs and /proc under this root (tests).",
    )(fn)
    fn = click.option(
        "--call-timeout",
        type=click.FloatRange(min=0.1),
        default=10.0,
        show_default=True,
        help="Seconds one NVML call may take before it counts as failed.",
    )(fn)
    fn = click.option(
        "--smi-timeout",
        type=click.FloatRange(min=0.1),
        default=20.0,
        show_default=True,
        help="Seconds one nvidia-smi run may take before it counts as failed.",
    )(fn)
    return fn


def _probe(kw: dict[str, object]):  # type: ignore[no-untyped-def]
    from topoaudit.probe.collect import probe

    return probe(
        str(kw.get("sysfs_root") or "/"),
        call_timeout_s=float(kw.get("call_timeout") or 10.0),  # type: ignore[arg-type]
        smi_timeout_s=float(kw.get("smi_timeout") or 20.0),  # type: ignore[arg-type]
    )


@click.command("probe")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the snapshot to FILE (default: stdout).")
@probe_options
def probe_cmd(output: str | None, **kw: object) -> None:
    """Capture this machine (NVML, nvidia-smi, sysfs, environment) into a snapshot JSON.

    \b
    Examples:
      topoaudit probe -o snapshot.json      # on the GPU box
      topoaudit analyze snapshot.json       # anywhere, later: the same verdict as `topoaudit audit`
    """
    from topoaudit.probe.snapshot import snapshot_to_json

    snapshot = _probe(kw)
    text = snapshot_to_json(snapshot)
    lost = sum(1 for g in snapshot.gpus if g.status != "ok")
    summary = f"probed {len(snapshot.gpus)} GPU(s) in {snapshot.probe_wall_s:.2f} s" + (
        f", {lost} lost mid-probe" if lost else ""
    )
    if output:
        write_atomic(__import__("pathlib").Path(output), text)
        click.echo(f"topoaudit: {summary}; snapshot written to {output}", err=True)
    else:
        click.echo(text, nl=False)
        click.echo(f"topoaudit: {summary}", err=True)


@click.command("audit")
@click.option("--demo", is_flag=True, help=f"Audit a bundled example box ({DEMO_EXAMPLE}) instead of this machine.")
@click.option("--bench", "with_bench", is_flag=True, help="Also measure all-reduce (see `topoaudit bench`).")
@bench_options
@gate_options
@output_options
@bundle_options
@probe_options
@click.pass_context
def audit(ctx: click.Context, demo: bool, with_bench: bool, **kw: object) -> None:
    """Probe this machine, judge it and exit with the gate code.

    \b
    Examples:
      topoaudit audit                                         # verdict of this box
      topoaudit audit --expect-domain 8 --tp 8 --out run1/    # gate; bundle with snapshot and reports
      topoaudit audit --demo                                  # the whole pipeline on a bundled example
      topoaudit audit --bench --expect-busbw 350              # probe + all-reduce sweep + verdict
    """
    if demo and with_bench:
        raise click.UsageError("--bench measures this machine; --demo audits a bundled example box, not this one")
    evidence: dict[str, str | bytes]
    if demo:
        loaded: Loaded = load_example(DEMO_EXAMPLE)
        evidence = input_evidence(None, DEMO_EXAMPLE)
    else:
        from topoaudit.probe.snapshot import snapshot_to_json

        snapshot = _probe(kw)
        loaded = loaded_from_snapshot(snapshot, "this machine", kind="live")
        evidence = {"snapshot.json": snapshot_to_json(snapshot)}
        for record in snapshot.commands:
            if isinstance(record.text, str):
                evidence[record.command.replace(" ", "-") + ".txt"] = record.text
    report = judge(loaded, dict(kw))
    if with_bench:  # the bench uses the probed machine: its domains, groups and expected busbw
        benched = run_bench_for(dict(kw), base=report)
        if benched is None:  # a torchrun rank other than 0: rank 0 reports for the job
            ctx.exit(0)
        assert benched is not None
        report = benched
    finish_report(report, kw, evidence)
    ctx.exit(report.gate.exit_code)
