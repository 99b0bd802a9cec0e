"""Put a plan into a report: the audited machine's domains in, the plan and its finding out.

Pure over the report (no I/O). ``attach_plan`` is what ``analyze --plan-params`` and
``topoaudit plan --from`` use; the finding when the TP group cannot stay inside one NVLink domain of the
checked target is ``tp-group-crosses-domain`` (severity fail -> exit 1 under the default ``--fail-on``).
"""

from __future__ import annotations

import dataclasses

from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.errors import ConfigError
from topoaudit.model.finding import Finding, worst_first
from topoaudit.model.report import Report, SourceInfo
from topoaudit.model.topology import Domain
from topoaudit.model.values import Probed
from topoaudit.plan.model import MachineDomains, Plan, PlanRequest
from topoaudit.plan.sizing import make_plan

FINDING_CODE = "tp-group-crosses-domain"


def machine_domains(source: SourceInfo, gpu_model: Probed[str], domains: tuple[Domain, ...]) -> MachineDomains:
    """The NVLink domains of the audited machine (every GPU is in exactly one domain)."""
    label = f"example {source.name}" if source.kind == "example" else source.name
    model = gpu_model if isinstance(gpu_model, str) else None
    return MachineDomains(label=label, domains=tuple(tuple(d.gpus) for d in domains), gpu_model=model)


def resolve_gpu(gpu: str | None, report: Report | None = None) -> GpuSpec:
    """The card to size on: ``gpu`` when given, else the audited report's GPU model; ConfigError otherwise."""
    return card_to_size(gpu, report.gpu_model if report is not None else None)


def card_to_size(gpu: str | None, machine_model: Probed[str] | None = None) -> GpuSpec:
    """The card to size on: ``gpu`` when given, else the audited machine's model; ConfigError otherwise.

    ``machine_model`` is None when no machine was audited (the planner alone).
    """
    if gpu:
        spec = find_gpu(gpu)
        if spec is None:
            raise ConfigError(f"GPU model {gpu!r} is not in the catalog", hint=_known_gpus())
        return spec
    if machine_model is not None:
        name = machine_model if isinstance(machine_model, str) else None
        spec = find_gpu(name) if name else None
        if spec is not None:
            return spec
        why = f"its GPU model {name!r} is not in the catalog" if name else "it does not name its GPU model"
        raise ConfigError(f"cannot size the plan on the audited machine: {why}", hint="pass --gpu MODEL")
    raise ConfigError("the planner needs a GPU model: --gpu MODEL, or --from/--example a machine", hint=_known_gpus())


def _known_gpus() -> str:
    from topoaudit.catalog import all_gpus

    return "known: " + ", ".join(s.key for s in all_gpus())


def plan_finding(plan: Plan) -> Finding | None:
    """``tp-group-crosses-domain`` when the plan's TP group cannot stay inside one domain of its target."""
    if plan.fits_one_domain:
        return None
    from topoaudit.rules import finding

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


def attach_plan(report: Report, request: PlanRequest, gpu: str | None = None) -> Report:
    """The report with its ``plan`` section, the plan's finding and the gate decided again.

    For callers that still patch a finished report; ``pipeline.analyze(plan_request=...)`` plans in its one pass.
    """
    from topoaudit.pipeline import rejudge

    spec = card_to_size(gpu, report.gpu_model)
    plan = make_plan(request, spec, machine_domains(report.source, report.gpu_model, report.domains))
    findings = report.findings
    extra = plan_finding(plan)
    if extra is not None:
        findings = worst_first((*findings, extra))
    return rejudge(dataclasses.replace(report, plan=plan, findings=findings))
