"""`topoaudit fleet`: many node reports judged alike, one verdict, the outliers and a drain list."""

from __future__ import annotations

import sys
from typing import Any

import click

from topoaudit import formats
from topoaudit.app.common import GateRequest, OutputRequest, available_cores
from topoaudit.cli.options import format_option, gate_options, terminal_width, typed, use_color

FLEET_FORMATS = formats.choices(formats.FLEET_FORMATS)
"""The ``--format`` choices (``topoaudit.formats``)."""


def _output(values: dict[str, Any]) -> OutputRequest:
    to_terminal = values["output"] is None and sys.stdout.isatty()
    return OutputRequest(
        fmt=values["fmt"],
        output=values["output"],
        color=use_color(values["color"], to_terminal),
        width=terminal_width(to_terminal),
    )


fleet_output = typed(
    "out",
    [
        format_option(FLEET_FORMATS),
        click.option(
            "-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE."
        ),
        click.option("--color/--no-color", default=None, help="Colour the console format (default: on a terminal)."),
    ],
    _output,
)


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@gate_options
@click.option(
    "--expect-nodes",
    metavar="FILE|HOSTLIST",
    help="Hosts that must report: a file of host names, or a Slurm host list such as 'gpu[001-064]'.",
)
@click.option(
    "--max-report-age",
    "max_age_h",
    type=click.FloatRange(min=0),
    default=24.0,
    show_default=True,
    help="Hours a node's report may be older than the newest before it is called stale.",
)
@click.option(
    "--rack-gpus",
    type=click.IntRange(min=1),
    default=72,
    show_default=True,
    help="GPUs an NVL rack's NVLink domain is sold with (72, or 36).",
)
@click.option("--apply", is_flag=True, help="Run the drain commands with scontrol (default: print them only).")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Processes judging nodes at once.  [default: the CPU cores this process may run on]",
)
@fleet_output
@click.pass_context
def fleet(
    ctx: click.Context,
    paths: tuple[str, ...],
    gate: GateRequest,
    expect_nodes: str | None,
    max_age_h: float,
    rack_gpus: int,
    apply: bool,
    jobs: int | None,
    out: OutputRequest,
) -> None:
    """Judge many node reports alike and give one verdict: PATH is a node report, snapshot, bundle or
    capture (anything `analyze` reads), a directory of them, or a glob.

    \b
    Prints one line per host (`host | PASS`, `host | FAIL: code, code`), the hardware groups, the
    outliers within each group (median/MAD), duplicate GPU identities, stale and missing nodes, NVL
    racks, and a drain list of `scontrol` commands, which run only with --apply.

    \b
    Examples:
      topoaudit fleet /shared/audit/            # one bundle or report per node
      topoaudit fleet 'reports/*.json' --expect-nodes 'gpu[001-064]' --format html -o fleet.html
      topoaudit fleet /shared/audit/ --policy builtin:hgx-8gpu --apply   # on the Slurm controller
    """
    from topoaudit.app import fleet as use_case
    from topoaudit.app.common import write_text_file
    from topoaudit.render import RenderOptions
    from topoaudit.render.fleet_formats import render_fleet

    request = use_case.FleetRequest(
        paths=paths,
        gate=gate,
        expect_nodes=expect_nodes,
        max_report_age_s=max_age_h * 3600,
        rack_gpus=rack_gpus,
        apply=apply,
        jobs=jobs or available_cores(),
    )
    report = use_case.fleet(request)
    text = render_fleet(report, out.fmt, RenderOptions(color=out.color, width=out.width))
    verdict = f"{report.gate.verdict.upper()} (exit {report.gate.exit_code})"
    if out.output:
        write_text_file(out.output, text)
        click.echo(f"topoaudit fleet: {verdict}; report written to {out.output}", err=True)
    else:
        click.echo(text, nl=False, color=out.color)
        if out.fmt != "console":
            click.echo(f"topoaudit fleet: {verdict}: {report.gate.reason}", err=True)
    ctx.exit(report.gate.exit_code)
