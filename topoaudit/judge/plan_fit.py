"""The deploy plan's finding: ``tp-group-crosses-domain`` when its TP group cannot stay in one NVLink domain."""

from __future__ import annotations

from topoaudit.model.finding import Finding
from topoaudit.model.plan import DeployPlan
from topoaudit.rules import finding

FINDING_CODE = "tp-group-crosses-domain"


def plan_finding(plan: DeployPlan) -> Finding | None:
    """The finding for a plan whose TP group leaves the largest domain of its checked target; else None."""
    if plan.fits_one_domain:
        return None
    checked = plan.checked
    first = plan.alternatives[0].summary if plan.alternatives else ""
    return finding(
        FINDING_CODE,
        f"The deploy plan needs TP{plan.tp_size} ({plan.footprint_gb:,.0f} GB on {plan.gpu_name}), but the "
        f"largest NVLink domain of the {checked.target} has {max(checked.domain_sizes, default=0)} GPUs."
        + (f" First alternative: {first} (all {len(plan.alternatives)} in the plan)." if first else ""),
        plan_tp=plan.tp_size,
        plan_cards=plan.cards,
        footprint_gb=plan.footprint_gb,
        gpu=plan.gpu_key,
        target=checked.target,
        domain_sizes=list(checked.domain_sizes),
    )
