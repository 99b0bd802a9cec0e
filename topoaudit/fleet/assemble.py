"""Node summaries -> the fleet report: groups, outliers, duplicates, stale and missing nodes, racks, drain list.

:func:`assemble` consumes the summaries one at a time and keeps per node only a result row, the figures
(packed in arrays per hardware group) and the GPU identities, so memory grows with the summary alone.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from topoaudit.errors import InputError
from topoaudit.fleet.drain import NOT_DRAINED, drain_command, drain_reason
from topoaudit.fleet.node_pairs import unreported_nodes
from topoaudit.fleet.outliers import outliers_of
from topoaudit.fleet.racks import assemble_racks, usual_fabric
from topoaudit.fleet.summary import LOWER_IS_BETTER_UNITS, Fingerprint, NodeSummary, TrayFabric
from topoaudit.model.finding import Severity
from topoaudit.model.fleet import (
    FLEET_KIND,
    FLEET_SCHEMA_VERSION,
    DrainEntry,
    FigureStats,
    FleetFinding,
    FleetGate,
    FleetOptions,
    FleetReport,
    HardwareGroup,
    NodeResult,
    Outlier,
    Rack,
    Tray,
)
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import FLEET
from topoaudit.rules.registry import declares


@dataclass
class _Group:
    fingerprint: Fingerprint
    hosts: list[int] = field(default_factory=list)  # node indices
    # figure name -> (unit, node indices, values)
    figures: dict[str, tuple[str, array[int], array[float]]] = field(default_factory=dict)


@dataclass
class _Fleet:
    """What assemble keeps while the summaries stream in."""

    nodes: list[NodeSummary] = field(default_factory=list)  # figures and ids dropped
    groups: dict[str, _Group] = field(default_factory=dict)
    ids: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    trays: list[tuple[str, TrayFabric]] = field(default_factory=list)

    def add(self, node: NodeSummary) -> None:
        index = len(self.nodes)
        if node.fingerprint is not None:
            label = node.fingerprint.label
            group = self.groups.setdefault(label, _Group(node.fingerprint))
            group.hosts.append(index)
            for fig in node.figures:
                entry = group.figures.get(fig.name)
                if entry is None:
                    entry = group.figures[fig.name] = (fig.unit, array("l"), array("d"))
                entry[1].append(index)
                entry[2].append(fig.value)
        for key in node.gpu_ids:
            self.ids.setdefault(key, []).append(index)
        if node.fabric is not None:
            self.trays.append((node.host, node.fabric))
        self.nodes.append(replace(node, figures=(), gpu_ids=(), fabric=None))


def assemble(
    summaries: Iterable[NodeSummary], options: FleetOptions, tool_version: str, generated_at: str = ""
) -> FleetReport:
    """Judge the fleet from its nodes' summaries (consumed once, in order)."""
    fleet = _Fleet()
    for summary in summaries:
        fleet.add(summary)
    if not fleet.nodes:
        raise InputError("no node reports found under the paths given")
    if all(n.error for n in fleet.nodes):
        raise InputError(
            f"none of the {len(fleet.nodes)} node input(s) could be judged; the first: {fleet.nodes[0].error}",
            hint="give node reports, snapshots, bundles or `nvidia-smi topo -m` captures",
        )
    findings: list[FleetFinding] = []
    hosts = [n.host for n in fleet.nodes]
    outliers, stats = _outliers(fleet, hosts, options)
    findings += [_outlier_finding(o, options) for o in outliers]
    findings += _duplicates(fleet, hosts)
    findings += _stale(fleet.nodes, options)
    findings += [_unreadable(n) for n in fleet.nodes if n.error]
    findings += [f for n in fleet.nodes for f in n.named_elsewhere]  # a node-pair sweep names its slow node
    missing = _missing(hosts, options)
    findings += [
        FleetFinding("fleet-node-missing", Severity.FAIL, (h,), f"{h} was expected and never reported", {"host": h})
        for h in missing
    ]
    racks, unassigned, in_node = assemble_racks(fleet.trays, options.rack_gpus)
    findings += _rack_findings(racks, unassigned)
    findings += _minority_groups(fleet, hosts)
    nodes = _node_results(fleet, findings, options) + [
        NodeResult(h, "", "missing", "", ("fleet-node-missing",), (), "no report", "", "", True) for h in missing
    ]
    nodes += unreported_nodes(findings, set(hosts), options.fail_on)
    nodes.sort(key=_worst_first)
    groups = tuple(
        HardwareGroup(
            label=label,
            gpu_model=g.fingerprint.gpu_model,
            gpu_count=g.fingerprint.gpu_count,
            domain_sizes=g.fingerprint.domain_sizes,
            nic_count=g.fingerprint.nic_count,
            nic_rates_gbps=g.fingerprint.nic_rates_gbps,
            driver=g.fingerprint.driver,
            hosts=tuple(sorted(hosts[i] for i in g.hosts)),
            figures=stats[label],
        )
        for label, g in sorted(fleet.groups.items(), key=lambda kv: (-len(kv[1].hosts), kv[0]))
    )
    drain = tuple(_drain_entry(n) for n in nodes if n.status == "fail" and set(n.codes) - NOT_DRAINED)
    return FleetReport(
        schema_version=FLEET_SCHEMA_VERSION,
        kind=FLEET_KIND,
        tool_version=tool_version,
        generated_at=generated_at or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        options=options,
        outlier_rule=options.outlier_rule,
        nodes=tuple(nodes),
        groups=groups,
        outliers=tuple(sorted(outliers, key=lambda o: (o.group, o.figure, o.host))),
        findings=tuple(findings),
        racks=tuple(racks),
        drain=drain,
        gate=_gate(nodes, findings, options),
        in_node_fabrics=tuple(in_node),
    )


