"""`topoaudit healthcheck`: Slurm's HealthCheckProgram -- judge this node, drain it on failure, resume it
when it passes again (only when this check drained it)."""

from __future__ import annotations

import click

from topoaudit.app.audit import ProbeRequest
from topoaudit.app.common import GateRequest
from topoaudit.app.healthcheck import DEFAULT_HEALTHCHECK_CACHE
from topoaudit.cli.options import gate_options, probe_options


@click.command("healthcheck")
@click.option(
    "--cache",
    "cache_path",
    default=DEFAULT_HEALTHCHECK_CACHE,
    show_default=True,
    type=click.Path(dir_okay=False),
    help="The last full result (a report.json); reused while younger than --max-age.",
)
@click.option(
    "--max-age",
    "max_age_s",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    help="Seconds a cached result stays good; older, the node is probed and judged again (0: always).",
)
@click.option("--node", help="Slurm node name (default: $SLURMD_NODENAME, else `hostname -s`).")
@click.option(
    "--drain/--no-drain",
    "apply",
    default=True,
    show_default=True,
    help="Drain the node on failure and resume a node this check drained; --no-drain only judges.",
)
@gate_options
@probe_options
@click.pass_context
def healthcheck(
    ctx: click.Context,
    cache_path: str,
    max_age_s: float,
    node: str | None,
    apply: bool,
    gate: GateRequest,
    probe_request: ProbeRequest,
) -> None:
    """Judge this node for Slurm's HealthCheckProgram (which it must finish within 60 s): drain it with a
    `topoaudit:` reason when it fails; resume it when it passes, but only if this check drained it.

    \b
    Examples (slurm.conf, and by hand):
      HealthCheckProgram=/usr/local/sbin/topoaudit-healthcheck   # a script: exec topoaudit healthcheck ...
      topoaudit healthcheck --policy builtin:hgx-8gpu
      topoaudit healthcheck --no-drain --max-age 0             # probe now, only say the verdict
    """
    from topoaudit.app import healthcheck as use_case

    result = use_case.healthcheck(use_case.HealthCheckRequest(gate, probe_request, cache_path, max_age_s, node, apply))
    verdict = "PASS" if result.healthy else "FAIL"
    age = f"result {result.age_s:.0f} s old, cached" if result.from_cache else "probed now"
    click.echo(f"topoaudit: healthcheck {result.node}: {verdict} ({age}): {result.reason}; slurm: {result.action}")
    ctx.exit(result.exit_code)
