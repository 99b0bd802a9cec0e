"""What every rule shares: the context it reads (every fact of one audit) and the helpers that word its findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topoaudit.catalog import GpuSpec
from topoaudit.errors import InputError
from topoaudit.model.codec import shown
from topoaudit.model.facts import Facts
from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.identity import CLASSES, UNIDENTIFIED, HardwareClass, Identification
from topoaudit.model.network import RunFacts
from topoaudit.model.report import NOT_REQUESTED, AuditOptions, Report
from topoaudit.model.topology import Domain, Placement
from topoaudit.model.values import Probed, Unsupported
from topoaudit.rules.codes import info

if TYPE_CHECKING:  # a deploy plan comes with its own model; a pasted matrix never loads it
    from topoaudit.model.plan import DeployPlan

Oracle = Callable[..., Any]
"""``bench.oracle.expected_busbw``, handed in by the pipeline (rules sit below the bench in the layers)."""


@dataclass(frozen=True, kw_only=True)
class RuleContext(Facts):
    """Every fact one audit judges, once: what the input held, and what the pipeline made of it.

    The fields of :class:`~topoaudit.model.facts.Facts` (each kind of fact one field) come first; those below are
    the pipeline's: the NVLink domains, the placements asked for, the catalog entry, the deploy plan.
    """

    domains: tuple[Domain, ...]
    placements: tuple[Placement, ...]  # the placements of the TP size asked for (--tp)
    options: AuditOptions
    spec: GpuSpec | None  # the catalog entry of the GPU model, when known
    gpu_model: Probed[str] = NOT_REQUESTED  # the model the box is judged as
    expect_busbw_gbps: float | None = None  # the user's floor for the whole-machine plateau (--expect-busbw)
    plan: DeployPlan | Unsupported = NOT_REQUESTED  # the deploy plan checked against this machine
    oracle: Oracle | None = None  # what an NCCL collective should reach on a shape (bench.oracle)
    run: RunFacts = field(default_factory=RunFacts)  # the NICs and NCCL release the runs in the input are judged with
    identified: Identification = UNIDENTIFIED  # how the box is known: the option or line naming it, the class shown
    hardware: HardwareClass | None = None  # the class the links show, judged by where no catalog entry is believed

    @property
    def design(self) -> GpuSpec | HardwareClass | None:
        """What the box should be built like: its catalog entry, else the class its links show, else unknown."""
        return self.spec if self.spec is not None else self.hardware


Rule = Callable[[RuleContext], Iterable["Finding | Skipped"]]

_EXTRAS_KEYS = {"inspector": "nccl_inspector", "ras": "nccl_ras"}
"""The facts a report keeps among its ``extras`` (JSON-ready summaries), by RuleContext field."""
_TYPED_EXTRAS = {
    "signatures": "known_messages",
    "smi_query": "nvidia_smi_q",
    "health": "health_lines",
    "graph_print": "nccl_graph_print",
    "setpci_acs": "setpci_acs",
    "python_session": "python_session",
}
"""The facts of a paste a report keeps among its ``extras`` in the model's JSON form, so that a saved report of an
error line or a Fabric block is judged again as it was."""


def fact_extras(ctx: RuleContext) -> dict[str, Any]:
    """Return the facts of ``ctx`` a report keeps in its extras, under their JSON names."""
    kept = {
        key: value for field, key in _EXTRAS_KEYS.items() if not isinstance(value := getattr(ctx, field), Unsupported)
    }
    typed = {field: getattr(ctx, field) for field in _TYPED_EXTRAS}
    if any(not isinstance(v, Unsupported) for v in typed.values()):
        from topoaudit.model.codec import encode

        kept.update({_TYPED_EXTRAS[f]: encode(v) for f, v in typed.items() if not isinstance(v, Unsupported)})
    return kept


def facts_in_extras(extras: dict[str, Any]) -> dict[str, Any]:
    """Return the RuleContext fields a saved report's extras hold (the inverse of :func:`fact_extras`).

    A saved report is someone else's file: a section a rule reads is checked here, so a damaged one is bad
    input (InputError, exit 4) and no rule meets a value of the wrong type; so are a paste's facts kept there that
    do not read back (a report edited by hand).
    """
    found = {name: extras[key] for name, key in _EXTRAS_KEYS.items() if key in extras}
    for name, key in _EXTRAS_KEYS.items():
        if name in found and not isinstance(found[name], dict):
            raise InputError(
                f"the saved report's extras.{key} is {shown(found[name], 40)}, not the section topoaudit writes"
            )
    if "ras" in found:
        from topoaudit.parse.nccl_ras import ras_from_dict

        ras_from_dict(found["ras"])
    if "inspector" in found:
        from topoaudit.parse.nccl_inspector import check_summary

        check_summary(found["inspector"])
    typed = {name: extras[key] for name, key in _TYPED_EXTRAS.items() if key in extras}
    if typed:
        found.update(_typed_facts(typed))
    return found


def _typed_facts(typed: dict[str, Any]) -> dict[str, Any]:
    from topoaudit.model.codec import DecodeError, decode
    from topoaudit.model.health import HealthEvent
    from topoaudit.model.nccl_graph import NcclGraphPrint
    from topoaudit.model.paste import Hit
    from topoaudit.model.python_session import PythonSession
    from topoaudit.model.setpci import SetpciAcs
    from topoaudit.model.smi_query import SmiQuery

    types: dict[str, Any] = {
        "signatures": tuple[Hit, ...],
        "smi_query": SmiQuery,
        "health": tuple[HealthEvent, ...],
        "graph_print": NcclGraphPrint,
        "setpci_acs": SetpciAcs,
        "python_session": PythonSession,
    }
    try:
        return {field: decode(types[field], data, f"$.extras.{_TYPED_EXTRAS[field]}") for field, data in typed.items()}
    except DecodeError as exc:
        raise InputError(f"the report is damaged: {exc}") from exc


def context_of_report(report: Report) -> RuleContext:
    """Rebuild the context a report was judged in, so a saved report says what was judged on it."""
    from topoaudit.catalog import find_gpu

    spec = find_gpu(report.catalog_entry) if isinstance(report.catalog_entry, str) else None
    shown = CLASSES.get(report.identified.hardware_class) if spec is None else None
    return RuleContext(
        machine=report.machine,
        source=report.source,
        issues=report.input_issues,
        extras=report.extras,
        bench=report.bench,
        nccl=report.nccl,
        captures=report.captures,
        domains=report.domains,
        placements=tuple(p for p in report.placements if p.tp == report.options.tp),
        options=report.options,
        spec=spec,
        gpu_model=report.gpu_model,
        plan=report.plan,
        identified=report.identified,
        hardware=shown,
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
