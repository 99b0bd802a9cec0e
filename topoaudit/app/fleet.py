"""``fleet``: judge many node inputs alike, once each, and reduce them to one fleet report."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from topoaudit.app.common import GateRequest, MachineInput, audit_options, judge, load_machine

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from topoaudit.fleet.inputs import NodeInput
    from topoaudit.fleet.summary import NodeSummary
    from topoaudit.model.fleet import FleetReport


@dataclass(frozen=True)
class FleetRequest:
    """``topoaudit fleet``: node inputs judged alike, then compared."""

    paths: tuple[str, ...]
    gate: GateRequest = field(default_factory=GateRequest)
    expect_nodes: str | None = None  # FILE or a Slurm host list
    max_report_age_s: float = 86400.0
    rack_gpus: int = 72
    apply: bool = False  # run the drain commands (scontrol) instead of only printing them
    jobs: int = 1  # processes judging nodes at once


def fleet(request: FleetRequest) -> FleetReport:
    """Judge every node input like ``analyze`` does, once each, and reduce the fleet to one report."""
    from topoaudit import __version__
    from topoaudit.fleet.assemble import assemble
    from topoaudit.fleet.inputs import expected_hosts, node_inputs
    from topoaudit.model.fleet import FleetOptions

    options = audit_options(request.gate)  # a bad policy or option is refused before any node is read
    fleet_options = FleetOptions(
        fail_on=options.fail_on,
        strict=options.strict,
        max_report_age_s=request.max_report_age_s,
        rack_gpus=request.rack_gpus,
        expected_nodes=expected_hosts(request.expect_nodes) if request.expect_nodes else (),
    )
    items = ((node, request.gate) for node in node_inputs(request.paths))
    if request.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(request.jobs) as pool:
            report = assemble(_in_order(pool, items, request.jobs * 64), fleet_options, __version__)
    else:
        report = assemble(map(_fleet_node, items), fleet_options, __version__)
    if request.apply:
        from topoaudit.fleet.slurm import apply_drain

        report = replace(report, applied=apply_drain(report.drain))
    return report


def _in_order(pool: Executor, items: Iterator[tuple[NodeInput, GateRequest]], window: int) -> Iterator[NodeSummary]:
    """Node summaries in input order, with at most ``window`` nodes in flight (memory stays bounded)."""
    from collections import deque

    pending: deque[Future[NodeSummary]] = deque()
    for item in items:
        pending.append(pool.submit(_fleet_node, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _fleet_node(item: tuple[NodeInput, GateRequest]) -> NodeSummary:
    """One node judged through the same steps as ``analyze PATH``, reduced to its fleet summary."""
    from topoaudit.errors import TopoauditError
    from topoaudit.fleet.inputs import captured_at
    from topoaudit.fleet.summary import summarize, unusable

    node, gate = item
    try:
        loaded, _ = load_machine(MachineInput(path=node.path), keep_evidence=False)
        report = judge(loaded, gate, None)
    except TopoauditError as exc:
        return unusable(node.host_hint, node.shown_as, str(exc))
    return summarize(report, node.shown_as, node.host_hint, captured_at(node.path))
