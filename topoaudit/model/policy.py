"""A policy (what a fleet or instance type must look like) and what it decided about one report.

Loaded and applied by :mod:`topoaudit.judge.policy`; the loaded ``Policy`` travels in ``AuditOptions.policy`` and
the outcome in ``Report.policy``, so a saved report says which policy judged it and what it ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.values import NOT_SET, Probed


@dataclass(frozen=True)
class BusbwExpectation:
    """All-reduce busbw a bench group must reach (checked only when bench results are present)."""

    group: str  # a group name ("all", "domain0", "pair 0-1") or a kind ("domain", "pair", "tp", "cross")
    min_gbps: float
    size_bytes: int = 0  # 0: the group's large-message plateau; else the row at this size


@dataclass(frozen=True)
class IgnoreRule:
    """Findings to drop from the gate, with the reason kept in the report."""

    code: str
    reason: str
    match: str = ""  # only findings whose message contains this text ("" = every finding of the code)


@dataclass(frozen=True)
class Policy:
    """Expectations, severity overrides and ignores for a fleet or instance type."""

    name: str
    source: str  # the file path, or "builtin:NAME"
    sha256: str  # of the policy text, so a report names the exact policy
    description: str = ""
    gpus: Probed[int] = NOT_SET
    gpu_models: tuple[str, ...] = ()  # catalog keys; the machine's model must be one of them
    domains: Probed[tuple[int, ...]] = NOT_SET  # exact sizes of the NVLink domains of 2+ GPUs, largest first
    min_domain: Probed[int] = NOT_SET
    nic_local: bool = False  # every GPU has a NIC behind its PCIe switch (PIX/PXB)
    busbw: tuple[BusbwExpectation, ...] = ()
    busbw_catalog_floor: bool = False  # group "all" must reach the catalog's floor for the model and size
    max_latency_us: Probed[float] = NOT_SET  # small-message p50 latency of `latency_group`
    latency_group: str = "all"
    severity: tuple[tuple[str, Severity], ...] = ()  # (code, severity) overrides
    ignore: tuple[IgnoreRule, ...] = ()
    fail_on: Probed[Severity] = NOT_SET  # used when --fail-on is not given
    strict: bool = False


@dataclass(frozen=True)
class IgnoredFinding:
    """A finding the policy set aside, kept with the policy's reason so the report still shows it."""

    finding: Finding
    reason: str


@dataclass(frozen=True)
class SeverityChange:
    """A code whose severity the policy changed, from what to what, so a reader sees the override."""

    code: str
    was: Severity
    now: Severity
    count: int


@dataclass(frozen=True)
class PolicyOutcome:
    """Which policy judged the report, and what it changed."""

    name: str
    source: str
    sha256: str
    description: str = ""
    met: tuple[str, ...] = ()  # expectations that held, one line each
    not_met: tuple[str, ...] = ()  # ... that failed (each also an expectation-not-met finding)
    not_checked: tuple[str, ...] = ()  # ... that could not be checked (no bench results, no NIC facts)
    overridden: tuple[SeverityChange, ...] = ()
    ignored: tuple[IgnoredFinding, ...] = ()

    def summary(self) -> str:
        """One clause for the gate's reason."""
        parts = [f"policy '{self.name}'"]
        if self.not_met:
            parts.append(f"{len(self.not_met)} expectation(s) not met")
        if self.ignored:
            why = "; ".join(f"{i.finding.code}: {i.reason}" for i in self.ignored[:3])
            parts.append(f"{len(self.ignored)} finding(s) ignored ({why})")
        if self.not_checked:
            parts.append(f"{len(self.not_checked)} not checked")
        return ", ".join(parts)
