"""Lines every text format of the fleet shares: the host lines people grep, the outlier and drain lines."""

from __future__ import annotations

from topoaudit.model.fleet import FabricScope, FleetFinding, FleetReport, NodeResult, Outlier


def plural(count: int, word: str, many: str = "") -> str:
    """``1 node``, ``2 nodes`` (``many`` for an irregular plural)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def host_line(node: NodeResult) -> str:
    """``host | PASS``, ``host | FAIL: code, code``, ``host | ERROR: why``, ``host | MISSING: no report``;
    a saved report the fleet judged otherwise than it was saved says so after ``--``."""
    note = f" -- {node.note}" if node.note else ""
    if node.status == "pass":
        return f"{node.host} | PASS" + (f" (warnings: {', '.join(node.warnings)})" if node.warnings else "") + note
    if node.status == "fail":
        return f"{node.host} | FAIL: {', '.join(node.codes) or 'gate'}" + note
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
        f"{plural(len(report.nodes), 'node')} ({', '.join(parts)}) in "
        f"{plural(len(report.groups), 'hardware group')}; {len(report.drain)} to drain"
    )


def outlier_line(o: Outlier) -> str:
    return (
        f"{o.host}: {o.figure} {o.value:g} {o.unit}, group median {o.median:g} {o.unit}, "
        f"ratio {o.ratio:.2f} ({o.direction}, {plural(o.peers, 'node')})"
    )


def in_node_line(scope: FabricScope) -> str:
    """Fabric-attached nodes whose NVLink domain is the node's own, and the evidence that says so."""
    return f"{plural(len(scope.hosts), 'node')} of {scope.gpu_model}: " + "; ".join(scope.evidence)


IN_NODE_TITLE = "NVLink domains inside the node (fabric-attached, no rack assembled)"


def fleet_findings(report: FleetReport) -> list[FleetFinding]:
    """The fleet's findings other than its outliers (which every format lists in their own section)."""
    return [f for f in report.findings if f.code != "fleet-figure-outlier"]


def drain_title(report: FleetReport) -> str:
    return f"Drain list ({plural(len(report.drain), 'node')})"


def drain_note(report: FleetReport) -> str:
    if report.applied:
        return "applied with scontrol (--apply):"
    return "printed, not run (add --apply on a Slurm controller to run them):"