# --- the fleet's rules -----------------------------------------------------------------------------


@declares(
    Code(
        "fleet-node-missing",
        "fail",
        title="A node expected in the fleet never reported",
        remedy="Find out why the node did not run its audit (down, unreachable, job failed) before using it.",
    ),
    needs=(FLEET,),
)
def _missing(hosts: list[str], options: FleetOptions) -> list[str]:
    """Fail each node ``--expect-nodes`` names that never reported (down, unreachable, its job failed)."""
    reported = set(hosts) | {h.split(".", 1)[0] for h in hosts}  # gpu01 is reported by gpu01.cluster.local
    return [h for h in options.expected_nodes if h not in reported and h.split(".", 1)[0] not in reported]


def _outliers(
    fleet: _Fleet, hosts: list[str], options: FleetOptions
) -> tuple[list[Outlier], dict[str, tuple[FigureStats, ...]]]:
    found: list[Outlier] = []
    stats: dict[str, tuple[FigureStats, ...]] = {}
    for label, group in fleet.groups.items():
        per_figure = []
        for figure, (unit, indices, values) in group.figures.items():
            figure_stats, figure_outliers = outliers_of(
                figure, unit, label, [hosts[i] for i in indices], values, options
            )
            per_figure.append(figure_stats)
            found += figure_outliers
        stats[label] = tuple(sorted(per_figure, key=lambda f: -f.outliers))  # stable: report order otherwise
    return found, stats


@declares(
    Code(
        "fleet-figure-outlier",
        "warn",
        title="A node's measured figure is far from its hardware group's median (median/MAD rule; fail below 0.9x)",
        remedy=(
            "Rerun the node's audit to rule out a noisy run; a figure that stays low marks the node to drain and hand "
            "back (the drain list has the command)."
        ),
    ),
    needs=(FLEET,),
)
def _outlier_finding(o: Outlier, options: FleetOptions) -> FleetFinding:
    """Flag a node whose measured figure is far from its hardware group's median (median/MAD rule).

    Figures are compared within nodes of the same hardware (GPU model and count, domains, NICs, driver): a busbw
    under 0.9x of the group's median fails (a latency above 1/0.9x), a smaller outlier warns.
    """
    bad_side = "high" if o.unit in LOWER_IS_BETTER_UNITS else "low"
    far = o.ratio < options.outlier_fail_ratio if bad_side == "low" else o.ratio > 1 / options.outlier_fail_ratio
    severity = Severity.FAIL if o.direction == bad_side and far else Severity.WARN
    return FleetFinding(
        "fleet-figure-outlier",
        severity,
        (o.host,),
        f"{o.figure} {o.value:g} {o.unit} = {o.ratio:.2f}x the group median {o.median:g} {o.unit} ({o.peers} nodes)",
        {"figure": o.figure, "value": o.value, "median": o.median, "mad": o.mad, "ratio": o.ratio, "unit": o.unit},
    )


