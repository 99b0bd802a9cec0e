"""collect -> model -> judge -> report, as plain functions over frozen dataclasses.

``analyze`` is the one place a Machine becomes a Report; the CLI, the probe's ``audit`` and the tests all
go through it, so a pasted matrix, a snapshot and a live probe are judged by the same rules.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from topoaudit import __version__
from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.errors import ConfigError, UsageError
from topoaudit.judge.expectations import Expectations, check_expectations
from topoaudit.judge.gate import decide_gate
from topoaudit.model.finding import Finding, worst_first
from topoaudit.model.machine import Machine
from topoaudit.model.report import (
    BENCH_NOT_RUN,
    CAPTURES_NOT_GIVEN,
    NCCL_LOG_NOT_GIVEN,
    NOT_REQUESTED,
    SCHEMA_VERSION,
    AuditOptions,
    InputIssue,
    Report,
    SourceInfo,
)
from topoaudit.model.topology import Domain, bottleneck, gpu_pair_links, nvlink_domains, place_tp
from topoaudit.model.values import NO_POLICY, Unsupported
from topoaudit.rules import run_rules
from topoaudit.rules.base import RuleContext, finding

if TYPE_CHECKING:  # loaded with the inputs and options that carry them, not with a pasted matrix
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.plan import DeployPlan, PlanRequest
    from topoaudit.model.policy import PolicyOutcome


def analyze(
    machine: Machine,
    *,
    source: SourceInfo,
    options: AuditOptions | None = None,
    input_issues: Iterable[InputIssue] = (),
    bench: BenchResult | Unsupported = BENCH_NOT_RUN,
    expect_busbw_gbps: float | None = None,
    plan_request: PlanRequest | None = None,
    imported_findings: Iterable[Finding] = (),
    extras: dict[str, Any] | None = None,
    generated_at: str | None = None,
    nccl: NcclView | Unsupported = NCCL_LOG_NOT_GIVEN,
    captures: Captures | Unsupported = CAPTURES_NOT_GIVEN,
) -> Report:
    """Judge one machine and every fact gathered about it, once, and return the complete report.

    ``bench`` is a measured or imported all-reduce sweep (judged here, with ``expect_busbw_gbps`` as the
    user's floor for the whole-machine plateau); ``plan_request`` asks for a deploy plan checked against the
    machine's domains; ``imported_findings`` are findings a loaded source brings with it; ``nccl`` is NCCL's own
    view from an NCCL_DEBUG=INFO log, judged against the machine; ``captures`` are NCCL's XML dumps and
    nvbandwidth matrices, judged beside the machine they describe. The rules, the bench
    judge, the plan's finding, the policy and the gate each run exactly once, in that order.
    """
    options = options or AuditOptions()
    issues = tuple(input_issues)
    gpu_model = _gpu_model(machine, options, plan_request)
    spec = find_gpu(gpu_model) if isinstance(gpu_model, str) else None
    catalog_entry: str | Unsupported = (
        spec.key
        if spec
        else Unsupported("catalog", f"no catalog entry for {gpu_model!r}")
        if isinstance(gpu_model, str)
        else Unsupported("catalog", "not looked up: the GPU model is unknown")
    )
    domains = nvlink_domains(machine)
    n = len(machine.gpus)
    # Placements for the TP sizes people deploy (2..8) and the one asked for; never hundreds of rows.
    sizes = sorted({tp for tp in (2, 4, 8) if tp <= n} | _requested_tp(options))
    # A source that names GPUs but no links between them (an nccl-tests log) says nothing about the fabric:
    # no placements or ring bottlenecks are claimed from it.
    links_known = n < 2 or bool(gpu_pair_links(machine))
    placements = tuple(place_tp(machine, domains, tp) for tp in sizes) if links_known else ()
    requested = tuple(p for p in placements if p.tp in _requested_tp(options))
    bottlenecks = (
        (
            bottleneck(machine, [g.index for g in machine.gpus]),
            *(bottleneck(machine, d.gpus) for d in domains if d.size >= 2 and len(domains) > 1),
        )
        if links_known
        else ()
    )
    findings, skipped = run_rules(RuleContext(machine, domains, requested, options, spec))
    stated = check_expectations(Expectations.of_options(options), machine, domains, spec, bench)
    found = [*findings, *stated.findings, *imported_findings]
    if not isinstance(bench, Unsupported):
        from topoaudit.bench.judge import judge_bench, with_expectations

        bench = with_expectations(bench, spec)  # each group's expected figure and its source, shown beside it
        found += judge_bench(bench, spec=spec, expect_busbw_gbps=expect_busbw_gbps)
        from topoaudit.fleet.node_pairs import judge_node_pairs

        found += judge_node_pairs(bench)
    if not isinstance(nccl, Unsupported):
        from topoaudit.rules.nccl_rules import judge_nccl

        found += judge_nccl(nccl, machine, domains, spec, options)
    if not isinstance(captures, Unsupported):
        from topoaudit.rules.capture_rules import judge_captures

        found += judge_captures(captures, machine, spec, None if isinstance(bench, Unsupported) else bench)
    if extras and "nccl_inspector" in extras:  # NCCL Inspector's per-collective busbw, held to the oracle
        from topoaudit.bench.oracle import expected_busbw
        from topoaudit.rules.inspector_rules import judge_inspector

        found += judge_inspector(extras["nccl_inspector"], spec, expected_busbw)
    if extras and "nccl_ras" in extras:  # NCCL RAS: communicators with missing ranks or rank errors
        from topoaudit.rules.ras_rules import judge_ras_extra

        found += judge_ras_extra(extras["nccl_ras"])
    found += [*_input_findings(issues), *_model_findings(machine, gpu_model, spec)]
    plan: DeployPlan | Unsupported = NOT_REQUESTED
    if plan_request is not None:
        from topoaudit.judge.plan_fit import plan_finding

        plan = _plan(plan_request, source, gpu_model, domains)
        crossing = plan_finding(plan)
        if crossing is not None:
            found.append(crossing)
    judged, policy_outcome = _policy_step(options, tuple(found), machine, domains, spec, bench)
    judged = worst_first(judged)
    gate = decide_gate(judged, skipped, issues, machine, options, policy_outcome)
    if not isinstance(bench, Unsupported):  # a bench stopped by Ctrl-C or SIGTERM ends with exit 130
        from topoaudit.bench.judge import interrupted_gate

        gate = interrupted_gate(gate, bench)
    return Report(
        schema_version=SCHEMA_VERSION,
        tool_version=__version__,
        generated_at=generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        source=source,
        options=options,
        machine=machine,
        gpu_model=gpu_model,
        catalog_entry=catalog_entry,
        domains=domains,
        bottlenecks=bottlenecks,
        placements=placements,
        findings=judged,
        skipped=skipped,
        input_issues=issues,
        gate=gate,
        extras=dict(extras or {}),
        plan=plan,
        bench=bench,
        policy=policy_outcome,
        nccl=nccl,
        captures=captures,
    )


def _input_findings(issues: tuple[InputIssue, ...]) -> list[Finding]:
    recovered = [i for i in issues if i.action == "recovered"]
    if not recovered:
        return []
    return [
        finding(
            "input-recovered",
            f"The input was damaged; {len(recovered)} place(s) recovered. First, line {recovered[0].line}: "
            f"{recovered[0].message.rstrip('.')}.",
            lines=[i.line for i in recovered],
        )
    ]


def _model_findings(machine: Machine, gpu_model: str | Unsupported, spec: GpuSpec | None) -> list[Finding]:
    if spec is not None or not machine.gpus:
        return []
    why = "; expectations come from link counts alone."
    if isinstance(gpu_model, str):
        return [finding("model-unknown", f"GPU model {gpu_model!r} not in the catalog{why}", gpu_model=gpu_model)]
    return [finding("model-unknown", f"GPU model not in the input{why}", gpu_model_reason=gpu_model.reason)]


def _plan(
    request: PlanRequest, source: SourceInfo, gpu_model: str | Unsupported, domains: tuple[Domain, ...]
) -> DeployPlan:
    """The deploy plan checked against this machine's domains.

    ConfigError (exit 4) when no card can be named to size on; UsageError (exit 2) when the request itself
    cannot be planned (a TP size that divides no head count, an impossible margin).
    """
    from topoaudit.plan.sizing import plan_deployment
    from topoaudit.plan.target import machine_domains, resolve_gpu

    spec = resolve_gpu(_plan_card(request.gpu, gpu_model), gpu_model)
    audited = machine_domains(source, gpu_model, domains) if domains else None  # no GPUs: the standard node only
    try:
        return plan_deployment(request, spec, audited)
    except ConfigError as exc:
        raise UsageError(str(exc), hint=exc.hint) from exc


def _plan_card(asked: str | None, machine_model: str | Unsupported) -> str | None:
    """The card to size on. A family name that the audited machine's model refines ("H200" on an H200 NVL
    box) means the machine's card, so the box is not judged against another variant (H200 SXM)."""
    if not asked or not isinstance(machine_model, str):
        return asked
    machine_spec, asked_spec = find_gpu(machine_model), find_gpu(asked)
    if machine_spec is None or asked_spec is None or machine_spec.key == asked_spec.key:
        return asked
    words = set(re.findall(r"[a-z0-9]+", asked.lower()))
    machine_words = set(re.findall(r"[a-z0-9]+", f"{machine_model} {machine_spec.key} {machine_spec.name}".lower()))
    return machine_model if words <= machine_words else asked


