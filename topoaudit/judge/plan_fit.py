"""The deploy plan's finding: ``tp-group-crosses-domain`` when its TP group cannot stay in one NVLink domain."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from topoaudit.model.finding import Finding
from topoaudit.model.plan import DeployPlan
from topoaudit.plan.sizing import binding_limit
from topoaudit.rules.base import RuleContext, finding
from topoaudit.rules.needs import PLAN
from topoaudit.rules.registry import rule

FINDING_CODE = "tp-group-crosses-domain"


@rule(FINDING_CODE, needs=(PLAN,))
def plan_fits(ctx: RuleContext) -> Iterable[Finding]:
    """Fail a deploy plan whose tensor-parallel group cannot stay inside one NVLink domain of this machine.

    The plan (``--plan-params`` ...) sizes the model onto cards; checked against the audited machine's domains,
    a TP group larger than the largest domain runs every layer's all-reduce over the slowest hop between them.
    """
    assert isinstance(ctx.plan, DeployPlan)
    crossing = plan_finding(ctx.plan)
    if crossing is not None:
        yield crossing


def plan_finding(plan: DeployPlan) -> Finding | None:
    """The finding for a plan whose TP group leaves the largest domain of its checked target; else None."""
    if plan.fits_one_domain:
        return None
    checked = plan.checked
    largest = max(checked.domain_sizes, default=0)
    first = plan.alternatives[0].summary if plan.alternatives else ""
    limit = binding_limit(plan.cards_by_memory, plan.tp_size, plan.tp_rule, largest)
    crossing = finding(
        FINDING_CODE,
        f"The deploy plan needs TP{plan.tp_size} ({plan.footprint_gb:,.0f} GB on {plan.gpu_name}) on the "
        f"{checked.target}: {limit}."
        + (f" First alternative: {first} (all {len(plan.alternatives)} in the plan)." if first else ""),
        plan_tp=plan.tp_size,
        plan_cards=plan.cards,
        footprint_gb=plan.footprint_gb,
        gpu=plan.gpu_key,
        target=checked.target,
        domain_sizes=list(checked.domain_sizes),
        cards_by_memory=plan.cards_by_memory,
        binding_limit="memory" if plan.cards_by_memory > largest else "domain",
    )
    if plan.cards_by_memory > largest:  # replicas of a smaller TP group cannot hold a model this large
        linked = [size for size in checked.domain_sizes if size >= 2]
        if len(linked) >= 2:
            across = "TP inside each domain with pipeline stages across domains, or "
        elif len(checked.domain_sizes) > len(linked):
            across = "TP inside the one NVLink domain with pipeline stages over PCIe to the GPUs outside it, or "
        else:
            across = ""  # one domain and nothing beside it: no pipeline stage to place on this box
        remedy = (
            f"Keep each TP group inside one NVLink domain: {across}cards with more memory per GPU or a larger "
            "domain (the plan lists them in that order)."
        )
        return dataclasses.replace(crossing, remedy=remedy)
    return crossing
