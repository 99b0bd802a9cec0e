"""``plan``: size a model and check its tensor-parallel group against a machine or the catalog's standard node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.app.common import (
    GateRequest,
    MachineInput,
    audit_options,
    gate_knowing_the_card,
    judge,
    load_machine,
    planner_call,
)
from topoaudit.errors import UsageError

if TYPE_CHECKING:
    from topoaudit.model.plan import PlanRequest
    from topoaudit.model.report import Report


@dataclass(frozen=True)
class PlanCommandRequest:
    plan: PlanRequest
    machine: MachineInput | None = None  # ``--from``/``--example``: check against this box's domains
    nics: str | None = None  # ``--nics``: one machine's NICs, for a TP group across machines


def plan(request: PlanCommandRequest) -> Report:
    """Size a model and check its TP group: against ``request.machine`` when given, else the catalog's node.

    The result is a Report (its ``plan`` section, the plan's finding and the gate) like every command's.
    """
    if request.machine is not None:
        loaded, _ = load_machine(request.machine, keep_evidence=False)
        gate = gate_knowing_the_card(GateRequest(nics=request.nics), request.plan, loaded.machine)
        return judge(loaded, gate, request.plan)
    if not request.plan.gpu:
        raise UsageError("the planner needs a GPU model: --gpu MODEL, or --from/--example a machine")
    from topoaudit.catalog.machines import find_machine
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.pipeline import analyze
    from topoaudit.plan.target import resolve_gpu

    spec = planner_call(lambda: resolve_gpu(request.plan.gpu))
    machine = find_machine(request.plan.gpu)
    name, described = ("catalog standard node", f"the standard {spec.name} node")
    if machine is not None:
        name, described = f"catalog machine {machine.name}", f"the {machine.label}"
    return analyze(  # no machine audited: the plan is checked against the catalog's standard node or machine
        Machine(source="plan", gpus=()),
        source=SourceInfo("plan", name, description=described),
        options=audit_options(GateRequest(gpu_model=spec.name, nics=request.nics)),
        plan_request=request.plan,
    )
