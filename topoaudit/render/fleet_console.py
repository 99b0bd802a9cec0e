"""The fleet on a terminal: verdict, one greppable line per host, groups, outliers, racks, the drain list."""

from __future__ import annotations

from topoaudit.model.fleet import FleetReport
from topoaudit.render import RenderOptions
from topoaudit.render.cells import printable
from topoaudit.render.fleet_text import counts, drain_note, fleet_findings, headline, host_line, outlier_line


def render(report: FleetReport, options: RenderOptions) -> str:
    lines = [headline(report), counts(report), ""]
    lines += [host_line(n) for n in report.nodes]
    lines += ["", "Hardware groups (GPU model and count, NVLink domains, NICs, driver):"]
    lines += [f"  {len(g.hosts):>5} nodes  {g.label}" for g in report.groups]
    lines += ["", f"Outliers ({report.options.outlier_rule}):"]
    lines += [f"  {outlier_line(o)}" for o in report.outliers] or ["  none"]
    others = fleet_findings(report)
    if others:
        lines += ["", "Fleet findings:"]
        lines += [f"  [{f.severity.value}] {f.code}: {f.message}" for f in others]
    if report.racks:
        lines += ["", "NVL racks (trays keyed by cluster UUID and clique id):"]
        for rack in report.racks:
            odd = f"; trays that differ: {', '.join(rack.odd_trays)}" if rack.odd_trays else ""
            lines.append(
                f"  {rack.cluster_uuid} clique {rack.clique_id}: {rack.gpus}/{rack.expected_gpus} GPUs in "
                f"{len(rack.trays)} trays{odd}"
            )
    lines += ["", f"Drain list ({len(report.drain)} nodes), {drain_note(report)}"]
    if report.applied:
        lines += [f"  {r.host}: exit {r.exit_code}: {r.output}" for r in report.applied]
    else:
        lines += [f"  {d.command}" for d in report.drain] or ["  none"]
    # host names, messages and scontrol output come from the nodes: no terminal escapes reach the screen
    return printable("\n".join(lines) + "\n")
