"""The gate: the verdict and the exit code the findings imply under the user's options."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.exitcodes import ExitCode
from topoaudit.model.finding import Finding, Severity, Skipped, verdict_of
from topoaudit.model.machine import Machine
from topoaudit.model.report import AuditOptions, Gate, InputIssue
from topoaudit.model.values import Failed, Unsupported

if TYPE_CHECKING:  # a report judged without a policy does not load the policy model
    from topoaudit.model.policy import PolicyOutcome


def decide_gate(
    findings: tuple[Finding, ...],
    skipped: tuple[Skipped, ...],
    issues: tuple[InputIssue, ...],
    machine: Machine,
    options: AuditOptions,
    policy: PolicyOutcome | Unsupported,
) -> Gate:
    """Verdict and exit code. Problems found (1) and an incomplete audit (3) are separate answers."""
    worst = verdict_of(findings)
    verdict = "pass" if worst is None or worst == Severity.INFO else worst.value
    lost = [g.index for g in machine.gpus if isinstance(g.status, Failed)]
    incomplete = bool(skipped or lost or any(i.action == "recovered" for i in issues))
    at_or_above = [f for f in findings if f.severity.rank >= options.fail_on.rank]
    if at_or_above:
        codes = sorted({f.code for f in at_or_above})
        code = ExitCode.FINDINGS
        reason = f"{len(at_or_above)} finding(s) at or above '{options.fail_on}': {', '.join(codes)}"
    elif incomplete and options.strict:
        what = f"{len(skipped)} rule(s) skipped" if skipped else "input recovered or GPUs lost"
        code, reason = ExitCode.INCOMPLETE, f"audit incomplete under --strict: {what}"
    else:
        code, reason = ExitCode.OK, f"no finding at or above '{options.fail_on}'"
    if not isinstance(policy, Unsupported):
        reason = f"{reason} ({policy.summary()})"
    return Gate(verdict, int(code), reason, incomplete)
