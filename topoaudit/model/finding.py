"""Findings, skipped rules and the verdict: the judge's output."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    """How much a finding matters to a deployment; ordered info < warn < fail."""

    INFO = "info"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        """Order severities by weight (info < warn < fail) for sorting and for the worst one."""
        return _RANK[self]

    def __str__(self) -> str:
        """Print the word reports and policy files use ("warn"), not the enum's name."""
        return self.value


_RANK = {Severity.INFO: 0, Severity.WARN: 1, Severity.FAIL: 2}


@dataclass(frozen=True)
class RemedyCommand:
    """One shell command that would repair a host cause on this box; shown to the user, never run by topoaudit.

    ``action`` names the template in :mod:`topoaudit.rules.remedies` and ``params`` its typed values; the
    command, what it changes and its undo are written from those alone (a saved report's text is never run).
    """

    action: str  # "acs-clear"
    params: dict[str, str] = field(default_factory=dict)  # {"bridge": "0000:00:01.0", "control": "001d"}
    command: str = ""  # "setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=0000", written from the template
    changes: str = ""  # what running it changes, in one line
    undo: str = ""  # the command that puts it back ("" when it changes nothing: a check)


@dataclass(frozen=True)
class Finding:
    """One thing the audit found, with the evidence a support engineer can check."""

    code: str  # stable kebab-case, registered in topoaudit/rules/codes.py
    severity: Severity
    message: str  # one line a support engineer understands
    evidence: dict[str, Any] = field(default_factory=dict)  # JSON-ready facts behind the message
    remedy: str = ""
    remedy_commands: tuple[RemedyCommand, ...] = ()  # the remedy as commands for this box, where it is one


@dataclass(frozen=True)
class Skipped:
    """A rule that could not run, and why (its inputs were unsupported or failed)."""

    rule: str
    reason: str


def worst_first(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Order findings fail, warn, info; the order they were found in is kept within a severity."""
    return tuple(sorted(findings, key=lambda f: -f.severity.rank))


def verdict_of(findings: tuple[Finding, ...] | list[Finding]) -> Severity | None:
    """Return the worst severity among findings; None when there are none (the verdict is then 'pass')."""
    worst = max((f.severity for f in findings), key=lambda s: s.rank, default=None)
    return worst
