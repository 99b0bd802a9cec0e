"""``healthcheck``: judge this node for Slurm (reusing a fresh cached result) and keep its drain in step."""

from __future__ import annotations

from dataclasses import dataclass, field

from topoaudit.app.audit import AuditRequest, ProbeRequest, audit
from topoaudit.app.common import GateRequest, audit_options
from topoaudit.errors import InputError

DEFAULT_HEALTHCHECK_CACHE = "/var/tmp/topoaudit-healthcheck.json"


@dataclass(frozen=True)
class HealthCheckRequest:
    """``topoaudit healthcheck``: judge this node (reusing a fresh cached result) and keep its drain in step."""

    gate: GateRequest = field(default_factory=GateRequest)
    probe: ProbeRequest = field(default_factory=ProbeRequest)
    cache_path: str = DEFAULT_HEALTHCHECK_CACHE
    max_age_s: float = 600.0
    node: str | None = None  # the Slurm node name; default $SLURMD_NODENAME, else `hostname -s`
    apply: bool = True  # drain on failure, resume a node this check drained; False: only judge
    scontrol: str = "scontrol"


@dataclass(frozen=True)
class HealthCheckResult:
    node: str
    healthy: bool
    reason: str  # the `topoaudit: ...` drain reason when unhealthy, else the gate's sentence
    age_s: float  # age of the result judged (0 for a probe just now)
    from_cache: bool
    action: str  # what was done to the node in Slurm, in words
    exit_code: int


def healthcheck(request: HealthCheckRequest) -> HealthCheckResult:
    """Judge this node, then drain it (failed) or resume it (passed, and drained by this check before)."""
    from topoaudit import healthcheck as hc
    from topoaudit.exitcodes import ExitCode

    node = hc.this_node(request.node)
    scontrol = hc.find_scontrol(request.scontrol) if request.apply else ""
    cached = hc.read_cache(request.cache_path, request.max_age_s)
    if cached is not None and cached.report.options != audit_options(request.gate):
        cached = None  # judged under other options or another policy: judge again
    unsaved = ""
    if cached is not None:
        report, age, from_cache = cached.report, cached.age_s, True
    else:
        from topoaudit.errors import EnvironmentUnusable

        try:
            judged = audit(AuditRequest(request.gate, request.probe))
        except (EnvironmentUnusable, InputError) as exc:  # no driver, no GPU: this node cannot serve GPU jobs
            reason = hc.probe_failure_reason(exc)
            action = _keep_drain_in_step(scontrol, node, reason, healthy=False) if request.apply else "not applied"
            return HealthCheckResult(node, False, reason, 0.0, False, action, int(ExitCode.UNUSABLE))
        assert judged is not None  # no sweep: there are no other ranks
        report = judged.report
        unsaved = hc.write_cache(request.cache_path, report)
        age, from_cache = 0.0, False
    healthy = report.gate.exit_code == 0
    reason = report.gate.reason if healthy else hc.drain_reason(report)
    action = _keep_drain_in_step(scontrol, node, reason, healthy) if request.apply else "not applied"
    if not from_cache and unsaved:
        action += f"; {unsaved}"
    return HealthCheckResult(node, healthy, reason, age, from_cache, action, report.gate.exit_code)


def _keep_drain_in_step(scontrol: str, node: str, reason: str, healthy: bool) -> str:
    from topoaudit import healthcheck as hc

    state = hc.node_state(scontrol, node)
    if healthy:
        if state.drained_by_us:
            hc.resume(scontrol, node)
            return f"resumed (it was drained by this check: {state.reason})"
        if state.drained:
            return f"left drained: another drain reason ({state.reason or 'none'})"
        return "none"
    if state.drained and not state.drained_by_us:
        return f"left as drained by another reason ({state.reason or 'none'})"
    if state.drained_by_us and state.reason == reason:
        return "already drained with this reason"
    hc.drain(scontrol, node, reason)
    return "drained"