@declares(
    Code(
        "fleet-duplicate-identity",
        "fail",
        title="Two node reports claim one GPU UUID or serial (or one host name)",
        remedy=(
            "Two reports describe one machine: check which node really holds the GPU (a copied report, a wrong host "
            "name, or a virtualised GPU shown twice) and audit that node again."
        ),
    ),
    needs=(FLEET,),
)
def _duplicates(fleet: _Fleet, hosts: list[str]) -> list[FleetFinding]:
    """Fail reports that claim one GPU UUID or serial, or one host name: two reports describe one machine."""
    found = []
    # one finding per set of nodes sharing identities: a copied report repeats every GPU's UUID and serial
    shared: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for (kind, value), indices in fleet.ids.items():
        owners = tuple(sorted({hosts[i] for i in indices}))
        if len(owners) > 1:
            shared.setdefault(owners, []).append((kind, value))
    for owners, ids in shared.items():
        (kind, value), more = ids[0], len(ids) - 1
        others = f" and {more} more GPU identit{'y' if more == 1 else 'ies'} ({_id_counts(ids)})" if more else ""
        found.append(
            FleetFinding(
                "fleet-duplicate-identity",
                Severity.FAIL,
                owners,
                f"{kind} {value}{others} {'is' if not more else 'are'} reported by {len(owners)} nodes: "
                f"{', '.join(owners)}",
                {"kind": kind, "value": value, "hosts": list(owners), "identities": [f"{k} {v}" for k, v in ids]},
            )
        )
    inputs_by_host: dict[str, list[str]] = {}
    for node in fleet.nodes:
        inputs_by_host.setdefault(node.host, []).append(node.input)
    for host, inputs in sorted(inputs_by_host.items()):
        if len(inputs) > 1:
            found.append(
                FleetFinding(
                    "fleet-duplicate-identity",
                    Severity.WARN,  # two runs of one node: the older is usually stale, not a second machine
                    (host,),
                    f"host {host} reported {len(inputs)} times: {', '.join(inputs)}",
                    {"kind": "hostname", "value": host, "inputs": inputs},
                )
            )
    return found


def _id_counts(ids: list[tuple[str, str]]) -> str:
    kinds: dict[str, int] = {}
    for kind, _ in ids:
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in kinds.items())


@declares(
    Code(
        "fleet-stale-report",
        "warn",
        title="A node's report is much older than the others",
        remedy="Audit the node again so the fleet verdict describes the machine as it is now.",
    ),
    needs=(FLEET,),
)
def _stale(nodes: list[NodeSummary], options: FleetOptions) -> list[FleetFinding]:
    """Warn about a node whose report is much older than the newest: it may not describe the node as it is now."""
    times = {n.host: t for n in nodes if (t := _epoch(n.captured_at)) is not None}
    if not times:
        return []
    newest = max(times.values())
    return [
        FleetFinding(
            "fleet-stale-report",
            Severity.WARN,
            (host,),
            f"{host}'s report is {_age(newest - t)} older than the newest (limit {_age(options.max_report_age_s)})",
            {"age_s": newest - t, "max_report_age_s": options.max_report_age_s},
        )
        for host, t in sorted(times.items())
        if newest - t > options.max_report_age_s
    ]


@declares(
    Code(
        "fleet-node-unreadable",
        "fail",
        title="A node's input could not be read or judged",
        remedy=(
            "Capture the node again (`topoaudit audit --out DIR` or `topoaudit probe`); the message says what was wrong"
            " with the file."
        ),
    ),
    needs=(FLEET,),
)
def _unreadable(node: NodeSummary) -> FleetFinding:
    """Fail a node whose input could not be read or judged; the message says what was wrong with the file."""
    return FleetFinding("fleet-node-unreadable", Severity.FAIL, (node.host,), node.error, {"input": node.input})


