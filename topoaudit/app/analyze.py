"""``analyze``: judge a captured machine (a file, standard input or a bundled example)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from topoaudit.app.common import GateRequest, Judged, MachineInput, gate_knowing_the_card, judge, load_machine

if TYPE_CHECKING:
    from topoaudit.model.plan import PlanRequest


@dataclass(frozen=True)
class AnalyzeRequest:
    """What ``analyze`` was asked: the machine to read, the gate's options, and an optional plan to check."""

    machine: MachineInput
    gate: GateRequest = field(default_factory=GateRequest)
    plan: PlanRequest | None = None  # ``--plan-*``: a deploy plan section checked against this machine
    keep_evidence: bool = False  # a bundle is written: keep the raw input
    expect_busbw_gbps: float | None = None  # ``--expect-busbw``: the figure a pasted sweep is held to


def analyze_input(request: AnalyzeRequest) -> Judged:
    """Judge a captured machine (a file, standard input or a bundled example)."""
    loaded, evidence = load_machine(request.machine, keep_evidence=request.keep_evidence)
    report = judge(
        loaded,
        gate_knowing_the_card(request.gate, request.plan, loaded.machine),
        request.plan,
        expect_busbw_gbps=request.expect_busbw_gbps,
    )
    return Judged(report, evidence)
