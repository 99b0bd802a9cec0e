"""The judge: rules over the model, each returning findings (or a Skipped when it cannot run).

A rule is a function ``(ctx: RuleContext) -> Iterable[Finding | Skipped]`` (see :mod:`topoaudit.rules.base`).
Each rule module lists its rules in ``RULES`` in the order their findings are shown; every code they emit is
registered in :mod:`topoaudit.rules.codes`.
"""

from __future__ import annotations

from topoaudit.model.finding import Finding, Skipped
from topoaudit.rules.base import Rule, RuleContext


def registered_rules() -> tuple[Rule, ...]:
    """Return every rule in display order: the topology rules, then those over facts only a probe has.

    The rule modules are imported here, not at the top, so that importing :mod:`topoaudit.rules.base`
    (which runs this package first) stays cheap.
    """
    from topoaudit.rules import probe_rules, topology_rules

    return (*topology_rules.RULES, *probe_rules.RULES)


def run_rules(ctx: RuleContext) -> tuple[tuple[Finding, ...], tuple[Skipped, ...]]:
    """Run every rule; findings sorted worst first (stable within a severity)."""
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    for rule in registered_rules():
        for item in rule(ctx):
            if isinstance(item, Finding):
                findings.append(item)
            else:
                skipped.append(item)
    findings.sort(key=lambda f: -f.severity.rank)
    return tuple(findings), tuple(skipped)