@declares(
    Code(
        "fleet-rack-incomplete",
        "fail",
        title="An NVL rack's NVLink domain holds fewer GPUs than the rack is sold with (72 or 36)",
        remedy=(
            "Trays are missing from the fabric or did not report: check each tray's fabric state and the IMEX/fabric "
            "manager, and audit the missing trays."
        ),
    ),
    Code(
        "fleet-tray-mismatch",
        "fail",
        title="An NVL tray's fabric state, status or health differs from its rack's (or it names no rack)",
        remedy=(
            "Drain the tray and check its fabric registration (`nvidia-smi -q -d FABRIC`), NVLink cabling and firmware "
            "against its rack siblings."
        ),
    ),
    needs=(FLEET,),
)
def _rack_findings(racks: list[Rack], unassigned: list[Tray]) -> list[FleetFinding]:
    """Judge NVL racks assembled from their trays' fabric cluster and clique.

    A rack whose NVLink domain holds fewer GPUs than it is sold with (72 or 36) fails; so does a tray whose fabric
    state, status or health differs from its rack's, or that names no rack at all.
    """
    found = []
    for rack in racks:
        key = f"rack {rack.cluster_uuid} clique {rack.clique_id}"
        if rack.gpus < rack.expected_gpus:
            found.append(
                FleetFinding(
                    "fleet-rack-incomplete",
                    Severity.FAIL,
                    (),
                    f"{key}: NVLink domain of {rack.gpus} GPUs in {len(rack.trays)} trays, expected "
                    f"{rack.expected_gpus}",
                    {"cluster_uuid": rack.cluster_uuid, "clique_id": rack.clique_id, "gpus": rack.gpus},
                )
            )
        state, status, health = usual_fabric(rack)
        for tray in rack.trays:
            if tray.host in rack.odd_trays:
                found.append(
                    FleetFinding(
                        "fleet-tray-mismatch",
                        Severity.FAIL,
                        (tray.host,),
                        f"{tray.host}: fabric state {tray.state}, status {tray.status}, health {tray.health}; "
                        f"its {key} reports {state}, {status}, {health}",
                        {"cluster_uuid": rack.cluster_uuid, "clique_id": rack.clique_id},
                    )
                )
    for tray in unassigned:
        found.append(
            FleetFinding(
                "fleet-tray-mismatch",
                Severity.FAIL,
                (tray.host,),
                f"{tray.host}: fabric-attached GPUs in no rack (no cluster UUID or clique id; fabric state "
                f"{tray.state}, status {tray.status}, health {tray.health}); its NVLink domain spans nodes: "
                + "; ".join(tray.evidence),
                {"state": tray.state, "status": tray.status, "spans_nodes_because": list(tray.evidence)},
            )
        )
    return found


MINORITY_RATIO = 3
"""A hardware group at most a third the size of the largest is a minority (three H100 nodes and one V100)."""


@declares(
    Code(
        "fleet-hardware-minority",
        "warn",
        title="A few nodes of the fleet report other hardware than most (GPU model or count, NVLink domains, NICs)",
        remedy=(
            "Check that the odd nodes belong in this fleet (a wrong partition, a swapped board, a lagging driver); a "
            "policy's `gpu_models`/`gpus` or `--expect-nodes` states what the fleet should be."
        ),
    ),
    needs=(FLEET,),
)
def _minority_groups(fleet: _Fleet, hosts: list[str]) -> list[FleetFinding]:
    """Nodes whose hardware differs from most of the fleet's: a warning naming each odd node."""
    if len(fleet.groups) < 2:
        return []
    largest = max(fleet.groups.values(), key=lambda g: len(g.hosts))
    most = len(largest.hosts)
    found = []
    for label, group in sorted(fleet.groups.items()):
        if group is largest or len(group.hosts) * MINORITY_RATIO > most:
            continue
        odd = sorted(hosts[i] for i in group.hosts)
        differs = _difference(group.fingerprint, largest.fingerprint)
        found.append(
            FleetFinding(
                "fleet-hardware-minority",
                Severity.WARN,
                tuple(odd),
                f"{_nodes(len(odd))} ({', '.join(odd)}) {'reports' if len(odd) == 1 else 'report'} {label}; "
                f"{most} of {len(fleet.nodes)} nodes report {largest.fingerprint.label} ({differs})",
                {"group": label, "usual_group": largest.fingerprint.label, "hosts": odd, "differs": differs},
            )
        )
    return found


