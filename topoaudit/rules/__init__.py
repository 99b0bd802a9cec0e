"""The judge: rules over the model, each returning findings (or a Skipped when it cannot run).

A rule is a function ``(ctx: RuleContext) -> Iterable[Finding | Skipped]``. ``RULES`` lists them in the
order their findings are shown; every code they emit is registered in :mod:`topoaudit.rules.codes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.machine import Machine
from topoaudit.model.report import AuditOptions
from topoaudit.model.topology import Domain, Placement
from topoaudit.rules.codes import info


@dataclass(frozen=True)
class RuleContext:
    """What every rule sees: the machine, its domains, the requested placements, the options, the catalog."""

    machine: Machine
    domains: tuple[Domain, ...]
    placements: tuple[Placement, ...]
    options: AuditOptions
    spec: GpuSpec | None  # the catalog entry of the GPU model, when known


Rule = Callable[[RuleContext], Iterable["Finding | Skipped"]]


def finding(code: str, message: str, *, severity: Severity | None = None, **evidence: object) -> Finding:
    """A finding with the registry's default severity and remedy (unless the rule states otherwise)."""
    entry = info(code)
    return Finding(code, severity or entry.severity, message, dict(evidence), entry.remedy)


def first_few(items: Sequence[str], limit: int, sep: str = ", ") -> str:
    """Up to ``limit`` items, then how many are left out: "GPU0, GPU1 and 5 more" (never a bare "...")."""
    shown = sep.join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def as_sentence(text: str) -> str:
    """A clause as a sentence of its own: first letter capital, one full stop."""
    text = text.rstrip(". ")
    return text[:1].upper() + text[1:] + "."


def registered_rules() -> tuple[Rule, ...]:
    """Every rule, in display order: the topology rules, then those over facts only a probe has."""
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
