"""Naming the bad node from node-pair figures: a node slow with every partner is the node; a slow pair whose
nodes are each fast with someone else is the link between them. Pure: plain figures in, a verdict out.

A pair is slow below ``SLOW_FRACTION`` of the typical pair, the median of the faster half of the figures
(so up to half the pairs may be slow and the yardstick still comes from healthy ones). When every pair is
slow alike there is no healthy pair to compare with, and nothing is named here: the bench's expectation
judges the figures then.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from topoaudit.model.bench import BenchResult
from topoaudit.model.busbw import busbw_gbps
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.fleet import FleetFinding, NodeResult
from topoaudit.rules.base import RuleContext, finding
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import BENCH
from topoaudit.rules.registry import rule

NODE_PAIR_CODES = frozenset({"bench-node-slow", "bench-node-link-slow"})
"""Findings of a node-pair sweep: they name other nodes than the one whose report carries them."""
NODE_PAIR_KIND = "nodepair"  # BenchGroup.kind of a node-pair group (see bench.node_pairs)
SLOW_FRACTION = 0.5
"""A pair below half the typical pair is slow: run-to-run noise stays well inside it, a degraded link does not."""


@dataclass(frozen=True)
class NodePairFigure:
    """One measured pair of nodes: its bus bandwidth from its best trial."""

    a: str
    b: str
    busbw_gbps: float
    round_no: int = 0


@dataclass(frozen=True)
class SlowNode:
    host: str
    partners: tuple[str, ...]  # every partner it was measured with: all slow
    best_gbps: float  # its fastest pair


@dataclass(frozen=True)
class SlowLink:
    a: str
    b: str
    busbw_gbps: float


@dataclass(frozen=True)
class NodePairVerdict:
    typical_gbps: float  # the median of the faster half of the pairs
    slow_below_gbps: float
    slow_nodes: tuple[SlowNode, ...]
    slow_links: tuple[SlowLink, ...]


def attribute(figures: Sequence[NodePairFigure], slow_fraction: float = SLOW_FRACTION) -> NodePairVerdict | None:
    """Which nodes, and which links, the slow pairs point at; None when fewer than two pairs were measured.

    A node is named when every pair it was in is slow and either it was measured with two or more partners,
    or its one partner was fast with another node. A slow pair that names no node names its link.
    """
    if len(figures) < 2:
        return None
    values = sorted(f.busbw_gbps for f in figures)
    typical = statistics.median(values[len(values) // 2 :])
    limit = slow_fraction * typical
    slow = {(f.a, f.b) for f in figures if f.busbw_gbps < limit}
    pairs_of: dict[str, list[NodePairFigure]] = {}
    for f in figures:
        pairs_of.setdefault(f.a, []).append(f)
        pairs_of.setdefault(f.b, []).append(f)

    def is_slow(f: NodePairFigure) -> bool:
        return (f.a, f.b) in slow

    def partner(f: NodePairFigure, node: str) -> str:
        return f.b if f.a == node else f.a

    def fast_elsewhere(node: str) -> bool:
        return any(not is_slow(f) for f in pairs_of[node])

    nodes: list[SlowNode] = []
    for node, mine in pairs_of.items():
        if not all(is_slow(f) for f in mine):
            continue
        partners = tuple(dict.fromkeys(partner(f, node) for f in mine))
        if len(partners) >= 2 or all(fast_elsewhere(p) for p in partners):
            nodes.append(SlowNode(node, partners, max(f.busbw_gbps for f in mine)))
    named = {n.host for n in nodes}
    links = tuple(
        SlowLink(f.a, f.b, f.busbw_gbps) for f in figures if is_slow(f) and f.a not in named and f.b not in named
    )
    return NodePairVerdict(round(typical, 6), round(limit, 6), tuple(nodes), links)


def pair_figures(result: BenchResult) -> tuple[NodePairFigure, ...]:
    """The node-pair groups of a bench result as figures: nodes by host, busbw of the best trial."""
    host = {r.rank: r.host for r in result.ranks}
    out: list[NodePairFigure] = []
    for group in result.groups:
        if group.kind != NODE_PAIR_KIND or not group.rows:
            continue
        row = group.rows[-1]
        fastest_us = row.min_us if isinstance(row.min_us, float) and row.min_us > 0 else row.time_us
        if fastest_us <= 0:
            continue
        busbw = busbw_gbps(row.size_bytes, fastest_us, len(group.ranks))
        nodes = list(dict.fromkeys(host.get(r, f"rank{r}") for r in group.ranks))
        if len(nodes) != 2:
            continue
        out.append(NodePairFigure(nodes[0], nodes[1], round(busbw, 6)))
    return tuple(out)


@rule(
    Code(
        "bench-node-slow",
        "fail",
        title="A node is slow with every partner in the node-pair sweep: the node is the bottleneck",
        remedy=(
            "Take the node out of the job; check its NICs (`ibstat`, link rate and errors), its PCIe width to the NICs "
            "and its GPUDirect RDMA state, then rerun `topoaudit bench --groups nodepairs`."
        ),
    ),
    Code(
        "bench-node-link-slow",
        "warn",
        title="A pair of nodes is slow while each node is fast with another: the path between them",
        remedy=(
            "Check the switch ports and cables between the two nodes (the fabric's routing, a degraded uplink); the "
            "nodes themselves measured fast with other partners."
        ),
    ),
    needs=(BENCH,),
)
def node_pairs(ctx: RuleContext) -> tuple[Finding, ...]:
    """Name the node that is slow with every partner in a node-pair sweep, or the pair slow between fast nodes.

    ``bench --groups nodepairs`` measures rounds of disjoint node pairs: a node slow with each partner is the
    bottleneck (its NICs, their PCIe width, GPUDirect RDMA); a pair slow while each node is fast with another
    is the path between them (switch ports, cables, routing).
    """
    assert isinstance(ctx.bench, BenchResult)
    return judge_node_pairs(ctx.bench)


def judge_node_pairs(result: BenchResult) -> tuple[Finding, ...]:
    """``bench-node-slow`` for each node slow with every partner, ``bench-node-link-slow`` for each other slow
    pair; nothing when the run measured no node pairs or every pair alike."""
    verdict = attribute(pair_figures(result))
    if verdict is None:
        return ()
    slow_nodes = [
        finding(
            "bench-node-slow",
            f"Node {node.host} is slow with every partner ({', '.join(node.partners)}): its best pair "
            f"reached {node.best_gbps:.3g} GB/s, the typical pair {verdict.typical_gbps:.3g} GB/s",
            host=node.host,
            partners=list(node.partners),
            best_busbw_gbps=node.best_gbps,
            typical_busbw_gbps=verdict.typical_gbps,
            slow_below_gbps=verdict.slow_below_gbps,
        )
        for node in verdict.slow_nodes
    ]
    slow_links = [
        finding(
            "bench-node-link-slow",
            f"The pair {link.a} + {link.b} is slow ({link.busbw_gbps:.3g} GB/s, typical "
            f"{verdict.typical_gbps:.3g} GB/s) while each node is fast with another: the path between them",
            hosts=[link.a, link.b],
            busbw_gbps=link.busbw_gbps,
            typical_busbw_gbps=verdict.typical_gbps,
            slow_below_gbps=verdict.slow_below_gbps,
        )
        for link in verdict.slow_links
    ]
    return (*slow_nodes, *slow_links)


def named_hosts(found: Finding) -> tuple[str, ...]:
    """The nodes a node-pair finding names: the slow node, or both ends of a slow link."""
    if found.code == "bench-node-slow":
        return (str(found.evidence["host"]),)
    return tuple(str(h) for h in found.evidence.get("hosts", ()))


def fleet_findings(findings: Sequence[Finding]) -> tuple[FleetFinding, ...]:
    """A node report's node-pair findings, moved to the nodes they name (the fleet judges those nodes by them,
    not the node that happened to run rank 0)."""
    return tuple(
        FleetFinding(f.code, f.severity, named_hosts(f), f.message, dict(f.evidence))
        for f in findings
        if f.code in NODE_PAIR_CODES
    )


def unreported_nodes(findings: Sequence[FleetFinding], reported: set[str], fail_on: Severity) -> list[NodeResult]:
    """A row for each node a node-pair finding names that sent no report of its own: the sweep measured it,
    so the fleet still judges it."""
    rows: dict[str, NodeResult] = {}
    for f in findings:
        if f.code not in NODE_PAIR_CODES:
            continue
        for host in f.hosts:
            if host in reported:
                continue
            row = rows.get(host) or NodeResult(host, "", "pass", "", (), (), "", "", "", False)
            failing = f.severity.rank >= fail_on.rank
            rows[host] = NodeResult(
                host=host,
                input="",
                status="fail" if failing or row.status == "fail" else "pass",
                node_verdict="",
                codes=(*row.codes, f.code) if failing and f.code not in row.codes else row.codes,
                warnings=row.warnings if failing or f.code in row.warnings else (*row.warnings, f.code),
                reason=row.reason or (f"{f.code} {f.message}" if failing else ""),
                group="",
                captured_at="",
                incomplete=False,
            )
    return list(rows.values())


__all__ = [
    "NODE_PAIR_CODES",
    "SLOW_FRACTION",
    "NodePairFigure",
    "NodePairVerdict",
    "SlowLink",
    "SlowNode",
    "attribute",
    "fleet_findings",
    "judge_node_pairs",
    "named_hosts",
    "pair_figures",
    "unreported_nodes",
]
