"""What every rule shares: the context it reads and the helpers that word its findings.

These live apart from :mod:`topoaudit.rules` so that rule modules, the judge and the pipeline can import
them without importing the list of rules, which itself imports every rule module.
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
    """Build a finding with the registry's default severity and remedy, so rules never restate them."""
    entry = info(code)
    return Finding(code, severity or entry.severity, message, dict(evidence), entry.remedy)


def first_few(items: Sequence[str], limit: int, sep: str = ", ") -> str:
    """Name up to ``limit`` items, then how many are left out: "GPU0, GPU1 and 5 more" (never a bare "...")."""
    shown = sep.join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def as_sentence(text: str) -> str:
    """Turn a clause into a sentence of its own: first letter capital, one full stop."""
    text = text.rstrip(". ")
    return text[:1].upper() + text[1:] + "."