def _difference(odd: Fingerprint, usual: Fingerprint) -> str:
    parts = []
    if (odd.gpu_model, odd.gpu_count) != (usual.gpu_model, usual.gpu_count):
        parts.append(f"GPUs {odd.gpu_count}x {odd.gpu_model}, not {usual.gpu_count}x {usual.gpu_model}")
    if odd.domain_sizes != usual.domain_sizes:
        parts.append("other NVLink domains")
    if (odd.nic_count, odd.nic_rates_gbps) != (usual.nic_count, usual.nic_rates_gbps):
        parts.append("other NICs")
    if odd.driver != usual.driver:
        parts.append(f"driver {odd.driver}, not {usual.driver}")
    return "; ".join(parts)


def _nodes(n: int) -> str:
    return f"{n} node" if n == 1 else f"{n} nodes"


# --- node rows, drain list, gate ----------------------------------------------------------------------


def _node_results(fleet: _Fleet, findings: list[FleetFinding], options: FleetOptions) -> list[NodeResult]:
    by_host: dict[str, list[FleetFinding]] = {}
    for f in findings:
        for host in f.hosts:
            by_host.setdefault(host, []).append(f)
    results = []
    threshold = options.fail_on.rank
    for node in fleet.nodes:
        fleet_findings = by_host.get(node.host, [])
        failing = [f for f in fleet_findings if f.severity.rank >= threshold]
        warning = [f for f in fleet_findings if f.severity.rank < threshold]
        codes = _unique(list(node.fail_codes) + [f.code for f in failing])
        if node.error:
            status = "error"
        elif node.exit_code == 1 or failing:
            status = "fail"
        else:
            status = "pass"
        reason = node.error or node.reason or (f"{failing[0].code} {failing[0].message}" if failing else "")
        results.append(
            NodeResult(
                host=node.host,
                input=node.input,
                status=status,
                node_verdict=node.node_verdict,
                codes=codes,
                warnings=_unique(list(node.warn_codes) + [f.code for f in warning]),
                reason=reason,
                group=node.fingerprint.label if node.fingerprint is not None else "",
                captured_at=node.captured_at,
                incomplete=node.incomplete or bool(node.error),
                gpu_count=node.gpu_count,
                saved_verdict=node.saved_verdict,
                judged_with=node.judged_with,
                note=node.note,
            )
        )
    return results


_STATUS_ORDER = {"error": 0, "missing": 1, "fail": 2, "pass": 3}


def _worst_first(node: NodeResult) -> tuple[int, int, str]:
    return (_STATUS_ORDER[node.status], -len(node.codes) - len(node.warnings), node.host)


def _drain_entry(node: NodeResult) -> DrainEntry:
    reason = drain_reason(node)
    return DrainEntry(node.host, reason, drain_command(node.host, reason))


def _gate(nodes: list[NodeResult], findings: list[FleetFinding], options: FleetOptions) -> FleetGate:
    bad = [n for n in nodes if n.status != "pass"]
    fleet_bad = [f for f in findings if not f.hosts and f.severity.rank >= options.fail_on.rank]
    incomplete = any(n.incomplete for n in nodes) or any(f.code == "fleet-stale-report" for f in findings)
    warned = any(n.warnings for n in nodes) or any(f.severity == Severity.WARN for f in findings)
    total = len(nodes)
    if bad or fleet_bad:
        parts = [f"{len(bad)} of {_nodes(total)} fail{'s' if len(bad) == 1 and total == 1 else ''}"] if bad else []
        parts += [f"{len(fleet_bad)} rack finding{'' if len(fleet_bad) == 1 else 's'}"] if fleet_bad else []
        return FleetGate("fail", 1, "; ".join(parts) + f" at or above --fail-on {options.fail_on.value}", incomplete)
    verdict = "warn" if warned else "pass"
    if incomplete and options.strict:
        return FleetGate(verdict, 3, f"{_all_pass(total)}, but the fleet audit is incomplete (--strict)", True)
    return FleetGate(verdict, 0, f"{_all_pass(total)} at --fail-on {options.fail_on.value}", incomplete)


def _all_pass(total: int) -> str:
    return "the 1 node passes" if total == 1 else f"all {total} nodes pass"


def _epoch(stamp: str) -> float | None:
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _age(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds:.0f} s"


def _unique(codes: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(codes))