def _policy_step(
    options: AuditOptions,
    findings: tuple[Finding, ...],
    machine: Machine,
    domains: tuple[Domain, ...],
    spec: GpuSpec | None,
    bench: BenchResult | Unsupported,
) -> tuple[tuple[Finding, ...], PolicyOutcome | Unsupported]:
    """Apply ``options.policy`` (expectations, severity overrides, ignores); unchanged without a policy."""
    if isinstance(options.policy, Unsupported):
        return findings, NO_POLICY
    from topoaudit.judge.policy import apply_policy

    return apply_policy(options.policy, findings, machine=machine, domains=domains, spec=spec, bench=bench)


def _gpu_model(machine: Machine, options: AuditOptions, plan_request: PlanRequest | None) -> str | Unsupported:
    """The GPU model the machine is judged as: --gpu-model, else what the source reports, else the card the
    deploy plan was asked to size on (the user named this box's card there)."""
    if isinstance(options.gpu_model, str):
        return options.gpu_model
    model = machine.gpu_model
    if model:
        return model
    if any(isinstance(g.name, str) for g in machine.gpus):
        return Unsupported(machine.source, "GPUs report different models")
    if plan_request is not None and plan_request.gpu and machine.gpus:
        return plan_request.gpu
    return Unsupported(machine.source, "the source does not name the GPU model; pass --gpu-model")


def _requested_tp(options: AuditOptions) -> set[int]:
    return {int(options.tp)} if isinstance(options.tp, int) else set()
