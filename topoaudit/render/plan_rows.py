"""The plan section of the row model: the sizing's numbers, its steps and the alternatives.

Loaded only for a report with a deploy plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.model.values import Unsupported
from topoaudit.render.cells import Cell, Table, register_views

if TYPE_CHECKING:
    from topoaudit.model.plan import DeployPlan

PLAN_VERDICT_TONE = {"fits-one-domain": "pass", "at-edge-of-domain": "warn", "crosses-domain": "fail"}


@dataclass(frozen=True)
class PlanView:
    """A deploy plan as shown: its key numbers, the arithmetic step by step, and the alternatives."""

    plan: DeployPlan
    numbers: tuple[tuple[str, Cell], ...]
    steps: tuple[str, ...]
    alternatives: Table | None


def plan_view(plan: DeployPlan) -> PlanView:
    numbers: list[tuple[str, Cell]] = [
        ("Verdict", Cell(plan.verdict, PLAN_VERDICT_TONE.get(plan.verdict, "strong"))),
        ("Model", Cell(plan.model_text)),
        (
            "Footprint",
            Cell(
                f"{plan.footprint_gb:,.1f} GB (weights {plan.weights_gb:,.1f} + KV {plan.kv_cache_gb:,.1f}"
                f" + margin {plan.safety_margin_gb:,.1f})"
            ),
        ),
        ("Card", Cell(f"{plan.gpu_name}: {plan.usable_per_card_gb:,.1f} GB usable of {plan.card_memory_gb:,.0f} GB")),
        (
            "Units",
            Cell(
                f"GB = 10^9 bytes throughout ({plan.card_memory_gb:,.0f} GB = "
                f"{plan.card_memory_gb * 1e9 / 2**30:,.1f} GiB)"
            ),
        ),
        (
            "Cards",
            Cell(
                f"{plan.cards} (TP{plan.tp_size}"
                + (f" x PP{plan.pp_size}" if plan.pp_size > 1 else "")
                + f"; {plan.per_card_gb:,.1f} GB per card, {plan.card_utilisation:.0%})"
            ),
        ),
    ]
    for fit in (plan.standard_node, plan.machine):
        if not isinstance(fit, Unsupported):
            tone = "pass" if fit.fits_one_domain and not fit.at_edge else "warn" if fit.fits_one_domain else "fail"
            label = "Standard node" if fit.kind == "standard-node" else "This machine"
            numbers.append((label, Cell(fit.verdict, tone)))
    alternatives = None
    if plan.alternatives:
        alternatives = Table(
            "Alternatives",
            ("Option", "Cost"),
            tuple(
                (Cell(a.summary), Cell(a.cost, "fail" if a.kind == "cross-node-tp" else "")) for a in plan.alternatives
            ),
        )
    return PlanView(plan, tuple(numbers), tuple(plan.steps), alternatives)


register_views(PlanView)
