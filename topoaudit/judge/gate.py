"""The gate: the verdict and the exit code the findings imply under the user's options, and what it covered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.exitcodes import ExitCode
from topoaudit.model.finding import Finding, Skipped
from topoaudit.model.machine import Machine
from topoaudit.model.report import INCOMPLETE_ACTIONS, NOT_JUDGED, AuditOptions, Gate, InputIssue, verdict_word
from topoaudit.model.values import Failed, Unsupported

if TYPE_CHECKING:  # a report judged without a policy does not load the policy model
    from topoaudit.judge.coverage import Coverage
    from topoaudit.model.policy import PolicyOutcome


def decide_gate(
    findings: tuple[Finding, ...],
    skipped: tuple[Skipped, ...],
    issues: tuple[InputIssue, ...],
    machine: Machine,
    options: AuditOptions,
    policy: PolicyOutcome | Unsupported,
    coverage: Coverage,
) -> Gate:
    """Verdict and exit code. Problems found (1) and an incomplete or unjudged audit (3) are separate answers.

    ``coverage`` is what the rules examined (:mod:`topoaudit.judge.coverage`): a PASS is over some of it.
    """
    verdict = verdict_word(findings, bool(coverage.judged))
    lost = [g.index for g in machine.gpus if isinstance(g.status, Failed)]
    incomplete = bool(skipped or lost or any(i.action in INCOMPLETE_ACTIONS for i in issues))
    at_or_above = [f for f in findings if f.severity.rank >= options.fail_on.rank]
    if at_or_above:
        codes = sorted({f.code for f in at_or_above})
        code = ExitCode.FINDINGS
        reason = f"{len(at_or_above)} finding(s) at or above '{options.fail_on}': {', '.join(codes)}"
    elif verdict == NOT_JUDGED:
        code = ExitCode.INCOMPLETE if options.strict else ExitCode.OK
        reason = _not_judged(coverage)
    elif incomplete and options.strict:
        what = f"{len(skipped)} rule(s) skipped" if skipped else "input recovered or GPUs lost"
        code, reason = ExitCode.INCOMPLETE, f"audit incomplete under --strict: {what}"
    else:
        code, reason = ExitCode.OK, f"no finding at or above '{options.fail_on}'"
    if not isinstance(policy, Unsupported):
        reason = f"{reason} ({policy.summary()})"
    to_judge = coverage.to_judge if verdict == NOT_JUDGED else ""
    return Gate(verdict, int(code), reason, incomplete, coverage.judged, to_judge)


def _not_judged(coverage: Coverage) -> str:
    why = coverage.why_not or "no rule had evidence to examine"
    to_judge = f"; to judge it, {coverage.to_judge}" if coverage.to_judge else ""
    return f"nothing the gate checks could be judged: {why}{to_judge}"
