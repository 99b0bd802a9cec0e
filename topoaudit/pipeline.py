"""collect -> model -> judge -> report, as plain functions over frozen dataclasses.

``analyze`` is the one place a Machine becomes a Report; the CLI, the probe's ``audit`` and the tests all
go through it, so a pasted matrix, a snapshot and a live probe are judged by the same rules. It models the
machine once (its GPU model or the class its links show, NVLink domains, placements, a bench's expected
figures, a deploy plan) into one :class:`~topoaudit.rules.base.RuleContext`, runs every registered rule over
it once, then the policy once, then the gate once.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from topoaudit import __version__
from topoaudit.catalog import GpuSpec, find_gpu, product_name
from topoaudit.errors import ConfigError, UsageError
from topoaudit.judge.gate import decide_gate
from topoaudit.judge.identify import identify
from topoaudit.model.facts import Facts
from topoaudit.model.finding import Finding, Skipped, worst_first
from topoaudit.model.identity import Identification
from topoaudit.model.machine import Machine
from topoaudit.model.network import RunFacts, run_facts
from topoaudit.model.report import (
    BENCH_NOT_RUN,
    CAPTURES_NOT_GIVEN,
    NCCL_LOG_NOT_GIVEN,
    NOT_REQUESTED,
    SCHEMA_VERSION,
    AuditOptions,
    Gate,
    InputIssue,
    Report,
    SourceInfo,
)
from topoaudit.model.topology import Bottleneck, Domain, Placement, bottleneck, gpu_pair_links, nvlink_domains, place_tp
from topoaudit.model.values import NO_POLICY, Probed, Unsupported
from topoaudit.rules.base import RuleContext, fact_extras
from topoaudit.rules.registry import run_rules

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
    extras: dict[str, Any] | None = None,
    generated_at: str | None = None,
    nccl: NcclView | Unsupported = NCCL_LOG_NOT_GIVEN,
    captures: Captures | Unsupported = CAPTURES_NOT_GIVEN,
) -> Report:
    """Judge one machine and the facts gathered beside it: :func:`analyze_facts` for a caller holding them loose.

    ``bench`` is a measured or imported all-reduce sweep, ``nccl`` NCCL's own view from an NCCL_DEBUG=INFO log,
    ``captures`` NCCL's XML dumps and measured matrices; ``extras`` are facts a source reports as they are.
    """
    facts = Facts(machine, source, tuple(input_issues), dict(extras or {}), bench, nccl, captures)
    return analyze_facts(
        facts,
        options=options,
        expect_busbw_gbps=expect_busbw_gbps,
        plan_request=plan_request,
        generated_at=generated_at,
    )


def analyze_facts(
    facts: Facts,
    *,
    options: AuditOptions | None = None,
    expect_busbw_gbps: float | None = None,
    plan_request: PlanRequest | None = None,
    generated_at: str | None = None,
) -> Report:
    """Judge everything an input held, once, and return the complete report.

    ``expect_busbw_gbps`` is the user's floor for the whole-machine plateau of a sweep; ``plan_request`` asks for a
    deploy plan checked against the machine's domains. The rules, the policy and the gate each run exactly once.
    """
    options = options or AuditOptions()
    if expect_busbw_gbps is not None:  # the floor is part of the request: a saved report keeps it
        options = dataclasses.replace(options, expect_busbw_gbps=float(expect_busbw_gbps))
    floor = options.expect_busbw_gbps
    machine = facts.machine
    domains = nvlink_domains(machine)
    placements = _placements(machine, domains, options)
    known = identify(facts, options, domains, plan_request.gpu if plan_request is not None else None)
    gpu_model, spec = known.gpu_model, known.spec
    held = {f.name: getattr(facts, f.name) for f in dataclasses.fields(facts)}
    run = run_facts(nics=options.nics, nccl=facts.nccl, bench=facts.bench, ras=facts.ras)  # NICs, NCCL release
    held["bench"] = _with_expectations(facts.bench, spec, run)  # each group's expected figure, shown and judged
    ctx = RuleContext(
        **held,
        domains=domains,
        placements=tuple(p for p in placements if p.tp in _requested_tp(options)),
        options=options,
        spec=spec,
        gpu_model=gpu_model,
        expect_busbw_gbps=floor if isinstance(floor, float) else None,
        plan=NOT_REQUESTED if plan_request is None else _plan(plan_request, facts, gpu_model, domains, run, held),
        oracle=_oracle(facts.inspector),
        identified=known.identification,
        hardware=known.hardware,
        run=run,
    )
    findings, skipped = run_rules(ctx)
    findings = (*findings, *_carried(facts.saved, findings, ctx))
    judged, policy_outcome = _policy_step(worst_first(findings), ctx)
    judged = worst_first(judged)
    gate = _gate(judged, skipped, ctx, policy_outcome)
    return _report(ctx, placements, judged, skipped, gate, policy_outcome, generated_at)


def _carried(saved: Report | None, found: tuple[Finding, ...], ctx: RuleContext) -> tuple[Finding, ...]:
    """The warn and fail findings of a saved report that the facts it kept cannot judge again.

    A saved report is judged again from what it kept (its machine, sweep, NCCL view, captures); a finding this
    version can judge on those is judged again, one it cannot (its rule needs what the report did not keep, or its
    code is not this version's) is carried as it was saved, so re-reading a saved FAIL never makes it pass.
    """
    if saved is None:
        return ()
    from topoaudit.model.finding import Severity
    from topoaudit.rules.codes import CODES
    from topoaudit.rules.registry import judgement

    again = {f.code for f in found}
    carried = []
    for f in saved.findings:
        if f.severity not in (Severity.WARN, Severity.FAIL) or f.code in again:
            continue
        if f.code in CODES and not judgement(f.code, ctx):
            continue  # judged again on the facts the report kept: this run's verdict stands
        carried.append(dataclasses.replace(f, evidence={**f.evidence, "carried_from_saved_report": saved.generated_at}))
    return tuple(carried)


def _with_expectations(
    bench: BenchResult | Unsupported, spec: GpuSpec | None, run: RunFacts
) -> BenchResult | Unsupported:
    """The sweep with each group's expected figure and its source, shown beside it and judged against it."""
    if isinstance(bench, Unsupported):
        return bench
    from topoaudit.bench.judge import with_expectations

    return with_expectations(bench, spec, run)


def _oracle(inspector: dict[str, Any] | Unsupported) -> Any:
    """The bandwidth oracle NCCL Inspector's busbw is held to (loaded only with Inspector output)."""
    if isinstance(inspector, Unsupported):
        return None
    from topoaudit.bench.oracle import expected_busbw

    return expected_busbw


_RUN_SOURCES = ("nccl-log", "nccl-tests")
"""Sources whose GPUs are the ones a run's ranks used (the lines a paste kept of it), not every GPU of the box."""


def _links_known(machine: Machine) -> bool:
    """Whether the source describes the fabric: a source that names GPUs but no links between them (an
    nccl-tests log) says nothing about it, so no placements or ring bottlenecks are claimed from it. One GPU is a
    box without links, unless it is the one rank a run's log kept."""
    if len(machine.gpus) == 1:
        return machine.source not in _RUN_SOURCES
    return bool(gpu_pair_links(machine))  # no GPU (an error line): nothing to place


def _placements(machine: Machine, domains: tuple[Domain, ...], options: AuditOptions) -> tuple[Placement, ...]:
    """Placements for the TP sizes people deploy (2..8) and the one asked for; never hundreds of rows."""
    if not _links_known(machine):
        return ()
    sizes = sorted({tp for tp in (2, 4, 8) if tp <= len(machine.gpus)} | _requested_tp(options))
    return tuple(place_tp(machine, domains, tp) for tp in sizes)


def _bottlenecks(machine: Machine, domains: tuple[Domain, ...]) -> tuple[Bottleneck, ...]:
    """The slowest hop of a ring over the whole machine, then over each domain of 2+ GPUs of a split box."""
    if not _links_known(machine):
        return ()
    return (
        bottleneck(machine, [g.index for g in machine.gpus]),
        *(bottleneck(machine, d.gpus) for d in domains if d.size >= 2 and len(domains) > 1),
    )


def _gate(
    judged: tuple[Finding, ...], skipped: tuple[Skipped, ...], ctx: RuleContext, policy: PolicyOutcome | Unsupported
) -> Gate:
    """The verdict, what it covered, and the exit code; a bench stopped by Ctrl-C or SIGTERM ends with exit 130."""
    from topoaudit.judge.coverage import coverage_of

    coverage = coverage_of(ctx, judged, policy)
    gate = decide_gate(judged, skipped, ctx.issues, ctx.machine, ctx.options, policy, coverage)
    if not isinstance(ctx.bench, Unsupported):
        from topoaudit.bench.judge import interrupted_gate

        gate = interrupted_gate(gate, ctx.bench)
    return gate


def _report(
    ctx: RuleContext,
    placements: tuple[Placement, ...],
    findings: tuple[Finding, ...],
    skipped: tuple[Skipped, ...],
    gate: Gate,
    policy: PolicyOutcome | Unsupported,
    generated_at: str | None,
) -> Report:
    """The report: the facts, what the pipeline made of them, and what was judged and decided."""
    return Report(
        schema_version=SCHEMA_VERSION,
        tool_version=__version__,
        generated_at=generated_at or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        source=ctx.source,
        options=ctx.options,
        machine=ctx.machine,
        gpu_model=ctx.gpu_model,
        catalog_entry=_catalog_entry(ctx.spec, ctx.gpu_model, ctx.identified),
        domains=ctx.domains,
        bottlenecks=_bottlenecks(ctx.machine, ctx.domains),
        placements=placements,
        findings=findings,
        skipped=skipped,
        input_issues=ctx.issues,
        gate=gate,
        extras={**ctx.extras, **fact_extras(ctx)},
        plan=ctx.plan,
        bench=ctx.bench,
        policy=policy,
        nccl=ctx.nccl,
        captures=ctx.captures,
        identified=ctx.identified,
    )


def _catalog_entry(spec: GpuSpec | None, gpu_model: Probed[str], identified: Identification) -> str | Unsupported:
    if spec is not None:
        return spec.key
    if identified.contradiction:
        return Unsupported("catalog", "not used: the links contradict the model named")
    if isinstance(gpu_model, str):
        return Unsupported("catalog", f"no catalog entry for {product_name(gpu_model)!r}")
    return Unsupported("catalog", "not looked up: the GPU model is unknown")


def _plan(
    request: PlanRequest,
    facts: Facts,
    gpu_model: str | Unsupported,
    domains: tuple[Domain, ...],
    run: RunFacts,
    held: dict[str, Any],
) -> DeployPlan:
    """The deploy plan checked against this machine's domains, its all-reduces timed from the run beside it.

    ConfigError (exit 4) when no card can be named to size on; UsageError (exit 2) when the request itself
    cannot be planned (a TP size that divides no head count, an impossible margin).
    """
    from topoaudit.plan.sizing import plan_deployment
    from topoaudit.plan.target import machine_domains, resolve_gpu

    spec = resolve_gpu(_plan_card(request.gpu, gpu_model), gpu_model)
    # no GPUs: the standard node only; with the model's shape, the all-reduces timed from the run beside the plan
    audited = machine_domains(facts.source, gpu_model, domains, facts.machine) if domains else None
    links = None
    if request.shape is not None:
        from topoaudit.bench.oracle import planner_links

        links = planner_links(held["bench"], run.network)
    try:
        return plan_deployment(request, spec, audited, links)
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
    findings: tuple[Finding, ...], ctx: RuleContext
) -> tuple[tuple[Finding, ...], PolicyOutcome | Unsupported]:
    """Apply ``options.policy`` (expectations, severity overrides, ignores); unchanged without a policy."""
    policy = ctx.options.policy
    if isinstance(policy, Unsupported):
        return findings, NO_POLICY
    from topoaudit.judge.policy import apply_policy

    return apply_policy(policy, findings, machine=ctx.machine, domains=ctx.domains, spec=ctx.spec, bench=ctx.bench)


def _requested_tp(options: AuditOptions) -> set[int]:
    return {int(options.tp)} if isinstance(options.tp, int) else set()
