"""The fleet as Markdown (a ticket or a wiki page): the same sections as the console, as tables."""

from __future__ import annotations

import re

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions
from topoaudit.render.fleet_text import (
    IN_NODE_TITLE,
    counts,
    drain_note,
    drain_title,
    fleet_findings,
    headline,
    host_line,
    in_node_line,
)
from topoaudit.render.markdown import cell


def render(report: FleetReport, options: RenderOptions) -> str:
    out = [f"# {headline(report)}", "", counts(report), "", "## Hosts", ""]
    out += _block([host_line(n) for n in report.nodes])
    out += [
        "",
        "## Hardware groups",
        "",
        "| nodes | GPUs | NVLink domains | NICs | driver |",
        "|---|---|---|---|---|",
    ]
    for g in report.groups:
        rates = "/".join(f"{r:g}" for r in g.nic_rates_gbps)
        nics = f"{g.nic_count}" + (f" @ {rates} Gb/s" if rates else "")
        domains = "+".join(str(s) for s in g.domain_sizes)
        out.append(f"| {len(g.hosts)} | {g.gpu_count}x {cell(g.gpu_model)} | {domains} | {nics} | {cell(g.driver)} |")
    out += ["", "## Outliers", "", f"Rule: {report.options.outlier_rule}.", ""]
    if report.outliers:
        out += ["| host | figure | value | group median | ratio |", "|---|---|---|---|---|"]
        out += [
            f"| {cell(o.host)} | {cell(o.figure)} | {o.value:g} {o.unit} | {o.median:g} {o.unit} | {o.ratio:.2f} |"
            for o in report.outliers
        ]
    else:
        out.append("None.")
    others = fleet_findings(report)
    if others:
        out += ["", "## Fleet findings", ""]
        out += [f"- **{f.severity.value}** `{f.code}`: {cell(f.message)}" for f in others]
    if report.racks:
        out += [
            "",
            "## NVL racks",
            "",
            "| cluster UUID | clique | GPUs | trays | trays that differ |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {cell(r.cluster_uuid)} | {cell(str(r.clique_id))} | {r.gpus}/{r.expected_gpus} | {len(r.trays)} | "
            f"{cell(', '.join(r.odd_trays) or 'none')} |"
            for r in report.racks
        ]
    if report.in_node_fabrics:
        out += ["", f"## {IN_NODE_TITLE}", ""]
        out += [f"- {cell(in_node_line(s))}" for s in report.in_node_fabrics]
    out += ["", f"## {drain_title(report)}", "", drain_note(report), ""]
    if report.applied:
        out += _block([f"{r.host}: exit {r.exit_code}: {r.output}" for r in report.applied])
    else:
        out += _block([d.command for d in report.drain] or ["# none"])
    out += [""]
    return "\n".join(out)


def _block(lines: list[str]) -> list[str]:
    """A fenced code block that no text from a node can close: the fence is longer than any backtick run in
    it, and a line is one line (a host name cannot start a heading or a table after the block)."""
    flat = [line.replace("\r", " ").replace("\n", " ") for line in lines]
    longest = max((len(run) for line in flat for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *flat, fence]
