"""What every rule shares: the context it reads and the helpers that word its findings.

These live apart from :mod:`topoaudit.rules` so that rule modules, the judge and the pipeline can import
them without importing the list of rules, which itself imports every rule module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoaudit.catalog import GpuSpec
from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.machine import Machine
from topoaudit.model.report import (
    BENCH_NOT_RUN,
    CAPTURES_NOT_GIVEN,
    NCCL_LOG_NOT_GIVEN,
    NOT_REQUESTED,
    AuditOptions,
    InputIssue,
    Report,
)
from topoaudit.model.topology import Domain, Placement
from topoaudit.model.values import Probed, Unsupported
from topoaudit.rules.codes import info

if TYPE_CHECKING:  # the facts only some inputs hold; a pasted matrix loads none of their models
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.nccl import NcclView
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.plan import DeployPlan

INSPECTOR_NOT_GIVEN = Unsupported("nccl-inspector", "no NCCL Inspector output in the input")
RAS_NOT_GIVEN = Unsupported("nccl-ras", "no NCCL RAS output in the input")

Oracle = Callable[..., Any]
"""``bench.oracle.expected_busbw``, handed in by the pipeline (rules sit below the bench in the layers)."""


@dataclass(frozen=True)
class RuleContext:
    """Every fact one audit judges, once: the machine and what the pipeline made of it, and each other input.

    The first five are what the topology and probe rules read; the rest are the other families' facts, each
    one field, absent ones an ``Unsupported`` that says why.
    """

    machine: Machine
    domains: tuple[Domain, ...]
    placements: tuple[Placement, ...]  # the placements of the TP size asked for (--tp)
    options: AuditOptions
    spec: GpuSpec | None  # the catalog entry of the GPU model, when known
    gpu_model: Probed[str] = NOT_REQUESTED  # the model the box is judged as
    input_issues: tuple[InputIssue, ...] = ()  # what reading the input recovered or ignored
    bench: BenchResult | Unsupported = BENCH_NOT_RUN  # an all-reduce sweep, with each group's expected figure
    expect_busbw_gbps: float | None = None  # the user's floor for the whole-machine plateau (--expect-busbw)
    nccl: NcclView | Unsupported = NCCL_LOG_NOT_GIVEN  # NCCL's own view, from an NCCL_DEBUG=INFO log
    captures: Captures | Unsupported = CAPTURES_NOT_GIVEN  # NCCL's XML dumps, nvbandwidth and p2p matrices
    inspector: dict[str, Any] | Unsupported = INSPECTOR_NOT_GIVEN  # NCCL Inspector, summarized per communicator
    ras: dict[str, Any] | Unsupported = RAS_NOT_GIVEN  # an NCCL RAS dump, in the form the report keeps
    plan: DeployPlan | Unsupported = NOT_REQUESTED  # the deploy plan checked against this machine
    oracle: Oracle | None = None  # what an NCCL collective should reach on a shape (bench.oracle)


Rule = Callable[[RuleContext], Iterable["Finding | Skipped"]]

_EXTRAS_KEYS = {"inspector": "nccl_inspector", "ras": "nccl_ras"}
"""The facts a report keeps among its ``extras`` (JSON-ready summaries), by RuleContext field."""


def fact_extras(ctx: RuleContext) -> dict[str, Any]:
    """Return the facts of ``ctx`` a report keeps in its extras, under their JSON names."""
    return {
        key: value for field, key in _EXTRAS_KEYS.items() if not isinstance(value := getattr(ctx, field), Unsupported)
    }


def facts_in_extras(extras: dict[str, Any]) -> dict[str, Any]:
    """Return the RuleContext fields a saved report's extras hold (the inverse of :func:`fact_extras`)."""
    return {field: extras[key] for field, key in _EXTRAS_KEYS.items() if isinstance(extras.get(key), dict)}


def context_of_report(report: Report) -> RuleContext:
    """Rebuild the context a report was judged in, so a saved report says what was judged on it."""
    from topoaudit.catalog import find_gpu

    spec = find_gpu(report.catalog_entry) if isinstance(report.catalog_entry, str) else None
    return RuleContext(
        report.machine,
        report.domains,
        tuple(p for p in report.placements if p.tp == report.options.tp),
        report.options,
        spec,
        gpu_model=report.gpu_model,
        input_issues=report.input_issues,
        bench=report.bench,
        nccl=report.nccl,
        captures=report.captures,
        plan=report.plan,
        **facts_in_extras(report.extras),
    )


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
