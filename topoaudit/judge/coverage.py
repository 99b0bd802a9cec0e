"""What a verdict covered: the evidence the rules examined, and, when they examined none, what would let them.

A PASS says something was checked and held. The evidence is what each rule that ran was given to examine
(its needs' ``covers``, :mod:`topoaudit.rules.needs`), the expectations that were stated and held, and the
evidence of every warn or fail finding (a finding at warn or fail always judges). An info finding alone makes
no verdict. When nothing was examined the gate says "not judged", why, and the one capture or option that would
let the judge judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.topology import gpu_pair_links
from topoaudit.model.values import Unsupported
from topoaudit.rules.needs import nvlink_undecided, sweep_held_to_anything, undecided_by_model, unexplained_messages

if TYPE_CHECKING:
    from topoaudit.model.policy import PolicyOutcome
    from topoaudit.rules.base import RuleContext

TOPO_M = "paste `nvidia-smi topo -m` of the same box with it"


@dataclass(frozen=True)
class Coverage:
    """What the verdict covers; when nothing, why not and what would let it judge."""

    judged: tuple[str, ...]
    why_not: str = ""  # "" when judged
    to_judge: str = ""  # "" when judged, or when no capture of this box would give anything to judge


def coverage_of(ctx: RuleContext, findings: tuple[Finding, ...], policy: PolicyOutcome | Unsupported) -> Coverage:
    """The evidence the rules examined on ``ctx`` and the findings they raised (after the policy)."""
    from topoaudit.judge.expectations import Expectations, check_expectations
    from topoaudit.rules.registry import coverage

    judged = list(coverage(ctx))
    stated = check_expectations(Expectations.of_options(ctx.options), ctx.machine, ctx.domains, ctx.spec, ctx.bench)
    judged += [f"what was expected: {line}" for line in stated.met]
    if not isinstance(policy, Unsupported):
        judged += [f"policy '{policy.name}': {line}" for line in policy.met]
    serious = sorted({f.code for f in findings if f.severity in (Severity.WARN, Severity.FAIL)})
    if serious:
        judged.append(f"the evidence its findings quote ({', '.join(serious)})")
    if judged:
        return Coverage(tuple(dict.fromkeys(judged)))
    return Coverage((), _why_not(ctx), _to_judge(ctx))


def _why_not(ctx: RuleContext) -> str:
    """What the input held, and why none of it gave a rule anything to examine."""
    machine = ctx.machine
    count = len(machine.gpus)
    parts = []
    if _lone_gpu(ctx):
        parts.append(
            "the input shows one GPU" + ("" if machine.nics else " and no NIC: there is no interconnect to judge")
        )
    elif count == 0:
        parts.append("the input names no GPU")
    elif not gpu_pair_links(machine):
        parts.append(f"the {ctx.machine.source} input describes no links between GPUs")
    elif nvlink_undecided(ctx):
        parts.append(
            f"no NVLink joins any of the {count} GPUs and nothing names their model: by design on PCIe cards, a "
            "fault on NVLink boxes"
        )
    view = ctx.nccl
    if not isinstance(view, Unsupported):
        parts.append(
            "NCCL's log shows no transport between ranks (no `Channel NN : a[a] -> b[b] via ...` line)"
            if not view.transports
            else "NCCL's log has nothing its rules compare"
        )
    bench = ctx.bench
    if not isinstance(bench, Unsupported) and not any(g.rows for g in bench.groups):
        parts.append("the run printed no result row")
    elif not isinstance(bench, Unsupported) and bench.one_rank:
        parts.append("the run had one rank: nothing crossed a link between GPUs")
    elif not isinstance(bench, Unsupported) and not sweep_held_to_anything(ctx):
        parts.append(
            "the sweep's figures have nothing to be held to (no GPU model names the box, no --expect-busbw) and "
            "it checked no data on a message of a MiB or more (#wrong N/A, or latency-sized messages only)"
        )
    undecided = undecided_by_model(ctx)
    if undecided:
        parts.append(
            f"{undecided} NVLink port(s) shown inactive or down, and nothing names the GPU model: a fault on SXM "
            "boards, the design on PCIe cards that wire fewer links"
        )
    unexplained = unexplained_messages(ctx)
    if unexplained:
        parts.append(
            f"{unexplained} error or warning line(s) that name no cause topoaudit can judge (a framework's wrapper "
            "such as 'NCCL error ... unhandled system error', or a message it has no entry for; shown as run-failed, "
            "info)"
        )
    return "; ".join(parts) or "no rule had evidence to examine"


def _lone_gpu(ctx: RuleContext) -> bool:
    """A capture of a box with one GPU (not a log that names the one GPU whose lines it kept)."""
    return len(ctx.machine.gpus) == 1 and isinstance(ctx.nccl, Unsupported) and isinstance(ctx.bench, Unsupported)


def _to_judge(ctx: RuleContext) -> str:
    """The one capture that would give the rules evidence: `topo -m` of the same box (none for one GPU alone)."""
    if _lone_gpu(ctx) and not ctx.machine.nics:
        return ""  # one GPU and no NIC: no capture of this box holds an interconnect
    if nvlink_undecided(ctx) or undecided_by_model(ctx):
        return "name the GPUs (`--gpu-model NAME`, the name `nvidia-smi -L` prints)"
    bench = ctx.bench
    if not isinstance(bench, Unsupported) and bench.one_rank:
        return "run it with every GPU as a rank of one job (nccl-tests built with MPI=1 under mpirun, or `-g N`)"
    if not isinstance(bench, Unsupported) and any(g.rows for g in bench.groups) and not sweep_held_to_anything(ctx):
        return "name the GPUs (`--gpu-model NAME`) or the figure to hold the sweep to (`--expect-busbw GBPS`)"
    return TOPO_M
