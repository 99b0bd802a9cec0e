"""`topoaudit nccl-topo`: an NCCL_TOPO_FILE for a box whose PCIe tree NCCL cannot see (VMs that flatten it)."""

from __future__ import annotations

import click

from topoaudit.app.audit import ProbeRequest
from topoaudit.cli.options import probe_options


@click.command("nccl-topo")
@click.argument("path", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the file to FILE (default: stdout).")
@click.option(
    "--switch",
    "switches",
    multiple=True,
    metavar="DEV,DEV,...",
    help="Devices that share one PCIe switch (bus ids, GPU3, mlx5_0); once per switch. For a VM whose tree is flat.",
)
@click.option(
    "--no-nvlinks",
    is_flag=True,
    help="Leave the NVLinks out: NCCL then detects them itself (by default the probed ones are written).",
)
@probe_options
def nccl_topo(
    path: str | None, output: str | None, switches: tuple[str, ...], no_nvlinks: bool, probe_request: ProbeRequest
) -> None:
    """Write an NCCL_TOPO_FILE: each GPU's and NIC's NUMA node, the PCIe switches above it, its NVLinks.

    Without PATH, probes this machine; PATH is a snapshot (`topoaudit probe -o snapshot.json`) or a saved
    report of one. Prints the NCCL_TOPO_FILE=... line to use. In a VM whose PCIe tree is flat it says so: give
    the switch groups with --switch, or use the provider's file.

    \b
    Examples:
      topoaudit nccl-topo -o topo.xml                  # on the GPU box
      topoaudit nccl-topo snapshot.json -o topo.xml    # anywhere, from a saved probe
      topoaudit nccl-topo -o topo.xml --switch GPU0,GPU1,mlx5_0 --switch GPU2,GPU3,mlx5_1
    """
    from topoaudit.app import nccl_topo as use_case

    request = use_case.NcclTopoRequest(path, output, switches, not no_nvlinks, probe_request)
    result = use_case.nccl_topo(request)
    for warning in result.warnings:
        click.echo(f"topoaudit: warning: {warning}", err=True)
    if output:
        click.echo(f"topoaudit: wrote {output}: {result.summary}", err=True)
        click.echo(result.env_line)
    else:
        click.echo(result.xml, nl=False)
        click.echo(f"topoaudit: {result.summary}; save it and set NCCL_TOPO_FILE to its path", err=True)
