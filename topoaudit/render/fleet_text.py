"""Lines every text format of the fleet shares: the host lines people grep, the outlier and drain lines."""

from __future__ import annotations

from topoaudit.model.fleet import FleetFinding, FleetReport, NodeResult, Outlier


def host_line(node: NodeResult) -> str:
    """``host | PASS``, ``host | FAIL: code, code``, ``host | ERROR: why``, ``host | MISSING: no report``."""
    if node.status == "pass":
        return f"{node.host} | PASS" + (f" (warnings: {', '.join(node.warnings)})" if node.warnings else "")
    if node.status == "fail":
        return f"{node.host} | FAIL: {', '.join(node.codes) or 'gate'}"
    if node.status == "missing":
        return f"{node.host} | MISSING: no report"
    return f"{node.host} | ERROR: {node.reason}"


def headline(report: FleetReport) -> str:
    gate = report.gate
    return f"topoaudit fleet: {gate.verdict.upper()} (exit {gate.exit_code}): {gate.reason}"


def counts(report: FleetReport) -> str:
    by_status: dict[str, int] = {}
    for node in report.nodes:
        by_status[node.status] = by_status.get(node.status, 0) + 1
    parts = [f"{by_status[s]} {s}" for s in ("pass", "fail", "error", "missing") if by_status.get(s)]
    return (
        f"{len(report.nodes)} nodes ({', '.join(parts)}) in {len(report.groups)} hardware group(s); "
        f"{len(report.drain)} to drain"
    )


def outlier_line(o: Outlier) -> str:
    return (
        f"{o.host}: {o.figure} {o.value:g} {o.unit}, group median {o.median:g} {o.unit}, "
        f"ratio {o.ratio:.2f} ({o.direction}, {o.peers} nodes)"
    )


def fleet_findings(report: FleetReport) -> list[FleetFinding]:
    """The fleet's findings other than its outliers (which every format lists in their own section)."""
    return [f for f in report.findings if f.code != "fleet-figure-outlier"]


def drain_note(report: FleetReport) -> str:
    if report.applied:
        return "applied with scontrol (--apply):"
    return "printed, not run (add --apply on a Slurm controller to run them):"
